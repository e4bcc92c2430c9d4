"""``_foreach_*`` ops: one elementwise op applied to each tensor of a list (PyTorch's
``torch._foreach_add_`` and friends), the per-op math of the optimizers' ``foreach=True`` path.

They are composites: each element goes through the ordinary per-tensor op (``add_``, ``lerp_``,
``sqrt``, ...), so every backend has them and the values are exactly the per-tensor ops'. The
meta rules check the list structure (PyTorch's overloads are folded into one schema: the second
operand is a Python number, a list of numbers with one per tensor, a list of tensors, or for
add/mul/div a 0-d tensor); each element op checks its own tensors. The in-place forms return
their list, as PyTorch's Python functions do (their schemas return nothing).
"""

from __future__ import annotations

from typing import Any

from ..tensor.tensor import Tensor
from .declare import REGISTRY, _check_inplace_spec, declare

__all__ = ["per_tensor"]

_T = Tensor
_NUMBERS = (int, float, bool)


def _check_list(op: str, tensors: tuple) -> int:
    if len(tensors) == 0:
        raise RuntimeError(f"{op}(): Tensor list must have at least one tensor.")
    return len(tensors)


def _check_lists(op: str, first: tuple, *others: tuple) -> int:
    n = _check_list(op, first)
    for other in others:
        if len(other) != n:
            raise RuntimeError(
                f"{op}(): Tensor lists must have the same number of tensors, got "
                f"{n} and {len(other)}"
            )
    return n


def per_tensor(
    op: str, name: str, value, n: int, *, tensors: bool = True, tensor: bool = False
) -> tuple:
    """`value` as one operand per list element: a number repeated, a list of numbers or (with
    `tensors`) of tensors one per element, or (with `tensor`) a 0-d tensor repeated."""
    if value.__class__ in _NUMBERS:
        return (value,) * n
    if isinstance(value, _T):
        if tensor:
            if len(value._shape) != 0:
                raise RuntimeError(
                    f"{op}(): scalar tensor expected to be 0 dim but it has "
                    f"{len(value._shape)} dimensions and {value.numel()} "
                    f"elements."
                )
            return (value,) * n
    elif isinstance(value, (list, tuple)):
        if all(v.__class__ in _NUMBERS for v in value):
            if len(value) != n:
                raise RuntimeError(
                    f"{op}(): Tensor list must have same number of elements as scalar list."
                )
            return tuple(value)
        if tensors and all(isinstance(v, _T) for v in value):
            if len(value) != n:
                raise RuntimeError(
                    f"{op}(): Tensor lists must have the same number of "
                    f"tensors, got {n} and {len(value)}"
                )
            return tuple(value)
    kinds = "a Number, a list of Numbers" + (" or a list of Tensors" if tensors else "")
    if tensor:
        kinds = "a Number, a 0-d Tensor, a list of Numbers or a list of Tensors"
    raise TypeError(f"{op}(): argument '{name}' must be {kinds}, not {type(value).__name__}")


def _element_specs(name: str, *lists) -> list:
    """The Spec of each element op (its meta rule checks that element's tensors)."""
    meta = REGISTRY[name].meta
    return [meta(*args) for args in zip(*lists)]


# ---- binary: add, mul, div, maximum -----------------------------------------------------------


def _meta_add(self, other, alpha):
    n = _check_list("_foreach_add", self)
    return _element_specs(
        "add", self, per_tensor("_foreach_add", "other", other, n, tensor=True), (alpha,) * n
    )


def _foreach_add(self, other, alpha):
    """[s + alpha * o for each element]"""
    n = len(self)
    return [
        t.add(o, alpha=alpha)
        for t, o in zip(self, per_tensor("_foreach_add", "other", other, n, tensor=True))
    ]


def _meta_inplace_binary(op: str, tensor: bool, tensors: bool = True):
    def meta(self, other, *rest):
        per_tensor(op, "other", other, _check_list(op, self), tensor=tensor, tensors=tensors)

    meta.__name__ = f"meta{op}"
    return meta


def _meta_add_(self, other, alpha):
    """Each element as ``add_`` checks it (a float tensor plus a number always passes), all on
    one device: it has a kernel of its own on kit backends (the optimizers' step counters),
    which checks nothing."""
    op = "_foreach_add_"
    meta = REGISTRY["add"].meta
    dev = self[0]._device if self else None
    for t, o in zip(self, per_tensor(op, "other", other, _check_list(op, self), tensor=True)):
        if t._device != dev:
            raise RuntimeError(
                f"{op}(): expected all tensors of self on one device, got {dev} and {t._device}"
            )
        if o.__class__ not in _NUMBERS or not t._dtype.is_floating_point:
            _check_inplace_spec(op, t, meta(t, o, alpha))


def _foreach_add_(self, other, alpha):
    """s += alpha * o for each element"""
    for t, o in zip(self, per_tensor("_foreach_add_", "other", other, len(self), tensor=True)):
        t.add_(o, alpha=alpha)
    return list(self)


def _foreach_mul_(self, other):
    """s *= o for each element"""
    for t, o in zip(self, per_tensor("_foreach_mul_", "other", other, len(self), tensor=True)):
        t.mul_(o)
    return list(self)


def _foreach_div_(self, other):
    """s /= o for each element"""
    for t, o in zip(self, per_tensor("_foreach_div_", "other", other, len(self), tensor=True)):
        t.div_(o)
    return list(self)


def _foreach_maximum_(self, other):
    """s = maximum(s, o) for each element (NaN propagates)"""
    maximum = REGISTRY["maximum"].op.entry
    for t, o in zip(self, per_tensor("_foreach_maximum_", "other", other, len(self))):
        maximum(t, o, out=t)
    return list(self)


