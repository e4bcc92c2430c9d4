"""OpInfos of the elementwise ops (coretorch/ops/pointwise.py, pointwise_composites.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, ALL_INT, BF16_STEPS_TOL, FLOATS, INTS, ErrorInput, OpInfo, SampleInput
from .common import (
    binary_error_inputs,
    binary_samples,
    quiet,
    torch_nn,
    unary_error_inputs,
    unary_samples,
)

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
F16 = (_dt.float16,)
BOOL = (_dt.bool,)


def _keep(fn):
    """A float-valued numpy function that keeps float inputs' dtype (np.vectorize gives f64)."""

    def ref(x, *a, **k):
        out = np.asarray(fn(x, *a, **k))
        return out.astype(x.dtype) if x.dtype.kind == "f" else out

    return quiet(ref)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _softplus(x, beta=1.0, threshold=20.0):
    bx = x * beta
    return np.where(bx > threshold, x, np.log1p(np.exp(bx)) / beta)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)).astype(x.dtype))


def _nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    return np.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)


def _sign(x):
    # torch.sign(nan) is 0, numpy's is nan
    return x if x.dtype == np.bool_ else np.where(np.isnan(x), 0, np.sign(x)).astype(x.dtype)


# name: (numpy ref, dtypes, sample options)
_UNARY: dict[str, tuple[Any, Any, dict]] = {
    "abs": (np.abs, ALL + F16, dict(special=True)),
    "neg": (np.negative, ALL + F16, dict(special=True)),
    "sign": (_sign, ALL + BOOL, dict(special=True)),
    "sgn": (_sign, ALL + BOOL, dict(special=True)),
    "deg2rad": (
        lambda x: np.deg2rad(x).astype(x.dtype if x.dtype.kind == "f" else np.float32),
        ALL,
        {},
    ),
    "rad2deg": (
        lambda x: np.rad2deg(x).astype(x.dtype if x.dtype.kind == "f" else np.float32),
        ALL,
        {},
    ),
    "floor": (np.floor, ALL, dict(special=True)),
    "ceil": (np.ceil, ALL, dict(special=True)),
    "trunc": (np.trunc, ALL, dict(special=True)),
    "frac": (lambda x: x - np.trunc(x), FLOATS, {}),
    "relu": (lambda x: np.maximum(x, 0).astype(x.dtype), ALL, {}),
    "square": (np.square, ALL, {}),
    "positive": (lambda x: x, ALL, {}),
    "exp": (np.exp, ALL + F16, dict(special=True)),
    "exp2": (np.exp2, ALL, {}),
    "expm1": (np.expm1, ALL, {}),
    "log": (np.log, ALL, dict(low=0.1, special=True)),
    "log2": (np.log2, ALL, dict(low=0.1)),
    "log10": (np.log10, ALL, dict(low=0.1)),
    "log1p": (np.log1p, ALL, dict(low=-0.9)),
    "sqrt": (np.sqrt, ALL, dict(low=0, special=True)),
    "rsqrt": (lambda x: 1 / np.sqrt(x), ALL, dict(low=0.1)),
    "sin": (np.sin, ALL, {}),
    "cos": (np.cos, ALL, {}),
    "tan": (np.tan, ALL, dict(low=-1.5, high=1.5)),
    "asin": (np.arcsin, FLOATS, dict(low=-1, high=1)),
    "acos": (np.arccos, FLOATS, dict(low=-1, high=1)),
    "atan": (np.arctan, ALL, {}),
    "sinh": (np.sinh, ALL, {}),
    "cosh": (np.cosh, ALL, {}),
    "tanh": (np.tanh, ALL, dict(special=True)),
    "asinh": (np.arcsinh, ALL, {}),
    "acosh": (np.arccosh, ALL, dict(low=1, high=9)),
    "atanh": (np.arctanh, FLOATS, dict(low=-0.9, high=0.9)),
    "sigmoid": (_sigmoid, ALL, {}),
    "erf": (_keep(_erf), ALL, {}),
    "erfc": (_keep(_erfc), ALL, {}),
    "erfinv": (None, FLOATS, dict(low=-0.95, high=0.95)),
    "reciprocal": (lambda x: 1 / x, FLOATS, dict(low=0.5)),
    "silu": (lambda x: x * _sigmoid(x), FLOATS, {}),
    "mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), FLOATS, {}),
    "hardsigmoid": (lambda x: np.clip(x / 6 + 0.5, 0, 1).astype(x.dtype), FLOATS, {}),
    "hardswish": (lambda x: (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype), FLOATS, {}),
    "logical_not": (np.logical_not, ALL + BOOL, {}),
    "isnan": (np.isnan, FLOATS + INTS, dict(special=True)),
    "isinf": (np.isinf, FLOATS + INTS, dict(special=True)),
    "isfinite": (np.isfinite, FLOATS + INTS, dict(special=True)),
    "isposinf": (np.isposinf, FLOATS + INTS, dict(special=True)),
    "isneginf": (np.isneginf, FLOATS + INTS, dict(special=True)),
    "signbit": (np.signbit, FLOATS + INTS, dict(special=True)),
    "bitwise_not": (np.invert, ALL_INT + BOOL, {}),
    "round": (np.round, FLOATS, dict(special=True)),
    "nan_to_num": (_nan_to_num, FLOATS, dict(special=True)),
    "leaky_relu": (
        lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope).astype(x.dtype),
        FLOATS,
        {},
    ),
    "gelu": (_gelu, FLOATS, {}),
    "softplus": (_softplus, FLOATS, {}),
    "elu": (
        lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)).astype(x.dtype),
        FLOATS,
        {},
    ),
    "hardtanh": (
        lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val).astype(x.dtype),
        FLOATS,
        {},
    ),
    "relu6": (lambda x: np.clip(x, 0, 6).astype(x.dtype), ALL, {}),
    "selu": (
        lambda x: (_SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x))).astype(x.dtype),
        FLOATS,
        {},
    ),
    "celu": (
        lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x / alpha)).astype(x.dtype),
        FLOATS,
        {},
    ),
    "log_sigmoid": (lambda x: -_softplus(-x), FLOATS, {}),
    "softsign": (lambda x: x / (1 + np.abs(x)), FLOATS, {}),
    "tanhshrink": (lambda x: x - np.tanh(x), FLOATS, {}),
}
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

