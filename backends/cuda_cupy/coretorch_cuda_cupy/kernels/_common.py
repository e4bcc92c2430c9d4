"""Helpers shared by the kernel modules: the backend kit bound to `xp` and `as_xp` (device arrays
of arguments, compute dtypes, writing results into `out` with PyTorch's casting).

Kernels compute in the op's compute dtype (the promoted dtype of the inputs, float for float-
valued ops, float32 for float16 math) and write into `out`, casting when out's dtype differs
(``out=``, in-place). Only `xp` calls that CuPy and numpy share are used.
"""

from __future__ import annotations

import numpy as np

from coretorch import dtypes as dt
from coretorch.backend_kit import ArrayKit, scalar_as
from coretorch.backend_kit.array_kit import acc_float, compute_dtype, register_kit
from coretorch.ops.meta_rules import float_result
from coretorch.tensor.impl import TensorImpl

from .. import array_module as am
from ..array_module import from_host, xp
from ..tensor_view import as_xp

__all__ = [
    "T",
    "xp",
    "KIT",
    "arr",
    "scalar",
    "scalar_as",
    "operand",
    "compute_dtype",
    "acc_float",
    "write",
    "ufunc_into",
    "unsupported",
    "check_nonzero_divisor",
    "float_result",
    "dt",
    "BOOL",
]

T = TensorImpl
BOOL = np.dtype(np.bool_)

KIT = register_kit(
    ArrayKit(xp, as_xp, "cuda", from_host, special=am.special, scipy_linalg=am.scipy_linalg)
)
arr = KIT.arr
scalar = KIT.scalar
write = KIT.write
operand = KIT.operand
unsupported = KIT.unsupported
check_nonzero_divisor = KIT.check_nonzero_divisor


ufunc_into = KIT.into
