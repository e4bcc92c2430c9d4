"""OpInfos of the ``_foreach_*`` ops (coretorch/ops/foreach.py) and the fused optimizer updates
(coretorch/ops/fused_optim.py).

The foreach ops (the in-place forms return their written list) are compared with numpy and
PyTorch here. The fused updates return nothing: the suite checks that they run on every backend
(meta included), refuse bad lists alike, and that PyTorch's op of the same name accepts each
sample as given (their torch reference); their values are tested against PyTorch and against
the single-tensor optimizers in tests/test_optim_fused*.py.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..opinfo import BF16_STEPS_TOL, FLOATS, OpInfo, SampleInput
from .common import attach_error_cases, error_case

_SHAPES = ((3,), (2, 4), ())
_STEPS_TOL = {_dt.bfloat16: BF16_STEPS_TOL}


def _list(m, low=None, high=None, layout="contiguous", shapes=_SHAPES):
    return [
        m.make(s, low=low, high=high, layout=layout if len(s) > 1 else "contiguous") for s in shapes
    ]


def _operands(m, tensor: bool = True, low=None):
    """The second operand in each of its forms: number, list of numbers, list of tensors (and
    a 0-d tensor)."""
    yield 1.5, "scalar"
    yield [0.5, -2.0, 3.0], "scalar-list"
    yield _list(m, low=low), "tensor-list"
    if tensor:
        yield m.make((), low=low), "0-d-tensor"


def _binary_samples(op, m, dtype, low=None, alpha: bool = False, tensor: bool = True):
    for other, name in _operands(m, tensor, low):
        yield SampleInput(_list(m), (other,), name=name)
    yield SampleInput(_list(m, layout="transposed"), (_list(m, low=low),), name="noncontiguous")
    if alpha:
        yield SampleInput(_list(m), (_list(m),), dict(alpha=-0.5), name="alpha")


def _add_samples(op, m, dtype):
    return _binary_samples(op, m, dtype, alpha=True)


def _div_samples(op, m, dtype):
    return _binary_samples(op, m, dtype, low=0.5)


def _maximum_samples(op, m, dtype):
    return _binary_samples(op, m, dtype, tensor=False)


def _lerp_samples(op, m, dtype):
    yield SampleInput(_list(m), (_list(m), 0.25), name="weight-small")
    yield SampleInput(_list(m), (_list(m), 0.75), name="weight-large")
    yield SampleInput(_list(m), (_list(m), [0.1, 0.6, 0.9]), name="weight-list")


def _addc_samples(op, m, dtype):
    low = 0.5 if op.name.startswith("_foreach_addcdiv") else None
    yield SampleInput(_list(m), (_list(m), _list(m, low=low)), name="default-value")
    yield SampleInput(_list(m), (_list(m), _list(m, low=low), -0.5), name="value")
    yield SampleInput(_list(m), (_list(m), _list(m, low=low), [1.0, 2.0, -3.0]), name="value-list")
    yield SampleInput(
        _list(m, layout="transposed"), (_list(m), _list(m, low=low)), name="noncontiguous"
    )


def _unary_samples(op, m, dtype):
    low = 0.0 if "sqrt" in op.name else None
    yield SampleInput(_list(m, low=low), name="mixed-shapes")
    yield SampleInput(_list(m, low=low, layout="transposed"), name="noncontiguous")
    yield SampleInput([m.make((0, 3))], name="zero-size")


def _per(other, n):
    if isinstance(other, (list, tuple)):
        return list(other)
    return [other] * n


def _add_ref(xs, other, alpha=1):
    return [x + alpha * o for x, o in zip(xs, _per(other, len(xs)))]


def _addcmul_ref(xs, t1, t2, value=1):
    return [x + v * a * b for x, a, b, v in zip(xs, t1, t2, _per(value, len(xs)))]


# ---- fused optimizer updates ---------------------------------------------------------------

_HYPER = dict(lr=0.01, weight_decay=0.1)


def _steps(m, n, value=3.0):
    return [m.make((), values=[value]) for _ in range(n)]


def _adam_samples(op, m, dtype):
    for layout, amsgrad, maximize in (("contiguous", False, False), ("transposed", True, True)):
        n = len(_SHAPES)
        args = (
            _list(m),
            _list(m),
            _list(m, low=0.0),
            _list(m, low=0.0) if amsgrad else [],
            _steps(m, n),
        )
        yield SampleInput(
            _list(m, layout=layout),
            args,
            dict(_HYPER, beta1=0.9, beta2=0.999, eps=1e-8, amsgrad=amsgrad, maximize=maximize),
            name=f"{layout}-amsgrad-{amsgrad}",
        )
    yield SampleInput(
        _list(m),
        (_list(m), _list(m), _list(m, low=0.0), [], _steps(m, 3)),
        dict(
            _HYPER,
            beta1=0.9,
            beta2=0.999,
            eps=1e-8,
            amsgrad=False,
            maximize=False,
            grad_scale=m.make((), dtype=_dt.float32, values=[4.0]),
            found_inf=m.make((), dtype=_dt.float32, values=[0.0]),
        ),
        name="grad-scale",
    )


def _sgd_samples(op, m, dtype):
    kw = dict(_HYPER, dampening=0.0, nesterov=False, maximize=False)
    yield SampleInput(
        _list(m), (_list(m), []), dict(kw, momentum=0.0, is_first_step=False), name="no-momentum"
    )
    yield SampleInput(
        _list(m),
        (_list(m), _list(m)),
        dict(kw, momentum=0.9, nesterov=True, is_first_step=True),
        name="first",
    )
    yield SampleInput(
        _list(m, layout="transposed"),
        (_list(m), _list(m)),
        dict(kw, momentum=0.9, dampening=0.1, maximize=True, is_first_step=False),
        name="noncontiguous-dampening",
    )


def _adagrad_samples(op, m, dtype):
    yield SampleInput(
        _list(m),
        (_list(m), _list(m, low=0.0), _steps(m, 3)),
        dict(_HYPER, lr_decay=0.01, eps=1e-10, maximize=False),
        name="plain",
    )
    yield SampleInput(
        _list(m, layout="transposed"),
        (_list(m), _list(m, low=0.0), _steps(m, 3)),
        dict(_HYPER, lr_decay=0.0, eps=1e-10, maximize=True),
        name="noncontiguous-maximize",
    )


def _rmsprop_samples(op, m, dtype):
    kw = dict(_HYPER, alpha=0.99, eps=1e-8, maximize=False)
    yield SampleInput(
        _list(m),
        (_list(m), _list(m, low=0.0), [], []),
        dict(kw, momentum=0.0, centered=False),
        name="plain",
    )
    # centered: the square average must stay above the squared mean gradient
    yield SampleInput(
        _list(m),
        (_list(m), _list(m, low=100.0, high=101.0), _list(m, low=-1.0, high=1.0), _list(m)),
        dict(kw, momentum=0.9, centered=True),
        name="centered-momentum",
    )


# ---- error inputs ---------------------------------------------------------------------------


def _lists(*sizes, dtype=None):
    """A builder of a list of 1-d tensors of `sizes` (0 for a 0-d tensor)."""
    return lambda m: [m.make((n,) if n else (), dtype=dtype) for n in sizes]


def _ints(*sizes):
    return _lists(*sizes, dtype=_dt.int64)


def _doubles(*sizes):
    def build(m):
        return _lists(*sizes, dtype=_dt.float32 if m.dtype is _dt.float64 else _dt.float64)(m)

    return build


def _empty(m):
    return []


_ADAM_KW = dict(
    lr=0.1, beta1=0.9, beta2=0.99, weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False
)
_SGD_KW = dict(
    weight_decay=0.0,
    momentum=0.9,
    lr=0.1,
    dampening=0.0,
    nesterov=False,
    maximize=False,
    is_first_step=False,
)


def _steps_of(n):
    return lambda m: [m.make((), values=[1.0]) for _ in range(n)]


_ERRORS = {
    "_foreach_add": [
        error_case("empty", _empty, (1.0,), match=r"at least one tensor"),
        error_case(
            "lengths", _lists(2, 3), (_lists(2),), match=r"same number of tensors, got 2 and 1"
        ),
        error_case(
            "scalar-list", _lists(2, 3), ([1.0],), match=r"same number of elements as scalar list"
        ),
        error_case("dict", _lists(2, 3), ({},), error=TypeError, match=r"argument 'other' must be"),
        error_case("string", _lists(2), ("x",), error=TypeError, match=r"must be a Number"),
    ],
    "_foreach_add_": [
        error_case("empty", _empty, (1.0,), match=r"_foreach_add_\(\): .*at least one tensor"),
        error_case(
            "lengths", _lists(2, 3), (_lists(2),), match=r"same number of tensors, got 2 and 1"
        ),
        error_case(
            "1-d-tensor", _lists(2, 3), (lambda m: m.make((2,)),), match=r"expected to be 0 dim"
        ),
    ],
    "_foreach_lerp_": [
        error_case("lengths", _lists(2, 3), (_lists(2), 0.5), match=r"same number of tensors")
    ],
    "_foreach_addcmul_": [
        error_case(
            "tensor-value",
            _lists(2),
            (_lists(2), _lists(2), lambda m: m.make(())),
            error=TypeError,
            match=r"argument 'value' must be",
        )
    ],
    "_foreach_sqrt": [error_case("empty", _empty, match=r"at least one tensor")],
    "_fused_adam_": [
        error_case(
            "lengths",
            _lists(2, 3),
            (_lists(2), _lists(2, 3), _lists(2, 3), [], _steps_of(2)),
            _ADAM_KW,
            match=r"_fused_adam_\(\): expected grads to hold 2 tensors",
        ),
        error_case(
            "shape",
            _lists(2),
            (_lists(3), _lists(2), _lists(2), [], _steps_of(1)),
            _ADAM_KW,
            match=r"expected grads\[0\] to have the shape of self\[0\]",
        ),
        error_case(
            "dtype",
            _lists(2),
            (_doubles(2), _lists(2), _lists(2), [], _steps_of(1)),
            _ADAM_KW,
            match=r"expected grads\[0\] to have the dtype of self\[0\]",
        ),
        error_case(
            "int",
            _ints(2),
            (_ints(2), _ints(2), _ints(2), [], _steps_of(1)),
            _ADAM_KW,
            error=NotImplementedError,
            match=r"not implemented for 'int64'",
        ),
        error_case(
            "amsgrad",
            _lists(2),
            (_lists(2), _lists(2), _lists(2), [], _steps_of(1)),
            dict(_ADAM_KW, amsgrad=True),
            match=r"amsgrad=True needs max_exp_avg_sqs",
        ),
        error_case(
            "steps",
            _lists(2),
            (_lists(2), _lists(2), _lists(2), [], _lists(2)),
            _ADAM_KW,
            match=r"expected state_steps\[0\] to be a one-element",
        ),
    ],
    "_fused_sgd_": [
        error_case(
            "momentum",
            _lists(2),
            (_lists(2), []),
            _SGD_KW,
            match=r"momentum=0.9 needs momentum_buffer_list",
        )
    ],
}
_ERRORS["_fused_adamw_"] = [
    error_case(
        "lengths",
        _lists(2),
        (_lists(2), _lists(2), [], [], _steps_of(1)),
        _ADAM_KW,
        match=r"_fused_adamw_\(\): expected exp_avg_sqs to hold 1 tensors",
    )
]
_ERRORS["_fused_adagrad_"] = [
    error_case(
        "steps",
        _lists(2),
        (_lists(2), _lists(2), []),
        dict(lr=0.1, lr_decay=0.0, weight_decay=0.0, eps=1e-10, maximize=False),
        match=r"_fused_adagrad_\(\): expected state_steps to hold 1 tensors",
    )
]
_ERRORS["_fused_rmsprop_"] = [
    error_case(
        "centered",
        _lists(2),
        (_lists(2), _lists(2), [], []),
        dict(
            lr=0.1,
            alpha=0.99,
            eps=1e-8,
            weight_decay=0.0,
            momentum=0.0,
            centered=True,
            maximize=False,
        ),
        match=r"_fused_rmsprop_\(\): centered=True needs grad_avgs",
    )
]


def _torch_op(name: str):
    """PyTorch's op of the same name (it returns nothing either)."""

    def ref(*args, **kwargs):
        import torch

        return getattr(torch, name)(*args, **kwargs)

    return ref


