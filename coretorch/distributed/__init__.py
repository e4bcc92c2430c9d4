"""``coretorch.distributed``: process groups and collectives (mirrors ``torch.distributed``).

Launch a script on several processes with ``coretorch-run -n 4 train.py`` (or ``mpiexec``),
then::

    import coretorch.distributed as dist
    dist.init_process_group()            # rank and world size come from the launcher
    dist.all_reduce(t)                   # in place, every rank gets the sum

Communication is done by process-group backends, installed plugins of entry-point group
``coretorch.distributed_backends``: ``mpi`` (coretorch-mpi: mpi4py over MPICH) for cpu tensors
and ``nccl`` (coretorch-nccl-cupy: ``cupy.cuda.nccl``) for cuda tensors. ``python -m
coretorch`` lists them with their status.
"""

from __future__ import annotations

from .backend import Backend  # noqa: F401
from .collectives import (  # noqa: F401
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from .debug import (  # noqa: F401
    DebugLevel,
    get_debug_level,
    set_debug_level,
    set_debug_level_from_env,  # noqa: F401
)
from .errors import DistBackendError, DistError  # noqa: F401
from .object_collectives import (  # noqa: F401
    all_gather_object,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from .plugins import distributed_backends  # noqa: F401
from .process_group import (  # noqa: F401
    GroupMember,
    ProcessGroup,
    default_pg_timeout,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from .reduce_op import ReduceOp  # noqa: F401
from .work import Work  # noqa: F401

__all__ = [
    "init_process_group",
    "destroy_process_group",
    "is_initialized",
    "is_available",
    "is_mpi_available",
    "is_nccl_available",
    "get_rank",
    "get_world_size",
    "get_backend",
    "new_group",
    "get_process_group_ranks",
    "get_group_rank",
    "get_global_rank",
    "group",
    "GroupMember",
    "ProcessGroup",
    "Backend",
    "ReduceOp",
    "Work",
    "DistError",
    "DistBackendError",
    "DebugLevel",
    "get_debug_level",
    "set_debug_level",
    "set_debug_level_from_env",
    "default_pg_timeout",
    "distributed_backends",
    "all_reduce",
    "broadcast",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "gather",
    "scatter",
    "all_to_all_single",
    "send",
    "recv",
    "isend",
    "irecv",
    "barrier",
    "broadcast_object_list",
    "all_gather_object",
    "gather_object",
    "scatter_object_list",
]
