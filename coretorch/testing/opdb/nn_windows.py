"""OpInfos of the window and sampling ops of ``nn.functional`` (coretorch/ops/im2col.py,
pooling_nd.py, grid_sample.py) and the shrink/rrelu activations. References are numpy loops
written straight from PyTorch's definitions (grid_sampler's oracle is PyTorch)."""

from __future__ import annotations

import itertools

import numpy as np

from ... import dtypes as _dt
from ..opinfo import BF16_STEPS_TOL, FLOATS, ErrorInput, OpInfo, SampleInput
from .common import torch_aten, torch_nn

# composites round to bfloat16 after each step where PyTorch's one kernel rounds once
_TOL = {_dt.float32: (1e-5, 1e-5), _dt.bfloat16: BF16_STEPS_TOL}
# not tested in bfloat16: PyTorch's cpu avg_pool3d has no bfloat16 kernel; conv_tbc,
# grid_sampler and affine_grid_generator accumulate in float32 inside one kernel where the
# composite rounds every partial sum to bfloat16 (beyond its tolerance)
_NO_BF16 = (_dt.float32, _dt.float64)


# ---- activations -------------------------------------------------------------------------------


def _shrink_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="default")
    yield SampleInput(m.make((4, 3), layout="transposed"), (1.0,), name="lambd-1")
    yield SampleInput(m.make(()), (0.25,), name="0-d")
    yield SampleInput(m.make((0, 2)), name="zero-size")


def _shrink_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,)).to(_dt.int64), name="int"),
        RuntimeError,
        rf"{op.name}\(\): expected a floating-point input",
    )
    if op.name == "softshrink":
        yield ErrorInput(
            SampleInput(m.make((3,)), (-1.0,), name="negative-lambda"),
            RuntimeError,
            r"lambda must be greater or equal to 0, but found to be "
            r"-1.0",
        )


def _rrelu_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4)), name="eval")
    yield SampleInput(m.make((4, 3), layout="transposed"), (0.1, 0.4), name="eval-bounds")
    yield SampleInput(m.make(()), name="0-d")


def _rrelu_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,)), (0.5, 0.1), name="bounds"),
        RuntimeError,
        r"rrelu\(\): lower bound must be less than or equal to upper bound",
    )


def _rrelu_ref(x, lower=0.125, upper=1.0 / 3, training=False):
    return np.where(x > 0, x, x * ((lower + upper) / 2)).astype(x.dtype)


# ---- im2col / col2im ---------------------------------------------------------------------------


def _blocks(size, k, d, p, s):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _im2col_ref(x, kernel_size, dilation, padding, stride):
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel_size, dilation, padding, stride))
    xp = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(ph, ph), (pw, pw)])
    bh = _blocks(x.shape[-2], kh, dh, ph, sh)
    bw = _blocks(x.shape[-1], kw, dw, pw, sw)
    cols = np.empty(x.shape[:-2] + (kh * kw, bh * bw), dtype=x.dtype)
    for i, j in itertools.product(range(kh), range(kw)):
        patch = xp[
            ..., i * dh : i * dh + sh * (bh - 1) + 1 : sh, j * dw : j * dw + sw * (bw - 1) + 1 : sw
        ]
        cols[..., i * kw + j, :] = patch.reshape(x.shape[:-2] + (bh * bw,))
    return cols.reshape(x.shape[:-3] + (x.shape[-3] * kh * kw, bh * bw))


