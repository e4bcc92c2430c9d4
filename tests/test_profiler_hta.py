"""Holistic Trace Analysis (HTA, an optional test extra: pip install 'coretorch-profiler[hta]')
reads coretorch traces: temporal breakdown, idle time, kernel breakdown, steps and TraceDiff.

The run uses the cuda backend in emulation (numpy standing in for CuPy) so that the trace has
a device track, which HTA's analyses are about."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip(
    "hta",
    reason="HolisticTraceAnalysis is not installed (optional test extra: "
    "pip install 'coretorch-profiler[hta]')",
)

SCRIPT = """
    import json, logging, sys, warnings
    import coretorch as ct
    import coretorch.nn as nn
    import coretorch.nn.functional as F
    from coretorch_profiler import profile, tensorboard_trace_handler

    out = sys.argv[1]
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to("cuda")
    opt = ct.optim.SGD(model.parameters(), lr=0.1)
    x, y = ct.randn(16, 32, device="cuda"), ct.randint(0, 4, (16,), device="cuda")

    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    step()
    with profile(on_trace_ready=tensorboard_trace_handler(out, worker_name="rank0")):
        for _ in range(5):
            step()

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
    a = TraceAnalysis(trace_dir=out)
    temporal = a.get_temporal_breakdown(visualize=False).to_dict("records")
    idle = a.get_idle_time_breakdown(visualize=False)[0].to_dict("records")
    kernels = a.get_gpu_kernel_breakdown(visualize=False)[0].to_dict("records")
    steps = sorted(int(i) for i in a.t.get_trace(0)["iteration"].unique() if i >= 0)
    from hta.common.trace import Trace
    from hta.trace_diff import TraceDiff
    runs = []
    for _ in range(2):
        t = Trace(trace_dir=out)
        t.parse_traces()
        t.decode_symbol_ids(use_shorten_name=False)
        runs.append(t)
    d = TraceDiff.compare_traces(*runs)
    same = {n: int(r["diff_counts"]) for n, r in d.iterrows()}
    print("RESULT", json.dumps({"temporal": temporal, "idle": idle, "kernels": kernels,
                                "steps": steps, "diff": same}))
"""


def test_hta_analyses_a_coretorch_trace(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = dict(os.environ, CORETORCH_CUDA_EMULATE="1", PYTHONWARNINGS="ignore")
    r = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "traces")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT"))[7:])
    (t,) = res["temporal"]
    assert t["rank"] == 0 and t["kernel_time(us)"] > 0
    assert t["idle_time(us)"] >= 0 and t["compute_time(us)"] > 0 and t["non_compute_time(us)"] >= 0
    assert t["idle_time(us)"] + t["compute_time(us)"] + t["non_compute_time(us)"] == pytest.approx(
        t["kernel_time(us)"]
    )
    assert res["idle"] and all(r["idle_time"] >= 0 for r in res["idle"])
    assert res["kernels"][0]["kernel_type"] == "COMPUTATION"
    # the ProfilerStep#N of the five optimizer steps; HTA leaves out the last one it finds
    assert res["steps"] == [0, 1, 2, 3]
    # TraceDiff of the run against itself: every op found, no change
    assert {"aten::addmm", "AddmmBackward0", "Optimizer.step#SGD.step"} <= set(res["diff"])
    assert set(res["diff"].values()) == {0}
