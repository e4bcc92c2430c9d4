"""The one generic Autograd kernel, registered as the boxed fallback of the `Autograd` key.

It redispatches below Autograd with the key excluded in this thread, then records an `OpNode`
holding the op's declared derivative, the forward arguments (versions of the saved ones), the
outputs when the declaration asks (``save_result``), and gives the outputs their grad_fn and the
Autograd key. Reaching this kernel means grad mode is on (no_grad excludes the key) and some
argument carries the key (requires grad).
"""
from __future__ import annotations

from ..dispatch.keys import AUTOGRAD_BIT, DispatchKey
from ..dispatch.operator import register_fallback
from ..dispatch.tls import local_keys
from ..record_function import next_sequence_nr
from ..tensor.impl import AutogradMeta, TensorImpl, new_impl, requires_grad as _requires_grad
from .node import Node, OpNode, _init_node, camel_case, gradient_edge
from .views import record_copy_slices

__all__ = ["autograd_kernel", "install"]

_Impl = TensorImpl
_AG = AUTOGRAD_BIT


class _OpInfo:
    """What the kernel needs about one operator, computed once."""

    __slots__ = ("cls", "decl", "name", "op_name", "inplace", "saves", "save_result",
                 "differentiable", "is_view", "clone_self")

    def __init__(self, op):
        decl = op.decl
        self.decl = decl
        self.name = decl.name if decl is not None else op.qualname
        self.op_name = op.name
        self.inplace = op.name.endswith("_")
        # an op defined without a declaration gets a node that raises at backward
        self.differentiable = decl is None or decl.differentiable
        deriv = decl.derivative if decl is not None else None
        self.saves = getattr(deriv, "saved_args", None)  # None: every tensor argument
        self.save_result = decl is not None and decl.save_result
        self.is_view = decl is not None and decl.family == "view"
        self.clone_self = self.inplace and deriv is not None and (
            self.saves is None or 0 in self.saves)
        base = camel_case(op.name if decl is None else decl.name)
        suffix = "Backwards" if base == "Copy" else "Backward0"
        self.cls = _node_class(base + suffix, self.name) if self.differentiable else None


_classes: dict[str, type] = {}


