"""lax.custom_linear_solve and lax.custom_root: values, and derivatives by the implicit function theorem
(forward, reverse, second order, under jit and vmap) against NumPy's closed forms and finite differences; the
solvers are while loops, so reverse mode could not go through them."""
import numpy as np
import pytest

import cranax
from cranax import lax
from cranax import numpy as jnp

A = np.array([[4., 1., 0.], [1., 3., 1.], [0., 1., 2.]], np.float32)
B = np.array([1., 2., 3.], np.float32)
N = np.array([[3., 1., 0.], [-1., 4., 1.], [.5, 0., 2.]], np.float32)   # not symmetric


def _jacobi(matvec, b, diag):
    # a solver reverse mode cannot differentiate: a while loop of Jacobi sweeps to a tolerance
    def cond(s):
        x, i = s
        r = b - matvec(x)
        return jnp.logical_and(jnp.sum(r * r) > 1e-14, i < 500)

    def body(s):
        x, i = s
        return x + (b - matvec(x)) / diag, i + 1
    return lax.while_loop(cond, body, (jnp.zeros_like(b), 0))[0]


def _solve(a, b, symmetric=False):
    a = jnp.asarray(a)
    mv = lambda x: jnp.dot(a, x)  # noqa: E731
    diag = jnp.diagonal(a)
    solve = lambda m, y: _jacobi(m, y, diag)  # noqa: E731
    tsolve = None if symmetric else (lambda vm, y: _jacobi(vm, y, diag))
    return lax.custom_linear_solve(mv, b, solve, tsolve, symmetric=symmetric)


def _x(a, b):
    return np.linalg.solve(np.asarray(a, np.float64), np.asarray(b, np.float64))


@pytest.mark.parametrize("a,sym", [(A, True), (A, False), (N, False)])
def test_linear_solve_value_and_grads(a, sym):
    x = _x(a, B)
    np.testing.assert_allclose(np.asarray(_solve(a, B, sym)), x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(cranax.jit(lambda a, b: _solve(a, b, sym))(a, B)), x, rtol=1e-5,
                               atol=1e-6)
    # d sum(x) / db = A^-T 1, d sum(x) / dA = -(A^-T 1) x^T
    w = np.linalg.solve(np.asarray(a, np.float64).T, np.ones(3))
    gb = cranax.grad(lambda b: _solve(a, b, sym).sum())(B)
    np.testing.assert_allclose(np.asarray(gb), w, rtol=1e-4, atol=1e-6)
    ga = cranax.grad(lambda a: _solve(a, B, sym).sum())(a)
    np.testing.assert_allclose(np.asarray(ga), -np.outer(w, x), rtol=1e-4, atol=1e-6)
    ga_jit = cranax.jit(cranax.grad(lambda a: _solve(a, B, sym).sum()))(a)
    np.testing.assert_allclose(np.asarray(ga_jit), np.asarray(ga), rtol=1e-6, atol=1e-7)


def test_linear_solve_jvp_against_finite_differences():
    da = np.array([[.1, 0, .2], [0, -.3, 0], [.1, .1, 0]], np.float32)
    db = np.array([1., -1., .5], np.float32)
    x, t = cranax.jvp(lambda a, b: _solve(a, b), (N, B), (da, db))
    h = 1e-4
    n, b, da, db = (np.asarray(v, np.float64) for v in (N, B, da, db))
    fd = (_x(n + h * da, b + h * db) - _x(n - h * da, b - h * db)) / (2 * h)
    np.testing.assert_allclose(np.asarray(t), fd, rtol=1e-4, atol=1e-5)


def test_linear_solve_vmap_and_second_order():
    bs = np.stack([B, 2 * B, -B])
    np.testing.assert_allclose(np.asarray(cranax.vmap(lambda b: _solve(N, b))(bs)),
                               np.linalg.solve(N.astype(np.float64), bs.T).T, rtol=1e-5, atol=1e-6)
    g = cranax.grad(lambda a: cranax.vmap(lambda b: _solve(a, b))(bs).sum())(N)
    w = np.linalg.solve(N.astype(np.float64).T, np.ones(3))
    np.testing.assert_allclose(np.asarray(g), -sum(np.outer(w, _x(N, b)) for b in bs), rtol=1e-4, atol=1e-5)
    # vmap over the matrix too (batched matvec consts)
    ga = cranax.vmap(cranax.grad(lambda a, b: _solve(a, b).sum()), (0, None))(np.stack([A, N]), B)
    for k, a in enumerate((A, N)):
        w = np.linalg.solve(a.astype(np.float64).T, np.ones(3))
        np.testing.assert_allclose(np.asarray(ga[k]), -np.outer(w, _x(a, B)), rtol=1e-4, atol=1e-6)
    # Hessian of |x(b)|^2 = 2 A^-T A^-1
    h = cranax.hessian(lambda b: (_solve(N, b) ** 2).sum())(B)
    ai = np.linalg.inv(N.astype(np.float64))
    np.testing.assert_allclose(np.asarray(h), 2 * ai.T @ ai, rtol=1e-4, atol=1e-5)


def test_linear_solve_pytree_and_aux():
    # b a dict; the solver returns (x, iterations)
    def mv(x):
        return {"u": 2. * x["u"], "v": x["v"] * 4.}

    def solve(m, y):
        return {"u": y["u"] / 2., "v": y["v"] / 4.}, jnp.array(7)
    b = {"u": np.array([1., 2.], np.float32), "v": np.float32(3.)}
    x, aux = lax.custom_linear_solve(mv, b, solve, symmetric=True, has_aux=True)
    np.testing.assert_allclose(np.asarray(x["u"]), [.5, 1.])
    assert float(x["v"]) == .75 and int(aux) == 7
    g = cranax.grad(lambda b: lax.custom_linear_solve(mv, b, solve, symmetric=True, has_aux=True)[0]["v"])(b)
    assert float(g["v"]) == .25 and np.all(np.asarray(g["u"]) == 0)


