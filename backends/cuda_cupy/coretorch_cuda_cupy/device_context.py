"""``coretorch.cuda.device(i)``, ``device_of(tensor)`` and ``stream(s)``: context managers that
make a device or a stream current for their body (PyTorch's)."""

from __future__ import annotations

import contextlib

__all__ = ["device", "device_of", "stream"]


class device:  # noqa: N801  (PyTorch's name)
    """``with coretorch.cuda.device(1):`` makes cuda device 1 current in the body (an index, a
    ``"cuda:1"`` string or a device; None or -1 change nothing)."""

    def __init__(self, device) -> None:
        from .streams import _index

        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        from .device_module import current_device, set_device

        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)

    def __exit__(self, *exc) -> None:
        from .device_module import set_device

        if self.prev_idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)


class device_of(device):  # noqa: N801
    """``with device_of(t):`` makes `t`'s device current (no change for a non-cuda tensor)."""

    def __init__(self, obj) -> None:
        d = obj.device
        super().__init__(d if d.type == "cuda" else None)


def stream(stream):
    """``with coretorch.cuda.stream(s):`` queues the body's kernels on `s` (None: no change)."""
    return contextlib.nullcontext() if stream is None else stream
