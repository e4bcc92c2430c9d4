"""Plugin object for the ``coretorch.backends`` entry point ``demo``."""

from __future__ import annotations

import numpy as np

import coretorch
from coretorch.dispatch import DispatchKey, DispatchKeySet
from coretorch.library import Library
from coretorch.plugins import hookimpl
from coretorch.tensor.impl import TensorImpl

NAMESPACE = "ctdemo"
KEY = "CtDemo"
# the name of each kernel that ran, in order: the tests read it to see which kernel was chosen
CALLS: list[str] = []
_libraries: list[Library] = []


def scaled_sum_composite(x, factor: float):
    """Decomposition into aten ops: works on every backend, autograd through mul and sum."""
    CALLS.append("CompositeImplicitAutograd")
    return (x * factor).sum()


def scaled_sum_cpu(x, factor: float):
    """A direct CPU kernel (beats the composite on CPU), computing in float64 with numpy."""
    CALLS.append("CPU")
    value = np.asarray(x.detach().numpy(), dtype=np.float64).sum() * factor
    return coretorch.tensor(float(value), dtype=x.dtype)


def scaled_sum_demo(keyset: DispatchKeySet, x, factor: float):
    """The kernel at the plugin's own key: records itself, then computes like the composite."""
    CALLS.append(KEY)
    return (x * factor).sum()


def demo_fallback(op, keyset: DispatchKeySet, args: tuple, kwargs: dict):
    """Boxed fallback at CtDemo for every op without a kernel there: record, then run the op on
    the backends of its tensor arguments."""
    CALLS.append(f"fallback:{op.qualname}")
    bits = 0
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorImpl):
            bits |= a._keys
    return op.redispatch(bits & ~DispatchKeySet(DispatchKey.get(KEY)).bits, *args, **kwargs)


@hookimpl
def coretorch_register_backend(registry) -> None:
    registry.dispatch_key(KEY)
    lib = Library(NAMESPACE, "DEF")
    _libraries.append(lib)
    lib.define("scaled_sum(Tensor x, float factor) -> Tensor")
    lib.impl("scaled_sum", scaled_sum_composite, "CompositeImplicitAutograd")
    lib.impl("scaled_sum", scaled_sum_demo, KEY, with_keyset=True)
    try:
        DispatchKey.get("CPU")
    except ValueError:  # no cpu backend loaded: the composite serves every device
        pass
    else:
        lib.impl("scaled_sum", scaled_sum_cpu, "CPU")
    registry.library(KEY).fallback(demo_fallback)


@hookimpl
def coretorch_backend_available():
    return True, ""
