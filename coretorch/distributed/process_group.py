"""Process groups: the world group made by `init_process_group`, sub-groups from `new_group`.

A `ProcessGroup` maps each device type to the backend that serves it (``cpu`` → ``mpi``,
``cuda`` → ``nccl``), so one group carries collectives on tensors of either device."""

from __future__ import annotations

from datetime import timedelta
from typing import Sequence

from . import debug
from .backend import Backend
from .plugins import distributed_backends

__all__ = [
    "ProcessGroup",
    "GroupMember",
    "group",
    "init_process_group",
    "is_initialized",
    "destroy_process_group",
    "new_group",
    "get_rank",
    "get_world_size",
    "get_backend",
    "get_process_group_ranks",
    "get_group_rank",
    "get_global_rank",
    "default_pg_timeout",
    "is_available",
    "is_mpi_available",
    "is_nccl_available",
    "Backend",
]

default_pg_timeout = timedelta(minutes=30)


class ProcessGroup:
    """A set of ranks that run collectives together, with one backend per device type."""

    def __init__(
        self,
        backends: dict[str, Backend],
        ranks: Sequence[int],
        timeout: float,
        names: dict[str, str],
    ):
        self._backends = backends
        self._ranks = list(ranks)  # global ranks, by group rank
        self._group_rank_of = {g: i for i, g in enumerate(self._ranks)}
        self._timeout = timeout
        self._names = names  # device type -> backend name
        first = next(iter(backends.values()))
        self._rank, self._size = first.rank(), first.size()
        self._seq = 0  # collectives issued so far

    def rank(self) -> int:
        """This process's rank within the group."""
        return self._rank

    def size(self) -> int:
        """The number of processes in the group."""
        return self._size

    def name(self) -> str:
        """The backend description: ``mpi`` or ``cpu:mpi,cuda:nccl``."""
        names = set(self._names.values())
        if len(names) == 1:
            return names.pop()
        return ",".join(f"{d}:{n}" for d, n in self._names.items())

    def _backend_for(self, device_type: str, op: str) -> Backend:
        be = self._backends.get(device_type)
        if be is None:
            have = ", ".join(f"{d}: {n}" for d, n in self._names.items())
            raise RuntimeError(
                f"{op}(): no process-group backend for device type "
                f"'{device_type}' in this group (it has {have}); pass "
                f"backend='cpu:mpi,cuda:nccl' to init_process_group or move the "
                f"tensor"
            )
        return be

    def _group_rank(self, global_rank: int, what: str, op: str) -> int:
        r = self._group_rank_of.get(global_rank)
        if r is None:
            raise ValueError(
                f"{op}(): {what}={global_rank} is not a rank of this group "
                f"(global ranks {self._ranks})"
            )
        return r

    def __repr__(self) -> str:
        return f"<ProcessGroup {self.name()} rank {self._rank} of {self._size}>"


