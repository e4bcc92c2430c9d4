"""DDP training of the digits CNN on every rank; rank 0 saves the final parameters.

    mpiexec -n N python ddp_digits.py OUT.safetensors STEPS GLOBAL_BATCH

Each rank seeds its model differently (DDP must broadcast rank 0's), takes its share of each
global batch through DistributedSampler, and trains in float64 with AdamW. The test compares
rank 0's parameters with one process trained on the full global batches
(`single_process_reference`), and this script checks that every rank ends identical.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))

from train_digits import build_model, load_data  # noqa: E402

import coretorch as ct  # noqa: E402
import coretorch.distributed as dist  # noqa: E402
import coretorch.nn.functional as F  # noqa: E402
from coretorch.nn.parallel import DistributedDataParallel as DDP  # noqa: E402
from coretorch.utils.data import DataLoader  # noqa: E402
from coretorch.utils.data.distributed import DistributedSampler  # noqa: E402

SEED = 0


def make_model(seed: int):
    """The example's CNN in float64, dropout off (its masks would differ from one process's)."""
    ct.manual_seed(seed)
    model = build_model().double()
    for m in model.modules():
        if isinstance(m, ct.nn.Dropout):
            m.p = 0.0
    return model


def dataset():
    train, _ = load_data(SEED, "cpu")
    x, y = train.tensors
    return ct.utils.data.TensorDataset(x.double(), y)


def single_process_reference(steps: int, global_batch: int, world: int) -> dict:
    """One process, full global batches in the order the sampler hands them to the ranks."""
    ds = dataset()
    model = make_model(SEED)
    opt = ct.optim.AdamW(model.parameters(), lr=1e-2)
    samplers = [
        DistributedSampler(ds, num_replicas=world, rank=r, shuffle=True, seed=SEED)
        for r in range(world)
    ]
    per_rank = [list(s) for s in samplers]
    b = global_batch // world
    for step in range(steps):
        idx = [i for k in range(b) for r in range(world) for i in [per_rank[r][step * b + k]]]
        xb, yb = ds[ct.tensor(idx)]
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
    return {k: v.clone() for k, v in model.state_dict().items()}


def main() -> None:
    out, steps, global_batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    ds = dataset()
    model = DDP(make_model(SEED + 100 * rank), bucket_cap_mb=0.01)  # several buckets
    assert len(model.reducer.buckets) > 1
    opt = ct.optim.AdamW(model.parameters(), lr=1e-2)
    sampler = DistributedSampler(ds, shuffle=True, seed=SEED)
    loader = DataLoader(ds, batch_size=global_batch // world, sampler=sampler)
    batches = iter(loader)
    for _ in range(steps):
        xb, yb = next(batches)
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()
    flat = ct.cat([p.detach().reshape(-1) for p in model.parameters()])
    everyone = [ct.zeros_like(flat) for _ in range(world)]
    dist.all_gather(everyone, flat)
    for r, other in enumerate(everyone):
        assert ct.equal(other, flat), f"rank {r}'s parameters differ from rank {rank}'s"
    if rank == 0:
        ct.save(model.module.state_dict(), out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
