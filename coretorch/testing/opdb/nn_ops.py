"""OpInfos of the neural-network ops (coretorch/ops/nn_ops.py). Convolutions and pooling have no
numpy reference: PyTorch is their oracle (test_torch_parity); softmax is with the reductions. Error
inputs list the calls each op refuses (the same exception on every backend: the meta rules are
the only validators)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...ops.nn_ops import conv_output_size, pool_output_size
from ..opinfo import FLOATS, ErrorInput, OpInfo, SampleInput
from .common import torch_nn

_TOL = {_dt.float32: (1e-5, 1e-4)}


def _conv2d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 5, 5)), (m.make((4, 3, 3, 3)), m.make((4,))), name="bias")
    yield SampleInput(
        m.make((2, 3, 6, 5)),
        (m.make((4, 3, 3, 2)),),
        dict(stride=2, padding=1),
        name="stride2-pad1",
    )
    yield SampleInput(
        m.make((1, 2, 7, 7)),
        (m.make((2, 2, 3, 3)),),
        dict(dilation=2, padding=(1, 0)),
        name="dilation-pair-padding",
    )
    yield SampleInput(
        m.make((1, 4, 5, 5)), (m.make((6, 2, 3, 3)), m.make((6,))), dict(groups=2), name="groups"
    )
    yield SampleInput(
        m.make((1, 2, 5, 6)), (m.make((3, 2, 3, 2)),), dict(padding="same"), name="same"
    )
    yield SampleInput(
        m.make((1, 2, 5, 6)), (m.make((3, 2, 3, 3)),), dict(padding="valid"), name="valid"
    )
    yield SampleInput(
        m.make((2, 3, 5, 5), layout="sliced"),
        (m.make((4, 3, 3, 3), layout="transposed"),),
        name="noncontiguous",
    )
    yield SampleInput(m.make((0, 3, 5, 5)), (m.make((4, 3, 3, 3)),), name="zero-batch")
    yield SampleInput(
        m.make((3, 6, 5)),
        (m.make((2, 3, 2, 3)), m.make((2,))),
        dict(stride=[2], padding=(0, 1)),
        name="unbatched-list-args",
    )
    yield SampleInput(
        m.make((1, 2, 7, 6)),
        (m.make((2, 2, 2, 3)),),
        dict(padding="same", dilation=(3, 2)),
        name="same-dilated",
    )


def _conv_errors(op, m, dtype):
    """Calls conv2d refuses, with PyTorch's messages."""
    x, w = m.make((1, 3, 5, 5)), m.make((4, 3, 3, 3))
    yield ErrorInput(
        SampleInput(m.make((1, 4, 5, 5)), (w,), name="channels"),
        RuntimeError,
        r"expected input\[1, 4, 5, 5\] to have 3 channels, but got 4 channels",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 6, 5, 5)), (w,), dict(groups=3), name="groups"),
        RuntimeError,
        r"expected weight to be divisible by 3 at dimension 0",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 3, 2, 2)), (w,), name="kernel-too-large"),
        RuntimeError,
        r"Calculated padded input size per channel: \(2 x 2\)",
    )
    yield ErrorInput(
        SampleInput(x, (w, m.make((3,))), name="bias-size"),
        RuntimeError,
        r"expected bias to be 1-dimensional with 4 elements",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(padding="same", stride=2), name="same-strided"),
        RuntimeError,
        r"padding='same' is not supported for strided convolutions",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(padding="full"), name="padding-string"),
        RuntimeError,
        r"Invalid padding string: 'full'",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(padding=-1), name="negative-padding"),
        RuntimeError,
        r"negative padding is not supported",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(padding=1.5), name="float-padding"),
        TypeError,
        r"argument 'padding' \(position 5\) must be tuple of 2 ints",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(stride=(1, 2, 3)), name="stride-length"),
        RuntimeError,
        r"expected stride to be a single integer value or a list of 2 "
        r"values to match the convolution dimensions",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(stride=0), name="zero-stride"),
        RuntimeError,
        r"non-positive stride is not supported",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(dilation=0), name="zero-dilation"),
        RuntimeError,
        r"dilation should be greater than zero",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(groups=0), name="zero-groups"),
        RuntimeError,
        r"non-positive groups is not supported",
    )
    yield ErrorInput(
        SampleInput(m.make((3, 5)), (w,), name="2d-input"),
        RuntimeError,
        r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d",
    )
    yield ErrorInput(
        SampleInput(x, (m.make((4, 3, 3)),), name="3d-weight"),
        RuntimeError,
        r"weight should have 4 dimensions",
    )
    yield ErrorInput(
        SampleInput(x, (m.make((4, 3, 3, 3), dtype=_dt.int64),), name="dtypes"),
        RuntimeError,
        r"expected input and weight of the same non-bool dtype",
    )


