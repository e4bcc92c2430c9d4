"""`detect_anomaly`: find the op (forward) or autograd node (backward) that first produced NaN/Inf.

Forward: after every op, its floating outputs are checked; the first op whose output turned
non-finite while its inputs were finite is reported with the user's source line, the input
shapes/dtypes and how many values are bad. Backward: the engine runs each node inside a
BACKWARD_FUNCTION RecordFunction whose `outputs` are the gradients the node returned and whose
`seq_nr` is its forward op's sequence number; a bad gradient is reported PyTorch's way
("Function 'LogBackward0' returned nan values in its 0th output.") and the exception carries the
forward op's creation site, recorded per sequence number during the forward pass.
"""
from __future__ import annotations

import functools
import itertools
import math
import threading
import warnings
import weakref
from typing import Any, Callable

import numpy as np

from coretorch import record_function as _rf
from coretorch.device import device_types
from coretorch.dispatch.operator import get_operator
from coretorch.tensor.impl import TensorImpl

from ._frames import describe, user_frame
from .collector import inputs_meta, plain_shapes

__all__ = ["detect_anomaly", "AnomalyError", "AnomalyWarning"]

_Impl = TensorImpl
_MAX_SITES = 1 << 19
# factories whose outputs are uninitialized memory: garbage values there are not anomalies
_UNINITIALIZED = frozenset({"aten::empty", "aten::empty_like", "aten::empty_strided",
                            "aten::new_empty", "aten::new_empty_strided"})


class AnomalyError(RuntimeError):
    """Raised by `detect_anomaly(action="raise")`. Besides the message it carries:
    `phase` ("forward"/"backward"), `op` (op or node name), `output_index`, `nan_count`,
    `inf_count`, `numel`, and the creation site: `forward_op` (the op that ran forward), `filename`,
    `lineno`, `function`, `code` (the source line), `input_shapes`, `input_dtypes`."""

    def __init__(self, message: str, info: dict[str, Any]):
        super().__init__(message)
        self.info = info
        for k, v in info.items():
            setattr(self, k, v)


class AnomalyWarning(RuntimeWarning):
    """Issued by `detect_anomaly(action="warn")`."""


class _Local(threading.local):
    def __init__(self) -> None:
        self.backward_depth = 0
        self.backward_names: list[str] = []


_readers: dict[str, Callable | None] = {}
_skip: dict[str, bool] = {}


def _skips_check(name: str) -> bool:
    """Ops whose outputs need no check: uninitialized factories (garbage is no anomaly), views
    (the values are their input's) and implicit composites (the ops they ran were checked)."""
    r = _skip.get(name)
    if r is None:
        try:
            decl = get_operator(name).decl
        except RuntimeError:
            decl = None
        r = _skip[name] = name in _UNINITIALIZED or (decl is not None and (
            decl.kind == "composite_implicit" or decl.family == "view"))
    return r


def _reader(dev_type: str):
    r = _readers.get(dev_type, False)
    if r is False:
        entry = device_types().get(dev_type)
        r = _readers[dev_type] = (entry.read_numpy if entry is not None and entry.has_data
                                  else None)
    return r


_DOT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _surely_finite(a: np.ndarray) -> bool:
    """Whether every value of `a` is finite. Large contiguous float32/64 arrays use the sum of
    squares (one threaded BLAS pass, no temporary): a NaN or Inf anywhere makes it non-finite,
    and when it is non-finite only through overflow the exact check below runs anyway."""
    if a.size >= _MEMO_MIN_NUMEL and a.dtype in _DOT_DTYPES and a.flags.c_contiguous:
        flat = a.reshape(-1)
        with np.errstate(all="ignore"):
            if np.isfinite(np.dot(flat, flat)):
                return True
    return bool(np.isfinite(a).all())  # one pass, no floating-point warnings


def _bad_counts(t) -> tuple[int, int, int] | None:
    """(nan, inf, numel) of a floating tensor with data whose values are not all finite."""
    if not t._dtype.is_floating_point:
        return None
    read = _reader(t._device.type)
    if read is None:
        return None
    a = read(t)
    if _surely_finite(a):
        return None
    nan, inf = int(np.isnan(a).sum()), int(np.isinf(a).sum())
    if nan or inf:
        return nan, inf, a.size
    return None


# below this many elements a check costs less than remembering its result
_MEMO_MIN_NUMEL = 1 << 12
_MEMO_MAX = 1 << 12


