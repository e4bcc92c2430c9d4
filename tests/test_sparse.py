"""Sparse COO tensors: construction and validation, printing (PyTorch's format), coalesce,
dense <-> sparse, sparse @ dense with gradients to the dense operand and to the values
(gradcheck in float64), sparse.sum/softmax, the clear refusal of dense-only ops, the meta
device (shapes), and a 2-layer GCN on a sparse normalized adjacency against the dense
adjacency and PyTorch."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import coretorch as ct
from coretorch.autograd.gradcheck import gradcheck

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) twice: uncoalesced
VAL = [3.0, 4.0, 5.0, 1.0]


def _dense_ref(idx, val, size) -> np.ndarray:
    out = np.zeros(size, dtype=np.float64)
    np.add.at(out, tuple(np.asarray(idx)), np.asarray(val, dtype=np.float64))
    return out


def _np(t):
    return t.detach().cpu().numpy()


# ---- construction ---------------------------------------------------------------------------


def test_construction_and_metadata(data_device):
    s = ct.sparse_coo_tensor(IDX, VAL, (2, 3), device=data_device)
    assert s.is_sparse and s.layout is ct.sparse_coo and ct.ones(2).layout is ct.strided
    assert not ct.ones(2).is_sparse
    assert s.shape == (2, 3) and s.dtype is ct.float32 and s.device.type == data_device
    assert (s.sparse_dim(), s.dense_dim(), s._nnz(), s.ndim) == (2, 0, 4, 2)
    assert not s.is_coalesced()
    np.testing.assert_array_equal(_np(s._indices()), IDX)
    np.testing.assert_array_equal(_np(s.to_dense()), _dense_ref(IDX, VAL, (2, 3)))
    # size inferred from the indices; dense dims from the values
    assert ct.sparse_coo_tensor(IDX, VAL, device=data_device).shape == (2, 3)
    h = ct.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], device=data_device)
    assert h.shape == (3, 2) and (h.sparse_dim(), h.dense_dim()) == (1, 1)
    np.testing.assert_array_equal(_np(h.to_dense()), [[1, 2], [0, 0], [3, 4]])
    assert ct.sparse_coo_tensor([[1]], [2.0], (3,)).is_coalesced()  # nnz <= 1, as PyTorch


def test_construction_dtype_and_sharing():
    v = ct.tensor([1.0, 2.0])
    s = ct.sparse_coo_tensor([[0, 1]], v, (2,))
    assert s._values().data_ptr() == v.data_ptr()  # no copy, as PyTorch
    assert not v.requires_grad and s.requires_grad_().requires_grad and not v.requires_grad
    d = ct.sparse_coo_tensor([[0, 1]], [1, 2], (2,), dtype=ct.float64)
    assert d.dtype is ct.float64 and d.double().dtype is ct.float64
    assert d.float().dtype is ct.float32 and d.float().is_sparse


def test_legacy_constructors():
    s = ct.sparse.FloatTensor(ct.tensor(IDX), ct.tensor(VAL), ct.Size([2, 3]))
    assert s.is_sparse and s.dtype is ct.float32 and s.shape == (2, 3) and s._nnz() == 4
    d = ct.sparse.FloatTensor(ct.tensor(IDX), ct.tensor(VAL, dtype=ct.float64))
    assert d.dtype is ct.float64 and d.shape == (2, 3)  # values keep their dtype, as PyTorch
    e = ct.sparse.LongTensor(2, 3)
    assert e.is_sparse and e.dtype is ct.int64 and e.shape == (2, 3) and e._nnz() == 0
    with pytest.raises(TypeError, match=r"sparse.FloatTensor\(\): expected \(indices, values"):
        ct.sparse.FloatTensor([0, 1], 2.0)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        (([0, 1], [1.0, 2.0]), {}, r"indices must be sparse_dim x nnz, but got: \[2\]"),
        (
            ([[0, 1, 2]], [1.0, 2.0]),
            {},
            "same nnz, but got nnz from indices: 3, nnz from values: 2",
        ),
        (([[0, 2]], [1.0, 2.0], (2,)), {}, "for dim 0, size is 2 but found index 2"),
        (([[0, -1]], [1.0, 2.0], (2,)), {}, "found negative index -1 for dim 0"),
        (([[0, 1]], [1.0, 2.0], (2, 3)), {}, r"sparse_dim \(1\) \+ dense_dim \(0\), but got 2"),
        (([[0, 1]], [[1.0], [2.0]], (2, 3)), {}, r"values has incorrect size, expected \[2, 3\]"),
        ((ct.tensor([[0, 1]], dtype=ct.int32), [1.0, 2.0]), {}, "indices must be an int64 tensor"),
        (([[0]], 1.0), {}, "values must have at least one dim"),
    ],
)
def test_construction_errors(args, kwargs, match):
    with pytest.raises(RuntimeError, match=match):
        ct.sparse_coo_tensor(*args, **kwargs)


# ---- printing -------------------------------------------------------------------------------


def _reprs():
    yield "plain", lambda m: m.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
    yield "dense dims", lambda m: m.sparse_coo_tensor([[0, 2]], [[1.5, 2.0], [3.0, 4.25]], (3, 2))
    yield (
        "float64 grad",
        lambda m: m.sparse_coo_tensor(
            [[0, 3]], [1.0, 2.0], (5,), dtype=m.float64, requires_grad=True
        ),
    )
    yield "empty", lambda m: m.sparse_coo_tensor(m.zeros((2, 0), dtype=m.int64), m.zeros(0), (2, 2))


@pytest.mark.parametrize("name,make", list(_reprs()), ids=[n for n, _ in _reprs()])
def test_repr_matches_pytorch(name, make):
    torch = pytest.importorskip("torch")
    assert repr(make(ct)) == repr(make(torch)).replace("torch.", "coretorch.")


def test_repr_meta():
    s = ct.sparse_coo_tensor(
        ct.zeros((2, 3), dtype=ct.int64, device="meta"), ct.zeros(3, device="meta"), (4, 4)
    )
    assert repr(s) == (
        "tensor(indices=tensor(..., size=(2, 3)),\n"
        "       values=tensor(..., size=(3,)),\n"
        "       device='meta', size=(4, 4), layout=coretorch.sparse_coo)"
    )


# ---- coalesce and conversions -----------------------------------------------------------------


def test_coalesce(data_device):
    s = ct.sparse_coo_tensor(
        [[1, 0, 1, 0], [2, 2, 0, 2]], [1.0, 2.0, 3.0, 4.0], (2, 3), device=data_device
    )
    with pytest.raises(RuntimeError, match="uncoalesced tensor, please call .coalesce"):
        s.indices()
    c = s.coalesce()
    assert c.is_coalesced() and c._nnz() == 3 and c.coalesce() is c
    np.testing.assert_array_equal(_np(c.indices()), [[0, 1, 1], [2, 0, 2]])
    np.testing.assert_array_equal(_np(c.values()), [6.0, 3.0, 1.0])
    np.testing.assert_array_equal(_np(c.to_dense()), _np(s.to_dense()))


def test_to_sparse_roundtrip_and_grad(data_device):
    x = ct.tensor(
        [[0.0, 2.0, 0.0], [1.5, 0.0, -3.0]],
        dtype=ct.float64,
        device=data_device,
        requires_grad=True,
    )
    s = x.to_sparse()
    assert s.is_coalesced() and s._nnz() == 3
    np.testing.assert_array_equal(_np(s.indices()), [[0, 1, 1], [1, 0, 2]])
    np.testing.assert_array_equal(_np(s.to_dense()), _np(x))
    (
        s.to_dense() * ct.arange(6, dtype=ct.float64, device=data_device).reshape(2, 3)
    ).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), [[0, 1, 0], [3, 0, 5]])  # only at non-zeros
    h = ct.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]], device=data_device).to_sparse(1)
    assert (h.sparse_dim(), h.dense_dim(), h._nnz()) == (1, 1, 2)
    np.testing.assert_array_equal(_np(h.values()), [[1, 0], [0, 2]])
    assert x.to_dense() is x and x.sparse_dim() == 0 and x.dense_dim() == 2


def test_to_device_detach_clone(data_device):
    s = ct.sparse_coo_tensor(IDX, VAL, (2, 3), requires_grad=True)
    t = s.to(data_device)
    assert t.is_sparse and t.device.type == data_device and t._indices().device.type == data_device
    assert s.to("cpu") is s
    d = s.detach()
    assert d.is_sparse and not d.requires_grad and s.requires_grad
    c = s.clone()
    assert c.is_sparse and c.grad_fn is not None
    assert s.cpu() is s and s.data.is_sparse and not s.data.requires_grad
    k = copy.deepcopy(s)
    assert k.is_sparse and k.is_leaf and k.requires_grad and k._values() is not s._values()
    np.testing.assert_array_equal(_np(c.to_dense()), _np(s.to_dense()))


# ---- products and gradients ----------------------------------------------------------------


def _pair(device, requires_grad=True):
    rng = np.random.default_rng(0)
    idx = np.array([[0, 2, 1, 2, 0, 3], [1, 0, 3, 0, 4, 4]])
    val = ct.tensor(
        rng.standard_normal(6), dtype=ct.float64, device=device, requires_grad=requires_grad
    )
    dense = ct.tensor(
        rng.standard_normal((5, 3)), dtype=ct.float64, device=device, requires_grad=requires_grad
    )
    return idx, val, dense


def test_mm_forward_and_gradients(data_device):
    idx, val, dense = _pair(data_device)
    s = ct.sparse_coo_tensor(idx, val, (4, 5))
    ref = _dense_ref(idx, _np(val), (4, 5))
    for out in (
        ct.sparse.mm(s, dense),
        ct.spmm(s, dense),
        ct.mm(s, dense),
        s @ dense,
        ct.matmul(s, dense),
        s.mm(dense),
    ):
        np.testing.assert_allclose(_np(out), ref @ _np(dense), rtol=1e-12)
    w = ct.tensor(np.arange(12.0).reshape(4, 3), dtype=ct.float64, device=data_device)
    (ct.sparse.mm(s, dense) * w).sum().backward()
    np.testing.assert_allclose(_np(dense.grad), ref.T @ _np(w), rtol=1e-12)
    # d/d a[r, c] = (w @ dense.T)[r, c] at each stored (r, c), duplicates included
    full = _np(w) @ _np(dense).T
    np.testing.assert_allclose(_np(val.grad), full[idx[0], idx[1]], rtol=1e-12)


def test_mm_gradcheck():
    idx, val, dense = _pair("cpu")
    assert gradcheck(
        lambda v, d: ct.sparse.mm(ct.sparse_coo_tensor(idx, v, (4, 5)), d), (val, dense)
    )
    assert gradcheck(
        lambda v, d: ct.sparse_coo_tensor(idx, v, (4, 5)).coalesce().to_dense() * 1.5,
        (val, dense[:4, :1].detach()),
    )
    assert gradcheck(
        lambda v: ct.sparse.softmax(ct.sparse_coo_tensor(idx, v, (4, 5)), 1)._values(), (val,)
    )


def test_dense_times_sparse_and_vector(data_device):
    idx, val, dense = _pair(data_device, requires_grad=False)
    s = ct.sparse_coo_tensor(idx, val, (4, 5))
    ref = _dense_ref(idx, _np(val), (4, 5))
    left = ct.tensor(np.ones((2, 4)), dtype=ct.float64, device=data_device)
    np.testing.assert_allclose(_np(ct.mm(left, s)), _np(left) @ ref, rtol=1e-12)
    np.testing.assert_allclose(_np(s @ dense[:, 0]), ref @ _np(dense[:, 0]), rtol=1e-12)
    np.testing.assert_allclose(_np(s.t().to_dense()), ref.T)
    bias = ct.tensor(np.full((4, 3), 0.5), dtype=ct.float64, device=data_device)
    np.testing.assert_allclose(
        _np(ct.sparse.addmm(bias, s, dense, beta=2, alpha=3)),
        1.0 + 3 * ref @ _np(dense),
        rtol=1e-12,
    )
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(4x5 and 4x3\)"):
        ct.sparse.mm(s, dense[:4])
    with pytest.raises(RuntimeError, match="sparse @ sparse is not supported"):
        ct.sparse.mm(s, s.t())


def test_sparse_leaf_grad_matches_pytorch():
    torch = pytest.importorskip("torch")
    idx, val, dense = _pair("cpu", requires_grad=False)
    s = ct.sparse_coo_tensor(idx, val, (4, 5), requires_grad=True)
    ct.sparse.mm(s, dense).pow(2).sum().backward()
    ts = torch.sparse_coo_tensor(
        torch.tensor(idx), torch.tensor(_np(val)), (4, 5), requires_grad=True
    )
    torch.sparse.mm(ts, torch.tensor(_np(dense))).pow(2).sum().backward()
    assert s.grad.is_sparse and s.grad.shape == (4, 5)
    np.testing.assert_allclose(_np(s.grad.to_dense()), ts.grad.to_dense().numpy(), rtol=1e-12)
    s.grad = None
    assert s.grad is None


def test_sum_softmax_add_mul(data_device):
    s = ct.sparse_coo_tensor(IDX, VAL, (2, 3), device=data_device)
    ref = _dense_ref(IDX, VAL, (2, 3))
    assert float(s.sum()) == float(ct.sparse.sum(s)) == ref.sum()
    r = ct.sparse.sum(s, 1)
    assert r.is_sparse and r.shape == (2,)
    np.testing.assert_array_equal(_np(r.to_dense()), ref.sum(1))
    full = ct.sparse.sum(s, (0, 1))
    assert not full.is_sparse and float(full) == ref.sum()
    h = ct.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]], device=data_device)
    np.testing.assert_array_equal(_np(ct.sparse.sum(h, 1).to_dense()), [3, 0, 7])
    np.testing.assert_array_equal(_np(ct.sparse.sum(h, 0)), [4, 6])
    sm = ct.sparse.softmax(s.coalesce(), 1)
    # row 0 holds (0, 2) = 3 + 1; row 1 holds 4 and 5: softmax over the specified ones only
    e = np.exp([4.0 - 5.0, 5.0 - 5.0])
    np.testing.assert_allclose(_np(sm.values()), [1.0, *(e / e.sum())], rtol=1e-6)
    np.testing.assert_array_equal(_np((s + s).to_dense()), 2 * ref)
    np.testing.assert_array_equal(_np(ct.ones(2, 3, device=data_device) + s), 1 + ref)
    np.testing.assert_array_equal(_np((s * 2).to_dense()), 2 * ref)
    np.testing.assert_array_equal(_np((-s).to_dense()), -ref)


def test_softmax_matches_pytorch():
    torch = pytest.importorskip("torch")
    idx, val, _ = _pair("cpu", requires_grad=False)
    big = _np(val) * 400  # rows far apart: needs the per-row max
    ours = ct.sparse.softmax(ct.sparse_coo_tensor(idx, big, (4, 5)).coalesce(), 0)
    theirs = torch.sparse.softmax(
        torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(big), (4, 5)).coalesce(), 0
    )
    np.testing.assert_allclose(_np(ours.to_dense()), theirs.to_dense().numpy(), rtol=1e-12)


# ---- refusals -------------------------------------------------------------------------------


def test_dense_only_ops_refuse_clearly():
    s = ct.sparse_coo_tensor(IDX, VAL, (2, 3))
    for call, op in [
        (lambda: ct.exp(s), "exp"),
        (lambda: s.relu(), "relu"),
        (lambda: s.view(6), "view"),
        (lambda: s.numpy(), "numpy"),
        (lambda: s[0], "__getitem__"),
        (lambda: s.stride(), "stride"),
        (lambda: s.item(), "item"),
        (lambda: ct.cat([s, s]), "cat"),
        (lambda: ct.nn.functional.linear(s, ct.ones(2, 3)), None),
    ]:
        with pytest.raises(
            RuntimeError,
            match="sparse_coo tensors are not supported; call "
            r"\.to_dense\(\) first",
        ) as e:
            call()
        assert op is None or str(e.value).startswith(f"{op}()")
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        s + ct.ones(2, 3)
    with pytest.raises(RuntimeError, match="indices expected sparse coordinate tensor layout"):
        ct.ones(2).indices()
    # factories make strided tensors only: another layout is refused, never silently dense
    assert ct.zeros(2, layout=ct.strided).layout is ct.strided
    for make in (
        lambda: ct.zeros(2, 3, layout=ct.sparse_coo),
        lambda: ct.empty_like(ct.ones(2), layout=ct.sparse_coo),
        lambda: ct.arange(3, layout=ct.sparse_coo),
    ):
        with pytest.raises(RuntimeError, match="layout=coretorch.sparse_coo is not supported"):
            make()
    with pytest.raises(TypeError, match="argument 'layout' must be coretorch.layout, not str"):
        ct.zeros(2, layout="strided")


# ---- meta: shapes only ----------------------------------------------------------------------


def test_meta_shapes():
    i = ct.zeros((2, 7), dtype=ct.int64, device="meta")
    s = ct.sparse_coo_tensor(i, ct.zeros(7, device="meta", requires_grad=True), (4, 5))
    assert s.device.type == "meta" and s.shape == (4, 5)
    d = ct.zeros(5, 3, device="meta")
    out = ct.sparse.mm(s, d)
    assert out.shape == (4, 3) and out.device.type == "meta" and out.requires_grad
    assert s.to_dense().shape == (4, 5) and (s @ d[:, 0]).shape == (4,)
    with pytest.raises(RuntimeError, match="size= is needed on 'meta'"):
        ct.sparse_coo_tensor(i, ct.zeros(7, device="meta"))


# ---- a graph network: 2-layer GCN on a sparse normalized adjacency ----------------------------


def _graph(n: int = 7):
    """Edges of a small undirected graph, and D^-1/2 (A + I) D^-1/2 as COO indices and values."""
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (0, 6), (1, 4)]
    a = np.eye(n)
    for i, j in edges:
        a[i, j] = a[j, i] = 1.0
    dinv = 1.0 / np.sqrt(a.sum(1))
    norm = dinv[:, None] * a * dinv[None, :]
    idx = np.array(np.nonzero(norm))
    return idx, norm[idx[0], idx[1]], norm


class _GCN(ct.nn.Module):
    def __init__(self, w1: np.ndarray, w2: np.ndarray):
        super().__init__()
        self.lin1 = ct.nn.Linear(*w1.shape[::-1], bias=False, dtype=ct.float64)
        self.lin2 = ct.nn.Linear(*w2.shape[::-1], bias=False, dtype=ct.float64)
        with ct.no_grad():
            self.lin1.weight.copy_(ct.tensor(w1))
            self.lin2.weight.copy_(ct.tensor(w2))

    def forward(self, x, adj):
        h = ct.spmm(adj, self.lin1(x)) if adj.is_sparse else adj @ self.lin1(x)
        return adj @ self.lin2(ct.nn.functional.relu(h))


def _gcn_run(adj, feats, labels, w1, w2, steps: int = 3):
    """Losses and final gradients of a few SGD steps (adjacency values require grad)."""
    model = _GCN(w1, w2)
    opt = ct.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = ct.nn.functional.cross_entropy(model(feats, adj), labels)
        loss.backward()
        losses.append(loss.item())
        opt.step()
    return losses, model.lin1.weight.grad, model.lin2.weight.grad


def test_gcn_sparse_adjacency_matches_dense_and_pytorch():
    rng = np.random.default_rng(1)
    idx, vals, norm = _graph()
    x, y = rng.standard_normal((7, 4)), np.array([0, 1, 2, 0, 1, 2, 0])
    w1, w2 = rng.standard_normal((5, 4)) * 0.5, rng.standard_normal((3, 5)) * 0.5
    feats, labels = ct.tensor(x), ct.tensor(y)
    sv = ct.tensor(vals, requires_grad=True)
    sparse_adj = ct.sparse_coo_tensor(idx, sv, (7, 7))
    dense_adj = ct.tensor(norm, requires_grad=True)
    s_loss, s_g1, s_g2 = _gcn_run(sparse_adj, feats, labels, w1, w2)
    d_loss, d_g1, d_g2 = _gcn_run(dense_adj, feats, labels, w1, w2)
    np.testing.assert_allclose(s_loss, d_loss, rtol=1e-12)
    np.testing.assert_allclose(_np(s_g1), _np(d_g1), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(_np(s_g2), _np(d_g2), rtol=1e-10, atol=1e-14)
    # the adjacency's own gradient: per stored value, the dense gradient at its position
    np.testing.assert_allclose(_np(sv.grad), _np(dense_adj.grad)[idx[0], idx[1]], rtol=1e-10)

    torch = pytest.importorskip("torch")
    tw1 = torch.tensor(w1, requires_grad=True)
    tw2 = torch.tensor(w2, requires_grad=True)
    tadj = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (7, 7))
    opt = torch.optim.SGD([tw1, tw2], lr=0.5)
    t_loss = []
    for _ in range(3):
        opt.zero_grad()
        h = torch.relu(torch.spmm(tadj, torch.tensor(x) @ tw1.T))
        loss = torch.nn.functional.cross_entropy(torch.sparse.mm(tadj, h @ tw2.T), torch.tensor(y))
        loss.backward()
        t_loss.append(loss.item())
        opt.step()
    np.testing.assert_allclose(s_loss, t_loss, rtol=1e-12)
    np.testing.assert_allclose(_np(s_g1), tw1.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(_np(s_g2), tw2.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_save_load_roundtrip(tmp_path):
    s = ct.sparse_coo_tensor(IDX, VAL, (2, 3), dtype=ct.float64, requires_grad=True)
    h = ct.sparse_coo_tensor([[0, 2]], [[1.0, 2.0], [3.0, 4.0]]).coalesce()
    ct.save({"adj": s, "h": h, "w": ct.ones(2)}, tmp_path / "ckpt.pt")
    got = ct.load(tmp_path / "ckpt.pt")
    a = got["adj"]
    assert a.is_sparse and a.shape == (2, 3) and a.dtype is ct.float64 and a.requires_grad
    assert a.is_leaf and not a.is_coalesced() and got["h"].is_coalesced()
    np.testing.assert_array_equal(_np(a._indices()), IDX)
    np.testing.assert_array_equal(_np(a.to_dense()), _np(s.to_dense()))
    np.testing.assert_array_equal(_np(got["h"].to_dense()), _np(h.to_dense()))
    meta = ct.load(tmp_path / "ckpt.pt", map_location="meta")["adj"]
    assert meta.is_sparse and meta.device.type == "meta" and meta.shape == (2, 3)


def test_cpu_runs_scipy_kernel_equal_to_composite():
    from coretorch.dispatch.keys import DispatchKey

    decl = ct.ops.REGISTRY["_sparse_coo_mm"]
    assert decl.op.has_kernel(DispatchKey.get("CPU"))  # scipy.sparse csr @ dense
    rng = np.random.default_rng(3)
    idx = ct.tensor(rng.integers(0, 50, size=(2, 400)))
    vals, dense = ct.tensor(rng.standard_normal(400)), ct.tensor(rng.standard_normal((50, 8)))
    native = ct.sparse.mm(ct.sparse_coo_tensor(idx, vals, (50, 50)), dense)
    composite = decl.impl(idx, vals, dense, 50)  # index_add of values * dense rows
    np.testing.assert_allclose(_np(native), _np(composite), rtol=1e-12, atol=1e-12)


def test_sparse_buffer_in_state_dict(tmp_path):
    m = ct.nn.Linear(2, 2)
    m.register_buffer("adj", ct.sparse_coo_tensor([[0, 1, 1]], [1.0, 2.0, 3.0], (3,)))
    ct.save(m.state_dict(), tmp_path / "m.pt")
    other = ct.nn.Linear(2, 2)
    other.register_buffer("adj", ct.sparse_coo_tensor([[2]], [5.0], (3,)))
    other.load_state_dict(ct.load(tmp_path / "m.pt"))
    assert other.adj.is_sparse and other.adj._nnz() == 3
    np.testing.assert_array_equal(_np(other.adj.to_dense()), [1, 5, 0])
    with pytest.raises(RuntimeError, match="Parameter\\(\\): sparse_coo tensors are not supported"):
        ct.nn.Parameter(m.adj)
    with pytest.raises(RuntimeError, match="copy_\\(\\): sparse_coo tensors are not supported"):
        ct.ones(3).copy_(m.adj)
