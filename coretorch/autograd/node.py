"""Autograd graph nodes.

A `Node` is one backward function. `_edges` is a flat tuple with one entry per gradient the node
returns: None (no gradient flows there) or an `Edge`: the next node, which of its inputs the
gradient feeds, and the shape, dtype and device of the forward input, so the engine can reduce a
broadcast gradient to its shape and cast it to its dtype/device once, centrally. `apply(grads)`
takes one gradient per output of the forward op (None where none arrived) and returns a sequence
aligned with `_edges`.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, NamedTuple, TypeVar

from ..tensor.impl import AutogradMeta, TensorImpl
from ..utils.hooks import RemovableHandle

__all__ = [
    "Node",
    "AccumulateGrad",
    "OpNode",
    "RemovableHandle",
    "Edge",
    "gradient_edge",
    "init_node",
    "add_hook",
    "FREED_MESSAGE",
    "camel_case",
]

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class Edge(NamedTuple):
    """Where a gradient goes: input `input_nr` of `node`, for a forward input of this geometry."""

    node: "Node"
    input_nr: int
    shape: tuple
    dtype: Any
    device: Any


_new_edge = tuple.__new__  # Edge(...) without NamedTuple's Python-level __new__: ~0.1 µs less


def make_edge(node: "Node", input_nr: int, t: TensorImpl) -> Edge:
    """An edge into input `input_nr` of `node`, recording `t`'s shape, dtype and device."""
    return _new_edge(Edge, (node, input_nr, t._shape, t._dtype, t._device))


class _NodeHooks:
    """Hooks of one node (dicts keyed by `RemovableHandle` id, in registration order): tensor
    hooks per output (pre), node pre/post hooks, and retained grads."""

    __slots__ = ("tensor_pre", "pre", "post", "retain")

    def __init__(self):
        self.tensor_pre: dict = {}  # id -> (output_nr, fn(grad) -> grad | None)
        self.pre: dict = {}  # id -> fn(grad_outputs) -> grad_outputs | None
        self.post: dict = {}  # id -> fn(grad_inputs, grad_outputs) -> grad_inputs | None
        self.retain: dict = {}  # output_nr -> weakref to the tensor that retains its grad


class Node:
    """Base of every backward function (``y.grad_fn``)."""

    __slots__ = ("_edges", "seq_nr", "n_outputs", "_hooks", "_vv", "_metadata", "__weakref__")
    _edges: tuple
    seq_nr: int
    n_outputs: int
    _hooks: _NodeHooks | None
    _vv: int  # the version of the view this node's history was recorded for (-1: not a view)
    _metadata: dict | None
    _name = "Node"

    def name(self) -> str:
        """The node's name as PyTorch prints it (``MulBackward0``)."""
        return self._name

    def apply(self, grads: list) -> Any:
        """Gradients of this node's inputs from the gradients of its outputs `grads`.

        Raises:
            NotImplementedError: on a node type that does not define it.
        """
        raise NotImplementedError(f"{self.name()}.apply is not implemented")

    def release(self) -> None:
        """Free what was saved for backward (called after the node ran without retain_graph)."""

    @property
    def next_functions(self) -> tuple:
        """``((node, output_nr), ...)`` for each input, ``(None, 0)`` where none is needed."""
        out = [(None, 0) if e is None else (e.node, e.input_nr) for e in self._edges]
        while out and out[-1][0] is None and len(out) > 1:
            out.pop()
        return tuple(out)

    @property
    def metadata(self) -> dict:
        """A dict the user may store anything in (created on first use)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def _hook_set(self) -> _NodeHooks:
        h = self._hooks
        if h is None:
            h = self._hooks = _NodeHooks()
        return h

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return new grad_inputs."""
        return add_hook(self._hook_set().post, fn)

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; it may return new grad_outputs."""
        return add_hook(self._hook_set().pre, fn)

    def __call__(self, *grads):
        return self.apply(list(grads))

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


def add_hook(hooks: dict, fn: Any) -> RemovableHandle:
    """Register `fn` in `hooks` (run in registration order); the handle removes it."""
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


_N = TypeVar("_N", bound=Node)


def init_node(node: _N, edges: tuple, n_outputs: int, seq_nr: int) -> _N:
    """Fill the fields every node has (subclasses add their own)."""
    node._edges, node.n_outputs, node.seq_nr = edges, n_outputs, seq_nr
    node._hooks = node._metadata = None
    node._vv = -1
    return node


class AccumulateGrad(Node):
    """The node of a leaf tensor that requires grad: adds incoming gradients to its `.grad`.

    The leaf keeps its AccumulateGrad; the node refers back weakly (no reference cycle): once the
    leaf is gone nobody can read its `.grad`, so there is nothing to accumulate into."""

    __slots__ = ("_variable",)
    _name = "AccumulateGrad"

    def __init__(self, variable: TensorImpl):
        init_node(self, (), 1, 2**63 - 1)
        self._variable = weakref.ref(variable)

    @property
    def variable(self) -> TensorImpl | None:
        """The leaf tensor (None once it was freed)."""
        return self._variable()

    def apply(self, grads: list) -> tuple:
        """Add the incoming gradient into the leaf tensor's ``.grad``."""
        return self.apply_owned(grads, False)

    def apply_owned(self, grads: list, owned: bool) -> tuple:
        """Accumulate; `owned` (from the engine's buffer) allows taking the gradient over."""
        t = self._variable()
        if t is not None:
            from .engine import accumulate_grad

            accumulate_grad(t, grads[0], owned)
        return ()


