"""numba loops of the fused optimizer kernels (`kernels/optim.py`): one call updates every
parameter of a list, walking the buffers through their addresses (no per-parameter dispatch, no
list objects to build: an ``int64[n, 5]`` table holds each parameter's buffer addresses, in the
order parameter, gradient, then the optimizer's state buffers).

Every buffer is contiguous and of one float dtype T (the caller checks); all scalars arrive in a
T array, so the arithmetic stays in T, in the order of the optimizers' single-tensor updates.
The loops are single-threaded on purpose: the update is memory-bound (one pass over each
buffer), a serial pass over Adam's 1.9M-parameter MLP takes about 2 ms, and a ``parallel=True``
version measured 10x slower on this shared 2-core machine (its threads wait on each other
whenever the other processes hold a core), as PyTorch's OpenMP kernels do here.

Per-parameter coefficients (``coef[i]``): Adam's negated step size and sqrt(1 - β2^t),
Adagrad's negated decayed learning rate. ``hyper`` and ``flags`` hold the rest; their layout per
algorithm is written at each span function.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

_jit = njit(cache=True, error_model="numpy")


@intrinsic
def _as_pointer(typingctx, address, like):
    """The integer `address` as a pointer to elements of `like`'s type."""
    sig = types.CPointer(like)(types.int64, like)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@_jit
def _buffer(addrs, i, j, n, like):
    """Buffer `j` of parameter `i` (n elements of `like`'s type)."""
    # an @intrinsic: numba passes its typing context first, which the stub cannot express
    return carray(_as_pointer(addrs[i, j], like), n)  # type: ignore[call-arg]


@_jit
def _nan_max(a, b):
    """maximum(a, b) propagating NaN (as the per-op ``maximum``)."""
    if a != a or a > b:
        return a
    return b


@_jit
def _lerp(a, b, w, small):
    """lerp(a, b, w) from the nearer end, computed as the cpu ``lerp`` kernel computes it (the
    far-end branch in double precision); the caller rounds by storing."""
    d = b - a
    if small:
        return a + w * d
    return b - d * (1.0 - w)


@_jit
def _grad_in(g, j, scale, sign, has_scale):
    """g[j] unscaled (written back, as a GradScaler's unscale) and signed (maximize)."""
    gj = g[j]
    if has_scale:
        gj = gj / scale
        g[j] = gj
    return gj * sign


@_jit
def _adam(addrs, i, n, coef, hyper, flags):
    # hyper: scale, sign, l2, decay, w1 (1-β1), β2, 1-β2, eps
    # flags: has_scale, l2 != 0, lerp from the start (w1 < 0.5), amsgrad
    z = hyper[0]
    p, g = _buffer(addrs, i, 0, n, z), _buffer(addrs, i, 1, n, z)
    m, v = _buffer(addrs, i, 2, n, z), _buffer(addrs, i, 3, n, z)
    vmax = _buffer(addrs, i, 4, n if flags[3] else 0, z)
    scale, sign, l2, decay = hyper[0], hyper[1], hyper[2], hyper[3]
    w1, b2, c2, eps = hyper[4], hyper[5], hyper[6], hyper[7]
    nss, bc2s = coef[i, 0], coef[i, 1]
    has_scale, has_l2, small, amsgrad = flags[0] != 0, flags[1] != 0, flags[2] != 0, flags[3] != 0
    for j in range(n):
        gj = _grad_in(g, j, scale, sign, has_scale)
        pj = p[j] * decay
        if has_l2:
            gj = gj + l2 * pj
        m[j] = _lerp(m[j], gj, w1, small)
        mj = m[j]
        vj = v[j] * b2
        vj = vj + c2 * gj * gj
        v[j] = vj
        if amsgrad:
            vj = _nan_max(vmax[j], vj)
            vmax[j] = vj
        p[j] = pj + nss * mj / (np.sqrt(vj) / bc2s + eps)


