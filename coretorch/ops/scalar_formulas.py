"""Scalar formulas of the elementwise ops: what ONE output element is, given one element of each
operand — the form a fusing backend composes into a single loop (`coretorch.compile.fusion`).

    @scalar("add")
    def _add(c, self, other, alpha): ...   # -> "a + b * p0"

A formula receives the op's kernel arguments (the argument record, then any precomputed values:
``eq(c, self, other, common)``): each tensor or Python-number operand as an expression string
(an `Operand`, already cast to the op's compute dtype; ``operand.value`` is the number for a
Python scalar, None for a tensor), every other argument as its Python value. It returns an
expression of the *scalar language* (Python expression syntax over the names of
`coretorch.compile.fusion.VOCABULARY`), or None where the call is not fusable (integer division,
whose eager kernel raises on a zero divisor; float16, which no fusing loop computes in).
``c`` is the formula context: ``c.kind`` ("f", "i", "u" or "b": the compute dtype's kind),
``c.dtype``, ``c.lit(v)`` (a literal of the compute dtype), ``c.param(v, dtype=None)`` (a value
passed at run time, so one kernel serves every value), ``c.let(expr)`` (a temporary).

`compute` gives the dtype the arithmetic runs in from the output dtype and the arguments (the
tensors as their dtypes): by default the output dtype (what the eager kernels' ``opmath`` is for
every dtype a fused loop handles). Operands listed in `raw` keep their own dtype (where's mask).

The formulas repeat the eager cpu kernels' arithmetic expression for expression (literal types
included: ``1.0 + exp(-x)`` computes float32 ``x`` in float64 in numba, as the eager loop
does), so a fused chain gives the eager bits wherever both use the same operations; numpy's
vectorized transcendental functions may differ from libm's in the last place.

Why one table module instead of a field on each ``declare``: the formulas are one small
language shared by unary, binary, activation and optimizer ops declared in six modules; kept
together they show the whole vocabulary a fusing backend must render, and the test that every
elementwise primitive has one (or a reason in `NOT_FUSED`) reads one table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .. import dtypes as dt
from .declare import REGISTRY

__all__ = ["FORMULAS", "LIBM", "NOT_FUSED", "ScalarFormula", "is_scalar", "scalar"]


class ScalarFormula(NamedTuple):
    """What `coretorch.compile.fusion` needs to fuse one op (see the module docstring)."""

    expr: Callable
    compute: Callable
    raw: tuple = ()


FORMULAS: dict[str, ScalarFormula] = {}

# elementwise primitives without a formula, and why (everything else elementwise has one)
NOT_FUSED = {
    "_unary_special": "scipy.special functions (digamma, i0, ...) have no scalar form in numba",
    "_binary_special": "scipy.special functions (gcd, zeta, ...) have no scalar form in numba",
}


def _out_dtype(out, *args):
    return out


def scalar(name: str, compute: Callable = _out_dtype, raw: tuple = ()) -> Callable:
    """Declare the scalar formula of op `name` (decorator)."""
    if name not in REGISTRY:
        raise RuntimeError(f"scalar formula for {name}, which is not a declared op")

    def register(fn: Callable) -> Callable:
        FORMULAS[name] = ScalarFormula(fn, compute, raw)
        return fn

    return register


def is_scalar(x) -> bool:
    """Whether operand `x` is a Python number (its expression is a run-time parameter)."""
    return getattr(x, "value", None) is not None


def _self_dtype(out, self, *args):
    return self


# ---- unary math: the eager kernels' numpy ufuncs / numba loops ----------------------------------

# the unary functions of C's math library the scalar language calls by name (the same name as
# the op; numba compiles each to its libm call)
LIBM = (
    "exp",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
)

# op -> its formula with {0} for the operand
_UNARY = {
    **{name: f"{name}({{0}})" for name in (*LIBM, "abs")},
    "erfinv": "erfinv(float64({0}))",  # the eager loop computes in float64
    "sigmoid": "1.0 / (1.0 + exp(-{0}))",
    "silu": "{0} / (1.0 + exp(-{0}))",
    "neg": "-{0}",
}


def _unary(template: str) -> Callable:
    def formula(c, self):
        return template.format(self)

    return formula


for _name, _template in _UNARY.items():
    scalar(_name)(_unary(_template))


@scalar("gelu")
def _gelu(c, self, approximate):
    if approximate == "tanh":
        return (
            f"0.5 * {self} * (1.0 + tanh({0.7978845608028654!r} * ({self} + 0.044715 * "
            f"{self} * {self} * {self})))"
        )
    return f"0.5 * {self} * (1.0 + erf({self} * {0.7071067811865476!r}))"


# ---- unary ops keeping the dtype ----------------------------------------------------------------


@scalar("sign")
def _sign(c, self):
    if c.kind == "b":
        return self
    # NaN compares false both ways: 0, as PyTorch's sign gives
    return (
        f"({c.lit(1)} if {self} > {c.lit(0)} else ({c.lit(-1)} if {self} < {c.lit(0)} "
        f"else {c.lit(0)}))"
    )


def _rounding(fn: str) -> Callable:
    def formula(c, self):
        return f"{fn}({self})" if c.kind == "f" else self  # integers are already whole

    formula.__name__ = f"_{fn}"
    return formula


for _fn in ("floor", "ceil", "trunc"):
    scalar(_fn)(_rounding(_fn))


@scalar("round")
def _round(c, self, decimals):
    if c.kind != "f":
        return self
    return f"rint({self})" if decimals == 0 else None  # decimals: numpy's scaled around


@scalar("signbit", compute=_self_dtype)
def _signbit(c, self):
    if c.kind == "f":
        return f"copysign(1.0, {self}) < 0.0"
    return f"{self} < {c.lit(0)}" if c.kind == "i" else "False"


@scalar("bitwise_not")
def _bitwise_not(c, self):
    return f"not {self}" if c.kind == "b" else f"~{self}"


@scalar("relu")
def _relu(c, self):
    return _maximum(c, self, c.lit(0))


# ---- binary arithmetic --------------------------------------------------------------------------


def _add_scaled(c, self, other, alpha):
    """self + alpha * other as the eager kernel computes it (alpha == 1 adds other as it is)."""
    if c.kind == "b":
        return f"({self} | {other})" if alpha else self
    if alpha == 1:
        return f"{self} + {other}"
    return f"{self} + {other} * {c.param(alpha)}"


@scalar("add")
def _add(c, self, other, alpha):
    return _add_scaled(c, self, other, alpha)


@scalar("sub")
def _sub(c, self, other, alpha):
    if alpha == 1:
        return f"{self} - {other}"
    return _add_scaled(c, self, other, -alpha)


@scalar("mul")
def _mul(c, self, other):
    return f"({self} & {other})" if c.kind == "b" else f"{self} * {other}"


@scalar("div")
def _div(c, self, other, rounding_mode):
    if c.kind != "f":
        return None  # integer division raises on a zero divisor in eager: left unfused
    if rounding_mode is None:
        return f"{self} / {other}"
    if rounding_mode == "floor":
        return f"{self} // {other}"
    return f"trunc({self} / {other})"


def _float_only(fn: str) -> Callable:
    def formula(c, self, other):
        return f"{fn}({self}, {other})" if c.kind == "f" else None

    formula.__name__ = f"_{fn}"
    return formula


scalar("fmod")(_float_only("fmod"))
scalar("atan2")(_float_only("atan2"))
scalar("hypot")(_float_only("hypot"))


@scalar("remainder")
def _remainder(c, self, other):
    return f"{self} % {other}" if c.kind == "f" else None  # Python's float modulus = numpy's


_SMALL_POWER = 8  # the eager kernel's repeated-multiplication range for float ** integer


def _pow_compute(out, self, exponent):
    return out if out.is_floating_point or out is dt.bool else dt.int64


@scalar("pow", compute=_pow_compute)
def _pow(c, self, exponent):
    e = exponent.value
    if c.kind == "b":  # only bool ** Python bool reaches here: x ** True == x, x ** False == 1
        return self if e else "True"
    if c.kind != "f":
        return f"ipow({self}, {exponent})"
    if not is_scalar(self) and e is not None and float(e).is_integer() and abs(e) <= _SMALL_POWER:
        p = f"powi({self}, {c.param(int(abs(e)), dt.int64)})"
        return f"{c.lit(1)} / {p}" if e < 0 else p
    return f"pow({self}, {exponent})"


def _maximum(c, self, other):
    """numpy's maximum: NaN in either operand propagates."""
    nan = f" or isnan({self})" if c.kind == "f" else ""
    return f"({self} if ({self} >= {other}{nan}) else {other})"


