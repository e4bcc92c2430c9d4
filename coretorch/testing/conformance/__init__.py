"""The backend conformance suite: ``pytest --pyargs coretorch.testing.conformance --backend NAME``.

Runs every OpInfo of `coretorch.testing.opinfo.OP_DB` (functional, in-place and out= forms, torch
parity, gradcheck) on the devices of backend NAME, and ends with a per-op table (native /
fallback / composite / missing / failing). The project's own tests/test_ops_conformance.py runs
the same test functions (`test_ops`).
"""