def _col2im_ref(cols, output_size, kernel_size, dilation, padding, stride):
    (h, w), (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (
        output_size,
        kernel_size,
        dilation,
        padding,
        stride,
    )
    bh, bw = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    lead = cols.shape[:-2] + (cols.shape[-2] // (kh * kw),)
    c = cols.reshape(lead + (kh, kw, bh, bw))
    out = np.zeros(lead + (h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i, j in itertools.product(range(kh), range(kw)):
        out[
            ..., i * dh : i * dh + sh * (bh - 1) + 1 : sh, j * dw : j * dw + sw * (bw - 1) + 1 : sw
        ] += c[..., i, j, :, :]
    return out[..., ph : ph + h, pw : pw + w]


_IM2COL_CASES = [
    ((2, 3, 5, 6), (2, 2), (1, 1), (0, 0), (1, 1), "k2"),
    ((1, 2, 7, 6), (3, 2), (2, 1), (1, 2), (2, 1), "dilation-padding-stride"),
    ((2, 4, 4), (2, 3), (1, 1), (1, 0), (1, 2), "unbatched"),
]


def _im2col_samples(op, m, dtype):
    for shape, k, d, p, s, name in _IM2COL_CASES:
        yield SampleInput(m.make(shape), (k, d, p, s), name=name)
    yield SampleInput(
        m.make((1, 2, 5, 5), layout="transposed"), (3, 1, 1, 2), name="noncontiguous-int-args"
    )
    yield SampleInput(m.make((0, 1, 5, 5)), (2, 1, 0, 1), name="empty-batch")


def _col2im_samples(op, m, dtype):
    for shape, k, d, p, s, name in _IM2COL_CASES:
        hw = shape[-2:]
        blocks = [_blocks(hw[i], k[i], d[i], p[i], s[i]) for i in range(2)]
        lead = shape[:-3] + (shape[-3] * k[0] * k[1], blocks[0] * blocks[1])
        yield SampleInput(m.make(lead), (hw, k, d, p, s), name=name)


def _im2col_errors(op, m, dtype):
    x = m.make((1, 2, 4, 4))
    yield ErrorInput(
        SampleInput(m.make((2, 4)), (2, 1, 0, 1), name="2d"),
        RuntimeError,
        r"im2col\(\): Expected 3D or 4D \(batch mode\) tensor",
    )
    yield ErrorInput(
        SampleInput(x, (0, 1, 0, 1), name="kernel"),
        RuntimeError,
        r"kernel size should be greater than zero, but got kernel_height: 0",
    )
    yield ErrorInput(
        SampleInput(x, (2, 1, 0, 0), name="stride"),
        RuntimeError,
        r"stride should be greater than zero",
    )
    yield ErrorInput(
        SampleInput(x, (5, 1, 0, 1), name="too-small"),
        RuntimeError,
        r"calculated shape of the array of sliding blocks as \(0, 0\)",
    )


def _col2im_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((1, 5, 9)), ((4, 4), 2, 1, 0, 1), name="divisible"),
        RuntimeError,
        r"Expected size of input's dimension 1 to be divisible by the "
        r"product of kernel_size",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 4, 8)), ((4, 4), 2, 1, 0, 1), name="blocks"),
        RuntimeError,
        r"expected size of input's dimension 2 to match the "
        r"calculated number of sliding blocks 3 \* 3 = 9",
    )
    yield ErrorInput(
        SampleInput(m.make((4,)), ((4, 4), 2, 1, 0, 1), name="1d"),
        RuntimeError,
        r"col2im\(\): Expected 2D or 3D \(batch mode\) tensor",
    )


# ---- 3-D pooling -------------------------------------------------------------------------------


def _triple(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * 3


def _out_size(size, k, s, p, d, ceil):
    out = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode):
    k = _triple(kernel_size)
    s = _triple(stride) if stride not in (None, []) else k
    p, d = _triple(padding), _triple(dilation)
    outs = tuple(_out_size(x.shape[-3 + i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(3))
    return k, s, p, d, outs


def _max_pool3d_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    k, s, p, d, outs = _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode)
    size = x.shape[-3:]
    lead = x.shape[:-3]
    flat = x.reshape(lead + (-1,))
    vals = np.empty(lead + outs, dtype=x.dtype)
    idx = np.empty(lead + outs, dtype=np.int64)
    for o in itertools.product(*[range(n) for n in outs]):
        cand = []
        for w in itertools.product(*[range(n) for n in k]):
            pos = [o[i] * s[i] - p[i] + w[i] * d[i] for i in range(3)]
            if all(0 <= pos[i] < size[i] for i in range(3)):
                cand.append((pos[0] * size[1] + pos[1]) * size[2] + pos[2])
        window = flat[..., cand]
        best = np.where(np.isnan(window).any(-1), np.isnan(window).argmax(-1), window.argmax(-1))
        chosen = np.asarray(cand)[best]
        idx[(...,) + o] = chosen
        vals[(...,) + o] = np.take_along_axis(flat, chosen[..., None], -1)[..., 0]
    return vals, idx


def _max_pool3d_value_ref(
    x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False
):
    res = _max_pool3d_ref(x, kernel_size, stride, padding, dilation, ceil_mode)
    return res if return_indices else res[0]


def _avg_pool3d_ref(
    x,
    kernel_size,
    stride=None,
    padding=0,
    ceil_mode=False,
    count_include_pad=True,
    divisor_override=None,
):
    k, s, p, _, outs = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode)
    size = x.shape[-3:]
    out = np.empty(x.shape[:-3] + outs, dtype=x.dtype)
    for o in itertools.product(*[range(n) for n in outs]):
        lo = [o[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], size[i] + p[i]) for i in range(3)]
        pool = np.prod([hi[i] - lo[i] for i in range(3)])
        lo = [max(v, 0) for v in lo]
        hi = [min(hi[i], size[i]) for i in range(3)]
        window = x[..., lo[0] : hi[0], lo[1] : hi[1], lo[2] : hi[2]]
        total = window.sum(axis=(-3, -2, -1))
        div = divisor_override or (pool if count_include_pad else np.prod(window.shape[-3:]))
        out[(...,) + o] = total / div
    return out


