"""Chrome trace (Trace Event Format) export, as Perfetto, chrome://tracing and HTA read it.

`X` slices with `ts`/`dur` in µs from the window's start (`baseTimeNanoseconds` is that start
on the wall clock), nested per thread, on native thread ids; categories cpu_op, backward,
user_annotation (ProfilerStep#N too), fallback and python_function (modules and user Python
functions); forward->backward `fwdbwd` flows; memory as `[memory]` instant events (with their
category) and one counter track per device type; process/thread names; a GPU track of kernels
(``cat: kernel``, pid = device index, tid = stream) linked to the launching op by `ac2g` flows;
device, process and `distributedInfo` metadata. Every field the event model needs is there, so
`load_trace` reads the file back into it.
"""

from __future__ import annotations

import os
from typing import Any

from . import raw as R
from .events import FunctionEvent, device_kernels, has_seq
from .export import write_json
from .raw import EventKind

_SCHEMA = 1


def _us(ns: int, t0: int) -> float:
    return round((ns - t0) / 1000.0, 3)


# CUDA's own tools (CUPTI, so PyTorch's traces) number the default stream 7; its handle is 0,
# and HTA takes only ids > 0 for device streams
_DEFAULT_STREAM_ID = 7


def _stream_id(handle: int) -> int:
    return handle or _DEFAULT_STREAM_ID


def _event_args(e: FunctionEvent, correlation: dict[int, int]) -> dict[str, Any]:
    args: dict[str, Any] = {"External id": e.id}
    if e.kernels:  # links the op to its kernel, as a CUDA launch does in PyTorch's traces
        args["correlation"] = correlation[id(e.kernels[0])]
    if has_seq(e):
        args["Sequence number"] = e.sequence_nr
        args["Fwd thread id"] = e.fwd_thread
    if e._shapes is not None:
        args["Input Dims"] = e.input_shapes
        args["Input type"] = e.input_dtypes
    if e.flops:
        args["FLOPs"] = e.flops
    if e._stack:
        args["Call stack"] = ";".join(e.stack)
    if e.kernel_ns >= 0:
        args["Kernel time (ns)"] = e.kernel_ns
    if e.extra and "copy" in e.extra:
        args["Copy"] = e.extra["copy"]
        args["Copy bytes"] = e.extra["bytes"]
    if e.kind in (EventKind.MODULE, EventKind.MODULE_BACKWARD) and e.extra:
        args["Module"] = e.extra["module"]
        args["Module type"] = e.extra.get("module_type", "")
    return args


def trace_events(result) -> list[dict[str, Any]]:
    """The `traceEvents` array of a profiling window."""
    raw, events = result.raw, result.events()
    pid, t0 = raw.pid, raw.t0
    out: list[dict[str, Any]] = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": pid,
            "tid": 0,
            "ts": 0,
            "args": {"name": "python"},
        },
        {
            "ph": "M",
            "name": "process_labels",
            "pid": pid,
            "tid": 0,
            "ts": 0,
            "args": {"labels": "CPU"},
        },
        {
            "ph": "M",
            "name": "process_sort_index",
            "pid": pid,
            "tid": 0,
            "ts": 0,
            "args": {"sort_index": 0},
        },
    ]
    names = {raw.native_tid(ident): name for ident, name in raw.thread_names.items()}
    threads = sorted({e.thread for e in events} | {raw.native_tid(m[R.M_TID]) for m in raw.memory})
    for i, tid in enumerate(threads):
        out.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "ts": 0,
                "args": {"name": f"thread {tid} ({names.get(tid, 'thread')})"},
            }
        )
        out.append(
            {
                "ph": "M",
                "name": "thread_sort_index",
                "pid": pid,
                "tid": tid,
                "ts": 0,
                "args": {"sort_index": i},
            }
        )
    kernels = device_kernels(raw)
    correlation = {id(k): n for n, k in enumerate(kernels, start=1)}
    forward_by_seq: dict[tuple[int, int], FunctionEvent] = {}
    for e in events:
        if has_seq(e) and e.kind is EventKind.FUNCTION:
            # the latest op holding a sequence number is the one that created the node
            forward_by_seq[(e.thread, e.sequence_nr)] = e
        out.append(
            {
                "ph": "X",
                "cat": e.category,
                "name": e.name,
                "pid": pid,
                "tid": e.thread,
                "ts": _us(e.start_ns, t0),
                "dur": round((e.end_ns - e.start_ns) / 1000.0, 3),
                "args": _event_args(e, correlation),
            }
        )
    flow_id = 0
    for e in events:
        if e.kind is not EventKind.BACKWARD_FUNCTION or not has_seq(e):
            continue
        fwd = forward_by_seq.get((e.fwd_thread, e.sequence_nr))
        if fwd is None:
            continue
        flow_id += 1
        out.append(
            {
                "ph": "s",
                "id": flow_id,
                "pid": pid,
                "tid": fwd.thread,
                "ts": _us(fwd.start_ns, t0),
                "cat": "fwdbwd",
                "name": "fwdbwd",
                "bp": "e",
            }
        )
        out.append(
            {
                "ph": "f",
                "id": flow_id,
                "pid": pid,
                "tid": e.thread,
                "ts": _us(e.start_ns, t0),
                "cat": "fwdbwd",
                "name": "fwdbwd",
                "bp": "e",
            }
        )
    if raw.profile_memory:
        out.extend(_memory_events(result, pid))
    out.extend(_device_events(raw, events, pid, kernels, correlation, flow_id))
    return out


