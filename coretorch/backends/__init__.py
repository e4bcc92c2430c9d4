"""``coretorch.backends``: PyTorch's backend switches (``torch.backends``) as honest flags.

coretorch does its own math: it calls neither cuDNN, oneDNN (mkldnn), MKL, OpenMP nor Metal, so
their ``is_available()`` answers False and their switches are recorded but change nothing
(PyTorch, too, accepts them on a machine without those libraries). ``cuda.matmul.allow_tf32``
and ``set_float32_matmul_precision`` are linked as in PyTorch; coretorch's matmuls compute in full
float32 whatever they say (TF32 is a permission, never a requirement).
"""

from __future__ import annotations

from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, nnpack, openmp, opt_einsum  # noqa: F401
from .cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: F401

__all__ = [
    "cpu",
    "cuda",
    "cudnn",
    "mha",
    "mkl",
    "mkldnn",
    "mps",
    "nnpack",
    "openmp",
    "opt_einsum",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
]
