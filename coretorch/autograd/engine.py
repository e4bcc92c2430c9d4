"""The backward engine: `backward` and `grad`.

Nodes run when every node that feeds them has run (dependency counts over the part of the graph
that leads to what is asked for). Gradients arriving at one node output are summed. After a node
returns, each gradient is reduced to its input's shape (summing broadcast dims) and cast to its
dtype/device here, once, so derivative formulas never do it. Each node runs inside a
BACKWARD_FUNCTION RecordFunction when an observer is registered.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

from .. import record_function as _rf
from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys
from ..ops.declare import op_named as _op
from ..tensor.impl import TensorImpl
from ..tensor.tensor import Tensor
from .grad_mode import no_grad
from .node import AccumulateGrad, Node, OpNode, gradient_edge

__all__ = ["backward", "grad", "sum_to", "accumulate_grad", "GraphTask", "InputBuffer"]

_rf_state = _rf.state
_call_backward = _rf.call_backward
_pass_numbers = itertools.count()  # GraphTask.number: which backward pass ran a node


def _size_str(shape) -> str:
    return f"coretorch.Size({list(shape)})"


def sum_to(g: Tensor, shape: tuple, node: Node | None = None, index: int = 0) -> Tensor:
    """Sum gradient `g` (of a broadcast shape) down to `shape`."""
    gs = g._shape
    lead = len(gs) - len(shape)
    bad = lead < 0
    dims = list(range(lead)) if not bad else []
    if not bad:
        for i, s in enumerate(shape):
            gsz = gs[lead + i]
            if s == gsz:
                continue
            if s == 1:
                dims.append(lead + i)
            else:
                bad = True
                break
    if bad:
        who = node.name() if node is not None else "backward"
        raise RuntimeError(
            f"Function {who} returned an invalid gradient at index {index} - got "
            f"{list(gs)} but expected shape compatible with {list(shape)}"
        )
    r = _op("sum")(g, tuple(dims), True) if dims else g
    return r.reshape(shape) if r._shape != shape else r


def accumulate_grad(t: TensorImpl, g: Tensor | None, owned: bool = False) -> None:
    """Add `g` into ``t.grad`` (what AccumulateGrad does); then post-accumulate hooks.

    `owned`: the engine made `g` and nothing else refers to it (see `InputBuffer`), so a first
    gradient laid out like `t` becomes ``t.grad`` without a copy, as PyTorch's AccumulateGrad
    steals it. Any other gradient (a user's, one a hook saw, a view) is copied."""
    m = t._autograd
    if g is None:
        return
    assert m is not None, "accumulate_grad: the tensor requires grad, so it has autograd meta"
    create_graph = not local_keys.exclude & AUTOGRAD_BIT
    old = m.grad
    if old is None:
        if create_graph or (owned and g._autograd is None and g._stride == t._stride):
            m.grad = g
        else:
            m.grad = _detached_copy(g)
    elif (
        create_graph
        or old._autograd is not None
        and (old._autograd.grad_fn is not None or old._autograd.requires_grad)
    ):
        m.grad = old + g
    else:
        old.add_(g)
    hooks = m.post_accumulate_grad_hooks
    if hooks:
        for h in list(hooks.values()):
            h(t)


def _detached_copy(g: Tensor) -> Tensor:
    with no_grad():
        return g.clone()


def _mismatch(i: int, what: str, given, expected) -> str:
    """PyTorch's words for a grad_outputs[i] whose `what` (shape, dtype) is not output i's."""
    return (
        f"Mismatch in {what}: grad_output[{i}] has a {what} of {given} and output[{i}] has "
        f"a {what} of {expected}."
    )


def _make_grads(outputs: list, grad_outputs: list) -> tuple[list, list]:
    """The seed gradients, and for each whether the engine created it (implicit ones)."""
    out, owned = [], []
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o._dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs "
                    f"but got {o._dtype.name}"
                )
            g = _op("ones")(o._shape, dtype=o._dtype, device=o._device)
            owned.append(True)
            out.append(g)
            continue
        elif not isinstance(g, TensorImpl):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif g._shape != o._shape:
            raise RuntimeError(_mismatch(i, "shape", _size_str(g._shape), _size_str(o._shape)))
        elif g._dtype.is_floating_point != o._dtype.is_floating_point:
            raise TypeError(
                "For complex Tensors, both grad_output and output are required to "
                "have the same dtype. " + _mismatch(i, "dtype", g._dtype.name, o._dtype.name)
            )
        out.append(g)
        owned.append(False)
    return out, owned


