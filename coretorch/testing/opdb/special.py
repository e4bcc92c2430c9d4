"""OpInfos of the special functions and elementwise arithmetic composites
(coretorch/ops/special.py, arithmetic.py); references from scipy.special and numpy."""

from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes as _dt
from ..opinfo import ALL, FLOATS, ErrorInput, OpInfo, SampleInput
from .common import (
    INF,
    NAN,
    binary_error_inputs,
    binary_samples,
    quiet,
    unary_error_inputs,
    unary_samples,
)
from .scans import holds_data

ALL_INT = (_dt.int8, _dt.int16, _dt.int32, _dt.int64)


def _sp():
    import scipy.special

    return scipy.special


def _float_of(x):
    """The dtype coretorch computes float-valued ops of `x` in (float32 for integer input)."""
    return x.dtype if x.dtype.kind == "f" else np.dtype(np.float32)


def _unary_ref(fn):
    """A reference computing scipy's `fn(name)` in float64, cast to the op's result dtype."""

    def ref(x, *args, **kwargs):
        return np.asarray(fn(_sp())(x.astype(np.float64), *args, **kwargs)).astype(_float_of(x))

    return quiet(ref)


def _lgamma(sp):
    return lambda x: np.where(x == -np.inf, np.inf, sp.gammaln(x))


def _airy(sp):
    return lambda x: sp.airy(x)[0]


def _spherical_j0(sp):
    return lambda x: np.where(np.isinf(x), 0.0, sp.spherical_jn(0, x))


def _logit(sp):
    def f(x, eps=None):
        return sp.logit(x if eps is None else np.clip(x, eps, 1 - eps))

    return f


# op name -> (scipy function getter, dtypes, sample range (low, high), extra kwargs samples)
_UNARY = {
    "lgamma": (_lgamma, ALL, (0.3, 9), {}),
    "digamma": (lambda sp: sp.psi, ALL, (0.3, 9), {}),
    "i0": (lambda sp: sp.i0, ALL, (None, None), {}),
    "sinc": (lambda sp: np.sinc, ALL, (None, None), {}),
    "logit": (_logit, FLOATS, (0.02, 0.98), dict(eps=0.1)),
    "special_i0e": (lambda sp: sp.i0e, ALL, (None, None), {}),
    "special_i1": (lambda sp: sp.i1, ALL, (None, None), {}),
    "special_i1e": (lambda sp: sp.i1e, ALL, (None, None), {}),
    "special_erfcx": (lambda sp: sp.erfcx, ALL, (-3, 9), {}),
    "special_ndtr": (lambda sp: sp.ndtr, ALL, (None, None), {}),
    "special_ndtri": (lambda sp: sp.ndtri, FLOATS, (0.02, 0.98), {}),
    "special_log_ndtr": (lambda sp: sp.log_ndtr, ALL, (None, None), {}),
    "special_entr": (lambda sp: sp.entr, ALL, (0.1, 9), {}),
    "special_bessel_j0": (lambda sp: sp.j0, ALL, (None, None), {}),
    "special_bessel_j1": (lambda sp: sp.j1, ALL, (None, None), {}),
    "special_bessel_y0": (lambda sp: sp.y0, ALL, (0.1, 9), {}),
    "special_bessel_y1": (lambda sp: sp.y1, ALL, (0.1, 9), {}),
    "special_modified_bessel_i0": (lambda sp: sp.i0, ALL, (None, None), {}),
    "special_modified_bessel_i1": (lambda sp: sp.i1, ALL, (None, None), {}),
    "special_modified_bessel_k0": (lambda sp: sp.k0, ALL, (0.1, 9), {}),
    "special_modified_bessel_k1": (lambda sp: sp.k1, ALL, (0.1, 9), {}),
    "special_scaled_modified_bessel_k0": (lambda sp: sp.k0e, ALL, (0.1, 9), {}),
    "special_scaled_modified_bessel_k1": (lambda sp: sp.k1e, ALL, (0.1, 9), {}),
    "special_airy_ai": (_airy, ALL, (-5, 5), {}),
    "special_spherical_bessel_j0": (_spherical_j0, ALL, (None, None), {}),
}
# PyTorch evaluates these with single-precision-grade approximations (about 1e-6 relative
# error in float64, more near zeros); scipy is the more accurate reference
_LESS_ACCURATE_IN_TORCH = {
    "special_bessel_j0",
    "special_bessel_j1",
    "special_bessel_y0",
    "special_bessel_y1",
    "special_airy_ai",
}
_NO_TORCH_NAME = {n: n[len("special_") :] for n in _UNARY if n.startswith("special_")}


