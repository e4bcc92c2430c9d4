"""Chrome traces: a checker enforcing the trace rules, run over real traces."""

from __future__ import annotations

import gc
import gzip
import json
import os
import warnings

import pytest

import coretorch as ct
from coretorch_profiler import profile, record_function

CATEGORIES = {
    "cpu_op",
    "user_annotation",
    "backward",
    "fallback",
    "fwdbwd",
    "cpu_instant_event",
    "python_function",  # modules and user Python functions
    "kernel",
}  # kernel: the GPU track of a backend with an op timer (cuda)
EPS = 1e-3  # µs: ts/dur are rounded to the nanosecond


def _num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_trace(doc: dict) -> dict:
    """Assert the rules Perfetto and chrome://tracing rely on; return the events by phase."""
    events = doc["traceEvents"]
    assert isinstance(events, list) and events, "traceEvents must be a non-empty list"
    by_ph: dict[str, list] = {}
    for e in events:
        assert "ph" in e and "pid" in e, f"event without ph/pid: {e}"
        assert "ts" in e and _num(e["ts"]) and e["ts"] >= 0, f"event without a numeric ts: {e}"
        by_ph.setdefault(e["ph"], []).append(e)
        if e["ph"] == "X":
            assert _num(e.get("dur")) and e["dur"] >= 0, f"X event without dur: {e}"
            assert e.get("cat") in CATEGORIES and isinstance(e.get("name"), str) and "tid" in e
        elif e["ph"] in ("s", "f"):
            assert isinstance(e.get("id"), int) and not isinstance(e["id"], bool), (
                f"flow id must be numeric: {e}"
            )
            assert e.get("bp") == "e", f"flow event without bp 'e': {e}"
        elif e["ph"] == "C":
            assert e.get("args") and all(_num(v) for v in e["args"].values()), (
                f"counter values must be numeric: {e}"
            )
        elif e["ph"] == "i":
            assert e.get("s") in ("t", "p", "g"), f"instant event without scope: {e}"
        elif e["ph"] == "M":
            assert e["name"] in (
                "process_name",
                "process_labels",
                "thread_name",
                "thread_sort_index",
                "process_sort_index",
            )
        else:
            raise AssertionError(f"unexpected phase {e['ph']!r}: {e}")
        if "tid" in e:  # Perfetto keeps 32 bits of a thread id
            assert isinstance(e["tid"], int) and 0 <= e["tid"] < 2**31, f"tid too wide: {e}"
    # X slices nest properly per thread
    threads: dict[tuple, list] = {}
    for e in by_ph.get("X", []):
        threads.setdefault((e["pid"], e["tid"]), []).append(e)
    for key, xs in threads.items():
        xs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack: list = []
        for e in xs:
            while stack:
                top = stack[-1]
                top_end = top["ts"] + top["dur"]
                if e["ts"] + e["dur"] <= top_end + EPS:
                    break  # nested in top (sorted, so e starts at or after it)
                assert e["ts"] >= top_end - EPS, (
                    f"slices overlap without nesting on thread {key}: {top['name']} and {e['name']}"
                )
                stack.pop()
            stack.append(e)
    # flows: one s and one f per id, each bound to a slice on its thread, f at or after s
    flows: dict[int, dict] = {}
    for e in by_ph.get("s", []) + by_ph.get("f", []):
        assert e["ph"] not in flows.setdefault(e["id"], {}), f"duplicate flow event {e}"
        flows[e["id"]][e["ph"]] = e
        enclosing = [
            x
            for x in threads.get((e["pid"], e["tid"]), [])
            if x["ts"] - EPS <= e["ts"] <= x["ts"] + x["dur"] + EPS
        ]
        assert enclosing, f"flow event outside any slice: {e}"
        if e["ph"] == "f" and e["cat"] == "fwdbwd":
            assert any(x["cat"] == "backward" for x in enclosing), f"f not in a backward slice {e}"
        if e["ph"] == "f" and e["cat"] == "ac2g":
            assert any(x["cat"] == "kernel" for x in enclosing), f"f not in a kernel slice {e}"
    for fid, pair in flows.items():
        assert set(pair) == {"s", "f"}, f"flow {fid} is not an s/f pair: {pair}"
        assert pair["f"]["ts"] >= pair["s"]["ts"] - EPS
    return by_ph


