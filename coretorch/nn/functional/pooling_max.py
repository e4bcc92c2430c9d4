"""Adaptive max pooling and max unpooling of ``nn.functional`` (1-d, 2-d; unpooling also 3-d).

Adaptive max pooling gathers every bin's elements (a host-built index table, short bins padded
by repeating their first element, which cannot change the first maximum) and takes the argmax;
the values are then gathered at those flat indices, so the gradient reaches exactly the chosen
element, as in PyTorch. Unpooling scatters values to their indices. Composite stand-ins until a
backend provides native kernels.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ...ops import aten
from ...ops.factories_public import tensor as _tensor
from ...ops.window_tables import bin_table
from ...tensor.tensor import Tensor
from ._conv_args import ntuple
from .pooling import pair_output_size

__all__ = [
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]


def _adaptive_max_2d(name: str, input: Tensor, out_hw: tuple) -> tuple[Tensor, Tensor]:
    h, w = input.shape[-2], input.shape[-1]
    oh, ow = out_hw
    if oh <= 0 or ow <= 0:
        raise RuntimeError(
            f"{name}(): elements of output_size must be greater than or equal "
            f"to 0 but received {list(out_hw)}"
        )
    if h == 0 or w == 0:
        raise RuntimeError(
            f"{name}(): Expected input to have non-zero size for non-batch "
            f"dimensions, but input has sizes {list(input.shape)}"
        )
    lead = tuple(input.shape[:-2])
    flat = input.reshape(lead + (h * w,))
    table = _tensor(bin_table((h, w), (oh, ow)), dtype=_dt.int64, device=input.device)
    k = table.shape[1]
    cand = table.reshape(-1).expand(lead + (oh * ow * k,))
    gathered = flat.gather(-1, cand).reshape(lead + (oh * ow, k))
    best = gathered.argmax(-1, keepdim=True)
    indices = table.expand(lead + (oh * ow, k)).gather(-1, best).squeeze(-1)
    values = flat.gather(-1, indices)
    return values.reshape(lead + (oh, ow)), indices.reshape(lead + (oh, ow))


def adaptive_max_pool2d_with_indices(
    input: Tensor, output_size, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(values, flat indices into each H*W plane) of adaptive max pooling of (N, C, H, W) or
    (C, H, W) input."""
    if input.dim() not in (3, 4):
        raise ValueError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got {list(input.shape)}"
        )
    size = pair_output_size("adaptive_max_pool2d", output_size, input.shape[-2], input.shape[-1])
    return _adaptive_max_2d("adaptive_max_pool2d", input, size)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive bins of (N, C, H, W) or (C, H, W) to `output_size` (int or pair, None
    keeping that size); with `return_indices`, also the flat indices."""
    res = adaptive_max_pool2d_with_indices(input, output_size)
    return res if return_indices else res[0]


def adaptive_max_pool1d_with_indices(
    input: Tensor, output_size, return_indices: bool = False
) -> tuple[Tensor, Tensor]:
    """(values, indices) of adaptive max pooling of (N, C, L) or (C, L) input."""
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got {list(input.shape)}"
        )
    (out,) = ntuple("adaptive_max_pool1d", "output_size", output_size, 1)
    values, indices = _adaptive_max_2d("adaptive_max_pool1d", input.unsqueeze(-2), (1, out))
    return values.squeeze(-2), indices.squeeze(-2)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max over adaptive bins of (N, C, L) or (C, L) input."""
    res = adaptive_max_pool1d_with_indices(input, output_size)
    return res if return_indices else res[0]


def _unpool_size(name: str, input: Tensor, kernel, stride, padding, output_size, n: int) -> tuple:
    k = ntuple(name, "kernel_size", kernel, n)
    s = k if stride is None else ntuple(name, "stride", stride, n)
    p = ntuple(name, "padding", padding, n)
    spatial = tuple(input.shape[-n:])
    default = tuple((size - 1) * si - 2 * pi + ki for size, si, pi, ki in zip(spatial, s, p, k))
    if output_size is None:
        return default
    out = tuple(int(v) for v in output_size)
    if len(out) == n + 2 or (len(out) == n + 1 and input.dim() == n + 1):
        out = out[-n:]
    if len(out) != n:
        raise ValueError(
            f"output_size should be a sequence containing {n} or {n + 2} elements, "
            f"but it has a length of '{len(out)}'"
        )
    for o, dflt, si in zip(out, default, s):
        if not dflt - si < o < dflt + si:
            raise ValueError(
                f'invalid output_size "{list(out)}" (dim must be between '
                f"{[d - st for d, st in zip(default, s)]} and "
                f"{[d + st for d, st in zip(default, s)]})"
            )
    return out


def _max_unpool(
    n: int, input: Tensor, indices: Tensor, kernel_size, stride, padding, output_size
) -> Tensor:
    """max_unpool{n}d: `input`'s values scattered to their flat `indices` in a zero output."""
    name = f"max_unpool{n}d"
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(
            f"{name}(): Expected {n + 1}D or {n + 2}D input, got {list(input.shape)}"
        )
    out_spatial = _unpool_size(name, input, kernel_size, stride, padding, output_size, n)
    # The dtype is checked before the shape, in PyTorch's order.
    if indices.dtype is not _dt.int64:
        raise RuntimeError(
            f"{name}(): elements in indices should be type int64 but got: {indices.dtype.name}"
        )
    if indices.shape != input.shape:
        raise RuntimeError(
            f"{name}(): Expected shape of indices to be same as that of the input "
            f"tensor ({list(input.shape)}) but got indices tensor with shape: "
            f"{list(indices.shape)}"
        )
    lead = tuple(input.shape[:-n])
    total = 1
    for v in out_spatial:
        total *= v
    flat_idx = indices.reshape(lead + (-1,))
    if flat_idx.numel() and (bool((flat_idx < 0).any()) or bool((flat_idx >= total).any())):
        bad = int(flat_idx.masked_select((flat_idx < 0) | (flat_idx >= total))[0])
        raise RuntimeError(
            f"{name}(): Found an invalid max index: {bad} (output volumes are of "
            f"size {'x'.join(str(v) for v in out_spatial)})"
        )
    out = aten.zeros(lead + (total,), dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(lead + (-1,)))
    return out.reshape(lead + tuple(out_spatial))


def max_unpool2d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of max_pool2d: each value placed at its index in a zero
    (N, C, H_out, W_out) plane."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool1d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of max_pool1d."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(
    input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0, output_size=None
) -> Tensor:
    """The partial inverse of max_pool3d: each value placed at its flat D*H*W index in a zero
    (N, C, D_out, H_out, W_out) volume."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)