def _conv1d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 7)), (m.make((4, 3, 3)), m.make((4,))), name="bias")
    yield SampleInput(
        m.make((2, 3, 8)), (m.make((4, 3, 2)),), dict(stride=2, padding=1), name="stride-padding"
    )
    yield SampleInput(
        m.make((1, 4, 9)), (m.make((2, 2, 3)),), dict(dilation=2, groups=2), name="dilation-groups"
    )
    yield SampleInput(m.make((1, 2, 6)), (m.make((3, 2, 3)),), dict(padding="same"), name="same")
    yield SampleInput(
        m.make((2, 3, 7), layout="sliced"), (m.make((4, 3, 3)),), name="noncontiguous"
    )
    yield SampleInput(
        m.make((3, 7)),
        (m.make((2, 3, 3)),),
        dict(padding="valid", stride=(2,)),
        name="unbatched-valid",
    )


def _conv1d_errors(op, m, dtype):
    """Calls conv1d refuses, in its own name."""
    x, w = m.make((1, 3, 8)), m.make((4, 3, 3))
    yield ErrorInput(
        SampleInput(m.make((1, 3, 5, 5)), (w,), name="4d-input"),
        RuntimeError,
        r"conv1d\(\): Expected 2D \(unbatched\) or 3D \(batched\) input",
    )
    yield ErrorInput(
        SampleInput(x, (m.make((4, 3, 3, 3)),), name="4d-weight"),
        RuntimeError,
        r"conv1d\(\): weight should have 3 dimensions",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(stride=(1, 2)), name="stride-length"),
        RuntimeError,
        r"conv1d\(\): expected stride to be a single integer value "
        r"or a list of 1 values",
    )
    yield ErrorInput(
        SampleInput(x, (w,), dict(padding="same", stride=2), name="same-strided"),
        RuntimeError,
        r"conv1d\(\): padding='same' is not supported for strided",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 3, 2)), (w,), name="kernel-too-large"),
        RuntimeError,
        r"conv1d\(\): Calculated padded input size per channel: "
        r"\(2\). Kernel size: \(3\)",
    )


def _conv_bwd_samples(op, m, dtype):
    cases = [
        ((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1, "plain"),
        ((1, 2, 6, 5), (3, 2, 3, 2), (2, 1), (1, 0), (1, 1), 1, "stride-padding"),
        ((1, 2, 7, 7), (2, 2, 3, 3), (1, 1), (1, 1), (2, 2), 1, "dilation"),
        ((1, 4, 5, 5), (6, 2, 3, 3), (1, 1), (0, 0), (1, 1), 2, "groups"),
    ]
    for x_shape, w_shape, s, p, d, g, name in cases:
        h = conv_output_size(x_shape[2], w_shape[2], s[0], p[0], p[0], d[0])
        w = conv_output_size(x_shape[3], w_shape[3], s[1], p[1], p[1], d[1])
        go = m.make((x_shape[0], w_shape[0], h, w))
        yield SampleInput(go, (m.make(x_shape), m.make(w_shape), s, p, d, g), name=name)


def _conv_bwd_errors(op, m, dtype):
    x, w = m.make((2, 6, 5, 5)), m.make((4, 3, 3, 3))
    yield ErrorInput(
        SampleInput(m.make((2, 4, 4, 4)), (x, w, (1, 1), (0, 0), (1, 1), 2), name="grad-shape"),
        RuntimeError,
        r"expected grad_output of shape \[2, 4, 3, 3\]",
    )
    yield ErrorInput(
        SampleInput(m.make((4, 3, 3)), (x[0], w, (1, 1), (0, 0), (1, 1), 2), name="unbatched"),
        RuntimeError,
        r"expected 4-D grad_output and input",
    )


def _pool_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 6, 6)), (2,), name="k2")
    yield SampleInput(
        m.make((1, 2, 7, 5)), ((3, 2),), dict(stride=(2, 1), padding=1), name="stride-padding"
    )
    yield SampleInput(m.make((1, 2, 7, 7)), (3,), dict(stride=2, ceil_mode=True), name="ceil_mode")
    yield SampleInput(m.make((2, 5, 5)), (2,), dict(stride=1), name="unbatched")
    yield SampleInput(m.make((1, 2, 6, 6), layout="transposed"), (2,), name="noncontiguous")
    if op.name.startswith("max"):
        yield SampleInput(m.make((1, 1, 7, 7)), (3,), dict(dilation=2), name="dilation")
        yield SampleInput(m.make((1, 2, 6, 6)), ((2,), []), name="one-int-list-empty-stride")
        yield SampleInput(
            m.make((1, 1, 4, 4), values=[float("nan")] + [0.0] * 15), (2,), name="nan"
        )
    else:
        yield SampleInput(
            m.make((1, 2, 5, 5)),
            (3,),
            dict(stride=2, padding=1, count_include_pad=False),
            name="exclude-pad",
        )
        yield SampleInput(
            m.make((1, 2, 4, 4)), (2,), dict(divisor_override=3), name="divisor_override"
        )
        # integer sums divide truncating toward zero, a negative divisor included
        yield SampleInput(
            m.make((1, 1, 4, 4)),
            ((2, 2), (), (0,), False, True, -2),
            name="negative-divisor_override",
        )