# extra samples with keyword arguments
_UNARY_KWARGS: dict[str, list] = {
    "round": [dict(decimals=2)],
    "nan_to_num": [dict(nan=1.5, posinf=100.0, neginf=-100.0)],
    "leaky_relu": [dict(negative_slope=0.2)],
    "gelu": [dict(approximate="tanh")],
    "softplus": [dict(beta=2.0, threshold=5.0)],
    "elu": [dict(alpha=0.5)],
    "hardtanh": [dict(min_val=-2.0, max_val=3.0)],
    "celu": [dict(alpha=0.5)],
}


def _unary_sample_func(opts: dict, extra_kwargs: list):
    def samples(op, m, dtype):
        yield from unary_samples(op, m, dtype, **opts)
        for kw in extra_kwargs:
            yield SampleInput(
                m.make((3, 4), low=opts.get("low"), high=opts.get("high")),
                kwargs=dict(kw),
                name=f"kwargs{sorted(kw)}",
            )

    return samples


_TORCH_NN = {
    "leaky_relu",
    "gelu",
    "softplus",
    "elu",
    "hardtanh",
    "silu",
    "mish",
    "hardsigmoid",
    "hardswish",
    "relu6",
    "selu",
    "celu",
    "softsign",
    "tanhshrink",
}
_TORCH_NAMES = {"log_sigmoid": "logsigmoid"}


# extra refusals: name -> [(args, kwargs, dtype the input must have, error type, match)]
_UNARY_ERRORS: dict[str, list] = {
    "relu": [((), {}, _dt.bool, RuntimeError, "Boolean inputs not supported")],
    "neg": [((), {}, _dt.bool, RuntimeError, "Negation, the `-` operator, on a bool")],
    "abs": [((), {}, _dt.bool, NotImplementedError, "not implemented for 'Bool'")],
    "floor": [((), {}, _dt.bool, NotImplementedError, "not implemented for 'Bool'")],
    "positive": [((), {}, _dt.bool, RuntimeError, "on a bool tensor is not supported")],
    "frac": [((), {}, _dt.int64, NotImplementedError, "frac")],
    "gelu": [((), dict(approximate="cubic"), None, RuntimeError, "approximate must be")],
    "hardtanh": [((2.0, 1.0), {}, None, ValueError, "min_val cannot be greater")],
    "round": [((), dict(decimals=2), _dt.int64, NotImplementedError, "decimals")],
    "celu": [((0.0,), {}, None, RuntimeError, "alpha cannot be 0")],
    "bitwise_not": [((), {}, _dt.float32, TypeError, "expected an integer or bool tensor")],
}


