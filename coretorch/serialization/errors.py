"""The errors `load` raises: one RuntimeError type that always names the file."""

from __future__ import annotations

__all__ = ["CheckpointError", "corrupt", "unsupported"]


class CheckpointError(RuntimeError):
    """A checkpoint that cannot be loaded; the message names the file and what is wrong."""


def corrupt(src: str, why: str) -> CheckpointError:
    """A file whose bytes do not follow its format (truncated, damaged, or not a checkpoint)."""
    return CheckpointError(
        f"load(): {src} is not a valid checkpoint ({why}); the file is truncated or corrupted"
    )


def unsupported(src: str, what: str) -> CheckpointError:
    """A well-formed file that holds something coretorch cannot represent."""
    return CheckpointError(f"load(): {src}: {what}")
