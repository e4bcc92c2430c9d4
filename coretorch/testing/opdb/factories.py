"""OpInfos of factories, fills, random ops and copies (coretorch/ops/factories.py, copy.py).

Factories take no tensor: their SampleInput.input is the size (or first argument) and
``device=`` names the device under test. Random ops are checked for shape, dtype, range and
reproducibility under `coretorch.manual_seed`, not for values.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, ErrorInput, OpInfo, SampleInput
from .common import attach_error_cases, error_case

BOOL = (_dt.bool,)
DTYPES = ALL + BOOL + (_dt.float16,)


def _dev(m, **kw):
    return dict(kw, device=m.device)


def _size_samples(op, m, dtype):
    yield SampleInput((2, 3), (), _dev(m, dtype=dtype), "tuple-size")
    yield SampleInput(4, (), _dev(m, dtype=dtype), "int-size")
    yield SampleInput((), (), _dev(m, dtype=dtype), "0-d")
    yield SampleInput((0, 3), (), _dev(m, dtype=dtype), "zero-size")


def _varargs_size_samples(op, m, dtype):
    from ...ops.factories_public import tensor

    yield from _size_samples(op, m, dtype)
    yield SampleInput(2, (3, 1), _dev(m, dtype=dtype), "varargs-size")
    yield SampleInput((tensor(2), 3), (), _dev(m, dtype=dtype), "0-d-tensor-in-size")


def _np_size(size, *more):
    if more:
        return (size,) + tuple(more)
    return (size,) if isinstance(size, int) else tuple(int(s) for s in size)


def _np_factory(fill):
    def ref(size, *more, dtype=None, device=None, requires_grad=False, **_):
        shape = _np_size(size, *more)
        return fill(shape, dtype or np.float32)

    return ref


def _full_samples(op, m, dtype):
    v = True if dtype is _dt.bool else (2.5 if dtype.is_floating_point else 7)
    yield SampleInput((2, 3), (v,), _dev(m, dtype=dtype), "tuple-size")
    yield SampleInput((), (v,), _dev(m, dtype=dtype), "0-d")
    yield SampleInput((0, 2), (v,), _dev(m, dtype=dtype), "zero-size")
    if dtype is _dt.float32:
        yield SampleInput((2,), (1.5,), _dev(m), "inferred-float")
    if dtype is _dt.int64:
        yield SampleInput((2,), (3,), _dev(m), "inferred-int")


def _full_ref(size, fill_value, *, dtype=None, device=None, **_):
    if dtype is None:
        dtype = (
            np.bool_
            if isinstance(fill_value, bool)
            else (np.int64 if isinstance(fill_value, int) else np.float32)
        )
    return np.full(_np_size(size), fill_value, dtype=dtype)


def _eye_samples(op, m, dtype):
    yield SampleInput(3, (), _dev(m, dtype=dtype), "square")
    yield SampleInput(2, (4,), _dev(m, dtype=dtype), "wide")
    yield SampleInput(0, (), _dev(m, dtype=dtype), "empty")


def _arange_samples(op, m, dtype):
    yield SampleInput(5, (), _dev(m, dtype=dtype), "end")
    yield SampleInput(2, (9, 3), _dev(m, dtype=dtype), "start-end-step")
    yield SampleInput(5, (0, -2), _dev(m, dtype=dtype), "negative-step")
    yield SampleInput(3, (3,), _dev(m, dtype=dtype), "empty")
    if dtype is _dt.float32:
        yield SampleInput(0.0, (1.0, 0.25), _dev(m), "inferred-float")
    if dtype is _dt.int64:
        yield SampleInput(4, (), _dev(m), "inferred-int")


def _arange_ref(start, end=None, step=1, *, dtype=None, device=None, **_):
    if end is None:
        start, end = 0, start
    if dtype is None:
        dtype = np.float32 if any(isinstance(v, float) for v in (start, end, step)) else np.int64
    return np.arange(start, end, step, dtype=np.float64).astype(dtype)


def _linspace_samples(op, m, dtype):
    yield SampleInput(0.0, (1.0, 5), _dev(m, dtype=dtype), "unit")
    yield SampleInput(-2.0, (3.0, 1), _dev(m, dtype=dtype), "one-step")
    yield SampleInput(1.0, (0.0, 0), _dev(m, dtype=dtype), "zero-steps")


def _linspace_ref(start, end, steps, *, dtype=None, device=None, **_):
    return np.linspace(start, end, steps).astype(dtype or np.float32)


def _logspace_samples(op, m, dtype):
    yield SampleInput(0.0, (2.0, 5), _dev(m, dtype=dtype), "decades")
    yield SampleInput(-1.0, (3.0, 4, 2.0), _dev(m, dtype=dtype), "base-2")
    yield SampleInput(1.0, (1.0, 1), _dev(m, dtype=dtype), "one-step")
    yield SampleInput(1.0, (0.0, 0), _dev(m, dtype=dtype), "zero-steps")


def _logspace_ref(start, end, steps, base=10.0, *, dtype=None, device=None, **_):
    return np.logspace(start, end, steps, base=base).astype(dtype or np.float32)


def _like_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="same")
    yield SampleInput(m.make((3, 2), layout="transposed"), name="transposed")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((2, 3)), kwargs=dict(dtype=_dt.float64), name="dtype-kwarg")


def _full_like_samples(op, m, dtype):
    v = True if dtype is _dt.bool else 3
    yield SampleInput(m.make((2, 3)), (v,), name="same")
    yield SampleInput(m.make(()), (v,), name="0-d")
    yield SampleInput(m.make((2, 3)), (v,), dict(dtype=_dt.float64), name="dtype-kwarg")


def _like_ref(fill):
    def ref(x, *args, dtype=None, **_):
        return fill(x.shape, dtype or x.dtype, *args)

    return ref


def _empty_strided_samples(op, m, dtype):
    yield SampleInput((2, 3), ((3, 1),), _dev(m, dtype=dtype), "contiguous")
    yield SampleInput((2, 3), ((1, 2),), _dev(m, dtype=dtype), "column-major")
    yield SampleInput((0, 3), ((3, 1),), _dev(m, dtype=dtype), "zero-size")


# ---- fills and copies (in place on their input) --------------------------------------------


def _fill_samples(op, m, dtype):
    v = True if dtype is _dt.bool else (2.5 if dtype.is_floating_point else 7)
    yield SampleInput(m.make((2, 3)), (v,), name="scalar")
    yield SampleInput(m.make((3, 4), layout="transposed"), (v,), name="transposed")
    yield SampleInput(m.make((3, 4), layout="sliced"), (v,), name="sliced")
    yield SampleInput(m.make(()), (v,), name="0-d")
    yield SampleInput(m.make((0, 2)), (v,), name="zero-size")
    yield SampleInput(m.make((2, 3)), (m.make((), values=v),), name="0-d-tensor-value")


def _zero_samples(op, m, dtype):
    for s in _fill_samples(op, m, dtype):
        yield SampleInput(s.input, (), {}, s.name)


def _copy_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), (m.make((2, 3)),), name="same")
    yield SampleInput(
        m.make((3, 4), layout="transposed"),
        (m.make((3, 4), layout="sliced"),),
        name="noncontiguous",
    )
    yield SampleInput(m.make((3, 4)), (m.make((4,)),), name="broadcast")
    yield SampleInput(m.make((2, 3)), (m.make((2, 3), dtype=_dt.float64),), name="from-float64")
    yield SampleInput(m.make((2, 3)), (m.make((2, 3), dtype=_dt.int32),), name="from-int32")
    yield SampleInput(m.make((2, 3)), (m.make((2, 3), dtype=_dt.bool),), name="from-bool")
    yield SampleInput(m.make(()), (m.make(()),), name="0-d")
    yield SampleInput(m.make((0, 2)), (m.make((0, 2)),), name="zero-size")


def _copy_ref(x, src, non_blocking=False):
    return np.broadcast_to(src, x.shape).astype(x.dtype)


def _clone_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="contiguous")
    yield SampleInput(m.make((3, 4), layout="transposed"), name="transposed")
    yield SampleInput(m.make((3, 4), layout="expanded"), name="expanded")
    yield SampleInput(m.make(()), name="0-d")
    yield SampleInput(m.make((0, 2)), name="zero-size")


def _to_copy_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3)), name="same")
    for other in (_dt.float64, _dt.int32, _dt.bool, _dt.float16):
        yield SampleInput(
            m.make((3, 2), layout="transposed"), (), dict(dtype=other), name=f"to-{other.name}"
        )
    yield SampleInput(m.make((2, 3)), (), dict(device=m.device), name="same-device")


def _to_copy_ref(x, *, dtype=None, device=None, **_):
    with np.errstate(all="ignore"):
        return x.astype(dtype or x.dtype)


def _torch_to_copy(x, *, dtype=None, device=None, **_):
    import torch

    return torch.ops.aten._to_copy(x, dtype=dtype)


# ---- random -----------------------------------------------------------------------------------


def _assert_within(values, lo, hi, *, hi_included: bool = False) -> None:
    below_hi = values <= hi if hi_included else values < hi
    assert ((values >= lo) & below_hi).all(), (
        f"values outside [{lo}, {hi}{']' if hi_included else ')'}: {values}"
    )


def _low_high(bounds: tuple) -> tuple:
    """(low, high) of randint's ``(high,)`` or ``(low, high)`` bounds."""
    return (0, bounds[0]) if len(bounds) == 1 else bounds[:2]


