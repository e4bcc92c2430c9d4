"""Third-party backends: the example distribution examples/toy_backend (device ``toy``), its
device module and native kernels, the conformance suite run against it, two third-party
backends side by side, and plugins that fail inside their hooks.

What tests/test_plugins.py covers already (a plugin failing at import, CORETORCH_BACKENDS
limiting and naming a missing plugin, kernels registered before a failure rolled back) is not
repeated here. Subprocess tests install distributions with ``pip --target`` into temporary
folders, never into .venv.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import coretorch as ct
from coretorch.ops import primitives
from coretorch.ops.cpu_fallback import CPUFallbackWarning, fallback_counts
from coretorch.plugins import backends
from coretorch.testing.pytest_plugin import op_status

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOY_SRC = ROOT / "examples" / "toy_backend"

pytestmark = pytest.mark.filterwarnings("ignore::coretorch.ops.cpu_fallback.CPUFallbackWarning")


@pytest.fixture(scope="module")
def toy():
    info = backends().get("toy")
    if info is None:
        pytest.fail(
            "the example backend coretorch-toy is not installed: run `make install` "
            "(or pip install -e examples/toy_backend)"
        )
    assert info.status == "loaded", info.traceback or info.reason
    return info


def run_python(
    code: str,
    *paths: pathlib.Path,
    cwd: "pathlib.Path | None" = None,
    args: "list[str] | None" = None,
    **env_overrides,
) -> subprocess.CompletedProcess:
    """Run `code` (or ``python ARGS``) in a fresh interpreter with `paths` first on sys.path."""
    env = {k: v for k, v in os.environ.items() if k != "CORETORCH_BACKENDS"}
    env.update(COLUMNS="250", NO_COLOR="1", **env_overrides)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(p) for p in paths] + [p for p in [env.get("PYTHONPATH", "")] if p]
    )
    cmd = [sys.executable] + (args if args is not None else ["-c", code])
    return subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=300, cwd=cwd, stdin=subprocess.DEVNULL
    )


def pip_install_target(src: pathlib.Path, site: pathlib.Path) -> None:
    """Install the distribution at `src` into folder `site` (a copy is built: no build files
    are left in the source tree)."""
    build = site.parent / f"build-{src.name}"
    shutil.copytree(src, build, ignore=shutil.ignore_patterns("*.egg-info", "__pycache__"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(build),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stdout + out.stderr


# ---- the toy example backend -------------------------------------------------------------------


def test_toy_is_discovered_through_its_entry_point(toy):
    assert toy.distribution == "coretorch-toy" and toy.version == "0.1.0"
    assert toy.entry_point == "coretorch_toy.plugin"
    assert toy.device_types == ["toy"] and toy.dispatch_keys == ["Toy"]
    assert toy.ops_implemented() == 6  # fill_, add, add_, mul, mul_, sum
    assert toy.primitives_native() == 4 and toy.has_fallback()  # the rest: the CPU fallback


def test_device_module(toy):
    import coretorch_toy.device_module as mod

    assert ct.toy is mod
    assert ct.toy.is_available() is True and ct.toy.device_count() == 1
    assert ct.toy.current_device() == 0 and ct.toy.synchronize() is None
    before = ct.toy.memory_allocated()
    t = ct.empty(1000, dtype=ct.float64, device="toy")
    assert ct.toy.memory_allocated() == before + 8000
    assert ct.toy.max_memory_allocated() >= before + 8000
    del t
    assert ct.toy.memory_allocated() == before


def test_to_toy_and_back(toy):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    c = ct.tensor(a)
    t = c.permute(2, 0, 1).to("toy")
    assert t.device == ct.device("toy") and t.is_contiguous() and t.dtype == ct.float32
    np.testing.assert_array_equal(t.to("cpu").numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.to("cpu", ct.float64).numpy(), a.transpose(2, 0, 1))
    assert t.to("toy") is t
    assert ct.tensor([1, 2], device="toy").tolist() == [1, 2]
    assert ct.tensor(2.5, device=ct.device("toy", 0)).item() == 2.5


@pytest.mark.parametrize(
    "name,status",
    [
        ("add", "native"),
        ("mul", "native"),
        ("sum", "native"),
        ("fill_", "native"),
        ("exp", "fallback"),
        ("_copy_", "fallback"),
        ("mean", "composite"),
    ],
)
def test_op_status_on_toy(toy, name, status):
    assert op_status(name, "toy") == status


def _toy(values, dtype=None):
    return ct.tensor(np.asarray(values), dtype=dtype, device="toy")


def _host(t) -> np.ndarray:
    assert t.device == ct.device("toy")
    return t.to("cpu").numpy()


A = np.array([[1.5, -2.0, 3.0], [0.25, 4.0, -1.0]], dtype=np.float32)
B = np.array([2.0, -0.5, 3.5], dtype=np.float32)


def test_native_kernels_values(toy):
    before = dict(fallback_counts)
    a, b = _toy(A), _toy(B)
    np.testing.assert_allclose(_host(a + b), A + B)
    np.testing.assert_allclose(_host(ct.add(a, b, alpha=2)), A + 2 * B)
    np.testing.assert_allclose(_host(a * b), A * B)
    np.testing.assert_allclose(_host(a * 3), A * 3)
    np.testing.assert_allclose(_host(a * ct.tensor(0.5)), A * 0.5)  # a 0-dim cpu tensor
    np.testing.assert_allclose(_host(a.sum()), A.sum(), rtol=1e-6)
    np.testing.assert_allclose(_host(a.sum(1, keepdim=True)), A.sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(_host(a.sum((0, 1))), A.sum(), rtol=1e-6)
    assert dict(fallback_counts) == before, "the native kernels never fall back"


def test_native_kernels_promote_and_cast(toy):
    i = _toy([1, 2, 3], dtype=ct.int32)
    r = i + 0.5  # int tensor + float scalar: default float
    assert r.dtype == ct.float32
    np.testing.assert_array_equal(_host(r), [1.5, 2.5, 3.5])
    s = _toy([True, True, False]).sum()
    assert s.dtype == ct.int64 and s.item() == 2
    h = _toy(np.full(4096, 0.1, np.float16)).sum()  # half accumulates in float32
    assert h.dtype == ct.float16 and abs(h.item() - 409.6) < 0.5
    o = ct.empty(3, dtype=ct.float64, device="toy")
    ct.mul(i, 2, out=o)
    np.testing.assert_array_equal(_host(o), [2.0, 4.0, 6.0])
    i.add_(i)
    np.testing.assert_array_equal(_host(i), [2, 4, 6])
    f = ct.empty(2, 2, dtype=ct.int16, device="toy").fill_(ct.tensor(7))
    np.testing.assert_array_equal(_host(f), np.full((2, 2), 7, np.int16))


def test_native_and_fallback_ops_with_autograd(toy):
    a = _toy(A).requires_grad_()
    b = _toy(B).requires_grad_()
    ((a * b).exp() + a).sum().backward()
    e = np.exp(A * B)
    np.testing.assert_allclose(_host(a.grad), e * B + 1, rtol=1e-5)
    np.testing.assert_allclose(_host(b.grad), (e * A).sum(0), rtol=1e-5)


def test_fallback_warns_on_toy(toy):
    from coretorch.ops.cpu_fallback import reset_fallback_warnings

    reset_fallback_warnings()
    with pytest.warns(CPUFallbackWarning, match="aten::sqrt has no kernel for this backend"):
        _toy(A).abs().sqrt()


# ---- conformance for anyone -------------------------------------------------------------------


def test_conformance_suite_runs_against_toy(toy, tmp_path):
    """What a third party runs, from a folder of its own: the per-op table ends the run."""
    out = run_python(
        "",
        cwd=tmp_path,
        args=[
            "-m",
            "pytest",
            "--pyargs",
            "coretorch.testing.conformance",
            "--backend",
            "toy",
            "-p",
            "no:cacheprovider",
            "-q",
            "-k",
            "add or exp or cumsum",
        ],
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    tail = out.stdout[out.stdout.index("coretorch conformance per op") :]
    rows = {
        line.split()[0]: line.split()[1] for line in tail.splitlines()[1:] if len(line.split()) == 2
    }
    assert rows["add"] == "native" and rows["exp"] == "fallback" and rows["cumsum"] == "fallback"
    assert rows["addcdiv"] == "composite" and rows["addmm"] == "composite"
    assert "toy:" in tail and "native" in tail and " passed" in tail


# ---- two third-party backends side by side ----------------------------------------------------

SECOND_PYPROJECT = """
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "coretorch-test-duo"
version = "0.2.0"
dependencies = ["coretorch"]

