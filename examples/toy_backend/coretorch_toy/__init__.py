"""coretorch-toy: an example third-party coretorch backend, to copy from.

Device ``toy`` keeps its tensors in numpy byte buffers (`memory`), implements three native
kernels plus ``fill_`` (`kernels`) and leaves every other op to coretorch's CPU fallback. The
entry point in pyproject.toml points coretorch at `plugin`; `device_module` becomes
``coretorch.toy``. See docs/writing-a-backend.md in the coretorch repository.
"""

__version__ = "0.1.0"
