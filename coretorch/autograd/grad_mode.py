"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Grad mode is the `Autograd` dispatch key in the thread-local exclude set: turning grad off
excludes the key, so ops skip the autograd kernel entirely. Each mode is a context manager and a
decorator, and is thread-local (a new thread starts with grad enabled).
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

from ..dispatch.keys import AUTOGRAD_BIT
from ..dispatch.tls import local_keys

__all__ = [
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
]


class _InferenceState(threading.local):
    enabled = False


_inference = _InferenceState()


def is_grad_enabled() -> bool:
    """Whether autograd records operations in this thread."""
    return not local_keys.exclude & AUTOGRAD_BIT


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()`."""
    return _inference.enabled


def _set_enabled(flag: bool) -> None:
    lk = local_keys
    lk.exclude = (lk.exclude & ~AUTOGRAD_BIT) if flag else (lk.exclude | AUTOGRAD_BIT)


class _DecoratorContextManager:
    """Base of the grad modes: ``with mode():`` or ``@mode()`` (and ``@mode`` without call)."""

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> "_DecoratorContextManager":
        return self.__class__()

    # each grad mode defines what entering and leaving it does
    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: Any) -> None:
        raise NotImplementedError

    def __new__(cls, orig_func: Callable | None = None, *args, **kwargs):
        # `@no_grad` without parentheses: decorate directly
        if issubclass(cls, _GradSwitch) and orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)


class _GradSwitch(_DecoratorContextManager):
    """Sets grad mode to `_enabled` for the block; the previous mode comes back on exit."""

    _enabled = False

    def __init__(self, orig_func: Callable | None = None) -> None:
        self.prev = 0

    def __enter__(self) -> None:
        self.prev = local_keys.exclude
        _set_enabled(self._enabled)

    def __exit__(self, *exc: Any) -> None:
        local_keys.exclude = self.prev


class no_grad(_GradSwitch):
    """Disable gradient recording in this thread (``with coretorch.no_grad():``).

    Also a decorator: ``@coretorch.no_grad()`` runs the function without recording.

    Examples:
        >>> import coretorch
        >>> x = coretorch.tensor([1., 2.], requires_grad=True)
        >>> with coretorch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
        >>> @coretorch.no_grad()
        ... def double(t):
        ...     return t * 2
        >>> double(x).requires_grad, (x * 2).requires_grad
        (False, True)
    """

    _enabled = False


class enable_grad(_GradSwitch):
    """Enable gradient recording inside a `no_grad` region."""

    _enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode to `mode`: as a function call it takes effect at once; as a context manager
    or decorator the previous mode comes back on exit.

    Raises:
        TypeError: when `mode` is not a bool.

    Examples:
        >>> import coretorch
        >>> x = coretorch.ones(2, requires_grad=True)
        >>> with coretorch.set_grad_enabled(False):
        ...     (x * 2).requires_grad
        False
        >>> coretorch.is_grad_enabled()
        True
        >>> coretorch.set_grad_enabled(1)
        Traceback (most recent call last):
            ...
        TypeError: set_grad_enabled(): argument 'mode' must be bool, not int
    """

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(
                f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}"
            )
        self.prev = is_grad_enabled()
        self.mode = mode
        _set_enabled(mode)

    def __call__(self, fn: Callable) -> Callable:
        _set_enabled(self.prev)  # as a decorator, the mode applies only inside `fn`
        return super().__call__(fn)

    def clone(self) -> "set_grad_enabled":
        """A new context manager with the same mode (used when it decorates a function)."""
        return set_grad_enabled(self.mode)

    def __enter__(self) -> None:
        _set_enabled(self.mode)

    def __exit__(self, *exc: Any) -> None:
        _set_enabled(self.prev)


class inference_mode(_DecoratorContextManager):
    """Like `no_grad`, for code that never needs gradients (``inference_mode(mode=True)``)."""

    def __new__(cls, mode: Any = True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode) if isinstance(mode, bool) else True
        self.prev_keys = 0
        self.prev_flag = False

    def clone(self) -> "inference_mode":
        """A new context manager with the same mode (used when it decorates a function)."""
        return inference_mode(self.mode)

    def __enter__(self) -> None:
        self.prev_keys, self.prev_flag = local_keys.exclude, _inference.enabled
        if self.mode:
            local_keys.exclude = self.prev_keys | AUTOGRAD_BIT
        _inference.enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        local_keys.exclude = self.prev_keys
        _inference.enabled = self.prev_flag
