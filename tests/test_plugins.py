"""Backend plugins: the installed test plugin (tests/plugins/demo_backend), a broken plugin that
raises on import (installed into a temporary folder, never into .venv), CORETORCH_BACKENDS and
`python -m coretorch`."""

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
from coretorch.dispatch import DispatchKey, DispatchKeySet
from coretorch.library import Library
from coretorch.plugins import backends

PLUGINS = pathlib.Path(__file__).parent / "plugins"
BROKEN_ERROR = "coretorch_test_broken: this plugin fails on import on purpose"


@pytest.fixture(scope="module")
def demo():
    if "demo" not in backends():
        pytest.fail(
            "the test plugin coretorch-test-demo is not installed: run `make install` "
            "(or pip install -e tests/plugins/demo_backend)"
        )
    import coretorch_test_demo.plugin as plugin

    return plugin


@pytest.fixture
def calls(demo):
    demo.CALLS.clear()
    return demo.CALLS


def run_python(code: str, pythonpath: "pathlib.Path | None" = None, **env_overrides):
    """Run `code` in a fresh interpreter (so `import coretorch` discovers plugins again)."""
    env = {k: v for k, v in os.environ.items() if k != "CORETORCH_BACKENDS"}
    env.update(COLUMNS="250", NO_COLOR="1", **env_overrides)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(pythonpath), env.get("PYTHONPATH", "")])
        )
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


STATUS = (
    "import json, coretorch\n"
    "print(json.dumps({n: [i.status, i.reason, i.device_types] "
    "for n, i in coretorch.plugins.backends().items()}))"
)


def statuses(out) -> dict:
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---- the installed demo plugin --------------------------------------------------------------


def test_demo_plugin_is_discovered_and_loaded(demo):
    info = backends()["demo"]
    assert info.status == "loaded" and info.reason == ""
    assert info.distribution == "coretorch-test-demo" and info.version == "0.1.0"
    assert info.entry_point == "coretorch_test_demo.plugin"
    assert info.device_types == [] and info.dispatch_keys == ["CtDemo"]
    assert DispatchKey.get("CtDemo").is_backend
    assert info.ops_implemented() == 1


def test_plugin_without_device_type_is_not_a_test_device(demo, request):
    from coretorch.device import device_types
    from coretorch.testing.pytest_plugin import selected_device_types

    assert all(entry.backend != "demo" for entry in device_types().values())
    types = selected_device_types(request.config)
    assert types and all(device_types()[t].backend != "demo" for t in types)


def test_plugin_op_composite_or_direct_cpu_kernel(calls, device):
    x = ct.ones(2, 3, device=device)
    out = ct.ops.ctdemo.scaled_sum(x, 2.0)
    assert out.shape == () and out.device == ct.device(device)
    want = "CPU" if device == "cpu" else "CompositeImplicitAutograd"
    assert calls == [want], "a direct registration beats CompositeImplicitAutograd"


def test_plugin_op_values(calls, data_device):
    values = np.array([[1.5, -2.0], [4.25, 0.5]], dtype=np.float32)
    out = ct.ops.ctdemo.scaled_sum(ct.tensor(values, device=data_device), 3.0)
    assert out.item() == pytest.approx(float(values.astype(np.float64).sum() * 3.0))


def test_plugin_key_kernel_via_redispatch(calls):
    key = DispatchKeySet(DispatchKey.get("CtDemo"))
    out = ct.ops.ctdemo.scaled_sum.redispatch(key, ct.ones(4, device="meta"), 0.5)
    assert calls[0] == "CtDemo" and out.shape == ()


def test_plugin_boxed_fallback_at_its_key(calls, device):
    a, b = ct.zeros(2, 3, device=device), ct.zeros(3, device=device)
    out = ct.ops.aten.add.redispatch(
        DispatchKeySet(DispatchKey.get("CtDemo")), *ct.ops.aten.add.bind(a, b)
    )
    assert calls == ["fallback:aten::add"]
    assert out.shape == (2, 3) and out.device == ct.device(device)


def test_python_m_coretorch_lists_backends():
    out = run_python("import runpy; runpy.run_module('coretorch', run_name='__main__')")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    demo = next(line for line in lines if " demo " in line)
    assert "loaded" in demo and "CtDemo" in demo and "0.1.0" in demo
    meta = next(line for line in lines if " meta " in line)
    assert "loaded" in meta and "Meta" in meta
    assert "ops declared" in out.stdout


