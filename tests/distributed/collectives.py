"""Every collective against numpy, on every rank. Run under ``mpiexec -n N``.

Each rank's input is a function of its rank (`data`), so every rank computes the expected
result of a collective with numpy from all the ranks' inputs. A failed check raises, which
fails the job; at the end each rank prints ``RANK r OK <checks>``.
"""

from __future__ import annotations

import os

import numpy as np

import coretorch as ct
import coretorch.distributed as dist
import coretorch.nn as nn
from coretorch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("mpi")
R, N = dist.get_rank(), dist.get_world_size()
RO = dist.ReduceOp
checks = 0


def data(rank: int, shape=(3, 4), dtype=np.float64) -> np.ndarray:
    rng = np.random.default_rng(rank + 10)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(1, 4, shape).astype(dtype)


def all_data(shape=(3, 4), dtype=np.float64) -> list[np.ndarray]:
    return [data(r, shape, dtype) for r in range(N)]


def check(got, want, what: str, exact: bool = False) -> None:
    global checks
    got = got.numpy() if isinstance(got, ct.Tensor) else np.asarray(got)
    if exact or want.dtype.kind in "biu":
        ok = got.shape == want.shape and np.array_equal(got, want)
    else:
        ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-6, atol=1e-6)
    assert ok, f"rank {R}: {what}: got {got!r}, want {want!r}"
    checks += 1


def expect_raise(exc, fn, what: str, match: str) -> None:
    global checks
    try:
        fn()
    except exc as e:
        assert match in str(e), f"rank {R}: {what}: message {str(e)!r} lacks {match!r}"
        checks += 1
        return
    raise AssertionError(f"rank {R}: {what}: expected {exc.__name__}")


# ---- all_reduce: every op, several dtypes, in place, non-contiguous, async ----
REDUCE = {RO.SUM: np.sum, RO.PRODUCT: np.prod, RO.MIN: np.min, RO.MAX: np.max, RO.AVG: np.mean}
for op, fn in REDUCE.items():
    for dt in (np.float32, np.float64, np.int64, np.int32):
        if op is RO.AVG and dt in (np.int64, np.int32):
            continue
        t = ct.from_numpy(data(R, dtype=dt).copy())
        dist.all_reduce(t, op=op)
        check(t, fn(np.stack(all_data(dtype=dt)), axis=0).astype(dt), f"all_reduce {op} {dt}")
for op, fn in (
    (RO.BAND, np.bitwise_and.reduce),
    (RO.BOR, np.bitwise_or.reduce),
    (RO.BXOR, np.bitwise_xor.reduce),
):
    t = ct.from_numpy(data(R, dtype=np.int64).copy())
    dist.all_reduce(t, op=op)
    check(t, fn(np.stack(all_data(dtype=np.int64)), axis=0), f"all_reduce {op}")
for op, fn in ((RO.SUM, np.any), (RO.MAX, np.any), (RO.MIN, np.all), (RO.PRODUCT, np.all)):
    t = ct.from_numpy(data(R, dtype=bool).copy())
    dist.all_reduce(t, op=op)
    check(t, fn(np.stack(all_data(dtype=bool)), axis=0), f"all_reduce bool {op}")
