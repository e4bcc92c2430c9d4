"""The tensor model: geometry, views sharing storage and version counter, basic indexing,
contiguous/clone/detach, and repr like PyTorch's."""

import numpy as np
import pytest

import coretorch as ct

# (name, coretorch/torch expression, numpy expression giving the same elements)
VIEWS = [
    ("view", lambda t: t.view(6, 4), lambda a: a.reshape(6, 4)),
    ("view_infer", lambda t: t.view(-1), lambda a: a.reshape(-1)),
    ("reshape_as_view", lambda t: t.reshape(4, -1), lambda a: a.reshape(4, -1)),
    ("transpose", lambda t: t.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("mT", lambda t: t.mT, lambda a: a.swapaxes(-2, -1)),
    ("permute", lambda t: t.permute(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
    (
        "expand",
        lambda t: t.unsqueeze(0).expand(3, 2, 3, 4),
        lambda a: np.broadcast_to(a[None], (3, 2, 3, 4)),
    ),
    (
        "expand_minus_one",
        lambda t: t[:, :1].expand(-1, 5, -1),
        lambda a: np.broadcast_to(a[:, :1], (2, 5, 4)),
    ),
    ("unsqueeze", lambda t: t.unsqueeze(1), lambda a: a[:, None]),
    ("unsqueeze_neg", lambda t: t.unsqueeze(-1), lambda a: a[..., None]),
    ("squeeze_dim", lambda t: t[:, :1].squeeze(1), lambda a: a[:, 0]),
    ("squeeze_all", lambda t: t[:1, :, :1].squeeze(), lambda a: a[0, :, 0]),
    ("slice_steps", lambda t: t[:, ::2, 1::2], lambda a: a[:, ::2, 1::2]),
    ("slice_range", lambda t: t[1:, 1:3], lambda a: a[1:, 1:3]),
    ("slice_negative", lambda t: t[..., -3:-1], lambda a: a[..., -3:-1]),
    ("slice_past_end", lambda t: t[:, 1:100], lambda a: a[:, 1:100]),
    ("select", lambda t: t.select(1, 2), lambda a: a[:, 2]),
    ("int_index", lambda t: t[1], lambda a: a[1]),
    ("negative_int_index", lambda t: t[-1, -2], lambda a: a[-1, -2]),
    ("narrow", lambda t: t.narrow(2, 1, 2), lambda a: a[:, :, 1:3]),
    (
        "as_strided",
        lambda t: t.as_strided((3, 3), (1, 2), 1),
        lambda a: np.lib.stride_tricks.as_strided(
            a.ravel()[1:], (3, 3), (a.itemsize, 2 * a.itemsize)
        ),
    ),
    ("none_ellipsis", lambda t: t[..., None, 1], lambda a: a[..., None, 1]),
    ("none_front", lambda t: t[None, ..., 0], lambda a: a[None, ..., 0]),
    ("ellipsis_step", lambda t: t[..., ::3], lambda a: a[..., ::3]),
    ("diagonal", lambda t: t.diagonal(0, 1, 2), lambda a: np.diagonal(a, 0, 1, 2)),
    (
        "chain",
        lambda t: t.transpose(0, 1)[1:, ::2].unsqueeze(0),
        lambda a: a.swapaxes(0, 1)[1:, ::2][None],
    ),
]
IDS = [v[0] for v in VIEWS]


def base(device, dtype=ct.float32):
    """A 2x3x4 tensor holding 0..23 (on devices without data, only its geometry)."""
    values = np.arange(24, dtype=dtype.numpy).reshape(2, 3, 4)
    if device == "meta":
        return ct.empty(2, 3, 4, dtype=dtype, device="meta")
    return ct.tensor(values, device=device)


@pytest.mark.parametrize("name,expr,np_expr", VIEWS, ids=IDS)
def test_view_shares_storage_and_version_counter(device, name, expr, np_expr):
    t = base(device)
    v = expr(t)
    assert v.untyped_storage() is t.untyped_storage()
    assert v._base is t
    assert v._version == t._version == 0
    t.add_(1)
    assert v._version == t._version == 1, "an in-place op on the base is seen by the view"
    if name not in ("expand", "expand_minus_one", "as_strided"):  # those overlap in memory
        v.add_(1)
        assert v._version == t._version == 2, "an in-place op on the view is seen by the base"


@pytest.mark.parametrize("name,expr,np_expr", VIEWS, ids=IDS)
def test_view_values_match_numpy(data_device, name, expr, np_expr):
    t = base(data_device)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    v = expr(t)
    np.testing.assert_array_equal(v.numpy(force=True), np_expr(a))
    assert tuple(v.shape) == np_expr(a).shape


@pytest.mark.parametrize("name,expr,np_expr", VIEWS, ids=IDS)
def test_view_geometry_matches_torch(device, name, expr, np_expr):
    torch = pytest.importorskip("torch")
    v = expr(base(device))
    want = expr(torch.arange(24, dtype=torch.float32).reshape(2, 3, 4))
    assert (tuple(v.shape), v.stride(), v.storage_offset(), v.is_contiguous()) == (
        tuple(want.shape),
        want.stride(),
        want.storage_offset(),
        want.is_contiguous(),
    )


def test_writes_through_a_view_reach_the_base(data_device):
    t = base(data_device)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t[:, ::2, 1::2].add_(100)
    a[:, ::2, 1::2] += 100
    t.transpose(0, 2)[1].fill_(-1)
    a.swapaxes(0, 2)[1] = -1
    t[1, 2] = 7.5
    a[1, 2] = 7.5
    np.testing.assert_array_equal(t.cpu().numpy(), a)


def test_geometry_accessors(device):
    t = base(device)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, ct.Size)
    assert repr(t.shape) == "coretorch.Size([2, 3, 4])"
    assert t.size() == (2, 3, 4) and t.size(-1) == 4 and t.size(0) == 2
    assert t.stride() == (12, 4, 1) and t.stride(1) == 4
    assert t.ndim == t.dim() == 3 and t.numel() == 24 and len(t) == 2
    assert t.element_size() == 4 and t.nbytes == 96 and t.storage_offset() == 0
    assert t[1, 1:].storage_offset() == 16
    with pytest.raises(
        IndexError,
        match=r"Dimension out of range \(expected to be in range of "
        r"\[-3, 2\], but got 3\)",
    ):
        t.size(3)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ct.empty((), device=device))


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda t: t.view(5, 5), RuntimeError, "invalid for input of size 24"),
        (lambda t: t.view(-1, -1), RuntimeError, "only one dimension can be inferred"),
        (lambda t: t.transpose(0, 1).view(24), RuntimeError, "view size is not compatible"),
        (lambda t: t[0, 0, 0, 0], IndexError, "too many indices for tensor of dimension 3"),
        (lambda t: t[..., ...], IndexError, "single ellipsis"),
        (lambda t: t[::-1], ValueError, "step must be greater than zero"),
        (lambda t: t[5], IndexError, "out of range"),
        (lambda t: t.permute(0, 1), RuntimeError, "number of dims don't match"),
        (lambda t: t.expand(3, 3, 4), RuntimeError, "expand"),
        (lambda t: t.narrow(0, 1, 5), RuntimeError, "narrow"),
        (lambda t: t.as_strided((10, 10), (10, 1)), RuntimeError, "out of bounds"),
    ],
)
def test_bad_views_raise_like_torch(device, call, exc, match):
    with pytest.raises(exc, match=match):
        call(base(device))


