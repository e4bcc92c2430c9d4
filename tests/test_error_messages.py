"""Errors name the op the user called, with PyTorch's exception types.

A composite op re-raises what an op it is written with (or a meta rule helper it shares) raised
under its own name (`coretorch.ops.declare.renamed_error`); ``nn.functional`` functions do the
same. Empty reductions and ``stack([])`` raise PyTorch's types; sizes that cannot be allocated
raise a RuntimeError naming the size and the bytes asked for, not numpy's MemoryError."""

from __future__ import annotations

import re

import pytest

import coretorch as ct
import coretorch.nn.functional as F
from coretorch.ops import REGISTRY
from coretorch.ops.declare import renamed_error
from coretorch.testing.opinfo import OP_DB

# the user's call -> the name its error must start with (each used to name an inner op)
NAMED = {
    "addmm": lambda: ct.addmm(ct.ones(2, 2), ct.ones(2, 3), ct.ones(4, 5)),
    "split": lambda: ct.ones(4).split([1, 2]),
    "bilinear": lambda: F.bilinear(ct.ones(2, 3), ct.ones(2, 4), ct.ones(5, 3, 3)),
    "mse_loss": lambda: F.mse_loss(ct.ones(2, 3), ct.ones(4, 3)),
    "kl_div": lambda: F.kl_div(ct.ones(2, 3), ct.ones(2, 4)),
    "pairwise_distance": lambda: F.pairwise_distance(ct.ones(2, 3), ct.ones(2, 4)),
    "cosine_similarity": lambda: F.cosine_similarity(ct.ones(2, 3), ct.ones(2, 4)),
    "triplet_margin_loss": lambda: F.triplet_margin_loss(
        ct.ones(2, 3), ct.ones(2, 4), ct.ones(2, 3)
    ),
    "hinge_embedding_loss": lambda: F.hinge_embedding_loss(ct.ones(2, 3), ct.ones(2, 4)),
    "normalize": lambda: F.normalize(ct.ones(2, 3), dim=5),
    "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(
        ct.ones(1, 2, 3), ct.ones(1, 2, 4), ct.ones(1, 2, 4)
    ),
    "multi_head_attention_forward": lambda: ct.nn.MultiheadAttention(4, 2)(
        ct.ones(3, 1, 4), ct.ones(3, 1, 5), ct.ones(3, 1, 5)
    ),
    "group_norm": lambda: F.group_norm(ct.ones(2, 4, 3), 2, ct.ones(3)),
    "batch_norm": lambda: F.batch_norm(ct.ones(2, 3), ct.ones(4), ct.ones(4)),
    "instance_norm": lambda: F.instance_norm(ct.ones(2, 3, 4), weight=ct.ones(5)),
}


@pytest.mark.parametrize("name", sorted(NAMED))
def test_error_names_the_called_op(name, device):
    with ct.device(device), pytest.raises((RuntimeError, IndexError, ValueError)) as info:
        NAMED[name]()
    assert str(info.value).startswith(f"{name}(): "), str(info.value)


def test_error_types_match_pytorch_for_named_calls():
    torch = pytest.importorskip("torch")
    for name, call in NAMED.items():
        with pytest.raises(Exception) as ours:
            call()
        theirs = _torch_error(torch, name)
        assert isinstance(ours.value, theirs), (name, type(ours.value), theirs)


def _torch_error(torch, name: str) -> type:
    src = NAMED[name]
    g = dict(src.__globals__, ct=torch, F=torch.nn.functional)
    fn = type(src)(src.__code__, g)
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - its type is the answer
        return type(e)
    raise AssertionError(f"{name}: PyTorch accepted the call")


def _prefix(message: str) -> str | None:
    m = re.match(r"(\w+)\(\): ", message)
    return m.group(1) if m else None


