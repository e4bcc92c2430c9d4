"""The OpInfo database: per declared op, sample inputs, supported dtypes and variants, and a
reference implementation (numpy, or torch where numpy has none).

``OP_DB`` holds one `OpInfo` per op of ``coretorch.ops.REGISTRY`` except those in `EXCLUDED`
(each with the reason). The entries live in `coretorch.testing.opdb` grouped like
``coretorch/ops``; the test functions in `coretorch.testing.conformance` run them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

import numpy as np

from .. import dtypes as _dt
from .make_tensor import Maker, stable_rng
from .torch_arrays import numpy_from_torch, torch_from_numpy
from .trees import is_tensor

__all__ = [
    "SampleInput",
    "ErrorInput",
    "OpInfo",
    "OP_DB",
    "EXCLUDED",
    "op_db",
    "get_opinfo",
    "to_numpy_args",
    "to_torch_args",
    "from_torch",
    "NO_BFLOAT16",
    "BF16_STEPS_TOL",
    "FLOATS",
    "INTS",
    "ALL_INT",
    "ALL",
]

# bfloat16 runs wherever float32 does, except the ops in NO_BFLOAT16 (below)
FLOATS = (_dt.float32, _dt.float64, _dt.bfloat16)
INTS = (_dt.int32, _dt.int64)
ALL_INT = (_dt.uint8, _dt.int8, _dt.int16, _dt.int32, _dt.int64)
ALL = FLOATS + INTS


@dataclasses.dataclass
class SampleInput:
    """One call of an op: ``op(input, *args, **kwargs)``; `name` says what the sample exercises."""

    input: Any
    args: tuple = ()
    kwargs: dict = dataclasses.field(default_factory=dict)
    name: str = ""
    # False where finite differences cannot check the gradient by design (embedding's
    # padding_idx row: used in the forward, gradient defined as zero)
    gradcheck: bool = True

    def all_args(self) -> tuple:
        """The input followed by the positional args."""
        return (self.input,) + tuple(self.args)

    def __repr__(self) -> str:
        return f"SampleInput({self.name or 'unnamed'}: {_describe(self.all_args(), self.kwargs)})"


def _describe(args, kwargs) -> str:
    def one(x):
        if hasattr(x, "_shape"):
            contig = "" if x.is_contiguous() else f", stride={tuple(x._stride)}"
            return f"Tensor{list(x._shape)}:{x._dtype.name}{contig}"
        if isinstance(x, (list, tuple)):
            inner = ", ".join(one(y) for y in x)
            return f"[{inner}]" if isinstance(x, list) else f"({inner})"
        return repr(x)

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


@dataclasses.dataclass
class ErrorInput:
    """A call the op must refuse: `sample` raises `error_type` with a message matching the
    regular expression `match`, on every backend (the meta rule is the only validator)."""

    sample: SampleInput
    error_type: type = RuntimeError
    match: str = ""

    def __repr__(self) -> str:
        return f"ErrorInput({self.sample!r} -> {self.error_type.__name__}: {self.match!r})"


_AUTO = object()


class OpInfo:
    """What the conformance suite knows about one op.

    - `sample_inputs_func(op_info, maker, dtype)` yields SampleInputs built with `maker`
      (a `Maker` fixing device, dtype, requires_grad and a deterministic value stream).
    - `ref(*args, **kwargs)`: numpy reference on numpy arrays (tensors converted, dtypes as
      numpy dtypes); None where numpy has none, then `torch_ref` is the oracle.
    - `torch_ref`: a callable on torch tensors, defaulting to ``torch.<name>`` (or the Tensor
      method); None where torch has no equivalent.
    - `random`: values are random; the suite checks shape, dtype, range and reproducibility.
    - `check_values=False`: only shapes and dtypes are defined (``empty``).
    - `tol`: {dtype: (rtol, atol)} overriding assert_close's defaults.
    - `data_dependent`: the output shape depends on the values (``nonzero``): shape-only devices
      must raise instead (a single sample can say so with a name starting "data-dependent").
    - `value_range(values, sample)`: for random ops, asserts the drawn values are in range.
    - `error_inputs_func(op_info, maker, dtype)` yields `ErrorInput`s: calls every backend must
      refuse with the same exception.
    """

    def __init__(
        self,
        name: str,
        *,
        dtypes: tuple,
        sample_inputs_func: Callable,
        ref: Callable | None = None,
        torch_ref: Any = _AUTO,
        supports_autograd: bool | None = None,
        supports_out: bool | None = None,
        supports_inplace: bool | None = None,
        tol: dict | None = None,
        random: bool = False,
        check_values: bool = True,
        value_range: Callable | None = None,
        grad_dtypes: tuple = (_dt.float64,),
        data_dependent: bool = False,
        notes: str = "",
        error_inputs_func: Callable | None = None,
    ):
        self.name = name
        self.dtypes = tuple(d for d in dtypes if d is not _dt.bfloat16 or name not in NO_BFLOAT16)
        self.sample_inputs_func = sample_inputs_func
        self.ref = ref
        self._torch_ref = torch_ref
        self._supports_autograd = supports_autograd
        self._supports_out = supports_out
        self._supports_inplace = supports_inplace
        self.tol = tol or {}
        self.random = random
        self.check_values = check_values
        self.value_range = value_range
        self.grad_dtypes = grad_dtypes
        self.data_dependent = data_dependent
        self.notes = notes
        self.error_inputs_func = error_inputs_func

    def __repr__(self) -> str:
        return f"OpInfo({self.name})"

    # ---- the op and its variants (looked up late: ops may be declared after this module) --
    @property
    def decl(self):
        """The op's declaration in the registry.

        Raises:
            NotImplementedError: when no op of this name is declared.
        """
        from ..ops import REGISTRY

        d = REGISTRY.get(self.name)
        if d is None:
            raise NotImplementedError(
                f"{self.name}: no op of this name is declared in "
                f"coretorch.ops (the OpInfo exists, the op does not yet)"
            )
        return d

    @property
    def op(self) -> Callable:
        """The op's public function."""
        return self.decl.op

    @property
    def inplace_op(self) -> Callable | None:
        """The op's in-place variant, or None."""
        return self.decl.inplace_op

    @property
    def supports_out(self) -> bool:
        """Whether the op takes out= (from the declaration unless overridden)."""
        if self._supports_out is not None:
            return self._supports_out
        return bool(self.decl.out) and self.decl.structured

    @property
    def supports_inplace(self) -> bool:
        """Whether the op has an in-place variant (from the declaration unless overridden)."""
        if self._supports_inplace is not None:
            return self._supports_inplace
        return self.decl.inplace_op is not None

    @property
    def supports_autograd(self) -> bool:
        """Whether gradients are checked (a differentiable, non-random op unless overridden)."""
        if self._supports_autograd is not None:
            return self._supports_autograd
        return bool(self.decl.differentiable) and not self.random

    @property
    def torch_ref(self) -> Callable | None:
        """The PyTorch function compared with, torch.<name> or Tensor.<name> by default (None when
        missing)."""
        if self._torch_ref is not _AUTO:
            return self._torch_ref
        import torch

        fn = getattr(torch, self.name, None)
        from ..ops import REGISTRY

        decl = REGISTRY.get(self.name)
        method = hasattr(torch.Tensor, self.name) and (decl is None or decl.method)
        if fn is None and not method:
            return None
        name = self.name
        torch_fn = fn

        def ref(x, *a, **k):
            # the Tensor method takes varargs sizes (x.view(2, 3)); torch.<name> takes lists
            if method and isinstance(x, torch.Tensor):
                return getattr(x, name)(*a, **k)
            assert torch_fn is not None  # `method` is False here, so torch has the function
            return torch_fn(x, *a, **k)

        return ref

    # ---- samples --------------------------------------------------------------------------
    def sample_inputs(self, device, dtype, requires_grad: bool = False) -> Iterator[SampleInput]:
        """The op's samples for `dtype` on `device` (the same values on every device)."""
        maker = Maker(device, dtype, stable_rng(self.name, dtype.name), requires_grad)
        return iter(self.sample_inputs_func(self, maker, dtype))

    def error_inputs(self, device, dtype) -> Iterator[ErrorInput]:
        """Calls the op must refuse (the same values on every device)."""
        if self.error_inputs_func is None:
            return iter(())
        maker = Maker(device, dtype, stable_rng(self.name + "-errors", dtype.name), False)
        return iter(self.error_inputs_func(self, maker, dtype))

    def tolerances(self, dtype) -> tuple[float | None, float | None]:
        """(rtol, atol) for `dtype`; None entries mean the default tolerances."""
        return self.tol.get(dtype, (None, None))


