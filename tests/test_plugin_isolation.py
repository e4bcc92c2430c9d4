"""Plugins cannot hijack each other: a backend registers kernels only at its own dispatch keys,
replacing another backend's kernels needs the plugin's request and the user's consent, load order
is fixed, any exception a plugin raises (SystemExit and KeyboardInterrupt included) only fails
that plugin, and slow plugins are timed and reported.

The misbehaving plugins are the classes of tests/plugins/rogue/coretorch_test_rogue, installed
into temporary folders under the entry-point names each test needs (never into .venv).
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

import coretorch as ct
from coretorch.plugins import backends

ROGUE = pathlib.Path(__file__).parent / "plugins" / "rogue" / "coretorch_test_rogue"


def install(
    site: pathlib.Path, dist: str, entry_points: dict[str, str], package: bool = True
) -> pathlib.Path:
    """Install distribution `dist` into folder `site` the way pip lays it out: the rogue package
    (unless `package` is False) and a .dist-info declaring `entry_points` (backend name ->
    ``"coretorch_test_rogue:Class"``) in group coretorch.backends."""
    if package:
        shutil.copytree(ROGUE, site / ROGUE.name, ignore=shutil.ignore_patterns("__pycache__"))
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[coretorch.backends]\n" + "".join(f"{n} = {v}\n" for n, v in entry_points.items())
    )
    return site


def python_env(*paths: pathlib.Path, **overrides: str) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CORETORCH_BACKENDS", "CORETORCH_ALLOW_OVERRIDES")
    }
    env.update(COLUMNS="250", NO_COLOR="1", **overrides)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(p) for p in paths] + [p for p in [env.get("PYTHONPATH", "")] if p]
    )
    return env


def run_python(
    code: str, *paths: pathlib.Path, args: "list[str] | None" = None, **env
) -> subprocess.CompletedProcess:
    """Run `code` (or ``python ARGS``) in a fresh interpreter with `paths` first on sys.path."""
    cmd = [sys.executable] + (args if args is not None else ["-c", code])
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        env=python_env(*paths, **env),
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def last_json(out: subprocess.CompletedProcess):
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


# the BackendWarnings other than "took N s to load", which a loaded machine can cause for any
# backend (test_slow_plugin_is_warned_about_and_its_time_shown checks that one)
REPORT = textwrap.dedent("""
    import json, warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import coretorch as ct
    print(json.dumps({
        "backends": {n: [i.status, i.reason, i.dispatch_keys, getattr(i, "overrides", None),
                         getattr(i, "overrides_enabled", None)]
                     for n, i in ct.plugins.backends().items()},
        "add": (ct.ones(2) + ct.ones(2)).tolist(),
        "warnings": [str(w.message) for w in caught if w.category.__name__ == "BackendWarning"
                     and "s to load;" not in str(w.message)]}))
