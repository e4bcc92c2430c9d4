"""pytest plugin (entry point ``pytest11``): ``--backend NAME`` and the `device` fixtures.

Tests that take a `device` argument run once per installed, available device type (or only on
the ones named with ``--backend``); `data_device` skips shape-only devices such as meta.
"""
from __future__ import annotations

import pytest


def pytest_addoption(parser) -> None:
    group = parser.getgroup("coretorch")
    group.addoption("--backend", action="append", default=None, metavar="NAME",
                    help="run device-parametrized tests only on this backend's device types "
                         "(repeatable; default: every loaded backend)")


def selected_device_types(config) -> list[str]:
    """Device types the session tests: those of loaded backends, filtered by --backend."""
    import coretorch  # noqa: F401  (loads the backends)
    from coretorch.device import device_types
    from coretorch.plugins import backends
    wanted = config.getoption("backend")
    out = []
    for info in backends().values():
        if info.status != "loaded":
            continue
        if wanted and info.name not in wanted and not set(info.device_types) & set(wanted):
            continue
        out.extend(t for t in info.device_types if t in device_types())
    if wanted and not out:
        raise pytest.UsageError(f"--backend {', '.join(wanted)}: no such loaded backend "
                                f"(loaded: {', '.join(n for n, i in backends().items() if i.status == 'loaded')})")
    return out


def pytest_generate_tests(metafunc) -> None:
    from coretorch.device import device_types
    if "device" in metafunc.fixturenames:
        types = selected_device_types(metafunc.config)
        metafunc.parametrize("device", types, ids=types)
    if "data_device" in metafunc.fixturenames:
        types = [t for t in selected_device_types(metafunc.config) if device_types()[t].has_data]
        metafunc.parametrize("data_device", types, ids=types)
