"""``cranax.scipy.sparse``: SciPy's sparse namespace as JAX has it: only ``linalg`` (the iterative solvers
``cg``, ``bicgstab``, ``gmres``). Mirrors ``jax.scipy.sparse``."""
from . import linalg

__all__ = ["linalg"]