# ---- a broken plugin --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory) -> pathlib.Path:
    """coretorch-test-broken installed (pip --target) into a folder outside .venv."""
    root = tmp_path_factory.mktemp("broken")
    src = shutil.copytree(PLUGINS / "broken_backend", root / "src")
    site = root / "site"
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
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert list(site.glob("coretorch_test_broken-*.dist-info"))
    return site


def test_broken_plugin_never_breaks_import(broken_site):
    code = STATUS + "\nimport coretorch as ct; print(ct.zeros(2, device='meta').shape)"
    out = run_python(code, broken_site)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "coretorch.Size([2])"
    st = json.loads(out.stdout.strip().splitlines()[-2])
    assert st["broken"][0] == "failed"
    assert st["broken"][1] == f"RuntimeError: {BROKEN_ERROR}"
    assert st["meta"][0] == "loaded" and st["demo"][0] == "loaded"


def test_broken_plugin_shown_as_failed_by_python_m_coretorch(broken_site):
    out = run_python(
        "import runpy; runpy.run_module('coretorch', run_name='__main__')", broken_site
    )
    assert out.returncode == 0, out.stderr
    line = next(line for line in out.stdout.splitlines() if " broken " in line)
    assert "failed" in line and BROKEN_ERROR in line


def test_backend_named_in_env_that_fails_raises_with_cause(broken_site):
    code = textwrap.dedent("""
        import json
        try:
            import coretorch
        except Exception as e:
            print(json.dumps([type(e).__name__, str(e), type(e.__cause__).__name__,
                              str(e.__cause__)]))
        else:
            print("imported")
    """)
    out = run_python(code, broken_site, CORETORCH_BACKENDS="broken")
    assert out.returncode == 0, out.stderr
    name, msg, cause, cause_msg = json.loads(out.stdout.strip().splitlines()[-1])
    assert name == "BackendLoadError" and "'broken'" in msg and "CORETORCH_BACKENDS" in msg
    assert (cause, cause_msg) == ("RuntimeError", BROKEN_ERROR)
    out = run_python(code, broken_site, CORETORCH_BACKENDS="meta,broken")
    assert json.loads(out.stdout.strip().splitlines()[-1])[0] == "BackendLoadError"


def test_backends_env_limits_loading(broken_site):
    st = statuses(run_python(STATUS, broken_site, CORETORCH_BACKENDS="meta"))
    assert st["meta"][0] == "loaded"
    assert {n: s[0] for n, s in st.items() if n != "meta"} == {
        n: "skipped" for n in st if n != "meta"
    }
    assert st["broken"][1] == "not in CORETORCH_BACKENDS"
    code = textwrap.dedent("""
        import coretorch as ct
        from coretorch.device import device_types
        print(sorted(device_types()))
        try:
            ct.ones(2)
        except RuntimeError as e:
            print(e)
    """)
    out = run_python(code, broken_site, CORETORCH_BACKENDS="meta")
    assert out.stdout.strip().splitlines() == [
        "['meta']",
        "device type 'cpu' cannot be used: backend 'cpu' is installed but was not "
        "loaded: not in CORETORCH_BACKENDS",
    ], out.stderr


def test_backends_env_naming_a_missing_plugin_raises():
    out = run_python("import coretorch", CORETORCH_BACKENDS="meta,nosuchbackend,mta")
    assert out.returncode != 0
    assert "BackendLoadError" in out.stderr and "nosuchbackend" in out.stderr
    assert out.stderr.rstrip().endswith("Did you mean 'meta'?")


def test_failed_backend_is_named_where_its_device_is_used(broken_site):
    code = textwrap.dedent("""
        import coretorch as ct
        for where in (lambda: ct.ones(2, device="broken"), lambda: ct.device("broken:0")):
            try:
                where()
            except RuntimeError as e:
                print(e)
    """)
    out = run_python(code, broken_site)
    assert out.returncode == 0, out.stderr
    why = (
        f"device type 'broken' cannot be used: backend 'broken' failed to load: RuntimeError: "
        f"{BROKEN_ERROR} (`python -m coretorch` shows the traceback)"
    )
    assert out.stdout.strip().splitlines() == [why, why]


