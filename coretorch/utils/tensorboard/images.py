"""Arrays to TensorBoard images: layout conversion (``CHW``, ``NCHW``, ...) to HWC, a grid for
batches, PNG encoding (Pillow, which tensorboard depends on)."""

from __future__ import annotations

import io

import numpy as np

__all__ = ["to_hwc", "make_grid", "encode_png"]


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """An N×C×H×W batch (C 1 or 3) as one 3×H'×W' image, `ncols` images per row."""
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise ValueError(
            f"add_images(): expected N images of 1 or 3 channels, got shape {images.shape}"
        )
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = images[i]
    return canvas


def to_hwc(array: np.ndarray, dataformats: str) -> np.ndarray:
    """`array` laid out as `dataformats` (letters N, C, H, W) as an H×W×C image (C 3 or 4)."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or not set(fmt) <= set("NCHW"):
        raise ValueError(
            f"dataformats: expected distinct letters among N, C, H, W, got {dataformats!r}"
        )
    if array.ndim != len(fmt):
        raise ValueError(f"image of shape {array.shape} does not match dataformats {dataformats!r}")
    if len(fmt) == 4:
        return make_grid(array.transpose([fmt.find(c) for c in "NCHW"])).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    if fmt in ("HW", "WH"):
        hw = array.transpose([fmt.find(c) for c in "HW"])
        return np.stack([hw] * 3, 2)
    raise ValueError(f"dataformats: expected HW, CHW, HWC, NCHW or NHWC-like, got {dataformats!r}")


def encode_png(hwc: np.ndarray, rescale: float = 1) -> tuple[bytes, int, int, int]:
    """(PNG bytes, height, width, channels) of an H×W×C uint8 image, resized by `rescale`."""
    from PIL import Image

    h, w, c = hwc.shape
    img = Image.fromarray(hwc)
    if rescale != 1:
        img = img.resize((int(w * rescale), int(h * rescale)), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue(), img.height, img.width, c
