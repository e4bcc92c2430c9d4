"""What one `load` call carries through every format reader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .source import Source
from .storages import Placement, StorageCache

__all__ = ["LoadContext"]


@dataclass
class LoadContext:
    src: Source
    placement: Placement
    weights_only: bool = True
    pickle_module: Any = None
    pickle_args: dict = field(default_factory=dict)
    notes: dict = field(default_factory=dict)  # widened stored types -> the warning to give
    cache: StorageCache = field(default_factory=StorageCache)

    @property
    def name(self) -> str:
        """The name of the file being loaded, used in error messages."""
        return self.src.name