# ---- converting arguments for the references -----------------------------------------------


def to_numpy_args(x):
    """Sample arguments for a numpy reference: tensors -> numpy copies, dtypes -> numpy dtypes."""
    if is_tensor(x):
        return np.array(np.asarray(x.detach()))
    if isinstance(x, _dt.dtype):
        return x.numpy
    if isinstance(x, list):
        return [to_numpy_args(y) for y in x]
    if isinstance(x, tuple):
        return tuple(to_numpy_args(y) for y in x)
    if isinstance(x, dict):
        return {k: to_numpy_args(v) for k, v in x.items()}
    return x


def to_torch_args(x):
    """Sample arguments for a torch reference: tensors -> torch cpu tensors, dtypes and
    devices -> torch's."""
    import torch

    from ..device import device as _device

    if is_tensor(x):
        t = torch_from_numpy(np.asarray(x.detach()))
        return t.requires_grad_(True) if x.requires_grad else t
    if isinstance(x, _dt.dtype):
        return getattr(torch, x.name)
    if isinstance(x, _device):
        return torch.device("cpu")
    if isinstance(x, list):
        return [to_torch_args(y) for y in x]
    if isinstance(x, tuple):
        return tuple(to_torch_args(y) for y in x)
    if isinstance(x, dict):
        return {
            k: (torch.device("cpu") if k == "device" else to_torch_args(v)) for k, v in x.items()
        }
    return x


