"""`autocast`: regions where ops run in lower precision per PyTorch's op policy.

Inside ``with autocast("cpu"):`` the thread includes the `Autocast` dispatch key. Each op in the
policy (`policy.POLICIES`) has a kernel at that key: it casts the op's arguments as the policy
says and redispatches below the key with autocast excluded, so the ops a composite is made of
see the cast inputs and are not cast again (PyTorch's ``ExcludeDispatchKeyGuard``). An op not in
the policy has no kernel there, and dispatch skips the key. Policy entries that are Python
functions rather than dispatched ops (losses, norms in ``nn.functional``) carry the same kernel
as a decorator, `autocast_function`.
"""

from __future__ import annotations

import functools
import warnings
from typing import Callable

from .. import dtypes as dt
from ..dispatch.keys import DispatchKey
from ..dispatch.tls import ExcludeDispatchKeyGuard, local_keys
from .policy import POLICIES, cast_record, cast_tensors, policy_of
from .state import AUTOCAST_BIT, STATE, _check_device_type, sync_key

__all__ = ["autocast", "autocast_function", "register_autocast_kernels"]

_SUPPORTED = {"cpu": (dt.bfloat16, dt.float16), "cuda": (dt.bfloat16, dt.float16)}


class autocast:  # noqa: N801 - PyTorch's name
    """Run the ops of a region in lower precision where it is safe (``torch.autocast``).

    ``with coretorch.autocast("cpu"):`` casts matmul, conv and linear inputs to bfloat16 (cpu's
    default; ``dtype=`` picks float16) and losses to float32, following PyTorch's per-device op
    lists; ``enabled=False`` turns it off inside an enclosing region. Also a decorator.
    `cache_enabled` keeps the low-precision copy of each float32 parameter for the region.
    """

    def __init__(
        self,
        device_type: str,
        dtype: dt.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ):
        self.device = _check_device_type(device_type)
        self.fast_dtype = STATE.dtype[self.device] if dtype is None else dtype
        self._cache_enabled = STATE.cache_enabled if cache_enabled is None else cache_enabled
        enabled = bool(enabled)
        if enabled and self.fast_dtype not in _SUPPORTED[self.device]:
            warnings.warn(
                f"In {self.device.upper()} autocast, but the target dtype "
                f"{self.fast_dtype} is not supported. Disabling autocast.\n"
                f"{self.device.upper()} Autocast only supports dtypes of "
                f"coretorch.bfloat16 and coretorch.float16 currently."
            )
            enabled = False
        if enabled and self.device == "cuda":
            from .. import cuda

            if not cuda.is_available():
                warnings.warn(
                    "User provided device_type of 'cuda', but CUDA is not available. Disabling"
                )
                enabled = False
            elif self.fast_dtype is dt.bfloat16 and not cuda.is_bf16_supported():
                raise RuntimeError(
                    "Current CUDA Device does not support bfloat16. Please switch dtype to float16."
                )
        self._enabled = enabled

    def __enter__(self) -> "autocast":
        st = STATE
        self._prev = (st.enabled.get(self.device, False), st.dtype[self.device], st.cache_enabled)
        st.enabled[self.device] = self._enabled
        st.dtype[self.device] = self.fast_dtype
        st.cache_enabled = self._cache_enabled
        st.nesting += 1
        sync_key()
        return self

    def __exit__(self, *exc) -> None:
        st = STATE
        st.nesting -= 1
        if st.nesting == 0:
            st.cache.clear()  # cast copies must not outlive the outermost region
        st.enabled[self.device], st.dtype[self.device], st.cache_enabled = self._prev
        sync_key()

    def __call__(self, func: Callable) -> Callable:
        """Use as a decorator: each call of `func` runs in a region like this one."""

        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)

        return wrapped


def _no_autocast() -> ExcludeDispatchKeyGuard:
    return ExcludeDispatchKeyGuard(DispatchKey.Autocast)


def _op_kernel(op) -> Callable:
    name = op.name

    def kernel(ks, *args, **kwargs):
        p = None if kwargs else policy_of(name, args)  # out= forms are not autocast (PyTorch)
        if p is None:
            return op.redispatch(ks, *args, **kwargs)
        kind, dev, lower = p
        with _no_autocast():
            return op.redispatch(ks, *cast_record(op, kind, dev, lower, args))

    kernel.__name__ = f"autocast_{name}"
    return kernel


def register_autocast_kernels() -> None:
    """Register the autocast kernel of every dispatched op some device's policy lists."""
    from ..ops import REGISTRY

    names = {n for table in POLICIES.values() for n in table}
    for n in sorted(names):
        decl = REGISTRY.get(n)
        if decl is not None:
            decl.op.register(DispatchKey.Autocast, _op_kernel(decl.op), with_keyset=True)


def autocast_function(name: str) -> Callable[[Callable], Callable]:
    """Decorator for a Python function that is one op of PyTorch's autocast policy (the loss
    ``cross_entropy_loss``, the norm ``layer_norm`` ...): under autocast its tensor arguments are
    cast per the policy for `name` and its body runs with autocast off; otherwise one check."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if not local_keys.include & AUTOCAST_BIT or local_keys.exclude & AUTOCAST_BIT:
                return fn(*args, **kwargs)
            p = policy_of(name, (*args, *kwargs.values()))
            if p is None:
                return fn(*args, **kwargs)
            kind, dev, lower = p
            with _no_autocast():
                args, kwargs = cast_tensors(kind, dev, lower, args, kwargs)
                return fn(*args, **kwargs)

        return wrapped

    return decorate
