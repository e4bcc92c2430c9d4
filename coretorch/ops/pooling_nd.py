"""3-D max/average pooling, 3-D adaptive pooling and fractional max pooling (2-D and 3-D) as
composites over host-built window tables (`window_tables`).

Windows are gathered with ``index_select`` (``gather`` for fractional pooling, whose windows
differ per plane); max pooling takes the first maximum of each window (NaN counts as the
maximum, as in PyTorch), turns it into a flat index into the input's D*H*W (H*W) volume and
gathers the value at that index, so the gradient reaches exactly the chosen element.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as dt
from ..tensor.impl import shape_numel
from .declare import declare, op_named as _op
from .factories_public import tensor as _tensor
from .nn_ops import pool_output_size, window_stride
from .sorting import holds_data
from .window_tables import adaptive_bins, bin_table, fractional_starts, start_table, window_table

__all__ = ["adaptive_mean"]

_DIMS = {2: "two", 3: "three"}


def _index(values: np.ndarray, device):
    return _tensor(np.ascontiguousarray(values), dtype=dt.int64, device=device)


def _check_input(op: str, self, n: int) -> None:
    if len(self._shape) not in (n + 1, n + 2) or shape_numel(self._shape[-n - 1 :]) == 0:
        raise RuntimeError(
            f"{op}(): non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected "
            f"for input, but got: {list(self._shape)}"
        )
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): \"{op}\" not implemented for '{self._dtype.name}'")


def _check_window(op: str, name: str, value: tuple, n: int, positive: bool = True) -> None:
    if len(value) != n:
        raise RuntimeError(
            f"{op}(): {name} must either be a single int, or a tuple of "
            f"{_DIMS[n]} ints, got {list(value)}"
        )
    if positive and min(value) <= 0:
        raise RuntimeError(f"{op}(): {name} should be greater than zero, but got {list(value)}")


def _pool_out(op: str, self, kernel, stride, padding, dilation, ceil_mode) -> tuple:
    """Checked pooling parameters -> (window stride, output spatial sizes)."""
    n = 3
    _check_input(op, self, n)
    _check_window(op, "kernel_size", kernel, n)
    s = window_stride(kernel, stride)
    _check_window(op, "stride", s, n)
    _check_window(op, "padding", padding, n, positive=False)
    _check_window(op, "dilation", dilation, n)
    for k, p in zip(kernel, padding):
        if p < 0 or p > k // 2:
            raise RuntimeError(
                f"{op}(): pad should be smaller than or equal to half of kernel "
                f"size, but got kernel_size={list(kernel)} and "
                f"padding={list(padding)}"
            )
    sizes = self._shape[-n:]
    outs = tuple(
        pool_output_size(sz, k, st, p, d, ceil_mode)
        for sz, k, st, p, d in zip(sizes, kernel, s, padding, dilation)
    )
    if min(outs) < 1:
        c = self._shape[-n - 1]
        raise RuntimeError(
            f"{op}(): Given input size: ({c}x{'x'.join(map(str, sizes))}). "
            f"Calculated output size: ({c}x{'x'.join(map(str, outs))}). Output "
            f"size is too small"
        )
    return s, outs


def _windows(self, table: np.ndarray, n: int, fill: float):
    """(values (lead, O, K) of every window with `fill` in the padding, table tensor (O, K))."""
    lead = self._shape[:-n]
    valid = table >= 0
    index = _index(table.clip(0), self._device)
    flat = self.reshape(lead + (-1,))
    vals = flat.index_select(-1, index.reshape(-1)).reshape(lead + table.shape)
    if not valid.all():
        vals = _op("where")(_tensor(valid, dtype=dt.bool, device=self._device), vals, fill)
    return vals, index


def _first_max(self, vals, index, n: int, out_sizes: tuple):
    """Values and flat input indices of the first maximum of each window row."""
    lead = self._shape[:-n]
    best = vals.argmax(-1, keepdim=True)
    idx = index.expand(vals._shape).gather(-1, best).squeeze(-1)
    values = self.reshape(lead + (-1,)).gather(-1, idx)
    return values.reshape(lead + out_sizes), idx.reshape(lead + out_sizes)


# ---- max_pool3d / avg_pool3d -------------------------------------------------------------------


def _meta_max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    _, outs = _pool_out("max_pool3d", self, kernel_size, stride, padding, dilation, ceil_mode)
    shape = self._shape[:-3] + outs
    return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]


def _max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode):
    """(max over each (kT, kH, kW) window, flat D*H*W index of the max within its volume) of
    (N, C, D, H, W) or (C, D, H, W) input."""
    s, outs = _pool_out("max_pool3d", self, kernel_size, stride, padding, dilation, ceil_mode)
    table = window_table(self._shape[-3:], kernel_size, s, padding, dilation, outs)
    vals, index = _windows(self, table, 3, float("-inf"))
    return _first_max(self, vals, index, 3, outs)


def _max_pool3d(self, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    """3-D max pooling; with `return_indices` also the flat index of each maximum."""
    values, indices = _op("max_pool3d_with_indices")(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (values, indices) if return_indices else values


def _meta_avg_pool3d(
    self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override
):
    if divisor_override == 0:
        raise RuntimeError("avg_pool3d(): divisor must be not zero")
    _, outs = _pool_out("avg_pool3d", self, kernel_size, stride, padding, (1, 1, 1), ceil_mode)
    return (self._shape[:-3] + outs, self._dtype, self._device)


def _avg_divisors(sizes, kernel, stride, padding, outs, count_include_pad) -> np.ndarray:
    """PyTorch's per-window divisor: the window clipped to the padded input (all of it with
    count_include_pad), else to the input."""
    per_dim = []
    for size, k, s, p, o in zip(sizes, kernel, stride, padding, outs):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, size + p)
        pool = end - start
        real = np.minimum(end, size) - np.maximum(start, 0)
        per_dim.append(pool if count_include_pad else real)
    grid = np.ones([1] * len(per_dim), dtype=np.int64)
    for d, v in enumerate(per_dim):
        shape = [1] * len(per_dim)
        shape[d] = v.size
        grid = grid * v.reshape(shape)
    return grid.reshape(-1)


def _avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Mean over (kT, kH, kW) windows of (N, C, D, H, W) or (C, D, H, W) input."""
    s, outs = _pool_out("avg_pool3d", self, kernel_size, stride, padding, (1, 1, 1), ceil_mode)
    table = window_table(self._shape[-3:], kernel_size, s, padding, (1, 1, 1), outs)
    vals, _ = _windows(self, table, 3, 0.0)
    total = vals.sum(-1)
    if divisor_override is not None:
        mean = total / divisor_override
    else:
        div = _avg_divisors(self._shape[-3:], kernel_size, s, padding, outs, count_include_pad)
        mean = total / _tensor(div.astype(np.float64), dtype=self._dtype, device=self._device)
    return mean.reshape(self._shape[:-3] + outs)