def _unary_errors(name: str):
    def errors(op, m, dtype):
        yield from unary_error_inputs(op, m, dtype)
        for args, kwargs, need, etype, match in _UNARY_ERRORS.get(name, []):
            x = m.make((3,)) if need is None else m.make((3,)).to(need)
            yield ErrorInput(
                SampleInput(x, args, kwargs, name=f"refused-{match[:20]}"), etype, match
            )

    return errors


_BINARY_ERRORS: dict[str, list] = {
    "sub": [(_dt.bool, {}, RuntimeError, "Subtraction, the `-` operator, with a bool")],
    "div": [(None, dict(rounding_mode="round"), ValueError, "expected rounding_mode")],
    "add": [(_dt.int64, dict(alpha=0.5), RuntimeError, "alpha must not be a floating")],
}


def _binary_errors(name: str):
    def errors(op, m, dtype):
        yield from binary_error_inputs(op, m, dtype)
        for need, kwargs, etype, match in _BINARY_ERRORS.get(name, []):
            x = m.make((3,)) if need is None else m.make((3,)).to(need)
            yield ErrorInput(
                SampleInput(x, (x.clone(),), kwargs, name=f"refused-{name}"), etype, match
            )

    return errors


def _unary_infos() -> list[OpInfo]:
    out = []
    for name, (ref, dtypes, opts) in _UNARY.items():
        tref = {"torch_ref": torch_nn(name)} if name in _TORCH_NN else {}
        if name in _TORCH_NAMES:
            tref = {"torch_ref": torch_nn(_TORCH_NAMES[name])}
        tol = {_dt.float16: (1e-3, 1e-3)}
        if name in (
            "erf",
            "erfc",
            "gelu",
            "mish",
            "tan",
            "sinh",
            "cosh",
            "expm1",
            "exp2",
            "softplus",
        ):
            tol[_dt.float32] = (1e-5, 1e-5)
        if name == "gelu":
            tol[_dt.bfloat16] = BF16_STEPS_TOL
        out.append(
            OpInfo(
                name,
                dtypes=dtypes,
                ref=quiet(ref) if ref else None,
                tol=tol,
                sample_inputs_func=_unary_sample_func(opts, _UNARY_KWARGS.get(name, [])),
                error_inputs_func=_unary_errors(name),
                **tref,
            )
        )
    return out


# ---- binary -----------------------------------------------------------------------------------


def _add(a, b, alpha=1):
    return a + b * alpha if alpha != 1 else np.add(a, b)


def _sub(a, b, alpha=1):
    return a - b * alpha if alpha != 1 else np.subtract(a, b)


def _div(a, b, rounding_mode=None):
    if rounding_mode is None:
        return np.true_divide(a, b)
    q = np.true_divide(a, b)
    r = np.trunc(q) if rounding_mode == "trunc" else np.floor(q)
    res = np.result_type(a, b)
    return r.astype(res) if np.issubdtype(res, np.integer) else r


def _xlogy(x, y):
    return np.where(x == 0, np.where(np.isnan(y), np.nan, 0.0), x * np.log(y))


