"""Test inputs built by products that do not depend on the host's BLAS: ``b @ b.T`` through NumPy runs
OpenBLAS's kernel for this CPU (Haswell, SkylakeX, Zen, ...), whose summation orders differ, so inputs made that
way (and the JAX digests recorded from them) would change with the machine. ``gram`` rounds each exact dot
product once."""
import math

import numpy as np


def _two_product(a, b):
    """a * b as an unevaluated float64 sum p + e, exactly (Dekker's product; no FMA needed)."""
    def split(x):
        c = 134217729.0 * x   # 2**27 + 1
        hi = c - (c - x)
        return hi, x - hi
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def gram(b):
    """``b @ b.T`` with every entry the exactly rounded dot product (in float64, then to b's dtype)."""
    b = np.asarray(b)
    x = b.astype(np.float64)
    n = x.shape[0]
    out = np.empty((n, n), np.float64)
    for i in range(n):
        p, e = _two_product(x[i][None, :], x)
        for j in range(n):
            out[i, j] = math.fsum(np.concatenate([p[j], e[j]]))
    return out.astype(b.dtype)
