"""dtype objects and PyTorch's type-promotion rules.

Categories order bool < integer < floating < complex. Promotion between two dtypes is a fixed table
(`promote_types`); `result_type` adds PyTorch's three priority levels: tensors with dimensions,
zero-dimensional tensors, then Python scalars ("weak" types that only matter when they raise the
category).
"""

from __future__ import annotations

import builtins as _builtins

import ml_dtypes as _ml
import numpy as np

_pybool, _pyint, _pyfloat = _builtins.bool, _builtins.int, _builtins.float

__all__ = [
    "dtype",
    "bool",
    "uint8",
    "int8",
    "int16",
    "int32",
    "int64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "half",
    "float",
    "double",
    "short",
    "int",
    "long",
    "promote_types",
    "result_type",
    "set_default_dtype",
    "get_default_dtype",
    "all_dtypes",
    "opmath_dtype",
    "from_numpy_dtype",
    "finfo",
    "iinfo",
    "overflow_error",
    "INT64_MIN",
    "INT64_MAX",
    "complex64",
    "complex128",
    "cfloat",
    "cdouble",
    "get_default_complex_dtype",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type (``coretorch.float32`` ...). Compare with ``is`` or ``==``."""

    __slots__ = (
        "name",
        "itemsize",
        "category",
        "is_signed",
        "numpy",
        "_rank",
        "is_floating_point",
        "is_complex",
    )

    # `bool` and `int` in this module are dtypes: annotations name the builtins' full names
    def __init__(
        self,
        name: str,
        numpy_dtype: type,
        category: _builtins.int,
        is_signed: _builtins.bool,
        rank: _builtins.int,
    ):
        self.name = name
        self.numpy: np.dtype = np.dtype(numpy_dtype)
        self.itemsize = self.numpy.itemsize
        self.category = category
        self.is_signed = is_signed
        self._rank = rank
        # a plain attribute, not a property: meta rules and autograd read it on every op
        self.is_floating_point: _builtins.bool = category == _FLOAT
        self.is_complex: _builtins.bool = category == _COMPLEX

    def to_real(self) -> "dtype":
        """The real dtype of the same precision (complex64 -> float32); a real dtype itself."""
        return _TO_REAL.get(self, self)

    def to_complex(self) -> "dtype":
        """The complex dtype of the same precision (float64 -> complex128; float16 and bfloat16
        -> complex64, coretorch having no complex32); a complex dtype itself."""
        if self.is_complex:
            return self
        if not self.is_floating_point:
            raise RuntimeError(
                f"to_complex(): expected a floating point or complex dtype, got {self.name}"
            )
        return complex128 if self is float64 else complex64

    def __repr__(self) -> str:
        return f"coretorch.{self.name}"

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


bool = dtype("bool", np.bool_, _BOOL, False, 0)  # noqa: A001 - mirrors torch.bool
uint8 = dtype("uint8", np.uint8, _INT, False, 1)
int8 = dtype("int8", np.int8, _INT, True, 2)
int16 = dtype("int16", np.int16, _INT, True, 3)
int32 = dtype("int32", np.int32, _INT, True, 4)
int64 = dtype("int64", np.int64, _INT, True, 5)
float16 = dtype("float16", np.float16, _FLOAT, True, 6)
# numpy has no bfloat16: ml_dtypes registers a real one (8 exponent bits, 7 mantissa bits).
# Same rank as float16: neither holds the other, so the two promote to float32.
bfloat16 = dtype("bfloat16", _ml.bfloat16, _FLOAT, True, 6)
float32 = dtype("float32", np.float32, _FLOAT, True, 7)
float64 = dtype("float64", np.float64, _FLOAT, True, 8)
half, float, double = float16, float32, float64  # noqa: A001
short, int, long = int16, int32, int64  # noqa: A001
complex64 = dtype("complex64", np.complex64, _COMPLEX, True, 9)
complex128 = dtype("complex128", np.complex128, _COMPLEX, True, 10)
cfloat, cdouble = complex64, complex128
_TO_REAL = {complex64: float32, complex128: float64}

# complex last, so the indices of the real dtypes stay what they were (wire formats use them)
all_dtypes: tuple[dtype, ...] = (
    bool,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    float32,
    float64,
    bfloat16,
    complex64,
    complex128,
)
_BY_NAME = {d.name: d for d in all_dtypes}
_BY_NUMPY = {d.numpy: d for d in all_dtypes}


INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def overflow_error(d: dtype, value, op: str = "") -> RuntimeError:
    """PyTorch's error for a Python number that dtype `d` cannot hold."""
    where = f"{op}(): " if op else ""
    return RuntimeError(
        f"{where}value cannot be converted to type {d.name} without overflow (got {value})"
    )


def _dtype_by_name(name: str) -> dtype:
    return _BY_NAME[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """The coretorch dtype of a numpy dtype; TypeError for types coretorch does not have."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert numpy dtype {np.dtype(np_dtype)}: coretorch supports "
            f"{', '.join(d.name for d in all_dtypes)}"
        ) from None


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.is_complex or b.is_complex:
        # the complex type whose real part holds both: complex64 + float64 -> complex128
        ra, rb = a.to_real(), b.to_real()
        if ra.is_floating_point and rb.is_floating_point and max(ra._rank, rb._rank) == 8:
            return complex128
        return complex128 if complex128 in (a, b) else complex64
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _FLOAT or lo.category == _BOOL:
            return hi
    if a.category == _FLOAT and b.category == _FLOAT:
        if a._rank == b._rank:  # float16 and bfloat16
            return float32
        return a if a._rank > b._rank else b
    # both integers (bool handled above): numpy's rule is PyTorch's (uint8 + int8 -> int16)
    return _BY_NUMPY[np.promote_types(a.numpy, b.numpy)]


_PROMOTE = {(a, b): _promote_pair(a, b) for a in all_dtypes for b in all_dtypes}


def opmath_dtype(d: dtype) -> dtype:
    """The dtype arithmetic on `d` runs in: the 16-bit floats (float16, bfloat16) compute in
    float32 and round back, as PyTorch's kernels do; every other dtype as it is."""
    return float32 if d.category == _FLOAT and d.itemsize == 2 else d


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both promote to, as ``torch.promote_types``."""
    return _PROMOTE[type1, type2]


class _DefaultDtype:
    # process-wide, as torch.set_default_dtype
    value = float32


_default = _DefaultDtype()


def set_default_dtype(d: dtype) -> None:
    """Set the dtype of float factories and of Python floats in promotion (float32 by default)."""
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError(f"set_default_dtype(): expected a floating point dtype, got {d!r}")
    _default.value = d


def get_default_dtype() -> dtype:
    """The default floating-point dtype (float32 unless changed with `set_default_dtype`)."""
    return _default.value


def get_default_complex_dtype() -> dtype:
    """The dtype of Python complex numbers: the complex type of the default float dtype
    (complex64, or complex128 when the default is float64), as PyTorch."""
    return complex128 if _default.value is float64 else complex64


def scalar_dtype(value) -> dtype:
    """The dtype PyTorch gives a Python scalar: bool, int64, the default float dtype or the
    default complex dtype."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, _pyint):
        return int64
    if isinstance(value, _pyfloat):
        return _default.value
    if isinstance(value, _builtins.complex):
        return get_default_complex_dtype()
    if isinstance(value, np.generic):
        return from_numpy_dtype(value.dtype)
    raise TypeError(
        f"expected a tensor or a Python scalar (bool, int or float), got {type(value).__name__}"
    )


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    # PyTorch's combine_categories: a lower priority level only counts if it raises the category
    if higher is None:
        return lower
    if lower is None or higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        # a float keeps its precision (float64 tensor + 1j -> complex128); an integer or bool
        # takes the lower level's complex type
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher.category == _BOOL or lower.category == _FLOAT:
        return _PROMOTE[higher, lower]
    return higher


def result_type(*operands) -> dtype:
    """PyTorch's result type of tensors, dtypes and Python scalars.

    Three priority levels: tensors with dimensions (and dtype objects), zero-dim tensors, Python
    scalars. A lower level only counts when it is of a higher category (bool < int < float <
    complex).
    """
    dim_t = zero_t = scalar_t = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:
                dim_t = d if dim_t is None else _PROMOTE[dim_t, d]
            else:
                zero_t = d if zero_t is None else _PROMOTE[zero_t, d]
        elif isinstance(x, dtype):
            dim_t = x if dim_t is None else _PROMOTE[dim_t, x]
        else:
            s = scalar_dtype(x)
            scalar_t = s if scalar_t is None else _PROMOTE[scalar_t, s]
    result = _combine(dim_t, _combine(zero_t, scalar_t))
    if result is None:
        raise TypeError("result_type(): expected at least one tensor, dtype or scalar")
    if scalar_t is not None and result.category < _FLOAT:
        _check_int64_scalars(operands)
    return result


def _check_int64_scalars(operands) -> None:
    """A Python int an integer computation cannot hold raises (numpy would wrap it or fail
    with its own OverflowError)."""
    for x in operands:
        if x.__class__ is _pyint and not INT64_MIN <= x <= INT64_MAX:
            raise overflow_error(int64, x)


class finfo:
    """Machine limits of a floating dtype (``coretorch.finfo(coretorch.float32).eps``)."""

    def __init__(self, d: dtype | None = None):
        d = (d or _default.value).to_real()  # a complex dtype's limits are its parts'
        if not d.is_floating_point:
            raise TypeError(f"finfo(): expected a floating point dtype, got {d!r}")
        i = _ml.finfo(d.numpy)  # numpy's finfo, extended to ml_dtypes' bfloat16
        self.dtype, self.bits, self.eps = d, i.bits, _pyfloat(i.eps)
        self.max, self.min, self.tiny = _pyfloat(i.max), _pyfloat(i.min), _pyfloat(i.tiny)
        self.smallest_normal, self.resolution = _pyfloat(i.smallest_normal), _pyfloat(i.resolution)


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, d: dtype):
        if d.category != _INT:
            raise TypeError(f"iinfo(): expected an integer dtype, got {d!r}")
        i = np.iinfo(d.numpy)
        self.dtype, self.bits, self.max, self.min = d, i.bits, _pyint(i.max), _pyint(i.min)
