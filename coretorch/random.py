"""Random number generators: `Generator`, `manual_seed`, `seed`, `initial_seed`.

Every backend draws from a `Generator`; its state is a numpy PCG64 bit generator, so a seed gives
the same numbers on every machine and every run (a device backend may keep its own stream).
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np

from .device import device as _device

__all__ = [
    "Generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "default_generator",
    "get_rng_state",
    "set_rng_state",
    "fork_rng",
]

_DEFAULT_SEED = 67280421310721  # PyTorch's default seed, so an unseeded program is repeatable


class Generator:
    """A random stream for `device` (``coretorch.Generator().manual_seed(0)``)."""

    def __init__(self, device="cpu"):
        self.device = _device(device)
        self._seed = _DEFAULT_SEED
        self.numpy = np.random.Generator(np.random.PCG64(self._seed))

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed the generator with the integer `seed`; returns the generator."""
        seed = int(seed)
        self._seed = seed
        self.numpy = np.random.Generator(np.random.PCG64(seed & ((1 << 128) - 1)))
        return self

    def seed(self) -> int:
        """Reseed from OS entropy and return the new seed."""
        entropy = np.random.SeedSequence().entropy  # an int when none is given
        assert isinstance(entropy, int)
        s = entropy & ((1 << 63) - 1)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self) -> dict:
        """The generator's state (a dict), for `set_state`."""
        return dict(self.numpy.bit_generator.state)

    def set_state(self, state: dict) -> None:
        """Restore a state returned by `get_state`."""
        self.numpy.bit_generator.state = state


default_generator = Generator("cpu")
_device_generators: dict[str, Generator] = {}


def generator_for(dev) -> Generator:
    """The default generator of device `dev` (one per device, created on first use)."""
    d = _device(dev)
    if d.type == "cpu":
        return default_generator
    g = _device_generators.get(str(d))
    if g is None:
        g = _device_generators[str(d)] = Generator(d)
        g.manual_seed(default_generator.initial_seed())
    return g


def manual_seed(seed: int) -> Generator:
    """Seed the default generators of every device; returns the default (cpu) generator.

    Examples:
        >>> import coretorch
        >>> _ = coretorch.manual_seed(0)
        >>> a = coretorch.randn(3)
        >>> _ = coretorch.manual_seed(0)
        >>> coretorch.equal(a, coretorch.randn(3))
        True
        >>> g = coretorch.Generator().manual_seed(1)  # a private stream
        >>> coretorch.rand(2, generator=g).shape
        coretorch.Size([2])
    """
    default_generator.manual_seed(seed)
    for g in _device_generators.values():
        g.manual_seed(seed)
    return default_generator


def seed() -> int:
    """Reseed the default and device generators from a non-deterministic seed; returns it."""
    s = default_generator.seed()
    for g in _device_generators.values():
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the default generator."""
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    """The default generator's state, for `set_rng_state`."""
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    """Restore the default generator's state from `get_rng_state`."""
    default_generator.set_state(state)


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> Iterator[None]:
    """Run the block with the random streams forked: the cpu stream and those of `devices`
    (indices of `device_type`; None: every such device) are restored on exit, so what the
    block draws does not shift the numbers drawn after it. ``enabled=False`` does nothing."""
    if not enabled:
        yield
        return
    import coretorch

    mod: Any = getattr(coretorch, device_type, None)
    if mod is None or not hasattr(mod, "get_rng_state") or not mod.is_available():
        devices = []
    elif devices is None:
        devices = list(range(mod.device_count()))
    cpu_state = get_rng_state()
    dev_states = [(d, mod.get_rng_state(d)) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in dev_states:
            mod.set_rng_state(state, d)