def _minimum(c, self, other):
    nan = f" or isnan({self})" if c.kind == "f" else ""
    return f"({self} if ({self} <= {other}{nan}) else {other})"


scalar("maximum")(_maximum)
scalar("minimum")(_minimum)


def _common(out, self, other, common):
    return common


def _relation(symbol: str) -> Callable:
    def formula(c, self, other, common):
        return f"{self} {symbol} {other}"

    formula.__name__ = f"_relation_{symbol}"
    return formula


scalar("eq", compute=_common)(_relation("=="))
scalar("lt", compute=_common)(_relation("<"))
scalar("le", compute=_common)(_relation("<="))


def _bitwise(symbol: str) -> Callable:
    def formula(c, self, other):
        return f"({self} {symbol} {other})"

    formula.__name__ = f"_bitwise_{symbol}"
    return formula


scalar("bitwise_and")(_bitwise("&"))
scalar("bitwise_or")(_bitwise("|"))
scalar("bitwise_xor")(_bitwise("^"))


def _outside_shift(c, amount) -> str:
    """PyTorch shifts by a negative amount or by the bit width or more to 0 (or the sign)."""
    return f"({amount} < {c.lit(0)} or {amount} >= {c.lit(c.dtype.itemsize * 8)})"


@scalar("bitwise_left_shift")
def _lshift(c, self, other):
    if c.kind == "b":
        return None
    return f"({c.lit(0)} if {_outside_shift(c, other)} else {self} << {other})"