def _as_list(x, what: str) -> list:
    if x is None:
        return []
    if isinstance(x, TensorImpl):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _initial_grads(outputs: list, grad_outputs, who: str, what: str, of: str) -> tuple[list, list]:
    """The gradients that seed the backward pass: `grad_outputs` (padded with None, which means
    ones for scalar outputs) checked against `outputs`."""
    gl = _as_list(grad_outputs, f"{who}()")
    if len(gl) < len(outputs):
        gl += [None] * (len(outputs) - len(gl))
    if len(gl) != len(outputs):
        raise RuntimeError(f"{who}(): got {len(gl)} {what} for {len(outputs)} {of}")
    return _make_grads(outputs, gl)


def _target_edges(inputs: list, who: str) -> list:
    """``[(tensor, edge)]`` of the tensors gradients are asked for."""
    targets = []
    for t in inputs:
        if not isinstance(t, TensorImpl):
            raise TypeError(f"{who}(): inputs must be Tensors, got {type(t).__name__}")
        m = t._autograd
        if m is None or not (m.grad_fn is not None or m.requires_grad):
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        targets.append((t, gradient_edge(t, m)))
    return targets


def _root_edges(outputs: list) -> list:
    edges = []
    for i, o in enumerate(outputs):
        m = o._autograd
        if m is None or not (m.grad_fn is not None or m.requires_grad):
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        edges.append(gradient_edge(o, m))
    return edges


def backward(
    tensors,
    grad_tensors=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables=None,
    inputs=None,
) -> None:
    """Accumulate into ``.grad`` of the graph's leaves the gradients of `tensors` (mirrors
    ``torch.autograd.backward``). With `inputs`, only those tensors get gradients."""
    outputs = _as_list(tensors, "backward()")
    if grad_variables is not None and grad_tensors is None:
        grad_tensors = grad_variables
    grads = _initial_grads(outputs, grad_tensors, "backward", "gradients", "tensors")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outputs)
    targets = None
    if inputs is not None:
        ins = _as_list(inputs, "backward(inputs=...)")
        if not ins:
            raise RuntimeError("backward(): 'inputs' argument to backward() cannot be empty.")
        targets = _target_edges(ins, "backward")
    GraphTask(roots, grads, retain_graph, create_graph, targets, accumulate=True).run()


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of `outputs` with respect to `inputs`, without touching ``.grad``
    (mirrors ``torch.autograd.grad``)."""
    if is_grads_batched:
        raise NotImplementedError(
            "autograd.grad(is_grads_batched=True) is not supported by coretorch"
        )
    outs = _as_list(outputs, "grad()")
    ins = _as_list(inputs, "grad()")
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _initial_grads(outs, grad_outputs, "grad", "grad_outputs", "outputs")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outs)
    targets = _target_edges(ins, "grad")
    result = GraphTask(roots, grads, retain_graph, create_graph, targets, accumulate=False).run()
    out = []
    for (t, _), g in zip(targets, result):
        if g is None:
            if materialize_grads:
                g = _op("zeros")(t._shape, dtype=t._dtype, device=t._device)
            elif not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the "
                    "desired behavior."
                )
        out.append(g)
    return tuple(out)


class InputBuffer:
    """The gradients arriving at one node, one slot per node input, summed as they arrive.

    `owned[i]` says the engine made slot i's gradient and nothing else refers to it: the output
    of a derivative formula (not one of its incoming gradients or saved tensors, not a view),
    routed to this one slot, never shown to a hook, or a sum the buffer computed. Only an owned
    gradient may become a leaf's ``.grad`` without a copy."""

    __slots__ = ("grads", "owned")

    def __init__(self, n: int):
        self.grads: list = [None] * n
        self.owned: list = [False] * n

    def add(self, i: int, g: TensorImpl, owned: bool) -> None:
        """Add gradient `g` to slot `i`; `owned` says the engine made `g` and nothing else refers
        to it (a sum the buffer computes is always owned)."""
        old = self.grads[i]
        if old is None:
            self.grads[i], self.owned[i] = g, owned
        else:
            self.grads[i], self.owned[i] = old + g, True


