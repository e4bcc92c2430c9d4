"""`ReduceOp`: how a reducing collective combines the ranks' values."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp"]


class ReduceOp(enum.Enum):
    """Reduction of `all_reduce`, `reduce` and `reduce_scatter_tensor` (``ReduceOp.SUM``, ...).

    ``AVG`` is the sum divided by the group size, for floating-point tensors only."""

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"
