"""tests/ecosystem/: JAX libraries (optax, chex, equinox, flax, distrax, blackjax, diffrax) run unmodified on
cranax through ``cranax.install_as_jax()``, compared with values recorded from real JAX 0.10.2.

``use_library(name)`` skips the test only when the library is not installed (``.ci/run`` installs the pinned
set in tests/ecosystem/requirements.txt). A library that is installed but fails to import on cranax (a JAX
name it needs is missing) fails its tests: no expected failures.
"""
import os
import sys

import cranax

# Before any test module imports a library: every ``import jax`` in them resolves to cranax.
cranax.install_as_jax()
sys.path.insert(0, os.path.dirname(__file__))
