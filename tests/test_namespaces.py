"""The torch-shaped namespaces: ``coretorch.accelerator``, ``coretorch.backends``,
``coretorch.cuda`` (with and without a cuda backend), ``coretorch.xpu``/``mps``,
``coretorch.onnx`` and the ``Tensor.is_*`` flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import coretorch as ct
from coretorch.device import device_types

# runs in a subprocess under a chosen backend set; prints one JSON object
PROBE = textwrap.dedent("""
    import json, warnings
    import coretorch as ct
    acc, cuda, out = ct.accelerator, ct.cuda, {}

    def call(name, fn):
        try:
            out[name] = fn()
        except Exception as e:
            out[name] = f"{type(e).__name__}: {e}"

    call("is_available", acc.is_available)
    call("current", lambda: None if acc.current_accelerator() is None
         else str(acc.current_accelerator()))
    call("device_count", acc.device_count)
    call("index", acc.current_device_index)
    call("synchronize", acc.synchronize)
    call("set_index", lambda: acc.set_device_index(0))
    call("wrong_type", lambda: acc.set_device_index("cpu"))
    call("memory_before", acc.memory_allocated)
    call("stats", lambda: sorted(acc.memory_stats()))
    call("empty_cache", acc.empty_cache)
    call("graph", acc.Graph)
    call("capability", lambda: "float32" in {d.name for d in
                                             acc.get_device_capability()["supported_dtypes"]})
    def with_index():
        with acc.device_index(0):
            return acc.current_device_index()
    call("device_index", with_index)
    if acc.is_available():
        keep = ct.ones(256, device=acc.current_accelerator())
        call("memory_after", acc.memory_allocated)
        call("peak", acc.max_memory_allocated)
    for name in ("is_available", "device_count", "memory_allocated", "max_memory_allocated",
                 "memory_reserved", "is_bf16_supported", "is_initialized", "memory_stats",
                 "synchronize", "current_device", "get_device_name", "init",
                 "get_device_properties", "CUDAGraph"):
        call("cuda." + name, getattr(cuda, name))
    call("cuda.manual_seed", lambda: cuda.manual_seed_all(0))
    call("cuda.module", lambda: type(cuda).__name__ + ":" + cuda.__name__)
    print(json.dumps(out))
