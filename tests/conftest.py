"""Test-run settings of this repository's own suite (the shipped pytest plugin is
coretorch.testing.pytest_plugin): how `make test` measures line coverage cheaply."""

from __future__ import annotations

import os

import pytest

# Python 3.11's coverage tracer slows every line the interpreter runs (about 1.9x on this
# suite). Tests that run the same library lines as a sibling run with the tracer paused:
# - the dtype variants of a parametrized test after its first (the OpInfo suites run each op's
#   test once per dtype; the first, in collection order, is measured);
# - the OpInfo suite's gradcheck: its finite differences call each op hundreds of times, and the
#   backward formulas it checks are the ones test_autograd_opinfo runs on every sample;
# - tests marked `untraced` (the documentation build, whose tutorials call what other tests
#   call), and the processes they start.
# The figures are then lower bounds of what the whole suite covers.
_UNTRACED = pytest.StashKey[bool]()
_REPEATS = {"test_gradcheck"}
_paused: list = []  # [(the coverage collector, its subprocess configuration)] while paused


def _coverage():
    try:
        import coverage
    except ImportError:
        return None
    return coverage.Coverage.current()


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers", "untraced: run with the coverage tracer paused (see tests/conftest.py)"
    )


def _variant_key(item) -> tuple | None:
    spec = getattr(item, "callspec", None)
    if spec is None or "dtype" not in spec.params:
        return None
    rest = tuple(
        sorted(
            (k, v if isinstance(v, (str, int, float, bool)) else id(v))
            for k, v in spec.params.items()
            if k != "dtype"
        )
    )
    return (str(item.path), getattr(item, "originalname", item.name), rest)


def pytest_collection_modifyitems(session, config, items) -> None:
    if _coverage() is None:
        return
    seen: set[tuple] = set()
    for item in items:
        name = getattr(item, "originalname", None)
        if item.get_closest_marker("untraced") is not None or name in _REPEATS:
            item.stash[_UNTRACED] = True
            continue
        key = _variant_key(item)
        if key is None:
            continue
        if key in seen:
            item.stash[_UNTRACED] = True
        else:
            seen.add(key)


def _pause() -> None:
    # the collector's pause and resume: Coverage.stop and start would also re-check every
    # imported module on each start (slow, and it fails on PyTorch's op namespaces)
    collector = getattr(_coverage(), "_collector", None)
    if collector is not None and not _paused:
        collector.pause()
        _paused.append((collector, os.environ.pop("COVERAGE_PROCESS_CONFIG", None)))


def _resume() -> None:
    if _paused:
        collector, config = _paused.pop()
        if config is not None:
            os.environ["COVERAGE_PROCESS_CONFIG"] = config
        collector.resume()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    untraced = item.stash.get(_UNTRACED, False)
    if untraced:
        _pause()
    try:
        yield
    finally:
        # consecutive untraced tests stay paused in between
        if untraced and (nextitem is None or not nextitem.stash.get(_UNTRACED, False)):
            _resume()


def pytest_sessionfinish(session) -> None:
    """Save a pytest-xdist worker's line coverage before the worker reports that it finished.

    Once it has, the controller gives it 5 s to end before interrupting it and kills it after
    10 s: coverage's own save at exit would then be lost, and with it every line only that
    worker ran.
    """
    _resume()
    if not hasattr(session.config, "workerinput"):
        return
    cov = _coverage()
    if cov is not None:
        cov.stop()
        cov.save()
