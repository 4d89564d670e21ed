"""Records JAX's values for tests/random_cases.py into tests/random_expected.py.

Needs real JAX (0.10.2) in the running interpreter, e.g. a scratch venv outside the repo::

    python -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax==0.10.2
    cd /tmp && /tmp/jaxenv/bin/python /path/to/cranax/tests/record_random_expected.py

Floats are stored as their bit patterns (exact), integers and booleans as values.
"""
import os
import pprint
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

from random_cases import CASES  # noqa: E402


def record():
    assert jax.__version__ == "0.10.2", jax.__version__
    assert jax.config.jax_threefry_partitionable
    env = {"random": jax.random, "jnp": jnp, "np": np, "K": jax.random.PRNGKey}
    out = {}
    for name, expr in CASES:
        v = np.asarray(eval(expr, env))
        if v.dtype == np.float32:
            data = v.view(np.uint32).ravel().tolist()
        else:
            data = v.ravel().tolist()
        out[name] = (v.dtype.name, tuple(v.shape), data)
    path = os.path.join(HERE, "random_expected.py")
    with open(path, "w") as f:
        f.write('"""JAX 0.10.2 values for tests/random_cases.py (written by tests/record_random_expected.py).\n'
                'name -> (dtype, shape, flat values); float32 values are their uint32 bit patterns."""\n')
        f.write(f"JAX_VERSION = {jax.__version__!r}\n")
        f.write("EXPECTED = ")
        f.write(pprint.pformat(out, width=118, compact=True))
        f.write("\n")
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    record()
