"""``coretorch.xpu``: Intel GPUs (XPU). No coretorch backend serves them: `is_available()` is
False, `device_count()` 0, and the calls that need a device raise a RuntimeError."""

from ._absent_device import absent_device_namespace

globals().update(
    absent_device_namespace(
        "xpu",
        "coretorch has no backend for Intel GPUs (device type 'xpu'); `python -m coretorch` "
        "lists the backends that are installed",
    )
)
