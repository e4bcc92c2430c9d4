"""The backward engine: `backward` and `grad`.

Nodes run when every node that feeds them has run (dependency counts over the part of the graph
that leads to what is asked for). Gradients arriving at one node output are summed. After a node
returns, each gradient is reduced to its input's shape (summing broadcast dims) and cast to its
dtype/device here, once, so derivative formulas never do it. Each node runs inside a
BACKWARD_FUNCTION RecordFunction when an observer is registered.
"""
from __future__ import annotations

import sys

from .. import record_function as _rf
from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys
from ..ops.declare import op_named as _op
from ..tensor.impl import TensorImpl
from .grad_mode import no_grad
from .node import AccumulateGrad, Node, gradient_edge

__all__ = ["backward", "grad", "sum_to", "accumulate_grad", "run_backward"]

_rf_state = _rf.state


def _size_str(shape) -> str:
    return f"coretorch.Size({list(shape)})"


def sum_to(g: TensorImpl, shape: tuple, node: Node | None = None, index: int = 0) -> TensorImpl:
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
        raise RuntimeError(f"Function {who} returned an invalid gradient at index {index} - got "
                           f"{list(gs)} but expected shape compatible with {list(shape)}")
    r = _op("sum")(g, tuple(dims), True) if dims else g
    return r.reshape(shape) if r._shape != shape else r


def accumulate_grad(t: TensorImpl, g: TensorImpl | None) -> None:
    """Add `g` into ``t.grad`` (what AccumulateGrad does); then post-accumulate hooks."""
    m = t._autograd
    if g is None:
        return
    create_graph = not local_keys.exclude & AUTOGRAD_BIT
    old = m.grad
    if old is None:
        m.grad = g if create_graph or _stealable(g, t) else _detached_copy(g)
    elif create_graph or old._autograd is not None and (old._autograd.grad_fn is not None
                                                        or old._autograd.requires_grad):
        m.grad = old + g
    else:
        old.add_(g)
    hooks = m.post_accumulate_grad_hooks
    if hooks:
        for h in list(hooks):
            h(t)


# References to a gradient that only the engine holds, seen from _stealable: the engine's buffer
# list, accumulate_grad's parameter, _stealable's parameter and getrefcount's argument.
_ENGINE_ONLY_REFS = 4


def _stealable(g: TensorImpl, t: TensorImpl) -> bool:
    """Whether `g` may become ``t.grad`` without a copy (as PyTorch's AccumulateGrad steals): a
    tensor without history, laid out like `t`, that nothing but the engine references -- for a
    view, whose base nothing else references either. Anything else (a user's gradient, one a
    hook kept, an expand of another) is copied."""
    if g._autograd is not None or g._stride != t._stride:
        return False
    if sys.getrefcount(g) > _ENGINE_ONLY_REFS:
        return False
    base = g._base
    return base is None or sys.getrefcount(base) <= 3  # g._base, `base`, getrefcount's argument


def _detached_copy(g: TensorImpl) -> TensorImpl:
    with no_grad():
        return g.clone()


def _make_grads(outputs: list, grad_outputs: list) -> list:
    out = []
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o._dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {o._dtype.name}")
            g = _op("ones")(o._shape, dtype=o._dtype, device=o._device)
        elif not isinstance(g, TensorImpl):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        elif g._shape != o._shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{_size_str(g._shape)} and output[{i}] has a shape of "
                               f"{_size_str(o._shape)}.")
        elif g._dtype.is_floating_point != o._dtype.is_floating_point:
            raise TypeError(f"For complex Tensors, both grad_output and output are required to "
                            f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a "
                            f"dtype of {g._dtype.name} and output[{i}] has a dtype of "
                            f"{o._dtype.name}.")
        out.append(g)
    return out


def _as_list(x, what: str) -> list:
    if x is None:
        return []
    if isinstance(x, TensorImpl):
        return [x]
    if isinstance(x, (list, tuple)):
        return list(x)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got {type(x).__name__}")


