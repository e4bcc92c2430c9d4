"""``coretorch.special``: PyTorch's ``torch.special`` namespace.

Each name is a declared operator (``special_entr`` is ``coretorch.special.entr``) or the same
operator as a top-level function (``special.expit`` is `coretorch.sigmoid`, ``special.gammaln`` is
`coretorch.lgamma`), with PyTorch's arguments, dtypes and derivatives.
"""

from __future__ import annotations

from .ops.declare import REGISTRY


def _op(name: str):
    return REGISTRY[name].op.entry


# the same ops as top-level functions
digamma = psi = _op("digamma")
erf = _op("erf")
erfc = _op("erfc")
erfinv = _op("erfinv")
exp2 = _op("exp2")
expit = _op("sigmoid")
expm1 = _op("expm1")
gammaln = _op("lgamma")
i0 = _op("i0")
log1p = _op("log1p")
log_softmax = _op("log_softmax")
logit = _op("logit")
logsumexp = _op("logsumexp")
multigammaln = _op("mvlgamma")
polygamma = _op("polygamma")
round = _op("round")  # noqa: A001 - PyTorch's name
sinc = _op("sinc")
softmax = _op("softmax")
xlogy = _op("xlogy")

# ops of their own
airy_ai = _op("special_airy_ai")
bessel_j0 = _op("special_bessel_j0")
bessel_j1 = _op("special_bessel_j1")
bessel_y0 = _op("special_bessel_y0")
bessel_y1 = _op("special_bessel_y1")
entr = _op("special_entr")
erfcx = _op("special_erfcx")
gammainc = _op("special_gammainc")
gammaincc = _op("special_gammaincc")
i0e = _op("special_i0e")
i1 = _op("special_i1")
i1e = _op("special_i1e")
log_ndtr = _op("special_log_ndtr")
modified_bessel_i0 = _op("special_modified_bessel_i0")
modified_bessel_i1 = _op("special_modified_bessel_i1")
modified_bessel_k0 = _op("special_modified_bessel_k0")
modified_bessel_k1 = _op("special_modified_bessel_k1")
ndtr = _op("special_ndtr")
ndtri = _op("special_ndtri")
scaled_modified_bessel_k0 = _op("special_scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _op("special_scaled_modified_bessel_k1")
spherical_bessel_j0 = _op("special_spherical_bessel_j0")
xlog1py = _op("special_xlog1py")
zeta = _op("special_zeta")
chebyshev_polynomial_t = _op("special_chebyshev_polynomial_t")
chebyshev_polynomial_u = _op("special_chebyshev_polynomial_u")
chebyshev_polynomial_v = _op("special_chebyshev_polynomial_v")
chebyshev_polynomial_w = _op("special_chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _op("special_shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _op("special_shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _op("special_shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _op("special_shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _op("special_hermite_polynomial_h")
hermite_polynomial_he = _op("special_hermite_polynomial_he")
laguerre_polynomial_l = _op("special_laguerre_polynomial_l")
legendre_polynomial_p = _op("special_legendre_polynomial_p")

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