def test_reshape_copies_when_no_view_is_possible(device):
    t = base(device)
    r = t.transpose(0, 1).reshape(24)
    assert r.untyped_storage() is not t.untyped_storage() and r.is_contiguous()
    assert r.shape == (24,)


def test_reshape_copy_values(data_device):
    t = base(data_device)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(
        t.transpose(0, 1).reshape(4, 6).cpu().numpy(), a.swapaxes(0, 1).reshape(4, 6)
    )


def test_contiguous(device):
    t = base(device)
    assert t.is_contiguous() and t.contiguous() is t
    nt = t.permute(2, 0, 1)
    assert not nt.is_contiguous()
    c = nt.contiguous()
    assert c.is_contiguous() and c.stride() == (6, 3, 1) and c.shape == (4, 2, 3)
    assert c.untyped_storage() is not t.untyped_storage()
    assert t[:1].expand(1, 3, 4).is_contiguous(), "the stride of a size-1 dim does not matter"
    assert ct.empty(3, 1, 4, device=device).transpose(0, 1).is_contiguous()
    assert not t[:, :1].is_contiguous()
    assert not t.unsqueeze(0).expand(2, 2, 3, 4).is_contiguous()
    assert ct.empty(0, 3, device=device).transpose(0, 1).is_contiguous()