@scalar("bitwise_right_shift")
def _rshift(c, self, other):
    if c.kind == "b":
        return None
    fill = f"{self} >> {c.lit(c.dtype.itemsize * 8 - 1)}" if c.kind == "i" else c.lit(0)
    return f"({fill} if {_outside_shift(c, other)} else {self} >> {other})"


# ---- selection, copies, fills -------------------------------------------------------------------


@scalar("where", raw=(0,))
def _where(c, condition, self, other):
    return f"({self} if {condition} else {other})"


@scalar("_copy_")
def _copy(c, self, src, non_blocking):
    return src  # the cast into self's dtype is the copy


@scalar("fill_")
def _fill(c, self, value):
    return value


# ---- the optimizers' fused ternaries (the eager numba loops' expressions) -----------------------


@scalar("lerp")
def _lerp(c, self, end, weight):
    d = c.let(f"{end} - {self}")
    if is_scalar(weight):
        small = c.let(f"abs({weight}) < 0.5")
        return f"({self} + {weight} * {d} if {small} else {end} - {d} * (1 - {weight}))"
    return f"({self} + {weight} * {d} if abs({weight}) < 0.5 else {end} - {d} * (1.0 - {weight}))"


@scalar("addcmul")
def _addcmul(c, self, tensor1, tensor2, value):
    v = c.param(value)
    if c.kind == "f":
        return f"{self} + {v} * {tensor1} * {tensor2}"
    return f"{self} + {tensor1} * {tensor2} * {v}"


@scalar("addcdiv")
def _addcdiv(c, self, tensor1, tensor2, value):
    return f"{self} + {c.param(value)} * {tensor1} / {tensor2}" if c.kind == "f" else None
