"""OpInfos of exponential_, cauchy_, log_normal_ and geometric_: values checked against each
distribution's support (their statistics are tested in tests/test_random.py)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case


def _shape_ref(x, *a, **_):
    return np.empty(x.shape, x.dtype)


def _samples(*args):
    def samples(op, m, dtype):
        yield SampleInput(m.make((4, 5)), args, name="plain")
        yield SampleInput(m.make((5, 4), layout="transposed"), args, name="transposed")
        yield SampleInput(m.make((0, 3)), args, name="zero-size")

    return samples


def _positive(values, s):
    assert (values >= 0).all() and np.isfinite(values).all(), f"not in [0, inf): {values}"


def _finite_or_not_nan(values, s):
    assert not np.isnan(values).any(), f"NaN among Cauchy samples: {values}"


def _counts(values, s):
    assert (values >= 1).all() and (values == np.round(values)).all(), (
        f"not trial counts 1, 2, ...: {values}"
    )


def _op(name, dtypes, value_range, samples) -> OpInfo:
    return OpInfo(
        name,
        dtypes=dtypes,
        ref=_shape_ref,
        value_range=value_range,
        sample_inputs_func=samples,
        random=True,
        supports_autograd=False,
    )


OPS = [
    _op("exponential_", FLOATS, _positive, _samples(2.0)),
    _op("cauchy_", FLOATS, _finite_or_not_nan, _samples(1.0, 0.5)),
    _op("log_normal_", FLOATS, _positive, _samples(0.0, 0.5)),
    _op("geometric_", ALL, _counts, _samples(0.3)),
]


def _t(*shape, dtype=None):
    return lambda m: m.make(shape, dtype=dtype)


attach_error_cases(
    OPS,
    {
        "exponential_": [
            error_case("lambda", _t(3), (-1.0,), match=r"expects lambda > 0.0"),
            error_case(
                "integer",
                _t(3, dtype=_dt.int64),
                error=NotImplementedError,
                match=r"exponential_\(\): not implemented for 'int64'",
            ),
        ],
        "cauchy_": [error_case("sigma", _t(3), (0.0, 0.0), match=r"expects sigma > 0.0")],
        "log_normal_": [error_case("std", _t(3), (1.0, -2.0), match=r"expects std > 0.0")],
        "geometric_": [error_case("p", _t(3), (1.5,), match=r"expects p to be in \(0, 1\)")],
    },
)
