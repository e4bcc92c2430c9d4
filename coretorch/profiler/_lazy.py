"""Namespaces whose names live in the coretorch-profiler distribution, imported on first use."""

from __future__ import annotations

import importlib
from typing import Callable

_INSTALL = "pip install coretorch-profiler (from a checkout of coretorch: pip install -e profiler)"


def load(namespace: str, target: str):
    """Import `target`, or raise ModuleNotFoundError naming the missing distribution."""
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if (e.name or "").split(".")[0] != "coretorch_profiler":
            raise
        raise ModuleNotFoundError(
            f"{namespace} needs the coretorch-profiler distribution, which is not installed: "
            f"{_INSTALL}",
            name="coretorch_profiler",
        ) from None


def lazy_module(namespace: str, target: str) -> tuple[Callable, Callable]:
    """(__getattr__, __dir__) of a module forwarding every public name to `target`."""

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        api = load(namespace, target)
        try:
            return getattr(api, name)
        except AttributeError:
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}") from None

    def __dir__() -> list[str]:
        return sorted(load(namespace, target).__all__)

    return __getattr__, __dir__
