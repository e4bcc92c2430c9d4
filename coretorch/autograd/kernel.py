"""The one generic Autograd kernel, registered as the boxed fallback of the `Autograd` key.

Reaching it means grad mode is on (no_grad excludes the key) and some argument requires grad.
For a call ``op(*record)`` it:

1. checks an in-place target may be written (`check_inplace`);
2. collects the gradient edges of the tensor arguments as they are before the op runs
   (`collect_edges`) and, if none needs a gradient, just runs the op;
3. notes the versions of the arguments the derivative reads (`saved_versions`);
4. runs the op with Autograd excluded (`run_below_autograd`);
5. records an `OpNode` with the op's derivative and attaches it to the outputs
   (`attach_outputs`), or to `self` for an in-place op (`attach_inplace`).
"""

from __future__ import annotations

from typing import Any

from ..dispatch.keys import AUTOGRAD_BIT, BACKEND_MASK, BACKEND_SELECT_BIT, DispatchKey
from ..dispatch.operator import register_fallback
from ..dispatch.tls import local_keys
from ..record_function import next_sequence_nr
from ..tensor.impl import (
    AutogradMeta,
    TensorImpl,
    new_autograd_meta,
    new_impl,
    requires_grad as _requires_grad,
)
from .node import Node, OpNode, camel_case, gradient_edge, init_node, node_class
from .tensor_hooks import move_retain
from .views import record_copy_slices

__all__ = ["autograd_kernel", "install"]

_Impl = TensorImpl
_AG = AUTOGRAD_BIT


class OpAutogradInfo:
    """What the kernel needs about one operator, computed once: its node class (named for the op,
    with the schema's argument names as attributes), which arguments the derivative reads, and
    whether the op writes `self` or returns a view."""

    __slots__ = (
        "cls",
        "decl",
        "name",
        "op_name",
        "inplace",
        "saves",
        "save_result",
        "differentiable",
        "is_view",
        "clone_self",
    )

    def __init__(self, op):
        decl = op.decl
        self.decl = decl
        self.name = decl.name if decl is not None else op.qualname
        self.op_name = op.name
        self.inplace = op.schema.is_inplace
        # an op defined without a declaration gets a node that raises at backward
        self.differentiable = decl is None or decl.differentiable
        deriv = decl.derivative if decl is not None else None
        self.saves = _saved_indices(decl)  # None: every tensor argument
        self.save_result = decl is not None and decl.save_result
        self.is_view = decl is not None and decl.family == "view"
        self.clone_self = (
            self.inplace and deriv is not None and (self.saves is None or 0 in self.saves)
        )
        base = camel_case(op.name if decl is None else decl.name)
        suffix = "Backwards" if base == "Copy" else "Backward0"
        names = decl.schema.names if decl is not None else ()
        self.cls = node_class(base + suffix, self.name, names) if self.differentiable else None


def _saved_indices(decl) -> tuple | None:
    if decl is None or decl.saves is None:
        return None
    return tuple(decl.schema.argument(n).index for n in decl.saves)


_infos: dict = {}


def check_inplace(info: OpAutogradInfo, self) -> None:
    """PyTorch's refusals of in-place ops on leaves that require grad and on views of them."""
    m = self._autograd
    if m is not None and m.grad_fn is None and m.requires_grad:
        which = "a view of a leaf Variable" if self._base is not None else "a leaf Variable"
        raise RuntimeError(
            f"{which} that requires grad is being used in an in-place operation ({info.op_name})."
        )
    base = self._base
    if base is not None:
        bm = base._autograd
        if bm is not None and (bm.requires_grad or bm.grad_fn is not None):
            if bm.grad_fn is None:
                raise RuntimeError(
                    f"a view of a leaf Variable that requires grad is being used "
                    f"in an in-place operation ({info.op_name})."
                )
            if m is None or m.grad_fn is None:
                raise RuntimeError(
                    f"{info.op_name}(): a view was created in no_grad mode (or by detach-like "
                    f"means) and is being modified in-place with grad mode enabled. Given that "
                    f"this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                    f"your code by moving both the view and the inplace either both inside the "
                    f"no_grad block (if you don't want the inplace to be tracked) or both outside "
                    f"(if you want the inplace to be tracked)."
                )


def _alias(t):
    """A new tensor object over the same data, with no autograd history (for saved outputs)."""
    return new_impl(
        t.__class__,
        t._storage,
        t._shape,
        t._stride,
        t._offset,
        t._dtype,
        t._device,
        t._keys & ~_AG,
        t._vc,
        t._base,
    )


