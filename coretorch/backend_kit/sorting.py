"""The sort kernel on the array API, for any backend that holds its tensors as numpy or CuPy
arrays: ``sort`` is the one sorting primitive (argsort, topk, kthvalue, median, mode, unique,
quantile, ... are composites of it).

The sort is always stable (PyTorch's ``stable=True``; for ``stable=False`` PyTorch promises no
order of ties, so the stable order is a valid answer). NaN compares greater than every number:
last in ascending order, first in descending order, as in PyTorch.
"""

from __future__ import annotations

from .array_kit import kit_of, opmath

__all__ = ["KERNELS"]


def _stable_argsort(xp, a, axis: int):
    # CuPy's sort is always stable and takes no `kind`; numpy's default (quicksort) is not
    if xp.__name__ == "numpy":
        return xp.argsort(a, axis=axis, kind="stable")
    return xp.argsort(a, axis=axis)


def sort(out, self, dim, descending, stable):
    """out = (values, indices) of self sorted along dim (stable; NaN as the largest value)"""
    values, indices = out
    k = kit_of(values)
    xp = k.xp
    a = k.arr(self)
    if a.ndim == 0:
        k.write(values, a)
        k.write(indices, 0)
        return
    # 16-bit floats sort by their exact float32 values (bfloat16's own ordering misplaces NaN)
    key = a.astype(opmath(a.dtype), copy=False)
    if descending:
        # the stable ascending order of the reversed array, reversed: ties keep their order
        idx = xp.flip(_stable_argsort(xp, xp.flip(key, axis=dim), dim), axis=dim)
        idx = (a.shape[dim] - 1) - idx
    else:
        idx = _stable_argsort(xp, key, dim)
    k.write(indices, idx)
    k.write(values, xp.take_along_axis(a, idx, axis=dim))


KERNELS = {"sort": sort}
