"""Memory formats: ``coretorch.contiguous_format``, ``channels_last``, ``channels_last_3d`` and
``preserve_format``.

A memory format is an order of the dimensions in memory; a tensor in it keeps its logical shape
(``N, C, H, W``) and only its strides change: channels_last is NCHW with the strides of an NHWC
buffer, a stride permutation every kernel already handles because kernels read and write through
strides. ``preserve_format`` (the default of ``clone``, ``to`` and the ``*_like`` factories)
keeps the format the source tensor is in (PyTorch's ``suggest_memory_format``).
"""

from __future__ import annotations

__all__ = [
    "memory_format",
    "contiguous_format",
    "channels_last",
    "channels_last_3d",
    "preserve_format",
    "memory_format_arg",
    "check_memory_format",
    "dim_order",
    "format_strides",
    "is_contiguous_as",
    "suggest_format",
    "restride",
]


class memory_format:
    """One memory format (compare with ``is``; ``coretorch.channels_last`` ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"coretorch.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
_FORMATS = {
    f.name: f for f in (contiguous_format, channels_last, channels_last_3d, preserve_format)
}
# the rank each channels-last format needs, and its dimension order (outermost first)
_RANK = {channels_last: 4, channels_last_3d: 5}


def _by_name(name: str) -> memory_format:
    return _FORMATS[name]


def memory_format_arg(op: str, value, default: memory_format = preserve_format) -> memory_format:
    """A ``MemoryFormat?`` argument as a format: None is `default`; the schema's default text
    (``contiguous_format``) is read by name; anything else is PyTorch's TypeError."""
    if value is None:
        return default
    if value.__class__ is memory_format:
        return value
    if isinstance(value, str) and value in _FORMATS:
        return _FORMATS[value]
    raise TypeError(
        f"{op}(): argument 'memory_format' must be torch.memory_format, not {type(value).__name__}"
    )


def dim_order(op: str, fmt: memory_format, ndim: int) -> tuple:
    """The dimensions from outermost to innermost in memory for `fmt` (contiguous: in order;
    channels_last: ``N, H, W, C``). Refuses a channels-last format of the wrong rank."""
    rank = _RANK.get(fmt)
    if rank is None:
        return tuple(range(ndim))
    if ndim != rank:
        raise RuntimeError(
            f"{op}(): required rank {rank} tensor to use {fmt.name} format, got rank {ndim}"
        )
    return (0, *range(2, ndim), 1)


def check_memory_format(op: str, ndim: int, value) -> memory_format:
    """The meta rules' check: `value` is a memory format (or None), and a channels-last one
    fits a tensor of `ndim` dimensions."""
    fmt = memory_format_arg(op, value)
    if fmt is not preserve_format:
        dim_order(op, fmt, ndim)
    return fmt


def format_strides(shape: tuple, order: tuple) -> tuple:
    """The strides of a dense tensor of `shape` whose dims lie in memory in `order`."""
    stride = [0] * len(shape)
    step = 1
    for d in reversed(order):
        stride[d] = step
        step *= max(shape[d], 1)
    return tuple(stride)


def is_contiguous_as(shape: tuple, stride: tuple, fmt: memory_format) -> bool:
    """Whether a tensor with `shape`/`stride` is dense in `fmt`'s order (size-1 dims ignored,
    as PyTorch does)."""
    rank = _RANK.get(fmt)
    if rank is not None and len(shape) != rank:
        return False
    if 0 in shape:
        return True
    expected = 1
    for d in reversed(dim_order("is_contiguous", fmt, len(shape))):
        if shape[d] != 1:
            if stride[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest_format(shape: tuple, stride: tuple) -> memory_format:
    """The format a tensor is in: channels-last when it is dense that way and not plain
    contiguous, else contiguous (what ``preserve_format`` keeps)."""
    if len(shape) in (4, 5):
        fmt = channels_last if len(shape) == 4 else channels_last_3d
        if is_contiguous_as(shape, stride, fmt) and not is_contiguous_as(
            shape, stride, contiguous_format
        ):
            return fmt
    return contiguous_format


def restride(t, op: str, fmt: memory_format, like=None):
    """Give the freshly allocated dense tensor `t` the strides of `fmt` (``preserve_format``:
    the format `like` is in); `t` is returned."""
    if fmt is preserve_format:
        fmt = contiguous_format if like is None else suggest_format(like._shape, like._stride)
    if fmt is not contiguous_format:
        t._stride = format_strides(t._shape, dim_order(op, fmt, len(t._shape)))
    return t
