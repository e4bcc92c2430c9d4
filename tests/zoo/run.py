"""Train one zoo program for a few steps with a given framework (`torch` or `coretorch`), from the
committed weights and the fixed batches; shared by the recorder and the test."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

from .programs import PROGRAMS, STEPS

WEIGHTS = Path(__file__).parent / "weights"
EXPECTED = Path(__file__).parent / "expected_losses.json"


def weights_path(name: str) -> Path:
    return WEIGHTS / f"{name}.safetensors"


def _as_tensor(torch, a: np.ndarray, dtype):
    """A batch array as a framework tensor: floats in the run's dtype, integers as int64."""
    if np.issubdtype(a.dtype, np.floating):
        return torch.tensor(np.ascontiguousarray(a), dtype=dtype)
    return torch.tensor(np.ascontiguousarray(a, dtype=np.int64))


def build(torch, name: str, dtype):
    """The program's modules with the committed weights, in `dtype`."""
    modules = PROGRAMS[name].build(torch)
    state = load_file(weights_path(name))
    for key, module in modules.items():
        prefix = key + "."
        module.load_state_dict(
            {k[len(prefix) :]: torch.tensor(v) for k, v in state.items() if k.startswith(prefix)}
        )
        module.to(dtype)
    return modules


def train(torch, name: str, dtype_name: str, steps: int = STEPS) -> list[list[float]]:
    """The losses of each of the first `steps` training steps."""
    program = PROGRAMS[name]
    dtype = getattr(torch, dtype_name)
    modules = build(torch, name, dtype)
    optimizers = program.optimizers(torch, modules)
    rng = np.random.default_rng(sum(map(ord, name)))
    losses = []
    for batch in program.batches(rng, steps):
        batch = tuple(_as_tensor(torch, a, dtype) for a in batch)
        losses.append(program.step(torch, modules, optimizers, batch))
    return losses
