"""Records JAX's values for tests/random_dist_cases.py into tests/random_dist_expected.py.

Needs real JAX (0.10.2) in the running interpreter (a scratch venv outside the repo, as for
tests/record_random_expected.py)::

    cd /tmp && /tmp/jaxenv/bin/python /path/to/cranax/tests/record_random_dist_expected.py

Exact cases are stored as a sha256 prefix of the raw bytes plus their first values; the others with all their
values (floats as uint32 bit patterns).
"""
import hashlib
import os
import pprint
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import jax  # noqa: E402

from random_dist_cases import CASES  # noqa: E402


def _flat(v):
    return (v.view(np.uint32) if v.dtype == np.float32 else v).ravel().tolist()


def record():
    assert jax.__version__ == "0.10.2", jax.__version__
    env = {"random": jax.random, "np": np, "K": jax.random.PRNGKey}
    out = {}
    for name, expr, exact in CASES:
        v = np.asarray(eval(expr, env))
        digest = hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()[:32]
        data = _flat(v)
        out[name] = (v.dtype.name, tuple(v.shape), digest, data[:16] if exact else data)
    path = os.path.join(HERE, "random_dist_expected.py")
    with open(path, "w") as f:
        f.write('"""JAX 0.10.2 values for tests/random_dist_cases.py (written by '
                'tests/record_random_dist_expected.py).\nname -> (dtype, shape, sha256 prefix of the bytes, values: '
                'the first 16 of an exact case, all of the others; float32 as uint32 bit patterns)."""\n')
        f.write(f"JAX_VERSION = {jax.__version__!r}\n")
        f.write("EXPECTED = ")
        f.write(pprint.pformat(out, width=118, compact=True))
        f.write("\n")
    print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
    record()