def _in_unit(values, s):
    _assert_within(values, 0, 1)


def _uniform_range(values, s):
    # float rounding of low + (high - low) * u can reach high
    lo, hi = (s.args + (0.0, 1.0)[len(s.args) :])[:2]
    _assert_within(values, lo, hi, hi_included=True)


def _finite(values, s):
    assert np.isfinite(values).all(), f"non-finite normal samples: {values}"


def _randint_range(values, s):
    bounds = (s.input,) + tuple(a for a in s.args if not isinstance(a, tuple))
    _assert_within(values, *_low_high(bounds))


def _random_range(values, s):
    _assert_within(values, *s.args[:2])


def _zero_one(values, s):
    assert np.isin(values, (0, 1)).all(), f"bernoulli values other than 0/1: {values}"


def _permutation(values, s):
    assert np.array_equal(np.sort(values), np.arange(s.input)), f"not a permutation: {values}"


def _rand_samples(op, m, dtype):
    yield SampleInput((4, 5), (), _dev(m, dtype=dtype), "tuple-size")
    yield SampleInput(3, (4,), _dev(m, dtype=dtype), "varargs")
    yield SampleInput((0, 2), (), _dev(m, dtype=dtype), "zero-size")


def _randint_samples(op, m, dtype):
    yield SampleInput(10, ((4, 5),), _dev(m, dtype=dtype), "high-size")
    yield SampleInput(-3, (3, (30,)), _dev(m, dtype=dtype), "low-high-size")
    yield SampleInput(5, ((0,),), _dev(m, dtype=dtype), "zero-size")


