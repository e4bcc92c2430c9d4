"""More products, each a composite of mm / bmm / mul and views: tensordot, baddbmm, addbmm,
addmv, addr (beta * self + alpha * product, self ignored when beta = 0, as PyTorch), trace,
kron, inner, vdot and cdist (through the ``norm`` reduction and its derivative)."""

from __future__ import annotations

from typing import Any

from .. import dtypes as dt
from .declare import REGISTRY, declare
from .linalg import meta_dot, scaled_sum
from .meta_rules import broadcast_shapes, broadcasts_to, common_device, promote

__all__ = ["tensordot_dims"]

_P: dict[str, Any] = dict(family="linalg")


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---- tensordot ----------------------------------------------------------------------------------


def tensordot_dims(a, b, dims) -> tuple[list, list]:
    """(dims of a, dims of b) to contract: the last `dims` of a with the first of b, or two
    lists; refuses sizes that differ."""
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(len(a._shape), len(b._shape)):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(len(a._shape) - dims, len(a._shape))), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError(
            f"both dimension lists should have same length, got {len(da)} and {len(db)}"
        )
    da = [d % max(len(a._shape), 1) for d in da]
    db = [d % max(len(b._shape), 1) for d in db]
    for x, y in zip(da, db):
        if a._shape[x] != b._shape[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size "
                f"{a._shape[x]} in dim {x} and second has size {b._shape[y]} in "
                f"dim {y}"
            )
    return da, db


def _meta_tensordot(self, other, dims):
    if self._dtype is not other._dtype:
        raise RuntimeError(
            f"tensordot(): expected both tensors to have the same dtype, but got "
            f"{self._dtype.name} and {other._dtype.name}"
        )
    da, db = tensordot_dims(self, other, dims)
    shape = tuple(s for i, s in enumerate(self._shape) if i not in da) + tuple(
        s for i, s in enumerate(other._shape) if i not in db
    )
    return (shape, self._dtype, common_device("tensordot", self, other))


def _tensordot(self, other, dims):
    """Sum over the paired dims of self and other: one matrix product of the reshaped
    operands (``dims``: a count, or two lists of dims)."""
    da, db = tensordot_dims(self, other, dims)
    fa = [i for i in range(len(self._shape)) if i not in da]
    fb = [i for i in range(len(other._shape)) if i not in db]
    k = _numel(self._shape[d] for d in da)
    a = self.permute(fa + da).reshape(_numel(self._shape[i] for i in fa), k)
    b = other.permute(db + fb).reshape(k, _numel(other._shape[i] for i in fb))
    return a.mm(b).reshape(tuple(self._shape[i] for i in fa) + tuple(other._shape[i] for i in fb))


# ---- baddbmm, addbmm, addmv, addr ---------------------------------------------------------------


def _meta_scaled(name: str, product_meta):
    def meta(self, a, b, beta, alpha):
        shape, dtype, device = product_meta(a, b)
        if self._dtype is not dtype:
            raise RuntimeError(
                f"{name}(): expected self and the product to have the same "
                f"dtype, but got {self._dtype.name} != {dtype.name}"
            )
        if name == "addr" and not dtype.is_floating_point:  # the others truncate (scaled_sum)
            for arg, v in (("beta", beta), ("alpha", alpha)):
                if isinstance(v, float):
                    raise RuntimeError(
                        f"addr(): for integral input tensors, argument {arg} "
                        f"must not be a floating point number, got {v}"
                    )
        if not broadcasts_to(self._shape, shape):
            raise RuntimeError(
                f"{name}(): self of shape {list(self._shape)} can't be broadcast "
                f"to the product's shape {list(shape)}"
            )
        return (shape, dtype, common_device(name, self, a, b))

    meta.__name__ = f"_meta_{name}"
    return meta


def _product_meta(name: str, ranks: tuple, rule):
    """Meta of a product of two tensors of the given ranks, shaped by `rule(a, b)`."""

    def meta(a, b):
        if (len(a._shape), len(b._shape)) != ranks:
            raise RuntimeError(
                f"{name}(): expected {ranks[0]}-D and {ranks[1]}-D tensors, but "
                f"got {len(a._shape)}-D and {len(b._shape)}-D tensors"
            )
        if a._dtype is not b._dtype:
            raise RuntimeError(
                f"{name}(): expected both operands to have the same dtype, but "
                f"got {a._dtype.name} != {b._dtype.name}"
            )
        return (rule(a, b), a._dtype, common_device(name, a, b))

    return meta


def _bmm_rule(a, b):
    (n, i, k), (n2, k2, j) = a._shape, b._shape
    if n != n2 or k != k2:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{n}, {k}] but got: [{n2}, {k2}]."
        )
    return (n, i, j)


def _addbmm_rule(a, b):
    return _bmm_rule(a, b)[1:]


def _mv_rule(a, b):
    if a._shape[1] != b._shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a._shape[0]}x{a._shape[1]}), vec ({b._shape[0]})"
        )
    return a._shape[:1]


def _outer_rule(a, b):
    return (a._shape[0], b._shape[0])


def _baddbmm(self, batch1, batch2, beta, alpha):
    """beta * self + alpha * (batch1 @ batch2), a batch of matrix products."""
    return scaled_sum(self, batch1.bmm(batch2), beta, alpha)


def _addbmm(self, batch1, batch2, beta, alpha):
    """beta * self + alpha * sum_b batch1[b] @ batch2[b] (one mm over the folded batch)."""
    n, i, k = batch1._shape
    j = batch2._shape[2]
    prod = batch1.permute(1, 0, 2).reshape(i, n * k).mm(batch2.reshape(n * k, j))
    return scaled_sum(self, prod, beta, alpha)