def _pool3d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 2, 4, 4, 4)), (2,), name="k2")
    yield SampleInput(
        m.make((1, 2, 5, 6, 5)),
        ((3, 2, 3),),
        dict(stride=(2, 1, 2), padding=1),
        name="stride-padding",
    )
    yield SampleInput(
        m.make((1, 1, 5, 5, 5)), (3,), dict(stride=2, padding=1, ceil_mode=True), name="ceil_mode"
    )
    yield SampleInput(m.make((2, 4, 3, 5)), (2,), dict(stride=1), name="unbatched")
    yield SampleInput(m.make((1, 2, 4, 4, 4), layout="transposed"), (2,), name="noncontiguous")
    if op.name.startswith("max"):
        yield SampleInput(m.make((1, 1, 5, 5, 5)), (2,), dict(dilation=2), name="dilation")
        if op.name == "max_pool3d":
            yield SampleInput(
                m.make((1, 1, 4, 4, 4)), (2,), dict(return_indices=True), name="return_indices"
            )
    else:
        yield SampleInput(
            m.make((1, 2, 5, 5, 5)),
            (3,),
            dict(stride=2, padding=1, count_include_pad=False),
            name="exclude-pad",
        )
        yield SampleInput(
            m.make((1, 1, 5, 5, 5)),
            (3,),
            dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False),
            name="ceil-exclude-pad",
        )
        yield SampleInput(
            m.make((1, 2, 4, 4, 4)), (2,), dict(divisor_override=3), name="divisor_override"
        )


def _pool3d_errors(op, m, dtype):
    name = op.name  # errors carry the name of the op called
    x = m.make((1, 2, 4, 4, 4))
    yield ErrorInput(
        SampleInput(x, (3,), dict(padding=2), name="padding"),
        RuntimeError,
        rf"{name}\(\): pad should be smaller than or equal to half of kernel size",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 1, 1, 1, 1)), (2,), name="too-small"),
        RuntimeError,
        rf"{name}\(\): Given input size: \(1x1x1x1\). Calculated output size: "
        rf"\(1x0x0x0\). Output size is too small",
    )
    yield ErrorInput(
        SampleInput(m.make((2, 5, 5)), (2,), name="3d-input"),
        RuntimeError,
        rf"{name}\(\): non-empty 4D or 5D \(batch mode\) tensor expected",
    )
    yield ErrorInput(
        SampleInput(x, ((2, 2),), name="kernel-length"),
        RuntimeError,
        rf"{name}\(\): kernel_size must either be a single int, or a tuple of three",
    )
    yield ErrorInput(
        SampleInput(x, (2, 0), name="zero-stride"),
        RuntimeError,
        rf"{name}\(\): stride should be greater than zero",
    )
    kernel = "avg_pool3d" if name == "avg_pool3d" else "max_pool3d"
    yield ErrorInput(
        SampleInput(x.to(_dt.int64), (2,), name="int"),
        RuntimeError,
        rf"\"{kernel}\" not implemented for 'int64'",
    )