[project.entry-points."coretorch.backends"]
duo = "coretorch_test_duo"

[tool.setuptools]
packages = ["coretorch_test_duo"]
"""

SECOND_PLUGIN = '''
"""A second tiny backend: device ``duo``, a native neg, the CPU fallback for the rest."""
import sys

import numpy as np

from coretorch.plugins import hookimpl
from coretorch.tensor.storage import Allocator

NEGS = []


class DuoAllocator(Allocator):
    def raw_allocate(self, nbytes, device):
        return np.zeros(nbytes, np.uint8), self.fake_address(nbytes)


def array(t):
    d = t._dtype.numpy
    if 0 in t._shape:
        return np.empty(t._shape, d)
    return np.ndarray(t._shape, d, t._storage.data, t._offset * d.itemsize,
                      tuple(s * d.itemsize for s in t._stride))


def write(t, values):
    array(t)[...] = values


def fill_(out, self, value):
    array(out)[...] = value


def neg(out, self):
    NEGS.append(self.shape)
    array(out)[...] = -array(self)


def is_available():
    return True


@hookimpl
def coretorch_register_backend(registry):
    registry.device_type("duo", "Duo", DuoAllocator(), read_numpy=lambda t: array(t).copy(),
                         write_numpy=write, module=sys.modules[__name__],
                         is_available=is_available)
    lib = registry.library("Duo")
    lib.impl("fill_", fill_)
    lib.impl("neg", neg)
    registry.use_cpu_fallback("Duo")
'''

SIDE_BY_SIDE = textwrap.dedent("""
    import json, warnings
    import numpy as np
    import coretorch as ct
    from coretorch.plugins import backends
    from coretorch.ops.cpu_fallback import fallback_counts
    warnings.simplefilter("ignore")
    out = {n: [i.status, i.distribution, i.version, i.dispatch_keys] for n, i in backends().items()
           if n in ("toy", "duo")}
    a = ct.tensor([1.0, -2.0, 3.0], device="toy")
    d = ct.tensor([1.0, -2.0, 3.0], device="duo")
    out["toy_add"] = (a + a).tolist()
    out["duo_neg"] = (-d).tolist()
    out["duo_exp"] = d.exp().to("cpu").tolist()
    out["toy_to_duo"] = [str(a.to("duo").device), a.to("duo").tolist()]
    import coretorch_test_duo
    out["negs"] = len(coretorch_test_duo.NEGS)
    out["modules"] = [ct.toy.is_available(), ct.duo.is_available()]
    out["fallbacks"] = {k: v for k, v in fallback_counts.items()}
    try:
        a + d
    except RuntimeError as e:
        out["mix"] = str(e)
    print(json.dumps(out))
