"""_copy_: copy with broadcasting and dtype casting on the cpu device."""
from __future__ import annotations

import numpy as np

from ..elementwise import as_numpy
from ..registry import kernel


@kernel("_copy_")
def copy_(out, self, src, non_blocking=False):
    """out[...] = src, broadcast and cast (float -> int truncates; numpy handles overlap)."""
    np.copyto(as_numpy(out), as_numpy(src), casting="unsafe")
