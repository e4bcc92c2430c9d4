"""The cuda backend (backends/cuda_cupy): availability without a GPU, the emulation mode, the
allocator over CuPy's pool (statistics, events, out-of-memory retry), streams and events, copies,
seeding, the profiler's GPU track, and CUDA-only paths that need a real GPU.

Three groups, each skipping with its reason where it cannot run:
- real mode (CuPy, no emulation), checked in a subprocess: on a machine without a GPU the backend
  is `unavailable` with CuPy's reason and cuda tensors cannot be created;
- the API tests, in this process whenever cuda is usable (a GPU, or ``CORETORCH_CUDA_EMULATE=1``,
  which `make test` sets for its second run);
- real-GPU-only tests (fused CUDA kernels, device timing), skipped without a GPU.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import coretorch as ct
from coretorch.device import device_types
from coretorch.plugins import backends

pytestmark = pytest.mark.skipif(
    "cuda" not in backends(), reason="the coretorch-cuda-cupy backend is not installed"
)

EMULATE = "CORETORCH_CUDA_EMULATE"


def _usable() -> bool:
    return "cuda" in backends() and ct.cuda.is_available()


def _real_gpu() -> bool:
    return _usable() and not ct.cuda.is_emulated()


needs_cuda = pytest.mark.skipif(
    not _usable(),
    reason=f"cuda is not usable here ({getattr(ct.cuda, 'unavailable_reason', lambda: '')()}); "
    f"these run on a GPU or with {EMULATE}=1 (make test's second run)",
)
needs_gpu = pytest.mark.skipif(
    not _real_gpu(),
    reason="needs a real CUDA GPU: emulation (numpy) cannot run CUDA kernels "
    "or time a device; no GPU is present or emulation is on",
)


def _run(code: str, emulate: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (EMULATE, "CORETORCH_BACKENDS")}
    env.update(COLUMNS="250", NO_COLOR="1")
    if emulate:
        env[EMULATE] = "1"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


# ---- real mode: availability without a GPU ---------------------------------------------------

_REAL_PROBE = """
import json, coretorch as ct
from coretorch.device import device_types
info = ct.plugins.backends()["cuda"]
res = {"status": info.status, "reason": info.reason, "available": ct.cuda.is_available(),
       "count": ct.cuda.device_count(),
       "types": sorted(device_types())}
try:
    ct.zeros(2, device="cuda")
    res["create"] = "ok"
except RuntimeError as e:
    res["create"] = str(e)
try:
    ct.cuda.synchronize()
    res["sync"] = "ok"
except RuntimeError as e:
    res["sync"] = str(e)
