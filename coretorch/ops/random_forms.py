"""``coretorch.normal``: PyTorch's four forms of drawing from normal distributions (tensor or
number mean and std, or numbers and a size), written with ``normal_`` so every backend has it
and gradients reach tensor means and stds (the reparameterization ``mean + std * z``)."""

from __future__ import annotations

from ..tensor.tensor import Tensor

__all__ = ["normal"]


def normal(
    mean,
    std=1.0,
    size=None,
    *,
    generator=None,
    out=None,
    dtype=None,
    layout=None,
    device=None,
    pin_memory: bool = False,
    requires_grad: bool = False,
) -> Tensor:
    """Samples of N(mean, std²): elementwise for tensor `mean`/`std` (broadcast together), or
    a tensor of `size` for number `mean` and `std`.

    Raises:
        RuntimeError: a negative std; a non-floating-point tensor mean or std.
        TypeError: `size` given with a tensor mean or std, or missing with numbers.
    """
    import coretorch as ct

    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if tensors:
        if size is not None:
            raise TypeError("normal(): size can be given only with number mean and std")
        for name, t in (("mean", mean), ("std", std)):
            if isinstance(t, Tensor) and not t.is_floating_point():
                raise RuntimeError(
                    f"normal expects floating point {name}, but got dtype {t.dtype.name}"
                )
        _check_std(std)
        shape = ct.broadcast_shapes(*(t.shape for t in tensors))
        z = ct.empty(shape, dtype=tensors[0].dtype, device=tensors[0].device).normal_(
            0.0, 1.0, generator=generator
        )
        res = mean + std * z
    else:
        if size is None:
            raise TypeError("normal(): with number mean and std, size is required")
        _check_std(std)
        res = ct.empty(size, dtype=dtype, device=device).normal_(
            float(mean), float(std), generator=generator
        )
        res.requires_grad_(requires_grad)
    if out is not None:
        with ct.no_grad():
            out.copy_(res)
        return out
    return res


def _check_std(std) -> None:
    if not isinstance(std, Tensor):
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    elif std.device.type != "meta" and bool((std < 0).any()):  # meta holds no values
        raise RuntimeError("normal expects std >= 0.0, but found std with negative values")