# ---- adaptive 3-D pooling ----------------------------------------------------------------------


def _check_adaptive(op: str, self, output_size) -> None:
    if len(self._shape) not in (4, 5) or shape_numel(self._shape[-4:]) == 0:
        raise RuntimeError(f"{op}(): Expected 4D or 5D tensor, but got {list(self._shape)}")
    if not self._dtype.is_floating_point:
        raise RuntimeError(f"{op}(): \"{op}\" not implemented for '{self._dtype.name}'")
    if len(output_size) != 3:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be 3")
    if min(output_size) <= 0:
        raise RuntimeError(
            f"{op}(): elements of output_size must be greater than or equal to 0 "
            f"but received {list(output_size)}"
        )


def _meta_adaptive_avg_pool3d(self, output_size):
    _check_adaptive("adaptive_avg_pool3d", self, output_size)
    return (self._shape[:-3] + tuple(output_size), self._dtype, self._device)


def adaptive_mean(x, dim: int, out_size: int):
    """Average pooling of dimension `dim` of `x` to `out_size` adaptive bins."""
    size = x._shape[dim]
    if out_size == size:
        return x
    if out_size == 1:
        return x.mean(dim, keepdim=True)
    parts = [
        x.narrow(dim, s, e - s).mean(dim, keepdim=True) for s, e in adaptive_bins(size, out_size)
    ]
    return _op("cat")(parts, dim)


def _adaptive_avg_pool3d(self, output_size):
    """Average pooling of (N, C, D, H, W) or (C, D, H, W) input to `output_size` bins (bins
    are products of per-dim ranges, so the pooling separates)."""
    x = self
    for i, o in enumerate(output_size):
        x = adaptive_mean(x, len(self._shape) - 3 + i, o)
    return x


def _meta_adaptive_max_pool3d(self, output_size):
    _check_adaptive("adaptive_max_pool3d", self, output_size)
    shape = self._shape[:-3] + tuple(output_size)
    return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]


def _adaptive_max_pool3d(self, output_size):
    """(max over each adaptive bin, flat D*H*W index of the max) of (N, C, D, H, W) or
    (C, D, H, W) input."""
    outs = tuple(output_size)
    vals, index = _windows(self, bin_table(self._shape[-3:], outs), 3, 0.0)
    return _first_max(self, vals, index, 3, outs)


# ---- fractional max pooling --------------------------------------------------------------------


