"""coretorch: a small, readable deep-learning framework with PyTorch's architecture and API.

Backends (cpu, meta, cuda, third-party) are separately installed plugins, discovered here on
import through the ``coretorch.backends`` entry-point group.
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import dtypes as _dtypes
from .dtypes import (bool, uint8, int8, int16, int32, int64, float16, bfloat16,  # noqa: A004
                     float32, float64, half, float, double, short, int, long, dtype,
                     promote_types, result_type, set_default_dtype, get_default_dtype, finfo,
                     iinfo, complex64, complex128, cfloat, cdouble)
from .device import device, set_default_device, get_default_device
from .tensor.tensor import Tensor
from .tensor.size import Size
from .memory_formats import (memory_format, contiguous_format, channels_last, channels_last_3d,
                             preserve_format)
from .random import Generator, manual_seed, seed, initial_seed, get_rng_state, set_rng_state
from . import dispatch, library, record_function as _record_function_module  # noqa: F401
from . import ops
from .ops.factories_public import tensor, as_tensor, asarray, from_numpy
from .dlpack import from_dlpack
from . import autograd
from .autograd import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled)
from . import plugins as _plugins

# every declared op with a PyTorch-style free function becomes coretorch.<name>
_NOT_FUNCTIONS = {"view", "slice", "alias", "expand", "expand_as", "view_as", "contiguous",
                  "unfold"}


def _export_ops() -> None:
    g = globals()
    for _name, _decl in ops.REGISTRY.items():
        if (_name.startswith("_") or _name.endswith("_") or _name in _NOT_FUNCTIONS
                or not _decl.function):
            continue
        if _name not in g:
            g[_name] = _decl.op.entry


# the in-place ops PyTorch also has as free functions (torch.zero_(t), torch.relu_(t), ...)
_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ celu_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ "
    "exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ selu_ "
    "sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ threshold_ trunc_ xlogy_ zero_").split()


def _export_inplace_functions() -> None:
    g = globals()
    for _name in _INPLACE_FUNCTIONS:
        _decl = ops.REGISTRY.get(_name) or ops.REGISTRY.get(_name[:-1])
        if _decl is None or _name in g:
            continue
        _op = _decl.op if _decl.inplace_only else _decl.inplace_op
        if _op is not None:
            g[_name] = _op.entry


_export_ops()
_export_inplace_functions()
from .ops.shape_composites import (broadcast_shapes, broadcast_tensors,  # noqa: E402,F401
                                   atleast_1d, atleast_2d, atleast_3d)
from .ops.grids import meshgrid, cartesian_prod, block_diag  # noqa: E402,F401
from .ops.statistics import std, var  # noqa: E402,F401  (with the (input, unbiased) form)


def is_tensor(obj) -> "bool":
    """Whether `obj` is a coretorch tensor."""
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> "int":
    """The number of elements of `t` (the product of its sizes)."""
    return t.numel()


def is_floating_point(t: Tensor) -> "bool":
    """Whether `t` has a floating-point dtype."""
    return t.is_floating_point()


def is_complex(t: Tensor) -> "bool":
    """Whether `t` has a complex dtype (complex64 or complex128)."""
    return t.is_complex()


_plugins.load_backends()


def _expose_device_modules() -> None:
    import sys
    from .device import device_types
    g = globals()
    for _name, _entry in device_types().items():
        if _entry.module is not None and _name not in g:
            g[_name] = _entry.module
            sys.modules.setdefault(f"{__name__}.{_name}", _entry.module)
    if "cuda" not in g:  # PyTorch scripts ask coretorch.cuda.is_available() on any machine
        g["cuda"] = sys.modules.setdefault(f"{__name__}.cuda", _no_cuda_module())


def _no_cuda_module():
    """`coretorch.cuda` when no cuda backend is loaded: answers as PyTorch without CUDA."""
    from ._absent_device import absent_device_module
    return absent_device_module("cuda", "no cuda backend is loaded (install coretorch-cuda-cupy; "
                                        "`python -m coretorch` lists backends)")


_expose_device_modules()

# PyTorch-shaped front end (nn -> autograd -> ops; imported last, after the ops exist)
from . import distributions, fft, linalg, nn, optim, special, utils  # noqa: E402,F401
from .functional import chain_matmul, einsum, lu  # noqa: E402,F401  (variadic forms)
from . import multiprocessing  # noqa: E402,F401  (tensor sharing between processes)
from .serialization import save, load  # noqa: E402,F401
# torch.profiler's names; the shim imports the profiler distribution only when a name is used
from . import profiler  # noqa: E402,F401
from . import accelerator, backends, onnx  # noqa: E402,F401
from . import amp, cpu  # noqa: E402,F401  (mixed precision; torch.cpu.amp)
from .amp import (autocast, is_autocast_available, is_autocast_enabled,  # noqa: E402,F401
                  get_autocast_dtype, set_autocast_enabled, set_autocast_dtype,
                  is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
                  is_autocast_cpu_enabled, get_autocast_cpu_dtype, get_autocast_gpu_dtype)
amp.device_aliases.attach_amp(cuda, "cuda", float16)  # torch.cuda.amp
for _absent in ("mps", "xpu"):  # unless a loaded backend serves them: "not available" modules
    if _absent not in globals():
        __import__(f"{__name__}.{_absent}")
from .layout import layout, strided, sparse_coo  # noqa: E402,F401
from . import sparse  # noqa: E402,F401  (sparse COO tensors; registers their kernels)
from .sparse.functional import sparse_coo_tensor  # noqa: E402,F401
from .sparse import spmm  # noqa: E402,F401
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401
from .tensor.legacy import legacy_types as _legacy_types  # noqa: E402

globals().update(_legacy_types("cpu"))  # FloatTensor, LongTensor, ... (legacy constructors)