def gradient_edge(t: TensorImpl, m: AutogradMeta) -> Edge:
    """The edge gradients of `t` flow into: its grad_fn output, or its AccumulateGrad (leaf).
    A view whose data changed in place since its grad_fn was recorded gets a fresh history."""
    fn = m.grad_fn
    if fn is not None:
        if fn._vv >= 0 and fn._vv != t._vc[0] and t._base is not None:
            from .views import regenerate_view_history

            fn = regenerate_view_history(t, m)
        return _new_edge(Edge, (fn, m.output_nr, t._shape, t._dtype, t._device))
    acc = m.grad_accumulator
    if acc is None:
        acc = m.grad_accumulator = AccumulateGrad(t)
    return _new_edge(Edge, (acc, 0, t._shape, t._dtype, t._device))


def camel_case(op_name: str) -> str:
    """``max_pool2d_with_indices`` -> ``MaxPool2DWithIndices`` (PyTorch's grad_fn naming)."""
    parts = [p for p in op_name.strip("_").split("_") if p]
    out = []
    for p in parts:
        if len(p) >= 2 and p[-1] == "d" and p[-2].isdigit():
            p = p[:-1] + "D"
        out.append(p[:1].upper() + p[1:])
    return "".join(out)


class OpNode(Node):
    """The backward of a declared op: runs ``decl.derivative(ctx, *grads)`` with itself as ctx.

    `args` is the forward op's argument record (`kwargs` is empty for ops with a schema; ops
    declared without one keep their keyword arguments there); each schema argument is also an
    attribute (``ctx.self``, ``ctx.alpha``: see `node_class`). `result` holds the output(s) when
    the declaration asks for them (``save_result``); `needs_input_grad` has one bool per argument.
    """

    __slots__ = (
        "decl",
        "args",
        "kwargs",
        "result",
        "needs_input_grad",
        "_versions",
        "_res_ver",
        "_out_meta",
        "_freed",
        "_list_args",
        "_saves",
    )
    args: tuple | None  # None once released
    kwargs: dict | None
    result: Any
    _res_ver: Any
    _out_meta: tuple | None
    _name = "OpBackward0"
    _op_name = "op"

    def __init__(
        self,
        decl,
        args: tuple,
        kwargs: dict,
        edges: tuple,
        needs: tuple,
        list_args: tuple | None,
        versions: tuple | None,
        seq_nr: int,
    ):
        # init_node's fields set here directly: one call less per recorded op (~0.1 µs)
        self._edges, self.n_outputs, self.seq_nr = edges, 1, seq_nr
        self._hooks = self._metadata = None
        self._vv = -1
        self.decl, self.args, self.kwargs = decl, args, kwargs
        self.needs_input_grad, self._list_args = needs, list_args
        self._versions = versions
        self._saves = versions is not None or (decl is not None and decl.save_result)
        self._freed = False
        self.result = self._res_ver = self._out_meta = None

    def apply(self, grads: list) -> Any:
        """Run the op's declared derivative on `grads`.

        Raises:
            RuntimeError: when the graph was freed, or a saved tensor was modified in place.
            NotImplementedError: when the op declares no derivative.
        """
        if self._freed:
            raise RuntimeError(FREED_MESSAGE)
        d = None if self.decl is None else self.decl.derivative
        if d is None:
            raise NotImplementedError(f"the derivative for '{self._op_name}' is not implemented.")
        if self._versions is not None or self._res_ver is not None:
            check_versions(self)
        om = self._out_meta
        if om is not None:
            grads = materialize(grads, om)
        if self._res_ver is not None:
            _attach_result_history(self)
        res = d(self, *grads)
        if isinstance(res, TensorImpl):
            res = (res,)
        if self._list_args is not None:
            res = _flatten_result(res, self._list_args)
        return res

    def release(self) -> None:
        if self._saves:
            self.args = self.kwargs = self.result = None
            self._freed = True

    @property
    def next_functions(self) -> tuple:
        args = self.args
        if args is None:
            return super().next_functions
        out, k, edges = [], 0, self._edges
        for a in args:
            if (a.__class__ is list or a.__class__ is tuple) and any(
                isinstance(t, TensorImpl) for t in a
            ):
                for _ in a:
                    e = edges[k]
                    out.append((None, 0) if e is None else (e.node, e.input_nr))
                    k += 1
                continue
            if isinstance(a, TensorImpl):
                e = edges[k]
                out.append((None, 0) if e is None else (e.node, e.input_nr))
            k += 1
        return tuple(out)

    @property
    def saved_tensors(self) -> tuple:
        """The tensor arguments saved for the derivative.

        Raises:
            RuntimeError: when the graph was already freed by a backward pass.
        """
        args = self.args
        if self._freed or args is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(a for a in args if isinstance(a, TensorImpl))


