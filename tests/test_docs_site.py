"""The documentation site builds strictly (`mkdocs build --strict`, warnings are errors), with
every tutorial's code executed during the build, and its pages render in a real browser."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest
from browser import assert_not_blank, probe

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the tutorials call what the other tests call: the build runs without the coverage tracer
pytestmark = pytest.mark.untraced

TUTORIALS = ("train-a-cnn", "port-a-pytorch-program", "profile-a-run", "size-on-meta")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs tools are installed by `make install`")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    r = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-4000:]
    return out


def _text(page: pathlib.Path) -> str:
    """The page's visible text, roughly: tags dropped, entities of quotes and brackets undone."""
    text = re.sub(r"<[^>]+>", "", page.read_text())
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')


def test_tutorials_ran_during_the_build(site):
    for name in TUTORIALS:
        page = site / "tutorials" / name / "index.html"
        assert page.exists(), name
        assert "Traceback" not in _text(page), name
    accuracy = re.findall(
        r"epoch 4: last batch loss [\d.]+, test accuracy ([\d.]+)",
        _text(site / "tutorials" / "train-a-cnn" / "index.html"),
    )
    assert accuracy and float(accuracy[0]) > 0.9
    ported = _text(site / "tutorials" / "port-a-pytorch-program" / "index.html")
    assert "ran on coretorch" in ported and "ModuleNotFoundError" in ported
    assert "Self CPU" in _text(site / "tutorials" / "profile-a-run" / "index.html")


def test_api_reference_documents_every_op(site):
    from coretorch.ops import REGISTRY

    page = _text(site / "reference" / "ops" / "index.html")
    assert "softplus(Tensor self, Scalar beta=1" in page
    for name in REGISTRY:
        if not name.startswith("_"):
            assert f"{name}(" in page, name
    assert re.search(r"backward\(\s*gradient", _text(site / "reference" / "tensor" / "index.html"))
    assert "Linear" in _text(site / "reference" / "nn" / "index.html")


@pytest.mark.parametrize("page", ["index.html", "reference/nn/index.html"])
def test_pages_render_in_chromium_without_errors(site, page, tmp_path):
    found = probe(site / page, tmp_path)
    assert found["errors"] == []
    assert_not_blank(tmp_path / "page.png", tmp_path)
