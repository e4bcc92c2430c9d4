"""DataParallel and data_parallel on one device: the module runs on the device its parameters
live on, as PyTorch's DataParallel does with a single device id (the state_dict keys carry the
``module.`` prefix, as in PyTorch). Splitting a batch over several devices is not supported:
asking for more than one device raises (DistributedDataParallel is the multi-device path)."""

from __future__ import annotations

from ...device import device as _device
from .module import Module

__all__ = ["DataParallel", "data_parallel"]


def _device_ids(device_ids) -> list:
    if device_ids is None:
        return []
    ids = [d.index if isinstance(d, _device) else d for d in device_ids]
    if len(ids) > 1:
        raise NotImplementedError(
            f"DataParallel over several devices ({ids}) is not supported "
            f"by coretorch; use one device, or DistributedDataParallel "
            f"with one process per device"
        )
    return ids


def _module_device(module: Module):
    for p in module.parameters():
        return p.device
    for t in module.buffers():
        return t.device
    return None


class DataParallel(Module):
    """Wraps `module`; ``forward`` calls it with the inputs moved to its device (and the output
    on `output_device` when one is given)."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids = _device_ids(device_ids)
        self.dim = dim
        self.output_device = output_device
        self.src_device_obj = _module_device(module)

    def forward(self, *inputs, **kwargs):
        dev = _module_device(self.module)
        if dev is not None:
            inputs = tuple(_to(x, dev) for x in inputs)
            kwargs = {k: _to(v, dev) for k, v in kwargs.items()}
        out = self.module(*inputs, **kwargs)
        return out if self.output_device is None else _to(out, self.output_device)


def _to(obj, dev):
    """`obj` with every tensor inside (tuples, lists, dicts) moved to `dev`."""
    if hasattr(obj, "to") and hasattr(obj, "device") and hasattr(obj, "shape"):
        return obj.to(dev)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to(v, dev) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(v, dev) for v in obj)
    if isinstance(obj, dict):
        return {k: _to(v, dev) for k, v in obj.items()}
    return obj


def data_parallel(
    module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None
):
    """The functional form of DataParallel: ``module(*inputs, **module_kwargs)`` on the module's
    device."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
