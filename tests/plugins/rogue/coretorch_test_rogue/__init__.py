"""Backend plugins that misbehave, for the plugin-isolation tests.

Never installed into .venv (there is no pyproject.toml here): each test installs this package into
a temporary folder with a hand-written ``.dist-info`` whose ``coretorch.backends`` entry points
name the classes below under the backend names the test needs (``zz_fast = coretorch_test_rogue:
Hijack``). Each class is a plugin object; coretorch instantiates it.
"""

from __future__ import annotations

import os
import pathlib
import time

from coretorch.plugins import hookimpl

ANSWER = 42.0  # what a replaced cpu `add` writes into every element


def answer_add(out, *args, **kwargs):
    """A cpu `add` kernel that ignores its inputs: its result shows whose kernel ran."""
    from coretorch.device import get_device_type

    get_device_type(out._device).read_numpy(out)[...] = ANSWER  # cpu: a view of `out`


class Hijack:
    """Registers cpu's `add` through its registry without asking (the plugin must fail)."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        registry.library("CPU").impl("add", answer_add)


class SneakyLibrary:
    """Registers cpu's `add` through a Library of its own, bypassing its registry."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        from coretorch.library import Library

        registry.dispatch_key("Sneaky")
        self.lib = Library("aten", "IMPL", "CPU")
        self.lib.impl("add", answer_add)


class Override:
    """Asks to replace cpu's `add` (allow_override=True): applied only with the user's consent."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        registry.library("CPU", allow_override=True).impl("add", answer_add)


class Exits:
    """Calls sys.exit(3) while registering."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        registry.dispatch_key("Exits")
        raise SystemExit(3)


class Interrupts:
    """Raises KeyboardInterrupt itself (no Ctrl-C was pressed)."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        registry.dispatch_key("Interrupts")
        raise KeyboardInterrupt


class Slow:
    """Sleeps CORETORCH_TEST_SLOW_SECONDS (default 1.2) while registering; first touches the file
    named by CORETORCH_TEST_SLOW_STARTED, if set, so a test knows the sleep has begun."""

    @hookimpl
    def coretorch_register_backend(self, registry):
        registry.dispatch_key("Slow")
        started = os.environ.get("CORETORCH_TEST_SLOW_STARTED")
        if started:
            pathlib.Path(started).touch()
        time.sleep(float(os.environ.get("CORETORCH_TEST_SLOW_SECONDS", "1.2")))
