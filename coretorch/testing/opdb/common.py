"""Sample generators and helpers shared by the OpInfo entry modules."""

from __future__ import annotations

import functools

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ErrorInput, SampleInput

NAN, INF = float("nan"), float("inf")
SPECIAL_VALUES = (NAN, INF, -INF, 0.0, -0.0, 1.5, -2.5, 0.5)


def quiet(fn):
    """A numpy reference with floating-point warnings silenced (torch gives inf/nan silently)."""

    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    return wrapped


def torch_nn(name: str):
    """A torch reference calling ``torch.nn.functional.<name>`` (torch imported late)."""

    def ref(*a, **k):
        import torch.nn.functional as F

        return getattr(F, name)(*a, **k)

    return ref


def torch_aten(name: str):
    """A torch reference calling ``torch.ops.aten.<name>`` (torch imported late)."""

    def ref(*a, **k):
        import torch

        return getattr(torch.ops.aten, name)(*a, **k)

    return ref


def scalar_of(dtype, value=2):
    """A Python scalar of `dtype`'s category (bool, int or float)."""
    if dtype is _dt.bool:
        return True
    if dtype.is_floating_point:
        return float(value) + 0.5
    return int(value)


def partner_dtype(dtype, int_only: bool = False):
    """A second dtype for a mixed-dtype (promotion) sample."""
    if dtype is _dt.bool:
        return _dt.int32
    if dtype.is_floating_point:
        return _dt.float64 if dtype is not _dt.float64 else _dt.int64
    if int_only:
        return _dt.int64 if dtype is not _dt.int64 else _dt.int16
    return _dt.float32


def unary_samples(op, m, dtype, *, low=None, high=None, special: bool = False, kwargs=None):
    """0-d, 1-d, 2-d, transposed, sliced, expanded and zero-size inputs (+ NaN/inf)."""
    kw = dict(low=low, high=high)
    k = dict(kwargs or {})
    yield SampleInput(m.make((), **kw), kwargs=k, name="0-d")
    yield SampleInput(m.make((7,), **kw), kwargs=k, name="1-d")
    yield SampleInput(m.make((3, 4), **kw), kwargs=k, name="2-d")
    yield SampleInput(m.make((3, 4), layout="transposed", **kw), kwargs=k, name="transposed")
    yield SampleInput(m.make((2, 3, 4), layout="sliced", **kw), kwargs=k, name="sliced")
    yield SampleInput(m.make((3, 4), layout="expanded", **kw), kwargs=k, name="expanded")
    yield SampleInput(m.make((0, 3), **kw), kwargs=k, name="zero-size")
    if special and dtype.is_floating_point:
        yield SampleInput(
            m.make((len(SPECIAL_VALUES),), values=SPECIAL_VALUES), kwargs=k, name="nan-inf"
        )


def binary_samples(
    op,
    m,
    dtype,
    *,
    low=None,
    high=None,
    rhs_low=None,
    rhs_high=None,
    rhs_nonzero: bool = False,
    scalar: bool = True,
    int_only: bool = False,
    float_scalar: bool = True,
    mixed: bool = True,
    special: bool = False,
    kwargs=None,
):
    """Same shape, broadcasting, 0-d, Python scalar, non-contiguous, zero-size and mixed-dtype
    pairs."""
    k = dict(kwargs or {})

    def a(shape, **kw):
        return m.make(shape, low=low, high=high, **kw)

    def b(shape, **kw):
        return m.make(shape, low=rhs_low, high=rhs_high, exclude_zero=rhs_nonzero, **kw)

    yield SampleInput(a((3, 4)), (b((3, 4)),), k, "same-shape")
    yield SampleInput(a((3, 4)), (b((4,)),), k, "broadcast-rhs")
    yield SampleInput(a((3, 1)), (b((1, 4)),), k, "broadcast-both")
    yield SampleInput(a(()), (b((3,)),), k, "0-d-lhs")
    yield SampleInput(a((2, 3)), (b(()),), k, "0-d-rhs")
    yield SampleInput(a(()), (b(()),), k, "both-0-d")
    yield SampleInput(
        a((4, 3), layout="transposed"), (b((4, 3), layout="sliced"),), k, "noncontiguous"
    )
    yield SampleInput(a((3, 4), layout="expanded"), (b((3, 4)),), k, "expanded-lhs")
    yield SampleInput(a((0, 3)), (b((0, 3)),), k, "zero-size")
    yield SampleInput(a((2, 0)), (b((1,)),), k, "zero-size-broadcast")
    if scalar:
        yield SampleInput(a((3,)), (scalar_of(dtype, 3),), k, "scalar-rhs")
        if float_scalar and not int_only and not dtype.is_floating_point:
            yield SampleInput(a((3,)), (2.5,), k, "float-scalar-promotes")
    if mixed:
        other = partner_dtype(dtype, int_only)
        yield SampleInput(
            a((2, 3)),
            (m.make((2, 3), dtype=other, low=rhs_low, high=rhs_high, exclude_zero=rhs_nonzero),),
            k,
            "mixed-dtype",
        )
    if special and dtype.is_floating_point:
        n = len(SPECIAL_VALUES)
        vals = np.array(SPECIAL_VALUES)
        yield SampleInput(
            m.make((n, n), values=np.repeat(vals, n)),
            (m.make((n, n), values=np.tile(vals, n)),),
            k,
            "nan-inf",
        )