""")


@pytest.fixture(scope="module")
def two_backends_site(tmp_path_factory) -> pathlib.Path:
    """coretorch-toy (from examples/) and a second backend, pip-installed into one folder."""
    root = tmp_path_factory.mktemp("two")
    src = root / "duo"
    (src / "coretorch_test_duo").mkdir(parents=True)
    (src / "pyproject.toml").write_text(SECOND_PYPROJECT)
    (src / "coretorch_test_duo" / "__init__.py").write_text(SECOND_PLUGIN)
    site = root / "site"
    pip_install_target(TOY_SRC, site)
    pip_install_target(src, site)
    assert list(site.glob("coretorch_toy-0.1.0.dist-info"))
    return site


def test_two_third_party_backends_side_by_side(two_backends_site):
    out = run_python(SIDE_BY_SIDE, two_backends_site)
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["toy"] == ["loaded", "coretorch-toy", "0.1.0", ["Toy"]]
    assert r["duo"] == ["loaded", "coretorch-test-duo", "0.2.0", ["Duo"]]
    assert r["toy_add"] == [2.0, -4.0, 6.0]
    assert r["duo_neg"] == [-1.0, 2.0, -3.0] and r["negs"] == 1
    np.testing.assert_allclose(r["duo_exp"], np.exp([1.0, -2.0, 3.0]), rtol=1e-6)
    assert r["toy_to_duo"] == ["duo", [1.0, -2.0, 3.0]]
    assert r["modules"] == [True, True]
    assert r["fallbacks"].get("aten::exp") == 1 and "aten::add" not in r["fallbacks"]
    assert r["mix"] == "add(): expected all tensors to be on the same device, got toy and duo"


def test_two_backends_listed_by_python_m_coretorch(two_backends_site):
    out = run_python("", two_backends_site, args=["-m", "coretorch"])
    assert out.returncode == 0, out.stderr
    toy = next(line for line in out.stdout.splitlines() if " toy " in line)
    duo = next(line for line in out.stdout.splitlines() if " duo " in line)
    assert "loaded" in toy and "Toy" in toy and "0.1.0" in toy
    assert f"4/{len(primitives())} (+ fallback)" in toy
    assert "loaded" in duo and "Duo" in duo and "0.2.0" in duo and " 2 " in duo


# ---- plugins failing inside a hook ------------------------------------------------------------

FAILING_HOOK = """
import sys
import numpy as np
from coretorch.plugins import hookimpl
from coretorch.tensor.storage import Allocator


