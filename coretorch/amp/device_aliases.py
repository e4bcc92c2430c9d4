"""The per-device spellings PyTorch keeps for old scripts: ``torch.cpu.amp.autocast(...)``,
``torch.cuda.amp.autocast(...)`` and ``torch.cuda.amp.GradScaler(...)``: the device type is fixed
and the rest of the arguments keep their old order."""

from __future__ import annotations

import sys
import types

from .. import dtypes as dt
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["device_amp_module", "attach_amp"]


def _autocast_for(device_type: str, default_dtype: dt.dtype) -> type:
    class DeviceAutocast(autocast):
        __doc__ = (
            f"``autocast('{device_type}', dtype, enabled, cache_enabled)`` with PyTorch's "
            f"old ``torch.{device_type}.amp.autocast`` argument order."
        )

        def __init__(
            self, enabled: bool = True, dtype: dt.dtype = default_dtype, cache_enabled: bool = True
        ):
            super().__init__(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    DeviceAutocast.__name__ = DeviceAutocast.__qualname__ = "autocast"
    DeviceAutocast.__module__ = f"coretorch.{device_type}.amp"
    return DeviceAutocast


def _scaler_for(device_type: str) -> type:
    class DeviceGradScaler(GradScaler):
        __doc__ = f"``GradScaler('{device_type}', ...)`` (PyTorch's old per-device spelling)."

        def __init__(
            self,
            init_scale: float = 2.0**16,
            growth_factor: float = 2.0,
            backoff_factor: float = 0.5,
            growth_interval: int = 2000,
            enabled: bool = True,
        ):
            super().__init__(
                device_type, init_scale, growth_factor, backoff_factor, growth_interval, enabled
            )

    DeviceGradScaler.__name__ = DeviceGradScaler.__qualname__ = "GradScaler"
    DeviceGradScaler.__module__ = f"coretorch.{device_type}.amp"
    return DeviceGradScaler


def device_amp_module(device_type: str, default_dtype: dt.dtype) -> types.ModuleType:
    """The module ``coretorch.<device_type>.amp`` (registered in sys.modules)."""
    name = f"coretorch.{device_type}.amp"
    m = sys.modules.get(name)
    if m is None:
        m = types.ModuleType(
            name,
            f"``{name}``: autocast and GradScaler for {device_type} "
            f"tensors (PyTorch's legacy spelling of coretorch.amp).",
        )
        vars(m).update(
            autocast=_autocast_for(device_type, default_dtype),
            GradScaler=_scaler_for(device_type),
            __all__=["autocast", "GradScaler"],
        )
        sys.modules[name] = m
    return m


def attach_amp(parent: types.ModuleType, device_type: str, default_dtype: dt.dtype) -> None:
    """Make ``<parent>.amp`` the device's amp module. A device module that is a plain module
    (``coretorch.cuda``, from a backend or the "not available" stand-in) becomes a package with
    no directory, so ``import coretorch.cuda.amp`` (and ``torch.cuda.amp`` under the compat
    hook) finds it."""
    vars(parent)["amp"] = device_amp_module(device_type, default_dtype)
    if not hasattr(parent, "__path__"):
        parent.__path__ = []
