"""``coretorch.fft``: PyTorch's ``torch.fft`` namespace.

Each name is a declared operator (``fft_rfft`` is ``coretorch.fft.rfft``) with PyTorch's
arguments (`n` / `s`, `dim`, `norm` in "backward", "forward", "ortho") and gradients; the
transforms are composites of three primitives (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``) that
backends run with numpy.fft / cupy.fft. Real inputs give complex results (float32 -> complex64,
float64 -> complex128, integers in the default dtype); float16 and bfloat16 are refused.
"""

from __future__ import annotations

from .ops.declare import REGISTRY

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "hfft2",
    "ihfft2",
    "hfftn",
    "ihfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

# each public name is the entry point of the declared op fft_<name>
(
    fft,
    ifft,
    rfft,
    irfft,
    hfft,
    ihfft,
    fft2,
    ifft2,
    rfft2,
    irfft2,
    fftn,
    ifftn,
    rfftn,
    irfftn,
    hfft2,
    ihfft2,
    hfftn,
    ihfftn,
    fftfreq,
    rfftfreq,
    fftshift,
    ifftshift,
) = (REGISTRY[f"fft_{name}"].op.entry for name in __all__)
