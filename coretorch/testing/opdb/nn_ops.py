"""OpInfos of the neural-network ops (coretorch/ops/nn_ops.py). Convolutions and pooling have no
numpy reference: PyTorch is their oracle (test_torch_parity). softmax is with the reductions."""
from __future__ import annotations

from ... import dtypes as _dt
from ...ops.nn_ops import conv_output_size, pool_output_size
from ..opinfo import FLOATS, OpInfo, SampleInput
from .common import torch_nn

_TOL = {_dt.float32: (1e-5, 1e-4)}


def _conv2d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 5, 5)), (m.make((4, 3, 3, 3)), m.make((4,))), name="bias")
    yield SampleInput(m.make((2, 3, 6, 5)), (m.make((4, 3, 3, 2)),),
                      dict(stride=2, padding=1), name="stride2-pad1")
    yield SampleInput(m.make((1, 2, 7, 7)), (m.make((2, 2, 3, 3)),),
                      dict(dilation=2, padding=(1, 0)), name="dilation-pair-padding")
    yield SampleInput(m.make((1, 4, 5, 5)), (m.make((6, 2, 3, 3)), m.make((6,))),
                      dict(groups=2), name="groups")
    yield SampleInput(m.make((1, 2, 5, 6)), (m.make((3, 2, 3, 2)),), dict(padding="same"),
                      name="same")
    yield SampleInput(m.make((1, 2, 5, 6)), (m.make((3, 2, 3, 3)),), dict(padding="valid"),
                      name="valid")
    yield SampleInput(m.make((2, 3, 5, 5), layout="sliced"),
                      (m.make((4, 3, 3, 3), layout="transposed"),), name="noncontiguous")
    yield SampleInput(m.make((0, 3, 5, 5)), (m.make((4, 3, 3, 3)),), name="zero-batch")


def _conv1d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 7)), (m.make((4, 3, 3)), m.make((4,))), name="bias")
    yield SampleInput(m.make((2, 3, 8)), (m.make((4, 3, 2)),), dict(stride=2, padding=1),
                      name="stride-padding")
    yield SampleInput(m.make((1, 4, 9)), (m.make((2, 2, 3)),), dict(dilation=2, groups=2),
                      name="dilation-groups")
    yield SampleInput(m.make((1, 2, 6)), (m.make((3, 2, 3)),), dict(padding="same"),
                      name="same")
    yield SampleInput(m.make((2, 3, 7), layout="sliced"), (m.make((4, 3, 3)),),
                      name="noncontiguous")


def _conv_bwd_samples(op, m, dtype):
    cases = [((2, 3, 5, 5), (4, 3, 3, 3), (1, 1), (0, 0), (1, 1), 1, "plain"),
             ((1, 2, 6, 5), (3, 2, 3, 2), (2, 1), (1, 0), (1, 1), 1, "stride-padding"),
             ((1, 2, 7, 7), (2, 2, 3, 3), (1, 1), (1, 1), (2, 2), 1, "dilation"),
             ((1, 4, 5, 5), (6, 2, 3, 3), (1, 1), (0, 0), (1, 1), 2, "groups")]
    for x_shape, w_shape, s, p, d, g, name in cases:
        h = conv_output_size(x_shape[2], w_shape[2], s[0], p[0], p[0], d[0])
        w = conv_output_size(x_shape[3], w_shape[3], s[1], p[1], p[1], d[1])
        go = m.make((x_shape[0], w_shape[0], h, w))
        yield SampleInput(go, (m.make(x_shape), m.make(w_shape), s, p, d, g), name=name)


def _pool_samples(op, m, dtype):
    yield SampleInput(m.make((2, 3, 6, 6)), (2,), name="k2")
    yield SampleInput(m.make((1, 2, 7, 5)), ((3, 2),), dict(stride=(2, 1), padding=1),
                      name="stride-padding")
    yield SampleInput(m.make((1, 2, 7, 7)), (3,), dict(stride=2, ceil_mode=True),
                      name="ceil_mode")
    yield SampleInput(m.make((2, 5, 5)), (2,), dict(stride=1), name="unbatched")
    yield SampleInput(m.make((1, 2, 6, 6), layout="transposed"), (2,), name="noncontiguous")
    if op.name.startswith("max"):
        yield SampleInput(m.make((1, 1, 7, 7)), (3,), dict(dilation=2), name="dilation")
    else:
        yield SampleInput(m.make((1, 2, 5, 5)), (3,), dict(stride=2, padding=1,
                                                          count_include_pad=False),
                          name="exclude-pad")
        yield SampleInput(m.make((1, 2, 4, 4)), (2,), dict(divisor_override=3),
                          name="divisor_override")