def _torch_special(name: str):
    def ref(*a, **k):
        import torch

        return getattr(torch.special, name)(*a, **k)

    return ref


def _unary_samples(low, high, extra: dict):
    def samples(op, m, dtype):
        yield from unary_samples(op, m, dtype, low=low, high=high)
        if extra:
            yield SampleInput(
                m.make((3, 4), low=low, high=high),
                kwargs=dict(extra),
                name=f"kwargs{sorted(extra)}",
            )
        if dtype.is_floating_point and op.name != "logit":
            yield SampleInput(
                m.make((5,), values=[NAN, INF, -INF, 0.0, -0.0]), name="nan-inf-zeros"
            )

    return samples


def _unary_infos() -> list[OpInfo]:
    out = []
    for name, (fn, dtypes, (low, high), extra) in _UNARY.items():
        tref = {}
        if name in _NO_TORCH_NAME:
            tref = dict(torch_ref=_torch_special(_NO_TORCH_NAME[name]))
        tol = {_dt.float32: (2e-5, 1e-5)}
        if name in _LESS_ACCURATE_IN_TORCH:
            tol[_dt.float64] = (1e-5, 1e-6)
        out.append(
            OpInfo(
                name,
                dtypes=dtypes,
                ref=_unary_ref(fn),
                sample_inputs_func=_unary_samples(low, high, extra),
                error_inputs_func=unary_error_inputs,
                tol=tol,
                **tref,
            )
        )
    return out


# ---- gamma family with an order argument ---------------------------------------------------------


def _polygamma_ref(n, x):
    return quiet(
        lambda: np.asarray(_sp().polygamma(n, x.astype(np.float64))).astype(_float_of(x))
    )()


def _polygamma_samples(op, m, dtype):
    for n in (0, 1, 2, 4):
        yield SampleInput(n, (m.make((3, 4), low=0.3, high=9),), name=f"n={n}")
    yield SampleInput(1, (m.make((4, 3), low=0.3, high=9, layout="transposed"),), name="transposed")
    yield SampleInput(3, (m.make((0, 2)),), name="zero-size")
    yield SampleInput(2, (m.make((), low=0.3, high=9),), name="0-d")


def _polygamma_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(-1, (m.make((3,)),), name="negative-n"),
        RuntimeError,
        "does not support negative n",
    )


def _mvlgamma_ref(x, p):
    return quiet(
        lambda: np.asarray(_sp().multigammaln(x.astype(np.float64), p)).astype(_float_of(x))
    )()


def _mvlgamma_samples(op, m, dtype):
    for p in (1, 2, 5):
        yield SampleInput(m.make((3, 4), low=p, high=p + 6), (p,), name=f"p={p}")
    yield SampleInput(m.make((0, 3)), (3,), name="zero-size")
    yield SampleInput(m.make((), low=3, high=5), (3,), name="0-d")


def _mvlgamma_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,), low=2, high=3), (0,), name="p=0"),
        RuntimeError,
        "p has to be greater than or equal to 1",
    )
    if holds_data(m):  # a refusal that reads the values
        yield ErrorInput(
            SampleInput(m.make((3,), low=0, high=1), (5,), name="data-dependent-small-values"),
            RuntimeError,
            r"All elements must be greater than \(p-1\)/2",
        )


# ---- two arguments -------------------------------------------------------------------------------


def _binary_ref(fn, out_dtype=None):
    def ref(a, b, **kwargs):
        a, b = np.asarray(a), np.asarray(b)
        r = np.asarray(fn(_sp())(a.astype(np.float64), b.astype(np.float64)))
        dt = out_dtype or np.result_type(
            a.dtype if a.dtype.kind == "f" else np.float32,
            b.dtype if b.dtype.kind == "f" else np.float32,
        )
        return r.astype(dt)

    return quiet(ref)


