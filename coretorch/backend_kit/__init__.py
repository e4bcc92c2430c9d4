"""Backend kit: kernels and helpers written once against the NumPy array API.

Two backends hold their data as arrays of a NumPy-compatible module: the cpu backend (numpy) and
the cuda backend (CuPy, or numpy in emulation). Their kernels for reductions, indexing, shape,
linear algebra, filling and convolution are the same array-API code; this package holds that
code once, parameterized by the array module `xp` and by the backend's tensor -> array accessor:

    from coretorch.backend_kit import ArrayKit, KernelTable, quiet_fp, register_kernels, reductions
    from coretorch.backend_kit.array_kit import register_kit
    register_kit(ArrayKit(numpy, as_numpy, "mydev"))
    TABLE = KernelTable("mydev", quiet_fp)
    TABLE.fill_from(reductions.KERNELS)        # sum, prod, amax, argmax, cumsum, ...
    register_kernels(registry.library("MYDEV"), TABLE.kernels, "mydev")   # in the plugin hook

Families: `reductions`, `indexing`, `shape` (cat/flip/triu/tril), `linalg` (mm/bmm), `conv`
(conv2d and its backward), `factories` (fill_/arange/linspace/_copy_), `shifts`, `random`
(uniform_/normal_/random_/bernoulli over the backend's own draws).

A third-party backend that holds its tensors as numpy (or any array-API module) arrays can
register these kernels under its own dispatch key instead of relying on the core's CPU fallback
(which copies every argument to cpu and back). A backend keeps its own kernels where it has
faster ones (the cpu backend's numba loops, the cuda backend's fused CUDA kernels) and takes the
kit's for the rest.

The core never imports a backend: this package only imports numpy and core modules.
"""
from .array_kit import ArrayKit, TORCH_DTYPE_NAMES, scalar_as
from .registry import KernelTable, quiet_fp, register_kernels

__all__ = ["ArrayKit", "KernelTable", "quiet_fp", "register_kernels", "scalar_as",
           "TORCH_DTYPE_NAMES"]
