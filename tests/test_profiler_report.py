"""The HTML report: one self-contained page, checked in a real browser (headless Chromium) for
console errors, drawn charts and a screenshot that is not blank."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import zlib

import pytest

import coretorch as ct
import coretorch.nn as nn
import coretorch.nn.functional as F
from coretorch.utils.data import DataLoader, TensorDataset
from coretorch_profiler import profile

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# collects page errors and console.error calls, then writes them and the number of charts
# plotly drew into the DOM once the page has loaded
PROBE = """<script>window.__errs=[];window.addEventListener('error',function(e){
__errs.push(String(e.message))});var __ce=console.error;console.error=function(){
__errs.push(Array.prototype.join.call(arguments,' '));__ce.apply(console,arguments)};
window.addEventListener('load',function(){setTimeout(function(){var d=document.createElement(
'pre');d.id='__probe';d.textContent=JSON.stringify({errors:__errs,
plots:document.querySelectorAll('.js-plotly-plot').length});document.body.appendChild(d)},
500)});</script>"""


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
    with profile(record_shapes=True, profile_memory=True, with_stack=True, with_flops=True,
                 with_modules=True) as prof:
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


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (apt-get install -y chromium): the report's browser "
                "check needs one")


def _png_pixels_vary(path) -> int:
    """How many distinct byte values the PNG's image data holds (a blank page: a handful)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(data):
        n = int.from_bytes(data[i:i + 4], "big")
        if data[i + 4:i + 8] == b"IDAT":
            idat += data[i + 8:i + 8 + n]
        i += 12 + n
    return len(set(zlib.decompress(idat)))


def _shoot(browser: str, page, png, dump: bool = False) -> str:
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--window-size=1280,1000", "--virtual-time-budget=10000", f"--screenshot={png}"]
    if dump:
        cmd.append("--dump-dom")
    r = subprocess.run(cmd + [page.as_uri()], capture_output=True, text=True, timeout=120)
    assert png.exists(), r.stderr[-2000:]
    return r.stdout


def test_report_renders_in_chromium_without_errors(report, tmp_path):
    browser = _browser()
    probed = tmp_path / "probed.html"
    probed.write_text(report.read_text().replace("<head>", "<head>" + PROBE, 1))
    dom = _shoot(browser, probed, tmp_path / "report.png", dump=True)
    m = re.search(r'<pre id="__probe">([^<]*)</pre>', dom)
    assert m, "the page did not finish loading"
    probe = json.loads(m.group(1).replace("&quot;", '"'))
    assert probe["errors"] == []
    assert probe["plots"] == 3  # steps, icicle, memory
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    _shoot(browser, blank, tmp_path / "blank.png")
    shot, empty = tmp_path / "report.png", tmp_path / "blank.png"
    assert shot.stat().st_size > 5 * empty.stat().st_size
    assert _png_pixels_vary(shot) > 100 > _png_pixels_vary(empty)
