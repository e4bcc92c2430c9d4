"""The HTML report: one self-contained page, checked in a real browser (headless Chromium) for
console errors, drawn charts and a screenshot that is not blank."""

from __future__ import annotations

import re

import pytest
from browser import assert_not_blank, probe

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch.utils.data import DataLoader, TensorDataset
from coretorch_profiler import profile


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    ct.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = ct.optim.AdamW(model.parameters(), lr=1e-3)
    loader = DataLoader(TensorDataset(ct.randn(64, 16), ct.randint(0, 4, (64,))), batch_size=16)

    def epoch():
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

    epoch()
    with profile(
        record_shapes=True, profile_memory=True, with_stack=True, with_flops=True, with_modules=True
    ) as prof:
        epoch()
    path = tmp_path_factory.mktemp("report") / "report.html"
    prof.export_html(str(path), title="digits-like run")
    return path


def test_report_is_one_self_contained_page(report):
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<title>digits-like run</title>" in page
    # nothing fetched when viewed: no external script, style or image
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?(https?:)?//""", page)
    assert "Plotly.newPlot" in page and len(page) > 1_000_000  # plotly.js is inlined
    for section in ("Steps", "Regions and ops", "Memory (cpu)", "Top ops", "Modules"):
        assert f"<h2>{section}</h2>" in page
    assert "GFLOP/s" in page and "2 FLOPs per multiply-add" in page
    assert "<b>5</b><span>steps</span>" in page  # 4 batches, then the last empty fetch


def test_report_renders_in_chromium_without_errors(report, tmp_path):
    found = probe(report, tmp_path, "report")
    assert found["errors"] == []
    assert found["plots"] == 3  # steps, icicle, memory
    assert_not_blank(tmp_path / "report.png", tmp_path)
