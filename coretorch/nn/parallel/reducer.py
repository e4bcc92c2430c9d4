"""The gradient reducer of `DistributedDataParallel` (PyTorch's ``Reducer``).

Parameters are assigned to buckets in reverse registration order (roughly the order backward
produces their gradients), one dtype per bucket, the first bucket small so communication starts
early. A post-accumulate-grad hook on each parameter copies its gradient, divided by the group size,
into its bucket's flat buffer; when a bucket is full it is all-reduced asynchronously, so it travels
while backward computes the remaining gradients. Buckets start in bucket order on every rank (the
collectives must match across ranks). When the last bucket has started, the reducer waits for all of
them and copies the averaged gradients back.
"""

from __future__ import annotations

from typing import Any, Iterable

from ...autograd import no_grad
from ...autograd.node import AccumulateGrad

FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES


class _Bucket:
    __slots__ = ("index", "params", "offsets", "buffer", "pending", "work")

    def __init__(
        self, index: int, params: list[int], all_params: list, offsets: list[int], numel: int
    ):
        import coretorch

        self.index, self.params, self.offsets = index, params, offsets
        p0 = all_params[params[0]]
        self.buffer = coretorch.zeros(numel, dtype=p0.dtype, device=p0.device)
        self.pending = len(params)
        self.work: Any = None  # the bucket's all-reduce in flight


def assign_buckets(params: list, cap_bytes: int, first_cap_bytes: int) -> list[list[int]]:
    """Parameter indices per bucket: reverse order, one dtype/device per bucket, the first
    bucket of each kind capped at `first_cap_bytes`, later ones at `cap_bytes`."""
    open_: dict[tuple, list[int]] = {}
    size: dict[tuple, int] = {}
    done: list[list[int]] = []
    closed_kinds: set[tuple] = set()
    for i in reversed(range(len(params))):
        p = params[i]
        kind = (p.dtype, str(p.device))
        open_.setdefault(kind, []).append(i)
        size[kind] = size.get(kind, 0) + p.numel() * p.element_size()
        cap = cap_bytes if kind in closed_kinds else first_cap_bytes
        if size[kind] >= cap:
            done.append(open_.pop(kind))
            size[kind] = 0
            closed_kinds.add(kind)
    done.extend(b for b in open_.values() if b)
    return sorted(done, key=lambda b: -b[0])


