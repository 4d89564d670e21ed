"""``jax._src.test_util`` — the gradient-checkpointing guide imports it (``jtu.create_mesh``); its public
helpers are ``cranax.test_util``'s, and ``create_mesh`` skips a test (``unittest.SkipTest``, as JAX's) when
there are too few devices."""
import math
import unittest

from ...test_util import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp", "create_mesh"]


def create_mesh(mesh_shape, axis_names, iota_order=False, axis_types=None):
    """A mesh of ``mesh_shape`` over the local devices; SkipTest (JAX's text) when they are too few."""
    from ... import default_backend, devices, make_mesh   # why: the compat layer sits above the API it maps
    size, have = math.prod(mesh_shape), len(devices(default_backend()))
    if have < size:
        raise unittest.SkipTest(f"Test requires {size} global devices and found {have}.")
    return make_mesh(tuple(mesh_shape), tuple(axis_names), axis_types=axis_types)
