"""Host-built index tables of sliding windows and adaptive bins, shared by the window ops
(im2col/col2im, 3-D and fractional pooling, adaptive pooling).

A table lists, for every output position, the flat indices (row-major over the spatial dims)
of the input elements its window reads; -1 marks a position in the padding. Ops gather through
such a table with ``index_select``/``gather``, so their gradients are the matching
``index_add``/``scatter_add`` and no backend needs a kernel of its own.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "window_table",
    "start_table",
    "bin_table",
    "adaptive_bins",
    "fractional_starts",
    "flat_strides",
]


def flat_strides(sizes: tuple) -> list[int]:
    """Row-major strides of a volume of `sizes`."""
    strides, acc = [], 1
    for s in reversed(sizes):
        strides.append(acc)
        acc *= s
    return strides[::-1]


def _combine(per_dim: list[np.ndarray], sizes: tuple) -> np.ndarray:
    """Flat indices of the outer product of per-dim (out_d, k_d) position arrays:
    (prod out_d, prod k_d), -1 where any position is outside [0, size)."""
    n = len(per_dim)
    index = np.zeros([1] * (2 * n), dtype=np.int64)
    valid = np.ones([1] * (2 * n), dtype=bool)
    for d, (pos, size, stride) in enumerate(zip(per_dim, sizes, flat_strides(sizes))):
        shape = [1] * (2 * n)
        shape[d], shape[n + d] = pos.shape
        p = pos.reshape(shape)
        index = index + p * stride
        valid = valid & (p >= 0) & (p < size)
    out = np.where(valid, index, -1)
    outs = int(np.prod([p.shape[0] for p in per_dim]))
    return out.reshape(outs, -1)


def window_table(
    sizes: tuple, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple, out_sizes: tuple
) -> np.ndarray:
    """(prod out, prod kernel) flat input indices of every sliding window (-1 in padding)."""
    per_dim = [
        np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d
        for o, k, s, p, d in zip(out_sizes, kernel, stride, padding, dilation)
    ]
    return _combine(per_dim, sizes)


def start_table(starts: list[np.ndarray], kernel: tuple, sizes: tuple) -> np.ndarray:
    """(prod out, prod kernel) flat indices of windows of `kernel` starting at the per-dim
    positions `starts` (stride 1 inside a window, no padding)."""
    return _combine([s[:, None] + np.arange(k)[None, :] for s, k in zip(starts, kernel)], sizes)


def adaptive_bins(size: int, out: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive bins: [floor(i*size/out), ceil((i+1)*size/out))."""
    return [((i * size) // out, -(-(i + 1) * size // out)) for i in range(out)]


def bin_table(sizes: tuple, out_sizes: tuple) -> np.ndarray:
    """(prod out, K) flat input indices of every adaptive bin; a bin shorter than K along a
    dim repeats its first element there (harmless for max and argmax: the first maximum
    stays first)."""
    per_dim = []
    for size, out in zip(sizes, out_sizes):
        bins = adaptive_bins(size, out)
        k = max(e - s for s, e in bins)
        per_dim.append(
            np.array(
                [[s + j if s + j < e else s for j in range(k)] for s, e in bins], dtype=np.int64
            )
        )
    return _combine(per_dim, sizes)


def fractional_starts(sample: float, size: int, out: int, pool: int, ftype) -> np.ndarray:
    """Window starts of fractional max pooling along one dim (PyTorch's generate_intervals,
    in the input's floating type)."""
    starts = np.empty(out, dtype=np.int64)
    if out > 1:
        alpha = ftype(size - pool) / ftype(out - 1)
        s = ftype(sample)
        for i in range(out - 1):
            starts[i] = int(ftype(i + s) * alpha) - int(s * alpha)
    starts[out - 1] = size - pool
    return starts
