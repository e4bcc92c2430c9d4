"""The FFT kernels on the array API (``xp.fft``: numpy.fft on cpu, cupy.fft on cuda): the three
transform primitives of `coretorch.ops.fft`.

`normalization` is the scale of the result (0 none, 1 1/sqrt(n), 2 1/n); `xp.fft`'s `norm`
names a scale relative to the direction, so the kernels translate it.
"""

from __future__ import annotations

from .array_kit import kit_of

__all__ = ["KERNELS"]

# (normalization, forward) -> xp.fft's norm
_NORM = {
    (0, True): "backward",
    (1, True): "ortho",
    (2, True): "forward",
    (0, False): "forward",
    (1, False): "ortho",
    (2, False): "backward",
}


def _transform(out, self, dim, fn_name: str, norm: str) -> None:
    """out = xp.fft.<fn_name>(self) over dim (a copy when there is nothing to transform)."""
    k = kit_of(out)
    a = k.arr(self)
    if not dim or a.size == 0:
        k.write(out, a)
        return
    k.write(out, getattr(k.xp.fft, fn_name)(a, axes=tuple(dim), norm=norm))


def fft_c2c(out, self, dim, normalization, forward):
    """out = the complex transform of self over dim (forward or inverse)."""
    _transform(out, self, dim, "fftn" if forward else "ifftn", _NORM[normalization, forward])


def fft_r2c(out, self, dim, normalization, onesided):
    """out = the forward transform of real self over dim (one-sided along the last dim)."""
    _transform(out, self, dim, "rfftn" if onesided else "fftn", _NORM[normalization, True])


def fft_c2r(out, self, dim, normalization, last_dim_size):
    """out = the real inverse transform of the one-sided spectrum self over dim."""
    k = kit_of(out)
    a = k.arr(self)
    if out.numel() == 0:
        return
    if not dim:
        k.write(out, a.real)
        return
    sizes = [a.shape[d] for d in dim[:-1]] + [last_dim_size]
    k.write(out, k.xp.fft.irfftn(a, s=sizes, axes=tuple(dim), norm=_NORM[normalization, False]))


KERNELS = {"_fft_c2c": fft_c2c, "_fft_r2c": fft_r2c, "_fft_c2r": fft_c2r}
