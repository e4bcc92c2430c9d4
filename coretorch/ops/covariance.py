"""cov and corrcoef of a (variables, observations) matrix (composites of mean, matmul and
sqrt, gradients through them, with numpy's frequency and analytic weights), and sum_to_size."""

from __future__ import annotations

from ..tensor.impl import shape_numel
from ..tensor.tensor import Tensor
from .declare import IMPLICIT, declare
from .meta_rules import float_result

_T = Tensor


def _meta_cov(self, correction, fweights, aweights):
    if len(self._shape) > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an "
            f"input with {len(self._shape)} dimensions"
        )
    n = self._shape[-1] if self._shape else 1
    for name, w, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if w is None:
            continue
        if len(w._shape) > 1:
            raise RuntimeError(
                f"cov(): expected {name} to have one or fewer dimensions but got "
                f"{name} with {len(w._shape)} dimensions"
            )
        if shape_numel(w._shape) != n:
            raise RuntimeError(
                f"cov(): expected {name} to have the same numel as there are "
                f"observations in the input but got {shape_numel(w._shape)} != "
                f"{n}"
            )
        if integral and w._dtype.is_floating_point:
            raise RuntimeError(
                f"cov(): expected fweights to have integral dtype but got "
                f"fweights with {w._dtype.name} dtype"
            )
        if not integral and not w._dtype.is_floating_point:
            raise RuntimeError(
                f"cov(): expected aweights to have floating point dtype but got "
                f"aweights with {w._dtype.name} dtype"
            )
    rows = self._shape[0] if len(self._shape) == 2 else None
    shape = (rows, rows) if rows not in (None, 1) else ()  # PyTorch squeezes one variable
    return (shape, float_result(self._dtype), self._device)


def _cov(self, correction, fweights, aweights):
    """The covariance matrix of the rows of `self` (variables) over its columns
    (observations); a 1-D `self` is one variable (a 0-d result). Weights and `correction` as
    numpy's ``cov(ddof=correction, fweights=, aweights=)``."""
    shape, dtype, _ = _meta_cov(self, correction, fweights, aweights)
    x = self.reshape(1, -1) if len(self._shape) < 2 else self
    x = x.to(dtype)
    w = None
    if fweights is not None:
        w = fweights.reshape(-1).to(dtype)
    if aweights is not None:
        a = aweights.reshape(-1).to(dtype)
        w = a if w is None else w * a
    if w is None:
        n = x._shape[1]
        avg, w_sum, norm = x.mean(1, keepdim=True), n, n - correction
        weighted = x - avg
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.reshape(-1).to(dtype)).sum() / w_sum
        weighted = (x - avg) * w
    c = weighted.matmul((x - avg).transpose(0, 1))
    norm = norm.clamp_min(0) if isinstance(norm, _T) else max(norm, 0)
    return (c / norm).reshape(shape)


def _meta_sum_to_size(self, size):
    size = tuple(size)
    lead = len(self._shape) - len(size)
    if lead < 0 or any(s not in (1, n) for s, n in zip(size, self._shape[lead:])):
        raise RuntimeError(
            f"sum_to_size(): size {{{', '.join(map(str, size))}}} is not "
            f"expandable to size {{{', '.join(map(str, self._shape))}}}."
        )
    return (size, self._dtype, self._device)


def _sum_to_size(self, size):
    """`self` summed down to `size`, a shape it broadcasts from (the leading dims and the
    dims where `size` is 1 are summed)."""
    size = tuple(size)
    lead = len(self._shape) - len(size)
    dims = list(range(lead)) + [
        lead + i for i, s in enumerate(size) if s == 1 and self._shape[lead + i] != 1
    ]
    return (self.sum(dims, keepdim=True) if dims else self).reshape(size)


def _meta_corrcoef(self):
    return _meta_cov(self, 1, None, None)


def _corrcoef(self):
    """Pearson correlation coefficients of the rows of `self` (cov divided by the outer product
    of the standard deviations, clipped to [-1, 1])."""
    c = _cov(self, 1, None, None)
    if not c._shape:
        return c / c
    std = c.diagonal().sqrt()
    return (c / std.unsqueeze(1) / std.unsqueeze(0)).clamp(-1, 1)


declare(
    "cov(Tensor self, *, int correction=1, Tensor? fweights=None, Tensor? aweights=None) -> Tensor",
    _meta_cov,
    impl=_cov,
    kind=IMPLICIT,
    family="reduction",
    out=False,
)
declare(
    "sum_to_size(Tensor self, int[] size) -> Tensor",
    _meta_sum_to_size,
    impl=_sum_to_size,
    kind=IMPLICIT,
    family="reduction",
    out=False,
    function=False,
)
declare(
    "corrcoef(Tensor self) -> Tensor",
    _meta_corrcoef,
    impl=_corrcoef,
    kind=IMPLICIT,
    family="reduction",
    out=False,
)
