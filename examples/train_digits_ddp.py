"""Data-parallel training of the digits CNN (examples/train_digits.py) on several processes.

    coretorch-run -n 2 examples/train_digits_ddp.py                  # 2 ranks
    coretorch-run -n 2 examples/train_digits_ddp.py --profile traces # + trace.rank{r}.json
    mpiexec -n 2 python examples/train_digits_ddp.py                 # the same, by hand

Each rank trains the same model (DistributedDataParallel broadcasts rank 0's weights) on its
share of every batch (DistributedSampler), gradients are averaged across ranks during backward,
and rank 0 evaluates and prints. With ``--profile DIR`` every rank writes its own Chrome trace
``DIR/trace.rank{r}.json``, where the ``c10d::all_reduce`` slices of the gradient buckets sit
beside the backward ops they overlap.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from train_digits import build_model, evaluate, load_data  # noqa: E402

import coretorch as ct  # noqa: E402
import coretorch.distributed as dist  # noqa: E402
import coretorch.nn.functional as F  # noqa: E402
from coretorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from coretorch.utils.data import DataLoader  # noqa: E402
from coretorch.utils.data.distributed import DistributedSampler  # noqa: E402


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=5, help="epochs (default: 5)")
    p.add_argument("--batch-size", type=int, default=32, help="batch size per rank (default: 32)")
    p.add_argument("--lr", type=float, default=1e-2, help="learning rate (default: 1e-2)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.add_argument(
        "--profile", metavar="DIR", default=None, help="write one Chrome trace per rank into DIR"
    )
    args = p.parse_args(argv)

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    ct.manual_seed(args.seed)
    train_ds, test_ds = load_data(args.seed, "cpu")
    sampler = DistributedSampler(train_ds, shuffle=True, seed=args.seed)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, sampler=sampler)
    model = DDP(build_model())
    opt = ct.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    profiler = contextlib.nullcontext()
    if args.profile:
        from coretorch_profiler import profile

        profiler = profile(record_shapes=True)
    if rank == 0:
        print(
            f"coretorch {ct.__version__} · {world} ranks · {len(train_ds)} train samples, "
            f"{len(sampler)} per rank per epoch · batch {args.batch_size} per rank"
        )
    t0 = time.perf_counter()
    acc = 0.0
    with profiler as prof:
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            running = ct.zeros(2, dtype=ct.float64)
            for xb, yb in train_dl:
                opt.zero_grad()
                loss = F.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
                running += ct.tensor([float(loss) * len(yb), len(yb)], dtype=ct.float64)
            dist.all_reduce(running)  # the epoch's mean loss over every rank's samples
            if rank == 0:
                _, acc = evaluate(model.module, DataLoader(test_ds, batch_size=256))
                print(
                    f"epoch {epoch + 1}/{args.epochs}  train loss "
                    f"{float(running[0] / running[1]):.4f}  test accuracy {acc:.2%}"
                )
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        prof.export_chrome_trace(os.path.join(args.profile, f"trace.rank{rank}.json"))
    if rank == 0:
        print(f"done in {time.perf_counter() - t0:.1f} s; test accuracy {acc:.2%}")
    dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
