"""pytest plugin (entry point ``pytest11``): ``--backend NAME``, the `device` fixtures and the
conformance table.

Tests that take a `device` argument run once per installed, available device type (or only on
the ones named with ``--backend``); `data_device` skips shape-only devices such as meta.
After a run that included OpInfo conformance tests, the terminal summary lists per op and
device whether the backend runs it natively, as a composite, through the CPU fallback, or not
at all, and which ops failed.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser) -> None:
    """Add --backend and --conformance-table to pytest."""
    group = parser.getgroup("coretorch")
    group.addoption(
        "--backend",
        action="append",
        default=None,
        metavar="NAME",
        help="run device-parametrized tests only on this backend's device types "
        "(repeatable; default: every loaded backend)",
    )
    group.addoption(
        "--conformance-table",
        action="store_true",
        default=False,
        help="print the per-op conformance table (native / composite / fallback / "
        "missing / failing) even without --backend",
    )


def selected_device_types(config) -> list[str]:
    """Device types the session tests: those of loaded backends, filtered by --backend."""
    import coretorch  # noqa: F401  (loads the backends)
    from coretorch.device import device_types
    from coretorch.plugins import backends

    wanted = config.getoption("backend")
    out: list = []
    for info in backends().values():
        if info.status != "loaded":
            continue
        if wanted and info.name not in wanted and not set(info.device_types) & set(wanted):
            continue
        out.extend(t for t in info.device_types if t in device_types())
    problems = backend_option_problems(wanted) if wanted else []
    if problems:
        raise pytest.UsageError("\n".join(problems))
    return out


def backend_option_problems(wanted: list[str]) -> list[str]:
    """Why each name given to --backend cannot be tested (it failed to load, was skipped, is
    unavailable, registers no device type, or is unknown: then the closest name is suggested)."""
    from coretorch._suggest import did_you_mean
    from coretorch.device import device_types
    from coretorch.plugins import backends, why_not_loaded

    loaded = {n: i for n, i in backends().items() if i.status == "loaded"}
    testable = {t for i in loaded.values() for t in i.device_types if t in device_types()}
    problems = []
    for name in wanted:
        if name in testable or (name in loaded and set(loaded[name].device_types) & testable):
            continue
        why = why_not_loaded(name) or (
            f"no such backend or device type (loaded: {', '.join(loaded) or 'none'})."
            f"{did_you_mean(name, [*backends(), *testable])}"
        )
        problems.append(f"--backend {name}: {why}")
    return problems


def pytest_generate_tests(metafunc) -> None:
    """Parametrize `device` / `data_device` fixtures over the selected backends' device types."""
    from coretorch.device import device_types

    if "device" in metafunc.fixturenames:
        types = selected_device_types(metafunc.config)
        metafunc.parametrize("device", types, ids=types)
    if "data_device" in metafunc.fixturenames:
        types = [t for t in selected_device_types(metafunc.config) if device_types()[t].has_data]
        metafunc.parametrize("data_device", types, ids=types)


# ---- the per-op conformance table -------------------------------------------------------------

_FAILED = pytest.StashKey[set]()
_RAN = pytest.StashKey[set]()
_CALLED = pytest.StashKey[dict]()  # (op, device) of a failed test -> the ops it called


def pytest_configure(config) -> None:
    """Register the conformance marker and set up the per-op bookkeeping.

    Raises:
        pytest.UsageError: when --backend names a backend that is not loaded.
    """
    config.stash[_FAILED] = set()
    config.stash[_RAN] = set()
    config.stash[_CALLED] = {}
    config.addinivalue_line("markers", "conformance: an OpInfo conformance test")
    wanted = config.getoption("backend", None)
    if wanted:  # refuse a bad --backend before collecting anything
        import coretorch  # noqa: F401  (loads the backends)

        problems = backend_option_problems(wanted)
        if problems:
            raise pytest.UsageError("\n".join(problems))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Record which (op, device) pairs ran and failed, for the summary table."""
    outcome = yield
    report = outcome.get_result()
    params = getattr(getattr(item, "callspec", None), "params", {})
    info = params.get("opinfo")
    if info is None or report.when != "call" and not report.failed:
        return
    dev = params.get("device") or params.get("data_device")
    item.config.stash[_RAN].add((info.name, dev))
    if report.failed:
        item.config.stash[_FAILED].add((info.name, dev))
        if call.when == "call":
            called = item.config.stash[_CALLED].setdefault((info.name, dev), set())
            called |= _ops_called(item)


_WORKER_OUTPUT = "coretorch_conformance"


def pytest_sessionfinish(session) -> None:
    """In a pytest-xdist worker, hand the per-op bookkeeping to the controller, which prints the
    summary (`pytest_testnodedown` merges it)."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        stash = session.config.stash
        # (op, device) pairs: the device is None for tests without one (no sorting None and str)
        out[_WORKER_OUTPUT] = (
            list(stash[_RAN]),
            list(stash[_FAILED]),
            [(key, list(ops)) for key, ops in stash[_CALLED].items()],
        )


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """Merge a finished pytest-xdist worker's per-op bookkeeping into the controller's."""
    data = getattr(node, "workeroutput", {}).get(_WORKER_OUTPUT)
    if data is None:
        return
    ran, failed, called = data
    stash = node.config.stash
    stash[_RAN].update(tuple(x) for x in ran)
    stash[_FAILED].update(tuple(x) for x in failed)
    for key, ops in called:
        stash[_CALLED].setdefault(tuple(key), set()).update(ops)


