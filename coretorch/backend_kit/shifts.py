"""Bit-shift kernels on the array API: bitwise_left_shift / bitwise_right_shift with PyTorch's
defined results for negative and too-large shift counts."""
from __future__ import annotations

from typing import Callable

from coretorch import dtypes as dt

from .array_kit import ArrayKit, compute_dtype

__all__ = ["shift_kernels"]


def shift_kernels(kit: ArrayKit) -> dict[str, Callable]:
    """bitwise_left_shift and bitwise_right_shift over `kit`'s array module, by op name."""
    xp, operand, write = kit.xp, kit.operand, kit.write

    def shift(out, self, other, left: bool) -> None:
        c = compute_dtype(self, other)
        if c is dt.bool:
            raise kit.unsupported("lshift" if left else "rshift", c)
        cn = c.numpy
        A, B = xp.asarray(operand(self, cn)), xp.asarray(operand(other, cn))
        bits = cn.itemsize * 8
        outside = xp.logical_or(B < 0, B >= bits)   # PyTorch defines these instead of UB
        s = xp.clip(B, 0, bits - 1).astype(cn)
        if left:
            r = xp.where(outside, cn.type(0), xp.left_shift(A, s))
        else:
            fill = xp.right_shift(A, cn.type(bits - 1)) if cn.kind == "i" else cn.type(0)
            r = xp.where(outside, fill, xp.right_shift(A, s))
        write(out, r)

    def bitwise_left_shift(out, self, other):
        """out = self << other (0 when shifting by a negative amount or by the bit width or more)"""
        shift(out, self, other, True)

    def bitwise_right_shift(out, self, other):
        """out = self >> other (arithmetic; sign fill when shifting by the bit width or more)"""
        shift(out, self, other, False)

    return {"bitwise_left_shift": bitwise_left_shift, "bitwise_right_shift": bitwise_right_shift}