# ---- ternary: lerp, addcmul, addcdiv ----------------------------------------------------------


def _meta_lerp_(self, tensors1, weight):
    n = _check_lists("_foreach_lerp_", self, tensors1)
    per_tensor("_foreach_lerp_", "weight", weight, n)


def _foreach_lerp_(self, tensors1, weight):
    """s = lerp(s, e, w) for each element"""
    for t, e, w in zip(self, tensors1, per_tensor("_foreach_lerp_", "weight", weight, len(self))):
        t.lerp_(e, w)
    return list(self)


def _meta_addc_(op: str):
    def meta(self, tensor1, tensor2, value):
        n = _check_lists(op, self, tensor1, tensor2)
        per_tensor(op, "value", value, n, tensors=False)

    meta.__name__ = f"meta{op}"
    return meta


def _meta_addcmul(self, tensor1, tensor2, value):
    n = _check_lists("_foreach_addcmul", self, tensor1, tensor2)
    return _element_specs(
        "addcmul",
        self,
        tensor1,
        tensor2,
        per_tensor("_foreach_addcmul", "value", value, n, tensors=False),
    )


def _foreach_addcmul(self, tensor1, tensor2, value):
    """[s + v * t1 * t2 for each element]"""
    values = per_tensor("_foreach_addcmul", "value", value, len(self), tensors=False)
    return [t.addcmul(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, values)]


def _foreach_addcmul_(self, tensor1, tensor2, value):
    """s += v * t1 * t2 for each element"""
    values = per_tensor("_foreach_addcmul_", "value", value, len(self), tensors=False)
    for t, a, b, v in zip(self, tensor1, tensor2, values):
        t.addcmul_(a, b, value=v)
    return list(self)


def _foreach_addcdiv_(self, tensor1, tensor2, value):
    """s += v * t1 / t2 for each element"""
    values = per_tensor("_foreach_addcdiv_", "value", value, len(self), tensors=False)
    for t, a, b, v in zip(self, tensor1, tensor2, values):
        t.addcdiv_(a, b, value=v)
    return list(self)


# ---- unary: sqrt, neg ---------------------------------------------------------------------------


def _meta_unary(name: str):
    def meta(self):
        _check_list(f"_foreach_{name}", self)
        return _element_specs(name, self)

    meta.__name__ = f"meta_foreach_{name}"
    return meta


def _meta_sqrt_(self):
    _check_list("_foreach_sqrt_", self)


def _foreach_sqrt(self):
    """[sqrt(s) for each element]"""
    return [t.sqrt() for t in self]


def _foreach_sqrt_(self):
    """s = sqrt(s) for each element"""
    for t in self:
        t.sqrt_()
    return list(self)


def _foreach_neg(self):
    """[-s for each element]"""
    return [t.neg() for t in self]


def _declare_all() -> None:
    fe: dict[str, Any] = dict(family="foreach", method=False, out=False)
    # in-place forms return nothing and are not differentiated (PyTorch's refuse autograd too)
    ip: dict[str, Any] = dict(fe, differentiable=False)
    declare(
        "_foreach_add(Tensor[] self, Any other, *, Scalar alpha=1) -> Tensor[]",
        _meta_add,
        impl=_foreach_add,
        **fe,
    )
    declare(
        "_foreach_add_(Tensor(a!)[] self, Any other, *, Scalar alpha=1) -> ()",
        _meta_add_,
        impl=_foreach_add_,
        **ip,
    )
    declare(
        "_foreach_mul_(Tensor(a!)[] self, Any other) -> ()",
        _meta_inplace_binary("_foreach_mul_", True),
        impl=_foreach_mul_,
        **ip,
    )
    declare(
        "_foreach_div_(Tensor(a!)[] self, Any other) -> ()",
        _meta_inplace_binary("_foreach_div_", True),
        impl=_foreach_div_,
        **ip,
    )
    declare(
        "_foreach_maximum_(Tensor(a!)[] self, Any other) -> ()",
        _meta_inplace_binary("_foreach_maximum_", False),
        impl=_foreach_maximum_,
        **ip,
    )
    declare(
        "_foreach_lerp_(Tensor(a!)[] self, Tensor[] tensors1, Any weight) -> ()",
        _meta_lerp_,
        impl=_foreach_lerp_,
        **ip,
    )
    declare(
        "_foreach_addcmul(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, Any value=1) "
        "-> Tensor[]",
        _meta_addcmul,
        impl=_foreach_addcmul,
        **fe,
    )
    declare(
        "_foreach_addcmul_(Tensor(a!)[] self, Tensor[] tensor1, Tensor[] tensor2, "
        "Any value=1) -> ()",
        _meta_addc_("_foreach_addcmul_"),
        impl=_foreach_addcmul_,
        **ip,
    )
    declare(
        "_foreach_addcdiv_(Tensor(a!)[] self, Tensor[] tensor1, Tensor[] tensor2, "
        "Any value=1) -> ()",
        _meta_addc_("_foreach_addcdiv_"),
        impl=_foreach_addcdiv_,
        **ip,
    )
    declare(
        "_foreach_sqrt(Tensor[] self) -> Tensor[]", _meta_unary("sqrt"), impl=_foreach_sqrt, **fe
    )
    declare("_foreach_sqrt_(Tensor(a!)[] self) -> ()", _meta_sqrt_, impl=_foreach_sqrt_, **ip)
    declare("_foreach_neg(Tensor[] self) -> Tensor[]", _meta_unary("neg"), impl=_foreach_neg, **fe)


_declare_all()