def _ops_called(item) -> set[str]:
    """The ops a failed test calls: it runs again with a RecordFunction observer (only failed
    tests pay for this), so a failure can be traced to a broken primitive underneath."""
    from coretorch import record_function as rf

    names: set[str] = set()
    handle = rf.add_thread_local_callback(
        lambda r: names.add(r.name.split("::")[-1]), scopes={rf.RecordScope.FUNCTION}
    )
    try:
        item.runtest()
    except Exception:  # noqa: BLE001 - the failure itself was already reported
        pass
    finally:
        rf.remove_callback(handle)
    return names


def root_causes(failed: set, called: dict) -> dict:
    """``{(primitive, device): [failed ops that call it]}``: failing tests traced to a failing
    primitive they call (a composite built on a broken `add` fails because of `add`)."""
    from coretorch.ops import REGISTRY

    broken = {(n, d) for n, d in failed if n in REGISTRY and REGISTRY[n].kind == "primitive"}
    causes: dict = {}
    for (n, d), ops in called.items():
        for p in sorted(ops):
            if p != n and (p, d) in broken:
                causes.setdefault((p, d), []).append(n)
    return causes


def op_status(name: str, device_type: str) -> str:
    """How the backend of `device_type` runs op `name` (see `key_status`)."""
    from coretorch.device import device_types

    return key_status(name, device_types()[device_type].dispatch_key)


def key_status(name: str, key) -> str:
    """How dispatch key `key` runs op `name` (`coretorch.coverage`)."""
    from coretorch.coverage import op_status_for_key

    return op_status_for_key(name, key)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Print the per-op conformance status (native / composite / fallback / failing) per device."""
    ran = config.stash.get(_RAN, set())
    if not ran:
        return
    failed = config.stash.get(_FAILED, set())
    devices = sorted({d for _, d in ran if d})
    names = sorted({n for n, _ in ran})
    tr = terminalreporter
    full = bool(config.getoption("backend")) or config.getoption("conformance_table")
    tr.section("coretorch conformance per op")
    counts: dict[str, dict] = {d: {} for d in devices}
    rows = []
    for n in names:
        row = []
        for d in devices:
            st = key = op_status(n, d)
            if (n, d) in failed:
                st, key = f"failing ({st})", "failing"
            elif (n, d) not in ran:
                st = f"{st}, untested"
            counts[d][key] = counts[d].get(key, 0) + 1
            row.append(st)
        rows.append((n, row))
    if full:
        width = max(len(n) for n in names) + 2
        tr.write_line("op".ljust(width) + "".join(d.ljust(26) for d in devices))
        for n, row in rows:
            tr.write_line(n.ljust(width) + "".join(s.ljust(26) for s in row))
    for d in devices:
        summary = ", ".join(f"{v} {k}" for k, v in sorted(counts[d].items()))
        tr.write_line(f"{d}: {len(names)} ops: {summary}")
    if not full:
        tr.write_line("(per-op table: --backend NAME or --conformance-table)")
    for (p, d), ops in sorted(
        root_causes(failed, config.stash.get(_CALLED, {})).items(), key=lambda kv: -len(kv[1])
    ):
        tr.write_line(
            f"{d}: {len(ops)} failing op(s) trace to `{p}`, which fails its own "
            f"tests and which they call: {', '.join(sorted(set(ops)))}",
            red=True,
        )
