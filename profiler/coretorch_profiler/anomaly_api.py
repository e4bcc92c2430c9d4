"""What ``coretorch.autograd`` serves under PyTorch's anomaly-mode names: `detect_anomaly`,
`set_detect_anomaly`, `is_anomaly_enabled`, `is_anomaly_check_nan_enabled`.

PyTorch's anomaly mode looks for NaN (not Inf) produced in backward; here the same switch runs
this package's detector with ``check_inf=False``, which also checks forward ops and names the op
and source line that made the value. Its `AnomalyError` is a RuntimeError, the type PyTorch
raises.
"""

from __future__ import annotations

import functools
from typing import Callable

from .anomaly import detect_anomaly as _Detector

__all__ = [
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]

_running: list[_Detector] = []  # the detector the switches started (at most one)


def _mode() -> tuple[bool, bool]:
    """(enabled, check_nan) now."""
    return (True, _running[0].check_nan) if _running else (False, True)


def _set(mode: bool, check_nan: bool) -> None:
    if _running and (not mode or _running[0].check_nan != check_nan):
        _running.pop().__exit__(None, None, None)
    if mode and not _running:
        det = _Detector(check_nan=check_nan, check_inf=False)
        det.__enter__()
        _running.append(det)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (`detect_anomaly` or `set_detect_anomaly(True)`)."""
    return _mode()[0]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether the active anomaly detection checks for NaN."""
    return _mode() == (True, True)


class set_detect_anomaly:
    """Turn anomaly detection on or off: ``set_detect_anomaly(True)`` for the rest of the
    program, or ``with set_detect_anomaly(False):`` for a block (the previous mode comes back
    on exit)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = _mode()
        _set(bool(mode), check_nan)

    def __enter__(self) -> "set_detect_anomaly":
        return self

    def __exit__(self, *exc) -> None:
        _set(*self._prev)


class detect_anomaly:
    """``with detect_anomaly():`` (or as a decorator): anomaly detection on for the block."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        self._prev = (False, True)

    def __enter__(self) -> "detect_anomaly":
        self._prev = _mode()
        _set(True, self.check_nan)
        return self

    def __exit__(self, *exc) -> None:
        _set(*self._prev)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with detect_anomaly(self.check_nan):
                return fn(*a, **k)

        return wrapper
