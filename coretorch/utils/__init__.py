"""``coretorch.utils``: data loading (``coretorch.utils.data``), activation checkpointing
(``coretorch.utils.checkpoint``), hooks, TensorBoard logging.

Submodules load on first use (``coretorch.utils.data`` imports the framework above this package,
while `coretorch.utils.hooks` is used by the autograd engine below it)."""

import importlib

_SUBMODULES = ("data", "hooks", "atomic_write", "tensorboard", "collect_env", "checkpoint")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'coretorch.utils' has no attribute {name!r}")