def _fractional_meta(n: int):
    op = f"fractional_max_pool{n}d"

    def meta(self, kernel_size, output_size, random_samples):
        _check_input(op, self, n)
        _check_window(op, "kernel_size", kernel_size, n)
        _check_window(op, "output_size", output_size, n)
        sizes = self._shape[-n:]
        for k, o, sz, what in zip(
            kernel_size, output_size, sizes, ("time", "height", "width")[3 - n :]
        ):
            # PyTorch's 3-D check is strict, its 2-D one is not
            if o + k - 1 > sz or (n == 3 and o + k - 1 == sz):
                raise RuntimeError(
                    f"{op}(): pool {what} {k} too large relative to input {what} {sz}"
                )
        batch = self._shape[0] if len(self._shape) == n + 2 else 1
        planes = self._shape[-n - 1]
        if random_samples._dtype is not self._dtype or tuple(random_samples._shape) != (
            batch,
            planes,
            n,
        ):
            raise RuntimeError(
                f"{op}(): expected _random_samples of shape "
                f"[{batch}, {planes}, {n}] and dtype {self._dtype.name}, got "
                f"{list(random_samples._shape)} and "
                f"{random_samples._dtype.name}"
            )
        shape = self._shape[:-n] + tuple(output_size)
        return [(shape, self._dtype, self._device), (shape, dt.int64, self._device)]

    meta.__name__ = f"meta_{op}"
    return meta


def _fractional_tables(
    samples: np.ndarray, sizes: tuple, kernel: tuple, outs: tuple, ftype
) -> np.ndarray:
    """(planes, O, K) window tables, one per plane. PyTorch's samples list the dims from the
    last (W first in 2-D); in 3-D they are (T, H, W)."""
    n = len(sizes)
    order = [1, 0] if n == 2 else [0, 1, 2]
    tables = []
    for plane in samples.reshape(-1, n):
        starts = [
            fractional_starts(plane[order[d]], sizes[d], outs[d], kernel[d], ftype)
            for d in range(n)
        ]
        tables.append(start_table(starts, kernel, sizes))
    return np.stack(tables)


def _fractional(n: int):
    def impl(self, kernel_size, output_size, random_samples):
        sizes, outs = self._shape[-n:], tuple(output_size)
        ftype = np.float64 if self._dtype is dt.float64 else np.float32
        # a shape-only device (meta) has no samples to read; any windows give its shapes
        host = (
            random_samples.detach().cpu().numpy()
            if holds_data(random_samples)
            else np.zeros(random_samples._shape)
        )
        tables = _fractional_tables(host, sizes, tuple(kernel_size), outs, ftype)
        batched = len(self._shape) == n + 2
        x = self if batched else self.unsqueeze(0)
        lead = x._shape[:-n]
        table = _index(tables.reshape(lead + (-1,)), self._device)
        flat = x.reshape(lead + (-1,))
        vals = flat.gather(-1, table).reshape(lead + tables.shape[1:])
        best = vals.argmax(-1, keepdim=True)
        idx = table.reshape(vals._shape).gather(-1, best).squeeze(-1)
        values = flat.gather(-1, idx).reshape(lead + outs)
        idx = idx.reshape(lead + outs)
        if not batched:
            return values.squeeze(0), idx.squeeze(0)
        return values, idx

    impl.__name__ = f"_fractional_max_pool{n}d"
    impl.__doc__ = (
        f"(max over pseudo-random windows, flat index of the max) of fractional "
        f"max pooling of {n + 2}-D or unbatched input; windows placed by "
        f"`random_samples` (N, C, {n}) in [0, 1)."
    )
    return impl


def _declare_all() -> None:
    fn: dict[str, Any] = dict(family="nn", method=False, out=False)
    pool = "Tensor self, int[3] kernel_size, int[3]? stride=None, int[3] padding=0"
    declare(
        f"max_pool3d_with_indices({pool}, int[3] dilation=1, bool ceil_mode=False) -> "
        f"(Tensor, Tensor)",
        _meta_max_pool3d_with_indices,
        impl=_max_pool3d_with_indices,
        function=False,
        **fn,
    )
    declare(
        f"max_pool3d({pool}, int[3] dilation=1, bool ceil_mode=False, "
        f"bool return_indices=False) -> Any",
        impl=_max_pool3d,
        **fn,
    )
    declare(
        f"avg_pool3d({pool}, bool ceil_mode=False, bool count_include_pad=True, "
        f"int? divisor_override=None) -> Tensor",
        _meta_avg_pool3d,
        impl=_avg_pool3d,
        function=False,
        **fn,
    )
    declare(
        "adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor",
        _meta_adaptive_avg_pool3d,
        impl=_adaptive_avg_pool3d,
        function=False,
        **fn,
    )
    declare(
        "adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)",
        _meta_adaptive_max_pool3d,
        impl=_adaptive_max_pool3d,
        function=False,
        **fn,
    )
    for n in (2, 3):
        declare(
            f"fractional_max_pool{n}d(Tensor self, int[{n}] kernel_size, "
            f"int[{n}] output_size, Tensor random_samples) -> (Tensor, Tensor)",
            _fractional_meta(n),
            impl=_fractional(n),
            function=False,
            **fn,
        )


_declare_all()
