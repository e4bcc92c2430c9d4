"""coretorch.distributed across processes: each test starts a job with ``mpiexec -n 2`` or
``-n 3`` (the scripts are in tests/distributed/) and checks what every rank reported."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time

import pytest

pytest.importorskip("coretorch_mpi")

import coretorch as ct  # noqa: E402
from coretorch.distributed.run import find_mpiexec  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "distributed")
ROOT = os.path.dirname(HERE)
RUN = os.path.join(os.path.dirname(sys.executable), "coretorch-run")
HANG_GUARD = 120  # seconds: a job still running then has hung, which is a failure


def _env() -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = "1"
    return env


def mpiexec(n: int, script: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, os.path.join(SCRIPTS, script), *args]
    return subprocess.run(
        cmd, capture_output=True, text=True, timeout=HANG_GUARD, env=_env(), cwd=ROOT
    )


def launch(n: int, script: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [RUN, "-n", str(n), script, *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG_GUARD, cwd=ROOT)


@pytest.mark.parametrize("n", [2, 3])
def test_collectives_against_numpy_on_every_rank(n):
    r = mpiexec(n, "collectives.py")
    assert r.returncode == 0, r.stdout + r.stderr
    ok = re.findall(r"RANK (\d+) OK (\d+)", r.stdout)
    assert sorted(int(k) for k, _ in ok) == list(range(n)), r.stdout + r.stderr
    assert all(int(c) > 60 for _, c in ok)


@pytest.mark.parametrize("n", [2, 3])
def test_ddp_digits_matches_one_process_on_the_full_batch(n, tmp_path):
    sys.path.insert(0, SCRIPTS)
    try:
        from ddp_digits import single_process_reference
    finally:
        sys.path.remove(SCRIPTS)
    steps, batch = 20, 48
    out = str(tmp_path / "params.safetensors")
    r = mpiexec(n, "ddp_digits.py", out, str(steps), str(batch))
    assert r.returncode == 0, r.stdout + r.stderr
    got = ct.load(out)
    ref = single_process_reference(steps, batch, n)
    assert got.keys() == ref.keys()
    for k in ref:
        scale = float(ref[k].abs().max())
        err = float((got[k] - ref[k]).abs().max())
        assert err <= 1e-6 * scale, f"{k}: max difference {err} (scale {scale})"
    # and training moved the parameters away from the initial ones
    assert (
        float((ref["0.weight"] - single_process_reference(0, batch, n)["0.weight"]).abs().max())
        > 1e-3
    )


def _errors(stdout: str) -> dict[int, str]:
    # the launcher may interleave the ranks' output chunks: a report ends at the next one
    found = re.findall(r"RANK (\d+) ERROR (.*?)(?=RANK \d+ |\n|$)", stdout)
    return {int(r): msg for r, msg in found}


def test_a_raising_rank_makes_the_others_fail_naming_it():
    t0 = time.monotonic()
    r = launch(3, os.path.join(SCRIPTS, "faults.py"), "raise", "20")
    elapsed = time.monotonic() - t0
    errors = _errors(r.stdout)
    assert r.returncode != 0
    assert sorted(errors) == [0, 2], r.stdout + r.stderr
    for msg in errors.values():
        assert "all_reduce #2" in msg and "rank 1 failed" in msg and "failure injected" in msg
    assert "rank 1 of 3 failed with RuntimeError" in r.stderr
    assert elapsed < HANG_GUARD


def test_a_killed_rank_ends_the_job_with_an_error_naming_it():
    r = launch(3, os.path.join(SCRIPTS, "faults.py"), "kill", "20")
    errors = _errors(r.stdout)
    assert r.returncode != 0
    assert errors, r.stdout + r.stderr
    for msg in errors.values():
        assert "all_reduce #2" in msg and "rank 1" in msg, msg
    assert "killed by SIGKILL" in r.stderr


def test_with_plain_mpiexec_a_killed_rank_still_ends_the_job():
    r = mpiexec(3, "faults.py", "kill", "20")
    assert r.returncode != 0  # MPICH's launcher tears the job down and names the process
    assert "BAD TERMINATION" in r.stdout + r.stderr


def test_a_rank_that_never_arrives_times_out_within_the_group_timeout():
    t0 = time.monotonic()
    r = launch(3, os.path.join(SCRIPTS, "faults.py"), "hang", "2")
    errors = _errors(r.stdout)
    assert sorted(errors) == [0, 2], r.stdout + r.stderr
    assert any("timed out after" in m and "group timeout 2 s" in m for m in errors.values())
    assert time.monotonic() - t0 < HANG_GUARD


def test_launcher_runs_the_example_and_writes_one_trace_per_rank(tmp_path):
    pytest.importorskip("coretorch_profiler")
    r = launch(
        2,
        os.path.join(ROOT, "examples", "train_digits_ddp.py"),
        "--epochs",
        "1",
        "--profile",
        str(tmp_path),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "test accuracy" in r.stdout
    for rank in range(2):
        with open(tmp_path / f"trace.rank{rank}.json") as f:
            events = json.load(f)["traceEvents"]
        reduces = [e for e in events if e.get("name") == "c10d::all_reduce"]
        assert reduces, f"rank {rank}'s trace has no c10d::all_reduce"
        assert any(e["args"].get("Input type") == ["float32"] for e in reduces)
        assert any(e.get("cat") == "backward" for e in events)


def test_launcher_command_line():
    r = subprocess.run(
        [RUN, "-n", "4", "--dry-run", "train.py", "--lr", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    cmd = r.stdout.split()
    assert cmd[0].endswith("mpiexec") and cmd[cmd.index("-n") + 1] == "4"
    assert cmd[-3:] == ["train.py", "--lr", "1"]
    r = subprocess.run([RUN, "-n", "0", "x.py"], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "-n must be at least 1" in r.stderr
