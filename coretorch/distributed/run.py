"""``coretorch-run``: start a script on several processes (torchrun's role, over ``mpiexec``).

    coretorch-run -n 4 train.py --epochs 3        # 4 ranks on this machine
    coretorch-run -n 2 -m package.module args     # a module instead of a script
    coretorch-run -n 8 --mpi-args "-hosts a,b" train.py

It runs ``mpiexec -n N <this python> script args`` with the MPI installed beside this Python
(coretorch-mpi brings MPICH's), so calling ``mpiexec`` yourself works the same. Additions:

- ``OMP_NUM_THREADS``, ``NUMBA_NUM_THREADS`` and ``OPENBLAS_NUM_THREADS`` default to 1 per rank
  when more than one rank runs (as torchrun does for OMP), so N ranks do not oversubscribe the
  cores; set them to override;
- with MPICH's launcher (Hydra) the job is not torn down the moment one rank dies: each rank
  runs behind a small supervisor (`supervise.py`), so the other ranks see the dead rank
  themselves and fail with an error naming it and the collective they were in
  (``coretorch.distributed``'s failure detection), instead of being killed silently. With a
  plain ``mpiexec`` the launcher kills the job at once and reports the dead process itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

__all__ = ["main", "find_mpiexec", "build_command"]

_THREAD_VARS = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def find_mpiexec() -> str:
    """``$CORETORCH_MPIEXEC``, else the mpiexec beside this Python, else the one on PATH."""
    explicit = os.environ.get("CORETORCH_MPIEXEC")
    if explicit:
        return explicit
    here = os.path.dirname(sys.executable)
    found = shutil.which("mpiexec", path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    if found is None:
        raise SystemExit(
            "coretorch-run: no mpiexec found beside this Python or on PATH; "
            "install coretorch-mpi (it brings mpich) or set CORETORCH_MPIEXEC"
        )
    return found


def _is_hydra(mpiexec: str) -> bool:
    try:
        out = subprocess.run(
            [mpiexec, "--version"], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return "HYDRA" in out.upper()


def build_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line for parsed `args`."""
    cmd = [mpiexec]
    if _is_hydra(mpiexec):
        cmd.append("-disable-auto-cleanup")  # a global option: before the per-program ones
    cmd += args.mpi_args.split() if args.mpi_args else []
    cmd += ["-n", str(args.nproc_per_node)]
    if "-disable-auto-cleanup" in cmd:
        cmd += [sys.executable, os.path.join(os.path.dirname(__file__), "supervise.py")]
    cmd.append(sys.executable)
    cmd += ["-m", args.script] if args.module else [args.script]
    return cmd + list(args.script_args)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="coretorch-run", description=__doc__.split("\n")[0])
    p.add_argument(
        "-n",
        "--nproc-per-node",
        "--nproc_per_node",
        type=int,
        default=1,
        help="number of ranks to start (default: 1)",
    )
    p.add_argument(
        "-m",
        "--module",
        action="store_true",
        help="run the target as a module (python -m), not a script",
    )
    p.add_argument("--mpi-args", default="", help="extra arguments for mpiexec (quoted)")
    p.add_argument("--dry-run", action="store_true", help="print the mpiexec command and exit")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments of the script")
    return p


def main(argv: list[str] | None = None) -> int:
    """``coretorch-run``: start the script on -n ranks through mpiexec (argv as the command line).

    Raises:
        SystemExit: when -n is below 1.
    """
    args = _parser().parse_args(argv)
    if args.nproc_per_node < 1:
        raise SystemExit(f"coretorch-run: -n must be at least 1, got {args.nproc_per_node}")
    cmd = build_command(args, find_mpiexec())
    env = dict(os.environ)
    if args.nproc_per_node > 1:
        for var in _THREAD_VARS:
            env.setdefault(var, "1")
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    sys.stdout.flush()
    os.execvpe(cmd[0], cmd, env)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
