"""The elementwise-fusion conformance tests on the project's backends (shared with third-party
runs): every op with a scalar formula, fused in a chain, matches eager on its OpInfo samples."""

from coretorch.testing.conformance.test_fusion import *  # noqa: F401,F403