def test_linear_solve_jaxpr_and_errors():
    text = str(cranax.make_jaxpr(lambda b: _solve(A, b, True))(B))
    assert "custom_linear_solve" in text
    mv = lambda x: A @ x  # noqa: E731
    with pytest.raises(TypeError, match="transpose_solve required"):
        cranax.grad(lambda b: lax.custom_linear_solve(mv, b, lambda m, y: y).sum())(B)
    with pytest.raises(ValueError, match="output shapes must match b"):
        lax.custom_linear_solve(mv, B, lambda m, y: y[:2])
    with pytest.raises(TypeError, match="output pytree structure must match b"):
        lax.custom_linear_solve(mv, B, lambda m, y: [y])
    with pytest.raises(ValueError, match="auxiliary output was expected"):
        lax.custom_linear_solve(mv, B, lambda m, y: y, has_aux=True)


# ----------------------------------------------------------------------------------------------- custom_root

def _bisect(f, x0):
    # a while loop bracketing the root of an increasing scalar function in [0, 2 * x0 + 10]
    def cond(s):
        lo, hi = s
        return hi - lo > 1e-6 * (1 + jnp.abs(hi))

    def body(s):
        lo, hi = s
        mid = 0.5 * (lo + hi)
        pos = f(mid) > 0
        return jnp.where(pos, lo, mid), jnp.where(pos, mid, hi)
    lo, hi = lax.while_loop(cond, body, (jnp.zeros_like(x0), 2 * x0 + 10.))
    return 0.5 * (lo + hi)


def _cbrt(a):
    return lax.custom_root(lambda x: x ** 3 - a, jnp.float32(1.), _bisect, lambda g, y: y / g(1.0))


def test_custom_root_scalar():
    np.testing.assert_allclose(float(_cbrt(8.)), 2., rtol=1e-5)
    # d a^(1/3) / da = a^(-2/3) / 3; second derivative -2/9 a^(-5/3)
    np.testing.assert_allclose(float(cranax.grad(_cbrt)(8.)), 1 / 12, rtol=1e-4)
    np.testing.assert_allclose(float(cranax.jit(cranax.grad(_cbrt))(27.)), 1 / 27, rtol=1e-4)
    np.testing.assert_allclose(float(cranax.grad(cranax.grad(_cbrt))(8.)), -2 / 9 / 32, rtol=1e-3)
    _, t = cranax.jvp(_cbrt, (8.,), (3.,))
    np.testing.assert_allclose(float(t), 3 / 12, rtol=1e-4)
    v = cranax.vmap(_cbrt)(np.array([1., 8., 64.], np.float32))
    np.testing.assert_allclose(np.asarray(v), [1., 2., 4.], rtol=1e-5)
    gv = cranax.vmap(cranax.grad(_cbrt))(np.array([1., 8.], np.float32))
    np.testing.assert_allclose(np.asarray(gv), [1 / 3, 1 / 12], rtol=1e-4)


def test_custom_root_vector_newton_with_linear_solve_tangent():
    # x with x + p * sin(x) = c (componentwise), solved by Newton in a fori_loop; tangent_solve uses the
    # dense Jacobian of the linearized map
    def newton(f, x0):
        def step(i, x):
            jac = cranax.jacfwd(f)(x)
            return x - jnp.linalg.solve(jac, f(x))
        return lax.fori_loop(0, 20, step, x0)

    def tsolve(g, y):
        jac = cranax.jacfwd(g)(y)
        return jnp.linalg.solve(jac, y)

    def root(p, c):
        return lax.custom_root(lambda x: x + p * jnp.sin(x) - c, jnp.zeros_like(c), newton, tsolve)
    p, c = np.float32(.5), np.array([.3, 1., 2.], np.float32)
    x = np.asarray(root(p, c), np.float64)
    np.testing.assert_allclose(x + .5 * np.sin(x), c, atol=1e-5)
    gp = cranax.grad(lambda p: root(p, c).sum())(p)
    gc = cranax.grad(lambda c: root(p, c).sum())(c)
    # implicit: dx/dc = 1 / (1 + p cos x), dx/dp = -sin x / (1 + p cos x)
    np.testing.assert_allclose(np.asarray(gc), 1 / (1 + .5 * np.cos(x)), rtol=1e-4)
    np.testing.assert_allclose(float(gp), np.sum(-np.sin(x) / (1 + .5 * np.cos(x))), rtol=1e-4)


def test_custom_root_aux_and_errors():
    def solve(f, x0):
        return _bisect(f, x0), jnp.int32(3)
    x, aux = lax.custom_root(lambda x: x * x - 9., jnp.float32(1.), solve, lambda g, y: y / g(1.), has_aux=True)
    np.testing.assert_allclose(float(x), 3., rtol=1e-5)
    assert int(aux) == 3
    with pytest.raises(TypeError, match="f\\(\\) output pytree structure must match initial_guess"):
        lax.custom_root(lambda x: (x, x), jnp.float32(1.), _bisect, lambda g, y: y)
    with pytest.raises(ValueError, match="auxiliary output was expected"):
        lax.custom_root(lambda x: x, jnp.float32(1.), _bisect, lambda g, y: y, has_aux=True)
