"""Plugin object for the ``coretorch.backends`` entry point ``broken``: raises on import."""

from __future__ import annotations

ERROR = "coretorch_test_broken: this plugin fails on import on purpose"

raise RuntimeError(ERROR)
