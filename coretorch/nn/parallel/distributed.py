"""`DistributedDataParallel`: data-parallel training across processes (mirrors
``torch.nn.parallel.DistributedDataParallel``).

Each rank runs the same model on its own part of the batch. At construction rank 0's
parameters and buffers are broadcast to every rank; during backward the gradients are averaged
across ranks bucket by bucket, overlapping communication with the rest of backward (see
`reducer`), so after ``loss.backward()`` every rank holds the gradients one process would have
computed on the concatenated batch, and the ranks' optimizer steps stay identical."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from ...autograd import is_grad_enabled, no_grad
from ..modules.module import Module
from .reducer import Reducer

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    """Wrap `module` for data-parallel training over `process_group` (the default group).

    `bucket_cap_mb` (default 25) caps a gradient bucket; `find_unused_parameters` lets a
    forward pass leave parameters out of the loss; `broadcast_buffers` (default True) copies
    rank 0's buffers (e.g. BatchNorm statistics) to every rank before each forward."""

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
    ):
        super().__init__()
        from ... import distributed as dist

        if not isinstance(module, Module):
            raise TypeError(
                f"DistributedDataParallel(): module must be an nn.Module, got "
                f"{type(module).__name__}"
            )
        for name, value in (
            ("gradient_as_bucket_view", gradient_as_bucket_view),
            ("static_graph", static_graph),
            ("mixed_precision", mixed_precision is not None),
            ("device_mesh", device_mesh is not None),
            ("delay_all_reduce_named_params", delay_all_reduce_named_params is not None),
        ):
            if value:
                raise NotImplementedError(
                    f"DistributedDataParallel(): {name} is not implemented in coretorch"
                )
        if dim != 0:
            raise NotImplementedError("DistributedDataParallel(): only dim=0 is implemented")
        self.module = module
        group = process_group if process_group is not None else dist.group.WORLD
        if group is None:
            raise ValueError(
                "DistributedDataParallel(): the default process group has not been "
                "initialized; call coretorch.distributed.init_process_group() "
                "first"
            )
        self.process_group = group
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        params = _unique(p for p in module.parameters() if p.requires_grad)
        if not params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't "
                "have any parameter that requires a gradient."
            )
        self._params = params
        self._verify_shapes(dist)
        if init_sync:
            self._broadcast(list(module.parameters()) + list(module.buffers()))
        self.reducer = Reducer(
            params, self.process_group, self.bucket_bytes_cap, find_unused_parameters
        )

    def _verify_shapes(self, dist) -> None:
        mine = [[list(p.shape), p.dtype.name] for p in self._params]
        everyone: list = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if theirs != mine:
                raise RuntimeError(
                    f"DistributedDataParallel(): the model's parameters differ across ranks: "
                    f"this rank ({dist.get_rank(self.process_group)}) has "
                    f"{len(mine)} parameters {mine[:4]}..., rank {r} has {len(theirs)} "
                    f"{theirs[:4]}...; every rank must build the same model"
                )

    def _broadcast(self, tensors: list) -> None:
        """Copy rank 0's values of `tensors` to every rank, one broadcast per dtype."""
        import coretorch

        from ... import distributed as dist

        src = dist.get_global_rank(self.process_group, 0)
        by_kind: dict[tuple, list] = {}
        for t in _unique(tensors):
            by_kind.setdefault((t.dtype, str(t.device)), []).append(t)
        with no_grad():
            for group in by_kind.values():
                flat = coretorch.cat([t.detach().reshape(-1) for t in group])
                dist.broadcast(flat, src=src, group=self.process_group)
                off = 0
                for t in group:
                    t.copy_(flat[off : off + t.numel()].view(t.shape))
                    off += t.numel()

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        self.reducer.check_finished()
        if self.broadcast_buffers:
            buffers = list(self.module.buffers())
            if buffers and self.process_group.size() > 1:
                self._broadcast(buffers)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.reducer.prepare_for_backward(out)
        else:
            self.reducer.disarm()
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip gradient synchronization in the backward of forwards run inside: gradients
        accumulate locally, and the first backward after the block averages the sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def __getstate__(self):
        raise TypeError(
            "DistributedDataParallel cannot be pickled; save its module's "
            "state_dict with coretorch.save"
        )


def _unique(tensors) -> list:
    seen: set[int] = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out