t16 = ct.from_numpy(data(R, dtype=np.float16).copy())
dist.all_reduce(t16)
check(
    t16.float(),
    np.sum(np.stack(all_data(dtype=np.float16)), axis=0).astype(np.float32),
    "all_reduce float16",
)
base = ct.from_numpy(data(R, (4, 3)).copy())
view = base.t()  # non-contiguous: packed, reduced, copied back into base's memory
v0 = view._version
dist.all_reduce(view)
check(base, np.sum(np.stack(all_data((4, 3))), axis=0), "all_reduce non-contiguous")
assert view._version > v0, "all_reduce must count as an in-place change"
arr = data(R).copy()
t = ct.from_numpy(arr)
work = dist.all_reduce(t, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed() and work.is_success()
check(arr, np.sum(np.stack(all_data()), axis=0), "all_reduce zero-copy into the numpy buffer")
assert work.result()[0] is t
w = ct.ones(3, requires_grad=True)
dist.all_reduce(w)  # leaves that require grad are reduced in place, outside autograd
check(w.detach(), np.full(3, float(N)), "all_reduce on a leaf requiring grad")

# ---- broadcast / reduce ----
for src in range(N):
    t = ct.from_numpy(data(R).copy())
    dist.broadcast(t, src=src)
    check(t, data(src), f"broadcast from {src}", exact=True)
    t = ct.from_numpy(data(R).copy())
    dist.reduce(t, dst=src, op=RO.MAX)
    check(t, np.max(np.stack(all_data()), axis=0) if R == src else data(R), f"reduce to {src}")

# ---- gathers and scatters ----
out = [ct.zeros(3, 4, dtype=ct.float64) for _ in range(N)]
dist.all_gather(out, ct.from_numpy(data(R)))
for r in range(N):
    check(out[r], data(r), f"all_gather [{r}]", exact=True)
flat = ct.zeros(N * 3, 4, dtype=ct.float64)
dist.all_gather_into_tensor(flat, ct.from_numpy(data(R)))
check(flat, np.concatenate(all_data()), "all_gather_into_tensor", exact=True)
stacked = ct.zeros(N, 3, 4, dtype=ct.float64)
dist.all_gather_into_tensor(stacked, ct.from_numpy(data(R)))
check(stacked, np.stack(all_data()), "all_gather_into_tensor stacked", exact=True)
big = [data(r, (N * 2, 3)) for r in range(N)]
o = ct.zeros(2, 3, dtype=ct.float64)
dist.reduce_scatter_tensor(o, ct.from_numpy(big[R]))
check(o, np.sum(np.stack(big), axis=0)[R * 2 : (R + 1) * 2], "reduce_scatter_tensor")
o = ct.zeros(2, 3, dtype=ct.float64)
dist.reduce_scatter_tensor(o, ct.from_numpy(big[R]), op=RO.AVG)
check(o, np.mean(np.stack(big), axis=0)[R * 2 : (R + 1) * 2], "reduce_scatter_tensor AVG")
o = ct.zeros(2, 3, dtype=ct.float64)
dist.reduce_scatter(o, [ct.from_numpy(big[R][2 * k : 2 * k + 2]) for k in range(N)])
check(o, np.sum(np.stack(big), axis=0)[R * 2 : (R + 1) * 2], "reduce_scatter")
for root in range(N):
    gl = [ct.zeros(3, 4, dtype=ct.float64) for _ in range(N)] if R == root else None
    dist.gather(ct.from_numpy(data(R)), gl, dst=root)
    if R == root:
        for r in range(N):
            check(gl[r], data(r), f"gather to {root} [{r}]", exact=True)
    t = ct.zeros(3, 4, dtype=ct.float64)
    sl = [ct.from_numpy(data(100 + r)) for r in range(N)] if R == root else None
    dist.scatter(t, sl, src=root)
    check(t, data(100 + R), f"scatter from {root}", exact=True)
a2a_in = ct.from_numpy(data(R, (N * 2,)))
a2a_out = ct.zeros(N * 2, dtype=ct.float64)
dist.all_to_all_single(a2a_out, a2a_in)
check(
    a2a_out,
    np.concatenate([data(r, (N * 2,))[2 * R : 2 * R + 2] for r in range(N)]),
    "all_to_all_single",
)

# ---- point to point ----
nxt, prv = (R + 1) % N, (R - 1) % N
recv_buf = ct.zeros(5, dtype=ct.int64)
rw = dist.irecv(recv_buf, src=prv, tag=3)
sw = dist.isend(ct.arange(5) * (R + 1), dst=nxt, tag=3)
sw.wait()
rw.wait()
check(recv_buf, np.arange(5) * (prv + 1), "isend/irecv ring")
if R == 0:
    for _ in range(N - 1):
        buf = ct.zeros(2, dtype=ct.int64)
        sender = dist.recv(buf)  # from any rank
        check(buf, np.array([sender, 7 * sender]), "recv from any source")
else:
    dist.send(ct.tensor([R, 7 * R]), dst=0)
dist.barrier()
dist.barrier(async_op=True).wait()

# ---- object collectives ----
objs = (
    [
        {"step": 3, (1, "a"): [1.5, None, True]},
        ct.arange(4.0),
        b"\x00raw",
        np.arange(3, dtype=np.int16),
        "text",
    ]
    if R == 0
    else [None] * 5
)
dist.broadcast_object_list(objs, src=0)
assert objs[0] == {"step": 3, (1, "a"): [1.5, None, True]} and objs[2] == b"\x00raw"
assert objs[4] == "text" and objs[3].dtype == np.int16
check(objs[1], np.arange(4.0, dtype=np.float32), "broadcast_object_list tensor")
gathered = [None] * N
dist.all_gather_object(gathered, {"rank": R, "name": "x" * R})
assert gathered == [{"rank": r, "name": "x" * r} for r in range(N)], gathered
gl = [None] * N if R == N - 1 else None
dist.gather_object((R, R * R), gl, dst=N - 1)
assert R != N - 1 or gl == [(r, r * r) for r in range(N)], gl
so = [None]
dist.scatter_object_list(so, [f"for {r}" for r in range(N)] if R == 0 else None, src=0)
assert so == [f"for {R}"], so
expect_raise(
    TypeError,
    lambda: dist.all_gather_object([None] * N, object()),
    "object of an unsupported type",
    "never pickled",
)
checks += 4

# ---- groups ----
evens = dist.new_group([r for r in range(N) if r % 2 == 0])
if R % 2 == 0:
    t = ct.full((2,), float(R))
    dist.all_reduce(t, group=evens)
    check(t, np.full(2, float(sum(r for r in range(N) if r % 2 == 0))), "all_reduce in a group")
    assert dist.get_world_size(evens) == len(range(0, N, 2))
    assert dist.get_rank(evens) == R // 2
    t = ct.zeros(2)
    if R == 0:
        t = ct.ones(2) * 9
    dist.broadcast(t, src=0, group=evens)
    check(t, np.full(2, 9.0, dtype=np.float32), "broadcast in a group (global src)")
else:
    assert evens is dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(evens) == -1 and dist.all_reduce(ct.ones(1), group=evens) is None

# ---- argument errors ----
expect_raise(
    ValueError,
    lambda: dist.all_reduce(ct.ones(2, dtype=ct.int64), op=RO.AVG),
    "AVG on ints",
    "floating-point",
)
expect_raise(
    ValueError,
    lambda: dist.all_gather_into_tensor(ct.zeros(3), ct.zeros(2)),
    "all_gather_into_tensor sizes",
    "elements",
)
expect_raise(
    ValueError,
    lambda: dist.broadcast(ct.zeros(2), src=N),
    "src out of range",
    "not a rank of this group",
)
expect_raise(TypeError, lambda: dist.all_reduce([1, 2]), "not a tensor", "coretorch.Tensor")
expect_raise(
    RuntimeError,
    lambda: dist.all_reduce(ct.zeros(2, device="meta")),
    "device without backend",
    "no process-group backend for device type 'meta'",
)

# ---- DETAIL mode: mismatched calls are named, then the group keeps working ----
dist.set_debug_level(dist.DebugLevel.DETAIL)
expect_raise(
    dist.DistError,
    lambda: dist.all_reduce(ct.zeros(3 + R)),
    "shape mismatch",
    "detected mismatch between collectives",
)
mismatch = ct.zeros(2, dtype=ct.float64 if R == 0 else ct.float32)
expect_raise(
    dist.DistError, lambda: dist.all_reduce(mismatch), "dtype mismatch", "rank 1 runs all_reduce"
)
dist.set_debug_level(dist.DebugLevel.OFF)
t = ct.ones(2)
dist.all_reduce(t)
check(t, np.full(2, float(N), dtype=np.float32), "all_reduce after a detected mismatch")

# ---- DDP: no_sync, unused parameters, buffers ----


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.body, self.a, self.b = nn.Linear(4, 3), nn.Linear(3, 1), nn.Linear(3, 1)
        self.register_buffer("stat", ct.full((2,), float(R)))

    def forward(self, x, head):
        return (self.a if head == "a" else self.b)(self.body(x).relu())


ct.manual_seed(R)  # different initial weights: DDP broadcasts rank 0's
ddp = DDP(TwoHeads(), find_unused_parameters=True)
check(ddp.module.stat, np.zeros(2, dtype=np.float32), "buffers broadcast at construction")
ref = TwoHeads()
ref.load_state_dict(ddp.module.state_dict())
xs = [ct.from_numpy(data(r, (6, 4)).astype(np.float32)) for r in range(N)]
# rank r uses head "a" if r is even, else "b": b is unused on even ranks, a on odd ones
ddp(xs[R], "a" if R % 2 == 0 else "b").sum().backward()
for p in ref.parameters():
    p.grad = None
for r in range(N):
    (ref(xs[r], "a" if r % 2 == 0 else "b").sum() / N).backward()
for (name, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
    if N == 1 and name.startswith("b."):
        assert p.grad is None, "a parameter no rank used keeps no gradient"
        continue
    check(p.grad, q.grad.numpy(), f"find_unused_parameters grad {name}")
ddp.module.stat.fill_(float(R + 5))
ddp(xs[R], "a")
check(ddp.module.stat, np.full(2, 5.0, dtype=np.float32), "broadcast_buffers before forward")
ddp.reducer.disarm()

plain = DDP(nn.Linear(4, 2))
for p in plain.parameters():
    p.grad = None
with plain.no_sync():
    plain(xs[R]).sum().backward()  # local only
local = [p.grad.clone() for p in plain.parameters()]
plain(xs[R] * 2).sum().backward()  # accumulates, then averages the sum
ref2 = nn.Linear(4, 2)
ref2.load_state_dict(plain.module.state_dict())
for r in range(N):
    (ref2(xs[r]).sum() / N + ref2(xs[r] * 2).sum() / N).backward()
for p, q in zip(plain.parameters(), ref2.parameters()):
    check(p.grad, q.grad.numpy(), "no_sync accumulation then sync")
assert N == 1 or not np.allclose(local[0].numpy(), plain.module.weight.grad.numpy())
strict = DDP(TwoHeads())
strict(xs[R], "a").sum().backward()  # b never gets a gradient
expect_raise(
    RuntimeError,
    lambda: strict(xs[R], "a"),
    "unused without find_unused",
    "Expected to have finished reduction in the prior iteration",
)

dist.destroy_process_group()
assert not dist.is_initialized()
os.write(1, f"RANK {R} OK {checks}\n".encode())  # one write: lines of ranks stay whole
