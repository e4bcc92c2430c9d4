"""Reading a Chrome trace written by `export_chrome_trace` back into a `RawProfile`."""

from __future__ import annotations

import gzip
import json
import os
from typing import Any

from .events import BACKWARD_SUFFIX
from .raw import EventKind, RawProfile, region

__all__ = ["read_trace"]

_KIND_OF_CAT = {
    "cpu_op": EventKind.FUNCTION,
    "backward": EventKind.BACKWARD_FUNCTION,
    "user_annotation": EventKind.USER_SCOPE,
    "fallback": EventKind.FALLBACK,
    "python_function": EventKind.PYTHON,
}


def _ns(us: float) -> int:
    return int(round(us * 1000.0))


def _load_json(path: str) -> dict[str, Any]:
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == b"\x1f\x8b" else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"load_trace(): {path!r} is not a JSON trace ({e})") from None
    if isinstance(doc, list):
        doc = {"traceEvents": doc}
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError(f"load_trace(): {path!r} has no traceEvents list")
    return doc


def _kind(e: dict[str, Any]) -> EventKind | None:
    kind = _KIND_OF_CAT.get(e.get("cat", ""))
    if kind is EventKind.USER_SCOPE and e["name"].startswith("ProfilerStep#"):
        return EventKind.STEP
    if kind is EventKind.PYTHON and "Module" in (e.get("args") or {}):
        return (
            EventKind.MODULE_BACKWARD if e["name"].endswith(BACKWARD_SUFFIX) else EventKind.MODULE
        )
    return kind


def read_trace(path: str | os.PathLike) -> RawProfile:
    """The raw profile a trace file holds (gzip or plain JSON)."""
    path = os.fspath(path)
    doc = _load_json(path)
    ct = doc.get("coretorch") or {}
    raw = RawProfile(
        bool(doc.get("record_shapes")),
        bool(doc.get("profile_memory")),
        bool(doc.get("with_stack")),
        bool(doc.get("with_flops")),
        bool(doc.get("with_modules")),
    )
    raw.loaded_from = path
    raw.base_time_ns = int(doc.get("baseTimeNanoseconds") or 0)
    raw.pid = ct.get("pid", 0)
    raw.machine = dict(ct.get("machine") or {})
    raw.start_allocated = dict(ct.get("start_allocated") or {})
    raw.baseline = {d: dict(v) for d, v in (ct.get("memory_baseline") or {}).items()}
    raw.anomalies = list(ct.get("anomalies") or [])
    raw.distributed = dict(doc.get("distributedInfo") or raw.distributed)
    known = {
        "schemaVersion",
        "deviceProperties",
        "record_shapes",
        "profile_memory",
        "with_stack",
        "with_flops",
        "with_modules",
        "host_name",
        "displayTimeUnit",
        "baseTimeNanoseconds",
        "traceName",
        "distributedInfo",
        "coretorch",
        "traceEvents",
    }
    raw.metadata = {k: v for k, v in doc.items() if k not in known}
    input_ids: dict[tuple, int] = {}
    stack_ids: dict[tuple, int] = {}
    flows_s: dict[int, dict] = {}
    kernels: list[dict[str, Any]] = []
    cats: list[str] = []
    end = 0
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "thread_name":
            name = (e.get("args") or {}).get("name", "")
            # "thread 123 (MainThread)" -> "MainThread"
            raw.thread_names[e["tid"]] = name[name.find("(") + 1 : -1] if "(" in name else name
        elif ph == "X":
            args = e.get("args") or {}
            start, dur = _ns(e["ts"]), _ns(e.get("dur", 0))
            end = max(end, start + dur)
            if e.get("cat") == "kernel":
                kernels.append(
                    {
                        "name": e["name"],
                        "device_index": e["pid"],
                        "stream": args.get("stream", e["tid"]),
                        "start_ns": start,
                        "end_ns": start + dur,
                        "emulated": bool(args.get("emulated")),
                        "_corr": args.get("correlation"),
                    }
                )
                continue
            kind = _kind(e)
            if kind is None:
                continue
            inputs = stack = extra = -1
            if "Input Dims" in args:
                shapes = tuple(_shape(s) for s in args["Input Dims"])
                meta = (shapes, tuple(args.get("Input type") or ()))
                inputs = input_ids.setdefault(meta, len(input_ids))
                if inputs == len(raw.inputs):
                    raw.inputs.append(meta)
            if args.get("Call stack"):
                frames = tuple(args["Call stack"].split(";"))
                stack = stack_ids.setdefault(frames, len(stack_ids))
                if stack == len(raw.stacks):
                    raw.stacks.append(frames)
            if "Module" in args:
                extra = raw.add_extra(
                    {"module": args["Module"], "module_type": args.get("Module type", "")}
                )
            elif "Copy" in args:
                extra = raw.add_extra({"copy": args["Copy"], "bytes": args.get("Copy bytes", 0)})
            seq = args.get("Sequence number", -1)
            raw.ops.append(
                region(
                    e["name"],
                    kind,
                    start,
                    start + dur,
                    e["tid"],
                    seq,
                    args.get("Fwd thread id", e["tid"]),
                    inputs,
                    args.get("FLOPs", 0),
                    stack,
                    extra,
                    args.get("Kernel time (ns)", -1),
                )
            )
        elif ph == "i" and e.get("name") == "[memory]":
            a = e.get("args") or {}
            dev = a.get("Device Type", "cpu")
            if a.get("Device Id", -1) not in (-1, None):
                dev = f"{dev}:{a['Device Id']}"
            raw.memory.append(
                (
                    _ns(e["ts"]),
                    e["tid"],
                    a.get("Addr", 0),
                    a.get("Bytes", 0),
                    dev,
                    a.get("Total Allocated", 0),
                    a.get("Total Reserved", 0),
                )
            )
            cats.append(a.get("Category", "other"))
        elif ph == "s" and e.get("cat") == "ac2g":
            flows_s[e["id"]] = e
    for k in kernels:
        s = flows_s.get(k.pop("_corr"))
        if s is not None:
            k["host"] = (s["tid"], _ns(s["ts"]))
        raw.device_ops.append(k)
    if cats:
        raw.memory_categories = cats
    raw.t0 = 0
    raw.t1 = max(end, int(ct.get("duration_ns") or 0))
    return raw


def _shape(s):
    if s and isinstance(s[0], list):
        return tuple(tuple(x) for x in s)
    return tuple(s)
