"""jax.experimental.ode.odeint: solutions against closed forms (float64) and SciPy's solve_ivp, values and
adjoint gradients against JAX 0.10.2 (recorded below), gradients against finite differences; pytrees,
closures, jit, vmap, errors."""
import os
import re

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import cranax
from cranax import _core
from cranax import numpy as jnp
from cranax.experimental import ode
from cranax.experimental.ode import odeint

TS = np.linspace(0., 5., 6).astype(np.float32)
Y0 = np.array([1., 0.], np.float32)


def _forced(y, t, k):
    return jnp.stack([y[1], -k * y[0] - 0.1 * y[1] + 0.3 * jnp.sin(t)])


# JAX 0.10.2: odeint(_forced, Y0, TS, 2.0) and grad of odeint(..., rtol=atol=1e-6)[-1].sum() in (y0, ts, k)
JAX_YS = [[1.0, 0.0], [0.2242758721113205, -1.2178726196289062], [-0.6521338224411011, -0.24650932848453522],
          [-0.1987966001033783, 0.9352168440818787], [0.5596814155578613, 0.28450044989585876],
          [0.1794051229953766, -0.9032204747200012]]
JAX_GRAD_Y0 = [-0.2065727412700653, 0.9212004542350769]
JAX_GRAD_TS = [1.8423969745635986, 0.0, 0.0, 0.0, 0.0, -1.4593760967254639]
JAX_GRAD_K = -1.921229362487793


def test_values_and_adjoint_match_jax():
    ys = np.asarray(odeint(_forced, Y0, TS, 2.0))
    np.testing.assert_allclose(ys, JAX_YS, rtol=1e-5, atol=2e-6)
    loss = lambda y0, ts, k: odeint(_forced, y0, ts, k, rtol=1e-6, atol=1e-6)[-1].sum()  # noqa: E731
    gy, gt, gk = cranax.grad(loss, argnums=(0, 1, 2))(Y0, TS, 2.0)
    np.testing.assert_allclose(np.asarray(gy), JAX_GRAD_Y0, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(gt), JAX_GRAD_TS, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(float(gk), JAX_GRAD_K, rtol=1e-4)


def test_against_scipy_and_closed_form(x64):
    ts = np.linspace(0., 10., 21)
    ys = np.asarray(odeint(lambda y, t: jnp.stack([y[1], -y[0]]), np.array([1., 0.]), ts, rtol=1e-10,
                           atol=1e-10))
    assert ys.dtype == np.float64
    np.testing.assert_allclose(ys[:, 0], np.cos(ts), atol=1e-8)
    np.testing.assert_allclose(ys[:, 1], -np.sin(ts), atol=1e-8)

    def lorenz(t, y):
        return [10. * (y[1] - y[0]), y[0] * (28. - y[2]) - y[1], y[0] * y[1] - 8. / 3. * y[2]]
    ts = np.linspace(0., 1., 11)
    ref = solve_ivp(lorenz, (0., 1.), [1., 1., 1.], t_eval=ts, rtol=1e-11, atol=1e-11, method="DOP853").y.T
    got = odeint(lambda y, t: jnp.stack(lorenz(t, y)), np.array([1., 1., 1.]), ts, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6, atol=1e-6)


def test_adjoint_against_closed_form_and_finite_differences(x64):
    # y' = -k y: y(T) = y0 exp(-k T); d/dk = -T y(T), d/dy0 = exp(-k T), d/dT = -k y(T)
    ts = np.array([0., 0.5, 2.])
    f = lambda y0, ts, k: odeint(lambda y, t, k: -k * y, y0, ts, k, rtol=1e-10, atol=1e-10)[-1]  # noqa: E731
    gy, gt, gk = cranax.grad(f, argnums=(0, 1, 2))(1.5, ts, 0.7)
    yT = 1.5 * np.exp(-0.7 * 2.)
    np.testing.assert_allclose(float(gy), np.exp(-1.4), rtol=1e-7)
    np.testing.assert_allclose(float(gk), -2. * yT, rtol=1e-7)
    np.testing.assert_allclose(np.asarray(gt), [0.7 * yT, 0., -0.7 * yT], rtol=1e-7, atol=1e-12)
    # a nonlinear system with a loss over every output: central differences in the parameter
    def loss(p):
        ys = odeint(lambda y, t: jnp.stack([p * y[0] - y[0] * y[1], y[0] * y[1] - y[1]]), np.array([1., .5]),
                    np.linspace(0., 3., 7), rtol=1e-10, atol=1e-10)
        return jnp.sum(ys ** 2)
    h = 1e-5
    fd = (float(loss(0.8 + h)) - float(loss(0.8 - h))) / (2 * h)
    np.testing.assert_allclose(float(cranax.grad(loss)(0.8)), fd, rtol=1e-6)


def test_closure_pytree_jit_vmap():
    ts = TS[:3]

    def closure(k):
        return odeint(lambda y, t: -k * y, np.float32(1.), TS)[-1]
    np.testing.assert_allclose(float(closure(0.5)), np.exp(-2.5), rtol=1e-5)
    np.testing.assert_allclose(float(cranax.grad(closure)(0.5)), -5 * np.exp(-2.5), rtol=1e-4)
    out = odeint(lambda y, t: {"a": -y["b"], "b": y["a"]}, {"a": np.float32(1.), "b": np.float32(0.)}, ts)
    np.testing.assert_allclose(np.asarray(out["a"]), np.cos(ts), atol=2e-6)
    np.testing.assert_allclose(np.asarray(out["b"]), np.sin(ts), atol=2e-6)
    j = cranax.jit(lambda k: odeint(_forced, Y0, TS, k))(2.0)
    np.testing.assert_allclose(np.asarray(j), JAX_YS, rtol=1e-5, atol=2e-6)
    v = cranax.vmap(lambda k: odeint(_forced, Y0, TS, k)[-1])(np.array([1., 2.], np.float32))
    np.testing.assert_allclose(np.asarray(v[1]), JAX_YS[-1], rtol=1e-5, atol=2e-6)
    gv = cranax.vmap(cranax.grad(closure))(np.array([0.5, 1.], np.float32))
    np.testing.assert_allclose(np.asarray(gv), [-5 * np.exp(-2.5), -5 * np.exp(-5.)], rtol=1e-4)


def test_mxstep_and_hmax():
    # one step per interval is not enough: the solution stops short (JAX's behaviour) instead of failing
    ys = np.asarray(odeint(lambda y, t: -y, np.float32(1.), np.array([0., 10.], np.float32), mxstep=1))
    assert np.isfinite(ys).all()
    capped = np.asarray(odeint(lambda y, t: -y, np.float32(1.), np.array([0., 1.], np.float32), hmax=0.01))
    np.testing.assert_allclose(capped[-1], np.exp(-1.), rtol=1e-6)


def test_helpers():
    # a quartic from fit_4th_order_polynomial reproduces the ends, the midpoint and the end slopes
    y0, y1, ym, d0, d1, dt = 1., 3., 1.7, 0.5, 2., jnp.float32(2.)
    c = jnp.stack(ode.fit_4th_order_polynomial(*(jnp.float32(v) for v in (y0, y1, ym, d0, d1)), dt))
    np.testing.assert_allclose([float(jnp.polyval(c, s)) for s in (0., .5, 1.)], [y0, ym, y1], rtol=1e-6)
    dc = np.polyder(np.asarray(c))
    np.testing.assert_allclose([np.polyval(dc, 0.) / 2., np.polyval(dc, 1.) / 2.], [d0, d1], rtol=1e-5)
    # one RK step of y' = y is exp(h) to 5th order; the error estimate is small
    y1, f1, err, k = ode.runge_kutta_step(lambda y, t: y, jnp.ones(1), jnp.ones(1), jnp.float32(0.),
                                          jnp.float32(0.1))
    np.testing.assert_allclose(np.asarray(y1), [np.exp(0.1)], rtol=1e-7)
    assert k.shape == (7, 1) and abs(float(err[0])) < 1e-6
    assert float(ode.optimal_step_size(1., jnp.float32(0.))) == 10.
    np.testing.assert_allclose(float(ode.optimal_step_size(1., jnp.float32(2.))), max(0.9 * 2 ** -0.2, 0.2), rtol=1e-6)
    assert float(ode.mean_error_ratio(jnp.array([1., 1.]), 0., 1., jnp.zeros(2), jnp.zeros(2))) == 1.
    assert ode.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match=re.escape("safe_zip() argument 1 has length 2 but argument 0 has length 1. "
                                                   "All lengths: (1, 2)")):  # JAX 0.10.2's text
        ode.safe_zip([1], [1, 2])