def _randint_ref(low, high=None, size=None, *, dtype=None, **_):
    size = high if size is None else size
    return np.empty(size, dtype or np.int64)


def _randperm_samples(op, m, dtype):
    yield SampleInput(10, (), _dev(m, dtype=dtype), "ten")
    yield SampleInput(0, (), _dev(m, dtype=dtype), "empty")


def _rand_like_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), name="same")
    yield SampleInput(m.make((3, 2), layout="transposed"), name="transposed")
    yield SampleInput(m.make((0, 3)), name="zero-size")


def _randint_like_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), (10,), name="high")
    yield SampleInput(m.make((30,)), (-3, 3), name="low-high")


def _randint_like_range(values, s):
    _assert_within(values, *_low_high(s.args))


def _uniform_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), name="default")
    yield SampleInput(m.make((30,)), (-2.0, 5.0), name="range")
    yield SampleInput(m.make((5, 4), layout="transposed"), name="transposed")
    yield SampleInput(m.make((0, 2)), name="zero-size")


def _normal_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), name="default")
    yield SampleInput(m.make((30,)), (3.0, 0.5), name="mean-std")
    yield SampleInput(m.make((5, 4), layout="sliced"), name="sliced")


def _random_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5)), (0, 10), name="0-10")
    yield SampleInput(m.make((30,)), (-3, 3), name="negative-low")


def _bernoulli_samples(op, m, dtype):
    yield SampleInput(m.make((4, 5), low=0, high=1), name="probabilities")
    yield SampleInput(m.make((30,), low=0, high=1), name="long")
    if op.name == "bernoulli_":
        yield SampleInput(m.make((4, 5)), (0.3,), name="scalar-p")


def _like_shape_ref(x, *a, dtype=None, **_):
    return np.empty(x.shape, dtype or x.dtype)


def _randperm_ref(n, *, dtype=None, **_):
    return np.empty((n,), dtype or np.int64)


def _random(name: str, dtypes, ref, value_range, samples, **kwargs) -> OpInfo:
    """The OpInfo of a random op: its values are checked against `value_range` (the reference
    gives only shape and dtype); no autograd. `kwargs` go to OpInfo."""
    return OpInfo(
        name,
        dtypes=dtypes,
        ref=ref,
        value_range=value_range,
        sample_inputs_func=samples,
        random=True,
        supports_autograd=False,
        **kwargs,
    )


