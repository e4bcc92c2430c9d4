"""``coretorch.backends.cuda``: `is_built()` says whether a cuda backend is installed and loaded;
`matmul.allow_tf32` mirrors `set_float32_matmul_precision` as in PyTorch; the scaled-dot-product
attention switches are kept. coretorch's cuda matmuls run in full float32 (cuBLAS default math)
and its attention is one implementation (the math one), whatever these say."""

from __future__ import annotations

import contextlib
import warnings

__all__ = [
    "is_built",
    "matmul",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
    "flash_sdp_enabled",
    "enable_flash_sdp",
    "mem_efficient_sdp_enabled",
    "enable_mem_efficient_sdp",
    "math_sdp_enabled",
    "enable_math_sdp",
    "cudnn_sdp_enabled",
    "enable_cudnn_sdp",
    "is_flash_attention_available",
    "sdp_kernel",
    "preferred_linalg_library",
]

_PRECISIONS = ("highest", "high", "medium")
_precision = ["highest"]


def is_built() -> bool:
    """Whether a backend serving device ``cuda`` is loaded (coretorch-cuda-cupy); CUDA may still
    be unavailable on this machine (see ``coretorch.cuda.is_available()``)."""
    from ..device import device_types

    return "cuda" in device_types()


def get_float32_matmul_precision() -> str:
    """``'highest'`` (the default), ``'high'`` or ``'medium'``, as last set."""
    return _precision[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Record the float32 matmul precision PyTorch would use (``'highest'``, ``'high'``,
    ``'medium'``); coretorch always computes float32 matmuls in float32."""
    if precision not in _PRECISIONS:
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
            f"set_float32_matmul_precision call has no effect.",
            UserWarning,
            stacklevel=2,
        )
        return
    _precision[0] = precision


class _MatmulFlags:
    """``coretorch.backends.cuda.matmul``: the cuBLAS switches."""

    _NAMES = (
        "allow_tf32",
        "allow_fp16_reduced_precision_reduction",
        "allow_bf16_reduced_precision_reduction",
    )

    def __init__(self) -> None:
        object.__setattr__(
            self,
            "_reduced",
            {
                "allow_fp16_reduced_precision_reduction": True,
                "allow_bf16_reduced_precision_reduction": True,
            },
        )

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return _precision[0] != "highest"
        if name in self._reduced:
            return self._reduced[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            _precision[0] = "high" if value else "highest"
        elif name in self._reduced:
            self._reduced[name] = bool(value)
        else:
            raise AttributeError(f"Unknown attribute {name}")

    def __dir__(self):
        return list(self._NAMES)


matmul = _MatmulFlags()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind: str) -> tuple:
    """``{kind}_sdp_enabled()`` and ``enable_{kind}_sdp(enabled)``: one attention switch."""

    def enabled() -> bool:
        return _sdp[kind]

    def enable(enabled: bool) -> None:
        _sdp[kind] = bool(enabled)

    enabled.__name__ = enabled.__qualname__ = f"{kind}_sdp_enabled"
    enable.__name__ = enable.__qualname__ = f"enable_{kind}_sdp"
    enabled.__doc__ = f"Whether the {kind} scaled-dot-product attention switch is on."
    enable.__doc__ = f"Turn the {kind} scaled-dot-product attention switch on or off."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")


def is_flash_attention_available() -> bool:
    """False: coretorch has no flash-attention kernel."""
    return False


@contextlib.contextmanager
def sdp_kernel(
    enable_flash: bool = True,
    enable_math: bool = True,
    enable_mem_efficient: bool = True,
    enable_cudnn: bool = True,
):
    """Set the attention switches for the body of the ``with`` (PyTorch's deprecated form)."""
    saved = dict(_sdp)
    _sdp.update(
        flash=bool(enable_flash),
        math=bool(enable_math),
        mem_efficient=bool(enable_mem_efficient),
        cudnn=bool(enable_cudnn),
    )
    try:
        yield
    finally:
        _sdp.update(saved)


def preferred_linalg_library(backend=None) -> str:
    """coretorch's cuda linear algebra goes through CuPy (cuSOLVER); the choice is not
    configurable: asking for another library raises."""
    if backend not in (None, "default", "cusolver"):
        raise RuntimeError(
            f"preferred_linalg_library(): coretorch's cuda backend uses CuPy's "
            f"cuSOLVER routines only; cannot select {backend!r}"
        )
    return "cusolver"
