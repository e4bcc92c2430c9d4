"""coretorch.device: parsing, equality, str/repr, errors, and the default-device context."""

import threading

import pytest

import coretorch as ct


@pytest.mark.parametrize(
    "spec,type_,index",
    [
        (("cpu",), "cpu", None),
        (("cuda",), "cuda", None),
        (("cuda:1",), "cuda", 1),
        (("cuda", 1), "cuda", 1),
        (("meta",), "meta", None),
        (("cuda:0",), "cuda", 0),
    ],
)
def test_parse(spec, type_, index):
    d = ct.device(*spec)
    assert (d.type, d.index) == (type_, index)


def test_equality_and_hash():
    assert ct.device("cuda:1") == ct.device("cuda", 1)
    assert ct.device("cuda") != ct.device("cuda:0")
    assert ct.device("cpu") != ct.device("meta")
    assert hash(ct.device("cuda:1")) == hash(ct.device("cuda", 1))
    assert len({ct.device("cuda:1"), ct.device("cuda", 1), ct.device("cpu")}) == 2
    assert ct.device(ct.device("meta")) == ct.device("meta")


@pytest.mark.parametrize("spec", ["cpu", "cuda", "cuda:1", "meta", "cuda:12"])
def test_str_and_repr_match_torch(spec):
    d = ct.device(spec)
    assert str(d) == spec
    want_repr = (
        f"device(type='{d.type}')"
        if d.index is None
        else f"device(type='{d.type}', index={d.index})"
    )
    assert repr(d) == want_repr
    torch = pytest.importorskip("torch")
    assert repr(d) == repr(torch.device(spec)) and str(d) == str(torch.device(spec))


@pytest.mark.parametrize(
    "args,match",
    [
        (("cuda:x",), "Invalid device string: 'cuda:x'"),
        (("cuda:-1",), "Invalid device string"),
        (("cuda:1:2",), "Invalid device string"),
        (("foo",), "Expected one of .*cpu.*device type at start of device string: foo"),
        (("cuda:1", 1), "must not include an index because index was passed explicitly"),
        (("cuda", -1), "Device index must not be negative"),
        (("",), "Device string must not be empty"),
    ],
)
def test_errors_match_torch(args, match):
    with pytest.raises(RuntimeError, match=match):
        ct.device(*args)
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError):
        torch.device(*args)


def test_non_string_is_a_type_error():
    with pytest.raises(TypeError, match="expected a string or device, got list"):
        ct.device(["cpu"])


def test_device_without_backend_is_named_in_the_error():
    from coretorch.device import device_types

    if "cuda" in device_types():
        pytest.skip("a cuda backend is loaded")
    with pytest.raises(RuntimeError, match="no backend for device type 'cuda' is loaded"):
        ct.zeros(2, device="cuda")


def test_default_device_context_for_factories():
    assert ct.get_default_device() == ct.device("cpu")
    with ct.device("meta") as d:
        assert d == ct.device("meta")
        assert ct.get_default_device() == ct.device("meta")
        assert ct.zeros(2, 3).device == ct.device("meta")
        assert ct.empty(4).is_meta
        assert ct.ones(2, device="cpu").device == ct.device("cpu")  # explicit device wins
    assert ct.get_default_device() == ct.device("cpu")
    assert ct.zeros(2).device == ct.device("cpu")


def test_default_device_context_nests_and_restores_after_error():
    with ct.device("meta"):
        with ct.device("cpu"):
            assert ct.zeros(1).device == ct.device("cpu")
        assert ct.zeros(1).device == ct.device("meta")
        with pytest.raises(ZeroDivisionError):
            with ct.device("cpu"):
                1 / 0
        assert ct.zeros(1).device == ct.device("meta")
    assert ct.zeros(1).device == ct.device("cpu")


def test_default_device_context_is_thread_local():
    seen = []
    started, release = threading.Event(), threading.Event()

    def other():
        seen.append(ct.zeros(1).device)  # the main thread is inside `with device("meta")` now
        started.set()
        release.wait(5)
        with ct.device("meta"):
            seen.append(ct.zeros(1).device)

    th = threading.Thread(target=other)
    with ct.device("meta"):
        th.start()
        assert started.wait(5)
        assert ct.zeros(1).device == ct.device("meta")
    release.set()
    th.join()
    assert seen == [ct.device("cpu"), ct.device("meta")]
    assert ct.zeros(1).device == ct.device("cpu")


def test_set_default_device():
    try:
        ct.set_default_device("meta")
        assert ct.zeros(2).is_meta
        with ct.device("cpu"):
            assert ct.zeros(2).is_cpu
    finally:
        ct.set_default_device(None)
    assert ct.get_default_device() == ct.device("cpu")


def test_tensor_device_properties(device):
    t = ct.zeros(2, device=device)
    assert t.device == ct.device(device)
    assert t.is_meta == (device == "meta") and t.is_cpu == (device == "cpu")
    assert t.get_device() == (-1 if device == "cpu" else 0)