def test_contiguous_values(data_device):
    t = base(data_device)
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(
        t.permute(2, 0, 1).contiguous().cpu().numpy(), a.transpose(2, 0, 1)
    )


def test_clone_is_independent(device):
    t = base(device)
    c = t[:, 1:].clone()
    assert c.untyped_storage() is not t.untyped_storage() and c.is_contiguous()
    assert c.shape == (2, 2, 4) and c._base is None
    before = c._version
    c.add_(1)
    assert c._version == before + 1 and t._version == 0


def test_clone_values(data_device):
    t = base(data_device)
    c = t.clone()
    c.add_(1)
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    np.testing.assert_array_equal(
        c.cpu().numpy(), np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
    )


def test_detach_shares_storage_and_version(device):
    t = base(device).requires_grad_()
    d = t.detach()
    assert not d.requires_grad and t.requires_grad
    assert d.untyped_storage() is t.untyped_storage()
    assert d.shape == t.shape and d.stride() == t.stride()
    d.add_(1)
    assert t._version == d._version == 1


def test_views_of_views_share_one_base_and_counter(device):
    t = base(device)
    v = t[1].transpose(0, 1)[::2]
    assert v._base is t and v.untyped_storage() is t.untyped_storage()
    t.add_(1)
    assert v._version == 1


def test_scalar_conversion(data_device):
    t = ct.tensor([[2.5]], device=data_device)
    assert t.item() == 2.5 and float(t) == 2.5 and int(t) == 2 and bool(t)
    assert ct.tensor([1, 2], device=data_device).tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(ct.tensor([1, 2], device=data_device))
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        ct.tensor([1, 2], device=data_device).item()


# ---- repr ------------------------------------------------------------------------------------

REPR_CASES = [
    ([1.0, 2.5, 3.0], None),
    ([1.0, 2.0, 3.0], None),
    ([[1, 2], [3, 4]], None),
    ([True, False], None),
    (3.5, None),
    (7, None),
    ([], None),
    ([1.5, -2.25], "float64"),
    ([1, 2], "int32"),
    ([1, 2], "uint8"),
    ([0.0001, 1000.0], None),
    ([1e-8, 1.0], None),
    ([1e10, 1.0], None),
    ([1.0, 2000.0], None),
    ([float("nan"), 1.0, float("inf")], None),
    ([[1.123456, -2.0], [3.0, 4.0]], None),
    (list(range(2000)), None),
    ([[0.5] * 5] * 300, None),
    ([1.0, 2.0], "float16"),
    ([-1.5, 100.25, 3.0], None),
    ([123456789.0, 1.0], None),
    ([0.0, 0.0], None),
    ([-0.0, 1.0], None),
    ([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]], None),
    ([1, -2, 300], "int16"),
    ([i / 29 for i in range(30)], "float64"),
    ([[True, False]], None),
    ([1e-5, 2e-5], None),
    ([float("nan")], None),
    ([1e20], None),
    ([[1.5] * 40] * 40, None),
    ([[1] * 3000], None),
    ([[[1.0] * 10] * 10] * 20, None),
    (list(range(-5, 200)), None),
    ([[1e-5, 1.5]] * 700, None),
]


