"""`tensorboard_trace_handler`: an `on_trace_ready` that writes each window's trace into a
folder, with the file names PyTorch's handler uses (TensorBoard's profiler plugin reads them)."""

from __future__ import annotations

import os
import socket
import time
from typing import Callable

__all__ = ["tensorboard_trace_handler"]


def tensorboard_trace_handler(
    dir_name: str,
    worker_name: str | None = None,
    use_gzip: bool = False,
    use_python_export: bool = False,
) -> Callable:
    """``on_trace_ready=tensorboard_trace_handler("./log")`` writes
    ``{dir_name}/{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with `use_gzip`) for every
    recorded window; `worker_name` defaults to ``{hostname}_{pid}`` and should differ between
    the workers of a distributed run."""

    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except OSError as e:
                raise RuntimeError(
                    f"tensorboard_trace_handler(): can't create directory {dir_name!r}: {e}"
                ) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn
