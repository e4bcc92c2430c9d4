"""coretorch: a small, readable deep-learning framework with PyTorch's architecture and API.

Backends (cpu, meta, cuda, third-party) are separately installed plugins, discovered here on
import through the ``coretorch.backends`` entry-point group.
"""

from __future__ import annotations

import sys as _sys

__version__ = "0.1.0"

import builtins as _builtins
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING as _TYPE_CHECKING

from . import (  # noqa: F401
    autograd as autograd,
    dispatch,
    library,
    ops,
    plugins as _plugins,
    record_function as _record_function_module,
)
from .autograd import (
    enable_grad as enable_grad,
    inference_mode as inference_mode,
    is_grad_enabled as is_grad_enabled,
    is_inference_mode_enabled as is_inference_mode_enabled,
    no_grad as no_grad,
    set_grad_enabled as set_grad_enabled,
)
from .device import (
    device as device,
    get_default_device as get_default_device,
    set_default_device as set_default_device,
)
from .dlpack import from_dlpack as from_dlpack

# `name as name`: an explicit re-export (the linter and type checkers read it as public API)
from .dtypes import (  # noqa: A004  # noqa: A004
    bfloat16 as bfloat16,
    bool as bool,
    cdouble as cdouble,
    cfloat as cfloat,
    complex64 as complex64,
    complex128 as complex128,
    double as double,
    dtype as dtype,
    finfo as finfo,
    float as float,
    float16 as float16,
    float32 as float32,
    float64 as float64,
    get_default_dtype as get_default_dtype,
    half as half,
    iinfo as iinfo,
    int as int,
    int8 as int8,
    int16 as int16,
    int32 as int32,
    int64 as int64,
    long as long,
    promote_types as promote_types,
    result_type as result_type,
    set_default_dtype as set_default_dtype,
    short as short,
    uint8 as uint8,
)
from .memory_formats import (
    channels_last as channels_last,
    channels_last_3d as channels_last_3d,
    contiguous_format as contiguous_format,
    memory_format as memory_format,
    preserve_format as preserve_format,
)
from .ops.factories_public import (
    as_tensor as as_tensor,
    asarray as asarray,
    from_numpy as from_numpy,
    tensor as tensor,
)
from .random import (
    Generator as Generator,
    get_rng_state as get_rng_state,
    initial_seed as initial_seed,
    manual_seed as manual_seed,
    seed as seed,
    set_rng_state as set_rng_state,
)
from .tensor.size import Size as Size
from .tensor.tensor import Tensor as Tensor

# every declared op with a PyTorch-style free function becomes coretorch.<name>
_NOT_FUNCTIONS = {
    "view",
    "slice",
    "alias",
    "expand",
    "expand_as",
    "view_as",
    "contiguous",
    "unfold",
}


def _export_ops() -> None:
    g = globals()
    for _name, _decl in ops.REGISTRY.items():
        if (
            _name.startswith("_")
            or _name.endswith("_")
            or _name in _NOT_FUNCTIONS
            or not _decl.function
        ):
            continue
        if _name not in g:
            g[_name] = _decl.op.entry


# the in-place ops PyTorch also has as free functions (torch.zero_(t), torch.relu_(t), ...)
_INPLACE_FUNCTIONS = (
    "abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ "
    "atan_ atanh_ ceil_ celu_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ "
    "exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_ "
    "log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ round_ rsqrt_ selu_ "
    "sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ threshold_ trunc_ xlogy_ zero_"
).split()


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
if _TYPE_CHECKING:  # what the two calls above export, for type checkers (`make stubs`)
    from .op_functions import *  # noqa: F403
from .ops.grids import block_diag, cartesian_prod, meshgrid  # noqa: E402,F401
from .ops.shape_composites import (  # noqa: E402,F401
    atleast_1d,
    atleast_2d,
    atleast_3d,
    broadcast_shapes,
    broadcast_tensors,
)
from .ops.statistics import std, var  # noqa: E402,F401  (with the (input, unbiased) form)


def is_tensor(obj) -> _builtins.bool:
    """Whether `obj` is a coretorch tensor."""
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> _builtins.int:
    """The number of elements of `t` (the product of its sizes)."""
    return t.numel()


def is_floating_point(t: Tensor) -> _builtins.bool:
    """Whether `t` has a floating-point dtype."""
    return t.is_floating_point()


def is_complex(t: Tensor) -> _builtins.bool:
    """Whether `t` has a complex dtype (complex64 or complex128)."""
    return t.is_complex()


_plugins.load_backends()


def _expose_device_modules() -> None:
    from .device import device_types

    g = globals()
    for _name, _entry in device_types().items():
        if _entry.module is not None and _name not in g:
            g[_name] = _entry.module
            _sys.modules.setdefault(f"{__name__}.{_name}", _entry.module)