def _saved_argument(i: int, name: str) -> property:
    def get(node: OpNode):
        args = node.args
        if args is None:
            raise RuntimeError(FREED_MESSAGE)
        return args[i]

    get.__name__ = name
    return property(get, doc=f"The forward call's argument {name!r}.")


_node_classes: dict[str, type] = {}


def node_class(name: str, op_name: str, arg_names: tuple = (), base: type = OpNode) -> type:
    """The Node subclass called `name` (``MulBackward0``), made once per op: its attributes give
    the forward arguments by their schema names (``ctx.self``, ``ctx.other``)."""
    cls = _node_classes.get(name)
    if cls is None:
        ns: dict[str, Any] = {"__slots__": (), "_name": name, "_op_name": op_name}
        for i, n in enumerate(arg_names):
            if hasattr(base, n):
                raise TypeError(f"{op_name}: argument name {n!r} clashes with a Node attribute")
            ns[n] = _saved_argument(i, n)
        cls = _node_classes[name] = type(name, (base,), ns)
    return cls


def materialize(grads: list, out_meta: tuple) -> list:
    """Zeros for float outputs that got no gradient (integer outputs keep None)."""
    from ..ops.declare import REGISTRY

    zeros = REGISTRY["zeros"].op
    out = list(grads)
    for i, g in enumerate(out):
        if g is None and out_meta[i] is not None:
            shape, dtype, device = out_meta[i]
            if dtype.is_floating_point or dtype.is_complex:
                out[i] = zeros(shape, dtype=dtype, device=device)
    return out


def _flatten_result(res, list_args: tuple) -> list:
    """Formulas return a list for a list-of-tensors argument; edges are flat."""
    flat = []
    res = list(res)
    for i, n in enumerate(list_args):
        r = res[i] if i < len(res) else None
        if n < 0:
            flat.append(r)
        elif r is None:
            flat.extend([None] * n)
        else:
            flat.extend(r)
    return flat


def _attach_result_history(node: OpNode) -> None:
    """For create_graph: the saved outputs take their history back (they are this node's)."""
    from .grad_mode import is_grad_enabled

    if not is_grad_enabled():
        return
    from ..dispatch.keys import AUTOGRAD_BIT

    res = node.result
    outs = res if isinstance(res, tuple) else (res,)
    for i, o in enumerate(outs):
        if (
            isinstance(o, TensorImpl)
            and (o._dtype.is_floating_point or o._dtype.is_complex)
            and o._autograd is None
        ):
            o._autograd = AutogradMeta(False, node, i)
            o._keys |= AUTOGRAD_BIT


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def describe_tensor(t: TensorImpl) -> str:
    """``coretorch.FloatTensor [3]`` (PyTorch's ``torch.FloatTensor [3]``)."""
    dev = "" if t._device.type == "cpu" else f"{t._device.type}."
    return (
        f"coretorch.{dev}{_TYPE_NAMES.get(t._dtype.name, t._dtype.name)} "
        f"[{', '.join(str(s) for s in t._shape)}]"
    )


def version_error(
    t: TensorImpl, expected: int, src: Node | None = None, output_nr: int = 0
) -> RuntimeError:
    """PyTorch's error for a saved tensor `t` modified in place (now past version `expected`)."""
    m = t._autograd
    if src is None and m is not None and m.grad_fn is not None:
        src, output_nr = m.grad_fn, m.output_nr
    which = "" if src is None else f", which is output {output_nr} of {src.name()},"
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{describe_tensor(t)}]{which} is at version {t._vc[0]}; expected version "
        f"{expected} instead. Hint: the backtrace further above shows the operation that failed "
        f"to compute its gradient. The variable in question was changed in there or anywhere "
        f"later. Good luck!"
    )


def check_versions(node: OpNode) -> None:
    """Raise PyTorch's error if a tensor saved for `node` was modified in place since."""
    args = node.args
    assert args is not None, "check_versions: the node was not released"
    for i, v in node._versions or ():
        a = args[i]
        if a.__class__ is list or a.__class__ is tuple:
            for t, tv in zip(a, v):
                if isinstance(t, TensorImpl) and t._vc[0] != tv:
                    raise version_error(t, tv)
        elif a._vc[0] != v:
            raise version_error(a, v)
    rv = node._res_ver
    if rv is not None:
        res = node.result
        if isinstance(res, tuple):
            for i, (t, tv) in enumerate(zip(res, rv)):
                if isinstance(t, TensorImpl) and t._vc[0] != tv:
                    raise version_error(t, tv, node, i)
        elif res._vc[0] != rv:
            raise version_error(res, rv, node, 0)