# ---- adaptive 3-D pooling ----------------------------------------------------------------------


def _bins(size, out):
    return [((i * size) // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive3d_ref(reduce: str):
    def ref(x, output_size):
        outs = _triple(output_size)
        size = x.shape[-3:]
        vals = np.empty(x.shape[:-3] + outs, dtype=x.dtype)
        idx = np.empty(x.shape[:-3] + outs, dtype=np.int64)
        bins = [_bins(size[i], outs[i]) for i in range(3)]
        for o in itertools.product(*[range(n) for n in outs]):
            (a0, a1), (b0, b1), (c0, c1) = (bins[i][o[i]] for i in range(3))
            w = x[..., a0:a1, b0:b1, c0:c1]
            if reduce == "mean":
                vals[(...,) + o] = w.mean(axis=(-3, -2, -1))
                continue
            flat = w.reshape(w.shape[:-3] + (-1,))
            best = flat.argmax(-1)
            vals[(...,) + o] = flat.max(-1)
            di, hi, wi = np.unravel_index(best, w.shape[-3:])
            idx[(...,) + o] = ((di + a0) * size[1] + hi + b0) * size[2] + wi + c0
        return vals if reduce == "mean" else (vals, idx)

    return ref


def _adaptive3d_samples(op, m, dtype):
    yield SampleInput(m.make((2, 2, 4, 5, 6)), ((2, 3, 4),), name="uneven-bins")
    yield SampleInput(m.make((1, 2, 4, 4, 4)), ((4, 4, 4),), name="identity")
    yield SampleInput(m.make((3, 5, 3, 4)), (1,), name="unbatched-global")
    yield SampleInput(
        m.make((1, 2, 3, 4, 5), layout="transposed"), ((2, 2, 3),), name="noncontiguous"
    )


def _adaptive3d_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((2, 4, 4)), ((2, 2, 2),), name="3d"),
        RuntimeError,
        rf"{op.name}\(\): Expected 4D or 5D tensor",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 2, 4, 4, 4)), ((0, 2, 2),), name="zero-size"),
        RuntimeError,
        r"elements of output_size must be greater than or equal to 0",
    )


# ---- fractional max pooling --------------------------------------------------------------------


def _intervals(sample, size, out, pool, ftype):
    seq = np.empty(out, dtype=np.int64)
    if out > 1:
        alpha = ftype(size - pool) / ftype(out - 1)
        for i in range(out - 1):
            seq[i] = int(ftype(i + ftype(sample)) * alpha) - int(ftype(sample) * alpha)
    seq[out - 1] = size - pool
    return seq


def _fractional_ref(x, kernel_size, output_size, samples):
    n = len(kernel_size)
    ftype = x.dtype.type
    batched = x.ndim == n + 2
    xb = x if batched else x[None]
    sizes = xb.shape[-n:]
    vals = np.empty(xb.shape[:2] + tuple(output_size), dtype=x.dtype)
    idx = np.empty(xb.shape[:2] + tuple(output_size), dtype=np.int64)
    order = [1, 0] if n == 2 else [0, 1, 2]  # PyTorch's samples list W before H in 2-D
    for b, c in itertools.product(range(xb.shape[0]), range(xb.shape[1])):
        starts = [
            _intervals(samples[b, c, order[d]], sizes[d], output_size[d], kernel_size[d], ftype)
            for d in range(n)
        ]
        for o in itertools.product(*[range(v) for v in output_size]):
            sl = tuple(slice(starts[d][o[d]], starts[d][o[d]] + kernel_size[d]) for d in range(n))
            w = xb[(b, c) + sl].reshape(-1)
            best = int(np.isnan(w).argmax()) if np.isnan(w).any() else int(w.argmax())
            pos = np.unravel_index(best, kernel_size)
            flat = 0
            for d in range(n):
                flat = flat * sizes[d] + starts[d][o[d]] + pos[d]
            vals[(b, c) + o], idx[(b, c) + o] = w[best], flat
    return (vals, idx) if batched else (vals[0], idx[0])


