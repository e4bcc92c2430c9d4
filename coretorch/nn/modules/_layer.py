"""What many layers share: a layer class made from a functional (its ``__init__`` takes and
stores the functional's arguments), and PyTorch's ``extra_repr`` of stored options."""

from __future__ import annotations

from typing import Callable

from ..functional._from_schema import functional_parameters
from .module import Module

__all__ = ["functional_layer", "options_repr", "SHOWN"]

SHOWN = object()  # an `options_repr` default meaning "always show this option"


def options_repr(module, positional: tuple = (), **defaults) -> str:
    """``extra_repr`` in PyTorch's style: the attributes named in `positional` by value, then
    ``name=value`` for each keyword, in order, where the value differs from the default given
    (always, for a default of `SHOWN`)."""
    parts = [f"{getattr(module, n)}" for n in positional]
    for name, default in defaults.items():
        value = getattr(module, name)
        if default is SHOWN or value != default:
            parts.append(f"{name}={value}")
    return ", ".join(parts)


def functional_layer(
    name: str, fn: Callable, doc: str, module: str, shown: tuple | None = None, base: type = Module
) -> type:
    """The layer class `name` (of module `module`) applying `fn`: its ``__init__`` takes `fn`'s
    arguments after `input`, with the same defaults (written once, in the op's schema or the
    functional), and stores them; its repr shows them (`shown` names a subset), with
    ``inplace`` only when True."""
    params = functional_parameters(fn)
    names = [p.name for p in params]
    sig = ", ".join(
        ["self"] + [p.name if p.default is p.empty else f"{p.name}=_D[{p.name!r}]" for p in params]
    )
    src = (
        f"def __init__({sig}):\n    Module.__init__(self)\n"
        + "".join(f"    self.{n} = {n}\n" for n in names)
        + "def forward(self, input):\n"
        + f"    '''Apply {fn.__name__} to `input` with the stored options.'''\n"
        + f"    return _fn(input{''.join(f', self.{n}' for n in names)})\n"
    )
    g = {
        "Module": Module,
        "_fn": fn,
        "__name__": module,
        "_D": {p.name: p.default for p in params if p.default is not p.empty},
    }
    exec(compile(src, f"<coretorch layer {name}>", "exec"), g)  # noqa: S102 - from the signature
    listed = [n for n in (names if shown is None else shown) if n != "inplace"]

    def extra_repr(self) -> str:
        """The stored options as ``name=value``, for the layer's repr."""
        parts = [f"{n}={getattr(self, n)!r}" for n in listed]
        if getattr(self, "inplace", False):
            parts.append("inplace=True")
        return ", ".join(parts)

    return type(
        name,
        (base,),
        {
            "__init__": g["__init__"],
            "forward": g["forward"],
            "extra_repr": extra_repr,
            "__doc__": doc,
            "__module__": module,
        },
    )


def subclass(name: str, bases: type | tuple, doc: str, module: str, **attrs) -> type:
    """The class `name` of module `module` deriving from `bases` with class attributes `attrs`
    (the 1d/2d/3d variants of a layer differ only in such constants)."""
    bases = bases if isinstance(bases, tuple) else (bases,)
    return type(name, bases, dict(attrs, __doc__=doc, __module__=module))
