"""`python -m coretorch --info`: the facts a bug report needs, each read from its source."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from coretorch.plugins import backends
from coretorch.utils.collect_env import get_env_info


def test_env_info_reports_versions_backends_and_threads():
    info = get_env_info()
    assert info["python"] == sys.version.split()[0]
    assert info["packages"]["numpy"] == np.__version__
    by_name = {b["name"]: b for b in info["backends"]}
    assert set(by_name) == set(backends())
    assert by_name["cpu"]["status"] == "loaded" and by_name["cpu"]["devices"] == "cpu"
    assert info["threads"]["cpu cores (os.cpu_count)"] == str(os.cpu_count())
    assert info["blas"] != ""


def test_info_flag_prints_the_report():
    out = subprocess.run(
        [sys.executable, "-m", "coretorch", "--info"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert f"numpy: {np.__version__}" in out
    assert f"cpu {backends()['cpu'].version}: loaded; devices cpu" in out
    for line in ("python:", "blas (numpy's):", "backends:", "threads:"):
        assert line in out