def _fractional_samples(op, m, dtype):
    n = 2 if op.name.endswith("2d") else 3
    cases: dict[int, list] = {
        2: [
            ((2, 2, 7, 8), (2, 3), (3, 4), "batched"),
            ((3, 6, 6), (2, 2), (4, 5), "unbatched"),
            ((1, 2, 5, 5), (2, 2), (1, 1), "single-window"),
        ],
        3: [
            ((1, 2, 5, 6, 6), (2, 2, 3), (3, 4, 2), "batched"),
            ((2, 5, 5, 6), (2, 2, 2), (3, 3, 4), "unbatched"),
        ],
    }
    for shape, k, o, name in cases[n]:
        batch = shape[0] if len(shape) == n + 2 else 1
        samples = m.make((batch, shape[-n - 1], n), low=0.0, high=1.0, requires_grad=False)
        yield SampleInput(m.make(shape), (k, o, samples), name=name)


def _fractional_errors(op, m, dtype):
    n = 2 if op.name.endswith("2d") else 3
    x = m.make((1, 2) + (5,) * n)
    good = m.make((1, 2, n), low=0.0, high=1.0)
    yield ErrorInput(
        SampleInput(x, ((2,) * n, (5,) * n, good), name="too-large"),
        RuntimeError,
        r"too large relative to input",
    )
    yield ErrorInput(
        SampleInput(x, ((2,) * n, (2,) * n, m.make((2, 2, n))), name="samples"),
        RuntimeError,
        r"expected _random_samples of shape",
    )
    yield ErrorInput(
        SampleInput(m.make((5, 5)), ((2,) * n, (2,) * n, good), name="rank"),
        RuntimeError,
        r"non-empty",
    )


def _torch_fractional(n):
    def ref(x, kernel_size, output_size, samples):
        import torch.nn.functional as F

        fn = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
        return fn(
            x, kernel_size, output_size=output_size, return_indices=True, _random_samples=samples
        )

    return ref


# ---- grid_sampler / affine_grid_generator ------------------------------------------------------


def _grid_sampler_samples(op, m, dtype):
    # gradient samples are smaller: gradcheck evaluates the op twice per input element, and
    # 24 samples of 128 elements took 100 s of the test run (every mode, padding and corner
    # rule is still checked, with points outside the input too)
    small = m.requires_grad
    x2, g2 = ((1, 1, 3, 4), (1, 2, 3, 2)) if small else ((2, 2, 4, 5), (2, 3, 4, 2))
    x3, g3 = ((1, 1, 2, 3, 2), (1, 2, 2, 1, 3)) if small else ((1, 2, 3, 4, 3), (1, 2, 3, 2, 3))
    for mode, pad, ac in itertools.product((0, 1, 2), (0, 1, 2), (False, True)):
        yield SampleInput(
            m.make(x2),
            (m.make(g2, low=-1.2, high=1.2), mode, pad, ac),
            name=f"2d-mode{mode}-pad{pad}-ac{int(ac)}",
        )
    for mode, pad in itertools.product((0, 1), (0, 1, 2)):
        yield SampleInput(
            m.make(x3),
            (m.make(g3, low=-1.2, high=1.2), mode, pad, False),
            name=f"3d-mode{mode}-pad{pad}",
        )
    yield SampleInput(
        m.make((1, 2, 4, 5), layout="transposed"),
        (m.make((1, 2, 2, 2), low=-1, high=1), 0, 0, True),
        name="noncontiguous",
    )


def _grid_sampler_errors(op, m, dtype):
    x = m.make((1, 2, 4, 4))
    yield ErrorInput(
        SampleInput(x, (m.make((1, 2, 2, 3)), 0, 0, False), name="last-dim"),
        RuntimeError,
        r"expected grid to have size 2 in last dimension",
    )
    yield ErrorInput(
        SampleInput(x, (m.make((2, 2, 2, 2)), 0, 0, False), name="batch"),
        RuntimeError,
        r"expected grid and input to have same batch size",
    )
    yield ErrorInput(
        SampleInput(
            m.make((1, 2, 4, 4, 4)), (m.make((1, 2, 2, 2, 3)), 2, 0, False), name="bicubic-5d"
        ),
        RuntimeError,
        r"bicubic interpolation only supports 4D input",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 4, 4)), (m.make((1, 2, 2)), 0, 0, False), name="3d"),
        RuntimeError,
        r"expected 4D or 5D input and grid with same number",
    )


