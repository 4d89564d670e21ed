"""cranax.scipy.stats against scipy.stats (float64 oracles, tails included), gradients against finite
differences, and the non-distribution functions (mode, rankdata, sem, gaussian_kde)."""
import numpy as np
import pytest
import scipy.stats as ss

import cranax
import cranax.numpy as jnp
import cranax.scipy.stats as S


@pytest.fixture
def x64():
    cranax.config.update("jax_enable_x64", True)
    yield
    cranax.config.update("jax_enable_x64", False)


R = np.random.RandomState(0)
X = np.concatenate([R.uniform(-6, 6, 60), [-30.0, -10.0, 0.0, 10.0, 30.0]])
POS = np.concatenate([R.uniform(0.01, 12, 60), [1e-6, 50.0, 200.0]])
UNIT = np.concatenate([R.uniform(0, 1, 60), [1e-12, 0.5, 1 - 1e-12]])
ANGLE = R.uniform(-np.pi, np.pi, 40)

# (module, scipy distribution, inputs, shape params, loc/scale, functions, rtol)
CONT = [
    ("norm", ss.norm, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-12),
    ("norm", ss.norm, UNIT, (), (0.5, 2.0), ("ppf", "isf"), 1e-12),
    ("cauchy", ss.cauchy, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-12),
    ("cauchy", ss.cauchy, UNIT[1:-1], (), (0.5, 2.0), ("ppf", "isf"), 1e-9),
    ("expon", ss.expon, X, (), (-1.0, 2.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-12),
    ("expon", ss.expon, UNIT, (), (-1.0, 2.0), ("ppf",), 1e-12),
    ("laplace", ss.laplace, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf"), 1e-12),
    ("logistic", ss.logistic, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf", "sf"), 1e-12),
    ("logistic", ss.logistic, UNIT, (), (0.5, 2.0), ("ppf", "isf"), 1e-10),
    ("uniform", ss.uniform, X, (), (-1.0, 3.0), ("logpdf", "pdf", "cdf"), 1e-14),
    ("uniform", ss.uniform, UNIT, (), (-1.0, 3.0), ("ppf",), 1e-14),
    ("gumbel_r", ss.gumbel_r, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-11),
    ("gumbel_r", ss.gumbel_r, UNIT[1:-1], (), (0.5, 2.0), ("ppf",), 1e-11),
    ("gumbel_l", ss.gumbel_l, X, (), (0.5, 2.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-11),
    ("gumbel_l", ss.gumbel_l, UNIT[1:-1], (), (0.5, 2.0), ("ppf",), 1e-11),
    ("gamma", ss.gamma, POS, (2.5,), (0.0, 1.5), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-11),
    ("gamma", ss.gamma, POS, (0.3,), (0.0, 1.0), ("logpdf", "cdf", "sf"), 1e-11),
    ("chi2", ss.chi2, POS, (3.0,), (0.0, 1.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-11),
    ("beta", ss.beta, UNIT[1:-1], (2.0, 3.5), (0.0, 1.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-10),
    ("beta", ss.beta, UNIT[1:-1], (0.5, 0.7), (0.0, 1.0), ("logpdf", "cdf", "sf"), 1e-10),
    ("t", ss.t, X, (3.5,), (0.5, 2.0), ("logpdf", "pdf"), 1e-12),
    ("pareto", ss.pareto, POS + 0.5, (2.5,), (0.0, 1.0), ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-11),
    ("pareto", ss.pareto, UNIT[1:-1], (2.5,), (0.0, 1.0), ("ppf",), 1e-11),
    ("truncnorm", ss.truncnorm, R.uniform(-1, 2, 40), (-1.0, 2.0), (0.0, 1.0),
     ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), 1e-9),
    ("truncnorm", ss.truncnorm, R.uniform(8, 9, 20), (8.0, 9.0), (0.0, 1.0), ("logpdf", "logcdf", "logsf"), 1e-8),
]


@pytest.mark.parametrize("mod,dist,xs,shape,ls,fns,rtol", CONT, ids=[f"{c[0]}-{c[5][0]}-{i}" for i, c in enumerate(CONT)])
def test_continuous_against_scipy(x64, mod, dist, xs, shape, ls, fns, rtol):
    m = getattr(S, mod)
    for fn in fns:
        got = np.asarray(getattr(m, fn)(xs, *shape, *ls))
        with np.errstate(all="ignore"):
            want = getattr(dist, fn)(xs, *shape, loc=ls[0], scale=ls[1])
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-300, err_msg=f"{mod}.{fn}")


def test_gennorm_vonmises_wrapcauchy(x64):
    for b in (0.7, 2.0, 5.0):
        np.testing.assert_allclose(np.asarray(S.gennorm.logpdf(X, b)), ss.gennorm.logpdf(X, b), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(S.gennorm.cdf(X, b)), ss.gennorm.cdf(X, b), rtol=1e-11, atol=1e-300)
    for k in (0.1, 2.0, 50.0):
        np.testing.assert_allclose(np.asarray(S.vonmises.logpdf(ANGLE, k)), ss.vonmises.logpdf(ANGLE, k), rtol=1e-12)
    th = R.uniform(0, 2 * np.pi, 40)
    np.testing.assert_allclose(np.asarray(S.wrapcauchy.pdf(th, 0.3)), ss.wrapcauchy.pdf(th, 0.3), rtol=1e-12)


K = np.arange(-1.0, 25.0)
DISC = [
    ("poisson", ss.poisson, K, (3.5,), ("logpmf", "pmf", "cdf")),
    ("binom", ss.binom, K, (20.0, 0.3), ("logpmf", "pmf")),
    ("nbinom", ss.nbinom, K, (5.0, 0.4), ("logpmf", "pmf")),
    ("geom", ss.geom, K, (0.3,), ("logpmf", "pmf")),
    ("betabinom", ss.betabinom, K, (20.0, 2.0, 3.5), ("logpmf", "pmf")),
    ("bernoulli", ss.bernoulli, np.array([-1.0, 0.0, 1.0, 2.0]), (0.3,), ("logpmf", "pmf")),
]


@pytest.mark.parametrize("mod,dist,ks,shape,fns", DISC, ids=[d[0] for d in DISC])
def test_discrete_against_scipy(x64, mod, dist, ks, shape, fns):
    m = getattr(S, mod)
    for fn in fns:
        got = np.asarray(getattr(m, fn)(ks, *shape))
        with np.errstate(all="ignore"):
            want = getattr(dist, fn)(ks, *shape)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-300, err_msg=f"{mod}.{fn}")
    got = np.asarray(getattr(m, "pmf")(ks, *shape, 1))  # loc shifts the support
    np.testing.assert_allclose(got, dist.pmf(ks, *shape, loc=1), rtol=1e-11, atol=1e-300)


def test_bernoulli_cdf_ppf_poisson_entropy(x64):
    k = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(np.asarray(S.bernoulli.cdf(k, 0.3)), ss.bernoulli.cdf(k, 0.3))
    q = np.array([0.0, 0.5, 0.7, 0.71, 1.0])
    np.testing.assert_allclose(np.asarray(S.bernoulli.ppf(q, 0.3)), [0, 0, 0, 1, 1])  # JAX 0.10.2 (SciPy: -1 at q=0)
    mu = np.array([0.5, 3.0, 40.0])
    np.testing.assert_allclose(np.asarray(S.poisson.entropy(mu)), ss.poisson.entropy(mu), rtol=1e-12)


def test_multivariate(x64):
    rng = np.random.RandomState(3)
    a = rng.normal(size=(4, 4))
    cov = a @ a.T + 4 * np.eye(4)
    mean = rng.normal(size=4)
    x = rng.normal(size=(7, 4))
    np.testing.assert_allclose(np.asarray(S.multivariate_normal.logpdf(x, mean, cov)),
                               ss.multivariate_normal.logpdf(x, mean, cov), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(S.multivariate_normal.logpdf(x, mean, np.array([1., 2., 3., 4.]))),
                               ss.multivariate_normal.logpdf(x, mean, np.diag([1., 2., 3., 4.])), rtol=1e-12)
    alpha = np.array([1.5, 2.0, 3.0])
    p = rng.dirichlet(alpha, size=5).T
    np.testing.assert_allclose(np.asarray(S.dirichlet.logpdf(p, alpha)), ss.dirichlet.logpdf(p, alpha), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(S.dirichlet.logpdf(p[:2], alpha)), ss.dirichlet.logpdf(p, alpha),
                               rtol=1e-10)
    counts = np.array([[2.0, 3.0, 5.0], [0.0, 10.0, 0.0]])
    probs = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(np.asarray(S.multinomial.logpmf(counts, 10.0, probs)),
                               ss.multinomial.logpmf(counts, 10, probs), rtol=1e-12)


def test_gradients_and_jit_float32():
    f = cranax.jit(cranax.grad(lambda m: S.norm.logpdf(1.3, m, 2.0) + S.gamma.logpdf(2.0, m + 2.0)))
    m = 0.4
    h = 1e-3
    ref = lambda v: ss.norm.logpdf(1.3, v, 2.0) + ss.gamma.logpdf(2.0, v + 2.0)  # noqa: E731
    np.testing.assert_allclose(f(np.float32(m)), (ref(m + h) - ref(m - h)) / (2 * h), rtol=1e-3)
    g = cranax.grad(lambda x: S.beta.cdf(x, 2.0, 3.0))(0.4)
    np.testing.assert_allclose(g, ss.beta.pdf(0.4, 2.0, 3.0), rtol=1e-5)
    out = cranax.vmap(lambda x: S.t.logpdf(x, 4.0))(np.linspace(-3, 3, 5, dtype=np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), ss.t.logpdf(np.linspace(-3, 3, 5), 4.0), rtol=1e-5)


def test_mode_rankdata_sem(x64):
    a = np.array([[3, 1, 3, 2, 2], [5, 5, 4, 4, 1], [0, 0, 0, 7, 7]], np.float64)
    m, c = S.mode(a, axis=1)
    w = ss.mode(a, axis=1)
    np.testing.assert_array_equal(np.asarray(m), w.mode)
    np.testing.assert_array_equal(np.asarray(c), w.count)
    m0, c0 = S.mode(a)
    w0 = ss.mode(a, axis=0)
    np.testing.assert_array_equal(np.asarray(m0), w0.mode)
    np.testing.assert_array_equal(np.asarray(c0), w0.count)
    v = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0])
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(np.asarray(S.rankdata(v, method)), ss.rankdata(v, method), err_msg=method)
    np.testing.assert_array_equal(np.asarray(S.rankdata(a, axis=1)), ss.rankdata(a, axis=1))
    with pytest.raises(ValueError, match="unknown method"):
        S.rankdata(v, "bogus")
    np.testing.assert_allclose(np.asarray(S.sem(a, axis=1)), ss.sem(a, axis=1), rtol=1e-14)
    np.testing.assert_allclose(np.asarray(S.sem(a)), ss.sem(a), rtol=1e-14)


def test_gaussian_kde(x64):
    rng = np.random.RandomState(4)
    data = rng.normal(size=(2, 50))
    pts = rng.normal(size=(2, 7))
    w = rng.uniform(0.5, 2.0, 50)
    for kw in ({}, {"bw_method": "silverman"}, {"bw_method": 0.3}, {"weights": w}):
        k = S.gaussian_kde(data, **kw)
        ref = ss.gaussian_kde(data, **kw)
        np.testing.assert_allclose(np.asarray(k(pts)), ref(pts), rtol=1e-11)
        np.testing.assert_allclose(np.asarray(k.logpdf(pts)), ref.logpdf(pts), rtol=1e-11)
    k1 = S.gaussian_kde(data[0])
    np.testing.assert_allclose(np.asarray(k1.evaluate(pts[0])), ss.gaussian_kde(data[0])(pts[0]), rtol=1e-11)