def _initial_grads(outputs: list, grad_outputs, who: str, what: str, of: str) -> list:
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
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        edges.append(gradient_edge(o, m))
    return edges


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables=None, inputs=None) -> None:
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
    run_backward(roots, grads, retain_graph, create_graph, targets, accumulate=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple:
    """The gradients of `outputs` with respect to `inputs`, without touching ``.grad``
    (mirrors ``torch.autograd.grad``)."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported by "
                                  "coretorch")
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
    result = run_backward(roots, grads, retain_graph, create_graph, targets, accumulate=False)
    out = []
    for (t, _), g in zip(targets, result):
        if g is None:
            if materialize_grads:
                g = _op("zeros")(t._shape, dtype=t._dtype, device=t._device)
            elif not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        out.append(g)
    return tuple(out)


def _graph(root_nodes: list):
    """Every node reachable from the roots, and the parents of each (for pruning)."""
    seen = set(root_nodes)
    stack = list(seen)
    parents: dict = {}
    while stack:
        n = stack.pop()
        for e in n._edges:
            if e is None:
                continue
            c = e[0]
            p = parents.get(c)
            if p is None:
                parents[c] = [n]
            else:
                p.append(n)
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return seen, parents


def run_backward(roots: list, grads: list, retain_graph: bool, create_graph: bool,
                 targets: list | None, accumulate: bool) -> list:
    """Execute the graph from `roots` (edges) seeded with `grads`.

    targets: None (every leaf accumulates), or ``[(tensor, edge)]``: only those receive
    gradients — accumulated into ``.grad`` when `accumulate`, else captured and returned.
    """
    root_nodes = []
    for e in roots:
        if e[0] not in root_nodes:
            root_nodes.append(e[0])
    seen, parents = _graph(root_nodes)
    capture: dict = {}       # node -> [(output_nr, target index)]
    if targets is None:
        needed = seen
        runs = seen
    else:
        needed = set()
        stack = []
        for i, (t, e) in enumerate(targets):
            n = e[0]
            if n not in seen:
                continue
            capture.setdefault(n, []).append((e[1], i))
            if n not in needed:
                needed.add(n)
                stack.append(n)
        while stack:
            n = stack.pop()
            for p in parents.get(n, ()):
                if p not in needed:
                    needed.add(p)
                    stack.append(p)
        runs = set()
        for n in needed:
            if any(e is not None and e[0] in needed for e in n._edges):
                runs.add(n)
        if accumulate:
            runs.update(n for n in capture if n.__class__ is AccumulateGrad)
    deps: dict = {}
    for n in runs:
        for e in n._edges:
            if e is not None:
                c = e[0]
                if c in needed:
                    deps[c] = deps.get(c, 0) + 1
    buffers: dict = {}
    for e, g in zip(roots, grads):
        n = e[0]
        if n not in needed:
            continue
        buf = buffers.get(n)
        if buf is None:
            buf = buffers[n] = [None] * n.n_outputs
        old = buf[e[1]]
        buf[e[1]] = g if old is None else old + g
    ready = [n for n in root_nodes if n in needed and not deps.get(n)]
    results = [None] * (len(targets) if targets is not None else 0)

    lk = local_keys
    prev = lk.exclude
    lk.exclude = (prev & ~AUTOGRAD_BIT) if create_graph else (prev | AUTOGRAD_BIT)
    try:
        while ready:
            node = ready.pop()
            grads_in = buffers.pop(node, None)
            if grads_in is None:
                grads_in = [None] * node.n_outputs
            if node.__class__ is AccumulateGrad:
                grads_in = _leaf_hooks(node, grads_in)
            elif node._hooks is not None:
                grads_in = _pre_hooks(node, grads_in)
            cap = capture.get(node)
            if cap is not None:
                for nr, i in cap:
                    g = grads_in[nr]
                    results[i] = g
                    if accumulate and node.__class__ is not AccumulateGrad and g is not None:
                        accumulate_grad(targets[i][0], g)
            if node not in runs:
                continue
            outs = None
            if any(x is not None for x in grads_in):  # no loop variable: it would pin a gradient
                outs = _call(node, grads_in)
                if not retain_graph:
                    node.release()
            edges = node._edges
            n_outs = len(outs) if outs is not None else 0
            for i, e in enumerate(edges):
                if e is None:
                    continue
                c = e[0]
                if c not in needed:
                    continue
                g = outs[i] if i < n_outs else None
                if g is not None:
                    if g._shape != e[2]:
                        g = sum_to(g, e[2], node, i)
                    if g._dtype is not e[3] or g._device != e[4]:
                        g = g.to(dtype=e[3], device=e[4])
                    buf = buffers.get(c)
                    if buf is None:
                        buf = buffers[c] = [None] * c.n_outputs
                    old = buf[e[1]]
                    buf[e[1]] = g if old is None else old + g
                d = deps[c] - 1
                deps[c] = d
                if d == 0:
                    ready.append(c)
            outs = g = None  # the buffers own the gradients now (lets AccumulateGrad steal them)
    finally:
        lk.exclude = prev
    return results


def _call(node: Node, grads: list):
    if _rf_state.active:
        # the engine's own list, not a copy: a second container holding the gradients would
        # stop AccumulateGrad from stealing them (see _stealable) whenever an observer is on
        rf = _rf.RecordFunction(node.name(), _rf.RecordScope.BACKWARD_FUNCTION, grads,
                                None, node.seq_nr)
        if rf._cbs:
            rf.extra["node"] = node
            with rf:
                outs = node.apply(grads)
                rf.outputs = outs
        else:
            outs = node.apply(grads)
    else:
        outs = node.apply(grads)
    h = node._hooks
    if h is not None and h.post:
        for fn in list(h.post):
            r = fn(tuple(outs), tuple(grads))
            if r is not None:
                outs = list(r)
    return outs


def _pre_hooks(node: Node, grads: list) -> list:
    h = node._hooks
    grads = list(grads)
    for nr, fn in list(h.tensor_pre):
        if grads[nr] is not None:
            r = fn(grads[nr])
            if r is not None:
                grads[nr] = r
    for fn in list(h.pre):
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


def _leaf_hooks(node: AccumulateGrad, grads: list) -> list:
    t = node.variable
    m = t._autograd if t is not None else None
    hooks = m.hooks if m is not None else None
    if hooks:
        grads = list(grads)
        for fn in list(hooks):
            if grads[0] is not None:
                r = fn(grads[0])
                if r is not None:
                    grads[0] = r
    if node._hooks is not None:
        grads = _pre_hooks(node, grads)
    return grads