class _FiniteMemo:
    """Large tensors already found all-finite, by version: an optimizer's in-place updates and
    the next ops re-read the same big parameters, gradients and buffers, whose values cannot
    change without their version counter moving (writes through a shared numpy array are the
    exception, as for autograd's own checks)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[weakref.ref, int]] = {}

    def known(self, t) -> bool:
        e = self._seen.get(id(t))
        return e is not None and e[0]() is t and e[1] == t._vc[0]

    def add(self, t) -> None:
        if t.numel() >= _MEMO_MIN_NUMEL:
            if len(self._seen) >= _MEMO_MAX:
                self._seen.clear()
            self._seen[id(t)] = (weakref.ref(t), t._vc[0])

    def bad_counts(self, t) -> tuple[int, int, int] | None:
        """`_bad_counts`, skipping (and then remembering) tensors known to be finite."""
        if self.known(t):
            return None
        c = _bad_counts(t)
        if c is None:
            self.add(t)
        return c


def _tensors(x) -> list:
    if isinstance(x, _Impl):
        return [x]
    if isinstance(x, (tuple, list)):
        return [t if isinstance(t, _Impl) else None for t in x]
    return []


def _all_finite(args, kwargs, check_nan: bool, check_inf: bool, memo: _FiniteMemo) -> bool:
    """Whether the op's inputs hold no checked bad value (an out= tensor is not an input)."""
    if kwargs:
        args = (*args, *(v for k, v in kwargs.items() if k != "out"))
    for a in args:
        for t in (_tensors(a) if not isinstance(a, float) else ()):
            if t is None:
                continue
            c = memo.bad_counts(t)
            if c is not None and ((check_nan and c[0]) or (check_inf and c[1])):
                return False
        if isinstance(a, float) and ((check_nan and math.isnan(a)) or
                                     (check_inf and math.isinf(a))):
            return False
    return True


