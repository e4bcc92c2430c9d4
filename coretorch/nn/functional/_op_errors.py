"""``nn.functional`` errors name the function the user called: an error raised by an op the
function is written with (``mul()``, ``reshape()``, ``mm()`` ...) is re-raised naming the
function, as the core does for composite ops (`coretorch.ops.declare.renamed_error`)."""

from __future__ import annotations

import functools
import types
from typing import Callable

from ...ops.declare import RENAMED_ERRORS, reraise_as

__all__ = ["name_errors", "name_errors_in"]


def name_errors(fn: Callable, module: str) -> Callable:
    """`fn` whose errors name it (the wrapper lives in `module`, so pickling finds it)."""
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except RENAMED_ERRORS as e:
            reraise_as(e, name)

    call.__module__ = module
    return call


def name_errors_in(namespace: dict, names, module: str) -> None:
    """Wrap every Python function of `names` in `namespace` (a module's globals) defined in
    a coretorch.nn.functional module with `name_errors`."""
    for n in names:
        fn = namespace[n]
        if isinstance(fn, types.FunctionType) and fn.__module__.startswith(module):
            namespace[n] = name_errors(fn, module)
