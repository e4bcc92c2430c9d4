"""``coretorch.mps``: Apple's Metal GPUs (MPS). No coretorch backend serves them:
`is_available()` is False, `device_count()` 0, and the calls that need a device raise a
RuntimeError (as in PyTorch without MPS, seeding and synchronizing raise too)."""

from ._absent_device import absent_device_namespace

globals().update(
    absent_device_namespace(
        "mps",
        "coretorch has no backend for Apple's Metal GPUs (device type 'mps'); `python -m "
        "coretorch` lists the backends that are installed",
        raising=("seed", "empty_cache"),
        extra_raising=(
            "current_allocated_memory",
            "driver_allocated_memory",
            "recommended_max_memory",
            "compile_shader",
        ),
    )
)