def _max_pool2d_samples(op, m, dtype):
    yield from _pool_samples(op, m, dtype)
    yield SampleInput(m.make((1, 2, 6, 6)), (2,), dict(return_indices=True),
                      name="return_indices")


def _avg_bwd_samples(op, m, dtype):
    cases = [((2, 3, 6, 6), (2, 2), (2, 2), (0, 0), False, True, None, "k2"),
             ((1, 2, 7, 5), (3, 2), (2, 1), (1, 0), False, True, None, "stride-padding"),
             ((1, 2, 7, 7), (3, 3), (2, 2), (1, 1), True, False, None, "ceil-exclude-pad"),
             ((1, 2, 4, 4), (2, 2), (2, 2), (0, 0), False, True, 3, "divisor_override")]
    for shape, k, s, p, ceil, cip, div, name in cases:
        outs = tuple(pool_output_size(shape[i], k[i - 2], s[i - 2], p[i - 2], 1, ceil)
                     for i in (2, 3))
        go = m.make(shape[:2] + outs)
        yield SampleInput(go, (m.make(shape), k, s, p, ceil, cip, div), name=name)


def _embedding_samples(op, m, dtype):
    yield SampleInput(m.make((5, 3)), (m.index((4,), 5),), name="1d-indices")
    yield SampleInput(m.make((5, 3)), (m.index((2, 3), 5),), name="2d-indices")
    yield SampleInput(m.make((5, 3)), (m.index((6,), 5),), dict(padding_idx=1),
                      name="padding_idx", gradcheck=False)
    yield SampleInput(m.make((5, 3), layout="transposed"), (m.index((4,), 5),),
                      name="transposed-weight")
    yield SampleInput(m.make((5, 3)), (m.index((0,), 5),), name="empty-indices")


def _torch_conv_bwd(go, x, w, stride, padding, dilation, groups):
    import torch
    return torch.ops.aten.convolution_backward(go, x, w, [w.shape[0]], list(stride),
                                               list(padding), list(dilation), False, [0, 0],
                                               groups, [True, True, True])


def _torch_max_pool_idx(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    import torch.nn.functional as F
    return F.max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode,
                        return_indices=True)


def _torch_avg_bwd(go, x, k, s, p, ceil, cip, div):
    import torch
    return torch.ops.aten.avg_pool2d_backward(go, x, list(k), list(s), list(p), ceil, cip, div)


def _torch_embedding(weight, indices, padding_idx=None):
    import torch.nn.functional as F
    return F.embedding(indices, weight, padding_idx=padding_idx)


OPS: list[OpInfo] = [
    OpInfo("conv2d", dtypes=FLOATS, ref=None, sample_inputs_func=_conv2d_samples, tol=_TOL),
    OpInfo("conv1d", dtypes=FLOATS, ref=None, sample_inputs_func=_conv1d_samples, tol=_TOL),
    OpInfo("convolution_backward", dtypes=FLOATS, ref=None, torch_ref=_torch_conv_bwd,
           sample_inputs_func=_conv_bwd_samples, tol=_TOL),
    OpInfo("max_pool2d_with_indices", dtypes=FLOATS, ref=None, torch_ref=_torch_max_pool_idx,
           sample_inputs_func=_pool_samples),
    OpInfo("max_pool2d", dtypes=FLOATS, ref=None, torch_ref=torch_nn("max_pool2d"),
           sample_inputs_func=_max_pool2d_samples),
    OpInfo("avg_pool2d", dtypes=FLOATS, ref=None, torch_ref=torch_nn("avg_pool2d"),
           sample_inputs_func=_pool_samples, tol=_TOL),
    OpInfo("avg_pool2d_backward", dtypes=FLOATS, ref=None, torch_ref=_torch_avg_bwd,
           sample_inputs_func=_avg_bwd_samples, tol=_TOL),
    OpInfo("embedding", dtypes=FLOATS, ref=lambda w, idx, padding_idx=None: w[idx],
           torch_ref=_torch_embedding, sample_inputs_func=_embedding_samples),
]
