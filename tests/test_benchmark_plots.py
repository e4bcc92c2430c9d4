"""benchmarks/plots.py draws the ratio charts of docs/benchmarks.md from the JSON the benchmark
scripts write (``--json``), and the page shows a chart for every recorded result."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"


def _module(name: str):
    """A module of benchmarks/ (a folder of scripts, not a package)."""
    sys.path.insert(0, str(BENCHMARKS))  # the scripts import their siblings by plain name
    try:
        spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_a_results_file_becomes_a_chart(tmp_path):
    pytest.importorskip("matplotlib")
    results = _module("_results").Results("demo.py", "torch 0.0")
    results.add("fast case", 1e-6, 4e-6, target=1.0)  # ratio 0.25: meets its target
    results.add("slow case", 3e-3, 1e-3, target=2.0)  # ratio 3: misses it
    results.add("no peer", 1e-3, None)  # not drawn: nothing to compare with
    results.write(str(tmp_path / "demo.json"))
    doc = json.loads((tmp_path / "demo.json").read_text())
    assert [r["case"] for r in doc["rows"]] == ["fast case", "slow case", "no peer"]

    assert _module("plots").main(["--results", str(tmp_path), "--out", str(tmp_path / "img")]) == 0
    png = tmp_path / "img" / "benchmark-demo.png"
    import matplotlib.image

    pixels = matplotlib.image.imread(png)
    assert pixels.shape[0] > 100 and pixels.shape[1] > 400
    # the bars' colours are there: green for the target met, orange for the one missed
    rgb = {tuple(round(float(c), 2) for c in p[:3]) for p in pixels.reshape(-1, pixels.shape[2])}
    assert (0.18, 0.49, 0.2) in rgb and (0.9, 0.32, 0.0) in rgb


def test_the_benchmarks_page_shows_a_chart_per_result():
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    recorded = sorted(p.stem for p in (BENCHMARKS / "results").glob("*.json"))
    assert recorded, "benchmarks/results/ holds no results: run benchmarks/plots.py --run"
    for stem in recorded:
        assert (ROOT / "docs" / "img" / f"benchmark-{stem}.png").exists(), (
            f"docs/img/benchmark-{stem}.png is missing: run benchmarks/plots.py"
        )
        assert f"img/benchmark-{stem}.png" in page, f"docs/benchmarks.md does not show {stem}"
