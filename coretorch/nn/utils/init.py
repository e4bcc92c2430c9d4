"""``skip_init``: a module built without running its initialization (mirrors
``torch.nn.utils.skip_init``)."""

from __future__ import annotations

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with uninitialized parameters and buffers: built on the
    meta device (no data, no initialization cost), then given empty storage on the requested
    device (``device=``, cpu by default). The module must accept a `device` argument.

    Raises:
        RuntimeError: `module_cls` does not accept `device`.
    """
    import inspect

    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=final)
