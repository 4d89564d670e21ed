"""The distribution samplers' cases whose values tests/test_random_distributions.py checks against JAX 0.10.2.

Each case is ``(name, expression, exact)``; the expression is evaluated with ``random`` (``jax.random`` when
recording, ``cranax.random`` when testing), ``np`` and ``K`` (``random.PRNGKey``) in scope.
``tests/record_random_dist_expected.py`` evaluates them with real JAX and writes
``tests/random_dist_expected.py``. ``exact`` cases must match bit for bit (on an FMA host); the others use a
float operation whose XLA:CPU rounding cranax does not reproduce (``pow``, ``tan``, a rearranged chain of
divisions, the log-space boost for a < 1 whose 1/a is inexact) and are compared to a few ulp.
"""

CASES = [
    # gamma family: Marsaglia-Tsang in a while loop per element
    ("gamma_2", "random.gamma(K(0), 2.0, (20000,))", True),
    ("gamma_arr", "random.gamma(K(3), np.array([1., 3., 10., 100., 1e4], np.float32), (40, 5))", True),
    ("gamma_small_a", "random.gamma(K(1), 0.5, (4000,))", False),
    ("loggamma_05", "random.loggamma(K(1), 0.5, (20000,))", True),
    ("loggamma_tiny", "random.loggamma(K(2), np.array([1e-3, 0.1, 0.9, 1.5], np.float32), (100, 4))", False),
    ("beta", "random.beta(K(4), 2., 3., (20000,))", True),
    ("beta_small", "random.beta(K(5), np.array([0.2, 1., 5.], np.float32), 0.5, (50, 3))", False),
    ("dirichlet", "random.dirichlet(K(5), np.array([0.5, 1., 2.], np.float32), (1000,))", True),
    ("dirichlet_default", "random.dirichlet(K(6), np.ones((4, 5), np.float32))", True),
    ("chisquare", "random.chisquare(K(0), 4., (20000,))", True),
    ("t", "random.t(K(0), 3., (20000,))", True),
    ("t_arr", "random.t(K(7), np.array([2., 5., 30.], np.float32))", True),
    ("f", "random.f(K(0), 3., 5., (500,))", False),
    # counts
    ("poisson_3", "random.poisson(K(0), 3.0, (20000,))", True),
    ("poisson_mixed", "random.poisson(K(1), np.array([0., 0.5, 5., 9.9, 10., 50., 1000.], np.float32), (300, 7))",
     True),
    ("poisson_25", "random.poisson(K(2), 25.0, (20000,))", True),
    # PTRS's accept test compares against lgamma: XLA's float32 lgamma and its fused multiply-adds decide a
    # few draws in 1e6 at lam = 40 and a few hundred at lam = 1000
    ("poisson_1000", "random.poisson(K(0), 1000.0, (20000,))", True),
    ("poisson_40_1e6", "random.poisson(K(0), 40.0, (1000000,))", True),
    ("binomial_small", "random.binomial(K(0), 10., 0.3, (20000,))", True),
    ("binomial_btrs", "random.binomial(K(1), 100., 0.4, (20000,))", True),
    # BTRS's accept test with XLA's fused multiply-adds (one draw in 1e6 flipped here without them)
    ("binomial_btrs_1e6", "random.binomial(K(2), 3000., 0.93, (1000000,))", True),
    ("binomial_hi_p", "random.binomial(K(2), np.array([5., 50., 500.], np.float32), "
     "np.array([0.9, 0.7, 0.2], np.float32), (100, 3))", True),
    ("binomial_invalid", "random.binomial(K(3), np.array([-1., np.nan, np.inf, 4.], np.float32), "
     "np.array([0.5, 0.5, 0.5, np.nan], np.float32))", True),
    ("multinomial", "random.multinomial(K(3), 20., np.array([0.2, 0.3, 0.5], np.float32), shape=(50, 3))", True),
    ("multinomial_default", "random.multinomial(K(4), np.array([10., 200.], np.float32), "
     "np.array([[0.1, 0.9], [0.5, 0.5]], np.float32))", True),
    ("geometric", "random.geometric(K(0), 0.3, (20000,))", True),
    ("rademacher", "random.rademacher(K(0), (20000,))", True),
    # transforms of uniform / normal / exponential draws
    ("cauchy", "random.cauchy(K(0), (500,))", False),
    ("lognormal", "random.lognormal(K(0), 0.5, (20000,))", True),
    ("pareto", "random.pareto(K(0), 2., (20000,))", True),
    ("weibull_min", "random.weibull_min(K(0), 2., 1.5, (500,))", False),
    ("rayleigh", "random.rayleigh(K(0), 2., (20000,))", True),
    ("wald", "random.wald(K(0), 1.5, (20000,))", True),
    ("maxwell", "random.maxwell(K(0), (20000,))", True),
    ("double_sided_maxwell", "random.double_sided_maxwell(K(0), 1., 2., (20000,))", True),
    ("generalized_normal_07", "random.generalized_normal(K(0), 0.7, (500,))", False),
    ("generalized_normal_15", "random.generalized_normal(K(0), 1.5, (500,))", False),
    ("triangular", "random.triangular(K(0), 0., 0.3, 1., (20000,))", True),
    ("ball", "random.ball(K(0), 3, 2, (200,))", False),
    # factor-based: small Cholesky factors in LAPACK's (OpenBLAS potf2's) order and the product in XLA's
    # (h-bits18); cranax's QR still rounds differently from LAPACK's in the last bits
    ("multivariate_normal", "random.multivariate_normal(K(0), np.array([1., -1., .5], np.float32), "
     "np.array([[2., .5, .1], [.5, 1., .3], [.1, .3, .7]], np.float32), (200,))", True),
    ("multivariate_normal_batch", "random.multivariate_normal(K(1), np.zeros((4, 2), np.float32), "
     "np.array([[1., .9], [.9, 1.]], np.float32))", True),
    ("orthogonal", "random.orthogonal(K(0), 3)", False),
    ("orthogonal_batch", "random.orthogonal(K(1), 5, (3,))", False),
    ("orthogonal_wide", "random.orthogonal(K(2), 2, m=4)", False),
    ("orthogonal_tall", "random.orthogonal(K(3), 4, m=2)", False),
    # the primitive behind gamma, bound with a typed key
    ("random_gamma_p", "random.random_gamma_p.bind(random.key(0), np.array([0.5, 1., 3., 40.], np.float32), "
     "log_space=False)", True),
    ("random_gamma_p_log", "random.random_gamma_p.bind(random.key(1), np.array([0.01, 2.], np.float32), "
     "log_space=True)", False),
]