def _no_cuda_module():
    """`coretorch.cuda` when no cuda backend is loaded: answers as PyTorch without CUDA."""
    from ._absent_device import absent_device_module

    return absent_device_module(
        "cuda",
        "no cuda backend is loaded (install coretorch-cuda-cupy; "
        "`python -m coretorch` lists backends)",
    )


cuda: _ModuleType  # set by _expose_device_modules (the backend's module, or a stand-in)
_expose_device_modules()
# PyTorch scripts ask coretorch.cuda.is_available() on any machine: the cuda backend's module when
# one is loaded (set just above), else one answering as PyTorch without CUDA
cuda = globals().get("cuda") or _sys.modules.setdefault(f"{__name__}.cuda", _no_cuda_module())

# PyTorch-shaped front end (nn -> autograd -> ops; imported last, after the ops exist)
# torch.profiler's names; the shim imports the profiler distribution only when a name is used
from . import (  # noqa: E402,F401  # noqa: E402,F401  # noqa: E402,F401  (mixed precision; torch.cpu.amp)
    accelerator,
    amp,
    backends,
    compile,  # noqa: E402,F401  (capture and replay; the module is callable)
    cpu,
    distributions,
    fft,
    linalg,
    multiprocessing,  # noqa: E402,F401  (tensor sharing between processes)
    nn,
    onnx,
    optim,
    profiler,  # noqa: E402,F401
    special,
    utils,
)
from .amp import (  # noqa: E402,F401
    autocast,
    clear_autocast_cache,
    get_autocast_cpu_dtype,
    get_autocast_dtype,
    get_autocast_gpu_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_cpu_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)
from .functional import chain_matmul, einsum, lu  # noqa: E402,F401  (variadic forms)
from .serialization import load, save  # noqa: E402,F401

amp.device_aliases.attach_amp(cuda, "cuda", float16)  # torch.cuda.amp
for _absent in ("mps", "xpu"):  # unless a loaded backend serves them: "not available" modules
    if _absent not in globals():
        __import__(f"{__name__}.{_absent}")
from . import sparse  # noqa: E402,F401  (sparse COO tensors; registers their kernels)
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402,F401
from .layout import layout, sparse_coo, strided  # noqa: E402,F401
from .sparse import spmm  # noqa: E402,F401
from .sparse.functional import sparse_coo_tensor  # noqa: E402,F401
from .tensor.legacy import legacy_types as _legacy_types  # noqa: E402

globals().update(_legacy_types("cpu"))  # FloatTensor, LongTensor, ... (legacy constructors)

# PyTorch's other spellings: op aliases (clip, arccos_, ...) and the layer functions it also
# offers at the top level (conv3d, layer_norm, batch_norm with ATen's argument order, ...)
from math import e as e, inf as inf, nan as nan, pi as pi  # noqa: E402  (`float` is a dtype)

from . import (  # noqa: E402
    nn_forms as _nn_forms,
    parallelism as _parallelism,
)
from .dispatch import code_cache as _code_cache  # noqa: E402
from .ops.aliases import bind_aliases as _bind_aliases  # noqa: E402
from .ops.declare import can_cast as can_cast  # noqa: E402
from .ops.inplace_views import bind_inplace_views as _bind_inplace_views  # noqa: E402
from .ops.random_forms import normal as normal  # noqa: E402
from .random import default_generator as default_generator  # noqa: E402
from .tensor.printing import set_printoptions as set_printoptions  # noqa: E402

get_num_threads, set_num_threads = _parallelism.get_num_threads, _parallelism.set_num_threads
_bind_inplace_views(Tensor)  # first: the aliases of these (swapaxes_) are bound to them
_bind_aliases(_sys.modules[__name__], Tensor, frozenset(_INPLACE_FUNCTIONS))
for _name in _nn_forms.SAME_AS_FUNCTIONAL:
    globals().setdefault(_name, getattr(nn.functional, _name))
for _name in _nn_forms.__all__[1:]:
    globals().setdefault(_name, getattr(_nn_forms, _name))
newaxis = None
_code_cache.flush()  # the entry points compiled by this import, for the next one


def typename(obj) -> _builtins.str:
    """PyTorch's type name of `obj`: ``'torch.FloatTensor'`` for a float32 cpu tensor (as
    ``Tensor.type()``), else the class's qualified name."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if isinstance(obj, type) else type(obj)
    module = "" if cls.__module__ in (None, "builtins") else cls.__module__ + "."
    return module + cls.__qualname__


def is_nonzero(input: Tensor) -> _builtins.bool:
    """The truth of a one-element tensor (RuntimeError for any other size)."""
    return input.is_nonzero()


def is_same_size(input: Tensor, other: Tensor) -> _builtins.bool:
    """Whether the two tensors have the same shape."""
    return input.is_same_size(other)


def is_signed(input: Tensor) -> _builtins.bool:
    """Whether `input`'s dtype holds negative values."""
    return input.is_signed()