def _device_events(
    raw, events, pid: int, kernels: list[dict], correlation: dict[int, int], flow_id: int
) -> list[dict[str, Any]]:
    """The GPU track: one slice per kernel (pid = device index, tid = stream, as PyTorch's
    traces place them), each linked to its launching op by `correlation` and an `ac2g` flow."""
    out: list[dict[str, Any]] = []
    named: set[tuple[int, int]] = set()
    launcher = {id(k): e for e in events for k in e.kernels}
    for d in kernels:
        dpid, tid = d["device_index"], _stream_id(d["stream"])
        label = " (emulated)" if d.get("emulated") else ""
        if (dpid, tid) not in named:
            named.add((dpid, tid))
            out.append(
                {
                    "ph": "M",
                    "name": "process_name",
                    "pid": dpid,
                    "tid": 0,
                    "ts": 0,
                    "args": {"name": f"GPU {dpid}{label}"},
                }
            )
            out.append(
                {
                    "ph": "M",
                    "name": "process_labels",
                    "pid": dpid,
                    "tid": 0,
                    "ts": 0,
                    "args": {"labels": f"GPU {dpid}"},
                }
            )
            out.append(
                {
                    "ph": "M",
                    "name": "thread_name",
                    "pid": dpid,
                    "tid": tid,
                    "ts": 0,
                    "args": {"name": f"stream {tid}{label}"},
                }
            )
        flow_id += 1
        args = {
            "device": dpid,
            "stream": tid,
            "correlation": correlation[id(d)],
            "emulated": bool(d.get("emulated")),
        }
        e = launcher.get(id(d))
        if e is not None:
            args["External id"] = e.id
        ts = _us(d["start_ns"], raw.t0)
        out.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": d["name"],
                "pid": dpid,
                "tid": tid,
                "ts": ts,
                "dur": round((d["end_ns"] - d["start_ns"]) / 1000.0, 3),
                "args": args,
            }
        )
        if e is not None:
            out.append(
                {
                    "ph": "s",
                    "id": flow_id,
                    "pid": pid,
                    "tid": e.thread,
                    "ts": _us(e.start_ns, raw.t0),
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )
            out.append(
                {
                    "ph": "f",
                    "id": flow_id,
                    "pid": dpid,
                    "tid": tid,
                    "ts": ts,
                    "cat": "ac2g",
                    "name": "ac2g",
                    "bp": "e",
                }
            )
    return out


def _memory_events(result, pid: int) -> list[dict[str, Any]]:
    from .memory import record_categories

    raw = result.raw
    t0 = raw.t0
    cats = record_categories(raw, result.allocations())
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n in sorted(range(len(raw.memory)), key=lambda n: raw.memory[n][R.M_TIME]):
        m = raw.memory[n]
        dtype, _, index = m[R.M_DEVICE].partition(":")
        if dtype not in seen:
            seen.add(dtype)
            out.append(
                {
                    "ph": "C",
                    "name": f"Memory ({dtype})",
                    "pid": pid,
                    "ts": 0.0,
                    "args": {"Total Allocated": raw.start_allocated.get(dtype, 0)},
                }
            )
        ts = _us(m[R.M_TIME], t0)
        out.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": pid,
                "tid": raw.native_tid(m[R.M_TID]),
                "ts": ts,
                "args": {
                    "Addr": m[R.M_ADDR],
                    "Bytes": m[R.M_BYTES],
                    "Total Allocated": m[R.M_TOTAL],
                    "Total Reserved": m[R.M_RESERVED],
                    "Device Type": dtype,
                    "Device Id": int(index) if index else -1,
                    "Category": cats[n],
                },
            }
        )
        out.append(
            {
                "ph": "C",
                "name": f"Memory ({dtype})",
                "pid": pid,
                "ts": ts,
                "args": {"Total Allocated": m[R.M_TOTAL]},
            }
        )
    return out


def _device_properties(raw) -> list[dict[str, Any]]:
    """PyTorch's deviceProperties: one entry per GPU with kernels in the trace."""
    indices = sorted({d["device_index"] for d in raw.device_ops})
    out = []
    for i in indices:
        props: dict[str, Any] = {"id": i, "name": f"cuda:{i}"}
        try:
            import coretorch

            props["name"] = coretorch.cuda.get_device_name(i)
        except Exception:  # noqa: BLE001  (emulated or no driver: the index is all we know)
            pass
        out.append(props)
    return out


def trace_document(result, path: str = "") -> dict[str, Any]:
    """The whole trace: metadata then `traceEvents`."""
    raw = result.raw
    from . import machine

    info = machine.complete(dict(raw.machine)) if raw.loaded_from is None else raw.machine
    doc: dict[str, Any] = {
        "schemaVersion": _SCHEMA,
        "deviceProperties": _device_properties(raw),
        "record_shapes": int(raw.record_shapes),
        "profile_memory": int(raw.profile_memory),
        "with_stack": int(raw.with_stack),
        "with_flops": int(raw.with_flops),
        "with_modules": int(raw.with_modules),
        "host_name": info.get("host_name", ""),
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": raw.base_time_ns,
        "traceName": path,
        "distributedInfo": dict(raw.distributed),
        "coretorch": {
            "pid": raw.pid,
            "duration_ns": raw.t1 - raw.t0,
            "machine": info,
            "start_allocated": raw.start_allocated,
            "memory_baseline": raw.baseline,
            "anomalies": raw.anomalies,
        },
    }
    for k, v in raw.metadata.items():
        doc.setdefault(k, v)
    doc["traceEvents"] = trace_events(result)
    return doc


def write_trace(path: str | os.PathLike, result) -> str:
    """Write the trace to `path` atomically; gzip-compressed when `path` ends in .gz."""
    path = os.fspath(path)
    return write_json(path, trace_document(result, path))


__all__ = ["trace_events", "trace_document", "write_trace"]
