"""`nn.functional` functions generated from op schemas, so an activation's defaults are written
once (in its schema, `coretorch.ops.activations`) and not again here or in its layer.

``functional("elu", hide=("scale", "input_scale"))`` is ``F.elu(input, alpha=1.0,
inplace=False)``: the op's arguments in schema order with their defaults, minus the hidden ones,
plus PyTorch's ``inplace=False`` when the op has an in-place form.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from ...ops import REGISTRY

__all__ = ["functional", "functional_parameters"]


def functional_parameters(fn: Callable) -> list[inspect.Parameter]:
    """The parameters of a functional after `input` that a layer stores (positional ones:
    an ``out=`` is not a layer's)."""
    return [
        p
        for p in list(inspect.signature(fn).parameters.values())[1:]
        if p.kind is p.POSITIONAL_OR_KEYWORD
    ]


def functional(
    op_name: str,
    *,
    hide: tuple = (),
    inplace: bool | None = None,
    name: str | None = None,
    doc: str | None = None,
) -> Callable:
    """The PyTorch-style functional form of declared op `op_name` (see the module docstring);
    `inplace` (default: whether the op has an in-place form) adds the ``inplace=False``
    argument."""
    decl = REGISTRY[op_name]
    args = [a for a in decl.schema.arguments[1:] if a.name not in hide]
    if inplace is None:
        inplace = decl.inplace_op is not None
    fname = name or op_name
    params = ["input"] + [a.name if a.required else f"{a.name}=_D[{a.name!r}]" for a in args]
    call = ", ".join(["input"] + [f"{a.name}={a.name}" for a in args])
    lines = [f"def {fname}({', '.join(params + (['inplace=False'] if inplace else []))}):"]
    if inplace:
        lines.append(f"    if inplace:\n        return _op_({call})")
    lines.append(f"    return _op({call})")
    g: dict[str, Any] = {
        "_op": decl.op.entry,
        "_op_": decl.inplace_op.entry if inplace and decl.inplace_op else None,
        "_D": {a.name: a.default for a in args if not a.required},
        "__name__": "coretorch.nn.functional",
    }
    exec(compile("\n".join(lines) + "\n", f"<coretorch functional {fname}>", "exec"), g)  # noqa: S102
    f = g[fname]
    f.__doc__ = doc or decl.doc
    return f