def _edge_of(a):
    """The gradient edge of argument `a`, or None when no gradient flows to it."""
    m = a._autograd
    if m is not None and (m.grad_fn is not None or m.requires_grad):
        return gradient_edge(a, m)
    return None


def _has_tensor(seq) -> bool:
    for t in seq:
        if isinstance(t, _Impl):
            return True
    return False


def collect_edges(args) -> tuple[list, list, list | None]:
    """(edges, needs_input_grad, list_args) of an argument record. Edges are flat (a list
    argument contributes one per element); `needs` has one bool per argument; `list_args`
    (None unless a list of tensors appears) gives each list argument's length, -1 elsewhere."""
    edges: list = []
    needs: list = []
    list_args = None
    for a in args:
        if isinstance(a, _Impl):
            m = a._autograd
            e = (
                gradient_edge(a, m)
                if m is not None and (m.grad_fn is not None or m.requires_grad)
                else None
            )
            edges.append(e)
            needs.append(e is not None)
        elif (a.__class__ is list or a.__class__ is tuple) and _has_tensor(a):
            if list_args is None:
                list_args = [-1] * len(needs)
            sub = [_edge_of(t) if isinstance(t, _Impl) else None for t in a]  # may hold None
            edges.extend(sub)
            needs.append(any(e is not None for e in sub))
            list_args.append(len(a))
            continue
        else:
            edges.append(None)
            needs.append(False)
        if list_args is not None:
            list_args.append(-1)
    return edges, needs, list_args


def saved_versions(info: OpAutogradInfo, saved_args, has_lists: bool) -> tuple | None:
    """``((index, version), ...)`` of the arguments the derivative reads, taken before the op
    runs (an in-place op may change one of them); None when it reads none."""
    saves = info.saves
    if saves == ():
        return None
    if saves is not None:
        return (
            tuple(
                (i, saved_args[i]._vc[0])
                for i in saves
                if i < len(saved_args) and isinstance(saved_args[i], _Impl)
            )
            or None
        )
    vers: list[tuple[int, Any]] = [
        (i, a._vc[0]) for i, a in enumerate(saved_args) if isinstance(a, _Impl)
    ]
    if has_lists:
        vers += [
            (i, tuple(t._vc[0] if isinstance(t, _Impl) else None for t in a))
            for i, a in enumerate(saved_args)
            if (a.__class__ is list or a.__class__ is tuple) and _has_tensor(a)
        ]
    return tuple(vers) or None


def run_below_autograd(op, ks, args, kwargs):
    """Run `op` with Autograd excluded in this thread (the keys below it)."""
    # Operator.redispatch inlined (the key set below Autograd always holds a backend key):
    # ~1k instructions less per recorded op (benchmarks/instructions.py, requires_grad case)
    bits = ks if ks.__class__ is int else ks.bits
    if not bits & BACKEND_MASK:
        bits |= BACKEND_SELECT_BIT
    fn = op._cache.get(bits)
    if fn is None:
        fn = op._resolve(bits)
    lk = local_keys
    prev = lk.exclude
    lk.exclude = prev | _AG
    try:
        return fn(*args, **kwargs)
    finally:
        lk.exclude = prev


def attach_inplace(self, node: Node) -> None:
    """After in-place op `node` wrote `self`: `self`'s history is now `node` (through CopySlices
    on its base when `self` is a view)."""
    if self._base is not None:
        record_copy_slices(self, node)
        return
    m = self._autograd
    if m is None:
        self._autograd = AutogradMeta(False, node, 0)
    else:
        m.grad_fn, m.output_nr = node, 0
        if m.retains_grad:
            move_retain(self, m)
    self._keys |= _AG


def _is_argument(o, args) -> bool:
    for a in args:
        if o is a:
            return True
    return False


def _give_grad_fn(o, node: Node, i: int, args, is_view: bool):
    """Make output `o` the `i`-th output of `node` (an alias of it when it already has a history
    or is one of the arguments); a floating output gets the grad_fn and the Autograd key."""
    if o._autograd is not None or _is_argument(o, args):
        o = _alias(o)
    if o._dtype.is_floating_point or o._dtype.is_complex:
        o._autograd = new_autograd_meta(node, i)
        o._keys |= _AG
        if is_view and o._base is not None:
            node._vv = o._vc[0]
    return o


