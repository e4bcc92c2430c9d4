"""In-place operations under autograd: version counters, leaf checks, recorded in-place ops,
in-place on views (CopySlices), views whose base changed. Gradients compared with torch."""

from __future__ import annotations

import numpy as np
import pytest

import coretorch as ct


def leaf(values, device="cpu"):
    return ct.tensor(values, dtype=ct.float64, device=device, requires_grad=True)


def npy(t):
    return np.asarray(t.detach())


def ones(n, device):
    return ct.ones(n, dtype=ct.float64, device=device)


def test_modified_saved_tensor_raises_pytorch_message(device):
    x = ct.ones(3, device=device, requires_grad=True)
    h = x * 2
    out = h * h  # saves h (version 0)
    h.add_(1)  # version 1
    with pytest.raises(RuntimeError) as e:
        out.backward(ct.ones(3, device=device))
    msg = str(e.value)
    assert msg.startswith(
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation: [coretorch."
    )
    assert "FloatTensor [3]]" in msg
    assert "is at version 1; expected version 0 instead" in msg


def test_modified_saved_result_raises(device):
    x = ct.ones(3, device=device, requires_grad=True)
    y = x.exp()  # exp saves its result
    y.mul_(2)
    with pytest.raises(
        RuntimeError, match="which is output 0 of ExpBackward0, is at version 1; expected version 0"
    ):
        y.backward(ct.ones(3, device=device))


def test_unsaved_input_may_be_modified(data_device):
    x = leaf([1.0, 2.0], data_device)
    h = x * 1
    out = h + 1  # add saves nothing
    h.mul_(5)
    out.backward(ones(2, data_device))
    np.testing.assert_allclose(npy(x.grad), [1.0, 1.0])


def test_inplace_on_leaf_requiring_grad_raises(device):
    x = ct.ones(3, device=device, requires_grad=True)
    with pytest.raises(
        RuntimeError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0:2].mul_(2)
    v0 = x._version
    with ct.no_grad():
        x.add_(1)  # what optimizers do
    assert x._version == v0 + 1


def test_inplace_on_non_leaf_is_recorded(data_device):
    x = leaf([1.0, 2.0, 3.0], data_device)
    w = leaf([3.0, 4.0, 5.0], data_device)
    y = x * 2
    v0 = y._version
    y.mul_(w)  # needs y's old value for w's gradient: autograd keeps it
    assert y.grad_fn.name() == "MulBackward0" and y._version == v0 + 1
    y.backward(ones(3, data_device))
    np.testing.assert_allclose(npy(x.grad), [6.0, 8.0, 10.0])
    np.testing.assert_allclose(npy(w.grad), [2.0, 4.0, 6.0])


def test_inplace_with_itself_as_saved_argument_raises(device):
    x = ct.ones(3, device=device, requires_grad=True)
    y = x * 2
    y.mul_(y)  # `other` (y) is saved and then modified by this very op
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        y.backward(ct.ones(3, device=device))


def test_inplace_unary_chain(data_device):
    x = leaf([0.1, 0.5], data_device)
    y = x * 1
    y.sin_().exp_()  # sin_ needs its input: autograd keeps the old values
    y.backward(ones(2, data_device))
    xv = np.array([0.1, 0.5])
    np.testing.assert_allclose(npy(x.grad), np.exp(np.sin(xv)) * np.cos(xv))
    y = x * 1
    y.exp_().sin_()  # exp_ saved its output, which sin_ then overwrote (as in PyTorch)
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward0, is at version"):
        y.backward(ones(2, data_device))


def test_inplace_into_buffer_that_did_not_require_grad(data_device):
    x = leaf([1.0, 2.0], data_device)
    buf = ct.zeros(2, dtype=ct.float64, device=data_device)
    buf.add_(x * 3)
    assert buf.requires_grad and buf.grad_fn.name() == "AddBackward0"
    buf.backward(ones(2, data_device))
    np.testing.assert_allclose(npy(x.grad), [3.0, 3.0])


def test_inplace_on_view_of_non_leaf(data_device):
    torch = pytest.importorskip("torch")
    xv = np.array([1.0, 2.0, 3.0, 4.0])
    x = leaf(xv, data_device)
    y = x * 1
    y[1:3].mul_(x[0:2])
    assert y.grad_fn.name() == "CopySlices"
    (y * y).backward(ones(4, data_device))
    tx = torch.tensor(xv, requires_grad=True)
    ty = tx * 1
    ty[1:3].mul_(tx[0:2])
    (ty * ty).backward(torch.ones(4, dtype=torch.float64))
    np.testing.assert_allclose(npy(x.grad), tx.grad.numpy())


def test_setitem_into_zeros(data_device):
    x = leaf([5.0, 6.0], data_device)
    z = ct.zeros(4, dtype=ct.float64, device=data_device)
    z[1:3] = x * 2
    assert z.requires_grad
    (z * ct.tensor([1.0, 2.0, 3.0, 4.0], dtype=ct.float64, device=data_device)).backward(
        ones(4, data_device)
    )
    np.testing.assert_allclose(npy(x.grad), [4.0, 6.0])


def test_view_taken_before_base_changed(data_device):
    torch = pytest.importorskip("torch")
    xv = np.array([1.0, 2.0, 3.0])
    x = leaf(xv, data_device)
    y = x * 1
    v = y[0:2]
    y.mul_(x)  # v's values are now x*x: its history is regenerated on use
    (v * 1).backward(ones(2, data_device))
    tx = torch.tensor(xv, requires_grad=True)
    ty = tx * 1
    tv = ty[0:2]
    ty.mul_(tx)
    (tv * 1).backward(torch.ones(2, dtype=torch.float64))
    np.testing.assert_allclose(npy(x.grad), tx.grad.numpy())


def test_inplace_on_view_shapes_on_meta():
    x = ct.ones(4, 3, device="meta", requires_grad=True)
    y = x * 2
    y[1].add_(1)
    y.select(1, 0).mul_(ct.ones(4, device="meta"))
    y.backward(ct.ones(4, 3, device="meta"))
    assert x.grad.shape == (4, 3) and x.grad.device == ct.device("meta")


def test_fill_on_non_leaf_gives_zero_gradient(data_device):
    x = leaf([1.0, 2.0, 3.0], data_device)
    y = x * 2
    y[1:].fill_(7.0)
    (y * 1).backward(ones(3, data_device))
    np.testing.assert_allclose(npy(x.grad), [2.0, 0.0, 0.0])
    z = x * 2
    z.zero_()
    z.backward(ones(3, data_device))
    np.testing.assert_allclose(npy(x.grad), [2.0, 0.0, 0.0])


def test_view_of_grad_requiring_base_made_in_no_grad_raises(device):
    x = ct.ones(3, device=device, requires_grad=True)
    y = x * 2
    with ct.no_grad():
        v = y[0:2]
    with pytest.raises(RuntimeError, match="a view was created in no_grad mode"):
        v.mul_(2)


def test_detached_modification_detected(device):
    x = ct.ones(3, device=device, requires_grad=True)
    y = x.sigmoid()  # saves its result
    y.detach().zero_()  # shares the version counter
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward(ct.ones(3, device=device))


def test_data_changes_are_invisible(data_device):
    x = leaf([1.0, 2.0], data_device)
    y = x.exp()
    y.data.mul_(0)  # .data has its own version counter, like PyTorch
    y.backward(ones(2, data_device))
    np.testing.assert_allclose(npy(x.grad), [0.0, 0.0])
