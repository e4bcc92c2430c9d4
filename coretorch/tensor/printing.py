"""`repr(tensor)` in PyTorch's format: ``tensor([[1., 2.]], dtype=coretorch.float64)``; meta
tensors print ``tensor(..., device='meta', size=(2, 3))``.

Follows PyTorch's print options (`set_printoptions`; by default precision 4, threshold 1000,
edgeitems 3, linewidth 80) and its formatter rules (integer mode, scientific mode, widths from
the finite non-zero values).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as dt

_PRECISION = 4
_EDGE = 3  # items shown at each edge of a summarized dim
_THRESHOLD: float = 1000  # summarize above this many elements (inf: never)
_LINEWIDTH = 80
_SCI_MODE: bool | None = None  # None: chosen from the values
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set how tensors print (PyTorch's options): digits after the point (`precision`), the
    element count above which a print is summarized (`threshold`) and the items shown at each
    end of a summarized dim (`edgeitems`), the line width, and scientific notation forced on
    or off (`sci_mode`; None chooses from the values). `profile` ("default", "short", "full")
    sets the first four at once; the others then override it.

        >>> import coretorch as ct
        >>> ct.set_printoptions(precision=2)
        >>> ct.tensor([1.12345])
        tensor([1.12])
        >>> ct.set_printoptions(profile="default")

    Raises:
        ValueError: an unknown `profile`.
    """
    global _PRECISION, _THRESHOLD, _EDGE, _LINEWIDTH, _SCI_MODE
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(
                f"set_printoptions(): profile must be one of {sorted(_PROFILES)}, got {profile!r}"
            )
        _PRECISION, _THRESHOLD, _EDGE, _LINEWIDTH = _PROFILES[profile]
    if precision is not None:
        _PRECISION = precision
    if threshold is not None:
        _THRESHOLD = threshold
    if edgeitems is not None:
        _EDGE = edgeitems
    if linewidth is not None:
        _LINEWIDTH = linewidth
    _SCI_MODE = sci_mode


class _Formatter:
    """PyTorch's `_Formatter`: one width and one notation for every element of a tensor."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating, self.int_mode, self.sci_mode, self.max_width = floating, True, False, 1
        flat = values.ravel()
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        flat = flat.astype(np.float64)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals)
        mn, mx = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if self.int_mode:
            self.sci_mode = mx / mn > 1000.0 or mx > 1.0e8 if _SCI_MODE is None else _SCI_MODE
            fmt = (lambda v: f"{v:.{_PRECISION}e}") if self.sci_mode else (lambda v: f"{v:.0f}.")
        else:
            self.sci_mode = (
                mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4 if _SCI_MODE is None else _SCI_MODE
            )
            fmt = (
                (lambda v: f"{v:.{_PRECISION}e}")
                if self.sci_mode
                else (lambda v: f"{v:.{_PRECISION}f}")
            )
        for v in vals.tolist():
            self.max_width = max(self.max_width, len(fmt(v)))

    def format(self, value) -> str:
        if not self.floating:
            ret = str(value)
        elif self.sci_mode:
            ret = f"{value:{self.max_width}.{_PRECISION}e}"
        elif self.int_mode:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        else:
            ret = f"{value:.{_PRECISION}f}"
        return " " * (self.max_width - len(ret)) + ret


class _ComplexFormatter:
    """PyTorch's two formatters of a complex tensor: one for the real parts, one for the
    imaginary parts, an element printed as ``real+imagj``."""

    def __init__(self, values: np.ndarray):
        self.real, self.imag = _Formatter(values.real, True), _Formatter(values.imag, True)
        self.max_width = self.real.max_width + self.imag.max_width + 1

    def format(self, value) -> str:
        value = complex(value)
        imag = (self.imag.format(value.imag) + "j").lstrip()
        # a sign of its own (negative numbers, -0.0) replaces the "+"
        return self.real.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (PyTorch's get_summarized_data)."""
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate((a[:_EDGE], a[-_EDGE:])) if a.shape[0] > 2 * _EDGE else a
    rows = (
        list(range(_EDGE)) + list(range(a.shape[0] - _EDGE, a.shape[0]))
        if a.shape[0] > 2 * _EDGE
        else range(a.shape[0])
    )
    return np.stack([_summarized(a[i]) for i in rows])


