"""`RemovableHandle`: what every ``register_*_hook`` returns (mirrors
``torch.utils.hooks.RemovableHandle``).

Hooks live in dicts keyed by the handle's id (dicts keep insertion order, so hooks run in the
order they were registered); ``handle.remove()`` deletes the entry from each dict it was
registered in.
"""

from __future__ import annotations

import itertools
from typing import Any

__all__ = ["RemovableHandle"]

_ids = itertools.count()


class RemovableHandle:
    """``handle.remove()`` unregisters the hook; also a context manager that removes it on exit."""

    __slots__ = ("hooks_dicts", "id")

    def __init__(self, *hooks_dicts: Any):
        self.hooks_dicts = hooks_dicts
        self.id = next(_ids)

    def remove(self) -> None:
        """Unregister the hook (a second call does nothing)."""
        for d in self.hooks_dicts:
            if isinstance(d, set):
                d.discard(self.id)
            else:
                d.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