OPS: list[OpInfo] = [
    OpInfo(
        "empty",
        dtypes=DTYPES,
        ref=_np_factory(np.empty),
        check_values=False,
        sample_inputs_func=_varargs_size_samples,
    ),
    OpInfo(
        "empty_strided",
        dtypes=DTYPES,
        check_values=False,
        ref=lambda size, stride, *, dtype=None, **_: np.empty(size, dtype),
        sample_inputs_func=_empty_strided_samples,
    ),
    OpInfo(
        "empty_like",
        dtypes=DTYPES,
        check_values=False,
        ref=_like_shape_ref,
        sample_inputs_func=_like_samples,
    ),
    OpInfo(
        "zeros", dtypes=DTYPES, ref=_np_factory(np.zeros), sample_inputs_func=_varargs_size_samples
    ),
    OpInfo(
        "ones", dtypes=DTYPES, ref=_np_factory(np.ones), sample_inputs_func=_varargs_size_samples
    ),
    OpInfo("full", dtypes=DTYPES, ref=_full_ref, sample_inputs_func=_full_samples),
    OpInfo(
        "eye",
        dtypes=DTYPES,
        ref=lambda n, mm=None, *, dtype=None, **_: np.eye(n, mm, dtype=dtype),
        sample_inputs_func=_eye_samples,
    ),
    OpInfo("arange", dtypes=ALL, ref=_arange_ref, sample_inputs_func=_arange_samples),
    OpInfo(
        "linspace",
        dtypes=FLOATS,
        ref=_linspace_ref,
        sample_inputs_func=_linspace_samples,
        tol={_dt.float32: (1e-6, 1e-6)},
    ),
    OpInfo("logspace", dtypes=FLOATS, ref=_logspace_ref, sample_inputs_func=_logspace_samples),
    OpInfo("zeros_like", dtypes=DTYPES, ref=_like_ref(np.zeros), sample_inputs_func=_like_samples),
    OpInfo("ones_like", dtypes=DTYPES, ref=_like_ref(np.ones), sample_inputs_func=_like_samples),
    OpInfo(
        "full_like",
        dtypes=DTYPES,
        ref=_like_ref(lambda shape, dtype, v: np.full(shape, v, dtype)),
        sample_inputs_func=_full_like_samples,
    ),
    OpInfo(
        "fill_",
        dtypes=DTYPES,
        ref=lambda x, v: np.full_like(x, v),
        sample_inputs_func=_fill_samples,
        torch_ref=lambda x, v: x.clone().fill_(v),
    ),
    OpInfo(
        "zero_",
        dtypes=DTYPES,
        ref=np.zeros_like,
        sample_inputs_func=_zero_samples,
        torch_ref=lambda x: x.clone().zero_(),
    ),
    OpInfo(
        "_copy_",
        dtypes=DTYPES,
        ref=_copy_ref,
        sample_inputs_func=_copy_samples,
        torch_ref=lambda x, src: x.clone().copy_(src),
    ),
    OpInfo(
        "copy_",
        dtypes=DTYPES,
        ref=_copy_ref,
        sample_inputs_func=_copy_samples,
        torch_ref=lambda x, src: x.clone().copy_(src),
    ),
    OpInfo("clone", dtypes=DTYPES, ref=lambda x, **_: x.copy(), sample_inputs_func=_clone_samples),
    OpInfo(
        "_to_copy",
        dtypes=DTYPES,
        ref=_to_copy_ref,
        torch_ref=_torch_to_copy,
        sample_inputs_func=_to_copy_samples,
    ),
    # random ops: values checked against a range, not a reference
    _random("rand", FLOATS, _np_factory(np.empty), _in_unit, _rand_samples),
    _random("randn", FLOATS, _np_factory(np.empty), _finite, _rand_samples),
    _random("randint", ALL, _randint_ref, _randint_range, _randint_samples),
    _random(
        "randperm",
        (_dt.int64, _dt.int32, _dt.float32),
        _randperm_ref,
        _permutation,
        _randperm_samples,
    ),
    _random("rand_like", FLOATS, _like_shape_ref, _in_unit, _rand_like_samples),
    _random("randn_like", FLOATS, _like_shape_ref, _finite, _rand_like_samples),
    _random("randint_like", ALL, _like_shape_ref, _randint_like_range, _randint_like_samples),
    _random("uniform_", FLOATS, _like_shape_ref, _uniform_range, _uniform_samples),
    _random("normal_", FLOATS, _like_shape_ref, _finite, _normal_samples),
    _random("random_", ALL, _like_shape_ref, _random_range, _random_samples),
    _random("bernoulli_", FLOATS, _like_shape_ref, _zero_one, _bernoulli_samples),
    _random("bernoulli", FLOATS, _like_shape_ref, _zero_one, _bernoulli_samples),
]


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


