"""Scan partial evaluation forwards the known xs a body saves instead of stacking a copy of them as a
residual (issue 18 (b)), as JAX 0.10.2's does: its `make_jaxpr(grad(f))` of the scan below begins with a
three-output forward scan `_:f32[] _:f32[3] c:f32[3] = scan[` (carry, the stacked carries, the stacked cos)
and its backward scan reads `b`, the xs argument itself."""
import numpy as np

import cranax as jax
import cranax.numpy as jnp


def _f(c, xs):
    def body(c, x):
        return jnp.sin(c * x), c
    return jax.lax.scan(body, c, xs)[0]


def _f64(c, xs):
    for x in xs:
        c = np.sin(c * x)
    return c


def test_grad_jaxpr_forwards_xs():
    text = str(jax.make_jaxpr(jax.grad(_f))(1.0, jnp.arange(3.)))
    lines = text.splitlines()
    assert lines[0] == "{ lambda ; a:f32[] b:f32[3]. let"
    assert lines[1] == "    _:f32[] _:f32[3] c:f32[3] = scan["       # JAX 0.10.2's line: no stacked copy of b
    assert lines[-2].startswith("    ] 1.0:f32[] b c")                # the backward scan takes xs itself
    assert text.count("scan[") == 2


def test_grad_and_linearize_values():
    xs = np.array([0.3, -0.7, 1.1], np.float32)
    eps = 1e-6
    fd = (_f64(1.0 + eps, xs.astype(np.float64)) - _f64(1.0 - eps, xs.astype(np.float64))) / (2 * eps)
    np.testing.assert_allclose(jax.grad(_f)(1.0, jnp.asarray(xs)), fd, rtol=1e-5)
    np.testing.assert_allclose(jax.jit(jax.grad(_f))(1.0, jnp.asarray(xs)), fd, rtol=1e-5)
    gx = jax.grad(_f, argnums=1)(1.0, jnp.asarray(xs))
    fdx = [(_f64(1.0, xs + eps * e) - _f64(1.0, xs - eps * e)) / (2 * eps)
           for e in np.eye(3)]
    np.testing.assert_allclose(gx, fdx, rtol=1e-4, atol=1e-6)
    y, lin = jax.linearize(lambda c: _f(c, jnp.asarray(xs)), 1.0)
    np.testing.assert_allclose(y, _f64(1.0, xs.astype(np.float64)), rtol=1e-6)
    np.testing.assert_allclose(lin(2.0), 2 * fd, rtol=1e-5)
