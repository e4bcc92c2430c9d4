"""Headless Chromium for the tests that check a page renders: Debian's `chromium`, skipped when
none is installed (`.ci/run` installs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zlib

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
# collects page errors and console.error calls, then writes them and the number of plotly charts
# into the DOM once the page has loaded
PROBE = """<script>window.__errs=[];window.addEventListener('error',function(e){
__errs.push(String(e.message))});var __ce=console.error;console.error=function(){
__errs.push(Array.prototype.join.call(arguments,' '));__ce.apply(console,arguments)};
window.addEventListener('load',function(){setTimeout(function(){var d=document.createElement(
'pre');d.id='__probe';d.textContent=JSON.stringify({errors:__errs,
plots:document.querySelectorAll('.js-plotly-plot').length});document.body.appendChild(d)},
500)});</script>"""


def browser() -> str:
    """The path of an installed Chromium, or skip the test."""
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (apt-get install -y chromium): this check needs a browser")


def png_pixels_vary(path) -> int:
    """How many distinct byte values the PNG's image data holds (a blank page: a handful)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(data):
        n = int.from_bytes(data[i : i + 4], "big")
        if data[i + 4 : i + 8] == b"IDAT":
            idat += data[i + 8 : i + 8 + n]
        i += 12 + n
    return len(set(zlib.decompress(idat)))


def shoot(page, png, dump: bool = False) -> str:
    """Load `page` (a path) in headless Chromium, screenshot it to `png`; the DOM if `dump`."""
    cmd = [
        browser(),
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1280,1000",
        "--virtual-time-budget=10000",
        f"--screenshot={png}",
    ]
    if dump:
        cmd.append("--dump-dom")
    r = subprocess.run(cmd + [page.as_uri()], capture_output=True, text=True, timeout=120)
    assert png.exists(), r.stderr[-2000:]
    return r.stdout


def probe(page, tmp_path, name: str = "page") -> dict:
    """Load a copy of `page` with the probe injected; return {errors, plots} and leave
    `tmp_path/NAME.png` (the screenshot)."""
    probed = page.with_name(f"__probed_{page.name}")
    probed.write_text(page.read_text().replace("<head>", "<head>" + PROBE, 1))
    try:
        dom = shoot(probed, tmp_path / f"{name}.png", dump=True)
    finally:
        probed.unlink()
    m = re.search(r'<pre id="__probe">([^<]*)</pre>', dom)
    assert m, f"{page} did not finish loading"
    return json.loads(m.group(1).replace("&quot;", '"'))


def assert_not_blank(shot, tmp_path) -> None:
    """The screenshot holds a drawn page: far larger and more varied than a blank page's."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>")
    empty = tmp_path / "blank.png"
    shoot(blank, empty)
    assert shot.stat().st_size > 5 * empty.stat().st_size
    assert png_pixels_vary(shot) > 100 > png_pixels_vary(empty)
