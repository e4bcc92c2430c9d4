"""Record the zoo's references with PyTorch: each program's initial weights (float64,
tests/zoo/weights/NAME.safetensors) and its losses over the first steps in float64 and float32
(tests/zoo/expected_losses.json). Run it, with PyTorch installed, after changing a program:

    .venv/bin/python -m tests.zoo.record        (from the repository root)
"""

from __future__ import annotations

import json
import platform

import numpy as np
import torch
from safetensors.numpy import save_file

from .programs import DTYPES, PROGRAMS
from .run import EXPECTED, WEIGHTS, train, weights_path


def save_initial_weights(name: str) -> None:
    torch.manual_seed(0)
    modules = PROGRAMS[name].build(torch)
    state = {}
    for key, module in modules.items():
        for k, v in module.state_dict().items():
            v = v.detach()
            state[f"{key}.{k}"] = (v.double() if v.is_floating_point() else v).numpy()
    WEIGHTS.mkdir(exist_ok=True)
    save_file({k: np.ascontiguousarray(v) for k, v in state.items()}, weights_path(name))


def main() -> None:
    torch.use_deterministic_algorithms(True)
    expected = {
        "recorded_with": f"torch {torch.__version__}, numpy {np.__version__}, {platform.machine()}",
        "losses": {},
    }
    for name in PROGRAMS:
        save_initial_weights(name)
        expected["losses"][name] = {dt: train(torch, name, dt) for dt in DTYPES}
        print(name, expected["losses"][name]["float64"][-1])
    EXPECTED.write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
