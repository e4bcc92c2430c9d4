"""``coretorch.linalg``: PyTorch's ``torch.linalg`` namespace.

Each name is a declared operator (``linalg_det`` is ``coretorch.linalg.det``) with PyTorch's
arguments, batching (leading dims are batch dims), dtypes (float32 and float64) and
derivatives. The factorizations svd, eigh, qr, cholesky, LU and the triangular solve are the
primitives a backend implements; everything else is composite.

``eig`` and ``eigvals`` (general matrices) give complex results;
``ldl_factor`` / ``ldl_solve`` are not implemented (NotImplementedError).
"""

from __future__ import annotations

from .ops.declare import REGISTRY
from .ops.linalg_common import LinAlgError  # noqa: F401  (coretorch.linalg.LinAlgError)


def _op(name: str):
    return REGISTRY[name].op.entry


cholesky = _op("linalg_cholesky")
cholesky_ex = _op("linalg_cholesky_ex")
cond = _op("linalg_cond")
cross = _op("linalg_cross")
det = _op("linalg_det")
diagonal = _op("linalg_diagonal")
eig = _op("linalg_eig")
eigh = _op("linalg_eigh")
eigvals = _op("linalg_eigvals")
eigvalsh = _op("linalg_eigvalsh")
householder_product = _op("linalg_householder_product")
inv = _op("linalg_inv")
inv_ex = _op("linalg_inv_ex")
lstsq = _op("linalg_lstsq")
lu = _op("linalg_lu")
lu_factor = _op("linalg_lu_factor")
lu_factor_ex = _op("linalg_lu_factor_ex")
lu_solve = _op("linalg_lu_solve")
matmul = _op("matmul")
matrix_exp = _op("linalg_matrix_exp")
matrix_norm = _op("linalg_matrix_norm")
matrix_power = _op("linalg_matrix_power")
matrix_rank = _op("linalg_matrix_rank")
multi_dot = _op("linalg_multi_dot")
norm = _op("linalg_norm")
pinv = _op("linalg_pinv")
qr = _op("linalg_qr")
slogdet = _op("linalg_slogdet")
solve = _op("linalg_solve")
solve_ex = _op("linalg_solve_ex")
solve_triangular = _op("linalg_solve_triangular")
svd = _op("linalg_svd")
svdvals = _op("linalg_svdvals")
tensorinv = _op("linalg_tensorinv")
tensorsolve = _op("linalg_tensorsolve")
vander = _op("linalg_vander")
vecdot = _op("linalg_vecdot")
vector_norm = _op("linalg_vector_norm")


def _not_implemented(name: str):
    def fn(*args, **kwargs):
        raise NotImplementedError(
            f"linalg.{name}: the LDL^T (Bunch-Kaufman) factorization is not "
            f"implemented in coretorch; for a symmetric positive-definite "
            f"matrix use linalg.cholesky / cholesky_solve, otherwise "
            f"linalg.lu_factor / lu_solve"
        )

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.linalg.{name}``: not implemented (raises NotImplementedError)."
    return fn


ldl_factor = _not_implemented("ldl_factor")
ldl_factor_ex = _not_implemented("ldl_factor_ex")
ldl_solve = _not_implemented("ldl_solve")

__all__ = sorted(n for n in dir() if not n.startswith("_") and n != "annotations")
