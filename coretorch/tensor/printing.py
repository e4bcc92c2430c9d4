"""`repr(tensor)` in PyTorch's format: ``tensor([[1., 2.]], dtype=coretorch.float64)``; meta
tensors print ``tensor(..., device='meta', size=(2, 3))``."""
from __future__ import annotations

import numpy as np

from .. import dtypes as dt

_EDGE = 3          # items shown at each edge of a summarized dim
_THRESHOLD = 1000  # summarize above this many elements
_LINEWIDTH = 80


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.4f}"
    absf = np.abs(finite.astype(np.float64))
    if np.all(finite == np.round(finite)):
        mx = absf.max()
        if mx < 1e8:
            width = len(f"{mx:.0f}") + 1
            return lambda v: _special(v) or f"{v:.0f}."
        return lambda v: _special(v) or f"{v:.4e}"
    nonzero = absf[absf > 0]
    mx, mn = absf.max(), (nonzero.min() if nonzero.size else 0.0)
    if mx >= 1e8 or (mn and (mn < 1e-4 or mx / mn > 1000.0)):
        return lambda v: _special(v) or f"{v:.4e}"
    return lambda v: _special(v) or f"{v:.4f}"


def _special(v) -> str:
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return ""


def _format_values(arr: np.ndarray, dtype, indent: int) -> str:
    summarize = arr.size > _THRESHOLD
    if dtype is dt.bool:
        fmt = lambda v: "True" if v else "False"  # noqa: E731
    elif dtype.is_floating_point:
        fmt = _float_formatter(arr.astype(np.float64).ravel())
    else:
        fmt = str
    flat = _edges(arr, summarize) if summarize else arr.ravel()
    width = max((len(fmt(v)) for v in flat.astype(object).ravel()), default=1)

    def rec(a: np.ndarray, ind: int) -> str:
        if a.ndim == 0:
            return fmt(a.item()).rjust(width)
        if a.ndim == 1:
            items = [fmt(v).rjust(width) for v in _seq(a, summarize)]
            per_line = max(1, (_LINEWIDTH - ind) // (width + 2))
            lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
            return "[" + (",\n" + " " * (ind + 1)).join(lines) + "]"
        parts = [rec(sub, ind + 1) if sub is not None else "..." for sub in _rows(a, summarize)]
        sep = "," + "\n" * (a.ndim - 1) + " " * (ind + 1)
        return "[" + sep.join(parts) + "]"

    return rec(arr, indent)


def _seq(a, summarize):
    if summarize and a.shape[0] > 2 * _EDGE:
        return [*a[:_EDGE].tolist(), "...", *a[-_EDGE:].tolist()]
    return a.tolist()


def _rows(a, summarize):
    if summarize and a.shape[0] > 2 * _EDGE:
        return [*a[:_EDGE], None, *a[-_EDGE:]]
    return list(a)


def _edges(arr, summarize):
    return arr.ravel()[:2 * _EDGE] if arr.size else arr.ravel()


def tensor_repr(t) -> str:
    prefix = "tensor("
    suffixes = []
    dev = t._device
    if dev.type != "cpu":
        suffixes.append(f"device='{dev}'")
    default_dtype = t._dtype in (dt.get_default_dtype(), dt.int64, dt.bool)
    if dev.type == "meta" or not _has_data(t):
        body = "..."
        suffixes.insert(1 if dev.type != "cpu" else 0, f"size={tuple(t._shape)}")
    else:
        arr = np.asarray(t.detach().numpy(force=True))
        if arr.size == 0:
            body = "[]"
            if t._shape != (0,):
                suffixes.insert(1 if dev.type != "cpu" else 0, f"size={tuple(t._shape)}")
        else:
            body = _format_values(arr, t._dtype, len(prefix))
    if not default_dtype or (t._dtype is dt.int64 and False):
        suffixes.append(f"dtype=coretorch.{t._dtype.name}")
    m = t._autograd
    if m is not None and m.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(m.grad_fn).__name__}>")
    elif m is not None and m.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body] + suffixes) + ")"


def _has_data(t) -> bool:
    from ..device import device_types
    entry = device_types().get(t._device.type)
    return entry is not None and entry.has_data