def _pool_errors(op, m, dtype):
    """Calls max/avg pooling refuse, with PyTorch's messages."""
    name = op.name if op.name.startswith("max") else "avg_pool2d"  # errors name the op called
    x = m.make((1, 2, 5, 5))
    yield ErrorInput(
        SampleInput(x, (3,), dict(padding=2), name="padding"),
        RuntimeError,
        rf"{name}\(\): pad should be at most half of kernel size, but got pad=2",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 2, 1, 1)), (2,), name="too-small"),
        RuntimeError,
        rf"{name}\(\): Given input size: \(2x1x1\). Calculated output size: "
        rf"\(2x0x0\). Output size is too small",
    )
    yield ErrorInput(
        SampleInput(m.make((2, 5)), (2,), name="2d-input"),
        RuntimeError,
        rf"{name}\(\): non-empty 3D or 4D \(batch mode\) tensor expected",
    )
    yield ErrorInput(
        SampleInput(x, ((2, 2, 2),), name="kernel-length"),
        RuntimeError,
        rf"{name}\(\): kernel_size must either be a single int, or a tuple of two "
        rf"ints",
    )
    yield ErrorInput(
        SampleInput(x, (2, (1, 1, 1)), name="stride-length"),
        RuntimeError,
        rf"{name}\(\): stride must either be omitted, a single int, or a tuple",
    )
    yield ErrorInput(
        SampleInput(x, (0,), name="zero-kernel"),
        RuntimeError,
        rf"{name}\(\): kernel size should be greater than zero",
    )
    yield ErrorInput(
        SampleInput(x, (2, 0), name="zero-stride"),
        RuntimeError,
        rf"{name}\(\): stride should be greater than zero",
    )
    yield ErrorInput(
        SampleInput(x, (2.0,), name="float-kernel"),
        TypeError,
        r"argument 'kernel_size' \(position 2\) must be tuple of 2 ints",
    )
    if name.startswith("max_pool2d"):
        yield ErrorInput(
            SampleInput(x, (2,), dict(dilation=0), name="zero-dilation"),
            RuntimeError,
            rf"{name}\(\): dilation should be greater than zero",
        )
    else:
        yield ErrorInput(
            SampleInput(x, (2,), dict(divisor_override=0), name="zero-divisor"),
            RuntimeError,
            r"avg_pool2d\(\): divisor must be not zero",
        )


def _max_pool2d_samples(op, m, dtype):
    yield from _pool_samples(op, m, dtype)
    yield SampleInput(m.make((1, 2, 6, 6)), (2,), dict(return_indices=True), name="return_indices")


def _avg_bwd_samples(op, m, dtype):
    cases = [
        ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), False, True, None, "k2"),
        ((1, 2, 7, 5), (3, 2), (2, 1), (1, 0), False, True, None, "stride-padding"),
        ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1), True, False, None, "ceil-exclude-pad"),
        ((1, 2, 4, 4), (2, 2), (2, 2), (0, 0), False, True, 3, "divisor_override"),
    ]
    for shape, k, s, p, ceil, cip, div, name in cases:
        outs = tuple(
            pool_output_size(shape[i], k[i - 2], s[i - 2], p[i - 2], 1, ceil) for i in (2, 3)
        )
        go = m.make(shape[:2] + outs)
        yield SampleInput(go, (m.make(shape), k, s, p, ceil, cip, div), name=name)