def _addmv(self, mat, vec, beta, alpha):
    """beta * self + alpha * (mat @ vec)."""
    return scaled_sum(self, mat.mv(vec), beta, alpha)


def _addr(self, vec1, vec2, beta, alpha):
    """beta * self + alpha * outer(vec1, vec2)."""
    return scaled_sum(self, vec1.outer(vec2), beta, alpha)


# ---- trace, kron, inner, vdot -------------------------------------------------------------------


def _meta_trace(self):
    if len(self._shape) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {len(self._shape)}")
    d = self._dtype
    return ((), d if d.is_floating_point or d.is_complex else dt.int64, self._device)


def _trace(self):
    """The sum of the main diagonal of a matrix (integers sum in int64)."""
    return self.diagonal().sum()


def _kron_shapes(a, b):
    n = max(len(a._shape), len(b._shape))
    sa = (1,) * (n - len(a._shape)) + a._shape
    sb = (1,) * (n - len(b._shape)) + b._shape
    return sa, sb


def _meta_kron(self, other):
    sa, sb = _kron_shapes(self, other)
    return (
        tuple(x * y for x, y in zip(sa, sb)),
        promote(self, other),
        common_device("kron", self, other),
    )


def _kron(self, other):
    """The Kronecker product: block (i, j, ...) is self[i, j, ...] * other."""
    sa, sb = _kron_shapes(self, other)
    d = promote(self, other)
    a = self.to(d).reshape(tuple(v for s in sa for v in (s, 1)))
    b = other.to(d).reshape(tuple(v for s in sb for v in (1, s)))
    return (a * b).reshape(tuple(x * y for x, y in zip(sa, sb)))


def _meta_inner(self, other):
    if self._shape and other._shape and self._shape[-1] != other._shape[-1]:
        raise RuntimeError(
            f"inner() the last dimension must match on both input tensors but "
            f"got shapes {list(self._shape)} and {list(other._shape)}"
        )
    if not self._shape or not other._shape:
        return (
            broadcast_shapes("inner", self._shape, other._shape),
            promote(self, other),
            common_device("inner", self, other),
        )
    if self._dtype is not other._dtype:
        raise RuntimeError(
            f"inner(): expected both inputs to have the same dtype, but got "
            f"{self._dtype.name} and {other._dtype.name}"
        )
    return (self._shape[:-1] + other._shape[:-1], self._dtype, common_device("inner", self, other))


def _inner(self, other):
    """The dot product over the last dims (a product when either is 0-d)."""
    if not self._shape or not other._shape:
        return self * other
    return _tensordot(self, other, ([-1], [-1]))


def _vdot(self, other):
    """The dot product of two 1-D tensors (real dtypes: ``dot``)."""
    return self.dot(other)


# ---- cdist --------------------------------------------------------------------------------------


def _meta_cdist(x1, x2, p, compute_mode):
    for name, x in (("X1", x1), ("X2", x2)):
        if not x._dtype.is_floating_point:
            raise RuntimeError(
                f"cdist only supports floating-point dtypes, {name} got: {x._dtype.name}"
            )
        if len(x._shape) < 2:
            raise RuntimeError(
                f"cdist only supports at least 2D tensors, {name} got: {len(x._shape)}D"
            )
    if x1._dtype is not x2._dtype:
        raise RuntimeError(
            f"cdist(): expected X1 and X2 to have the same dtype, but got "
            f"{x1._dtype.name} and {x2._dtype.name}"
        )
    if x1._shape[-1] != x2._shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: "
            f"{x1._shape[-1]} X2: {x2._shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = broadcast_shapes("cdist", x1._shape[:-2], x2._shape[:-2])
    return (batch + (x1._shape[-2], x2._shape[-2]), x1._dtype, common_device("cdist", x1, x2))


def _cdist(x1, x2, p, compute_mode):
    """The p-norm distance between each row of x1 and each row of x2 (batched)."""
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return REGISTRY["norm"].op.entry(diff, float(p), (-1,))


def _declare_all() -> None:
    declare(
        "tensordot(Tensor self, Tensor other, Any dims=2) -> Tensor",
        _meta_tensordot,
        impl=_tensordot,
        method=False,
        **_P,
    )
    scaled = "(Tensor self, Tensor {0}, Tensor {1}, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
    for name, args, ranks, rule, impl in (
        ("baddbmm", ("batch1", "batch2"), (3, 3), _bmm_rule, _baddbmm),
        ("addbmm", ("batch1", "batch2"), (3, 3), _addbmm_rule, _addbmm),
        ("addmv", ("mat", "vec"), (2, 1), _mv_rule, _addmv),
        ("addr", ("vec1", "vec2"), (1, 1), _outer_rule, _addr),
    ):
        declare(
            name + scaled.format(*args),
            _meta_scaled(name, _product_meta(name, ranks, rule)),
            impl=impl,
            inplace=True,
            **_P,
        )
    declare("trace(Tensor self) -> Tensor", _meta_trace, impl=_trace, **_P)
    declare("kron(Tensor self, Tensor other) -> Tensor", _meta_kron, impl=_kron, **_P)
    declare("inner(Tensor self, Tensor other) -> Tensor", _meta_inner, impl=_inner, **_P)
    declare("vdot(Tensor self, Tensor other) -> Tensor", meta_dot("vdot"), impl=_vdot, **_P)
    declare(
        "cdist(Tensor x1, Tensor x2, float p=2.0, str? compute_mode=None) -> Tensor",
        _meta_cdist,
        impl=_cdist,
        method=False,
        **_P,
    )


_declare_all()
