"""Special-function kernels on the array API: the two special-function primitives
``_unary_special(self, name)`` and ``_binary_special(self, other, name)``, each computing the
function `name` elementwise (the ops `lgamma`, `digamma`, `special_i0e`, `special_zeta`, ... are
composites over them with their own derivatives).

The functions come from the kit's `special` module (scipy.special on numpy backends,
cupyx.scipy.special on CuPy); a function that module lacks (CuPy has no ``airy``) is computed by
scipy on the host. The orthogonal polynomials are evaluated here by PyTorch's recurrences
(integer degree ``n``, 0 for ``n < 0``), so they run on any array module.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from .array_kit import kit_of, opmath

__all__ = ["KERNELS", "UNARY_FUNCTIONS", "BINARY_FUNCTIONS"]


def _airy_ai(sp):
    return lambda x: sp.airy(x)[0]


# name -> how to get the function from a special-function module
UNARY_FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    n: operator.attrgetter(n)
    for n in (
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
    )
}
UNARY_FUNCTIONS["airy_ai"] = _airy_ai


def _from_special(k, name: str, table: dict):
    """The function `name` over `k`'s arrays; scipy on the host when `k.special` lacks it."""
    sp = k.special
    try:
        return table[name](sp)
    except AttributeError:
        import scipy.special

        fn = table[name](scipy.special)

        def on_host(*arrays):
            host = [a.get() if hasattr(a, "get") else np.asarray(a) for a in arrays]
            return k.from_host(np.asarray(fn(*host)))

        return on_host


def _unary_special(out, self, name):
    """out = the special function `name` of self (computed in out's opmath dtype)"""
    k = kit_of(out)
    k.write(out, _from_special(k, name, UNARY_FUNCTIONS)(k.operand(self, opmath(out._dtype))))


# ---- orthogonal polynomials (PyTorch's recurrences) ---------------------------------------------


def _degree(xp, n, shape):
    """The integer degree of each element (PyTorch truncates n; NaN and inf count as -1)."""
    n = xp.broadcast_to(xp.asarray(n), shape)
    if n.dtype.kind == "f":
        n = xp.where(xp.isfinite(n), n, -1.0)
    return n.astype(np.int64)


def _recurrence(xp, x, n, q1, step):
    """r_n by ``r_k = step(k, r_{k-1}, r_{k-2})`` from r_0 = 1 and r_1 = q1, for every element
    at once (elements stop at their own degree, or once they become NaN, as PyTorch's loops)."""
    one = xp.ones_like(x)
    p, q = one, q1
    r = xp.where(n == 0, one, q1)
    top = int(n.max()) if n.size else 0
    for k in range(2, top + 1):
        nxt = step(k, q, p)
        p, q = q, nxt
        r = xp.where(n >= k, nxt, r)
        if not bool(((n > k) & ~xp.isnan(q)).any()):
            break
    return r


def _chebyshev(xp, x, n, kind: str, cut: int):
    """T, U, V, W (first to fourth kind) as in PyTorch: closed forms at |x| = 1 and, for
    degrees above `cut` with |x| < 1, through acos; else the three-term recurrence."""
    at_edge = xp.abs(x) == 1
    closed = (n > cut) & (xp.abs(x) < 1)
    q1 = {"t": x, "u": x + x, "v": x + x - 1, "w": x + x + 1}[kind]
    r = _recurrence(xp, x, xp.where(closed | at_edge, 0, n), q1, lambda k, q, p: (x + x) * q - p)
    with np.errstate(all="ignore"):
        theta = xp.arccos(xp.clip(x, -1, 1))
        nf = n.astype(x.dtype)
        odd = (n % 2) == 1
        if kind == "t":
            big = xp.cos(nf * theta)
            at_one = xp.where((x > 0) | ~odd, 1.0, -1.0)
        elif kind == "u":
            s = xp.sin(theta)
            big = xp.where(
                s != 0, xp.sin((nf + 1) * theta) / s, (nf + 1) * xp.cos((nf + 1) * theta) / x
            )
            at_one = xp.where((x > 0) | ~odd, nf + 1, -(nf + 1))
        elif kind == "v":
            edge = xp.where(odd, -(nf + nf + 1), nf + nf + 1)
            big = xp.where(
                xp.sin(theta / 2) != 1, xp.cos((nf + 0.5) * theta) / xp.cos(theta / 2), edge
            )
            at_one = xp.where(x > 0, 1.0, edge)
        else:
            edge = xp.where(x > 0, nf + nf + 1, xp.where(odd, -1.0, 1.0))
            big = xp.where(
                xp.cos(theta / 2) != 1, xp.sin((nf + 0.5) * theta) / xp.sin(theta / 2), edge
            )
            at_one = edge
    return xp.where(at_edge, at_one, xp.where(closed, big, r))


