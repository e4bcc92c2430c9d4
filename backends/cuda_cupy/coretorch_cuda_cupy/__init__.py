"""The cuda backend of coretorch: CuPy arrays over CuPy's memory pool, CuPy kernels, streams.

Set ``CORETORCH_CUDA_EMULATE=1`` (tests only) to run the same kernel code with numpy standing in
for CuPy on a machine without a GPU; every status line then says "emulated".
"""

__version__ = "0.1.0"
