"""Record the PyTorch-written checkpoints that tests/test_serialization_torch.py reads.

Run with PyTorch installed (the repository's venv has it):
    .venv/bin/python tests/data/torch_checkpoints/record.py
Writes the .pt/.safetensors files next to this script and expected.npz, the values PyTorch
itself reports for every tensor (bfloat16 as float32), so the tests need no PyTorch.
"""

from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np
import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name: str) -> str:
    return os.path.join(HERE, name)


def small_model() -> torch.nn.Module:
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3), torch.nn.Linear(3, 2))
    m.train()
    m(torch.randn(5, 4))  # running statistics and num_batches_tracked move off their defaults
    return m


def main() -> None:
    expected: dict[str, np.ndarray] = {}

    def record(prefix: str, obj) -> None:
        for k, v in obj.items():
            if isinstance(v, torch.Tensor) and v.device.type != "meta":
                v = v.detach()
                v = v.float() if v.dtype == torch.bfloat16 else v
                expected[f"{prefix}/{k}"] = v.numpy().copy()

    model = small_model()
    sd = model.state_dict()
    torch.save(sd, path("state_dict.pt"))
    record("state_dict", sd)

    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 4)).sum().backward()
    opt.step()
    torch.save(
        {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}, path("training.pt")
    )
    record("training_model", model.state_dict())
    record("training_exp_avg", {str(i): s["exp_avg"] for i, s in opt.state_dict()["state"].items()})

    values = torch.linspace(-3, 3, 7)
    dtypes = {
        "float16": values.half(),
        "float32": values,
        "float64": values.double(),
        "bfloat16": torch.tensor([1.0, -2.5, 3.140625, 65280.0, 1e-3], dtype=torch.bfloat16),
        "int8": torch.tensor([-128, 0, 127], dtype=torch.int8),
        "uint8": torch.tensor([0, 7, 255], dtype=torch.uint8),
        "int16": torch.tensor([-32768, 1, 32767], dtype=torch.int16),
        "int32": torch.tensor([-(2**31), 5, 2**31 - 1], dtype=torch.int32),
        "int64": torch.tensor([-(2**63), 6, 2**63 - 1], dtype=torch.int64),
        "bool": torch.tensor([True, False, True]),
        "uint16": torch.tensor([0, 1, 65535], dtype=torch.int32).to(torch.uint16),
        "uint32": torch.tensor([0, 1, 2**32 - 1], dtype=torch.int64).to(torch.uint32),
    }
    torch.save(dtypes, path("dtypes.pt"))
    record(
        "dtypes",
        {k: (v.to(torch.int64) if k in ("uint16", "uint32") else v) for k, v in dtypes.items()},
    )

    w = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    p = torch.nn.Parameter(torch.tensor([0.5, -0.5]))
    views = OrderedDict(
        [
            ("a", w),
            ("row", w[1]),
            ("t", w.t()),
            ("cols", w[:, 1:3]),
            ("p", p),
            ("meta", torch.ones(2, 3, device="meta")),
            ("scalar", torch.tensor(2.5)),
            ("empty", torch.zeros(0, 3)),
            ("grad", torch.ones(2, requires_grad=True)),
        ]
    )
    extras = {
        "int": 7,
        "float": 0.25,
        "str": "x",
        "none": None,
        "tuple": (1, "two"),
        "list": [1.5, 2],
        "dtype": torch.float16,
        "device": torch.device("cpu"),
        "size": torch.Size([2, 3]),
    }
    torch.save({"views": views, "extras": extras}, path("views.pt"))
    torch.save(
        {"views": views, "extras": extras},
        path("views_legacy.pt"),
        _use_new_zipfile_serialization=False,
    )
    record("views", views)

    torch.manual_seed(1)
    whole = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    torch.save(whole, path("model.pt"))
    x = torch.randn(3, 2)
    expected["model/x"], expected["model/y"] = x.numpy(), whole(x).detach().numpy()
    torch.save({"z": torch.tensor([1 + 2j], dtype=torch.complex64)}, path("complex.pt"))
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), path("scripted.pt"))
    save_file({"bf": dtypes["bfloat16"], "f": values}, path("plain_bf16.safetensors"))
    np.savez_compressed(path("expected.npz"), **expected)


if __name__ == "__main__":
    main()