@pytest.mark.parametrize("data,dtype", REPR_CASES, ids=[str(i) for i in range(len(REPR_CASES))])
def test_repr_matches_torch(data, dtype):
    torch = pytest.importorskip("torch")
    want = repr(torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None))
    got = repr(ct.tensor(data, dtype=getattr(ct, dtype) if dtype else None))
    assert got == want.replace("torch", "coretorch")


def test_repr_examples_without_torch():
    assert repr(ct.tensor([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert repr(ct.tensor([[1, 2], [3, 4]])) == "tensor([[1, 2],\n        [3, 4]])"
    assert (
        repr(ct.tensor([1.0, 2.0], dtype=ct.float64)) == "tensor([1., 2.], dtype=coretorch.float64)"
    )
    assert repr(ct.tensor([1e-8, 1.0])) == "tensor([1.0000e-08, 1.0000e+00])"
    assert (
        repr(ct.tensor(list(range(2000)))) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    )
    assert repr(ct.zeros(2, requires_grad=True)) == "tensor([0., 0.], requires_grad=True)"
    assert repr(ct.empty(0, 3, dtype=ct.int32)) == "tensor([], size=(0, 3), dtype=coretorch.int32)"


@pytest.mark.parametrize(
    "shape,dtype,want",
    [
        ((2, 3), "float32", "tensor(..., device='meta', size=(2, 3))"),
        ((2,), "int64", "tensor(..., device='meta', size=(2,), dtype=coretorch.int64)"),
        ((0, 3), "int32", "tensor(..., device='meta', size=(0, 3), dtype=coretorch.int32)"),
        ((), "float32", "tensor(..., device='meta', size=())"),
        ((2,), "bool", "tensor(..., device='meta', size=(2,), dtype=coretorch.bool)"),
    ],
)
def test_meta_repr(shape, dtype, want):
    t = ct.empty(shape, dtype=getattr(ct, dtype), device="meta")
    assert repr(t) == want
    torch = pytest.importorskip("torch")
    tt = torch.empty(shape, dtype=getattr(torch, dtype), device="meta")
    assert repr(tt).replace("torch", "coretorch") == want


def test_meta_repr_requires_grad():
    assert (
        repr(ct.zeros(2, device="meta", requires_grad=True))
        == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    )


def test_int_arguments_accept_0d_tensors(device):
    # an int argument given as a 0-d integer tensor is read into an int when the call is bound,
    # so geometry (storage offsets, sizes) holds only Python ints
    from coretorch.device import get_device_type

    t = base(device)
    allocator = get_device_type(device).allocator
    one, two = ct.tensor(1), ct.tensor(2)
    before = allocator.allocated
    views = [
        ct.narrow(t, 0, one, 1),
        t.narrow(two, one, two),
        t.select(one, two),
        t[one:two],
        t.view(two, -1),
        t.unsqueeze(two),
        t.transpose(one, two),
        t.expand(two, 2, 3, 4),
        t.diagonal(0, one, two),
        t.unfold(2, two, one),
    ]
    for v in views:
        assert type(v.storage_offset()) is int and all(type(s) is int for s in v.stride())
        assert all(type(s) is int for s in v.shape) and type(v.data_ptr()) is int
    assert views[0].storage_offset() == 12 and views[2].storage_offset() == 8
    assert allocator.allocated == before, "views allocate nothing"
    z = ct.zeros((two, 3), device=device)
    assert z.shape == (2, 3) and ct.arange(ct.tensor(5), device=device).shape == (5,)
    del views, z
    assert allocator.allocated == before


def test_narrow_with_0d_tensor_start_values(data_device):
    t = ct.arange(10.0, device=data_device)
    np.testing.assert_array_equal(ct.narrow(t, 0, ct.tensor(1), 2).numpy(force=True), [1.0, 2.0])
    with pytest.raises(
        TypeError,
        match=r"narrow\(\): argument 'start' \(position 3\) must be "
        r"int, not float",
    ):
        ct.narrow(t, 0, 1.5, 2)