def _affine_grid_ref(theta, size, align_corners):
    spatial = list(size[2:])
    axes = []
    for n in spatial:
        if n <= 1:
            axes.append(np.zeros(1))
            continue
        r = np.linspace(-1.0, 1.0, n)
        axes.append(r if align_corners else r * (n - 1) / n)
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([g.reshape(-1) for g in reversed(mesh)] + [np.ones(mesh[0].size)], axis=1)
    out = np.einsum("pk,njk->npj", base, theta.astype(np.float64))
    return out.reshape([size[0]] + spatial + [len(spatial)]).astype(theta.dtype)


def _affine_grid_samples(op, m, dtype):
    for ac in (False, True):
        yield SampleInput(m.make((2, 2, 3)), ((2, 3, 4, 5), ac), name=f"2d-ac{int(ac)}")
        yield SampleInput(m.make((1, 3, 4)), ((1, 2, 3, 2, 4), ac), name=f"3d-ac{int(ac)}")
    yield SampleInput(m.make((1, 2, 3)), ((1, 1, 1, 3), False), name="unit-height")


def _affine_grid_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((1, 3, 3)), ((1, 1, 4, 4), False), name="shape"),
        ValueError,
        r"Expected a batch of 2D affine matrices of shape Nx2x3",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 2, 3)), ((1, 1, 4), False), name="size"),
        NotImplementedError,
        r"affine_grid only supports 4D and 5D sizes",
    )
    yield ErrorInput(
        SampleInput(m.make((1, 2, 3)), ((1, 1, 0, 4), False), name="empty"),
        ValueError,
        r"Expected non-zero, positive output size",
    )


# ---- conv_tbc ----------------------------------------------------------------------------------


def _conv_tbc_ref(x, w, b, pad=0):
    k = w.shape[0]
    xp = np.pad(x, [(pad, pad), (0, 0), (0, 0)])
    t_out = xp.shape[0] - k + 1
    out = np.zeros((t_out, x.shape[1], w.shape[2]), dtype=x.dtype) + b
    for t in range(t_out):
        for j in range(k):
            out[t] += xp[t + j] @ w[j]
    return out


def _torch_conv_tbc(x, w, b, pad=0):
    import torch

    # torch's kernel views its input, which a transposed layout cannot give
    return torch.conv_tbc(x.contiguous(), w.contiguous(), b, pad)


def _conv_tbc_samples(op, m, dtype):
    yield SampleInput(m.make((6, 2, 3)), (m.make((3, 3, 4)), m.make((4,))), name="plain")
    yield SampleInput(m.make((5, 1, 2)), (m.make((2, 2, 3)), m.make((3,))), dict(pad=1), name="pad")
    yield SampleInput(
        m.make((4, 3, 2), layout="transposed"),
        (m.make((1, 2, 2)), m.make((2,))),
        name="noncontiguous",
    )


def _conv_tbc_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((6, 2)), (m.make((3, 3, 4)), m.make((4,))), name="2d"),
        RuntimeError,
        r"Input must have 3 dims",
    )
    yield ErrorInput(
        SampleInput(m.make((6, 2, 2)), (m.make((3, 3, 4)), m.make((4,))), name="channels"),
        RuntimeError,
        r"Input dim 2 \(input channels\) is not == dim 1",
    )
    yield ErrorInput(
        SampleInput(m.make((6, 2, 3)), (m.make((3, 3, 4)), m.make((5,))), name="bias"),
        RuntimeError,
        r"Bias size must equal dim 2",
    )