class GroupMember:
    """``GroupMember.WORLD`` (the default group, once initialized) and
    ``GroupMember.NON_GROUP_MEMBER`` (what `new_group` returns on ranks outside the group)."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = object()


class group:  # noqa: N801 (PyTorch's name)
    """``dist.group.WORLD``: the default process group."""

    WORLD: ProcessGroup | None = None


_group_ns = group  # the functions below take a parameter called `group`, as PyTorch's do
_bootstrap: Backend | None = None  # the world backend that found the processes, if not in WORLD


def is_available() -> bool:
    """Whether any process-group backend is installed."""
    return bool(distributed_backends())


def _plugin_available(name: str) -> bool:
    info = distributed_backends().get(name)
    return info is not None and info.status == "available"


def is_mpi_available() -> bool:
    """True when the MPI process-group backend plugin is installed and loads."""
    return _plugin_available("mpi")


def is_nccl_available() -> bool:
    """True when the NCCL process-group backend plugin is installed and loads."""
    return _plugin_available("nccl")


def is_initialized() -> bool:
    """Whether `init_process_group` has run (and `destroy_process_group` has not)."""
    return GroupMember.WORLD is not None


def _default_group() -> ProcessGroup:
    if GroupMember.WORLD is None:
        raise ValueError(
            "Default process group has not been initialized, please make sure to "
            "call init_process_group."
        )
    return GroupMember.WORLD


def _resolve(grp: ProcessGroup | None) -> ProcessGroup | None:
    """The group to run on: None for a rank outside `grp` (the collective then does nothing)."""
    if grp is GroupMember.NON_GROUP_MEMBER:
        return None
    if grp is None:
        return _default_group()
    if not isinstance(grp, ProcessGroup):
        raise TypeError(
            f"expected a ProcessGroup (or None for the default group), got {type(grp).__name__}"
        )
    return grp


def _choose(backend: str | None) -> dict[str, str]:
    """Device type -> backend name, from init_process_group's `backend` argument."""
    found = distributed_backends()
    installed = ", ".join(f"{n} ({i.status})" for n, i in found.items()) or "none"
    if backend is None:
        chosen: dict[str, str] = {}
        for name, info in found.items():
            if info.status == "available":
                for d in info.device_types:
                    chosen.setdefault(d, name)
        if not chosen:
            raise RuntimeError(
                f"init_process_group(): no process-group backend is available "
                f"(installed: {installed}); install coretorch-mpi"
            )
        return chosen
    if not isinstance(backend, str):
        raise TypeError(
            f"init_process_group(): backend must be a string such as 'mpi' or "
            f"'cpu:mpi,cuda:nccl', got {type(backend).__name__}"
        )
    pairs: list[tuple[str | None, str]] = []
    for part in backend.lower().split(","):
        dev_name, _, be_name = part.strip().rpartition(":")
        pairs.append((dev_name or None, be_name))
    chosen = {}
    for dev, name in pairs:
        be_info = found.get(name)
        if be_info is None:
            raise ValueError(
                f"init_process_group(): unknown backend '{name}' (installed: {installed})"
            )
        if be_info.status != "available":
            raise RuntimeError(
                f"init_process_group(): backend '{name}' is {be_info.status}: {be_info.reason}"
            )
        devs = [dev] if dev else be_info.device_types
        for d in devs:
            if d not in be_info.device_types:
                raise ValueError(
                    f"init_process_group(): backend '{name}' serves "
                    f"{', '.join(be_info.device_types)}, not '{d}'"
                )
            chosen[d] = name
    return chosen


def _seconds(timeout, fn: str) -> float:
    if timeout is None:
        return default_pg_timeout.total_seconds()
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    raise TypeError(f"{fn}(): timeout must be a datetime.timedelta, got {type(timeout).__name__}")


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: timedelta | None = None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the job's processes into the default group (mirrors ``torch.distributed``).

    Under ``mpiexec`` (or ``coretorch-run``) the rank and world size come from MPI; passing
    them is optional and they must agree. `backend` is ``"mpi"``, ``"nccl"``,
    ``"cpu:mpi,cuda:nccl"`` or None (every available backend, one per device type). A collective
    that waits longer than `timeout` for the other ranks raises `DistBackendError`."""
    global _bootstrap
    if GroupMember.WORLD is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError(
            "init_process_group(): stores are not implemented; the "
            "backends find the job's processes through MPI"
        )
    if init_method not in (None, "env://"):
        raise NotImplementedError(
            f"init_process_group(): init_method={init_method!r} is not "
            f"implemented; launch with coretorch-run or mpiexec"
        )
    seconds = _seconds(timeout, "init_process_group")
    debug.set_debug_level_from_env()
    chosen = _choose(backend)
    found = distributed_backends()
    names = list(dict.fromkeys(chosen.values()))
    founders = [n for n in names if found[n].plugin.establishes_world]
    if founders:
        founder = founders[0]
    else:
        first = next(
            (n for n, i in found.items() if i.status == "available" and i.plugin.establishes_world),
            None,
        )
        if first is None:
            raise RuntimeError(
                f"init_process_group(): backend {names} needs a backend that "
                f"finds the job's processes (install coretorch-mpi)"
            )
        founder = first
    made: dict[str, Backend] = {}
    made[founder] = found[founder].plugin.create(
        rank=rank, world_size=world_size, timeout=seconds, bootstrap=None
    )
    boot = made[founder]
    for given, actual, what in (
        (rank, boot.rank(), "rank"),
        (world_size, boot.size(), "world_size"),
    ):
        if given not in (-1, None) and given != actual:
            boot.shutdown()
            raise ValueError(
                f"init_process_group(): {what}={given} was given but the launcher "
                f"says {what}={actual}"
            )
    for n in names:
        if n not in made:
            made[n] = found[n].plugin.create(
                rank=boot.rank(), world_size=boot.size(), timeout=seconds, bootstrap=boot
            )
    _bootstrap = boot if founder not in names else None
    pg = ProcessGroup(
        {d: made[n] for d, n in chosen.items()}, range(boot.size()), seconds, dict(chosen)
    )
    GroupMember.WORLD = _group_ns.WORLD = pg


def destroy_process_group(group: ProcessGroup | None = None) -> None:  # noqa: F811
    """Release a group's resources; without an argument (or with the world group), every
    group's, after which `init_process_group` may be called again."""
    global _bootstrap
    pg = _resolve(group)
    if pg is None:
        return
    for be in set(pg._backends.values()):
        be.shutdown()
    if pg is GroupMember.WORLD:
        if _bootstrap is not None:
            _bootstrap.shutdown()
        _bootstrap = None
        GroupMember.WORLD = _group_ns.WORLD = None


