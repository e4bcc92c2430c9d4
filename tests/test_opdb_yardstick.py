"""The helpers of tools/opdb_yardstick.py (name mapping, comparison, rendering): no PyTorch."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import coretorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import opdb_yardstick as y  # noqa: E402


def test_paths_strip_torch_prefix_and_keep_aliases_in_order():
    assert y.candidate_paths("linalg.norm") == ["linalg.norm"]
    assert y.candidate_paths("absolute", ["abs", "torch.abs", "absolute"]) == ["absolute", "abs"]


def test_function_found_at_the_same_path():
    eq = y.find_equivalent(coretorch, coretorch.Tensor, "nn.functional.relu")
    assert eq.kind == "function" and eq.fn is coretorch.nn.functional.relu
    assert y.find_equivalent(coretorch, coretorch.Tensor, "linalg.no_such_op") is None


def test_alias_then_method_variant():
    eq = y.find_equivalent(coretorch, coretorch.Tensor, "no_such_name", ["add"])
    assert eq.path == "add"
    eq = y.find_equivalent(coretorch, coretorch.Tensor, "contiguous")
    assert eq.kind == "method" and eq.path == "contiguous"
    # a class is not an op equivalent (torch.Size, coretorch.Tensor...)
    assert y.find_equivalent(coretorch, coretorch.Tensor, "Size") is None


def test_method_equivalent_reads_attributes_and_calls_methods():
    x = coretorch.arange(6.0).reshape(2, 3)
    assert y.Equivalent("method", "T").call(x, (), {}).shape == (3, 2)
    assert y.Equivalent("method", "sum").call(x, (1,), {}).tolist() == [3.0, 12.0]


def test_rebind_swaps_only_the_named_global():
    fn = eval("lambda x, n: torch.polygamma(n, x)", {"torch": object()})
    rebound = y.rebind(fn, "torch", types.SimpleNamespace(polygamma=lambda n, x: (n, x)))
    assert rebound("x", 2) == (2, "x")


def test_compare_arrays_reasons():
    a = np.array([1.0, 2.0, np.nan], dtype=np.float32)
    assert y.compare_arrays(a, a.copy()) is None
    assert y.compare_arrays(a, a + np.float32(1e-7)) is None  # within float32 tolerance
    assert "values differ (1 of 3" in y.compare_arrays(a, np.array([1, 2.5, np.nan], np.float32))
    assert y.compare_arrays(a, a.astype(np.float64)).startswith("dtype")
    assert y.compare_arrays(a, a[:2]).startswith("shape")
    assert y.compare_arrays(np.array([1, 2]), np.array([1, 3])) == "values differ (1 of 2)"
    # float64 is held to a tighter tolerance than float32
    b = np.array([1.0]) + 1e-5
    assert y.compare_arrays(np.array([1.0]), b) is not None


def _to_numpy(x):
    return x if isinstance(x, np.ndarray) else None


def test_compare_outputs_nested_and_numbers():
    e = (np.zeros(2), [np.ones(1), 3])
    assert y.compare_outputs(e, (np.zeros(2), [np.ones(1), 3]), _to_numpy) is None
    why = y.compare_outputs(e, (np.zeros(2), [np.ones(1), 4]), _to_numpy)
    assert why == "output 1: output 1: 4 != 3"
    assert "expected 2" in y.compare_outputs(e, (np.zeros(2),), _to_numpy)
    assert y.compare_outputs(np.zeros(2), 0.0, _to_numpy).startswith("got float")
    assert y.compare_outputs(float("nan"), float("nan"), _to_numpy) is None
    # shapes only (random outputs)
    assert y.compare_outputs(np.zeros(2), np.ones(2), _to_numpy, values=False) is None
    assert y.compare_outputs(np.zeros(2), np.ones(3), _to_numpy, values=False) is not None


def test_eigenvectors_compare_up_to_sign():
    v = np.array([[0.6, -0.8], [-0.8, -0.6]])
    flipped = v * np.array([-1.0, 1.0])  # the first eigenvector negated: the same basis
    np.testing.assert_array_equal(y._sign_fixed(v), y._sign_fixed(flipped))
    assert y.compare_arrays(y._sign_fixed(v), y._sign_fixed(v[:, ::-1])) is not None
    assert y._sign_fixed(np.zeros((2, 0))).shape == (2, 0)


def test_nondeterministic_entries():
    assert y.is_nondeterministic("nn.functional.dropout2d")
    assert y.is_nondeterministic("randn_like")
    assert not y.is_nondeterministic("nn.functional.relu")


def test_time_limit_interrupts_a_sample():
    with pytest.raises(y.SampleTimeout):
        with y.time_limit(0.05):
            time.sleep(1)


def test_markdown_lists_missing_and_failing_entries():
    s = y.Summary(
        [
            y.EntryResult("add", "function:add", 3, 3, 1, 1),
            y.EntryResult("sub", "function:sub", 1, 2, 0, 1, "float32: bad | pipe"),
            y.EntryResult("fft.fft"),
        ]
    )
    t = s.totals()
    assert (t["equivalent"], t["entries"], t["value_ok"], t["value_total"]) == (2, 3, 4, 5)
    text = y.render_markdown(s, "test settings")
    assert "| entries with an equivalent | 2 of 3 |" in text
    assert "| sample values that agree | 80.0% (4 of 5) |" in text
    assert "| `sub` | 1/2 | 0/1 | float32: bad \\| pipe |" in text
    assert "`fft.fft`" in text.split("without an equivalent")[1]
    assert "`add`" not in text.split("## Entries with failing")[1]