def _xlog1py_samples(op, m, dtype):
    yield from binary_samples(op, m, dtype, rhs_low=-0.9, scalar=False, mixed=False)
    # at self == 0 and other == -1 the function is not differentiable
    yield SampleInput(
        m.make((4,), values=[0.0, 0.0, 1.0, 2.0]),
        (m.make((4,), values=[-1.0, 3.0, -1.0, 0.5]),),
        name="zeros",
        gradcheck=False,
    )


def _zeta_samples(op, m, dtype):
    yield SampleInput(
        m.make((3, 4), low=1.5, high=6), (m.make((3, 4), low=0.5, high=5),), name="same-shape"
    )
    yield SampleInput(
        m.make((3, 1), low=1.5, high=6), (m.make((4,), low=0.5, high=5),), name="broadcast"
    )
    yield SampleInput(m.make((3,), low=1.5, high=6), (2.5,), name="scalar-q")
    yield SampleInput(
        m.make((0, 3), low=1.5, high=6), (m.make((0, 3), low=0.5, high=5),), name="zero-size"
    )


def _gammainc_samples(op, m, dtype):
    yield SampleInput(
        m.make((3, 4), low=0.5, high=6), (m.make((3, 4), low=0.1, high=8),), name="same-shape"
    )
    yield SampleInput(
        m.make((3, 1), low=0.5, high=6), (m.make((4,), low=0.1, high=8),), name="broadcast"
    )
    yield SampleInput(
        m.make((4, 3), low=0.5, high=6, layout="transposed"),
        (m.make((4, 3), low=0.1, high=8),),
        name="transposed",
    )


def _int_only_errors(op, m, dtype):
    yield from binary_error_inputs(op, m, dtype)
    f = m.make((3,), dtype=_dt.float32)
    yield ErrorInput(
        SampleInput(f, (f.clone(),), name="floats"),
        NotImplementedError,
        "not implemented for 'float32'",
    )


def _float_only_errors(op, m, dtype):
    yield from binary_error_inputs(op, m, dtype)
    i = m.make((3,), dtype=_dt.int64)
    yield ErrorInput(
        SampleInput(i, (i.clone(),), name="integers"),
        NotImplementedError,
        "not implemented for 'int64'",
    )


def _polynomial_ref(name: str):
    def f(sp):
        def evaluate(x, n):
            n = np.broadcast_to(np.asarray(n), np.broadcast(x, n).shape)
            n = np.where(np.isfinite(n), n, -1).astype(np.int64)
            k = np.maximum(n, 0)
            kind = name.split("_")[-1]
            y = 2 * x - 1 if name.startswith("shifted_") else x
            if "chebyshev" in name:
                u = sp.eval_chebyu
                r = {
                    "t": lambda: sp.eval_chebyt(k, y),
                    "u": lambda: u(k, y),
                    "v": lambda: u(k, y) - np.where(k > 0, u(k - 1, y), 0),
                    "w": lambda: u(k, y) + np.where(k > 0, u(k - 1, y), 0),
                }[kind]()
            else:
                fn = {
                    "hermite_polynomial_h": sp.eval_hermite,
                    "hermite_polynomial_he": sp.eval_hermitenorm,
                    "laguerre_polynomial_l": sp.eval_laguerre,
                    "legendre_polynomial_p": sp.eval_legendre,
                }[name]
                r = fn(k, y)
            return np.where(n < 0, 0.0, r)

        return evaluate

    return f


def _polynomial_samples(op, m, dtype):
    n = m.make((3, 4), dtype=_dt.int64, low=-1, high=12)
    yield SampleInput(m.make((3, 4), low=-1, high=1), (n,), name="degrees-0-11")
    yield SampleInput(m.make((3, 4), low=-1, high=1), (3,), name="scalar-degree")
    yield SampleInput(
        m.make((5,), values=[-1.0, 1.0, 0.0, 0.5, 2.0]),
        (m.make((5,), dtype=_dt.int64, values=[3, 4, 5, 2, 2]),),
        name="edges",
    )
    yield SampleInput(
        m.make((4,), low=-1, high=1),
        (m.make((4,), dtype=_dt.int64, values=[9, 20, 30, 7]),),
        name="high-degrees",
    )


