"""The factorizations that may drop to one thread while the CPUs are contended (cholesky, LU and the solves
built on it, triangular solves: rust/backend/cpu/library/linalg.rs, `for_batch_par`) must give the same bits
on one thread as on two, or a result would change with the machine's load. The sizes are the smallest that
take two threads (`par_n` there: n = 1800 in float64, 2400 in float32; below them one matrix runs on one
thread on purpose), so the second run really takes faer's parallel path. Below them (n = 1000 / 700) the copies
around one factorization and the column blocks of wide triangular solves take two threads: the same holds.
A Cholesky factorization from n = 512 runs cranax's blocked driver (`cholesky_blocked`), whose blocks of a step
run on the pool's threads at every one of these sizes; so does an LU from n = 384 (`lu_blocked`) and a QR from
min(m, n) = 384 (`qr_blocked`, `qr_q_chunks`): their own tests below."""
import os
import subprocess
import sys

SCRIPT = r"""
import hashlib, numpy as np, cranax, cranax.numpy as jnp, cranax.scipy.linalg as jsl
rng = np.random.default_rng(3)
for dt, n in ((np.float32, 2400), (np.float64, 1800)):
    a = rng.standard_normal((n, n)).astype(dt)
    spd = (a @ a.T + n * np.eye(n)).astype(dt)
    b = rng.standard_normal((n, 8)).astype(dt)
    # the triangular solve against n columns: its work (n^2 per column) reaches the parallel size
    wide = rng.standard_normal((n, n)).astype(dt)
    for r in (jnp.linalg.cholesky(spd), jnp.linalg.solve(a, b), jnp.linalg.inv(a), jsl.lu_factor(a)[0],
              jsl.solve_triangular(spd, wide, lower=True)):
        print(hashlib.sha1(np.asarray(r).tobytes()).hexdigest())
# below those sizes one factorization stays on one thread, but the copies around it and the column blocks of
# the triangular solves against many columns (inv's identity, solve_triangular from either side) take two
for dt, n in ((np.float32, 1000), (np.float64, 700)):
    a = rng.standard_normal((n, n)).astype(dt) + np.eye(n, dtype=dt) * 2 * np.sqrt(n).astype(dt)
    spd = (a @ a.T + n * np.eye(n)).astype(dt)
    wide = rng.standard_normal((n, n)).astype(dt)
    for r in (jnp.linalg.cholesky(spd), jnp.linalg.inv(a), jnp.linalg.solve(a, wide), jsl.lu_factor(a)[0],
              jsl.solve_triangular(spd, wide, lower=True), jsl.solve_triangular(spd, wide, trans=1),
              cranax.lax.linalg.triangular_solve(spd, wide, left_side=False, lower=True)):
        print(hashlib.sha1(np.asarray(r).tobytes()).hexdigest())
"""


def _digests(threads, script=None, **env):
    """The lines `script` (default SCRIPT) prints in a fresh process on `threads` threads."""
    # CRANAX_LINALG_YIELD=0: two threads stay two even on a loaded test machine
    env = dict(os.environ, CRANAX_NUM_THREADS=str(threads), CRANAX_LINALG_YIELD="0", **env)
    out = subprocess.run([sys.executable, "-c", script or SCRIPT], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_cholesky_lu_and_triangular_solves_do_not_depend_on_the_thread_count():
    one, two = _digests(1), _digests(2)
    assert len(one) == 24
    assert one == two


LU_SCRIPT = r"""
import hashlib, numpy as np, cranax, cranax.numpy as jnp, cranax.scipy.linalg as jsl
cranax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(5)
grad = cranax.jit(cranax.grad(lambda x: jnp.linalg.slogdet(x)[1]))   # one fused lu_solve of the identity
for dt, n in ((np.float64, 400), (np.float64, 512), (np.float32, 641), (np.float64, 641), (np.float32, 1000),
              (np.float64, 1000)):
    a = rng.standard_normal((n, n)).astype(dt)
    b = rng.standard_normal((n, 3)).astype(dt)
    s = (a / np.exp(np.linalg.slogdet(a.astype(np.float64))[1] / n)).astype(dt)   # |det s| = 1
    for r in (*jsl.lu_factor(a), jnp.linalg.solve(a, b), jnp.linalg.solve(a, b[:, 0]), jnp.linalg.inv(a),
              jnp.linalg.det(s), *jnp.linalg.slogdet(a), grad(a)):
        print(hashlib.sha1(np.asarray(r).tobytes()).hexdigest())
"""


def _lu_digests(threads, **env):
    return _digests(threads, LU_SCRIPT, **env)


def test_blocked_lu_does_not_depend_on_the_thread_count():
    """From n = 384 an LU (lu_factor, solve, inv, det, slogdet, grad of slogdet) runs cranax's blocked driver
    (`lu_blocked`), whose tasks of a step run on the pool's threads: the same bits on 1, 2 and 3 threads (whole
    128-blocks, a narrow last one, n = 400 and 1000). That the driver ran at all: faer's own LU
    (`CRANAX_LINALG_LU_BLOCK=0`) rounds differently, so its factors of the n = 400 and 1000 matrices differ in
    bits."""
    one, two, three = _lu_digests(1), _lu_digests(2), _lu_digests(3)
    assert len(one) == 6 * 9
    assert one == two == three
    faer = _lu_digests(2, CRANAX_LINALG_LU_BLOCK="0")
    # the packed LU of the n = 400 matrix and of each n = 1000 one
    assert faer[0] != one[0] and faer[-18] != one[-18] and faer[-9] != one[-9]


QR_SCRIPT = r"""
import hashlib, numpy as np, cranax, cranax.numpy as jnp
cranax.config.update("jax_enable_x64", True)
rng = np.random.default_rng(9)
for dt, shape in ((np.float64, (384, 384)), (np.float32, (641, 641)), (np.float64, (1000, 1000)),
                  (np.float32, (700, 450)), (np.float64, (450, 700))):
    a = rng.standard_normal(shape).astype(dt)
    for mode in ("reduced", "complete"):
        for r in jnp.linalg.qr(a, mode=mode):
            print(hashlib.sha1(np.asarray(r).tobytes()).hexdigest())
"""


def _qr_digests(threads, **env):
    return _digests(threads, QR_SCRIPT, **env)


def test_blocked_qr_does_not_depend_on_the_thread_count():
    """From min(m, n) = 384 a QR runs cranax's blocked driver (`qr_blocked`) and builds Q in column chunks
    (`qr_q_chunks`), the tasks of each step on the pool's threads: the same Q and R bits on 1, 2 and 3 threads
    (square, a panel that does not divide n, tall and wide, reduced and complete Q). faer's own parallel QR,
    which ran there before, rounds with the thread count. That the driver ran: faer's own QR
    (`CRANAX_LINALG_QR_PANEL=0`, one thread) rounds differently at n = 1000."""
    one, two, three = _qr_digests(1), _qr_digests(2), _qr_digests(3)
    assert len(one) == 5 * 4
    assert one == two == three
    faer = _qr_digests(1, CRANAX_LINALG_QR_PANEL="0")
    assert faer[8] != one[8] and faer[9] != one[9]   # Q and R of the n = 1000 matrix
