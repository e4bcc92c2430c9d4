"""The meta backend: shapes, dtypes and strides without data; no memory for data; reading values
raises a clear error; the allocator still counts what a model would need."""

import gc
import json
import subprocess
import sys

import pytest

import coretorch as ct
from coretorch.device import get_device_type


def meta_allocator():
    return get_device_type("meta").allocator


@pytest.mark.parametrize(
    "read",
    [
        lambda t: t.item(),
        lambda t: t[0, 0].item(),
        lambda t: t.tolist(),
        lambda t: float(t[0, 0]),
        lambda t: bool(t[0, 0]),
        lambda t: t.numpy(force=True),
        lambda t: t.to("cpu"),
    ],
    ids=["item-many", "item", "tolist", "float", "bool", "numpy-force", "to-cpu"],
)
def test_reading_values_raises_clear_error(read):
    t = ct.zeros(2, 3, device="meta")
    with pytest.raises(RuntimeError, match="meta|Scalar") as info:
        read(t)
    msg = str(info.value)
    assert "meta" in msg or "cannot be converted to Scalar" in msg


def test_reading_values_names_what_to_do():
    with pytest.raises(
        NotImplementedError,
        match=r"Cannot copy out of meta tensor; no data!.*"
        r"shape \[2, 3\].*'cpu'",
    ):
        ct.zeros(2, 3, device="meta").tolist()


def test_numpy_is_a_type_error_like_torch():
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        ct.zeros(2, device="meta").numpy()


def test_shapes_dtypes_strides_without_data():
    a = ct.empty(4, 1, 3, dtype=ct.float16, device="meta")
    b = ct.empty(5, 1, dtype=ct.int32, device="meta")
    c = a + b
    assert c.shape == (4, 5, 3) and c.dtype is ct.float16 and c.stride() == (15, 3, 1)
    assert c.device == ct.device("meta") and c.is_meta
    assert c.untyped_storage().data is None


def test_copy_from_cpu_to_meta_keeps_metadata():
    t = ct.tensor([[1, 2, 3]], dtype=ct.int16)
    m = t.to("meta")
    assert m.is_meta and m.shape == (1, 3) and m.dtype is ct.int16


def test_allocator_counts_bytes_and_frees():
    alloc = meta_allocator()
    gc.collect()  # garbage of earlier tests (exception tracebacks) must not be freed mid-test
    before = alloc.stats()
    t = ct.empty(1000, 10, dtype=ct.float64, device="meta")
    mid = alloc.stats()
    assert mid["allocated_bytes"] - before["allocated_bytes"] == 80_000
    assert mid["num_allocs"] == before["num_allocs"] + 1
    assert mid["peak_bytes"] >= mid["allocated_bytes"]
    u = ct.empty(10, device="meta")
    assert t.data_ptr() != u.data_ptr(), "meta buffers get distinct fake addresses"
    del t
    after = alloc.stats()
    assert after["allocated_bytes"] == before["allocated_bytes"] + 40
    assert after["num_frees"] == before["num_frees"] + 1


def test_views_allocate_nothing():
    t = ct.empty(64, 64, device="meta")
    before = meta_allocator().stats()["num_allocs"]
    t.t()[1:, ::2].unsqueeze(0).expand(3, 63, 32)
    assert meta_allocator().stats()["num_allocs"] == before


TEN_BILLION = r"""
import json
import coretorch as ct
from coretorch.device import get_device_type

# a 10-billion-parameter transformer's weights (d_model 5120, 32 layers, 32k vocabulary)
d, layers, vocab = 5120, 32, 32000
weights = [ct.empty(vocab, d, device="meta")]
for _ in range(layers):
    weights += [ct.empty(3 * d, d, device="meta"), ct.empty(d, d, device="meta"),
                ct.empty(4 * d, d, device="meta"), ct.empty(d, 4 * d, device="meta"),
                ct.empty(d, device="meta"), ct.empty(d, device="meta")]
x = ct.empty(8, 2048, d, device="meta")
for i in range(layers):
    x = x + weights[5 + 6 * i]          # touch every layer with a broadcasting op
# current RSS with every tensor alive (the high-water mark would include the parent's memory:
# Linux starts a forked child's ru_maxrss at its parent's size)
with open("/proc/self/status") as f:
    rss_kb = int(next(line for line in f if line.startswith("VmRSS:")).split()[1])
print(json.dumps({"params": sum(w.numel() for w in weights),
                  "allocated": get_device_type("meta").allocator.stats()["allocated_bytes"],
                  "shape": list(x.shape),
                  "rss_mb": rss_kb / 1024}))
"""


def test_ten_billion_parameters_of_meta_tensors_stay_under_200_mb():
    out = subprocess.run(
        [sys.executable, "-c", TEN_BILLION], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["params"] > 10_000_000_000
    assert r["allocated"] >= r["params"] * 4, "the allocator reports what the model would need"
    assert r["shape"] == [8, 2048, 5120]
    assert r["rss_mb"] < 200, f"the process uses {r['rss_mb']:.0f} MB"
