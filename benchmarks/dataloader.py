"""DataLoader throughput against the number of worker processes.

    .venv/bin/python benchmarks/dataloader.py [--items N] [--batch-size B] [--max-workers W]
                                              [--item-ms MS] [--start-method METHOD]

The dataset costs `--item-ms` (default 2) milliseconds of CPU per item (a busy loop on the
thread's CPU clock, so a worker that is not scheduled does not finish early) and returns a
3x32x32 float32 image and an int label; batches are collated in the workers and come back to
the main process through shared memory. Persistent workers; the first epoch (worker start-up)
is not timed, and the loaders take turns epoch by epoch (the median epoch counts), so that the
machine's changing load hits them alike. Prints items/s for 0 (main process), 1, 2, ... workers
up to `--max-workers` (default: the cpus this process may use, at least 2), the speed-up over one
worker, the ideal ``min(workers, cpus)``, and the rate of as many bare processes making the same
items without a loader, measured in the same turns: on a machine other work shares, that is what
the cpus give, and loader/bare is the loader's own efficiency. Target: 2 workers >= 1.8x one
worker on an otherwise idle 2-core machine.
"""

from __future__ import annotations

import argparse
import multiprocessing
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


def _loader(num_workers: int, args) -> DataLoader:
    kwargs = (
        {}
        if num_workers == 0
        else {"persistent_workers": True, "multiprocessing_context": args.start_method}
    )
    return DataLoader(
        CostlyDataset(args.items, args.item_ms),
        batch_size=args.batch_size,
        num_workers=num_workers,
        **kwargs,
    )


def _epoch_rate(loader: DataLoader) -> float:
    t = time.perf_counter()
    n = 0
    for images, labels in loader:
        n += labels.shape[0]
    return n / (time.perf_counter() - t)


def _make_items(dataset: CostlyDataset, indices: range) -> None:
    for i in indices:
        dataset[i]


def _plain_rate(processes: int, args) -> float:
    """Items per second of `processes` bare processes making the items (no loader): what the
    machine gives right now."""
    ctx = multiprocessing.get_context("fork")
    dataset = CostlyDataset(args.items, args.item_ms)
    t = time.perf_counter()
    procs = [
        ctx.Process(target=_make_items, args=(dataset, range(k, args.items, processes)))
        for k in range(processes)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    return args.items / (time.perf_counter() - t)


def measure(worker_counts: list[int], args) -> tuple[dict[int, float], dict[int, float]]:
    """Items per second of each loader and of as many bare processes: medians over
    `args.epochs` epochs, everything taking turns epoch by epoch so that a change in the
    machine's load hits them all alike."""
    loaders = {w: _loader(w, args) for w in worker_counts}
    for loader in loaders.values():  # warm-up: worker start-up, first compilations
        _epoch_rate(loader)
    rates: dict[int, list[float]] = {w: [] for w in worker_counts}
    plain: dict[int, list[float]] = {w: [] for w in worker_counts if w > 0}
    for _ in range(args.epochs):
        for w, loader in loaders.items():
            rates[w].append(_epoch_rate(loader))
            if w > 0:
                plain[w].append(_plain_rate(w, args))
    return (
        {w: statistics.median(r) for w, r in rates.items()},
        {w: statistics.median(r) for w, r in plain.items()},
    )


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--items", type=int, default=384)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--item-ms", type=float, default=2.0)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--max-workers", type=int, default=None)
    p.add_argument(
        "--start-method", default=None, help="fork, spawn or forkserver (default: the platform's)"
    )
    args = p.parse_args(argv)
    cpus = _cpus()
    top = args.max_workers if args.max_workers is not None else max(2, cpus)
    print(
        f"DataLoader throughput: {args.items} items of {args.item_ms} ms CPU each, batch "
        f"{args.batch_size}, {cpus} cpus, python {sys.version.split()[0]}"
    )
    rates, plain = measure(list(range(top + 1)), args)
    print(
        f"{'workers':>8} {'items/s':>10} {'vs 1 worker':>12} {'ideal':>6} "
        f"{'bare processes':>15} {'loader/bare':>12}"
    )
    for w, rate in rates.items():
        ratio = f"{rate / rates[1]:.2f}x" if w >= 1 else "-"
        ideal = f"{min(w, cpus)}x" if w >= 1 else "-"
        bare = f"{plain[w]:.1f}" if w >= 1 else "-"
        eff = f"{rate / plain[w]:.2f}" if w >= 1 else "-"
        print(f"{w:>8} {rate:>10.1f} {ratio:>12} {ideal:>6} {bare:>15} {eff:>12}")


if __name__ == "__main__":
    main()
