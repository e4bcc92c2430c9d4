"""The OpInfo conformance suite on the project's backends (cpu, meta): the test functions are
those of `coretorch.testing.conformance.test_ops`, shared with third-party backend runs."""

from coretorch.testing.conformance.test_ops import *  # noqa: F401,F403