class detect_anomaly:
    """Context manager (or decorator) that checks every op's outputs, forward and backward, for
    NaN (`check_nan`) and Inf (`check_inf`) and raises `AnomalyError` (``action="raise"``) or
    warns `AnomalyWarning` (``action="warn"``) at the first op that produced them."""

    def __init__(self, check_nan: bool = True, check_inf: bool = True, action: str = "raise"):
        if action not in ("raise", "warn"):
            raise ValueError(f"detect_anomaly(): expected action to be 'raise' or 'warn', got "
                             f"{action!r}")
        self.check_nan, self.check_inf, self.action = bool(check_nan), bool(check_inf), action
        self._handles: list[int] = []
        self._local = _Local()
        self._sites: dict[tuple[int, int], tuple] = {}
        self._memo = _FiniteMemo()

    def __enter__(self) -> "detect_anomaly":
        if self._handles:
            raise RuntimeError("detect_anomaly(): this detector is already active")
        F, B = _rf.RecordScope.FUNCTION, _rf.RecordScope.BACKWARD_FUNCTION
        self._handles = [_rf.add_global_callback(self._fwd_start, self._fwd_end, scopes=(F,)),
                         _rf.add_global_callback(self._bwd_start, self._bwd_end, scopes=(B,))]
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            _rf.remove_callback(h)
        self._handles = []
        self._sites.clear()
        self._memo = _FiniteMemo()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan, self.check_inf, self.action):
                return fn(*a, **k)
        return wrapper

    # ---- forward ----
    def _fwd_start(self, rf) -> bool | None:
        # an in-place or out= op overwrites an input: judge its inputs before it runs
        if rf.name[-1] == "_" or (rf.kwargs and "out" in rf.kwargs):
            return _all_finite(rf.args, rf.kwargs, self.check_nan, self.check_inf, self._memo)
        return None

    def _fwd_end(self, rf, inputs_finite) -> None:
        if rf.seq_nr >= 0:
            self._record_site(rf)
        if self._local.backward_depth or rf.outputs is None or _skips_check(rf.name):
            return  # inside backward, the node's gradients are judged as a whole
        bad = self._first_bad(rf.outputs)
        if bad is None:
            return
        if inputs_finite is None:
            inputs_finite = _all_finite(rf.args, rf.kwargs, self.check_nan, self.check_inf,
                                        self._memo)
        if inputs_finite:  # else it only passed bad values along; their maker was reported
            self._report_forward(rf, *bad)

    def _first_bad(self, outputs) -> tuple[int, int, int, int] | None:
        """(index, nan, inf, numel) of the first output holding a checked bad value."""
        for i, t in enumerate(_tensors(outputs)):
            if t is None:
                continue
            c = self._memo.bad_counts(t)
            if c is None:
                continue
            nan, inf, n = c
            if (self.check_nan and nan) or (self.check_inf and inf):
                return i, nan, inf, n
        return None

    def _record_site(self, rf) -> None:
        sites = self._sites
        if len(sites) >= _MAX_SITES:
            for k in list(itertools.islice(sites, _MAX_SITES // 2)):
                del sites[k]
        bwd = self._local.backward_names
        sites[(rf.thread_id, rf.seq_nr)] = (rf.name, user_frame(), inputs_meta(rf.args, rf.kwargs),
                                            bwd[-1] if bwd else None)

    def _report_forward(self, rf, i: int, nan: int, inf: int, n: int) -> None:
        shapes, dtypes = inputs_meta(rf.args, rf.kwargs)
        site = user_frame()
        info = _site_info(site, rf.name, shapes, dtypes)
        info.update(phase="forward", op=rf.name, output_index=i, nan_count=nan,
                    inf_count=inf, numel=n)
        what = _what(nan, inf, self.check_nan, self.check_inf)
        msg = (f"Anomaly detected: {rf.name} returned {what} values in its {i}th output from "
               f"finite inputs ({_counts(nan, inf, n, self.check_nan, self.check_inf)})."
               f"{_site_text(info)}")
        self._act(msg, info)

    # ---- backward ----
    def _bwd_start(self, rf) -> None:
        loc = self._local
        loc.backward_depth += 1
        loc.backward_names.append(_node_name(rf))

    def _bwd_end(self, rf, _state) -> None:
        loc = self._local
        loc.backward_depth -= 1
        name = loc.backward_names.pop()
        bad = self._first_bad(rf.outputs)
        if bad is not None:
            self._report_backward(rf, name, *bad)

    def _report_backward(self, rf, name: str, i: int, nan: int, inf: int, n: int) -> None:
        what = "nan" if (self.check_nan and nan) else "inf"
        created = self._sites.get((rf.fwd_thread_id, rf.seq_nr))
        if created is not None:
            fwd_op, site, (shapes, dtypes), during = created
            info = _site_info(site, fwd_op, shapes, dtypes)
            where = (f"\nThe node was created by {fwd_op} in the forward pass"
                     + (f" (run while computing the backward of {during})" if during else "")
                     + f":{_site_text(info)}")
        else:
            info = _site_info(None, None, None, None)
            where = ("\nIts forward op ran before detect_anomaly() was entered, so its creation "
                     "site is unknown: run the forward pass inside detect_anomaly() too.")
        info.update(phase="backward", op=name, output_index=i, nan_count=nan, inf_count=inf,
                    numel=n)
        msg = (f"Function '{name}' returned {what} values in its {i}th output. "
               f"({_counts(nan, inf, n, self.check_nan, self.check_inf)}){where}")
        self._act(msg, info)

    def _act(self, msg: str, info: dict) -> None:
        if self.action == "raise":
            raise AnomalyError(msg, info)
        if info.get("filename"):
            warnings.warn_explicit(msg, AnomalyWarning, info["filename"], info["lineno"] or 0)
        else:
            warnings.warn(msg, AnomalyWarning, stacklevel=2)


def _node_name(rf) -> str:
    node = rf.extra.get("node") if rf.extra else None
    if node is not None:
        n = getattr(node, "name", None)
        if callable(n):
            return n()
        return type(node).__name__
    return rf.name.rsplit(": ", 1)[-1]


def _what(nan: int, inf: int, check_nan: bool, check_inf: bool) -> str:
    kinds = [k for k, c, on in (("nan", nan, check_nan), ("inf", inf, check_inf)) if c and on]
    return " and ".join(kinds)


def _counts(nan: int, inf: int, n: int, check_nan: bool, check_inf: bool) -> str:
    parts = []
    if check_nan:
        parts.append(f"{nan} nan")
    if check_inf:
        parts.append(f"{inf} inf")
    return f"{' and '.join(parts)} of {n} values"


def _site_info(site, op, shapes, dtypes) -> dict[str, Any]:
    if site is None:
        filename = function = code = None
        lineno = None
    else:
        filename, lineno, function, code = describe(site)
    return {"forward_op": op, "filename": filename, "lineno": lineno, "function": function,
            "code": code, "input_shapes": None if shapes is None else plain_shapes(shapes),
            "input_dtypes": dtypes}


def _site_text(info: dict) -> str:
    loc = (f"\n  at {info['filename']}:{info['lineno']} (in {info['function']})\n"
           f"    {info['code']}" if info.get("filename") else "\n  (no user source line found)")
    return (f"{loc}\n  inputs: shapes {info['input_shapes']}, dtypes {info['input_dtypes']}")