class Reducer:
    """Buckets, hooks and the per-iteration state of gradient synchronization."""

    def __init__(self, params: list, group, bucket_cap_bytes: int, find_unused: bool):
        import coretorch

        from ... import distributed as dist

        self.dist, self.group, self._div = dist, group, coretorch.div
        self.params = params
        self.world = dist.get_world_size(group)
        self.find_unused = find_unused
        self.buckets: list[_Bucket] = []
        self.where: list[tuple[int, int]] = [(0, 0)] * len(params)  # param -> (bucket, offset)
        first = min(FIRST_BUCKET_BYTES, bucket_cap_bytes)
        for b, idx in enumerate(assign_buckets(params, bucket_cap_bytes, first)):
            offsets, n = [], 0
            for i in idx:
                offsets.append(n)
                self.where[i] = (b, n)
                n += params[i].numel()
            self.buckets.append(_Bucket(b, idx, params, offsets, n))
        self.handles = [
            p.register_post_accumulate_grad_hook(self._hook(i)) for i, p in enumerate(params)
        ]
        self.armed = False
        self.ready = [False] * len(params)
        self.next_bucket = 0
        self.used_work: Any = None  # the all-reduce of `used` in flight
        self.used: Any = None  # the int32 tensor of which parameters got gradients

    # ---- per iteration ----
    def prepare_for_backward(self, outputs) -> None:
        """Arm the hooks for the backward of this forward's `outputs`."""
        self.check_finished()
        self.ready = [False] * len(self.params)
        for b in self.buckets:
            b.pending, b.work = len(b.params), None
        self.next_bucket = 0
        self.armed = True
        if self.find_unused:
            self._mark_unused(outputs)

    def check_finished(self) -> None:
        """Raise if the previous backward left buckets unreduced (as PyTorch does)."""
        if not self.armed or not any(self.ready):
            return
        missing = [i for i, r in enumerate(self.ready) if not r]
        self.armed = False
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to "
            "`coretorch.nn.parallel.DistributedDataParallel`, and by making sure all `forward` "
            "function outputs participate in calculating loss. Parameter indices which did not "
            f"receive grad for rank {self.dist.get_rank(self.group)}: "
            f"{' '.join(map(str, missing))}"
        )

    def disarm(self) -> None:
        """Stop reducing gradients (the hooks stay but do nothing)."""
        self.armed = False

    def _mark_unused(self, outputs) -> None:
        import coretorch

        reached = _reachable_leaves(outputs)
        used = [id(p) in reached for p in self.params]
        self.used = coretorch.tensor([int(u) for u in used], dtype=coretorch.int32)
        self.used_work = self.dist.all_reduce(
            self.used, op=self.dist.ReduceOp.MAX, group=self.group, async_op=True
        )
        with no_grad():
            for i, u in enumerate(used):
                if not u:
                    b, off = self.where[i]
                    self.buckets[b].buffer[off : off + self.params[i].numel()].zero_()
                    self._ready(i)

    def _hook(self, i: int):
        def hook(param) -> None:
            if not self.armed:
                return
            if self.ready[i]:
                raise RuntimeError(
                    f"Expected to mark a variable ready only once. Parameter index {i} received "
                    f"a gradient twice in one backward pass (a parameter used in a reentrant "
                    f"backward, or find_unused_parameters=True with a parameter it marked "
                    f"unused)"
                )
            b, off = self.where[i]
            with no_grad():  # copy and divide by the group size in one pass
                self._div(
                    param.grad,
                    self.world,
                    out=self.buckets[b].buffer[off : off + param.numel()].view(param.shape),
                )
            self._ready(i)

        return hook

    def _ready(self, i: int) -> None:
        self.ready[i] = True
        b = self.buckets[self.where[i][0]]
        b.pending -= 1
        for earlier in self.buckets[: self.next_bucket]:  # drive the in-flight transfers
            if earlier.work is not None:
                earlier.work.is_completed()
        while self.next_bucket < len(self.buckets) and self.buckets[self.next_bucket].pending == 0:
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1
        if self.next_bucket == len(self.buckets):
            self._finalize()

    def _launch(self, b: _Bucket) -> None:
        b.work = self.dist.all_reduce(
            b.buffer, group=self.group, async_op=True, _extra={"bucket_index": b.index}
        )

    def _finalize(self) -> None:
        self.armed = False
        globally_used = None
        if self.used_work is not None:
            self.used_work.wait()
            globally_used = self.used.tolist()
            self.used_work = None
        with no_grad():
            for b in self.buckets:
                b.work.wait()
                for i, off in zip(b.params, b.offsets):
                    if globally_used is not None and not globally_used[i]:
                        continue  # no rank used it: its gradient stays as it was
                    p = self.params[i]
                    averaged = b.buffer[off : off + p.numel()].view(p.shape)
                    if p.grad is None:
                        p.grad = averaged.clone()
                    else:
                        p.grad.copy_(averaged)

    def remove_hooks(self) -> None:
        """Remove the gradient hooks this reducer registered."""
        for h in self.handles:
            h.remove()


def _reachable_leaves(outputs) -> set[int]:
    """ids of the leaf tensors whose AccumulateGrad the autograd graph of `outputs` reaches."""
    seen_nodes: set[int] = set()
    leaves: set[int] = set()
    stack = [t.grad_fn for t in _tensors(outputs) if t.grad_fn is not None]
    leaves.update(id(t) for t in _tensors(outputs) if t.grad_fn is None and t.requires_grad)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, AccumulateGrad):
            v = node.variable
            if v is not None:
                leaves.add(id(v))
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return leaves


def _tensors(obj) -> Iterable:
    from ...tensor.tensor import Tensor

    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            yield from _tensors(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _tensors(x)
