"""PixelShuffle, PixelUnshuffle and ChannelShuffle layers."""

from __future__ import annotations

from .. import functional as F
from ._layer import functional_layer

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]

PixelShuffle = functional_layer(
    "PixelShuffle", F.pixel_shuffle, "(*, C r², H, W) -> (*, C, H r, W r).", __name__
)
PixelUnshuffle = functional_layer(
    "PixelUnshuffle", F.pixel_unshuffle, "(*, C, H r, W r) -> (*, C r², H, W).", __name__
)
ChannelShuffle = functional_layer(
    "ChannelShuffle",
    F.channel_shuffle,
    "Interleave the channels of `groups` groups (ShuffleNet).",
    __name__,
)
