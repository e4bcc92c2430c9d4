"""tools/coverage_report.py: line coverage per package from a coverage data file, and the guard
that fails below the recorded floors."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

coverage = pytest.importorskip("coverage")
ROOT = Path(__file__).resolve().parent.parent


def _report_module():
    spec = importlib.util.spec_from_file_location(
        "coverage_report", ROOT / "tools" / "coverage_report.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _data_file(tmp_path, executed: dict[Path, str]) -> str:
    """A coverage data file recording, per source file, all its statements ("all") or none."""
    path = str(tmp_path / ".coverage")
    data = coverage.CoverageData(basename=path)
    cov = coverage.Coverage(data_file=None, config_file=str(ROOT / "pyproject.toml"))
    data.add_lines(
        {str(f): (cov.analysis2(str(f))[1] if how == "all" else []) for f, how in executed.items()}
    )
    data.write()
    return path


def test_figures_per_package_and_the_guard(tmp_path, capsys, monkeypatch):
    report = _report_module()
    core_file = ROOT / "coretorch" / "frames.py"
    meta_file = ROOT / "backends" / "meta" / "coretorch_meta" / "plugin.py"
    data = _data_file(tmp_path, {core_file: "all", meta_file: "none"})
    assert report.package_of(core_file) == "core" and report.package_of(meta_file) == "meta"

    monkeypatch.setattr(report, "FLOORS", {"core": 100.0, "meta": 0.0})
    assert report.main(["--data-file", data]) == 0
    out = capsys.readouterr().out
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["core", "meta"]
    assert "100.0%" in out.splitlines()[1] and "0.0%" in out.splitlines()[2]

    monkeypatch.setattr(report, "FLOORS", {"core": 100.0, "meta": 50.0, "profiler": 10.0})
    assert report.main(["--data-file", data]) == 1
    last = capsys.readouterr().out.splitlines()[-1]
    assert "meta 0.0% < 50.0%" in last and "profiler not measured" in last
    assert report.main(["--data-file", data, "--no-check"]) == 0  # a partial run only prints