print(json.dumps(res))
"""


def test_real_mode_without_gpu_is_unavailable_with_cupys_reason():
    out = _run(_REAL_PROBE, emulate=False)
    assert out.returncode == 0, out.stderr  # importing coretorch never fails
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if res["available"]:
        pytest.skip("a CUDA GPU is present: the unavailable path cannot be observed here")
    assert res["status"] == "unavailable" and res["reason"]
    assert "emulated" not in res["reason"]
    assert res["count"] == 0 and "cuda" in res["types"]
    assert res["create"].startswith("cannot create a tensor on cuda: CUDA is not available")
    assert res["reason"] in res["create"] and res["reason"] in res["sync"]


def test_python_m_coretorch_reports_each_mode_honestly():
    real = _run("import runpy; runpy.run_module('coretorch', run_name='__main__')", False)
    emu = _run("import runpy; runpy.run_module('coretorch', run_name='__main__')", True)
    assert real.returncode == 0 and emu.returncode == 0, real.stderr + emu.stderr
    cuda_real = next(line for line in real.stdout.splitlines() if line.startswith("│ cuda"))
    cuda_emu = next(line for line in emu.stdout.splitlines() if line.startswith("│ cuda"))
    assert "loaded (emulated: numpy stands in for CuPy)" in cuda_emu
    assert "emulated" not in cuda_real
    assert ("unavailable:" in cuda_real) != _real_gpu_in_subprocess()


def _real_gpu_in_subprocess() -> bool:
    out = _run("import coretorch as ct; print(ct.cuda.is_available())", False)
    return out.stdout.strip().splitlines()[-1] == "True"


def test_unavailable_device_is_not_a_test_device(request):
    from coretorch.testing.pytest_plugin import selected_device_types

    if backends()["cuda"].status == "loaded":
        pytest.skip("cuda is usable in this process (GPU or emulation)")
    assert "cuda" not in selected_device_types(request.config)


def test_cuda_module_api_exists_in_every_mode():
    for name in (
        "is_available",
        "device_count",
        "synchronize",
        "current_device",
        "manual_seed",
        "memory_allocated",
        "max_memory_allocated",
        "memory_reserved",
        "empty_cache",
        "Stream",
        "Event",
        "current_stream",
        "OutOfMemoryError",
    ):
        assert hasattr(ct.cuda, name), name
    assert issubclass(ct.cuda.OutOfMemoryError, RuntimeError)
    assert device_types()["cuda"].module is ct.cuda


# ---- allocator ---------------------------------------------------------------------------------


@needs_cuda
def test_memory_stats_follow_tensors():
    gc.collect()
    before = ct.cuda.memory_allocated()
    ct.cuda.reset_peak_memory_stats()
    t = ct.empty(1000, device="cuda")
    u = ct.empty(250, dtype=ct.float64, device="cuda")
    assert ct.cuda.memory_allocated() == before + 4000 + 2000
    assert ct.cuda.max_memory_allocated() == before + 6000
    assert ct.cuda.memory_reserved() >= ct.cuda.memory_allocated()
    del t
    gc.collect()
    assert ct.cuda.memory_allocated() == before + 2000
    assert ct.cuda.max_memory_allocated() == before + 6000
    ct.cuda.empty_cache()  # cached blocks go back; tensors in use stay
    assert ct.cuda.memory_allocated() == before + 2000
    np.testing.assert_array_equal(u.fill_(1.5).cpu().numpy(), np.full(250, 1.5))
    stats = ct.cuda.memory_stats()
    assert stats["allocated_bytes"] == before + 2000 and stats["num_live"] >= 1


@needs_cuda
def test_allocations_and_frees_reach_the_memory_hooks():
    from coretorch.tensor.storage import add_memory_hook, remove_memory_hook

    seen = []
    hook = add_memory_hook(lambda ev: seen.append(ev) if ev.device.type == "cuda" else None)
    try:
        t = ct.empty(16, device="cuda")
        del t
        gc.collect()
    finally:
        remove_memory_hook(hook)
    assert [e.nbytes for e in seen] == [64, -64]
    assert seen[0].address == seen[1].address and seen[0].address != 0


class _FlakyPool:
    """A pool whose malloc fails `fails` times with an out-of-memory error."""

    def __init__(self, fails: int):
        self.fails, self.freed, self.calls = fails, 0, 0

    def malloc(self, nbytes):
        self.calls += 1
        if self.fails:
            self.fails -= 1
            raise MemoryError("simulated out of memory")
        return object(), 0x5000

    def free_all_blocks(self):
        self.freed += 1

    def total_bytes(self):
        return 3 << 30


@pytest.fixture
def flaky_pool_error(monkeypatch):
    """Make the allocator treat MemoryError as the pool's OOM error (as in emulation; CuPy's
    own OutOfMemoryError cannot be raised without a device)."""
    from coretorch_cuda_cupy import array_module as am

    monkeypatch.setattr(am, "OOM_ERRORS", (MemoryError,))


@needs_cuda
def test_out_of_memory_frees_the_cache_once_and_retries(flaky_pool_error):
    from coretorch_cuda_cupy.allocator import CudaAllocator

    pool = _FlakyPool(fails=1)
    alloc = CudaAllocator(pool)
    s = alloc.allocate(1 << 20, ct.device("cuda"))
    assert (pool.calls, pool.freed, alloc.num_oom_retries, alloc.num_ooms) == (2, 1, 1, 0)
    assert s.nbytes == 1 << 20 and alloc.allocated == 1 << 20


@needs_cuda
def test_out_of_memory_raises_with_the_sizes_after_one_retry(flaky_pool_error):
    from coretorch_cuda_cupy.allocator import CudaAllocator

    pool = _FlakyPool(fails=5)
    alloc = CudaAllocator(pool)
    with pytest.raises(ct.cuda.OutOfMemoryError) as e:
        alloc.allocate(1 << 30, ct.device("cuda"))
    assert (pool.calls, pool.freed, alloc.num_ooms) == (2, 1, 1)
    msg = str(e.value)
    assert "CUDA out of memory. Tried to allocate 1.00 GiB on cuda" in msg
    assert "reserves 3.00 GiB" in msg and alloc.allocated == 0
    assert isinstance(e.value, RuntimeError)


# ---- streams, events, synchronize, seeding -------------------------------------------------------


@needs_cuda
def test_stream_context_sets_the_current_stream():
    default = ct.cuda.current_stream()
    assert default == ct.cuda.default_stream()
    s = ct.cuda.Stream()
    with s:
        assert ct.cuda.current_stream() is s
        y = ct.ones(4, device="cuda") * 3
    s.synchronize()
    assert s.query()
    assert ct.cuda.current_stream() == default
    np.testing.assert_array_equal(y.cpu().numpy(), np.full(4, 3.0, np.float32))
    s2 = ct.cuda.Stream()
    s2.wait_stream(s)
    ct.cuda.synchronize()
    if ct.cuda.is_emulated():
        assert "emulated" in repr(s)


@needs_cuda
def test_events_time_work_and_check_their_arguments():
    start, end = ct.cuda.Event(enable_timing=True), ct.cuda.Event(enable_timing=True)
    start.record()
    a = ct.rand(256, 256, device="cuda")
    (a @ a).sum().item()
    end.record()
    end.synchronize()
    assert end.query()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0.0
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        ct.cuda.Event().elapsed_time(end)
    with pytest.raises(RuntimeError, match="must be recorded"):
        ct.cuda.Event(enable_timing=True).elapsed_time(end)


@needs_cuda
def test_manual_seed_repeats_cuda_random_streams():
    ct.cuda.manual_seed(7)
    a = ct.rand(100, device="cuda").cpu().numpy()
    n = ct.randn(100, device="cuda").cpu().numpy()
    ct.cuda.manual_seed(7)
    np.testing.assert_array_equal(ct.rand(100, device="cuda").cpu().numpy(), a)
    np.testing.assert_array_equal(ct.randn(100, device="cuda").cpu().numpy(), n)
    ct.cuda.manual_seed(8)
    assert not np.array_equal(ct.rand(100, device="cuda").cpu().numpy(), a)
    assert (a >= 0).all() and (a < 1).all() and abs(n.mean()) < 0.5


# ---- copies ------------------------------------------------------------------------------------


@needs_cuda
def test_copies_between_cpu_and_cuda():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    c = ct.from_numpy(x).cuda()
    assert c.device.type == "cuda" and c.is_cuda
    np.testing.assert_array_equal(c.cpu().numpy(), x)
    t = c.transpose(0, 2)  # strided view: copied as seen
    np.testing.assert_array_equal(t.cpu().numpy(), x.transpose(2, 1, 0))
    h = ct.from_numpy(x).transpose(0, 2).to("cuda", ct.float64)
    assert h.dtype is ct.float64
    np.testing.assert_array_equal(h.to("cpu").numpy(), x.transpose(2, 1, 0))
    d = ct.zeros(2, 3, 4, device="cuda")
    d[0].copy_(ct.from_numpy(x[1]))  # cpu -> a cuda view
    np.testing.assert_array_equal(d.cpu().numpy()[0], x[1])
    assert (ct.tensor(2.0) * c).cpu().numpy().tolist() == (2 * x).tolist()  # cpu scalar operand
    assert "device='cuda'" in repr(c)


@needs_cuda
def test_model_trains_on_cuda_like_on_cpu():
    ct.manual_seed(0)
    model = ct.nn.Linear(4, 3)
    x = ct.randn(8, 4)
    target = ct.randn(8, 3)
    cpu_loss = ((model(x) - target) ** 2).mean()
    cpu_loss.backward()
    cpu_grad = model.weight.grad.numpy().copy()
    model.zero_grad()
    model.cuda()
    assert model.weight.device.type == "cuda"
    loss = ((model(x.cuda()) - target.cuda()) ** 2).mean()
    loss.backward()
    np.testing.assert_allclose(loss.item(), cpu_loss.item(), rtol=1e-6)
    np.testing.assert_allclose(model.weight.grad.cpu().numpy(), cpu_grad, rtol=1e-5, atol=1e-7)
    opt = ct.optim.AdamW(model.parameters(), lr=0.1)
    opt.step()
    assert model.weight.device.type == "cuda"


# ---- the profiler's GPU track -------------------------------------------------------------------


@needs_cuda
def test_profiler_records_device_time_on_a_gpu_track(tmp_path):
    profiler = pytest.importorskip("coretorch_profiler")
    a = ct.rand(32, 32, device="cuda")
    b = ct.rand(4, device="cpu")
    with profiler.profile() as prof:
        (a @ a).exp()
        b + 1
    path = prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = json.load(open(path))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    names = {e["name"] for e in kernels}
    assert {"aten::mm", "aten::exp"} <= names
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["pid"] == 0 for e in kernels)
    assert all(e["args"]["emulated"] == ct.cuda.is_emulated() for e in kernels)
    host_adds = [e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::add"]
    assert host_adds and "aten::add" not in names  # cpu ops stay off the GPU track
    gpu = [e for e in events if e["ph"] == "M" and e["name"] == "process_name" and e["pid"] == 0]
    assert gpu and gpu[0]["args"]["name"].startswith("GPU 0")
    assert ("emulated" in gpu[0]["args"]["name"]) == ct.cuda.is_emulated()


# ---- real GPU only ------------------------------------------------------------------------------


@needs_cuda
def test_autocast_follows_pytorchs_cuda_lists():
    # expected dtypes from ATen's cuda autocast lists: matmul in float16; softmax, exp, sum,
    # cumsum, layer_norm and losses in float32 (an explicit dtype= is kept); cat to the widest
    x = ct.randn(3, 4, device="cuda")
    w = ct.randn(4, 4, device="cuda")
    with ct.autocast("cuda"):
        h = x @ w
        got = [
            h,
            h.softmax(-1),
            h.exp(),
            h.sum(),
            h.relu(),
            ct.cat([h, x]),
            ct.nn.functional.layer_norm(h, (4,)),
            h.cumsum(0),
            ct.nn.functional.mse_loss(h, x),
            h.sum(dtype=ct.float16),
        ]
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            ct.nn.functional.binary_cross_entropy(h.sigmoid(), x.sigmoid())
    assert [t.dtype for t in got] == [
        ct.float16,
        ct.float32,
        ct.float32,
        ct.float32,
        ct.float16,
        ct.float32,
        ct.float32,
        ct.float32,
        ct.float32,
        ct.float16,
    ]
    with ct.autocast("cuda", dtype=ct.bfloat16):
        assert (x @ w).dtype is ct.bfloat16
        assert (x.cpu() @ w.cpu()).dtype is ct.float32  # cpu tensors: cpu autocast is off


@needs_gpu
def test_fused_optimizer_and_softmax_kernels_match_numpy():
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    A, B, C = (ct.from_numpy(v).cuda() for v in (a, b, c))
    np.testing.assert_allclose(
        ct.addcmul(A, B, C, value=0.5).cpu().numpy(), a + 0.5 * b * c, rtol=1e-6
    )
    np.testing.assert_allclose(
        ct.addcdiv(A, B, C, value=0.5).cpu().numpy(), a + 0.5 * b / c, rtol=1e-5
    )
    np.testing.assert_allclose(
        ct.lerp(A, B, 0.3).cpu().numpy(), a + 0.3 * (b - a), rtol=1e-5, atol=1e-6
    )
    x = rng.standard_normal((8, 50)).astype(np.float32)
    e = np.exp(x - x.max(-1, keepdims=True))
    np.testing.assert_allclose(
        ct.from_numpy(x).cuda().softmax(-1).cpu().numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5
    )


@needs_gpu
def test_memory_pool_caches_freed_blocks_until_empty_cache():
    gc.collect()
    ct.cuda.empty_cache()
    t = ct.empty(1 << 20, device="cuda")
    reserved = ct.cuda.memory_reserved()
    del t
    gc.collect()
    assert ct.cuda.memory_reserved() == reserved  # CuPy's pool keeps the block
    ct.cuda.empty_cache()
    assert ct.cuda.memory_reserved() < reserved


@needs_gpu
def test_device_events_measure_gpu_time():
    a = ct.rand(2048, 2048, device="cuda")
    start, end = ct.cuda.Event(enable_timing=True), ct.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        a = a @ a / 2048
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0.0
    assert ct.cuda.get_device_name()
