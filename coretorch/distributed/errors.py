"""Errors raised by ``coretorch.distributed`` (mirrors ``torch.distributed.DistError`` and
``DistBackendError``)."""

from __future__ import annotations

__all__ = ["DistError", "DistBackendError"]


class DistError(RuntimeError):
    """Base of the errors the distributed package raises."""


class DistBackendError(DistError):
    """A collective failed in its backend: a peer rank failed or died, the group timeout passed,
    or the communication library reported an error. The message names the collective and, where
    known, the rank at fault."""
