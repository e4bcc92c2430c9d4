"""``coretorch.backends.cpu``: what the cpu offers."""

from __future__ import annotations

__all__ = ["get_cpu_capability"]


def get_cpu_capability() -> str:
    """The widest vector instruction set this cpu has, in PyTorch's words: ``"AVX512"``,
    ``"AVX2"`` or ``"DEFAULT"`` (read from numpy's cpu feature detection)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__ as features
    except ImportError:  # numpy < 2
        try:
            from numpy.core._multiarray_umath import __cpu_features__ as features  # type: ignore[no-redef]  # numpy 1
        except ImportError:
            return "DEFAULT"
    if features.get("AVX512F") and features.get("AVX512BW") and features.get("AVX512VL"):
        return "AVX512"
    if features.get("AVX2"):
        return "AVX2"
    return "DEFAULT"