def _vector_str(
    a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter | _ComplexFormatter
) -> str:
    per_line = max(1, int(math.floor((_LINEWIDTH - indent) / (fmt.max_width + 2))))
    if summarize and a.shape[0] > 2 * _EDGE:
        data = (
            [fmt.format(v) for v in a[:_EDGE].tolist()]
            + [" ..."]
            + [fmt.format(v) for v in a[-_EDGE:].tolist()]
        )
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i : i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _array_str(
    a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter | _ComplexFormatter
) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, fmt)
    if summarize and a.shape[0] > 2 * _EDGE:
        parts = (
            [_array_str(a[i], indent + 1, summarize, fmt) for i in range(_EDGE)]
            + ["..."]
            + [
                _array_str(a[i], indent + 1, summarize, fmt)
                for i in range(a.shape[0] - _EDGE, a.shape[0])
            ]
        )
    else:
        parts = [_array_str(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def _values_str(arr: np.ndarray, dtype, indent: int) -> str:
    if arr.dtype.itemsize == 2 and dtype.is_floating_point:  # float16, bfloat16: print as float32
        arr = arr.astype(np.float32)
    summarize = arr.size > _THRESHOLD
    shown = _summarized(arr) if summarize else arr
    fmt = (
        _ComplexFormatter(shown) if dtype.is_complex else _Formatter(shown, dtype.is_floating_point)
    )
    return _array_str(arr, indent, summarize, fmt)


def _add_suffixes(body: str, suffixes: list[str], indent: int, force_newline: bool = False) -> str:
    parts = [body]
    last_line_len = len(body) - body.rfind("\n") + 1
    for s in suffixes:
        if force_newline or last_line_len + len(s) + 2 > _LINEWIDTH:
            parts.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
            force_newline = False
        else:
            parts.append(", " + s)
            last_line_len += len(s) + 2
    return "".join(parts) + ")"


def tensor_repr(t) -> str:
    """PyTorch's repr of tensor `t`: values, then device, dtype, size and grad suffixes as PyTorch
    shows them."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dev = t._device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    dtype_suffix = f"dtype=coretorch.{t._dtype.name}"
    if not _has_data(t):
        suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype is not dt.get_default_dtype():
            suffixes.append(dtype_suffix)
        body = "..."
    elif t.numel() == 0:
        if len(t._shape) != 1:
            suffixes.append(f"size={tuple(t._shape)}")
        if t._dtype is not dt.get_default_dtype():
            suffixes.append(dtype_suffix)
        body = "[]"
    else:
        if t._dtype not in (
            dt.get_default_dtype(),
            dt.get_default_complex_dtype(),
            dt.int64,
            dt.bool,
        ):
            suffixes.append(dtype_suffix)
        body = _values_str(np.asarray(t.detach().numpy(force=True)), t._dtype, indent)
    _autograd_suffix(t.grad_fn, t.requires_grad, suffixes)
    return _add_suffixes(prefix + body, suffixes, indent)


def _autograd_suffix(grad_fn, requires_grad: bool, suffixes: list[str]) -> None:
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")


def sparse_coo_repr(t) -> str:
    """PyTorch's print of a sparse COO tensor: ``tensor(indices=tensor([[...]]),
    values=tensor([...]), size=(2, 3), nnz=3, layout=coretorch.sparse_coo)``."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    suffixes.append(f"size={tuple(t._shape)}")
    has_data = _has_data(t)
    if has_data:
        suffixes.append(f"nnz={t._nnz()}")
    if t._dtype not in (dt.get_default_dtype(), dt.int64, dt.bool):
        suffixes.append(f"dtype=coretorch.{t._dtype.name}")
    parts = []
    for name, part in (("indices", t._indices()), ("values", t._values())):
        head = f"{name}=tensor("
        if not has_data:
            body = "..."
        elif part.numel() == 0:
            body = "[]"
        else:
            body = _values_str(
                np.asarray(part.detach().numpy(force=True)), part._dtype, indent + len(head)
            )
        if not has_data or part.numel() == 0:
            body += f", size={tuple(part._shape)}"
        parts.append(head + body + ")")
    suffixes.append("layout=coretorch.sparse_coo")
    _autograd_suffix(t.grad_fn, t.requires_grad, suffixes)
    return _add_suffixes(
        prefix + (",\n" + " " * indent).join(parts), suffixes, indent, force_newline=True
    )


def _has_data(t) -> bool:
    from ..device import device_types

    entry = device_types().get(t._device.type)
    return entry is not None and entry.has_data
