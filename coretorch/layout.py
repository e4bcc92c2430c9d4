"""Tensor layouts (``coretorch.strided``, ``coretorch.sparse_coo``), as ``torch.layout``."""

from __future__ import annotations

__all__ = ["layout", "sparse_coo", "strided"]


class layout:  # PyTorch's name (torch.layout)
    """How a tensor's elements are stored: `strided` (dense) or `sparse_coo` (indices and
    values of the specified elements)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"coretorch.{self.name}"


strided = layout("strided")
sparse_coo = layout("sparse_coo")
