"""The cpu backend of coretorch: numpy-held storage, numba kernels, BLAS matmul."""

__version__ = "0.1.0"
