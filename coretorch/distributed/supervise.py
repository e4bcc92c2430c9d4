"""The per-rank supervisor `coretorch-run` starts under ``mpiexec``: it runs the rank's Python
as its child and exits with the child's status, a signal death turned into exit code 128 + N.

Why: MPICH's launcher tears the whole job down (SIGKILL) the moment one of its direct children
dies by a signal, so the other ranks could never report which rank died. Behind this
supervisor they keep running long enough to detect the dead rank and fail with an error naming
it and the collective they were in. Run as a script (it imports nothing from coretorch, so it
starts in milliseconds): ``python supervise.py RANK_PYTHON_ARGS...``."""

from __future__ import annotations

import signal
import subprocess
import sys


def main(argv: list[str]) -> int:
    """Run the command `argv` as a child, report if a signal killed it, and return its exit
    status."""
    # the launcher signals the whole process group: the child receives SIGINT/SIGTERM itself,
    # and this process must outlive it to report its status (SIGUSR1: a peer died)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1):
        signal.signal(s, signal.SIG_IGN)
    # close_fds=False: the child needs the launcher's PMI socket, inherited by number
    child = subprocess.Popen(
        argv,
        close_fds=False,
        preexec_fn=lambda: [
            signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)
        ],
    )
    code = child.wait()
    if code < 0:
        name = signal.Signals(-code).name
        print(
            f"coretorch-run: a rank's process (pid {child.pid}) was killed by {name}",
            file=sys.stderr,
            flush=True,
        )
        return 128 - code
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
