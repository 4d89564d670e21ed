"""``jax._src.compiler`` — chex (``chex.restrict_backends`` wraps ``compiler.backend_compile``). cranax compiles
in its Rust core, with no Python compile hook to wrap: the module is empty, so chex's ``restrict_backends``
finds no function to patch."""