def attach_outputs(info: OpAutogradInfo, node: OpNode, out, args):
    """Give the op's output(s) `node` as grad_fn; keep them on the node if the derivative reads
    them. Returns the outputs the caller gets (aliases where an output had a history)."""
    if isinstance(out, _Impl):
        out = _give_grad_fn(out, node, 0, args, info.is_view)
        if info.save_result:
            node.result = _alias(out)
            node._res_ver = out._vc[0]
        return out
    if not isinstance(out, (tuple, list)):
        return out
    outs = list(out)
    node.n_outputs = len(outs)
    node._out_meta = tuple(
        (o._shape, o._dtype, o._device) if isinstance(o, _Impl) else None for o in outs
    )
    for i, o in enumerate(outs):
        if isinstance(o, _Impl):
            outs[i] = _give_grad_fn(o, node, i, args, info.is_view)
    if info.save_result:
        node.result = tuple(_alias(o) if isinstance(o, _Impl) else o for o in outs)
        node._res_ver = tuple(o._vc[0] if isinstance(o, _Impl) else None for o in outs)
    if out.__class__ is list:
        return outs
    return out.__class__(outs) if out.__class__ is tuple else out.__class__(*outs)


class _InplaceNoGradBackward(Node):
    """In-place op with no derivative (fill_, random_, comparisons): the old values of `self`
    do not reach the result, so their gradient is zero."""

    __slots__ = ()

    def apply(self, grads: list) -> list:
        g = grads[0]
        return [None if g is None else g.new_zeros(g._shape)]


def _record_inplace_nograd(info: OpAutogradInfo, args, kwargs) -> None:
    self = args[0]
    if info.name == "fill_" and any(
        isinstance(a, _Impl) and _requires_grad(a) for a in (*args[1:], *kwargs.values())
    ):
        raise NotImplementedError(
            "fill_(): the gradient with respect to a tensor fill value "
            "is not supported by coretorch autograd"
        )
    if not _requires_grad(self) and (self._base is None or not _requires_grad(self._base)):
        return
    cls = node_class(camel_case(info.name) + "Backward0", info.name, (), _InplaceNoGradBackward)
    edge = gradient_edge(self, self._autograd) if _requires_grad(self) else None
    attach_inplace(self, init_node(object.__new__(cls), (edge,), 1, next_sequence_nr()))


def autograd_kernel(op, ks, args, kwargs):
    """Boxed Autograd fallback: run the op below Autograd, then record its backward node."""
    info = _infos.get(op)
    if info is None:
        info = _infos[op] = OpAutogradInfo(op)
    if kwargs:
        _check_kwargs(info, args, kwargs)
    inplace = info.inplace
    if inplace:
        check_inplace(info, args[0])
    if not info.differentiable:
        out = run_below_autograd(op, ks, args, kwargs)
        if inplace:
            _record_inplace_nograd(info, args, kwargs)
        return out

    edges, needs, list_args = collect_edges(args)
    if not any(needs):
        return run_below_autograd(op, ks, args, kwargs)
    seq_nr = next_sequence_nr()  # before the clone below, which records a node of its own
    saved_args = args
    if inplace and info.clone_self:
        saved_args = (args[0].clone(),) + tuple(args[1:])
    versions = None if info.saves == () else saved_versions(info, saved_args, list_args is not None)
    out = run_below_autograd(op, ks, args, kwargs)
    # info.cls: set for the differentiable ops that reach here
    node = info.cls(
        info.decl,
        saved_args,
        kwargs,
        tuple(edges),
        tuple(needs),  # type: ignore[misc]
        None if list_args is None else tuple(list_args),
        versions,
        seq_nr,
    )
    if inplace and isinstance(out, _Impl):
        attach_inplace(args[0], node)
        if info.save_result:
            node.result = _alias(out)
            node._res_ver = out._vc[0]
        return out
    return attach_outputs(info, node, out, args)


def _check_kwargs(info: OpAutogradInfo, args, kwargs) -> None:
    """Keyword arguments reach here only as ``out=`` (or for ops declared without a schema)."""
    if kwargs.get("out") is not None and any(
        isinstance(a, _Impl) and _requires_grad(a) for a in (*args, *kwargs.values())
    ):
        raise RuntimeError(
            f"{info.name}(): functions with out=... arguments don't support "
            f"automatic differentiation, but one of the arguments requires grad."
        )
    for k, v in kwargs.items():
        if k != "out" and isinstance(v, _Impl) and _requires_grad(v):
            raise NotImplementedError(
                f"{info.name}(): the gradient with respect to keyword argument '{k}' is not "
                f"supported by coretorch autograd; pass it as a positional argument"
            )


def install() -> None:
    """Register `autograd_kernel` as the boxed fallback of the Autograd key."""
    register_fallback(DispatchKey.Autograd, autograd_kernel)