def _avg_bwd_errors(op, m, dtype):
    x = m.make((1, 2, 5, 5))
    yield ErrorInput(
        SampleInput(
            m.make((1, 2, 3, 3)), (x, (2, 2), (2, 2), (0, 0), False, True, None), name="grad-shape"
        ),
        RuntimeError,
        r"expected grad_output of shape \[1, 2, 2, 2\]",
    )


def _max_bwd_samples(op, m, dtype):
    """(grad_output, input, kernel, stride, padding, dilation, ceil_mode, indices): the indices
    of a real max_pool2d_with_indices of the input."""
    from ...ops import aten

    cases = [
        ((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), (1, 1), False, "k2"),
        ((1, 2, 7, 5), (3, 2), (2, 1), (1, 0), (1, 1), True, "stride-padding-ceil"),
        ((1, 2, 9, 9), (3, 3), (1, 1), (1, 1), (2, 2), False, "dilation-overlap"),
        ((2, 5, 5), (2, 2), (1, 1), (0, 0), (1, 1), False, "unbatched-overlap"),
    ]
    for shape, k, s, p, d, ceil, name in cases:
        x = m.make(shape)
        _, idx = aten.max_pool2d_with_indices(x.detach(), k, s, p, d, ceil)
        go = m.make(tuple(idx.shape))
        yield SampleInput(go, (x, k, s, p, d, ceil, idx), name=name)


def _max_bwd_errors(op, m, dtype):
    x = m.make((1, 2, 4, 4))
    idx = m.index((1, 2, 2, 2), 16)
    yield ErrorInput(
        SampleInput(
            m.make((1, 2, 3, 3)), (x, (2, 2), (2, 2), (0, 0), (1, 1), False, idx), name="grad-shape"
        ),
        RuntimeError,
        r"max_pool2d_with_indices_backward\(\): expected "
        r"grad_output and indices of shape \[1, 2, 2, 2\]",
    )


def _threshold_bwd_samples(op, m, dtype):
    """(grad_output, self, threshold): self from relu's output (zeros included), a NaN in self,
    a threshold between values, self broadcast against grad_output, a transposed grad. A self
    with values at the threshold (the kink) takes no gradient."""
    relu_out = [0, 1, 0, 2, 3, 0, 4, 0, 5, 6, 0, 7]
    yield SampleInput(
        m.make((3, 4)),
        (m.make((3, 4), values=relu_out, requires_grad=False), 0),
        name="relu-output",
    )
    if dtype.is_floating_point:
        nan = [float("nan"), -1, 2, 0.25, 3, -4]
        yield SampleInput(
            m.make((2, 3)),
            (m.make((2, 3), values=nan, requires_grad=False), 0.5),
            name="nan-threshold",
        )
    yield SampleInput(m.make((4, 3), layout="transposed"), (m.make((3,)), -1), name="broadcast")


def _threshold_bwd_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((2,)), (m.make((2,), dtype=_dt.bool), 0), name="bool"),
        RuntimeError,
        r"threshold_backward\(\): \"threshold_backward\" not "
        r"implemented for 'Bool'",
    )


def _threshold_bwd_ref(g, x, threshold):
    return np.where(x <= threshold, 0, g).astype(np.result_type(g, x))


def _torch_threshold_bwd(g, x, threshold):
    import torch

    return torch.ops.aten.threshold_backward(g, x, threshold)


def _embedding_samples(op, m, dtype):
    yield SampleInput(m.make((5, 3)), (m.index((4,), 5),), name="1d-indices")
    yield SampleInput(m.make((5, 3)), (m.index((2, 3), 5),), name="2d-indices")
    yield SampleInput(
        m.make((5, 3)),
        (m.index((6,), 5),),
        dict(padding_idx=1),
        name="padding_idx",
        gradcheck=False,
    )
    yield SampleInput(
        m.make((5, 3), layout="transposed"), (m.index((4,), 5),), name="transposed-weight"
    )
    yield SampleInput(m.make((5, 3)), (m.index((0,), 5),), name="empty-indices")
    # a defined gradient, not the derivative: finite differences cannot check it
    yield SampleInput(
        m.make((5, 3)),
        (m.index((6,), 5),),
        dict(scale_grad_by_freq=True),
        name="scale_grad_by_freq",
        gradcheck=False,
    )


