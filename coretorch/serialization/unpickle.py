"""Running one pickle of a PyTorch-format checkpoint: the restricted unpickler for
``weights_only=True``, the standard one (with PyTorch's names mapped) otherwise."""

from __future__ import annotations

import pickle
from typing import Any, Callable

from .context import LoadContext
from .errors import corrupt
from .torch_globals import NOT_TORCH, active, find_global
from .weights_unpickler import WEIGHTS_ONLY_HINT, WeightsUnpickler

__all__ = ["unpickle", "storage_pid"]


def _full_unpickler(ctx: LoadContext, file, persistent_load: Callable[[Any], Any]):
    base = (ctx.pickle_module or pickle).Unpickler

    class _Unpickler(base):  # type: ignore[misc, valid-type]
        def find_class(self, module: str, name: str) -> Any:
            obj = find_global(module, name, ctx.name, weights_only=False)
            return super().find_class(module, name) if obj is NOT_TORCH else obj

        def persistent_load(self, pid: Any) -> Any:
            return persistent_load(pid)

    return _Unpickler(file, **ctx.pickle_args)


def unpickle(ctx: LoadContext, file, persistent_load: Callable[[Any], Any]) -> Any:
    """Unpickle one object from `file`; storages come from `persistent_load(pid)`."""
    token = active.set(ctx)
    try:
        if ctx.weights_only:
            try:
                return WeightsUnpickler(
                    file, ctx.name, persistent_load, ctx.pickle_args.get("encoding", "utf-8")
                ).load()
            except pickle.UnpicklingError as e:
                raise pickle.UnpicklingError(
                    f"load(): {ctx.name}: {WEIGHTS_ONLY_HINT}{e}"
                ) from None
        return _full_unpickler(ctx, file, persistent_load).load()
    finally:
        active.reset(token)


def storage_pid(pid: Any, src: str, length: int) -> tuple:
    """The fields of a ``('storage', ...)`` persistent id with `length` fields after the tag."""
    if not isinstance(pid, tuple) or len(pid) != length + 1:
        raise corrupt(src, f"persistent id {pid!r:.80} is not a storage reference")
    tag = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
    if tag != "storage":
        raise corrupt(src, f"persistent id of kind {tag!r:.40}, expected 'storage'")
    fields = list(pid[1:])
    for i, v in enumerate(fields):
        if isinstance(v, bytes):
            fields[i] = v.decode("ascii", "replace")
    return tuple(fields)