# ---- arithmetic ---------------------------------------------------------------------------------


def _frexp_ref(x):
    mant, exp = np.frexp(x)
    return mant, exp.astype(np.int32)


def _frexp_samples(op, m, dtype):
    yield from unary_samples(op, m, dtype)
    yield SampleInput(
        m.make(
            (9,),
            values=[
                INF,
                -INF,
                NAN,
                0.0,
                -0.0,
                1.0,
                0.5,
                1e-40 if dtype is _dt.float32 else 1e-310,
                3.0,
            ],
        ),
        name="nan-inf-subnormal",
    )


def _heaviside_samples(op, m, dtype):
    yield SampleInput(m.make((3, 4), low=-2, high=3), (m.make((3, 4)),), name="same-shape")
    yield SampleInput(m.make((3, 1), low=-2, high=3), (m.make((4,)),), name="broadcast")
    yield SampleInput(m.make((5,), values=[0, 0, -1, 1, 0]), (m.make((1,)),), name="zeros")


def _heaviside_errors(op, m, dtype):
    x = m.make((3,))
    other = _dt.float64 if dtype is not _dt.float64 else _dt.float32
    yield ErrorInput(
        SampleInput(x, (x.to(other),), name="mixed-dtypes"), RuntimeError, "different dtypes"
    )


def _ldexp_samples(op, m, dtype):
    # negative integer exponents are in the float exponents' sample: PyTorch's gradient for
    # them is 0 (it raises 2 to them in integers), the true one is 2 ** e
    yield SampleInput(
        m.make((3, 4)), (m.make((3, 4), dtype=_dt.int64, low=0, high=5),), name="int-exponent"
    )
    yield SampleInput(
        m.make((3, 1)), (m.make((4,), dtype=_dt.int64, low=0, high=5),), name="broadcast"
    )
    yield SampleInput(m.make((2, 3)), (m.make((2, 3), low=-3, high=3),), name="same-dtype")


def _torch_ldexp(x, e):
    import torch

    with warnings.catch_warnings():  # torch.ldexp warns that it resizes its own broadcast output
        warnings.simplefilter("ignore", UserWarning)
        return torch.ldexp(x, e)


def _float_power_samples(op, m, dtype):
    yield from binary_samples(op, m, dtype, low=0.5, high=4, rhs_low=-2, rhs_high=3)


def _float_power_inplace_samples(op, m, dtype):
    yield SampleInput(
        m.make((3, 4), low=0.5, high=4), (m.make((3, 4), low=-2, high=3),), name="same-shape"
    )
    yield SampleInput(
        m.make((3, 4), low=0.5, high=4),
        (m.make((4,), dtype=_dt.int64, low=-2, high=3),),
        name="int-exponent",
    )
    yield SampleInput(m.make((3,), low=0.5, high=4), (2.5,), name="scalar")


def _float_power_inplace_errors(op, m, dtype):
    yield ErrorInput(
        SampleInput(m.make((3,), dtype=_dt.float32), (2,), name="float32-self"),
        RuntimeError,
        "requires dtype float64",
    )


def _nextafter_samples(op, m, dtype):
    yield from binary_samples(op, m, dtype, scalar=False, mixed=False)
    yield SampleInput(
        m.make((4,), values=[0.0, 1.0, NAN, 1.0]),
        (m.make((4,), values=[1.0, 1.0, 0.0, -INF]),),
        name="nan-equal-zero",
    )


def _copysign_samples(op, m, dtype):
    yield from binary_samples(op, m, dtype)
    if dtype.is_floating_point:
        yield SampleInput(
            m.make((4,), values=[1.0, 2.0, 0.0, NAN]),
            (m.make((4,), values=[-0.0, 0.0, -1.0, -2.0]),),
            name="signed-zeros",
            gradcheck=False,
        )