class A(Allocator):
    def raw_allocate(self, nbytes, device):
        return np.zeros(nbytes, np.uint8), self.fake_address(nbytes)


@hookimpl
def coretorch_register_backend(registry):
    registry.device_type("hookfail", "HookFail", A(), module=sys.modules[__name__])
    registry.library("HookFail").impl("neg", lambda out, self: None)
    registry.use_cpu_fallback("HookFail")
    if MODE == "register":
        raise KeyError("hookfail: failed after registering a fallback")


@hookimpl
def coretorch_backend_available():
    if MODE == "available":
        raise OSError("hookfail: the driver probe crashed")
    return (False, "no hookfail hardware") if MODE == "unavailable" else (True, "")
"""

FAIL_STATUS = textwrap.dedent("""
    import json
    import coretorch as ct
    from coretorch.device import device_types
    from coretorch.dispatch import DispatchKey
    from coretorch.dispatch.operator import _fallbacks
    info = ct.plugins.backends()["hookfail"]
    key = DispatchKey._by_name.get("HookFail")

    def where_used():
        try:
            return str(ct.empty(2, device="hookfail").device)
        except RuntimeError as e:
            return str(e)

    print(json.dumps({"status": info.status, "reason": info.reason,
                      "traceback_names_hook": "coretorch_register_backend" in info.traceback
                                               or "coretorch_backend_available" in info.traceback,
                      "device_type": "hookfail" in device_types(),
                      "module": hasattr(ct, "hookfail"),
                      "fallback": key in _fallbacks,
                      "neg_kernel": key is not None and ct.ops.aten.neg.has_kernel(key),
                      "cpu_works": (ct.tensor([1.0]) + 1).tolist(),
                      "where_used": where_used()}))