_BINARY: dict[str, tuple[Any, Any, dict]] = {
    # name: (ref, dtypes, sample options)
    "add": (_add, ALL + F16 + BOOL, {}),
    "sub": (_sub, ALL + F16, {}),
    "rsub": (lambda a, b, alpha=1: np.subtract(b, a * alpha if alpha != 1 else a), ALL, {}),
    "mul": (np.multiply, ALL + F16 + BOOL, {}),
    "div": (_div, ALL + F16, dict(rhs_nonzero=True)),
    "pow": (np.power, ALL, dict(low=0.5, high=3, rhs_low=0, rhs_high=3)),
    "maximum": (np.maximum, ALL + BOOL, dict(special=True)),
    "minimum": (np.minimum, ALL + BOOL, dict(special=True)),
    "remainder": (np.remainder, ALL, dict(rhs_nonzero=True)),
    "fmod": (np.fmod, ALL, dict(rhs_nonzero=True)),
    "floor_divide": (np.floor_divide, ALL, dict(rhs_nonzero=True)),
    "fmax": (np.fmax, ALL, dict(special=True)),
    "fmin": (np.fmin, ALL, dict(special=True)),
    "atan2": (np.arctan2, ALL, {}),
    "hypot": (np.hypot, FLOATS, {}),
    "logaddexp": (np.logaddexp, FLOATS, {}),
    "logaddexp2": (np.logaddexp2, FLOATS, {}),
    "xlogy": (_xlogy, FLOATS, dict(rhs_low=0.1)),
    "eq": (np.equal, ALL + BOOL, {}),
    "ne": (np.not_equal, ALL + BOOL, {}),
    "lt": (np.less, ALL + BOOL, {}),
    "le": (np.less_equal, ALL + BOOL, {}),
    "gt": (np.greater, ALL + BOOL, {}),
    "ge": (np.greater_equal, ALL + BOOL, {}),
    "logical_and": (np.logical_and, ALL + BOOL, {}),
    "logical_or": (np.logical_or, ALL + BOOL, {}),
    "logical_xor": (np.logical_xor, ALL + BOOL, {}),
    "bitwise_and": (np.bitwise_and, ALL_INT + BOOL, dict(int_only=True)),
    "bitwise_or": (np.bitwise_or, ALL_INT + BOOL, dict(int_only=True)),
    "bitwise_xor": (np.bitwise_xor, ALL_INT + BOOL, dict(int_only=True)),
    "bitwise_left_shift": (
        np.left_shift,
        ALL_INT,
        dict(int_only=True, low=0, high=8, rhs_low=0, rhs_high=4),
    ),
    "bitwise_right_shift": (
        np.right_shift,
        ALL_INT,
        dict(int_only=True, low=0, high=100, rhs_low=0, rhs_high=4),
    ),
}

_BINARY_KWARGS: dict[str, list] = {
    "add": [dict(alpha=2)],
    "sub": [dict(alpha=2)],
    "rsub": [dict(alpha=2)],
    "div": [dict(rounding_mode="trunc"), dict(rounding_mode="floor")],
}


def _binary_sample_func(name: str, opts: dict, extra: list):
    def samples(op, m, dtype):
        o = dict(opts)
        if dtype is _dt.bool and name in ("add", "mul"):
            o["float_scalar"] = False
        if name == "pow" and not dtype.is_floating_point:
            o.update(low=0, high=4)
        yield from binary_samples(op, m, dtype, **o)
        for kw in extra:
            if kw.get("alpha") and dtype is _dt.bool:
                continue
            yield SampleInput(
                m.make((3, 4), low=o.get("low"), high=o.get("high")),
                (
                    m.make(
                        (3, 4),
                        low=o.get("rhs_low"),
                        high=o.get("rhs_high"),
                        exclude_zero=o.get("rhs_nonzero", False),
                    ),
                ),
                dict(kw),
                f"kwargs{kw}",
            )

    return samples


def _torch_scalar_other(name: str):
    """torch.<name> with a Python-scalar `other` as a 0-d tensor of the dtype PyTorch's scalar
    promotion gives (torch.maximum, atan2, logical_and... take tensors only)."""

    def ref(a, b, **k):
        import torch

        if not isinstance(b, torch.Tensor):
            b = torch.tensor(b, dtype=torch.result_type(a, b))
        return getattr(torch, name)(a, b, **k)

    return ref


def _binary_infos() -> list[OpInfo]:
    out = []
    for name, (ref, dtypes, opts) in _BINARY.items():
        tol = {_dt.float16: (1e-3, 1e-3)}
        if name in ("pow", "logaddexp", "logaddexp2", "atan2", "hypot", "xlogy"):
            tol[_dt.float32] = (1e-5, 1e-5)
        if name in ("remainder", "fmod", "floor_divide"):
            # float32 division near an integer: one ulp of the quotient can move the result
            tol[_dt.float32] = (1e-5, 1e-4)
        out.append(
            OpInfo(
                name,
                dtypes=dtypes,
                ref=quiet(ref),
                tol=tol,
                torch_ref=_torch_scalar_other(name),
                error_inputs_func=_binary_errors(name),
                sample_inputs_func=_binary_sample_func(name, opts, _BINARY_KWARGS.get(name, [])),
            )
        )
    return out


# ---- ternary ----------------------------------------------------------------------------------