def _special_prim_samples(names, binary: bool):
    def samples(op, m, dtype):
        for n in names:
            x = m.make((2, 3), low=0.6, high=0.9)
            if not binary:
                yield SampleInput(x, (n,), name=n)
                continue
            if n == "gcd":
                x = m.make((2, 3), dtype=_dt.int64)
            yield SampleInput(x, (x + 1.5 if n != "gcd" else x + 3, n), name=n)

    return samples


def _prim_refs():
    sp = _sp()
    unary = {"gammaln": sp.gammaln, "psi": sp.psi, "airy_ai": lambda x: sp.airy(x)[0]}
    for n in (
        "i0",
        "i0e",
        "i1",
        "i1e",
        "erfcx",
        "ndtri",
        "log_ndtr",
        "j0",
        "j1",
        "y0",
        "y1",
        "k0",
        "k1",
        "k0e",
        "k1e",
    ):
        unary[n] = getattr(sp, n)
    binary = {
        "zeta": sp.zeta,
        "gammainc": sp.gammainc,
        "gammaincc": sp.gammaincc,
        "nextafter": np.nextafter,
        "gcd": np.gcd,
    }
    for n in _POLYNOMIALS:
        binary[n] = _polynomial_ref(n)(sp)
    return unary, binary


_POLYNOMIALS = (
    "chebyshev_polynomial_t",
    "chebyshev_polynomial_u",
    "chebyshev_polynomial_v",
    "chebyshev_polynomial_w",
    "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
    "hermite_polynomial_h",
    "hermite_polynomial_he",
    "laguerre_polynomial_l",
    "legendre_polynomial_p",
)


class _LazyRefs(dict):
    """The scipy functions of the primitives' references, looked up on first use."""

    def __init__(self, index: int):
        super().__init__()
        self._index = index

    def __missing__(self, key):
        self.update(_prim_refs()[self._index])
        return dict.__getitem__(self, key)


_PRIM_REFS_UNARY, _PRIM_REFS_BINARY = _LazyRefs(0), _LazyRefs(1)


def _prim_ref(binary: bool):
    table = _PRIM_REFS_BINARY if binary else _PRIM_REFS_UNARY

    def ref(x, *rest):
        name = rest[-1]
        out = np.asarray(table[name](x, *rest[:-1]))
        return out.astype(np.result_type(x, *[np.asarray(r) for r in rest[:-1]]))

    return quiet(ref)


def _prim_errors(op, m, dtype):
    args = ("nope",) if op.name == "_unary_special" else (m.make((3,)), "nope")
    yield ErrorInput(
        SampleInput(m.make((3,)), args, name="unknown-function"),
        ValueError,
        "unknown function 'nope'",
    )


_TOL = {_dt.float32: (2e-5, 1e-5)}

