"""The lean recording path of `profile()`'s default options (one end callback per scope, record
fields kept flat while recording): the records it leaves are those the detailed path leaves."""

from __future__ import annotations

import threading

import coretorch as ct
from coretorch_profiler import profile, record_function
from coretorch_profiler.raw import END, EXTRA, FWD_TID, INPUTS, KIND, NAME, SEQ, START, TID


def _program():
    w = ct.ones(4, 3, requires_grad=True)
    x = ct.ones(2, 4)
    with record_function("block"):
        y = (x @ w).relu().sum()
    y.backward()
    w.detach().to("meta")  # a copy across devices: its record carries the devices and bytes


def _records(**options) -> list[tuple]:
    with profile(**options) as prof:
        _program()
    return prof.result.raw.ops


def test_lean_records_match_the_detailed_ones():
    lean, detailed = _records(), _records(record_shapes=True)
    assert lean and all(r[INPUTS] == -1 for r in lean)
    assert all(r[INPUTS] >= 0 for r in detailed)

    def same(r: tuple) -> tuple:  # what both record alike (times and extras' indexes differ)
        return r[NAME], r[KIND], r[TID] == r[FWD_TID], r[EXTRA] >= 0, r[SEQ] >= 0

    assert [same(r) for r in lean] == [same(r) for r in detailed]

    # sequence numbers pair forward ops with their backward nodes alike
    def pairs(records: list[tuple]) -> list[list[str]]:
        by_seq: dict[int, list[str]] = {}
        for r in records:
            if r[SEQ] >= 0:
                by_seq.setdefault(r[SEQ], []).append(r[NAME])
        return sorted(sorted(names) for names in by_seq.values())

    assert pairs(lean) == pairs(detailed)
    assert ["ReluBackward0", "aten::relu"] in pairs(lean)
    kinds = {r[KIND] for r in lean}
    assert kinds == {0, 1, 2}  # ops, backward nodes and the user scope
    with profile() as prof:
        _program()
    copy = [e for e in prof.events() if e.extra and "copy" in e.extra]
    assert [e.extra["copy"] for e in copy] == ["cpu -> meta"]
    assert all(r[START] <= r[END] for r in lean)


def test_lean_records_of_threads_recording_at_once_stay_whole():
    # each thread's callbacks extend one flat list; a record's fields must never interleave
    # with another thread's
    a = ct.ones(8)
    n, per_thread = 4, 200
    barrier = threading.Barrier(n)

    def work():
        barrier.wait()
        for _ in range(per_thread):
            a + 1

    with profile() as prof:
        threads = [threading.Thread(target=work) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    ops = prof.result.raw.ops
    adds = [r for r in ops if r[NAME] == "aten::add"]
    assert len(adds) == n * per_thread
    assert all(isinstance(r[NAME], str) and r[KIND] == 0 and r[START] <= r[END] for r in ops)
    assert len({r[TID] for r in adds}) == n
    names = prof.result.raw.thread_names
    assert all(r[TID] in names for r in adds)