class GraphTask:
    """One backward pass: which nodes run, in what order, with what gradients.

    `run()` discovers the graph from the roots, keeps only what leads to the targets, counts
    each node's pending inputs, seeds the roots' buffers and runs nodes as they become ready
    (all their inputs arrived), routing each output gradient along its edge."""

    def __init__(
        self,
        roots: list,
        seeds: tuple,
        retain_graph: bool,
        create_graph: bool,
        targets: list | None,
        accumulate: bool,
    ):
        self.roots, (self.seeds, self.seeds_owned) = roots, seeds
        self.retain_graph, self.create_graph = retain_graph, create_graph
        self.targets, self.accumulate = targets, accumulate
        self.buffers: dict = {}
        self.capture: dict = {}  # node -> [(input_nr, target index)]
        self.results: list = [None] * (len(targets) if targets is not None else 0)
        self.number = next(_pass_numbers)

    def run(self) -> list:
        """Execute the pass; returns the captured gradients of the targets (``grad()``)."""
        root_nodes = list(dict.fromkeys(e.node for e in self.roots))
        seen, parents = self._discover(root_nodes)
        self.needed, self.runs = self._prune(seen, parents)
        self.deps = self._dependencies()
        self._seed()
        ready = [n for n in root_nodes if n in self.needed and not self.deps.get(n)]
        lk = local_keys
        prev = lk.exclude
        lk.exclude = (prev & ~AUTOGRAD_BIT) if self.create_graph else (prev | AUTOGRAD_BIT)
        try:
            while ready:
                self._run_node(ready.pop(), ready)
        finally:
            lk.exclude = prev
        return self.results

    # ---- planning ---------------------------------------------------------------------------
    @staticmethod
    def _discover(root_nodes: list) -> tuple[set, dict]:
        """Every node reachable from the roots, and the parents of each (for pruning)."""
        seen = set(root_nodes)
        stack = list(seen)
        parents: dict = {}
        while stack:
            n = stack.pop()
            for e in n._edges:
                if e is None:
                    continue
                c = e.node
                p = parents.get(c)
                if p is None:
                    parents[c] = [n]
                else:
                    p.append(n)
                if c not in seen:
                    seen.add(c)
                    stack.append(c)
        return seen, parents

    def _prune(self, seen: set, parents: dict) -> tuple[set, set]:
        """(nodes that receive gradients, nodes that run): everything without targets; with
        targets, only the nodes on a path to one of them."""
        if self.targets is None:
            return seen, seen
        needed: set = set()
        stack = []
        for i, (t, e) in enumerate(self.targets):
            n = e.node
            if n not in seen:
                continue
            self.capture.setdefault(n, []).append((e.input_nr, i))
            if n not in needed:
                needed.add(n)
                stack.append(n)
        while stack:
            n = stack.pop()
            for p in parents.get(n, ()):
                if p not in needed:
                    needed.add(p)
                    stack.append(p)
        runs = {n for n in needed if any(e is not None and e.node in needed for e in n._edges)}
        if self.accumulate:
            runs.update(n for n in self.capture if n.__class__ is AccumulateGrad)
        return needed, runs

    def _dependencies(self) -> dict:
        """How many gradients each needed node waits for."""
        deps: dict = {}
        needed = self.needed
        for n in self.runs:
            for e in n._edges:
                if e is not None and e.node in needed:
                    deps[e.node] = deps.get(e.node, 0) + 1
        return deps

    def _seed(self) -> None:
        for e, g, owned in zip(self.roots, self.seeds, self.seeds_owned):
            if e.node in self.needed:
                self._buffer(e.node).add(e.input_nr, g, owned)

    def _buffer(self, node: Node) -> InputBuffer:
        buf = self.buffers.get(node)
        if buf is None:
            buf = self.buffers[node] = InputBuffer(node.n_outputs)
        return buf

    # ---- execution --------------------------------------------------------------------------
    def _run_node(self, node: Node, ready: list) -> None:
        buf = self.buffers.pop(node, None) or InputBuffer(node.n_outputs)
        grads, owned = buf.grads, buf.owned
        is_leaf = node.__class__ is AccumulateGrad
        if is_leaf:
            grads = _leaf_hooks(node, grads, owned)  # type: ignore[arg-type]  # is_leaf: its class
        elif node._hooks is not None:
            grads = _pre_hooks(node, grads, owned)
        cap = self.capture.get(node)
        if cap is not None:
            self._capture(node, cap, grads, is_leaf)
        if node not in self.runs:
            return
        outs = None
        out_owned: list = []
        if any(x is not None for x in grads):  # no loop variable: it would pin a gradient
            outs = _call(node, grads, owned, self.number)
            out_owned = _outputs_owned(node, outs, grads, owned)  # before release(): it reads
            if not self.retain_graph:  # the saved arguments
                node.release()
        buf = grads = None  # the buffers own the gradients now (lets AccumulateGrad take them)
        self._route(node, outs, out_owned, ready)

    def _capture(self, node: Node, cap: list, grads: list, is_leaf: bool) -> None:
        """Keep the gradients of the targets at `node` (and accumulate them for non-leaf
        targets of ``backward(inputs=...)``)."""
        for nr, i in cap:
            g = grads[nr]
            self.results[i] = g
            if self.accumulate and not is_leaf and g is not None:
                # captures need targets
                accumulate_grad(self.targets[i][0], g)  # type: ignore[index]

    def _route(self, node: Node, outs, out_owned: list, ready: list) -> None:
        """Send each output gradient along its edge (reduced to the input's shape and cast to its
        dtype/device here, once), and mark nodes whose inputs have all arrived as ready."""
        n_outs = len(outs) if outs is not None else 0
        needed, deps = self.needed, self.deps
        for i, e in enumerate(node._edges):
            if e is None:
                continue
            c = e.node
            if c not in needed:
                continue
            g = outs[i] if i < n_outs else None
            if g is not None:
                owned = out_owned[i]
                if g._shape != e.shape:
                    g, owned = sum_to(g, e.shape, node, i), True
                # `is` first: device.__eq__ is a Python call (~1.5k instructions a gradient)
                if g._dtype is not e.dtype or (g._device is not e.device and g._device != e.device):
                    if g._dtype.is_complex and not e.dtype.is_complex:
                        g = _op("real")(g)  # a real input's gradient: the real part (PyTorch)
                    g, owned = g.to(dtype=e.dtype, device=e.device), True
                self._buffer(c).add(e.input_nr, g, owned)
            d = deps[c] - 1
            deps[c] = d
            if d == 0:
                ready.append(c)


