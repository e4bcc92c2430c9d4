"""Plugin object for the ``coretorch.backends`` entry point ``meta``."""

from __future__ import annotations

from coretorch.ops import REGISTRY
from coretorch.plugins import hookimpl
from coretorch.tensor.storage import Allocator


class MetaAllocator(Allocator):
    """Hands out no memory, only unique fake addresses; statistics are kept as on real devices."""

    def raw_allocate(self, nbytes: int, device):
        return None, self.fake_address(nbytes)


def read_numpy(t):
    """Meta tensors hold no data: raises NotImplementedError (a RuntimeError, like PyTorch's
    "Cannot copy out of meta tensor")."""
    raise NotImplementedError(
        f"Cannot copy out of meta tensor; no data! (shape "
        f"{list(t._shape)}, {t._dtype.name}): meta tensors have shapes and "
        f"dtypes but no values. Run on a data device ('cpu') to get values."
    )


def write_numpy(t, values) -> None:
    """Meta tensors hold no data: writing values is a no-op (shapes were checked already)."""


def _no_compute(out, *args, **kwargs) -> None:
    """Structured kernel on meta: the core already produced the output's metadata."""


def _data_dependent(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(
            f"{name}(): the output shape depends on the data, which meta tensors do not have"
        )

    return kernel


@hookimpl
def coretorch_register_backend(registry) -> None:
    """Plugin hook: register the meta device (no data) and a shape-only kernel for every
    primitive."""
    registry.device_type(
        "meta",
        "Meta",
        MetaAllocator(),
        read_numpy=read_numpy,
        write_numpy=write_numpy,
        has_data=False,
    )
    lib = registry.library("Meta")
    for name, decl in REGISTRY.items():
        if decl.kind != "primitive":
            continue
        lib.impl(name, _no_compute if decl.structured else _data_dependent(name))
        if decl.inplace_op is not None:
            lib.impl(decl.inplace_op, _no_compute)
