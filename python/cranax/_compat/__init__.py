"""Private JAX module names (``jax._src...``, ``jax.core``) that JAX libraries import, provided only under
``cranax.install_as_jax()``: ``jax.<name>`` resolves to ``cranax._compat.<name>`` before ``cranax.<name>``.
Each module says which library needs it. Nothing in cranax itself imports this package.
"""