def reduction_samples(
    op,
    m,
    dtype,
    *,
    multi_dim: bool = True,
    empty_reduce: bool = True,
    low=None,
    high=None,
    kwargs=None,
    dim_kw: str = "dim",
    full_reduce: bool = True,
):
    """Full, single-dim, negative-dim, multi-dim, keepdim, 0-d, non-contiguous and zero-size."""
    k = dict(kwargs or {})
    kw = dict(low=low, high=high)

    def s(t, name, **extra):
        return SampleInput(t, (), {**k, **extra}, name)

    if full_reduce:
        yield s(m.make((2, 3, 4), **kw), "full")
        yield s(m.make((), **kw), "0-d-full")
    yield s(m.make((2, 3, 4), **kw), "dim1", **{dim_kw: 1})
    yield s(m.make((2, 3, 4), **kw), "dim-1-keepdim", **{dim_kw: -1, "keepdim": True})
    yield s(m.make((), **kw), "0-d-dim0", **{dim_kw: 0})
    if multi_dim:
        yield s(m.make((2, 3, 4), **kw), "dims(0,2)", **{dim_kw: (0, 2)})
        yield s(m.make((2, 3, 4), **kw), "dims[-1,0]-keepdim", **{dim_kw: [-1, 0], "keepdim": True})
    yield s(m.make((4, 5), layout="transposed", **kw), "transposed-dim0", **{dim_kw: 0})
    yield s(m.make((3, 4), layout="expanded", **kw), "expanded-dim1", **{dim_kw: 1})
    yield s(m.make((0, 3), **kw), "zero-size-keep-nonempty", **{dim_kw: 0 if empty_reduce else 1})
    if empty_reduce and full_reduce:
        yield s(m.make((0, 3), **kw), "zero-size-full")


def np_reduce_axis(dim, ndim: int):
    """A coretorch reduction `dim` (None / int / sequence / ()) as a numpy axis tuple."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(d % max(ndim, 1) for d in dim) if ndim else ()


def int_to_int64(x: np.ndarray, dtype=None):
    """PyTorch's sum/prod/cumsum accumulation dtype: int64 for bool/int inputs unless given."""
    if dtype is not None:
        return dtype
    return np.int64 if x.dtype.kind in "biu" else x.dtype


def binary_error_inputs(op, m, dtype):
    """Calls every binary elementwise op refuses: shapes that do not broadcast, a non-number
    operand, two Python numbers."""
    yield ErrorInput(
        SampleInput(m.make((3, 4)), (m.make((3, 5)),), name="no-broadcast"),
        RuntimeError,
        r"must match the size of tensor b",
    )
    yield ErrorInput(
        SampleInput(m.make((3,)), ("x",), name="string-other"),
        TypeError,
        r"argument '\w+' \(position 2\) must be Tensor",
    )


def unary_error_inputs(op, m, dtype):
    """Calls every unary elementwise op refuses: a non-tensor input."""
    yield ErrorInput(
        SampleInput([1.0, 2.0], name="list-input"),
        TypeError,
        r"argument 'input' \(position 1\) must be Tensor, not list",
    )


def error_case(
    name: str,
    make_input,
    args: tuple = (),
    kwargs: dict | None = None,
    error: type = RuntimeError,
    match: str = "",
):
    """One refused call for `attach_error_cases`: ``op(make_input(maker), *args, **kwargs)``
    raises `error` matching `match`; an argument (or list element) that is callable is built
    with the maker too."""

    def one(m, a):
        if isinstance(a, list):
            return [one(m, x) for x in a]
        return a(m) if callable(a) else a

    def build(m) -> ErrorInput:
        built = tuple(one(m, a) for a in args)
        return ErrorInput(
            SampleInput(make_input(m), built, dict(kwargs or {}), name=name), error, match
        )

    return build


def attach_error_cases(opinfos: list, cases: dict) -> None:
    """Give each OpInfo named in `cases` (op name -> list of `error_case`s) its error inputs."""
    for o in opinfos:
        if o.name in cases:
            o.error_inputs_func = lambda op, m, dtype, _c=cases[o.name]: (build(m) for build in _c)