def new_group(
    ranks: Sequence[int] | None = None,
    timeout: timedelta | None = None,
    backend: str | None = None,
    pg_options=None,
    use_local_synchronization=False,
    group_desc: str | None = None,
):
    """A group of the given global ranks. Every rank of the world must call it, in the same
    order; ranks outside the group get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default_group()
    if backend is not None and backend != world.name():
        raise NotImplementedError(
            f"new_group(): backend={backend!r} differs from the default "
            f"group's '{world.name()}'; sub-groups use the same backends"
        )
    if use_local_synchronization:
        raise NotImplementedError(
            "new_group(): use_local_synchronization is not implemented; every rank calls new_group"
        )
    members = sorted(set(range(world.size()) if ranks is None else ranks))
    bad = [r for r in members if not isinstance(r, int) or not 0 <= r < world.size()]
    if bad or not members:
        raise ValueError(
            f"new_group(): ranks must be distinct ints in [0, {world.size()}), got "
            f"{list(ranks) if ranks is not None else None}"
        )
    seconds = world._timeout if timeout is None else _seconds(timeout, "new_group")
    subs = {d: be.split(members) for d, be in world._backends.items()}
    if world.rank() not in members:
        return GroupMember.NON_GROUP_MEMBER
    mine = {d: be for d, be in subs.items() if be is not None}  # a member's split is never None
    for be in mine.values():
        be.timeout = seconds
    return ProcessGroup(mine, members, seconds, dict(world._names))


def _rank_not_in_group(grp) -> bool:
    return grp is GroupMember.NON_GROUP_MEMBER


def _member(group: ProcessGroup | None, op: str) -> ProcessGroup:
    """`group` resolved (the default group for None); ValueError if this rank is outside it."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError(f"{op}(): this rank is not a member of the group")
    return pg


def get_rank(group: ProcessGroup | None = None) -> int:  # noqa: F811 (PyTorch's argument name)
    """This process's rank in `group` (the default group if None); -1 if not a member."""
    if _rank_not_in_group(group):
        return -1
    return _member(group, "get_rank").rank()


def get_world_size(group: ProcessGroup | None = None) -> int:  # noqa: F811
    """The number of processes in `group` (the default group if None); -1 if not a member."""
    if _rank_not_in_group(group):
        return -1
    return _member(group, "get_world_size").size()


def get_backend(group: ProcessGroup | None = None) -> str:  # noqa: F811
    """The backend of `group`: ``'mpi'``, or ``'cpu:mpi,cuda:nccl'`` for a mixed group."""
    pg = _resolve(group)
    if pg is None:
        raise ValueError("get_backend(): this rank is not a member of the group")
    return pg.name()


def get_process_group_ranks(group: ProcessGroup) -> list[int]:  # noqa: F811
    """The global ranks of `group`, in group-rank order."""
    return list(_member(group, "get_process_group_ranks")._ranks)


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:  # noqa: F811
    """The rank in `group` of the process with world rank `global_rank`."""
    return _member(group, "get_group_rank")._group_rank(
        global_rank, "global_rank", "get_group_rank"
    )


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:  # noqa: F811
    """The world rank of the process with rank `group_rank` in `group`."""
    pg = _member(group, "get_global_rank")
    if not 0 <= group_rank < pg.size():
        raise ValueError(
            f"get_global_rank(): group_rank must be in [0, {pg.size()}), got {group_rank}"
        )
    return pg._ranks[group_rank]
