"""Higher-order autograd on functions (mirrors ``torch.autograd.functional``): `vjp`, `jvp`,
`jacobian`, `hessian`, `vhp`, `hvp`.

Each is written with `autograd.grad`: a vector-Jacobian product is one backward pass; a
Jacobian-vector product is the "double vjp" (the vjp of the vjp with respect to its vector is
linear in that vector, so differentiating it again gives J v); a Jacobian is one backward pass per
output element (reverse mode); a Hessian is the Jacobian of the gradient. ``vectorize=True``
is accepted and gives the same values (PyTorch uses it to batch the passes with vmap).

    >>> import coretorch as ct
    >>> from coretorch.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, ct.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
"""

from __future__ import annotations

from typing import Any, Callable

from ..tensor.tensor import Tensor
from .engine import grad as _grad
from .grad_mode import enable_grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(x: Any, what: str, fn: str) -> tuple[bool, tuple]:
    """(whether `x` was a tuple, `x` as a tuple of tensors); TypeError for anything else."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            if is_tuple:
                raise TypeError(
                    f"The {what} given to {fn} must be either a Tensor or a tuple of "
                    f"Tensors but the value at index {i} has type {type(t)}."
                )
            raise TypeError(
                f"The {what} given to {fn} must be either a Tensor or a tuple of "
                f"Tensors but the given {what} has type {type(t)}."
            )
    return is_tuple, items


def _untuple(x: tuple, is_tuple: bool | tuple[bool, bool]):
    """Undo `_as_tuple` on a result: one level, or two for a (outputs x inputs) table."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            x = tuple(row[0] for row in x)
        return x if outer else x[0]
    return x if is_tuple else x[0]


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs the function is differentiated at: fresh leaves, or (create_graph) views that
    keep an input's own graph so the result can be differentiated further."""
    if create_graph:
        return tuple(
            t.view_as(t) if t.requires_grad else t.detach().requires_grad_() for t in inputs
        )
    return tuple(t.detach().requires_grad_() for t in inputs)


def _vector(v: Any, like: tuple, what: str, fn: str) -> tuple:
    """`v` as a tuple matching the shapes of `like` (None only where `like` is one element)."""
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(
                f"The vector v can only be None if the {what} to {fn} is a "
                f"single Tensor with a single element."
            )
        return (like[0].new_ones(like[0].shape),)
    _, v = _as_tuple(v, "v", fn)
    if len(v) != len(like):
        raise RuntimeError(f"{fn}: v has {len(v)} Tensors but the {what} has {len(like)}.")
    for i, (a, b) in enumerate(zip(v, like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(
                f"{fn}: mismatch in shape: the {what} has shape {list(b.shape)} "
                f"at index {i} but v has shape {list(a.shape)}."
            )
    return v


def _vjp_pass(
    outputs: tuple,
    inputs: tuple,
    vectors: tuple | None,
    create_graph: bool,
    retain_graph: bool | None = None,
) -> tuple:
    """grad of sum(outputs * vectors) w.r.t. `inputs`, None where an input does not reach them
    (outputs that do not require grad are independent of every input)."""
    pairs = [
        (o, None if vectors is None else v)
        for o, v in zip(outputs, vectors if vectors is not None else outputs)
        if o.requires_grad
    ]
    if not pairs:
        return (None,) * len(inputs)
    outs = tuple(o for o, _ in pairs)
    vecs = None if vectors is None else tuple(v for _, v in pairs)
    return _grad(
        outs, inputs, vecs, retain_graph=retain_graph, create_graph=create_graph, allow_unused=True
    )


def _filled(
    grads: tuple,
    like: tuple,
    strict: bool,
    fn: str,
    create_graph: bool,
    independent_of: str = "input",
) -> tuple:
    """`grads` with zeros where None (an independent input); strict mode refuses those."""
    out = []
    for i, (g, x) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"{fn}: the output of the user-provided function is "
                    f"independent of {independent_of} {i}. This is not allowed "
                    f"in strict mode."
                )
            g = x.new_zeros(x.shape)
        out.append(g if create_graph else g.detach())
    return tuple(out)


def _detached(xs: tuple, create_graph: bool) -> tuple:
    return xs if create_graph else tuple(x.detach() for x in xs)


def vjp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """``(func(inputs), v^T J)``: the vector-Jacobian product of `func` at `inputs`.

    `v` has the shape of `func`'s output (may be None when that is one element). `strict`
    raises when an input does not affect the output (else its part is zeros).
    `create_graph` makes the results differentiable.
    """
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "vjp")
        vs = _vector(v, outs, "output of the user-provided function", "vjp")
        res = _filled(_vjp_pass(outs, xs, vs, create_graph), xs, strict, "vjp", create_graph)
    return _untuple(_detached(outs, create_graph), out_tuple), _untuple(res, in_tuple)


def jvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """``(func(inputs), J v)``: the Jacobian-vector product of `func` at `inputs`, `v` shaped
    as `inputs` (may be None when the input is one element)."""
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
        xs = _prepare(xs, create_graph)
        vs = _vector(v, xs, "input", "jvp")
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jvp")
        # u -> J^T u is linear in u: its vjp with vector v is J v
        us = tuple(o.new_zeros(o.shape).requires_grad_() for o in outs)
        back = _filled(_vjp_pass(outs, xs, us, True), xs, strict, "jvp", True)
        idx = [j for j, b in enumerate(back) if b.requires_grad]
        res = (
            _grad(
                tuple(back[j] for j in idx),
                us,
                tuple(vs[j] for j in idx),
                create_graph=create_graph,
                allow_unused=True,
            )
            if idx
            else (None,) * len(us)
        )
        res = _filled(res, outs, strict, "jvp", create_graph, "the vector at output")
    return _untuple(_detached(outs, create_graph), out_tuple), _untuple(res, out_tuple)


def jacobian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
):
    """The Jacobian of `func` at `inputs`: for output i and input j, a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (a tensor, a tuple, or a tuple of tuples as PyTorch
    nests them). `strategy` is "reverse-mode" ("forward-mode" needs ``vectorize=True``, as in
    PyTorch; both give the same values here)."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError(
            f'jacobian: expected strategy to be either "forward-mode" or '
            f'"reverse-mode", but got {strategy!r}'
        )
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            'jacobian: `strategy="forward-mode"` is only implemented for `vectorize=True`.'
        )
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
        xs = _prepare(xs, create_graph)
        out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jacobian")
        table = []
        for out in outs:
            flat = out.reshape(-1)
            rows: list[list] = [[] for _ in xs]
            for k in range(flat.numel()):
                g = _filled(
                    _vjp_pass((flat[k],), xs, None, create_graph, retain_graph=True),
                    xs,
                    strict,
                    "jacobian",
                    create_graph,
                )
                for j, gj in enumerate(g):
                    rows[j].append(gj)
            table.append(
                tuple(
                    (_stack(r) if r else x.new_zeros((0,) + tuple(x.shape))).reshape(
                        tuple(out.shape) + tuple(x.shape)
                    )
                    for r, x in zip(rows, xs)
                )
            )
    return _untuple(tuple(table), (out_tuple, in_tuple))


def _stack(rows: list) -> Tensor:
    from .. import stack  # the package imports autograd first

    return stack(rows)


def _scalar_output(func: Callable, fn: str) -> Callable:
    def single(*xs):
        _, outs = _as_tuple(func(*xs), "outputs of the user-provided function", fn)
        if len(outs) != 1:
            raise RuntimeError(f"The function given to {fn} should return a single Tensor")
        if outs[0].numel() != 1:
            raise RuntimeError(
                f"The Tensor returned by the function given to {fn} should contain a single element"
            )
        return outs[0].squeeze()

    return single


def hessian(
    func: Callable,
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
):
    """The Hessian of scalar-valued `func` at `inputs`: the Jacobian of its gradient (for
    inputs i and j, shape ``inputs[i].shape + inputs[j].shape``)."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    single = _scalar_output(func, "hessian")

    def gradient(*ys):
        return jacobian(single, ys, create_graph=True, strict=strict)

    res = jacobian(
        gradient,
        xs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    return _untuple(res, (in_tuple, in_tuple))


def vhp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """``(func(inputs), v^T H)``: the vector-Hessian product of scalar-valued `func`."""
    with enable_grad():
        in_tuple, xs = _as_tuple(inputs, "inputs", "vhp")
        xs = _prepare(xs, create_graph)
        vs = _vector(v, xs, "input", "vhp")
        out = _scalar_output(func, "vhp")(*xs)
        first = _filled(_vjp_pass((out,), xs, None, True), xs, strict, "vhp", True)
        res = _filled(_vjp_pass(first, xs, vs, create_graph), xs, strict, "vhp", create_graph)
    return (out if create_graph else out.detach()), _untuple(res, in_tuple)


def hvp(
    func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False
):
    """``(func(inputs), H v)``: the Hessian-vector product of scalar-valued `func`. The Hessian
    of a twice-differentiable function is symmetric, so this is `vhp`'s result (PyTorch's own
    documentation recommends vhp for speed for the same reason)."""
    return vhp(func, inputs, v, create_graph, strict)
