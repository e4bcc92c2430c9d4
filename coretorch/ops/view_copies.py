"""The ``*_copy`` ops (``view_copy``, ``transpose_copy``, ``narrow_copy``, ...): each view op's
result as a new contiguous tensor instead of a view. One composite per view, with the view's
schema (no aliasing) and meta rule, differentiated through the view and clone."""

from __future__ import annotations

from ..memory_formats import contiguous_format
from . import views as _views  # noqa: F401  (declares the views first)
from .declare import IMPLICIT, REGISTRY, declare

# the views PyTorch has a ``<name>_copy`` of
COPIED_VIEWS = (
    "view",
    "as_strided",
    "transpose",
    "t",
    "permute",
    "expand",
    "squeeze",
    "unsqueeze",
    "narrow",
    "select",
    "diagonal",
    "unfold",
    "alias",
    "unbind",
)


def _copy_of(view):
    """The impl and meta rule of ``<view>_copy``."""
    entry, meta = view.op.entry, view.meta
    several = view.schema.returns[0].type.is_list
    names = view.schema.names[1:]

    def impl(*record):
        # by keyword: a lone positional int list would be read as varargs sizes
        out = entry(record[0], **dict(zip(names, record[1:])))
        if several:
            return tuple(t.clone(memory_format=contiguous_format) for t in out)
        return out.clone(memory_format=contiguous_format)

    def copy_meta(*record):
        spec = meta(*record)
        return spec[0] if view.precomputed else spec

    impl.__name__ = f"{view.name}_copy"
    impl.__doc__ = f"``{view.name}`` as a new contiguous tensor rather than a view."
    return impl, copy_meta


def _declare_all() -> None:
    for name in COPIED_VIEWS:
        view = REGISTRY[name]
        schema = str(view.schema).replace("(a)", "").replace(f"{name}(", f"{name}_copy(", 1)
        impl, meta = _copy_of(view)
        declare(schema, meta, impl=impl, kind=IMPLICIT, family="view", out=False, method=False)


_declare_all()
