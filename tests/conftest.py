"""Shared fixtures for the cranax test suite.

* Every test runs with ``jax_enable_x64`` and ``jax_explain_cache_misses`` restored afterwards (autouse), so a
  test that flips them cannot leak into the next one.
* ``x64`` turns 64-bit mode on for one test; ``x32`` makes sure it is off.
* Mesa's shader cache is off for the whole run (and its subprocesses); so is traceback filtering, as in JAX's
  tests.
"""
import importlib.util
import os
import sys

import pytest

# GPU results must not depend on an earlier run: Mesa's on-disk shader cache would serve shaders that
# llvmpipe compiled under other settings (LP_NATIVE_VECTOR_WIDTH, CPU features). Set before Vulkan loads;
# subprocesses inherit it.
os.environ["MESA_SHADER_CACHE_DISABLE"] = "true"
# As JAX's own tests (test_util's default config): errors keep every frame and no note, so that
# pytest.raises(match=...), which reads the notes too, sees the message alone. Subprocesses inherit it.
os.environ["JAX_TRACEBACK_FILTERING"] = "off"

if importlib.util.find_spec("cranax") is None:  # run from a checkout without installing
    _SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "python"))
    sys.path.insert(0, _SRC)
    # ... and for the tests' subprocesses (`sys.executable -c ...`), which do not read this file
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [_SRC, os.environ.get("PYTHONPATH", "")] if p)

from cranax.config import config  # noqa: E402

_RESTORED = ("jax_enable_x64", "jax_explain_cache_misses")


@pytest.fixture(autouse=True)
def _restore_config():
    saved = {name: getattr(config, name) for name in _RESTORED}
    try:
        yield
    finally:
        for name, value in saved.items():
            if getattr(config, name) != value:
                config.update(name, value)


@pytest.fixture
def x64():
    """64-bit mode on for the duration of the test."""
    config.update("jax_enable_x64", True)
    yield
    # restored by _restore_config


@pytest.fixture
def x32():
    """64-bit mode off for the duration of the test."""
    config.update("jax_enable_x64", False)
    yield


def pytest_addoption(parser):
    parser.addoption("--fuzz-long", action="store", type=float, default=0, metavar="SECONDS",
                     help="run the random-program fuzzer (tests/test_fuzz_programs.py) for this many seconds")


def pytest_collection_modifyitems(config, items):
    # The long fuzz run is opt-in: without --fuzz-long it is not collected at all (rather than reported as a
    # skip), so the default run's counts are only tests that ran.
    if not config.getoption("--fuzz-long"):
        items[:] = [it for it in items if it.name != "test_fuzz_long"]