def _on(m, **kw):
    return dict(kw, device=m.device)


def _factory_error(
    name: str, size, args: tuple = (), error: type = RuntimeError, match: str = "", **kwargs
):
    """A refused factory call (on the device under test: its ``device=`` is the maker's)."""

    def build(m) -> ErrorInput:
        return ErrorInput(SampleInput(size, args, _on(m, **kwargs), name=name), error, match)

    return build


_NEGATIVE = r"Trying to create tensor with negative dimension -1"
_ERRORS = {
    "empty": [
        _factory_error("negative", (2, -1), match=_NEGATIVE),
        _factory_error(
            "float-size", (2.0, 3), error=TypeError, match=r"empty\(\): argument 'size'"
        ),
    ],
    "zeros": [_factory_error("negative", (-1,), match=_NEGATIVE)],
    "ones": [_factory_error("negative", (-1, 2), match=_NEGATIVE)],
    "full": [
        _factory_error("negative", (-1,), (1.0,), match=_NEGATIVE),
        _factory_error(
            "int-size",
            3,
            (1.0,),
            error=TypeError,
            match=r"full\(\): argument 'size' \(position 1\) must be tuple "
            r"of ints",
        ),
    ],
    "empty_strided": [
        _factory_error(
            "length-mismatch", (2, 3), ((1,),), match="mismatch in length of strides and shape"
        )
    ],
    "eye": [_factory_error("negative", -1, match=r"eye\(\): n and m must be non-negative")],
    "arange": [
        _factory_error("zero-step", 0, (5, 0), match=r"arange\(\): step must be nonzero"),
        _factory_error("wrong-sign", 5, (0, 1), match="inconsistent with step sign"),
    ],
    "linspace": [
        _factory_error(
            "negative-steps", 0.0, (1.0, -1), match="number of steps must be non-negative"
        )
    ],
    "logspace": [
        _factory_error(
            "negative-steps",
            0.0,
            (1.0, -1),
            match=r"logspace\(\): number of steps must be non-negative",
        )
    ],
    "randint": [
        _factory_error("empty-range", 5, (5, (3,)), match="expects 'from' to be less than 'to'")
    ],
    "rand": [_factory_error("negative", (-1,), match=_NEGATIVE)],
    "fill_": [
        error_case(
            "overflow",
            _t(2, dtype=_dt.int8),
            (1000,),
            match="value cannot be converted to type int8 without overflow",
        ),
        error_case("1-d-value", _t(2), (_t(1),), match="only supports 0-dimension value tensor"),
    ],
    "_copy_": [
        error_case(
            "no-broadcast",
            _t(2, 3),
            (_t(3, 2),),
            match=r"copy_\(\): the source of shape \[3, 2\] can't be broadcast",
        )
    ],
    "copy_": [
        error_case(
            "no-broadcast",
            _t(2, 3),
            (_t(4),),
            match=r"copy_\(\): the source of shape \[4\] can't be broadcast",
        )
    ],
    "uniform_": [
        error_case(
            "integer",
            _t(3, dtype=_dt.int64),
            error=NotImplementedError,
            match=r"uniform_\(\): not implemented for 'int64'",
        ),
        error_case(
            "from-above-to",
            _t(3),
            (2.0, 1.0),
            match=r"uniform_\(\): expects to return a \[from, to\) range",
        ),
    ],
    "normal_": [error_case("negative-std", _t(3), (0.0, -1.0), match="expected std >= 0.0")],
    "random_": [
        error_case("empty-range", _t(3), (3, 3), match="expects 'from' to be less than 'to'"),
        error_case(
            "out-of-dtype", _t(3, dtype=_dt.uint8), (0, 300), match="to be in the range of uint8"
        ),
    ],
    "bernoulli_": [error_case("p-above-1", _t(3), (1.5,), match="expects p to be in")],
    "bernoulli": [error_case("p-below-0", _t(3), (), {"p": -0.5}, match="expects p to be in")],
}
attach_error_cases(OPS, _ERRORS)