def _torch_rmsprop(
    params,
    grads,
    square_avgs,
    grad_avgs,
    momentum_buffer_list,
    *,
    lr,
    alpha,
    eps,
    weight_decay,
    momentum,
    centered,
    maximize,
    grad_scale=None,
    found_inf=None,
):
    """PyTorch has no fused RMSprop: its functional single-tensor update on the same lists."""
    import torch
    from torch.optim.rmsprop import rmsprop

    rmsprop(
        list(params),
        list(grads),
        list(square_avgs),
        list(grad_avgs),
        list(momentum_buffer_list),
        [torch.tensor(0.0) for _ in params],
        maximize=maximize,
        lr=lr,
        alpha=alpha,
        eps=eps,
        weight_decay=weight_decay,
        momentum=momentum,
        centered=centered,
    )


def _fused(name: str, samples, torch_ref=None) -> OpInfo:
    """A fused update: it writes its lists and returns nothing (values tested in tests/)."""
    return OpInfo(
        name,
        dtypes=FLOATS,
        sample_inputs_func=samples,
        ref=None,
        torch_ref=torch_ref or _torch_op(name),
        supports_autograd=False,
    )


def _lerp_ref(xs, ends, weight):
    return [
        np.where(abs(w) < 0.5, x + w * (e - x), e - (e - x) * (1 - w))
        for x, e, w in zip(xs, ends, _per(weight, len(xs)))
    ]