def test_pytest_backend_option_names_the_failed_backend(broken_site, tmp_path):
    test_file = tmp_path / "test_on_device.py"
    test_file.write_text("def test_runs(device):\n    pass\n")
    code = (
        f"import sys, pytest\nsys.exit(pytest.main(['-p', 'no:cacheprovider', '--backend', "
        f"'broken', '--backend', 'mta', '--backend', 'meta', {str(test_file)!r}]))"
    )
    out = run_python(code, broken_site)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
    assert (
        f"--backend broken: backend 'broken' failed to load: RuntimeError: {BROKEN_ERROR}"
        in out.stderr
    )
    assert "--backend mta: no such backend or device type" in out.stderr
    assert "Did you mean 'meta'?" in out.stderr and "--backend meta" not in out.stderr


# ---- names that are not loaded get a suggestion ------------------------------------------------


@pytest.mark.parametrize(
    "call,exc,message",
    [
        (
            lambda: DispatchKey.get("Cpu"),
            ValueError,
            "unknown dispatch key 'Cpu'. Did you mean 'CPU'?",
        ),
        (lambda: DispatchKey.get("Autogard"), ValueError, "Did you mean 'Autograd'?"),
        (lambda: Library("aten", "IMPL", "Meta_"), ValueError, "Did you mean 'Meta'?"),
        (lambda: ct.device("cpuu"), RuntimeError, "device string: cpuu. Did you mean 'cpu'?"),
        (
            lambda: ct.ones(2, device="mta"),
            RuntimeError,
            "device string: mta. Did you mean 'meta'?",
        ),
    ],
)
def test_unknown_names_get_a_suggestion(call, exc, message):
    with pytest.raises(exc, match=re.escape(message)):
        call()


def test_unknown_name_far_from_every_known_one_gets_no_suggestion():
    with pytest.raises(RuntimeError) as err:
        ct.device("qqqqqqqq")
    assert "Did you mean" not in str(err.value)


def test_backend_option_problems_in_process():
    from coretorch.testing.pytest_plugin import backend_option_problems

    assert backend_option_problems(["meta", "cpu"]) == []
    assert backend_option_problems(["cpuu", "demo"]) == [
        "--backend cpuu: no such backend or device type (loaded: "
        f"{', '.join(n for n, i in backends().items() if i.status == 'loaded')}). "
        "Did you mean 'cpu'?",
        "--backend demo: backend 'demo' is loaded but provides no device type 'demo' "
        "(its device types: none)",
    ]


# ---- a plugin that fails half-way is rolled back ----------------------------------------------

HALF_WAY = """
from coretorch.library import Library
from coretorch.plugins import hookimpl
from coretorch.tensor.storage import Allocator

class A(Allocator):
    def raw_allocate(self, nbytes, device):
        return None, self.fake_address(nbytes)

@hookimpl
def coretorch_register_backend(registry):
    registry.device_type("halfway", "HalfWay", A(), has_data=False)
    # a kernel at the cpu backend's key, through a Library of its own (not its registry)
    Library("aten", "IMPL", "CPU").impl("add", lambda out, self, other, alpha: None)
    raise ValueError("halfway: failed after registering")
"""


def test_plugin_failing_half_way_is_rolled_back(tmp_path):
    site = tmp_path / "site"
    (site / "ct_halfway").mkdir(parents=True)
    (site / "ct_halfway" / "__init__.py").write_text(HALF_WAY)
    dist = site / "ct_halfway-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: ct-halfway\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[coretorch.backends]\nzz_halfway = ct_halfway\n")
    code = STATUS + textwrap.dedent("""
        import coretorch as ct
        from coretorch.device import device_types
        print(sorted(device_types()))
        if "cpu" in device_types():
            print((ct.tensor([1.0, 2.0]) + ct.tensor([3.0, 4.0])).tolist())
        else:
            print([4.0, 6.0])
        try:
            ct.zeros(2, device="halfway")
        except RuntimeError as e:
            print(e)
    """)
    out = run_python(code, site)
    assert out.returncode == 0, out.stderr
    status_line, types_line, add_line, where_used = out.stdout.strip().splitlines()[-4:]
    assert where_used.startswith(
        "device type 'halfway' cannot be used: backend 'zz_halfway' "
        "failed to load: ValueError: halfway: failed after registering"
    )
    st = json.loads(status_line)
    assert st["zz_halfway"][:2] == ["failed", "ValueError: halfway: failed after registering"]
    assert "halfway" not in types_line, "the failed plugin's device type is unregistered"
    assert add_line == "[4.0, 6.0]", "the cpu backend's own add kernel is back"
