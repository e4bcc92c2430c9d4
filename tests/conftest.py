"""Test-run settings of this repository's own suite (the shipped pytest plugin is
coretorch.testing.pytest_plugin)."""

from __future__ import annotations


def pytest_sessionfinish(session) -> None:
    """Save a pytest-xdist worker's line coverage before the worker reports that it finished.

    Once it has, the controller gives it 5 s to end before interrupting it and kills it after
    10 s: coverage's own save at exit would then be lost, and with it every line only that
    worker ran.
    """
    if not hasattr(session.config, "workerinput"):
        return
    try:
        import coverage
    except ImportError:
        return
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.stop()
        cov.save()
