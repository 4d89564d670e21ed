"""``cranax.scipy.optimize``: mirrors ``jax.scipy.optimize`` (``minimize`` with BFGS and L-BFGS; the solvers
and their strong-Wolfe line search are one file each here)."""
from ._minimize import OptimizeResults, minimize

__all__ = ["OptimizeResults", "minimize"]