def _outputs_owned(node: Node, outs, grads: list, owned: list) -> list:
    """Which of a node's output gradients the engine may hand over without a copy (see
    `InputBuffer`). Ownership belongs to a gradient's storage, named by its root tensor (a view's
    `_base`): a root is given to at most one output; a root that arrived as an incoming gradient
    keeps that gradient's ownership; any other root is fresh if a derivative formula made it and
    it is none of the node's saved tensors."""
    if outs is None:
        return []
    fresh = isinstance(node, OpNode) and (node._hooks is None or not node._hooks.post)
    args = node.args if fresh else None  # type: ignore[attr-defined]  # an OpNode when fresh
    saved = {id(_root(a)) for a in args if isinstance(a, TensorImpl)} if args is not None else set()
    incoming = {id(_root(x)): j for j, x in enumerate(grads) if x is not None}
    given: set = set()
    res = []
    for g in outs:
        ok = False
        if g is not None:
            r = id(_root(g))
            if r not in given:
                given.add(r)
                j = incoming.get(r)
                ok = owned[j] if j is not None else fresh and r not in saved
        res.append(ok)
    return res


def _root(t: TensorImpl) -> TensorImpl:
    return t if t._base is None else t._base


def _call(node: Node, grads: list, owned: list, pass_nr: int):
    run: Callable[..., Any]
    args: tuple
    if node.__class__ is AccumulateGrad:
        run = node.apply_owned
        args = (grads, owned[0])
    else:
        run = node.apply
        args = (grads,)
    outs = run(*args) if not _rf_state.active else _call_backward(node, run, args, grads, pass_nr)
    h = node._hooks
    if h is not None and h.post:
        for fn in list(h.post.values()):
            r = fn(tuple(outs), tuple(grads))
            if r is not None:
                outs = list(r)
    return outs


def _pre_hooks(node: Node, grads: list, owned: list) -> list:
    """Run the node's tensor hooks, pre-hooks and retain_grad: a hook may keep a reference to a
    gradient it sees, so none of them stays owned."""
    h = node._hooks
    assert h is not None, "_pre_hooks runs for nodes with hooks"
    grads = list(grads)
    owned[:] = [False] * len(owned)
    for nr, fn in list(h.tensor_pre.values()):
        if grads[nr] is not None:
            r = fn(grads[nr])
            if r is not None:
                grads[nr] = r
    for fn in list(h.pre.values()):
        r = fn(tuple(grads))
        if r is not None:
            grads = list(r)
    for nr, ref in list(h.retain.items()):
        t = ref()
        g = grads[nr]
        if t is not None and g is not None:
            m = t._autograd
            if m.grad is None:
                m.grad = g if not local_keys.exclude & AUTOGRAD_BIT else _detached_copy(g)
            else:
                m.grad = m.grad + g
    return grads


def _leaf_hooks(node: AccumulateGrad, grads: list, owned: list) -> list:
    t = node.variable
    m = t._autograd if t is not None else None
    hooks = m.hooks if m is not None else None
    if hooks:
        grads = list(grads)
        owned[0] = False
        for fn in list(hooks.values()):
            if grads[0] is not None:
                r = fn(grads[0])
                if r is not None:
                    grads[0] = r
    if node._hooks is not None:
        grads = _pre_hooks(node, grads, owned)
    return grads