@pytest.mark.parametrize(
    "opinfo",
    [o for o in OP_DB if o.error_inputs_func is not None and o.name in REGISTRY],
    ids=lambda o: o.name,
)
def test_every_error_input_names_its_op(opinfo):
    """Sweep: an error message that starts with an op name starts with this op's name."""
    wrong = []
    for e in opinfo.error_inputs("cpu", opinfo.dtypes[0]):
        try:
            opinfo.op(e.sample.input, *e.sample.args, **e.sample.kwargs)
        except Exception as err:  # noqa: BLE001
            named = _prefix(str(err))
            if named is not None and named not in (opinfo.name, opinfo.name.rstrip("_")):
                wrong.append(f"{e.sample!r}: {err}")
    assert not wrong, "\n".join(wrong)


def test_renamed_error_keeps_type_and_other_messages():
    e = IndexError("mm(): bad")
    r = renamed_error(e, "addmm")
    assert type(r) is IndexError and str(r) == "addmm(): bad"
    plain = RuntimeError("index out of range in self")
    assert renamed_error(plain, "addmm") is plain
    own = RuntimeError("add(): x")
    assert renamed_error(own, "add_") is own


# ---- exception types of empty reductions and stack([]) ---------------------------------------

EMPTY = {
    "max": lambda m: m.zeros(0).max(),
    "min": lambda m: m.zeros(0).min(),
    "amax": lambda m: m.zeros(0).amax(),
    "amin": lambda m: m.zeros(0).amin(),
    "argmax": lambda m: m.zeros(0).argmax(),
    "argmin": lambda m: m.zeros(0).argmin(),
    "max_dim": lambda m: m.zeros(0, 3).max(0),
    "min_dim": lambda m: m.zeros(0, 3).min(0),
    "aminmax": lambda m: m.aminmax(m.zeros(0)),
    "aminmax_dim": lambda m: m.aminmax(m.zeros(0, 3), dim=0),
    "kthvalue": lambda m: m.zeros(0).kthvalue(1),
    "kthvalue_k": lambda m: m.zeros(3).kthvalue(5),
    "stack": lambda m: m.stack([]),
    "cat": lambda m: m.cat([]),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_input_error_types_match_pytorch(name, device):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        EMPTY[name](torch)
    with ct.device(device), pytest.raises(Exception) as ours:
        EMPTY[name](ct)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)


def test_stack_of_nothing_is_a_runtime_error(device):
    with (
        ct.device(device),
        pytest.raises(
            RuntimeError,
            match=r"stack\(\): stack expects a "
            r"non-empty TensorList",
        ),
    ):
        ct.stack([])


# ---- sizes that cannot be allocated ---------------------------------------------------------


@pytest.mark.parametrize(
    "call, shape, nbytes",
    [
        (lambda d: ct.zeros(10**12, device=d), [10**12], 4 * 10**12),
        (lambda d: ct.ones(10**6, 10**6, dtype=ct.float64, device=d), [10**6, 10**6], 8 * 10**12),
        (lambda d: ct.empty(2**62, dtype=ct.int8, device=d), [2**62], 2**62),
        (lambda d: ct.zeros(2**63 - 1, device=d), [2**63 - 1], 4 * (2**63 - 1)),
        (lambda d: ct.ones(1, device=d).expand(10**12).clone(), [10**12], 4 * 10**12),
    ],
    ids=["zeros", "ones-2d", "empty", "zeros-2**63", "clone-expanded"],
)
def test_impossible_sizes_raise_runtime_error_naming_size_and_bytes(
    call, shape, nbytes, data_device
):
    with pytest.raises(RuntimeError) as info:
        call(data_device)
    assert f"{nbytes} bytes" in str(info.value) and str(shape) in str(info.value)
    assert not isinstance(info.value, MemoryError)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: ct.zeros(-1, device=d),
        lambda d: ct.empty(2, -3, device=d),
        lambda d: ct.full((-2,), 1.0, device=d),
    ],
    ids=["zeros", "empty", "full"],
)
def test_negative_sizes_raise_runtime_error_naming_the_size(call, device):
    with pytest.raises(RuntimeError, match=r"negative dimension -\d+: \[.*-\d+\]"):
        call(device)