def _hermite(xp, x, n, physicists: bool):
    limit = 128 if x.dtype.itemsize <= 4 else 512
    if physicists:
        r = _recurrence(
            xp, x, xp.where(n > limit, 0, n), x + x, lambda k, q, p: (x + x) * q - (2 * (k - 1)) * p
        )
    else:
        r = _recurrence(xp, x, xp.where(n > limit, 0, n), x, lambda k, q, p: x * q - (k - 1) * p)
    return xp.where(n > limit, np.nan, r)


def _laguerre(xp, x, n):
    r = _recurrence(
        xp,
        x,
        xp.where(x == 0, 0, n),
        1 - x,
        lambda k, q, p: (((2 * k - 2) + (1 - x)) * q - (k - 1) * p) / k,
    )
    return xp.where(x == 0, 1.0, r)


def _legendre(xp, x, n):
    at_edge = xp.abs(x) == 1
    r = _recurrence(
        xp, x, xp.where(at_edge, 0, n), x, lambda k, q, p: ((2 * k - 1) * x * q - (k - 1) * p) / k
    )
    odd = (n % 2) == 1
    return xp.where(at_edge, xp.where((x > 0) | ~odd, 1.0, -1.0), r)


def _polynomial(name: str):
    def evaluate(xp, x, n):
        n = _degree(xp, n, x.shape)
        kind = name.split("_")[-1]
        shifted = name.startswith("shifted_")
        if shifted:
            x = x + x - 1
        if "chebyshev" in name:
            # the degree above which PyTorch switches to the closed form through acos
            cut = (
                {"t": 6, "u": 6, "v": 6, "w": 4} if shifted else {"t": 6, "u": 8, "v": 8, "w": 8}
            )[kind]
            r = _chebyshev(xp, x, n, kind, cut)
        elif name.startswith("hermite"):
            r = _hermite(xp, x, n, kind == "h")
        elif name.startswith("laguerre"):
            r = _laguerre(xp, x, n)
        else:
            r = _legendre(xp, x, n)
        return xp.where(n < 0, 0.0, r)

    return evaluate


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
_ARRAY_FUNCTIONS = {
    "nextafter": lambda xp, a, b: xp.nextafter(a, b),
    "gcd": lambda xp, a, b: xp.gcd(a, b),
    **{n: _polynomial(n) for n in _POLYNOMIALS},
}
_SCIPY_BINARY = {n: (lambda sp, n=n: getattr(sp, n)) for n in ("zeta", "gammainc", "gammaincc")}
BINARY_FUNCTIONS = (*_SCIPY_BINARY, *_ARRAY_FUNCTIONS)


def _binary_special(out, self, other, name):
    """out = the two-argument function `name` of (self, other), in out's opmath dtype"""
    k = kit_of(out)
    cn = opmath(out._dtype)
    a, b = k.operand(self, cn), k.operand(other, cn)
    if name in _ARRAY_FUNCTIONS:
        a, b = k.xp.broadcast_arrays(k.xp.asarray(a), k.xp.asarray(b))
        k.write(out, _ARRAY_FUNCTIONS[name](k.xp, a, b))
    else:
        k.write(out, _from_special(k, name, _SCIPY_BINARY)(a, b))


KERNELS = {"_unary_special": _unary_special, "_binary_special": _binary_special}
