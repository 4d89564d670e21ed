"""``cranax.lax.linalg``: dense linear algebra primitives and their wrappers, a face over
``cranax.primitives.linalg``. Mirrors ``jax.lax.linalg``."""
from ..primitives.linalg import (cholesky, cholesky_p, eigh, eigh_p, lu, lu_p, lu_pivots_to_permutation,
    lu_pivots_to_permutation_p, qr, qr_p, svd, svd_p, triangular_solve, triangular_solve_p)

__all__ = ["cholesky", "cholesky_p", "eigh", "eigh_p", "lu", "lu_p", "lu_pivots_to_permutation",
           "lu_pivots_to_permutation_p", "qr", "qr_p", "svd", "svd_p", "triangular_solve", "triangular_solve_p"]
