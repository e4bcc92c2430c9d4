"""The device-hook conformance tests on the project's backends (shared with third-party runs)."""

from coretorch.testing.conformance.test_device_hooks import *  # noqa: F401,F403
