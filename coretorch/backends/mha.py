"""``coretorch.backends.mha``: the switch of PyTorch's fused multi-head-attention fast path.
coretorch's attention layers have one path; the switch is kept and read back."""

from __future__ import annotations

__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_fastpath = [True]


def get_fastpath_enabled() -> bool:
    """Whether nn.MultiheadAttention may use its fused inference fast path."""
    return _fastpath[0]


def set_fastpath_enabled(value: bool) -> None:
    """Allow (True) or forbid (False) nn.MultiheadAttention's fused inference fast path."""
    _fastpath[0] = bool(value)
