"""What ``coretorch.cuda`` tells about a device: capability, properties, free memory, dtype
support (PyTorch's ``get_device_capability``, ``get_device_properties``, ``mem_get_info``,
``is_bf16_supported``). In emulation there is no device: the questions that need one raise."""

from __future__ import annotations

from dataclasses import dataclass

from . import array_module as am
from .streams import _index, require

__all__ = [
    "get_device_capability",
    "get_device_properties",
    "mem_get_info",
    "is_bf16_supported",
    "is_tf32_supported",
    "CudaDeviceProperties",
]


@dataclass(frozen=True)
class CudaDeviceProperties:
    """The fields of ``torch.cuda.get_device_properties`` that CuPy reports."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
            f"minor={self.minor}, total_memory={self.total_memory // (1 << 20)}MB, "
            f"multi_processor_count={self.multi_processor_count})"
        )


def _real_device(what: str) -> None:
    require(what)
    if am.EMULATED:
        raise RuntimeError(
            f"coretorch.cuda.{what}: CUDA is emulated ({am.EMULATION_LABEL}); there "
            f"is no device to describe"
        )


def get_device_properties(device=None) -> CudaDeviceProperties:
    """Name, compute capability, memory and multiprocessor count of `device`."""
    _real_device("get_device_properties()")
    p = am.xp.cuda.runtime.getDeviceProperties(_index(device))
    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    return CudaDeviceProperties(
        name,
        int(p["major"]),
        int(p["minor"]),
        int(p["totalGlobalMem"]),
        int(p["multiProcessorCount"]),
    )


def get_device_capability(device=None) -> tuple[int, int]:
    """The compute capability (major, minor) of `device`."""
    p = get_device_properties(device)
    return p.major, p.minor


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of `device`'s memory, as the driver reports them."""
    _real_device("mem_get_info()")
    with am.device_guard(_index(device)):
        free, total = am.xp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether cuda tensors can be bfloat16: CUDA is available and the array module holds
    arrays of ml_dtypes' bfloat16 (coretorch's bfloat16 numpy type; CuPy may not)."""
    import coretorch

    from .device_module import is_available

    if not is_available():
        return False
    try:
        am.xp.empty(1, dtype=coretorch.bfloat16.numpy)
    except Exception:  # noqa: BLE001 - any refusal means no bfloat16 arrays
        return False
    return True


def is_tf32_supported() -> bool:
    """False: coretorch's cuda matmuls never compute in TF32."""
    return False