def _load(path: str) -> dict:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def _workload(device: str) -> None:
    a = ct.zeros(8, 8, device=device)
    with record_function("outer"):
        b = a + 1
        with record_function("inner"):
            c = b + a
        del b
    d = c + 2  # noqa: F841


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_trace_follows_the_rules(device, tmp_path, suffix):
    gc.collect()  # garbage of earlier tests (other devices) must not be freed inside the window
    with profile(record_shapes=True, profile_memory=True, with_flops=True, with_stack=True) as prof:
        _workload(device)
    path = str(tmp_path / ("trace" + suffix))
    assert prof.export_chrome_trace(path) == path
    doc = _load(path)
    by_ph = check_trace(doc)
    # host slices of ops and annotations (cuda adds a GPU track; with_stack user functions)
    xs = [e for e in by_ph["X"] if e["cat"] not in ("kernel", "python_function")]
    names = [e["name"] for e in xs]
    assert names.count("aten::add") == 3 and "outer" in names and "inner" in names
    cats = {e["name"]: e["cat"] for e in xs}
    assert cats["outer"] == "user_annotation" and cats["aten::add"] == "cpu_op"
    add = next(e for e in xs if e["name"] == "aten::add")
    assert add["args"]["Input Dims"] == [[8, 8], [], []]  # self, other, alpha
    assert add["args"]["Input type"] == ["float32", "Scalar", "Scalar"]
    assert add["args"]["FLOPs"] == 64
    # nesting: inner inside outer, an add inside inner
    outer = next(e for e in xs if e["name"] == "outer")
    inner = next(e for e in xs if e["name"] == "inner")
    assert outer["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"]
    # memory: instant events and a counter track for the device, matching the allocation sizes
    mem = [e for e in by_ph["i"] if e["name"] == "[memory]"]
    assert {e["args"]["Device Type"] for e in mem} == {device}
    allocated = sorted(e["args"]["Bytes"] for e in mem if e["args"]["Bytes"] > 0)
    assert allocated == [256] * 4  # a, b, c, d
    assert any(e["args"]["Bytes"] == -256 for e in mem)  # `del b`
    counters = [e for e in by_ph["C"] if e["name"] == f"Memory ({device})"]
    assert len(counters) == len(mem) + 1
    names_m = {e["name"] for e in by_ph["M"]}
    assert {"process_name", "thread_name"} <= names_m


def test_trace_write_is_atomic(tmp_path):
    with profile() as prof:
        ct.zeros(2, device="meta") + 1
    path = tmp_path / "t.json"
    path.write_text("old contents")
    prof.export_chrome_trace(str(path))
    check_trace(_load(str(path)))
    assert os.listdir(tmp_path) == ["t.json"]  # no temporary file left behind
    with pytest.raises(FileNotFoundError):
        prof.export_chrome_trace(str(tmp_path / "missing_dir" / "t.json"))


def _has_backward() -> bool:
    return hasattr(ct.Tensor, "backward") and hasattr(ct.Tensor, "requires_grad_")


@pytest.mark.filterwarnings("ignore::coretorch.ops.cpu_fallback.CPUFallbackWarning")
def test_trace_links_forward_to_backward(device, tmp_path):
    if not _has_backward():
        pytest.skip("autograd engine not available")
    try:
        (ct.ones(1, device=device).requires_grad_() * 2).exp().sum().backward()
    except NotImplementedError as e:
        pytest.skip(f"autograd of mul/exp/sum not available yet on {device}: {e}")
    x = ct.ones(4, device=device).requires_grad_()
    with profile(record_shapes=True) as prof:
        y = (x * 2).exp().sum()
        y.backward()
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    by_ph = check_trace(_load(path))
    backward = [e for e in by_ph["X"] if e["cat"] == "backward"]
    assert len(backward) >= 3  # SumBackward, ExpBackward, MulBackward (+ AccumulateGrad)
    linked = [e for e in backward if e["args"].get("Sequence number", -1) >= 0]
    assert len([f for f in by_ph.get("f", []) if f["cat"] == "fwdbwd"]) == len(linked) >= 3
    fwd = {
        e["args"]["Sequence number"]: e["name"]
        for e in by_ph["X"]
        if e["cat"] == "cpu_op" and "Sequence number" in e["args"]
    }
    assert {"aten::mul", "aten::exp", "aten::sum"} <= set(fwd.values())


@pytest.mark.parametrize(
    "bad, why",
    [
        ({"ph": "X", "pid": 1, "tid": 1, "name": "a", "cat": "cpu_op", "dur": 1}, "ts"),
        ({"ph": "X", "pid": 1, "tid": 1, "name": "a", "cat": "cpu_op", "ts": 1}, "dur"),
        ({"ph": "C", "pid": 1, "ts": 1, "name": "m", "args": {"v": "1"}}, "numeric"),
        (
            {
                "ph": "s",
                "pid": 1,
                "tid": 1,
                "ts": 1,
                "id": "7",
                "name": "f",
                "cat": "fwdbwd",
                "bp": "e",
            },
            "numeric",
        ),
    ],
)
def test_checker_rejects_broken_events(bad, why):
    good = {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "name": "a", "cat": "cpu_op"}
    with pytest.raises(AssertionError, match=why):
        check_trace({"traceEvents": [good, bad]})


def test_checker_rejects_overlapping_slices():
    a = {"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "name": "a", "cat": "cpu_op"}
    b = {"ph": "X", "pid": 1, "tid": 1, "ts": 5, "dur": 10, "name": "b", "cat": "cpu_op"}
    with pytest.raises(AssertionError, match="overlap"):
        check_trace({"traceEvents": [a, b]})
    b_other_thread = dict(b, tid=2)
    check_trace({"traceEvents": [a, b_other_thread]})


def test_cpu_fallback_regions_have_their_own_category(tmp_path):
    from coretorch.ops.cpu_fallback import cpu_fallback

    a = ct.ones(3)
    with profile() as prof, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback's one-time warning
        cpu_fallback(ct.ops.aten.add, None, ct.ops.aten.add.bind(a, a), {})
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    xs = check_trace(_load(path))["X"]
    fb = next(e for e in xs if e["cat"] == "fallback")
    assert fb["name"] == "aten::add (cpu fallback)"
    inner = next(e for e in xs if e["name"] == "aten::add")
    assert fb["ts"] <= inner["ts"] and inner["ts"] + inner["dur"] <= fb["ts"] + fb["dur"]