@_jit
def _sgd(addrs, i, n, coef, hyper, flags):
    # hyper: scale, sign, weight_decay, momentum, 1 - dampening, -lr
    # flags: has_scale, weight_decay != 0, momentum != 0, first step, nesterov
    z = hyper[0]
    p, g = _buffer(addrs, i, 0, n, z), _buffer(addrs, i, 1, n, z)
    buf = _buffer(addrs, i, 2, n if flags[2] else 0, z)
    scale, sign, wd, mom, damp, nlr = hyper[0], hyper[1], hyper[2], hyper[3], hyper[4], hyper[5]
    has_scale, has_wd, has_mom = flags[0] != 0, flags[1] != 0, flags[2] != 0
    first, nesterov = flags[3] != 0, flags[4] != 0
    for j in range(n):
        gj = _grad_in(g, j, scale, sign, has_scale)
        pj = p[j]
        if has_wd:
            gj = gj + wd * pj
        if has_mom:
            bj = gj if first else buf[j] * mom + damp * gj
            buf[j] = bj
            gj = gj + mom * bj if nesterov else bj
        p[j] = pj + nlr * gj


@_jit
def _adagrad(addrs, i, n, coef, hyper, flags):
    # hyper: scale, sign, weight_decay, eps; flags: has_scale, weight_decay != 0
    z = hyper[0]
    p, g, s = _buffer(addrs, i, 0, n, z), _buffer(addrs, i, 1, n, z), _buffer(addrs, i, 2, n, z)
    scale, sign, wd, eps = hyper[0], hyper[1], hyper[2], hyper[3]
    has_scale, has_wd = flags[0] != 0, flags[1] != 0
    nclr = coef[i, 0]
    for j in range(n):
        gj = _grad_in(g, j, scale, sign, has_scale)
        pj = p[j]
        if has_wd:
            gj = gj + wd * pj
        sj = s[j] + gj * gj
        s[j] = sj
        p[j] = pj + nclr * gj / (np.sqrt(sj) + eps)


@_jit
def _rmsprop(addrs, i, n, coef, hyper, flags):
    # hyper: scale, sign, weight_decay, alpha, 1 - alpha, eps, momentum, -lr
    # flags: has_scale, weight_decay != 0, centered, momentum > 0, lerp from the start
    z = hyper[0]
    p, g, sq = _buffer(addrs, i, 0, n, z), _buffer(addrs, i, 1, n, z), _buffer(addrs, i, 2, n, z)
    ga = _buffer(addrs, i, 3, n if flags[2] else 0, z)
    buf = _buffer(addrs, i, 4, n if flags[3] else 0, z)
    scale, sign, wd, alpha, c1 = hyper[0], hyper[1], hyper[2], hyper[3], hyper[4]
    eps, mom, nlr = hyper[5], hyper[6], hyper[7]
    has_scale, has_wd = flags[0] != 0, flags[1] != 0
    centered, has_mom, small = flags[2] != 0, flags[3] != 0, flags[4] != 0
    for j in range(n):
        gj = _grad_in(g, j, scale, sign, has_scale)
        pj = p[j]
        if has_wd:
            gj = gj + wd * pj
        sqj = sq[j] * alpha
        sqj = sqj + c1 * gj * gj
        sq[j] = sqj
        if centered:
            ga[j] = _lerp(ga[j], gj, c1, small)
            gaj = ga[j]
            avg = np.sqrt(sqj - gaj * gaj) + eps
        else:
            avg = np.sqrt(sqj) + eps
        if has_mom:
            bj = buf[j] * mom + gj / avg
            buf[j] = bj
            p[j] = pj + nlr * bj
        else:
            p[j] = pj + nlr * gj / avg


ADAM, SGD, ADAGRAD, RMSPROP = 0, 1, 2, 3


@_jit
def update(algo, addrs, sizes, coef, hyper, flags):
    """Update every parameter with algorithm `algo` (ADAM for Adam and AdamW, SGD, ADAGRAD,
    RMSPROP)."""
    for i in range(sizes.shape[0]):
        if algo == ADAM:
            _adam(addrs, i, sizes[i], coef, hyper, flags)
        elif algo == SGD:
            _sgd(addrs, i, sizes[i], coef, hyper, flags)
        elif algo == ADAGRAD:
            _adagrad(addrs, i, sizes[i], coef, hyper, flags)
        else:
            _rmsprop(addrs, i, sizes[i], coef, hyper, flags)
