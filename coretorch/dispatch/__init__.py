"""The dispatcher: keys, key sets, thread-local guards and operators."""

from .keys import DispatchKey, DispatchKeySet
from .operator import Operator, all_operators, fallthrough_kernel, get_operator, register_fallback
from .tls import ExcludeDispatchKeyGuard, IncludeDispatchKeyGuard, tls_excluded, tls_included

__all__ = [
    "DispatchKey",
    "DispatchKeySet",
    "Operator",
    "all_operators",
    "fallthrough_kernel",
    "get_operator",
    "register_fallback",
    "ExcludeDispatchKeyGuard",
    "IncludeDispatchKeyGuard",
    "tls_excluded",
    "tls_included",
]
