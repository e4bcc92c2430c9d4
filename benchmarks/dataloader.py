"""DataLoader throughput against the number of worker processes.

    .venv/bin/python benchmarks/dataloader.py [--items N] [--batch-size B] [--max-workers W]
                                              [--item-ms MS] [--start-method METHOD]

The dataset costs `--item-ms` (default 2) milliseconds of CPU per item (a busy loop on the
thread's CPU clock, so a worker that is not scheduled does not finish early) and returns a
3x32x32 float32 image and an int label; batches are collated in the workers and come back to
the main process through shared memory. Persistent workers; the first epoch (worker start-up)
is not timed. Prints items/s for 0 (main process), 1, 2, ... workers up to `--max-workers`
(default: the cpus this process may use), the speed-up over one worker, and the ideal
``min(workers, cpus)``. Target: 2 workers >= 1.8x one worker on a 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import coretorch as ct
from coretorch.utils.data import DataLoader, Dataset


class CostlyDataset(Dataset):
    """`n` items, each costing `item_ms` milliseconds of CPU to make."""

    def __init__(self, n: int, item_ms: float) -> None:
        self.n, self.cost = n, item_ms / 1000.0

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        end = time.thread_time() + self.cost
        while time.thread_time() < end:
            pass
        image = np.full((3, 32, 32), i % 255, dtype=np.float32)
        return ct.from_numpy(image), i % 10


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def measure(num_workers: int, args) -> float:
    """Items per second over `args.epochs` timed epochs (median)."""
    kwargs = {} if num_workers == 0 else {
        "persistent_workers": True, "multiprocessing_context": args.start_method}
    loader = DataLoader(CostlyDataset(args.items, args.item_ms), batch_size=args.batch_size,
                        num_workers=num_workers, **kwargs)
    for _ in loader:  # warm-up: worker start-up, first compilations
        pass
    rates = []
    for _ in range(args.epochs):
        t = time.perf_counter()
        n = 0
        for images, labels in loader:
            n += labels.shape[0]
        rates.append(n / (time.perf_counter() - t))
    del loader
    return statistics.median(rates)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=384)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--item-ms", type=float, default=2.0)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--max-workers", type=int, default=None)
    p.add_argument("--start-method", default=None,
                   help="fork, spawn or forkserver (default: the platform's)")
    args = p.parse_args(argv)
    cpus = _cpus()
    top = args.max_workers if args.max_workers is not None else max(2, cpus)
    print(f"DataLoader throughput: {args.items} items of {args.item_ms} ms CPU each, batch "
          f"{args.batch_size}, {cpus} cpus, python {sys.version.split()[0]}")
    print(f"{'workers':>8} {'items/s':>10} {'vs 1 worker':>12} {'ideal':>6}")
    one = None
    for w in range(top + 1):
        rate = measure(w, args)
        if w == 1:
            one = rate
        ratio = f"{rate / one:.2f}x" if one and w >= 1 else "-"
        ideal = f"{min(w, cpus)}x" if w >= 1 else "-"
        print(f"{w:>8} {rate:>10.1f} {ratio:>12} {ideal:>6}", flush=True)


if __name__ == "__main__":
    main()
