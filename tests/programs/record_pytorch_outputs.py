"""Record what each program here prints under PyTorch (tests/programs/expected/*.txt), the
reference test_compat_programs.py compares coretorch's runs with. Run it with PyTorch installed
after changing a program:  .venv/bin/python tests/programs/record_pytorch_outputs.py"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

# program -> its arguments ({tmp} is a scratch directory)
RUNS = {
    "mnist_cnn": ["--dropout", "0", "--save-model", "{tmp}/model.pt"],
    "legacy_policy": ["6"],
    "tensorboard_regression": ["{tmp}/runs"],
}


def main() -> None:
    (HERE / "expected").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORETORCH_")}
    for name, args in RUNS.items():
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, str(HERE / f"{name}.py")] + [a.format(tmp=tmp) for a in args]
            out = subprocess.run(
                cmd, capture_output=True, text=True, check=True, env=env, cwd=tmp
            ).stdout
        (HERE / "expected" / f"{name}.txt").write_text(out)
        print(f"{name}: {len(out.splitlines())} lines")


if __name__ == "__main__":
    main()
