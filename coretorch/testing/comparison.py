"""`assert_close`: torch.testing.assert_close for coretorch tensors, numpy arrays and scalars."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dt
from .torch_arrays import numpy_from_torch
from .trees import is_tensor

__all__ = ["assert_close", "default_tolerances"]

# torch.testing's defaults: (rtol, atol) per dtype; exact for integers and bool
_DEFAULT_TOL = {
    _dt.float16: (1e-3, 1e-5),
    _dt.bfloat16: (1.6e-2, 1e-5),
    _dt.float32: (1.3e-6, 1e-5),
    _dt.float64: (1e-7, 1e-7),
    _dt.complex64: (1.3e-6, 1e-5),
    _dt.complex128: (1e-7, 1e-7),
}


def default_tolerances(*dtypes) -> tuple[float, float]:
    """torch.testing's default (rtol, atol) for comparing values of these dtypes (the loosest)."""
    pairs = [_DEFAULT_TOL.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


class _Value:
    """One side of a comparison: host values (None on shape-only devices) plus metadata."""

    __slots__ = ("array", "shape", "dtype", "device", "kind")

    def __init__(self, array, shape, dtype, device, kind):
        self.array, self.shape, self.dtype = array, shape, dtype
        self.device, self.kind = device, kind


def _is_torch_tensor(x) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach") and hasattr(x, "numpy")


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float, complex, np.generic))


def _value(x) -> _Value:
    if is_tensor(x):
        from ..device import get_device_type

        arr = None
        if get_device_type(x._device).has_data:
            arr = np.asarray(x.detach())
        return _Value(arr, tuple(x._shape), x._dtype, str(x._device), "tensor")
    if isinstance(x, np.ndarray):
        return _Value(x, tuple(x.shape), _dt.from_numpy_dtype(x.dtype), "cpu", "array")
    if _is_torch_tensor(x):
        arr = numpy_from_torch(x)
        return _Value(arr, tuple(arr.shape), _dt.from_numpy_dtype(arr.dtype), "cpu", "array")
    raise TypeError(
        f"assert_close(): expected tensors, numpy arrays, scalars or sequences of "
        f"them, got {type(x).__name__}"
    )


def assert_close(
    actual: Any,
    expected: Any,
    *,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = False,
    check_dtype: bool = True,
    msg: str | Callable[[str], str] | None = None,
) -> None:
    """Assert that `actual` and `expected` are close, as ``torch.testing.assert_close``.

    Accepts coretorch tensors, numpy arrays, torch tensors, Python/numpy scalars and (nested)
    sequences or mappings of them. Values match when ``|actual - expected| <= atol + rtol *
    |expected|`` (exactly for integers and bool); the default tolerances are torch's per dtype
    (the looser of the two dtypes). Shapes must match, and dtypes too with `check_dtype`.
    Shape-only (meta) tensors compare metadata only. `msg` replaces the message, or (a callable)
    receives the generated one and returns the message to raise.
    """
    if (rtol is None) != (atol is None):
        missing = "atol" if atol is None else "rtol"
        raise ValueError(
            f"assert_close(): Both 'rtol' and 'atol' must be either specified or "
            f"omitted, but got no {missing}."
        )
    _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, ())


def _fail(message: str, msg, path: tuple) -> None:
    if path:
        message += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    if callable(msg):
        message = msg(message)
    elif msg is not None:
        message = msg
    raise AssertionError(message)


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path) -> None:
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)):
        if len(actual) != len(expected):
            _fail(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", msg, path
            )
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, rtol, atol, equal_nan, check_dtype, msg, path + (i,))
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            _fail(
                f"The keys of the mappings do not match: {sorted(map(str, actual))} != "
                f"{sorted(map(str, expected))}",
                msg,
                path,
            )
        for k in actual:
            _compare(actual[k], expected[k], rtol, atol, equal_nan, check_dtype, msg, path + (k,))
        return
    if _is_scalar(actual) and _is_scalar(expected):
        _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path)
        return
    if _is_scalar(actual) or _is_scalar(expected) or actual is None or expected is None:
        if actual is None and expected is None:
            return
        _fail(
            f"assert_close(): can't compare {type(actual).__name__} with "
            f"{type(expected).__name__}: both must be tensor-likes, both scalars or both "
            f"sequences",
            msg,
            path,
        )
    a, e = _value(actual), _value(expected)
    if a.shape != e.shape:
        _fail(
            f"The values for attribute 'shape' do not match: {_size(a.shape)} != {_size(e.shape)}.",
            msg,
            path,
        )
    if a.kind == e.kind == "tensor" and a.device != e.device:
        _fail(
            f"The values for attribute 'device' do not match: {a.device} != {e.device}.", msg, path
        )
    if check_dtype and a.dtype is not e.dtype:
        _fail(
            f"The values for attribute 'dtype' do not match: coretorch.{a.dtype.name} != "
            f"coretorch.{e.dtype.name}.",
            msg,
            path,
        )
    if a.array is None or e.array is None:
        return  # shape-only device: metadata was all there is to compare
    if rtol is None:
        rtol, atol = default_tolerances(a.dtype, e.dtype)
    message = _mismatch_message(a.array, e.array, a.dtype, e.dtype, rtol, atol, equal_nan)
    if message:
        _fail(message, msg, path)


