"""_copy_ on the cpu device: one `np.copyto` (numpy handles overlapping operands itself, so the
backend kit's defensive copy is not needed on this hot path)."""

from __future__ import annotations

import numpy as np

from ..elementwise import as_numpy
from ..registry import kernel


@kernel("_copy_")
def copy_(out, self, src, non_blocking):
    """out[...] = src, broadcast and cast (float -> int truncates)"""
    np.copyto(as_numpy(out), as_numpy(src), casting="unsafe")
