"""What a user pastes into a bug report: versions, backends (and why any failed), threads, BLAS.

    python -m coretorch --info
    python -m coretorch.utils.collect_env

The same report as PyTorch's ``python -m torch.utils.collect_env``, for coretorch's stack.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import platform
import sys

__all__ = ["get_env_info", "get_pretty_env_info", "main"]

# the distributions whose versions matter for a report, in the order they are shown
PACKAGES = (
    "coretorch",
    "numpy",
    "numba",
    "scipy",
    "pluggy",
    "rich",
    "safetensors",
    "ml_dtypes",
    "mpi4py",
    "cupy-cuda12x",
    "torch",
)
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "CORETORCH_BACKENDS",
)


def _version(name: str) -> str:
    try:
        return md.version(name)
    except md.PackageNotFoundError:
        return "not installed"


def _blas() -> str:
    """The BLAS numpy (and so the cpu backend's matmul) was built against."""
    import numpy as np

    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps.get("blas", {})
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except (TypeError, KeyError, AttributeError):  # numpy builds without the dicts mode
        return "unknown"


def _threads() -> dict[str, str]:
    found = {"cpu cores (os.cpu_count)": str(os.cpu_count())}
    try:
        import numba

        layer = numba.threading_layer() if _numba_ran() else "chosen at the first parallel kernel"
        found["numba threads"] = f"{numba.get_num_threads()} (threading layer: {layer})"
    except ImportError:
        found["numba threads"] = "numba not installed"
    for var in THREAD_VARIABLES:
        if var in os.environ:
            found[var] = os.environ[var]
    return found


def _numba_ran() -> bool:
    """numba.threading_layer() raises until a parallel kernel has run."""
    import numba

    try:
        numba.threading_layer()
        return True
    except ValueError:
        return False


def _backends() -> list[dict[str, str]]:
    import coretorch  # noqa: F401  (loads the backends)

    from ..plugins import backends

    rows = []
    for info in backends().values():
        rows.append(
            {
                "name": info.name,
                "version": info.version or "?",
                "status": info.status,
                "reason": info.reason,
                "devices": ", ".join(info.device_types) or "-",
            }
        )
    return rows


def get_env_info() -> dict:
    """The report as a dict: python, platform, package versions, backends, threads, BLAS."""
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {name: _version(name) for name in PACKAGES},
        "backends": _backends(),
        "threads": _threads(),
        "blas": _blas(),
    }


def get_pretty_env_info() -> str:
    """The report as text, one fact per line."""
    info = get_env_info()
    lines = [
        f"python: {info['python']}",
        f"platform: {info['platform']}",
        f"blas (numpy's): {info['blas']}",
        "packages:",
    ]
    lines += [f"  {name}: {version}" for name, version in info["packages"].items()]
    lines.append("backends:")
    for b in info["backends"]:
        why = f" ({b['reason']})" if b["reason"] else ""
        lines.append(f"  {b['name']} {b['version']}: {b['status']}{why}; devices {b['devices']}")
    lines.append("threads:")
    lines += [f"  {k}: {v}" for k, v in info["threads"].items()]
    return "\n".join(lines)


def main() -> int:
    """Print the environment report (versions, backends, threads) and return 0."""
    print(get_pretty_env_info())
    return 0


if __name__ == "__main__":
    sys.exit(main())
