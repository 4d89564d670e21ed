"""Helpers of tests/ecosystem/ (see conftest.py there)."""
import importlib
import importlib.util
import os
import sys

import numpy as np
import pytest

import cranax

cranax.install_as_jax()


def use_library(name):
    """Imports library ``name`` under the alias; skips only if it is not installed. An import that stops at
    a missing JAX name fails the test (every pinned library imports on cranax)."""
    if importlib.util.find_spec(name.split(".")[0]) is None:
        pytest.skip(f"{name} is not installed (pip install --no-deps -r tests/ecosystem/requirements.txt)")
    return importlib.import_module(name)


def assert_matches(got, expected, rtol=1e-4, atol=2e-5):
    """Each entry of ``got`` equals the JAX-recorded ``expected`` within the tolerances."""
    assert set(got) == set(expected), (sorted(got), sorted(expected))
    for k in expected:
        np.testing.assert_allclose(np.asarray(got[k], np.float64), np.asarray(expected[k], np.float64),
                                   rtol=rtol, atol=atol, err_msg=k)
