"""Tensor layouts (``coretorch.strided``, ``coretorch.sparse_coo``), as ``torch.layout``."""
from __future__ import annotations

__all__ = ["layout", "strided", "sparse_coo"]


class layout:  # noqa: N801  (PyTorch's name)
    """How a tensor's elements are stored: `strided` (dense) or `sparse_coo` (indices and
    values of the specified elements)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"coretorch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