def from_torch(x):
    """A torch result as numpy arrays / Python values (for assert_close)."""
    if hasattr(x, "detach") and hasattr(x, "numpy"):
        return numpy_from_torch(x)
    if isinstance(x, (list, tuple)):
        return tuple(from_torch(y) for y in x)
    return x


# ---- the database ---------------------------------------------------------------------------

# ops with no OpInfo, and why (the coverage test fails for any other declared op without one)
EXCLUDED: dict[str, str] = {}

_PT_NO_BF16 = "PyTorch's cpu kernel has no bfloat16 version"
_STEPS = (
    "a composite of several ops, each rounding to bfloat16 where PyTorch's one kernel rounds "
    "once: beyond bfloat16's tolerance"
)
# a backend without a native kernel for an op runs its composite, which rounds to bfloat16 after
# each step where one kernel rounds once: the tolerance of such ops in bfloat16
BF16_STEPS_TOL = (1.6e-2, 3.2e-2)  # absolute: one rounding of an intermediate near 4

# float ops not tested in bfloat16, and why
NO_BFLOAT16: dict[str, str] = {
    **{
        n: _STEPS
        for n in (
            "index_put",
            "avg_pool2d_backward",
            "tanhshrink",
            "logaddexp",
            "prod",
            "log_softmax",
            "diff",
            "trapz",
            "cumulative_trapezoid",
            "histogram",
            "sinc",
            "logit",
            "special_ndtr",
            "logaddexp2",
            "einsum",
            "cross",
            "addbmm",
        )
    },
    "linalg_vander": "PyTorch refuses bfloat16",
    "cdist": _PT_NO_BF16,
    "nan_to_num": "numpy's float32 reference rounds float32's max to inf in bfloat16 "
    "(coretorch and PyTorch give bfloat16's max)",
    "quantile": "PyTorch accepts float32 and float64 only",
    "nanquantile": "PyTorch accepts float32 and float64 only",
    **{
        n: _PT_NO_BF16
        for n in (
            "special_erfcx",
            "special_ndtri",
            "special_log_ndtr",
            "special_bessel_j0",
            "special_bessel_j1",
            "special_bessel_y0",
            "special_bessel_y1",
            "special_modified_bessel_i0",
            "special_modified_bessel_i1",
            "special_modified_bessel_k0",
            "special_modified_bessel_k1",
            "special_scaled_modified_bessel_k0",
            "special_scaled_modified_bessel_k1",
            "special_airy_ai",
            "special_spherical_bessel_j0",
            "special_zeta",
            "special_chebyshev_polynomial_t",
            "special_chebyshev_polynomial_u",
            "special_chebyshev_polynomial_v",
            "special_chebyshev_polynomial_w",
            "special_shifted_chebyshev_polynomial_t",
            "special_shifted_chebyshev_polynomial_u",
            "special_shifted_chebyshev_polynomial_v",
            "special_shifted_chebyshev_polynomial_w",
            "special_hermite_polynomial_h",
            "special_hermite_polynomial_he",
            "special_laguerre_polynomial_l",
            "special_legendre_polynomial_p",
        )
    },
}


def op_db() -> list[OpInfo]:
    """Every OpInfo."""
    return OP_DB


def get_opinfo(name: str) -> OpInfo:
    """The OpInfo of op `name` (KeyError if there is none)."""
    for o in OP_DB:
        if o.name == name:
            return o
    raise KeyError(f"no OpInfo for op {name!r}")


from .opdb import ALL_OPINFOS as _ALL_OPINFOS  # noqa: E402  (the entries import this module)

OP_DB: list[OpInfo] = _ALL_OPINFOS
