"""The generated entry points' code cache: an import compiles them once, the next import loads
them; a damaged file is recompiled; nothing is written where bytecode caching is off."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# imports coretorch counting the generated entry points it compiles, then checks one op's values
_PROBE = """
import builtins, json
compiled = []
_compile = builtins.compile
def counting(src, filename, *a, **k):
    if str(filename).startswith("<coretorch entry"):
        compiled.append(filename)
    return _compile(src, filename, *a, **k)
builtins.compile = counting
import coretorch as ct
from coretorch.dispatch import code_cache
ok = ct.add(ct.tensor([1.0, 2.0]), ct.tensor([3.0, 4.0]), alpha=2).tolist() == [7.0, 10.0]
print(json.dumps({"compiled": len(compiled), "ok": ok, "path": code_cache.path()}))
"""


def _import(cache_home, *, no_bytecode: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["XDG_CACHE_HOME"] = str(cache_home)
    if no_bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_import_compiles_no_entry_point(tmp_path):
    first = _import(tmp_path)
    assert first["ok"] and first["compiled"] > 500  # every op's entry point
    assert os.path.dirname(first["path"]) == str(tmp_path / "coretorch")
    assert os.path.isfile(first["path"])
    second = _import(tmp_path)
    assert second["ok"] and second["compiled"] == 0


def test_damaged_file_is_recompiled_and_rewritten(tmp_path):
    path = _import(tmp_path)["path"]
    with open(path, "r+b") as f:  # the header intact, the table's end zeroed
        f.seek(-64, os.SEEK_END)
        f.write(b"\0" * 64)
    again = _import(tmp_path)
    assert again["ok"] and again["compiled"] > 500
    assert _import(tmp_path)["compiled"] == 0


def test_nothing_written_when_bytecode_caching_is_off(tmp_path):
    probe = _import(tmp_path, no_bytecode=True)
    assert probe["ok"] and probe["compiled"] > 500
    assert not os.path.exists(probe["path"])