OPS: list[OpInfo] = [
    *_unary_infos(),
    OpInfo(
        "_unary_special",
        dtypes=FLOATS,
        ref=_prim_ref(False),
        torch_ref=None,
        sample_inputs_func=_special_prim_samples(
            (
                "gammaln",
                "psi",
                "i0",
                "i0e",
                "i1",
                "i1e",
                "erfcx",
                "ndtri",
                "log_ndtr",
                "j0",
                "j1",
                "y0",
                "y1",
                "k0",
                "k1",
                "k0e",
                "k1e",
                "airy_ai",
            ),
            False,
        ),
        error_inputs_func=_prim_errors,
        tol=_TOL,
    ),
    OpInfo(
        "_binary_special",
        dtypes=FLOATS,
        ref=_prim_ref(True),
        torch_ref=None,
        sample_inputs_func=_special_prim_samples(
            ("zeta", "gammainc", "gammaincc", "nextafter", "gcd") + _POLYNOMIALS, True
        ),
        error_inputs_func=_prim_errors,
        tol=_TOL,
    ),
    OpInfo(
        "polygamma",
        dtypes=ALL,
        ref=_polygamma_ref,
        sample_inputs_func=_polygamma_samples,
        error_inputs_func=_polygamma_errors,
        tol={_dt.float32: (1e-4, 1e-5)},
    ),
    OpInfo(
        "mvlgamma",
        dtypes=ALL,
        ref=_mvlgamma_ref,
        sample_inputs_func=_mvlgamma_samples,
        error_inputs_func=_mvlgamma_errors,
        tol=_TOL,
    ),
    OpInfo(
        "special_xlog1py",
        dtypes=FLOATS,
        ref=_binary_ref(lambda sp: sp.xlog1py),
        torch_ref=_torch_special("xlog1py"),
        sample_inputs_func=_xlog1py_samples,
        error_inputs_func=binary_error_inputs,
        tol=_TOL,
    ),
    OpInfo(
        "special_zeta",
        dtypes=FLOATS,
        ref=_binary_ref(lambda sp: sp.zeta),
        torch_ref=_torch_special("zeta"),
        sample_inputs_func=_zeta_samples,
        supports_autograd=False,
        tol=_TOL,
    ),
    *[
        OpInfo(
            f"special_{n}",
            dtypes=FLOATS,
            ref=_binary_ref(lambda sp, n=n: getattr(sp, n)),
            torch_ref=_torch_special(n),
            sample_inputs_func=_gammainc_samples,
            error_inputs_func=_float_only_errors,
            supports_autograd=False,
            tol=_TOL,
        )
        for n in ("gammainc", "gammaincc")
    ],
    *[
        OpInfo(
            f"special_{n}",
            dtypes=FLOATS,
            ref=_binary_ref(_polynomial_ref(n)),
            torch_ref=_torch_special(n),
            sample_inputs_func=_polynomial_samples,
            tol={_dt.float32: (1e-4, 1e-4), _dt.float64: (1e-9, 1e-9)},
        )
        for n in _POLYNOMIALS
    ],
    OpInfo(
        "gcd",
        dtypes=ALL_INT,
        ref=np.gcd,
        sample_inputs_func=lambda op, m, d: binary_samples(op, m, d, mixed=False, scalar=False),
        error_inputs_func=_int_only_errors,
    ),
    OpInfo(
        "lcm",
        dtypes=ALL_INT,
        ref=np.lcm,
        sample_inputs_func=lambda op, m, d: binary_samples(
            op, m, d, low=-5, high=6, rhs_low=-5, rhs_high=6, mixed=False, scalar=False
        ),
        error_inputs_func=_int_only_errors,
    ),
    OpInfo(
        "nextafter",
        dtypes=FLOATS,
        ref=np.nextafter,
        sample_inputs_func=_nextafter_samples,
        error_inputs_func=_float_only_errors,
    ),
    OpInfo(
        "copysign",
        dtypes=ALL,
        ref=quiet(np.copysign),
        sample_inputs_func=_copysign_samples,
        error_inputs_func=binary_error_inputs,
    ),
    OpInfo(
        "heaviside",
        dtypes=ALL,
        ref=np.heaviside,
        sample_inputs_func=_heaviside_samples,
        error_inputs_func=_heaviside_errors,
        supports_autograd=False,
    ),
    OpInfo(
        "ldexp",
        dtypes=FLOATS,
        ref=quiet(lambda x, e: x * np.power(2.0, e)),
        torch_ref=_torch_ldexp,
        sample_inputs_func=_ldexp_samples,
    ),
    OpInfo("frexp", dtypes=FLOATS, ref=_frexp_ref, sample_inputs_func=_frexp_samples),
    OpInfo(
        "float_power",
        dtypes=ALL,
        ref=quiet(
            lambda a, b: np.float_power(np.asarray(a, np.float64), np.asarray(b, np.float64))
        ),
        sample_inputs_func=_float_power_samples,
    ),
    OpInfo(
        "float_power_",
        dtypes=(_dt.float64,),
        ref=quiet(np.float_power),
        torch_ref=lambda x, e: x.clone().float_power_(e),
        sample_inputs_func=_float_power_inplace_samples,
        error_inputs_func=_float_power_inplace_errors,
    ),
    OpInfo(
        "true_divide",
        dtypes=ALL,
        ref=quiet(np.true_divide),
        sample_inputs_func=lambda op, m, d: binary_samples(op, m, d, rhs_nonzero=True),
        error_inputs_func=binary_error_inputs,
    ),
]
