"""set_printoptions changes tensor printing as PyTorch's does (the strings PyTorch prints)."""

from __future__ import annotations

import pytest

import coretorch as ct


@pytest.fixture(autouse=True)
def _restore():
    yield
    ct.set_printoptions(profile="default")


def test_precision_threshold_edgeitems_linewidth():
    ct.set_printoptions(precision=2)
    assert repr(ct.tensor([1.12345])) == "tensor([1.12])"
    ct.set_printoptions(threshold=5)
    assert repr(ct.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    ct.set_printoptions(edgeitems=1)
    assert repr(ct.arange(10)) == "tensor([0,  ..., 9])"
    ct.set_printoptions(profile="default", linewidth=20)
    assert repr(ct.arange(8)) == "tensor([0, 1, 2, 3,\n        4, 5, 6, 7])"
    ct.set_printoptions(profile="default")
    assert repr(ct.tensor([1.12345])) == "tensor([1.1235])"
    assert repr(ct.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"


def test_profiles_and_sci_mode():
    ct.set_printoptions(profile="full")
    assert "..." not in repr(ct.zeros(2000))
    ct.set_printoptions(profile="short")
    assert repr(ct.tensor([1.12345])) == "tensor([1.12])"
    ct.set_printoptions(profile="default", sci_mode=True)
    assert repr(ct.tensor([1.5, 2.0])) == "tensor([1.5000e+00, 2.0000e+00])"
    ct.set_printoptions(sci_mode=False)
    assert repr(ct.tensor([1e-6, 1.0])) == "tensor([0.0000, 1.0000])"
    with pytest.raises(ValueError, match="profile must be one of"):
        ct.set_printoptions(profile="long")


def test_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [
        dict(precision=2),
        dict(threshold=5, edgeitems=2),
        dict(sci_mode=True),
        dict(linewidth=30),
        dict(profile="short"),
    ]
    values = [[1.12345, -20.5, 3e-3, 7.0] * 3, list(range(12))]
    try:
        for opts in cases:
            ct.set_printoptions(**opts)
            torch.set_printoptions(**opts)
            for v in values:
                assert repr(ct.tensor(v)) == repr(torch.tensor(v)).replace("torch.", "coretorch.")
            ct.set_printoptions(profile="default")
            torch.set_printoptions(profile="default")
    finally:
        torch.set_printoptions(profile="default")