def _where_samples(op, m, dtype):
    yield SampleInput(m.mask((3, 4)), (m.make((3, 4)), m.make((3, 4))), name="same-shape")
    yield SampleInput(m.mask((3, 1)), (m.make((1, 4)), m.make((4,))), name="broadcast")
    yield SampleInput(
        m.mask((3, 4)),
        (m.make((3, 4), layout="transposed"), m.make((3, 4), layout="sliced")),
        name="noncontiguous",
    )
    yield SampleInput(m.mask(()), (m.make(()), m.make(())), name="0-d")
    yield SampleInput(m.mask((0, 2)), (m.make((0, 2)), m.make((0, 2))), name="zero-size")
    yield SampleInput(m.mask((3,)), (m.make((3,)), 0), name="scalar-other")
    if dtype is not _dt.float64:
        yield SampleInput(
            m.mask((3,)), (m.make((3,)), m.make((3,), dtype=_dt.float64)), name="mixed-dtype"
        )


def _clamp_samples(op, m, dtype):
    lo, hi = (-2.5, 3.5) if dtype.is_floating_point else (-2, 3)
    yield SampleInput(m.make((3, 4)), (lo, hi), name="scalars")
    yield SampleInput(m.make((3, 4)), (), dict(min=lo), name="min-only")
    yield SampleInput(m.make((3, 4)), (None, hi), name="max-only")
    yield SampleInput(m.make((4, 3), layout="transposed"), (lo, hi), name="transposed")
    yield SampleInput(m.make(()), (lo, hi), name="0-d")
    yield SampleInput(m.make((0, 3)), (lo, hi), name="zero-size")
    yield SampleInput(
        m.make((3, 4)), (m.make((4,), low=-9, high=0), m.make((3, 1), low=0)), name="tensor-bounds"
    )
    yield SampleInput(m.make((3,)), (hi, lo), name="min-above-max")


def _clamp_ref(x, min=None, max=None):  # noqa: A002
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _lerp_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (m.make((3, 4)), 0.3), name="scalar-weight")
    yield SampleInput(m.make((3, 4)), (m.make((4,)), 0.7), name="broadcast-end")
    yield SampleInput(
        m.make((3, 4)), (m.make((3, 4)), m.make((3, 4), low=0, high=1)), name="tensor-weight"
    )
    yield SampleInput(
        m.make((4, 3), layout="transposed"),
        (m.make((4, 3), layout="sliced"), 0.5),
        name="noncontiguous",
    )
    yield SampleInput(m.make(()), (m.make(()), 0.25), name="0-d")
    yield SampleInput(m.make((0, 2)), (m.make((0, 2)), 0.5), name="zero-size")


def _addc_samples(nonzero: bool):
    def samples(op, m, dtype):
        def t2(shape, **kw):
            return m.make(shape, low=0.5 if nonzero else None, **kw)

        yield SampleInput(m.make((3, 4)), (m.make((3, 4)), t2((3, 4))), name="same-shape")
        yield SampleInput(m.make((3, 4)), (m.make((4,)), t2((3, 1))), name="broadcast")
        value = 0.5 if dtype.is_floating_point else 3
        yield SampleInput(
            m.make((3, 4)), (m.make((3, 4)), t2((3, 4))), dict(value=value), name="value"
        )
        yield SampleInput(
            m.make((4, 3), layout="transposed"),
            (m.make((4, 3), layout="sliced"), t2((4, 3))),
            name="noncontiguous",
        )
        yield SampleInput(m.make(()), (m.make(()), t2(())), name="0-d")
        yield SampleInput(m.make((0, 3)), (m.make((0, 3)), t2((0, 3))), name="zero-size")

    return samples


def _one_bound_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (0.5 if dtype.is_floating_point else 1,), name="scalar")
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="tensor-bound")
    yield SampleInput(m.make((4, 3), layout="transposed"), (m.make(()),), name="0-d-bound")
    yield SampleInput(m.make((0, 3)), (1,), name="zero-size")


def _threshold_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), (0.5 if dtype.is_floating_point else 1, -2), name="scalars")
    yield SampleInput(m.make((4, 3), layout="transposed"), (0, 7), name="transposed")
    yield SampleInput(m.make(()), (0, 1), name="0-d")


def _glu(x, dim=-1):
    a, b = np.split(x, 2, axis=dim)
    return (a * _sigmoid(b)).astype(x.dtype)


def _glu_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="last-dim")
    yield SampleInput(m.make((4, 3)), (0,), name="dim-0")
    yield SampleInput(m.make((2, 6, 2), layout="transposed"), (1,), name="transposed")