def _node_class(name: str, op_name: str, base: type = OpNode) -> type:
    """The Node subclass called `name` (made once): backward nodes are named for their op."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (base,), {"__slots__": (), "_name": name,
                                                    "_op_name": op_name})
    return cls


_infos: dict = {}


def _check_inplace(info: _OpInfo, self) -> None:
    m = self._autograd
    if m is not None and m.grad_fn is None and m.requires_grad:
        which = "a view of a leaf Variable" if self._base is not None else "a leaf Variable"
        raise RuntimeError(f"{which} that requires grad is being used in an in-place operation "
                           f"({info.op_name}).")
    base = self._base
    if base is not None:
        bm = base._autograd
        if bm is not None and (bm.requires_grad or bm.grad_fn is not None):
            if bm.grad_fn is None:
                raise RuntimeError(f"a view of a leaf Variable that requires grad is being used "
                                   f"in an in-place operation ({info.op_name}).")
            if m is None or m.grad_fn is None:
                raise RuntimeError(
                    f"{info.op_name}(): a view was created in no_grad mode (or by detach-like "
                    f"means) and is being modified in-place with grad mode enabled. Given that "
                    f"this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                    f"your code by moving both the view and the inplace either both inside the "
                    f"no_grad block (if you don't want the inplace to be tracked) or both outside "
                    f"(if you want the inplace to be tracked).")


def _alias(t):
    """A new tensor object over the same data, with no autograd history (for saved outputs)."""
    return new_impl(t.__class__, t._storage, t._shape, t._stride, t._offset, t._dtype, t._device,
                    t._keys & ~_AG, t._vc, t._base)


class _InplaceNoGradBackward(Node):
    """In-place op with no derivative (fill_, random_, comparisons): the old values of `self`
    do not reach the result, so their gradient is zero."""

    __slots__ = ()

    def apply(self, grads: list) -> list:
        g = grads[0]
        return [None if g is None else g.new_zeros(g._shape)]


def _record_inplace_nograd(info: _OpInfo, args, kwargs) -> None:
    self = args[0]
    if info.name == "fill_" and any(isinstance(a, _Impl) and _requires_grad(a)
                                    for a in (*args[1:], *kwargs.values())):
        raise NotImplementedError("fill_(): the gradient with respect to a tensor fill value "
                                  "is not supported by coretorch autograd")
    if not _requires_grad(self) and (self._base is None or not _requires_grad(self._base)):
        return
    cls = _node_class(camel_case(info.name) + "Backward0", info.name, _InplaceNoGradBackward)
    m = self._autograd
    edge = gradient_edge(self, m) if _requires_grad(self) else None
    node = _init_node(object.__new__(cls), (edge,), 1, next_sequence_nr())
    if self._base is not None:
        record_copy_slices(self, node)
        return
    m.grad_fn, m.output_nr = node, 0
    self._keys |= _AG


def _has_tensor(seq) -> bool:
    for t in seq:
        if isinstance(t, _Impl):
            return True
    return False


def _below_autograd(op, ks, args, kwargs):
    """Run `op` with Autograd excluded in this thread (the keys below it)."""
    lk = local_keys
    prev = lk.exclude
    lk.exclude = prev | _AG
    try:
        return op.redispatch(ks, *args, **kwargs)
    finally:
        lk.exclude = prev


def autograd_kernel(op, ks, args, kwargs):
    """Boxed Autograd fallback: run the op below Autograd, then record its backward node."""
    info = _infos.get(op)
    if info is None:
        info = _infos[op] = _OpInfo(op)
    if kwargs and kwargs.get("out") is not None:
        _check_no_out(info, args, kwargs)
    inplace = info.inplace
    if inplace:
        self = args[0]
        _check_inplace(info, self)
    if not info.differentiable:
        out = _below_autograd(op, ks, args, kwargs)
        if inplace:
            _record_inplace_nograd(info, args, kwargs)
        return out

    # edges of the inputs as they are before the op runs (in-place ops change `self`'s history);
    # list_args (built once a list argument shows up): the length of each list argument, -1 for
    # the others
    edges = []
    needs = []
    list_args = None
    for a in args:
        e = None
        if isinstance(a, _Impl):
            m = a._autograd
            if m is not None:
                fn = m.grad_fn
                if fn is not None and fn._vv < 0:
                    e = (fn, m.output_nr, a._shape, a._dtype, a._device)
                elif fn is None and m.requires_grad and m.grad_accumulator is not None:
                    e = (m.grad_accumulator, 0, a._shape, a._dtype, a._device)
                elif fn is not None or m.requires_grad:
                    e = gradient_edge(a, m)
        elif (a.__class__ is list or a.__class__ is tuple) and _has_tensor(a):
            if list_args is None:
                list_args = [-1] * len(needs)
            sub = []
            for t in a:
                m = t._autograd if isinstance(t, _Impl) else None  # index lists hold None
                sub.append(gradient_edge(t, m) if m is not None and (
                    m.grad_fn is not None or m.requires_grad) else None)
            list_args.append(len(a))
            edges.extend(sub)
            needs.append(any(e is not None for e in sub))
            continue
        edges.append(e)
        needs.append(e is not None)
        if list_args is not None:
            list_args.append(-1)
    if kwargs:
        _check_kwargs(info, kwargs)
    if not any(needs):
        return _below_autograd(op, ks, args, kwargs)

    seq_nr = next_sequence_nr()  # before the clone below, which records a node of its own
    saved_args = args
    if inplace and info.clone_self:
        saved_args = (self.clone(),) + tuple(args[1:])

    # versions of the saved inputs before the op (an in-place op may modify one of them)
    saves = info.saves
    if saves == ():
        vers = None
    elif saves is None:
        vers = [(i, a._vc[0]) for i, a in enumerate(saved_args) if isinstance(a, _Impl)]
        if list_args is not None:
            vers += [(i, tuple(t._vc[0] if isinstance(t, _Impl) else None for t in a))
                     for i, a in enumerate(saved_args)
                     if (a.__class__ is list or a.__class__ is tuple) and _has_tensor(a)]
    else:
        vers = [(i, saved_args[i]._vc[0]) for i in saves
                if i < len(saved_args) and isinstance(saved_args[i], _Impl)]

    out = _below_autograd(op, ks, args, kwargs)

    node = _init_node(object.__new__(info.cls), tuple(edges), 1, seq_nr)
    node.decl = info.decl
    node.args = saved_args
    node.kwargs = kwargs
    node.needs_input_grad = tuple(needs)
    node._list_args = None if list_args is None else tuple(list_args)
    node._freed = False
    node.result = node._res_ver = node._out_meta = None
    if vers:
        node._versions = tuple(vers)
        node._saves = True
    else:
        node._versions = None
        node._saves = info.save_result

    if isinstance(out, _Impl):
        if inplace:
            if self._base is not None:
                record_copy_slices(self, node)
            else:
                m = self._autograd
                if m is None:
                    self._autograd = AutogradMeta(False, node, 0)
                else:
                    m.grad_fn, m.output_nr = node, 0
                    if m.retains_grad:
                        from .tensor_methods import _move_retain
                        _move_retain(self, m)
                self._keys |= _AG
        else:
            out = _give_grad_fn(out, node, 0, args, info.is_view)
        if info.save_result:
            node.result = _alias(out)
            node._res_ver = out._vc[0]
        return out
    if out.__class__ is tuple or out.__class__ is list or isinstance(out, tuple):
        outs = list(out)
        node.n_outputs = len(outs)
        node._out_meta = tuple((o._shape, o._dtype, o._device) if isinstance(o, _Impl) else None
                               for o in outs)
        for i, o in enumerate(outs):
            if isinstance(o, _Impl):
                outs[i] = _give_grad_fn(o, node, i, args, info.is_view)
        if info.save_result:
            node.result = tuple(_alias(o) if isinstance(o, _Impl) else o for o in outs)
            node._res_ver = tuple(o._vc[0] if isinstance(o, _Impl) else None for o in outs)
        if out.__class__ is list:
            return outs
        return out.__class__(outs) if out.__class__ is tuple else out.__class__(*outs)
    return out


def _give_grad_fn(o, node: Node, i: int, args, is_view: bool):
    """Make output `o` the `i`-th output of `node` (an alias of it when it already has a history
    or is one of the arguments); a floating output gets the grad_fn and the Autograd key."""
    if o._autograd is not None or any(o is a for a in args):
        o = _alias(o)
    if o._dtype.is_floating_point:
        o._autograd = AutogradMeta(False, node, i)
        o._keys |= _AG
        if is_view and o._base is not None:
            node._vv = o._vc[0]
    return o


def _check_no_out(info: _OpInfo, args, kwargs) -> None:
    if any(isinstance(a, _Impl) and _requires_grad(a) for a in list(args) + list(kwargs.values())):
        raise RuntimeError(f"{info.name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")


def _check_kwargs(info: _OpInfo, kwargs) -> None:
    for k, v in kwargs.items():
        if isinstance(v, _Impl) and _requires_grad(v):
            raise NotImplementedError(
                f"{info.name}(): the gradient with respect to keyword argument '{k}' is not "
                f"supported by coretorch autograd; pass it as a positional argument")


def install() -> None:
    """Register `autograd_kernel` as the boxed fallback of the Autograd key."""
    register_fallback(DispatchKey.Autograd, autograd_kernel)
