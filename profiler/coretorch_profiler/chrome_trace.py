"""Chrome trace (Trace Event Format) export, as Perfetto and chrome://tracing load it.

`X` slices with `ts`/`dur` in µs nested per thread; categories cpu_op, backward, user_annotation
and fallback; forward->backward `fwdbwd` flows (`s`/`f`, numeric id, ``"bp": "e"``); memory as
`[memory]` instant events and one counter track per device type; process/thread names; a GPU
track (``cat: kernel``, pid = device index) when a backend offers an op timer.
"""
from __future__ import annotations

import gzip
import json
import os
import tempfile
from typing import Any

from coretorch.record_function import RecordScope

from . import collector as C
from .events import EventList


# nodes with no forward op (AccumulateGrad) carry this sentinel, as in PyTorch
_NO_SEQ = (1 << 63) - 1


def _has_seq(e) -> bool:
    return e.sequence_nr is not None and 0 <= e.sequence_nr < _NO_SEQ


def _us(ns: int, t0: int) -> float:
    return round((ns - t0) / 1000.0, 3)


def trace_events(events: EventList, col: "C.Collector") -> list[dict[str, Any]]:
    """The `traceEvents` array of a profiling window."""
    pid = os.getpid()
    t0 = col.t0
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
         "args": {"name": "python"}},
        {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0, "ts": 0,
         "args": {"labels": "CPU"}},
    ]
    threads = sorted({e.thread for e in events} | {m[C.M_TID] for m in col.memory})
    for i, tid in enumerate(threads):
        name = col.thread_names.get(tid, "thread")
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                    "args": {"name": f"thread {tid} ({name})"}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid, "ts": 0,
                    "args": {"sort_index": i}})
    forward_by_seq: dict[tuple[int, int], Any] = {}
    for e in events:
        args: dict[str, Any] = {"External id": e.id}
        if _has_seq(e):
            args["Sequence number"] = e.sequence_nr
            args["Fwd thread id"] = e.fwd_thread
            if e.scope is RecordScope.FUNCTION:
                # the latest op holding a sequence number is the one that created the node
                forward_by_seq[(e.thread, e.sequence_nr)] = e
        if e._shapes is not None:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.flops:
            args["FLOPs"] = e.flops
        if e._stack:
            args["Call stack"] = ";".join(e.stack)
        out.append({"ph": "X", "cat": e.category, "name": e.name, "pid": pid, "tid": e.thread,
                    "ts": _us(e.start_ns, t0), "dur": round((e.end_ns - e.start_ns) / 1000.0, 3),
                    "args": args})
    flow_id = 0
    for e in events:
        if e.scope is not RecordScope.BACKWARD_FUNCTION or not _has_seq(e):
            continue
        fwd = forward_by_seq.get((e.fwd_thread, e.sequence_nr))
        if fwd is None:
            continue
        flow_id += 1
        out.append({"ph": "s", "id": flow_id, "pid": pid, "tid": fwd.thread,
                    "ts": _us(fwd.start_ns, t0), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
        out.append({"ph": "f", "id": flow_id, "pid": pid, "tid": e.thread,
                    "ts": _us(e.start_ns, t0), "cat": "fwdbwd", "name": "fwdbwd", "bp": "e"})
    if col.profile_memory:
        out.extend(_memory_events(col, pid))
    out.extend(_device_events(col))
    return out


def _device_events(col: "C.Collector") -> list[dict[str, Any]]:
    """The GPU track: device time per op from a backend's op timer (pid = device index, tid =
    stream, as PyTorch's traces place kernels)."""
    out: list[dict[str, Any]] = []
    named: set[tuple[int, int]] = set()
    for d in getattr(col, "device_ops", ()):
        pid, tid = d["device_index"], d["stream"]
        if (pid, tid) not in named:
            named.add((pid, tid))
            label = " (emulated)" if d.get("emulated") else ""
            out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
                        "args": {"name": f"GPU {pid}{label}"}})
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                        "args": {"name": f"stream {tid:#x}{label}"}})
        out.append({"ph": "X", "cat": "kernel", "name": d["name"], "pid": pid, "tid": tid,
                    "ts": _us(d["start_ns"], col.t0),
                    "dur": round((d["end_ns"] - d["start_ns"]) / 1000.0, 3),
                    "args": {"device": pid, "stream": tid, "emulated": bool(d.get("emulated"))}})
    return out


def _memory_events(col: "C.Collector", pid: int) -> list[dict[str, Any]]:
    t0 = col.t0
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for m in sorted(col.memory, key=lambda m: m[C.M_TIME]):
        dev = C.device_of(m)
        if dev.type not in seen:
            seen.add(dev.type)
            out.append({"ph": "C", "name": f"Memory ({dev.type})", "pid": pid, "ts": 0.0,
                        "args": {"Total Allocated": col.start_allocated.get(dev.type, 0)}})
        ts = _us(m[C.M_TIME], t0)
        out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                    "pid": pid, "tid": m[C.M_TID], "ts": ts,
                    "args": {"Addr": m[C.M_ADDR], "Bytes": m[C.M_BYTES],
                             "Total Allocated": m[C.M_TOTAL], "Total Reserved": m[C.M_RESERVED],
                             "Device Type": dev.type,
                             "Device Id": -1 if dev.index is None else dev.index}})
        out.append({"ph": "C", "name": f"Memory ({dev.type})", "pid": pid, "ts": ts,
                    "args": {"Total Allocated": m[C.M_TOTAL]}})
    return out


def write_trace(path: str, events: EventList, col: "C.Collector") -> str:
    """Write the trace to `path` atomically (a temporary file renamed over it, so a reader
    never sees a truncated file); gzip-compressed when `path` ends in .gz. Returns `path`."""
    path = os.fspath(path)
    doc = {"schemaVersion": 1, "displayTimeUnit": "ms", "traceName": path,
           "record_shapes": col.record_shapes, "profile_memory": col.profile_memory,
           "with_flops": col.with_flops, "traceEvents": trace_events(events, col)}
    data = json.dumps(doc, separators=(",", ":")).encode()
    if path.endswith(".gz"):
        data = gzip.compress(data)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a trace is an ordinary file
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