def _ternary_infos() -> list[OpInfo]:
    return [
        OpInfo(
            "where",
            dtypes=ALL + BOOL,
            ref=lambda c, x, y: np.where(c, x, y),
            sample_inputs_func=_where_samples,
        ),
        OpInfo("clamp", dtypes=ALL, ref=_clamp_ref, sample_inputs_func=_clamp_samples),
        OpInfo(
            "clamp_min",
            dtypes=ALL,
            ref=lambda x, lo: _clamp_ref(x, lo, None),
            sample_inputs_func=_one_bound_samples,
        ),
        OpInfo(
            "clamp_max",
            dtypes=ALL,
            ref=lambda x, hi: _clamp_ref(x, None, hi),
            sample_inputs_func=_one_bound_samples,
        ),
        OpInfo(
            "threshold",
            dtypes=FLOATS + INTS,
            ref=lambda x, t, v: np.asarray(np.where(x > t, x, v)).astype(x.dtype),
            torch_ref=torch_nn("threshold"),
            sample_inputs_func=_threshold_samples,
        ),
        OpInfo(
            "glu",
            dtypes=FLOATS,
            ref=_glu,
            torch_ref=torch_nn("glu"),
            sample_inputs_func=_glu_samples,
        ),
        OpInfo(
            "lerp",
            dtypes=FLOATS,
            ref=quiet(lambda s, e, w: s + w * (e - s)),
            sample_inputs_func=_lerp_samples,
            tol={_dt.float32: (1e-5, 1e-5), _dt.bfloat16: BF16_STEPS_TOL},
        ),
        OpInfo(
            "addcmul",
            dtypes=FLOATS + INTS,
            ref=lambda s, a, b, value=1: s + value * a * b,
            sample_inputs_func=_addc_samples(False),
            tol={_dt.float32: (1e-5, 1e-5)},
        ),
        OpInfo(
            "addcdiv",
            dtypes=FLOATS,
            ref=quiet(lambda s, a, b, value=1: s + value * a / b),
            sample_inputs_func=_addc_samples(True),
            tol={_dt.float32: (1e-5, 1e-5)},
        ),
    ]


# ---- pointwise composites (isclose / allclose / equal) -------------------------------------


def _close_samples(op, m, dtype):
    a = m.make((3, 4))
    yield SampleInput(a, (a.clone(),), name="identical")
    yield SampleInput(m.make((3, 4)), (m.make((3, 4)),), name="different")
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="broadcast")
    if dtype.is_floating_point:
        x = m.make((4,), values=[1.0, float("nan"), 2.0, float("inf")])
        y = m.make((4,), values=[1.0 + 1e-7, float("nan"), 2.1, float("inf")])
        yield SampleInput(x, (y,), name="nan-inf")
        yield SampleInput(x, (y,), dict(equal_nan=True), name="nan-inf-equal_nan")
        yield SampleInput(x, (y,), dict(rtol=0.1, atol=0.0), name="loose-rtol")
    yield SampleInput(m.make(()), (m.make(()),), name="0-d")
    yield SampleInput(m.make((0, 2)), (m.make((0, 2)),), name="zero-size")


def _equal_samples(op, m, dtype):
    a = m.make((3, 4))
    yield SampleInput(a, (a.clone(),), name="identical")
    yield SampleInput(a, (a.t().contiguous().t(),), name="identical-transposed")
    yield SampleInput(m.make((3, 4)), (m.make((3, 4)),), name="different")
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="different-shape")
    yield SampleInput(m.make((0, 2)), (m.make((0, 2)),), name="zero-size")


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def _equal(a, b):
    return a.shape == b.shape and bool((a == b).all())


def _composite_infos() -> list[OpInfo]:
    return [
        OpInfo("isclose", dtypes=ALL, ref=_isclose, sample_inputs_func=_close_samples),
        OpInfo(
            "allclose",
            dtypes=ALL,
            ref=_allclose,
            sample_inputs_func=_close_samples,
            supports_autograd=False,
            data_dependent=True,
        ),
        OpInfo(
            "equal",
            dtypes=ALL + BOOL,
            ref=_equal,
            sample_inputs_func=_equal_samples,
            supports_autograd=False,
            data_dependent=True,
        ),
    ]


OPS: list[OpInfo] = _unary_infos() + _binary_infos() + _ternary_infos() + _composite_infos()