""")


def probe(**env) -> dict:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CORETORCH_")}
    p = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **env},
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_no_accelerator_without_a_cuda_backend():
    r = probe(CORETORCH_BACKENDS="cpu,meta")
    assert r["is_available"] is False and r["current"] is None and r["device_count"] == 0
    for name in ("index", "synchronize", "set_index"):
        assert (
            r[name].startswith("RuntimeError: coretorch.accelerator.")
            and "no accelerator is available" in r[name]
        )
    # memory questions answer zero and empty, as PyTorch's do without an accelerator
    assert r["memory_before"] == 0 and r["stats"] == [] and r["empty_cache"] is None
    assert r["graph"].startswith("RuntimeError: coretorch.accelerator.Graph()")
    # coretorch.cuda answers as PyTorch built without CUDA, never AttributeError
    assert r["cuda.is_available"] is False and r["cuda.device_count"] == 0
    assert r["cuda.memory_allocated"] == r["cuda.max_memory_allocated"] == 0
    assert r["cuda.memory_stats"] == {} and r["cuda.is_bf16_supported"] is False
    assert r["cuda.is_initialized"] is False and r["cuda.manual_seed"] is None
    for name in (
        "synchronize",
        "current_device",
        "get_device_name",
        "init",
        "get_device_properties",
        "CUDAGraph",
    ):
        msg = r["cuda." + name]
        assert msg.startswith(f"RuntimeError: coretorch.cuda.{name}(): no cuda backend is loaded")


def test_the_cuda_backend_is_the_accelerator_when_available():
    r = probe(CORETORCH_CUDA_EMULATE="1")
    assert r["is_available"] is True and r["current"] == "cuda" and r["device_count"] == 1
    assert r["index"] == 0 and r["synchronize"] is None and r["set_index"] is None
    assert r["device_index"] == 0 and r["capability"] is True
    assert (
        r["wrong_type"] == "ValueError: coretorch.accelerator.set_device_index(): cpu "
        "doesn't match the current accelerator cuda."
    )
    assert r["memory_after"] >= r["memory_before"] + 256 * 4 and r["peak"] >= r["memory_after"]
    assert r["cuda.is_available"] is True and r["cuda.is_initialized"] is True
    assert r["cuda.module"] == "module:coretorch_cuda_cupy.device_module"
    assert (
        r["cuda.get_device_properties"].startswith("RuntimeError")
        and "emulated" in r["cuda.get_device_properties"]
    )
    assert r["cuda.CUDAGraph"].startswith(
        "RuntimeError: coretorch.cuda.CUDAGraph(): coretorch cannot capture CUDA graphs"
    )


def test_accelerator_agrees_with_the_cuda_module_in_this_process():
    assert ct.accelerator.is_available() == ct.cuda.is_available()
    assert ct.accelerator.device_count() == ct.cuda.device_count()


# ---- coretorch.backends -------------------------------------------------------------------------


def test_backend_flags_are_honest_and_read_back():
    b = ct.backends
    assert b.cudnn.is_available() is False and b.cudnn.version() is None
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert not (
        b.mkldnn.is_available()
        or b.mkl.is_available()
        or b.openmp.is_available()
        or b.nnpack.is_available()
        or b.opt_einsum.is_available()
    )
    assert b.cuda.is_built() == ("cuda" in device_types())
    assert b.cpu.get_cpu_capability() in ("AVX512", "AVX2", "DEFAULT")
    assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic) == (True, False, False)
    b.cudnn.benchmark = True
    try:
        with b.cudnn.flags(enabled=False, deterministic=True):
            assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic) == (
                False,
                False,
                True,
            )
        assert (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic) == (True, True, False)
    finally:
        b.cudnn.benchmark = False


def test_tf32_switch_and_matmul_precision_are_one_setting_as_in_pytorch():
    m = ct.backends.cuda.matmul
    assert ct.get_float32_matmul_precision() == "highest" and m.allow_tf32 is False
    try:
        m.allow_tf32 = True
        assert ct.get_float32_matmul_precision() == "high"
        ct.set_float32_matmul_precision("medium")
        assert m.allow_tf32 is True
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            ct.set_float32_matmul_precision("low")
        assert ct.get_float32_matmul_precision() == "medium"
    finally:
        ct.set_float32_matmul_precision("highest")
    assert m.allow_fp16_reduced_precision_reduction is True
    with pytest.raises(AttributeError, match="Unknown attribute allow_tf33"):
        m.allow_tf33 = True


def test_attention_switches_restore_after_sdp_kernel():
    c = ct.backends.cuda
    with c.sdp_kernel(enable_flash=False, enable_math=True):
        assert not c.flash_sdp_enabled() and c.math_sdp_enabled()
    assert c.flash_sdp_enabled() and c.is_flash_attention_available() is False


# ---- xpu, mps, onnx, tensor flags -------------------------------------------------------------


@pytest.mark.parametrize("name", ["xpu", "mps"])
def test_absent_device_modules(name):
    mod = getattr(ct, name)
    assert mod.is_available() is False and mod.device_count() == 0
    assert mod.manual_seed(0) is None
    with pytest.raises(
        RuntimeError, match=f"coretorch.{name}.synchronize\\(\\): coretorch has no backend"
    ):
        mod.synchronize()
    with pytest.raises(RuntimeError):
        mod.get_rng_state()


def test_mps_raises_where_pytorch_without_mps_raises():
    for fn in (ct.mps.seed, ct.mps.empty_cache, ct.mps.current_allocated_memory):
        with pytest.raises(RuntimeError, match="Metal"):
            fn()


def test_onnx_imports_and_export_says_what_to_do():
    import coretorch.onnx as onnx

    assert onnx.is_in_onnx_export() is False
    with pytest.raises(RuntimeError, match="cannot export Linear to ONNX.*coretorch.save"):
        onnx.export(ct.nn.Linear(2, 2), (ct.zeros(1, 2),), "model.onnx")
    assert issubclass(onnx.OnnxExporterError, RuntimeError)


def test_tensor_device_and_layout_flags(device):
    t = ct.zeros(2, device=device)
    kind = t.device.type
    assert (t.is_cpu, t.is_meta, t.is_cuda) == (kind == "cpu", kind == "meta", kind == "cuda")
    for flag in (
        "is_xpu",
        "is_mps",
        "is_mtia",
        "is_xla",
        "is_ipu",
        "is_sparse",
        "is_sparse_csr",
        "is_quantized",
        "is_nested",
        "is_mkldnn",
    ):
        assert getattr(t, flag) is False, flag