""")


# ---- a backend registers kernels only at its own keys -------------------------------------------


def test_kernels_at_another_backends_key_fail_the_plugin(tmp_path):
    site = install(
        tmp_path,
        "ct-rogue",
        {
            "zz_fast": "coretorch_test_rogue:Hijack",
            "zz_sneaky": "coretorch_test_rogue:SneakyLibrary",
        },
    )
    st = last_json(run_python(REPORT, site))
    fast, sneaky = st["backends"]["zz_fast"], st["backends"]["zz_sneaky"]
    assert fast[0] == "failed"
    assert "cannot claim dispatch key 'CPU': it belongs to backend 'cpu'" in fast[1]
    assert "allow_override=True" in fast[1]
    assert fast[2] == [], "not credited with the cpu key"
    assert sneaky[0] == "failed"
    assert "registered 1 kernel(s) at dispatch keys it does not own: cpu.add" in sneaky[1]
    assert st["add"] == [2.0, 2.0], "the cpu backend's own add kernel runs"
    assert st["backends"]["cpu"][:4] == ["loaded", "", ["CPU"], []]


@pytest.mark.parametrize("name", ["aa_fast", "zz_fast"])
def test_override_is_applied_only_with_consent_whatever_the_name(tmp_path, name):
    """aa_fast loads before the cpu backend and zz_fast after it: the outcome is the same."""
    site = install(tmp_path, "ct-rogue", {name: "coretorch_test_rogue:Override"})
    st = last_json(run_python(REPORT, site))
    assert st["backends"][name] == ["loaded", "", [], ["cpu.add"], False]
    assert st["add"] == [2.0, 2.0] and st["warnings"] == []

    st = last_json(run_python(REPORT, site, CORETORCH_ALLOW_OVERRIDES=name))
    assert st["backends"][name] == ["loaded", "", [], ["cpu.add"], True]
    assert st["add"] == [42.0, 42.0]
    assert st["warnings"] == [
        f"backend '{name}' replaces kernels of other backends: cpu.add "
        f"(allowed by CORETORCH_ALLOW_OVERRIDES)"
    ]


def test_enable_overrides_api_warns_once(tmp_path):
    site = install(tmp_path, "ct-rogue", {"zz_fast": "coretorch_test_rogue:Override"})
    code = textwrap.dedent("""
        import json, warnings
        import coretorch as ct
        from coretorch.plugins import enable_overrides
        before = (ct.ones(2) + ct.ones(2)).tolist()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first, second = enable_overrides("zz_fast"), enable_overrides("zz_fast")
        print(json.dumps([before, (ct.ones(2) + ct.ones(2)).tolist(), first, second,
                          [str(w.message) for w in caught]]))
    """)
    before, after, first, second, caught = last_json(run_python(code, site))
    assert before == [2.0, 2.0] and after == [42.0, 42.0]
    assert first == second == ["cpu.add"]
    assert caught == [
        "backend 'zz_fast' replaces kernels of other backends: cpu.add "
        "(allowed by coretorch.plugins.enable_overrides())"
    ]


def test_python_m_coretorch_shows_overrides(tmp_path):
    site = install(tmp_path, "ct-rogue", {"zz_fast": "coretorch_test_rogue:Override"})
    out = run_python("", site, args=["-m", "coretorch"], CORETORCH_ALLOW_OVERRIDES="zz_fast")
    assert out.returncode == 0, out.stderr
    assert "zz_fast overrides: cpu.add" in out.stdout
    row = next(line for line in out.stdout.splitlines() if " zz_fast " in line)
    assert "cpu.add" in row
    cpu = next(line for line in out.stdout.splitlines() if line.startswith("│ cpu "))
    assert "cpu.add" not in cpu
    out = run_python("", site, args=["-m", "coretorch"])
    assert (
        "zz_fast asks to override: cpu.add (not allowed; set "
        "CORETORCH_ALLOW_OVERRIDES=zz_fast to allow)" in out.stdout
    )


def test_enable_overrides_rejects_unknown_and_unloaded_backends():
    with pytest.raises(ValueError, match=r"named 'mta' is installed.*Did you mean 'meta'"):
        ct.plugins.enable_overrides("mta")
    assert ct.plugins.enable_overrides("meta") == []  # a backend that asked for nothing


# ---- load order -------------------------------------------------------------------------------


def test_load_order_is_by_name_then_distribution(tmp_path):
    """Two distributions provide backend 'dup': the one whose distribution name sorts first is
    used whatever the order of sys.path, and a warning names both."""
    pkg = tmp_path / "pkg"
    shutil.copytree(ROGUE, pkg / ROGUE.name)
    a = install(tmp_path / "a", "ct-dup-a", {"dup": "coretorch_test_rogue:Override"}, False)
    b = install(tmp_path / "b", "ct-dup-b", {"dup": "coretorch_test_rogue:Hijack"}, False)
    code = textwrap.dedent("""
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import coretorch as ct
        info = ct.plugins.backends()["dup"]
        print(json.dumps([list(ct.plugins.backends()), info.distribution, info.status,
                          [str(w.message) for w in caught if "dup" in str(w.message)]]))
    """)
    for paths in ((a, b, pkg), (b, a, pkg)):
        names, dist, status, caught = last_json(run_python(code, *paths))
        assert names == sorted(names)
        assert (dist, status) == ("ct-dup-a", "loaded")
        assert caught == [
            "two installed distributions provide a coretorch backend named 'dup': "
            "'ct-dup-a' (used) and 'ct-dup-b' (ignored); uninstall one of them"
        ]


# ---- any exception from a plugin fails only that plugin ----------------------------------------


def test_system_exit_and_keyboard_interrupt_from_a_plugin_fail_only_it(tmp_path):
    site = install(
        tmp_path,
        "ct-rogue",
        {"exits": "coretorch_test_rogue:Exits", "interrupts": "coretorch_test_rogue:Interrupts"},
    )
    st = last_json(run_python(REPORT, site))
    assert st["backends"]["exits"][:2] == ["failed", "SystemExit: 3"]
    assert st["backends"]["interrupts"][:2] == ["failed", "KeyboardInterrupt"]
    assert st["add"] == [2.0, 2.0]
    assert st["backends"]["meta"][0] == "loaded"


def test_ctrl_c_during_import_stops_it(tmp_path):
    """A Ctrl-C the user presses while a plugin loads is not the plugin's failure: import stops
    with KeyboardInterrupt, as it would anywhere else."""
    site = install(tmp_path, "ct-rogue", {"slow": "coretorch_test_rogue:Slow"})
    started = tmp_path / "started"
    env = python_env(
        site, CORETORCH_TEST_SLOW_SECONDS="60", CORETORCH_TEST_SLOW_STARTED=str(started)
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", "import coretorch\nprint('imported')"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert time.monotonic() - t0 < 30
    assert proc.returncode != 0 and "imported" not in out
    assert err.rstrip().splitlines()[-1] == "KeyboardInterrupt", err


# ---- load time ---------------------------------------------------------------------------------


def test_every_backend_is_timed():
    for info in backends().values():
        if info.status != "skipped":
            assert 0 < info.load_time < 60, info.name


def test_slow_plugin_is_warned_about_and_its_time_shown(tmp_path):
    site = install(tmp_path, "ct-rogue", {"slow": "coretorch_test_rogue:Slow"})
    out = run_python("", site, args=["-m", "coretorch"], CORETORCH_TEST_SLOW_SECONDS="1.2")
    assert out.returncode == 0, out.stderr
    warned = re.findall(r"BackendWarning: backend '(\w+)' took (\d+\.\d) s to load", out.stderr)
    assert len(warned) == 1 and warned[0][0] == "slow" and float(warned[0][1]) >= 1.2, out.stderr
    row = next(line for line in out.stdout.splitlines() if " slow " in line)
    assert re.search(r" \d+\.\d s ", row), row
    meta = next(line for line in out.stdout.splitlines() if line.startswith("│ meta "))
    assert " ms " in meta
