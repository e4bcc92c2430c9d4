"""A job in which one rank fails; the tests check how the others end.

    mpiexec -n 3 python faults.py raise|kill|hang TIMEOUT_S

`raise`: rank 1 raises before the second all_reduce; `kill`: rank 1 kills itself (SIGKILL);
`hang`: rank 1 never joins (sleeps past the timeout). Every other rank prints
"RANK r ERROR <message>" for the error its all_reduce ended with, and exits 3.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from datetime import timedelta

import coretorch as ct
import coretorch.distributed as dist

mode, timeout = sys.argv[1], float(sys.argv[2])
dist.init_process_group("mpi", timeout=timedelta(seconds=timeout))
rank = dist.get_rank()
t = ct.ones(8)
dist.all_reduce(t)  # everyone is up
if rank == 1:
    if mode == "raise":
        raise RuntimeError("failure injected on rank 1")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(timeout + 3)
        sys.exit(0)
try:
    dist.all_reduce(t)
except dist.DistBackendError as e:
    os.write(1, f"RANK {rank} ERROR {e}\n".encode())  # one write: lines of ranks stay whole
    sys.exit(3)
os.write(1, f"RANK {rank} NO ERROR\n".encode())