OPS: list[OpInfo] = [
    OpInfo(
        "hardshrink",
        dtypes=FLOATS,
        ref=lambda x, lambd=0.5: np.where(np.abs(x) > lambd, x, 0).astype(x.dtype),
        torch_ref=torch_nn("hardshrink"),
        sample_inputs_func=_shrink_samples,
        error_inputs_func=_shrink_errors,
    ),
    OpInfo(
        "softshrink",
        dtypes=FLOATS,
        ref=lambda x, lambd=0.5: np.where(
            x > lambd, x - lambd, np.where(x < -lambd, x + lambd, 0)
        ).astype(x.dtype),
        torch_ref=torch_nn("softshrink"),
        sample_inputs_func=_shrink_samples,
        error_inputs_func=_shrink_errors,
    ),
    OpInfo(
        "rrelu",
        dtypes=FLOATS,
        ref=_rrelu_ref,
        torch_ref=torch_nn("rrelu"),
        sample_inputs_func=_rrelu_samples,
        error_inputs_func=_rrelu_errors,
    ),
    OpInfo(
        "im2col",
        dtypes=FLOATS,
        ref=_im2col_ref,
        torch_ref=torch_aten("im2col"),
        sample_inputs_func=_im2col_samples,
        error_inputs_func=_im2col_errors,
    ),
    OpInfo(
        "col2im",
        dtypes=FLOATS,
        ref=_col2im_ref,
        torch_ref=torch_aten("col2im"),
        sample_inputs_func=_col2im_samples,
        error_inputs_func=_col2im_errors,
        tol=_TOL,
    ),
    OpInfo(
        "max_pool3d_with_indices",
        dtypes=FLOATS,
        ref=_max_pool3d_ref,
        torch_ref=torch_aten("max_pool3d_with_indices"),
        sample_inputs_func=_pool3d_samples,
        error_inputs_func=_pool3d_errors,
    ),
    OpInfo(
        "max_pool3d",
        dtypes=FLOATS,
        ref=_max_pool3d_value_ref,
        torch_ref=torch_nn("max_pool3d"),
        sample_inputs_func=_pool3d_samples,
        error_inputs_func=_pool3d_errors,
    ),
    OpInfo(
        "avg_pool3d",
        dtypes=_NO_BF16,
        ref=_avg_pool3d_ref,
        torch_ref=torch_nn("avg_pool3d"),
        sample_inputs_func=_pool3d_samples,
        error_inputs_func=_pool3d_errors,
        tol=_TOL,
    ),
    OpInfo(
        "adaptive_avg_pool3d",
        dtypes=FLOATS,
        ref=_adaptive3d_ref("mean"),
        torch_ref=torch_nn("adaptive_avg_pool3d"),
        sample_inputs_func=_adaptive3d_samples,
        error_inputs_func=_adaptive3d_errors,
        tol=_TOL,
    ),
    OpInfo(
        "adaptive_max_pool3d",
        dtypes=FLOATS,
        ref=_adaptive3d_ref("max"),
        torch_ref=torch_aten("adaptive_max_pool3d"),
        sample_inputs_func=_adaptive3d_samples,
        error_inputs_func=_adaptive3d_errors,
    ),
    OpInfo(
        "fractional_max_pool2d",
        dtypes=FLOATS,
        ref=_fractional_ref,
        torch_ref=_torch_fractional(2),
        sample_inputs_func=_fractional_samples,
        error_inputs_func=_fractional_errors,
    ),
    OpInfo(
        "fractional_max_pool3d",
        dtypes=FLOATS,
        ref=_fractional_ref,
        torch_ref=_torch_fractional(3),
        sample_inputs_func=_fractional_samples,
        error_inputs_func=_fractional_errors,
    ),
    OpInfo(
        "conv_tbc",
        dtypes=_NO_BF16,
        ref=_conv_tbc_ref,
        torch_ref=_torch_conv_tbc,
        sample_inputs_func=_conv_tbc_samples,
        error_inputs_func=_conv_tbc_errors,
        tol=_TOL,
    ),
    OpInfo(
        "grid_sampler",
        dtypes=_NO_BF16,
        ref=None,
        torch_ref=torch_aten("grid_sampler"),
        sample_inputs_func=_grid_sampler_samples,
        error_inputs_func=_grid_sampler_errors,
        tol=_TOL,
    ),
    OpInfo(
        "affine_grid_generator",
        dtypes=_NO_BF16,
        ref=_affine_grid_ref,
        torch_ref=torch_aten("affine_grid_generator"),
        sample_inputs_func=_affine_grid_samples,
        error_inputs_func=_affine_grid_errors,
        tol=_TOL,
    ),
]