def _size(shape: tuple) -> str:
    return f"coretorch.Size({list(shape)})"


def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype, msg, path) -> None:
    if check_dtype and type(actual) is not type(expected):
        _fail(
            f"The values for attribute 'type' do not match: {type(actual).__name__} != "
            f"{type(expected).__name__}.",
            msg,
            path,
        )
    if rtol is None:
        rtol, atol = default_tolerances(_scalar_dtype(actual), _scalar_dtype(expected))
    a, e = actual, expected
    if isinstance(a, (bool, np.bool_)) or isinstance(e, (bool, np.bool_)):
        ok = bool(a) == bool(e)
    elif isinstance(a, (complex, np.complexfloating)) or isinstance(
        e, (complex, np.complexfloating)
    ):
        ok = bool(np.isclose(complex(a), complex(e), rtol=rtol, atol=atol, equal_nan=equal_nan))
    else:
        af, ef = float(a), float(e)
        if math.isnan(af) or math.isnan(ef):
            ok = equal_nan and math.isnan(af) and math.isnan(ef)
        elif math.isinf(af) or math.isinf(ef):
            ok = af == ef
        else:
            ok = abs(af - ef) <= atol + rtol * abs(ef)
    if ok:
        return
    if rtol == 0 and atol == 0:
        _fail(
            f"Scalars are not equal!\n\nExpected {expected} but got {actual}.\n"
            f"Absolute difference: {_diff(a, e)}",
            msg,
            path,
        )
    ad = _diff(a, e)
    rd = ad / abs(float(e)) if isinstance(ad, float) and float(e) != 0 else math.inf
    _fail(
        f"Scalars are not close!\n\nExpected {expected} but got {actual}.\n"
        f"Absolute difference: {ad} (up to {atol} allowed)\n"
        f"Relative difference: {rd} (up to {rtol} allowed)",
        msg,
        path,
    )


def _scalar_dtype(x):
    if isinstance(x, np.generic):
        return _dt.from_numpy_dtype(x.dtype)
    return _dt.bool if isinstance(x, bool) else (_dt.int64 if isinstance(x, int) else _dt.float64)


def _diff(a, e):
    try:
        return abs(float(a) - float(e))
    except (TypeError, ValueError):
        return math.nan


def _mismatch_message(a: np.ndarray, e: np.ndarray, adt, edt, rtol, atol, equal_nan) -> str:
    """'' when close, else torch's message: mismatched count, greatest differences and where."""
    cplx = adt.is_complex or edt.is_complex  # compared by |actual - expected|, as torch
    exact = not (adt.is_floating_point or edt.is_floating_point or cplx)
    if a.dtype == np.bool_ or e.dtype == np.bool_:
        a, e = a.astype(np.int64), e.astype(np.int64)
    if exact:
        a64, e64 = a.astype(np.int64), e.astype(np.int64)
        close = a64 == e64
        if close.all():
            return ""
        diff = np.abs(a64 - e64).astype(np.float64)
        rel = diff / np.where(e64 == 0, 1, np.abs(e64))
        rel = np.where(e64 == 0, np.where(diff == 0, 0.0, np.inf), rel)
        equal = True
    else:
        wide = np.complex128 if cplx else np.float64
        a64, e64 = a.astype(wide), e.astype(wide)
        with np.errstate(all="ignore"):
            close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
            if close.all():
                return ""
            diff = np.abs(a64 - e64)
            both_nan = np.isnan(a64) & np.isnan(e64)
            diff = np.where(both_nan & equal_nan, 0.0, np.where(np.isnan(diff), np.inf, diff))
            same_inf = np.isinf(a64) & (a64 == e64)
            diff = np.where(same_inf, 0.0, diff)
            rel = np.where(diff == 0, 0.0, diff / np.abs(e64))
            rel = np.where(np.isnan(rel), np.inf, rel)
        equal = rtol == 0 and atol == 0
    n_bad, total = int((~close).sum()), close.size
    # argmax/unravel_index of a 0-d array give index (), which indexes it too
    where_abs = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), diff.shape))
    where_rel = tuple(int(i) for i in np.unravel_index(int(np.argmax(rel)), rel.shape))
    what = "equal" if equal else "close"
    lines = [
        f"Tensor-likes are not {what}!",
        "",
        f"Mismatched elements: {n_bad} / {total} ({100.0 * n_bad / total:.1f}%)",
    ]
    at_a = f" at index {where_abs}" if diff.ndim else ""
    at_r = f" at index {where_rel}" if rel.ndim else ""
    if diff.ndim:
        first = tuple(int(i) for i in np.argwhere(~close)[0])
        lines.append(f"First mismatch at index {first}: actual {a[first]!r}, expected {e[first]!r}")
    allowed_a, allowed_r = (
        ("", "") if equal else (f" (up to {atol} allowed)", f" (up to {rtol} allowed)")
    )
    lines.append(f"Greatest absolute difference: {_num(diff[where_abs])}{at_a}{allowed_a}")
    lines.append(f"Greatest relative difference: {_num(rel[where_rel])}{at_r}{allowed_r}")
    return "\n".join(lines)


def _num(x):
    x = float(x)
    return int(x) if x.is_integer() else x