def _embedding_errors(op, m, dtype):
    w = m.make((10, 4))
    yield ErrorInput(
        SampleInput(w, (m.make((3,)),), name="float-indices"),
        RuntimeError,
        r"embedding\(\): Expected tensor for argument #1 'indices' to have one of "
        r"the following scalar types: Long, Int; but got",
    )
    yield ErrorInput(
        SampleInput(w, (m.index((3,), 10),), dict(padding_idx=10), name="padding_idx"),
        AssertionError,
        r"embedding\(\): Padding_idx must be within num_embeddings",
    )
    yield ErrorInput(
        SampleInput(m.make((10,)), (m.index((3,), 10),), name="1d-weight"),
        RuntimeError,
        r"embedding\(\): 'weight' must be 2-D",
    )


def _torch_conv_bwd(go, x, w, stride, padding, dilation, groups):
    import torch

    return torch.ops.aten.convolution_backward(
        go,
        x,
        w,
        [w.shape[0]],
        list(stride),
        list(padding),
        list(dilation),
        False,
        [0, 0],
        groups,
        [True, True, True],
    )


def _torch_max_pool_idx(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    import torch.nn.functional as F

    return F.max_pool2d(
        x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True
    )


def _torch_avg_bwd(go, x, k, s, p, ceil, cip, div):
    import torch

    return torch.ops.aten.avg_pool2d_backward(go, x, list(k), list(s), list(p), ceil, cip, div)


def _torch_max_bwd(go, x, k, s, p, d, ceil, idx):
    import torch

    return torch.ops.aten.max_pool2d_with_indices_backward(
        go, x, list(k), list(s), list(p), list(d), ceil, idx
    )


def _torch_embedding(weight, indices, padding_idx=None, scale_grad_by_freq=False):
    import torch.nn.functional as F

    return F.embedding(
        indices, weight, padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq
    )


OPS: list[OpInfo] = [
    OpInfo(
        "conv2d",
        dtypes=FLOATS,
        ref=None,
        sample_inputs_func=_conv2d_samples,
        tol=_TOL,
        error_inputs_func=_conv_errors,
    ),
    OpInfo(
        "conv1d",
        dtypes=FLOATS,
        ref=None,
        sample_inputs_func=_conv1d_samples,
        tol=_TOL,
        error_inputs_func=_conv1d_errors,
    ),
    OpInfo(
        "convolution_backward",
        dtypes=FLOATS,
        ref=None,
        torch_ref=_torch_conv_bwd,
        sample_inputs_func=_conv_bwd_samples,
        tol=_TOL,
        error_inputs_func=_conv_bwd_errors,
    ),
    OpInfo(
        "max_pool2d_with_indices",
        dtypes=FLOATS,
        ref=None,
        torch_ref=_torch_max_pool_idx,
        sample_inputs_func=_pool_samples,
        error_inputs_func=_pool_errors,
    ),
    OpInfo(
        "max_pool2d",
        dtypes=FLOATS,
        ref=None,
        torch_ref=torch_nn("max_pool2d"),
        sample_inputs_func=_max_pool2d_samples,
        error_inputs_func=_pool_errors,
    ),
    # int64: the window sum divided with truncation toward zero, as PyTorch
    OpInfo(
        "avg_pool2d",
        dtypes=FLOATS + (_dt.int64,),
        ref=None,
        torch_ref=torch_nn("avg_pool2d"),
        sample_inputs_func=_pool_samples,
        tol=_TOL,
        error_inputs_func=_pool_errors,
    ),
    OpInfo(
        "avg_pool2d_backward",
        dtypes=FLOATS,
        ref=None,
        torch_ref=_torch_avg_bwd,
        sample_inputs_func=_avg_bwd_samples,
        tol=_TOL,
        error_inputs_func=_avg_bwd_errors,
    ),
    OpInfo(
        "max_pool2d_with_indices_backward",
        dtypes=FLOATS,
        ref=None,
        torch_ref=_torch_max_bwd,
        sample_inputs_func=_max_bwd_samples,
        tol=_TOL,
        error_inputs_func=_max_bwd_errors,
    ),
    OpInfo(
        "threshold_backward",
        dtypes=FLOATS + (_dt.int64,),
        ref=_threshold_bwd_ref,
        torch_ref=_torch_threshold_bwd,
        sample_inputs_func=_threshold_bwd_samples,
        error_inputs_func=_threshold_bwd_errors,
    ),
    OpInfo(
        "embedding",
        dtypes=FLOATS,
        ref=lambda w, idx, padding_idx=None, **_: w[idx],
        torch_ref=_torch_embedding,
        sample_inputs_func=_embedding_samples,
        error_inputs_func=_embedding_errors,
    ),
]