def _addcdiv_ref(xs, t1, t2, value=1):
    return [x + v * a / b for x, a, b, v in zip(xs, t1, t2, _per(value, len(xs)))]


def _binary_ref(fn):
    return lambda xs, other: [fn(x, o) for x, o in zip(xs, _per(other, len(xs)))]


def _sqrt_ref(xs):
    return [np.sqrt(x) for x in xs]


def _neg_ref(xs):
    return [-x for x in xs]


def _foreach(name: str, ref, samples, **kwargs) -> OpInfo:
    """The OpInfo of a foreach op (float lists; the in-place forms return their written list:
    compared with numpy and PyTorch alike); `kwargs` go to OpInfo (``tol=``, ...)."""
    return OpInfo(name, dtypes=FLOATS, ref=ref, sample_inputs_func=samples, **kwargs)


OPS = [
    _foreach("_foreach_add", _add_ref, _add_samples),
    _foreach("_foreach_add_", _add_ref, _add_samples),
    _foreach("_foreach_mul_", _binary_ref(np.multiply), _binary_samples),
    _foreach("_foreach_div_", _binary_ref(np.divide), _div_samples),
    _foreach("_foreach_maximum_", _binary_ref(np.maximum), _maximum_samples),
    _foreach("_foreach_lerp_", _lerp_ref, _lerp_samples, tol=_STEPS_TOL),
    _foreach("_foreach_addcmul", _addcmul_ref, _addc_samples, tol=_STEPS_TOL),
    _foreach("_foreach_addcmul_", _addcmul_ref, _addc_samples, tol=_STEPS_TOL),
    _foreach("_foreach_addcdiv_", _addcdiv_ref, _addc_samples, tol=_STEPS_TOL),
    _foreach("_foreach_sqrt", _sqrt_ref, _unary_samples),
    _foreach("_foreach_sqrt_", _sqrt_ref, _unary_samples),
    _foreach("_foreach_neg", _neg_ref, _unary_samples),
    _fused("_fused_adam_", _adam_samples),
    _fused("_fused_adamw_", _adam_samples),
    _fused("_fused_sgd_", _sgd_samples),
    _fused("_fused_adagrad_", _adagrad_samples),
    _fused("_fused_rmsprop_", _rmsprop_samples, _torch_rmsprop),
]
attach_error_cases(OPS, _ERRORS)
