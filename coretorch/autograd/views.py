"""Autograd for views that are modified in place (PyTorch's CopySlices / view regeneration).

An in-place op on a view rewrites its base's history: the base gets a `CopySlices` node that
routes the gradient of the viewed region through the in-place op's backward and the rest to the
base's previous history. A view whose shared data changed since its grad_fn was recorded gets a
fresh history as a strided view of its base (`regenerate_view_history`).
"""

from __future__ import annotations

from ..ops.declare import op_named as _op
from ..ops.view_derivatives import strided_scatter
from ..record_function import next_sequence_nr
from ..tensor.impl import AutogradMeta, TensorImpl
from .node import Node, gradient_edge, init_node, make_edge

__all__ = ["CopySlices", "AsStridedViewBackward", "regenerate_view_history", "record_copy_slices"]


class AsStridedViewBackward(Node):
    """History of a view regenerated from its base (the base's data changed in place)."""

    __slots__ = ("base_geom", "view_geom")
    base_geom: tuple  # (shape, stride, offset)
    view_geom: tuple
    _name = "AsStridedBackward0"

    def apply(self, grads: list) -> list:
        """Scatter the view's gradient into a zero gradient of the base's geometry."""
        return [strided_scatter(grads[0], self.base_geom, self.view_geom)]


def _geom(t: TensorImpl) -> tuple:
    return (t._shape, t._stride, t._offset)


def regenerate_view_history(t: TensorImpl, m: AutogradMeta) -> Node | None:
    """Give view `t` a fresh grad_fn: a strided view of its base's current history."""
    base = t._base
    bm = base._autograd
    if bm is None or not (bm.requires_grad or bm.grad_fn is not None):
        return m.grad_fn
    node = init_node(
        object.__new__(AsStridedViewBackward), (gradient_edge(base, bm),), 1, next_sequence_nr()
    )
    node.base_geom, node.view_geom = _geom(base), _geom(t)
    node._vv = t._vc[0]
    m.grad_fn, m.output_nr = node, 0
    return node


class CopySlices(Node):
    """The base's history after an in-place op `fn` on one of its views."""

    __slots__ = ("fn", "base_geom", "view_geom")
    fn: Node
    base_geom: tuple  # (shape, stride, offset)
    view_geom: tuple
    _name = "CopySlices"

    def apply(self, grads: list) -> list:
        """Gradient of an in-place op on a view: the base's gradient with the view's part
        replaced."""
        g = grads[0]
        b_shape, b_stride, b_off = self.base_geom
        v_shape, v_stride, v_off = self.view_geom
        result = _op("empty_strided")(b_shape, b_stride, dtype=g._dtype, device=g._device)
        result.copy_(g)
        grad_slice = _op("as_strided")(result, v_shape, v_stride, v_off - b_off)
        res = list(self.fn.apply([grad_slice.clone()]))
        r0 = res[0] if res else None
        if r0 is None:
            grad_slice.fill_(0)
        else:
            if r0._shape != v_shape:
                from .engine import sum_to

                r0 = sum_to(r0, v_shape, self)
            grad_slice.copy_(r0)
        return [result] + res[1:]

    def release(self) -> None:
        self.fn.release()


def record_copy_slices(view: TensorImpl, fn: Node) -> None:
    """After in-place op `fn` on `view` was recorded: rebase the base's history on CopySlices and
    make the view's history a strided view of it."""
    from ..dispatch.keys import AUTOGRAD_BIT

    base = view._base
    bm = base._autograd
    base_edge = None
    if bm is not None and (bm.requires_grad or bm.grad_fn is not None):
        base_edge = gradient_edge(base, bm)
    node = init_node(object.__new__(CopySlices), (base_edge,) + tuple(fn._edges[1:]), 1, fn.seq_nr)
    node.fn, node.base_geom, node.view_geom = fn, _geom(base), _geom(view)
    if bm is None:
        base._autograd = AutogradMeta(False, node, 0)
    else:
        bm.grad_fn, bm.output_nr = node, 0
    base._keys |= AUTOGRAD_BIT
    m = view._autograd
    if m is None:
        m = view._autograd = AutogradMeta(False, None, 0)
    vnode = init_node(
        object.__new__(AsStridedViewBackward), (make_edge(node, 0, base),), 1, fn.seq_nr
    )
    vnode.base_geom, vnode.view_geom = node.base_geom, node.view_geom
    vnode._vv = view._vc[0]
    m.grad_fn, m.output_nr = vnode, 0
    view._keys |= AUTOGRAD_BIT
