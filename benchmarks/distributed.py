"""coretorch.distributed benchmarks: collectives against raw mpi4py, and DDP scaling.

    .venv/bin/python benchmarks/distributed.py [--quick]

It starts its own jobs with ``mpiexec`` (one thread per rank: OMP/NUMBA/OPENBLAS_NUM_THREADS=1)
and prints:
- all_reduce (SUM, float32, in place) on 2 ranks for 1 KB to 64 MB: `dist.all_reduce` against
  mpi4py's ``Allreduce`` of the same numpy buffer (target: >= 0.9x mpi4py's speed at >= 1 MB);
- a DDP training step of the MLP 784-1024-1024-10 (batch 256 per rank, SGD momentum) on 1 and 2
  ranks: scaling efficiency = step time on 1 rank / step time on 2 ranks (the same work per
  rank; target >= 0.8 on 2 ranks of a 2-core machine);
- the overlap: backward with DDP (gradients all-reduced bucket by bucket during backward)
  against backward without DDP, and the time to all-reduce all gradients after backward.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
SIZES = [1 << k for k in range(10, 27, 2)]  # 1 KB .. 64 MB


def _median(fn, repeat: int, barrier) -> float:
    times = []
    for _ in range(repeat):
        barrier()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def worker_allreduce(quick: bool) -> dict:
    from mpi4py import MPI

    import coretorch as ct
    import coretorch.distributed as dist

    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD.Dup()
    rows = []
    for nbytes in SIZES:
        t = ct.ones(nbytes // 4)
        # the same memory for both: where a buffer lies changes MPI's own speed by up to 1.5x
        # at 4 MB here (pages, cache sets), which would drown the overhead being measured
        arr = t.numpy()
        repeat = max(5, min(200, (64 << 20) // nbytes // (8 if quick else 1)))
        for _ in range(2):  # warm up both paths
            comm.Allreduce(MPI.IN_PLACE, arr)
            dist.all_reduce(t)
        # interleaved, so both see the same machine noise
        ours, raw = [], []
        for _ in range(repeat):
            ours.append(_median(lambda: dist.all_reduce(t), 1, comm.Barrier))
            raw.append(_median(lambda: comm.Allreduce(MPI.IN_PLACE, arr), 1, comm.Barrier))
        rows.append(
            {
                "bytes": nbytes,
                "coretorch": statistics.median(ours),
                "mpi4py": statistics.median(raw),
            }
        )
    return {"rows": rows, "world": dist.get_world_size()}


def _mlp(ct):
    nn = ct.nn
    return nn.Sequential(
        nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, 10)
    )


def worker_ddp(quick: bool) -> dict:
    import numpy as np

    import coretorch as ct
    import coretorch.distributed as dist
    from coretorch.nn.parallel import DistributedDataParallel as DDP

    dist.init_process_group("mpi")
    rank = dist.get_rank()
    rng = np.random.default_rng(rank)
    x = ct.tensor(rng.standard_normal((256, 784)).astype(np.float32))
    y = ct.tensor(rng.integers(0, 10, 256))
    ct.manual_seed(0)
    plain = _mlp(ct)
    ddp = DDP(_mlp(ct))
    loss_fn = ct.nn.CrossEntropyLoss()
    barrier = dist.barrier
    repeat = 8 if quick else 25

    def runner(model):
        opt = ct.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def step():
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            opt.step()

        def backward_only():
            model.zero_grad()
            loss = loss_fn(model(x), y)
            barrier()
            t = time.perf_counter()
            loss.backward()
            return time.perf_counter() - t

        return step, backward_only

    ddp_step, ddp_bwd = runner(ddp)
    plain_step, plain_bwd = runner(plain)
    for _ in range(3):
        ddp_step()
        plain_step()
    out = {
        "step_ddp": _median(ddp_step, repeat, barrier),
        "backward_ddp": statistics.median(ddp_bwd() for _ in range(repeat)),
        "backward_plain": statistics.median(plain_bwd() for _ in range(repeat)),
    }
    flat = ct.cat([p.grad.reshape(-1) for p in plain.parameters()])
    out["allreduce_grads"] = _median(lambda: dist.all_reduce(flat), repeat, barrier)
    out["buckets"] = len(ddp.reducer.buckets)
    out["grad_mb"] = flat.numel() * 4 / 2**20
    return out


def _run_job(n: int, what: str, quick: bool) -> dict:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), ".."))
    from coretorch.distributed.run import find_mpiexec

    env = dict(os.environ, OMP_NUM_THREADS="1", NUMBA_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    cmd = [find_mpiexec(), "-n", str(n), sys.executable, HERE, "--worker", what]
    cmd += ["--quick"] if quick else []
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stdout}\n{r.stderr}")
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n >> 10} KB"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        res = {"allreduce": worker_allreduce, "ddp": worker_ddp}[args.worker](args.quick)
        import coretorch.distributed as dist

        if dist.get_rank() == 0:
            print("RESULT " + json.dumps(res), flush=True)
        dist.destroy_process_group()
        return

    from rich.console import Console
    from rich.table import Table

    console = Console()
    ar = _run_job(2, "allreduce", args.quick)
    t = Table(title=f"all_reduce SUM float32 in place, {ar['world']} ranks (median)")
    for c in (
        "size",
        "coretorch",
        "mpi4py Allreduce",
        "coretorch speed vs mpi4py",
        "coretorch algorithm bandwidth",
    ):
        t.add_column(c, justify="right")
    for r in ar["rows"]:
        t.add_row(
            _size(r["bytes"]),
            f"{r['coretorch'] * 1e6:.1f} µs",
            f"{r['mpi4py'] * 1e6:.1f} µs",
            f"{r['mpi4py'] / r['coretorch']:.2f}×",
            f"{r['bytes'] / r['coretorch'] / 1e9:.2f} GB/s",
        )
    console.print(t)

    one, two = _run_job(1, "ddp", args.quick), _run_job(2, "ddp", args.quick)
    t = Table(
        title="DDP, MLP 784-1024-1024-10, batch 256 per rank, 1 thread per rank "
        f"({two['grad_mb']:.1f} MB of gradients, {two['buckets']} buckets)"
    )
    for c in ("measurement", "1 rank", "2 ranks"):
        t.add_column(c, justify="right")
    t.add_row("DDP step", f"{one['step_ddp'] * 1e3:.2f} ms", f"{two['step_ddp'] * 1e3:.2f} ms")
    t.add_row(
        "backward without DDP",
        f"{one['backward_plain'] * 1e3:.2f} ms",
        f"{two['backward_plain'] * 1e3:.2f} ms",
    )
    t.add_row(
        "backward with DDP",
        f"{one['backward_ddp'] * 1e3:.2f} ms",
        f"{two['backward_ddp'] * 1e3:.2f} ms",
    )
    t.add_row(
        "all_reduce of all gradients after backward",
        f"{one['allreduce_grads'] * 1e3:.2f} ms",
        f"{two['allreduce_grads'] * 1e3:.2f} ms",
    )
    console.print(t)
    eff = one["step_ddp"] / two["step_ddp"]
    extra = two["backward_ddp"] - two["backward_plain"]
    console.print(
        f"scaling efficiency on 2 ranks (step time 1 rank / 2 ranks, same per-rank "
        f"batch): {eff:.2f} (target >= 0.8)"
    )
    console.print(
        f"overlap on 2 ranks: backward with DDP takes {extra * 1e3:.2f} ms longer "
        f"than without; backward followed by one all_reduce of all gradients would "
        f"take {two['allreduce_grads'] * 1e3:.2f} ms longer (DDP's extra also holds "
        f"its bucket copies, {(one['backward_ddp'] - one['backward_plain']) * 1e3:.2f}"
        f" ms on 1 rank, and the wait for the slower rank)"
    )


if __name__ == "__main__":
    main()