""")


def _failing_site(tmp_path: pathlib.Path, mode: str) -> pathlib.Path:
    site = tmp_path / f"site-{mode}"
    (site / "ct_hookfail").mkdir(parents=True)
    (site / "ct_hookfail" / "__init__.py").write_text(f"MODE = {mode!r}\n" + FAILING_HOOK)
    dist = site / "ct_hookfail-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ct-hookfail\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[coretorch.backends]\nhookfail = ct_hookfail\n")
    return site


@pytest.mark.parametrize(
    "mode,reason",
    [
        ("register", "KeyError: 'hookfail: failed after registering a fallback'"),
        ("available", "OSError: hookfail: the driver probe crashed"),
    ],
)
def test_plugin_failing_in_a_hook_is_rolled_back(tmp_path, mode, reason):
    out = run_python(FAIL_STATUS, _failing_site(tmp_path, mode))
    assert out.returncode == 0, out.stderr
    st = json.loads(out.stdout.strip().splitlines()[-1])
    assert st == {
        "status": "failed",
        "reason": reason,
        "traceback_names_hook": True,
        "device_type": False,
        "module": False,
        "fallback": False,
        "neg_kernel": False,
        "cpu_works": [2.0],
        "where_used": f"device type 'hookfail' cannot be used: backend 'hookfail' "
        f"failed to load: {reason} (`python -m coretorch` shows the "
        f"traceback)",
    }


def test_unavailable_plugin_keeps_its_device_type(tmp_path):
    out = run_python(FAIL_STATUS, _failing_site(tmp_path, "unavailable"))
    assert out.returncode == 0, out.stderr
    st = json.loads(out.stdout.strip().splitlines()[-1])
    assert (st["status"], st["reason"]) == ("unavailable", "no hookfail hardware")
    assert st["device_type"] and st["module"] and st["fallback"] and st["neg_kernel"]
    assert st["where_used"] == "hookfail"


def test_hook_failure_listed_by_python_m_coretorch_and_raised_when_named(tmp_path):
    site = _failing_site(tmp_path, "register")
    out = run_python("", site, args=["-m", "coretorch"])
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if " hookfail " in line)
    assert "failed" in line and "failed after registering a fallback" in line
    code = textwrap.dedent("""
        import json
        try:
            import coretorch
        except Exception as e:
            print(json.dumps([type(e).__name__, str(e), type(e.__cause__).__name__]))
    """)
    out = run_python(code, site, CORETORCH_BACKENDS="hookfail")
    assert out.returncode == 0, out.stderr
    name, msg, cause = json.loads(out.stdout.strip().splitlines()[-1])
    assert name == "BackendLoadError" and "'hookfail'" in msg and "KeyError" in msg
    assert cause == "KeyError"


# ---- the guide's walk-through works as written --------------------------------------------------

GUIDE = ROOT / "docs" / "writing-a-backend.md"


def guide_files() -> dict[str, str]:
    """The files of section 1 of the guide: each code block right after a **file name**."""
    section = GUIDE.read_text().split("## 2.")[0]
    return dict(re.findall(r"\*\*([\w.]+)\*\*:(?:(?!```).)*?```\w*\n(.*?)```", section, re.S))


def _install_guide_backend(tmp_path, kernels_edit=None):
    """The guide's section-1 backend, built from the guide's own code blocks and installed into
    a folder of its own (`kernels_edit` may change kernels.py first)."""
    files = guide_files()
    assert set(files) == {
        "pyproject.toml",
        "memory.py",
        "kernels.py",
        "plugin.py",
        "device_module.py",
    }
    if kernels_edit is not None:
        files["kernels.py"] = kernels_edit(files["kernels.py"])
    src = tmp_path / "my_backend"
    (src / "coretorch_mydev").mkdir(parents=True)
    (src / "pyproject.toml").write_text(files.pop("pyproject.toml"))
    (src / "coretorch_mydev" / "__init__.py").write_text('"""coretorch-mydev."""\n')
    for name, text in files.items():
        (src / "coretorch_mydev" / name).write_text(text)
    site = tmp_path / "site"
    pip_install_target(src, site)
    return site


def _conformance(site, cwd, select: str, extra: tuple[str, ...] = ()):
    out = run_python(
        "",
        site,
        cwd=cwd,
        args=[
            "-m",
            "pytest",
            "--pyargs",
            "coretorch.testing.conformance",
            "--backend",
            "mydev",
            "-p",
            "no:cacheprovider",
            "-q",
            "-k",
            select,
            *extra,
        ],
    )
    return out, out.stdout[out.stdout.index("coretorch conformance per op") :]


def test_guide_backend_from_an_empty_folder_passes_conformance(tmp_path):
    site = _install_guide_backend(tmp_path)
    out = run_python(
        "import coretorch as ct; x = ct.tensor([1., 2.]).to('mydev'); "
        "print((x + x).exp().tolist(), ct.mydev.is_available())",
        site,
    )
    assert out.returncode == 0, out.stderr
    values, available = out.stdout.strip().splitlines()[-1].rsplit(" ", 1)
    np.testing.assert_allclose(json.loads(values), np.exp([2.0, 4.0]), rtol=1e-6)
    assert available == "True"
    out, tail = _conformance(site, tmp_path, "fill_ or exp or sum or addcmul")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    # every primitive comes from the backend kit; addcmul is a composite of them
    for op, status in (
        ("fill_", "native"),
        ("exp", "native"),
        ("sum", "native"),
        ("addcmul", "composite"),
    ):
        assert re.search(rf"^{op} +{status}", tail, re.M), (op, tail[:2000])
    ops = run_python("", site, args=["-m", "coretorch", "--ops", "mydev"])
    assert ops.returncode == 0, ops.stderr
    assert re.search(r"add_ +.*native", ops.stdout) and re.search(r"add\.out +.*native", ops.stdout)


@pytest.mark.parametrize("workers", [0, 2], ids=["one-process", "xdist"])
def test_conformance_names_a_broken_primitive_as_the_root_cause(tmp_path, workers):
    """A wrong `add` fails its own tests and those of composites built on it: the report traces
    them to `add` instead of listing unrelated failures (with pytest-xdist too, whose workers
    hand their bookkeeping to the process that prints the report)."""
    if workers:
        pytest.importorskip("xdist")

    def broken_add(text: str) -> str:
        return text.replace(
            "        pointwise.add(out, self, other, alpha)",
            "        pointwise.add(out, self, other, alpha)\n"
            "    device_array(out)[...] += 1   # a bug the suite must find",
        )

    site = _install_guide_backend(tmp_path, broken_add)
    out, tail = _conformance(
        site,
        tmp_path,
        "test_forward and (add or addcmul or lerp)",
        ("-n", str(workers)) if workers else (),
    )
    assert out.returncode != 0
    assert re.search(r"mydev: \d+ failing op\(s\) trace to `add`.*addcmul", tail), tail[-2000:]
