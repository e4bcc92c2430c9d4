"""The torch -> coretorch import hook (`coretorch.compat`) and its runners:
``python -m coretorch.compat`` and ``coretorch-profile --compat``."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

import coretorch
from coretorch.compat import TorchAliasFinder, install, installed


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CORETORCH_")}
    env["PYTHONWARNINGS"] = "ignore"
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )


def write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


# ---- the finder, in this process (installing nothing) -------------------------------------


def test_finder_maps_torch_paths_to_the_coretorch_modules():
    finder = TorchAliasFinder()
    spec = finder.find_spec("torch.nn.functional")
    assert spec.name == "torch.nn.functional"
    assert spec.loader.create_module(spec) is coretorch.nn.functional
    assert finder.find_spec("torch").loader.create_module(None) is coretorch
    assert finder.find_spec("numpy") is None and finder.find_spec("torchvision") is None


def test_finder_names_a_missing_module_and_points_at_the_docs():
    with pytest.raises(ModuleNotFoundError) as e:
        TorchAliasFinder().find_spec("torch.jit")
    assert e.value.name == "torch.jit"
    assert "coretorch.jit" in str(e.value) and "docs/compatibility.md" in str(e.value)
    with pytest.raises(ModuleNotFoundError) as e:
        TorchAliasFinder().find_spec("torch.nn.no_such_thing")
    assert e.value.name == "torch.nn.no_such_thing"


def test_finder_keeps_a_missing_third_party_dependency_error(monkeypatch):
    # coretorch.utils.tensorboard exists; the package it needs is missing: say that, not
    # "coretorch has no ..."
    monkeypatch.delitem(sys.modules, "coretorch.utils.tensorboard", raising=False)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        TorchAliasFinder().find_spec("torch.utils.tensorboard")


# ---- python -m coretorch.compat ---------------------------------------------------------------


def test_a_script_runs_with_torch_mapped_to_coretorch(tmp_path):
    script = write(
        tmp_path / "prog.py",
        """
        import sys
        import coretorch
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torch.optim.lr_scheduler
        from torch.utils.data import DataLoader
        assert torch is coretorch and nn is coretorch.nn and F is coretorch.nn.functional
        assert sys.modules["torch.optim.lr_scheduler"] is coretorch.optim.lr_scheduler
        assert DataLoader is coretorch.utils.data.DataLoader
        assert coretorch.nn.__spec__.name == "coretorch.nn"   # the module keeps its own spec
        try:
            import torch.jit
        except ModuleNotFoundError as e:
            print("missing:", e.name)
        print("args:", sys.argv[1:], "main:", __name__)
        sys.exit(int(sys.argv[1]))
    """,
    )
    p = run(["-m", "coretorch.compat", str(script), "3", "--flag"], tmp_path)
    assert p.returncode == 3, p.stderr
    assert "missing: torch.jit" in p.stdout
    assert "args: ['3', '--flag'] main: __main__" in p.stdout


def test_a_module_runs_with_dash_m_and_a_missing_path_fails_with_its_name(tmp_path):
    write(tmp_path / "pkg" / "__init__.py", "")
    write(
        tmp_path / "pkg" / "train.py",
        """
        import sys
        import torch
        print("running", __name__, sys.argv[1:], torch.ones(2).sum().item())
        import torch.compiler
    """,
    )
    p = run(["-m", "coretorch.compat", "-m", "pkg.train", "x"], tmp_path)
    assert "running __main__ ['x'] 2.0" in p.stdout
    assert p.returncode == 1
    assert "ModuleNotFoundError: No module named 'torch.compiler'" in p.stderr
    assert "docs/compatibility.md" in p.stderr


def test_usage_errors(capsys):
    from coretorch.compat.__main__ import main

    assert main([]) == 2 and "usage: python -m coretorch.compat" in capsys.readouterr().err
    assert main(["-m"]) == 2 and "-m needs a module name" in capsys.readouterr().err
    assert main(["nope.py"]) == 2 and "can't open file 'nope.py'" in capsys.readouterr().err
    assert not installed()


def test_install_refuses_when_the_real_torch_is_already_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    with pytest.raises(RuntimeError, match="the real torch is already imported"):
        install()
    assert not installed()


# ---- coretorch-profile --compat ---------------------------------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("coretorch_profiler") is None,
    reason="coretorch-profiler is not installed",
)
def test_profiler_runs_a_pytorch_program_with_compat(tmp_path):
    script = write(
        tmp_path / "prog.py",
        """
        import torch
        x = torch.ones(4, 4, requires_grad=True)
        (x * 2).sum().backward()
        print("module:", torch.__name__, "grad:", x.grad[0, 0].item())
    """,
    )
    p = run(["-m", "coretorch_profiler", "--compat", "-o", "trace.json", str(script)], tmp_path)
    assert p.returncode == 0, p.stderr
    assert "module: coretorch grad: 2.0" in p.stdout
    assert (tmp_path / "trace.json").stat().st_size > 0