def test_errors():
    with pytest.raises(TypeError, match="t must be an array of floats"):
        odeint(lambda y, t: -y, 1., np.arange(3))
    with pytest.raises(TypeError, match="must be arrays or scalars"):
        odeint(lambda y, t, s: -y, 1., np.linspace(0., 1., 3), "text")


def _three_body(y, t):
    p, v = y[:6].reshape(3, 2), y[6:].reshape(3, 2)
    d = p[None, :, :] - p[:, None, :]
    r3 = (jnp.sum(d * d, axis=-1) + jnp.eye(3)) ** 1.5
    return jnp.concatenate([v.reshape(6), jnp.sum(d / r3[:, :, None], axis=1).reshape(6)])


def test_jitted_solve_is_one_compiled_loop_matching_stepwise_bits_and_scipy():
    # the scan over output times, the adaptive step loop inside it and the seven right-hand sides of each
    # Dormand-Prince step compile into one function (benches/bench_scientific.py's 3-body case)
    y0 = np.array([0.97000436, -0.24308753, -0.97000436, 0.24308753, 0.0, 0.0,
                   0.466203685, 0.43236573, 0.466203685, 0.43236573, -0.93240737, -0.86473146], np.float32)
    ts = np.linspace(0.0, 2.0, 20).astype(np.float32)

    def run():
        cranax.clear_caches()
        f = cranax.jit(lambda y: odeint(_three_body, y, jnp.asarray(ts)))
        f(y0).block_until_ready()
        runs0, fused0, _ = _core._control_stats()
        out = np.asarray(f(y0))
        runs1, fused1, _ = _core._control_stats()
        return out, (runs1 - runs0, fused1 - fused0)

    fused, counts = run()
    assert counts == (0, 1)
    os.environ["CRANAX_NO_FUSED_LOOPS"] = "1"
    try:
        stepwise, counts = run()
        assert counts[1] == 0
    finally:
        del os.environ["CRANAX_NO_FUSED_LOOPS"]
        cranax.clear_caches()
    np.testing.assert_array_equal(fused.view(np.uint32), stepwise.view(np.uint32))

    def rhs(t, y):
        p, v = y[:6].reshape(3, 2), y[6:].reshape(3, 2)
        d = p[None, :, :] - p[:, None, :]
        r3 = ((d * d).sum(-1) + np.eye(3)) ** 1.5
        return np.concatenate([v.reshape(6), (d / r3[:, :, None]).sum(1).reshape(6)])
    want = solve_ivp(rhs, (0.0, 2.0), y0.astype(np.float64), t_eval=ts.astype(np.float64), rtol=1e-10,
                     atol=1e-10, method="DOP853").y.T
    np.testing.assert_allclose(fused, want, atol=2e-5)
