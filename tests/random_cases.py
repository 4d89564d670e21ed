"""The expressions whose values tests/test_random.py checks against JAX 0.10.2.

Each case is ``(name, expression)``; the expression is evaluated with ``random`` (``jax.random`` when
recording, ``cranax.random`` when testing), ``jnp``, ``np`` and ``K`` (``random.PRNGKey``) in scope.
``tests/record_random_expected.py`` evaluates them with real JAX and writes ``tests/random_expected.py``.
"""

CASES = [
    # keys
    ("seed_0", "K(0)"),
    ("seed_1", "K(1)"),
    ("seed_42", "K(42)"),
    ("seed_neg1", "K(-1)"),
    ("seed_int32max", "K(2**31 - 1)"),
    ("seed_2pow31", "K(2**31)"),
    ("seed_2pow32p5", "K(2**32 + 5)"),
    ("seed_u32", "K(np.uint32(4000000000))"),
    ("seed_i64", "K(np.int64(2**40 + 3))"),
    ("seed_bool", "K(True)"),
    ("key_data_7", "random.key_data(random.key(7))"),
    ("typed_split", "random.key_data(random.split(random.key(0)))"),
    ("typed_split_3", "random.key_data(random.split(random.key(3), 3))"),
    ("typed_fold_in", "random.key_data(random.fold_in(random.key(5), 9))"),
    ("typed_normal", "random.normal(random.key(0), (3,))"),
    ("typed_uniform", "random.uniform(random.key(11), (4,))"),
    # split
    ("split_0", "random.split(K(0))"),
    ("split_0_3", "random.split(K(0), 3)"),
    ("split_0_1", "random.split(K(0), 1)"),
    ("split_42_5", "random.split(K(42), 5)"),
    ("split_0_2x3", "random.split(K(0), (2, 3))"),
    ("split_split", "random.split(random.split(K(7))[1], 4)"),
    ("split_1_17", "random.split(K(1), 17)"),
    # fold_in
    ("fold_in_0_0", "random.fold_in(K(0), 0)"),
    ("fold_in_0_1", "random.fold_in(K(0), 1)"),
    ("fold_in_42_12345", "random.fold_in(K(42), 12345)"),
    ("fold_in_3_int32max", "random.fold_in(K(3), 2**31 - 1)"),
    ("fold_in_3_u32", "random.fold_in(K(3), np.uint32(4000000000))"),
    ("fold_in_3_neg", "random.fold_in(K(3), np.int32(-5))"),
    ("fold_in_chain", "random.fold_in(random.fold_in(K(0), 1), 2)"),
    # bits
    ("bits_scalar", "random.bits(K(0))"),
    ("bits_1", "random.bits(K(0), (1,))"),
    ("bits_5", "random.bits(K(0), (5,))"),
    ("bits_7", "random.bits(K(42), (7,))"),
    ("bits_3x4", "random.bits(K(1), (3, 4))"),
    ("bits_2x3x4", "random.bits(K(2), (2, 3, 4))"),
    ("bits_4x1x3", "random.bits(K(2), (4, 1, 3))"),
    ("bits_u32", "random.bits(K(9), (6,), jnp.uint32)"),
    # uniform
    ("uniform_scalar", "random.uniform(K(0))"),
    ("uniform_42_2", "random.uniform(K(42), (2,))"),
    ("uniform_0_5", "random.uniform(K(0), (5,))"),
    ("uniform_3x4", "random.uniform(K(3), (3, 4))"),
    ("uniform_minmax", "random.uniform(K(4), (8,), minval=-3.7, maxval=5.1)"),
    ("uniform_minmax_f32", "random.uniform(K(4), (8,), jnp.float32, np.float32(0.1), np.float32(0.3))"),
    ("uniform_minval_arr", "random.uniform(K(5), (2, 3), minval=jnp.array([0., 10., 100.]), maxval=1000.)"),
    ("uniform_big", "random.uniform(K(6), (257,))"),
    # normal
    ("normal_scalar", "random.normal(K(0))"),
    ("normal_0_3", "random.normal(K(0), (3,))"),
    ("normal_1_4x5", "random.normal(K(1), (4, 5))"),
    ("normal_2_1000", "random.normal(K(2), (1000,))"),
    ("normal_3_2x2x2", "random.normal(K(3), (2, 2, 2))"),
    # truncated normal
    ("truncnorm_a", "random.truncated_normal(K(0), -1., 2., (10,))"),
    ("truncnorm_b", "random.truncated_normal(K(1), -0.5, 0.5, (3, 3))"),
    ("truncnorm_c", "random.truncated_normal(K(2), jnp.array([-2., 0., 1.]), 3.)"),
    ("truncnorm_d", "random.truncated_normal(K(3), 1.5, 4.0, (6,))"),
    # randint
    ("randint_10", "random.randint(K(0), (10,), 0, 10)"),
    ("randint_3x4", "random.randint(K(1), (3, 4), -5, 5)"),
    ("randint_big", "random.randint(K(2), (6,), 0, 2**31 - 1)"),
    ("randint_full", "random.randint(K(2), (6,), -2**31, 2**31 - 1)"),
    ("randint_empty_range", "random.randint(K(3), (4,), 5, 5)"),
    ("randint_inverted", "random.randint(K(3), (4,), 7, 2)"),
    ("randint_arr", "random.randint(K(4), (2, 3), jnp.array([0, 10, 100]), jnp.array([5, 20, 1000]))"),
    ("randint_scalar", "random.randint(K(5), (), 0, 1000)"),
    ("randint_1000", "random.randint(K(6), (200,), 0, 1000)"),
    ("randint_u32", "random.randint(K(7), (5,), 3, 40000, jnp.uint32)"),
    # bernoulli
    ("bernoulli_default", "random.bernoulli(K(0), shape=(10,))"),
    ("bernoulli_03", "random.bernoulli(K(1), 0.3, (3, 4))"),
    ("bernoulli_arr", "random.bernoulli(K(2), jnp.array([0.1, 0.5, 0.9, 0.0, 1.0]))"),
    ("bernoulli_high", "random.bernoulli(K(3), 0.25, (8,), mode='high')"),
    # gumbel / exponential / laplace / logistic
    ("gumbel_10", "random.gumbel(K(0), (10,))"),
    ("gumbel_3x4", "random.gumbel(K(1), (3, 4))"),
    ("gumbel_high", "random.gumbel(K(2), (6,), mode='high')"),
    ("exponential_10", "random.exponential(K(0), (10,))"),
    ("exponential_3x4", "random.exponential(K(1), (3, 4))"),
    ("exponential_1000", "random.exponential(K(2), (1000,))"),
    ("laplace_10", "random.laplace(K(0), (10,))"),
    ("laplace_3x4", "random.laplace(K(1), (3, 4))"),
    ("logistic_10", "random.logistic(K(0), (10,))"),
    ("logistic_3x4", "random.logistic(K(1), (3, 4))"),
    # categorical
    ("categorical_1d", "random.categorical(K(0), jnp.array([0.1, 1.0, -2.0, 0.5, 3.0]), shape=(12,))"),
    ("categorical_2d", "random.categorical(K(1), jnp.log(jnp.array([[.1, .2, .7], [.5, .25, .25], "
                       "[.9, .05, .05], [.3, .3, .4]])))"),
    ("categorical_axis0", "random.categorical(K(2), jnp.array([[0., 1., 2.], [2., 1., 0.]]), axis=0)"),
    ("categorical_prefix", "random.categorical(K(3), jnp.array([[0., 1., 2.], [2., 1., 0.]]), shape=(4, 2))"),
    ("categorical_noreplace", "random.categorical(K(4), jnp.array([0.1, 1.0, -2.0, 0.5, 3.0]), shape=(3,), "
                              "replace=False)"),
    # choice
    ("choice_int", "random.choice(K(0), 10, (5,))"),
    ("choice_arr", "random.choice(K(1), jnp.array([10., 20., 30., 40.]), (3, 2))"),
    ("choice_noreplace", "random.choice(K(2), 10, (5,), replace=False)"),
    ("choice_noreplace_arr", "random.choice(K(3), jnp.arange(8) * 3, (8,), replace=False)"),
    ("choice_p", "random.choice(K(4), 5, (10,), p=jnp.array([0.1, 0.2, 0.3, 0.25, 0.15]))"),
    ("choice_p_arr", "random.choice(K(5), jnp.array([7, 8, 9]), (6,), p=jnp.array([0.5, 0.3, 0.2]))"),
    ("choice_p_noreplace", "random.choice(K(6), 6, (4,), replace=False, p=jnp.array([.1, .1, .3, .2, .2, .1]))"),
    ("choice_axis1", "random.choice(K(7), jnp.arange(12).reshape(3, 4), (2,), axis=1)"),
    ("choice_scalar", "random.choice(K(8), 100)"),
    # permutation
    ("permutation_10", "random.permutation(K(0), 10)"),
    ("permutation_arr", "random.permutation(K(1), jnp.array([1., 2., 3., 4., 5., 6.]))"),
    ("permutation_2d", "random.permutation(K(2), jnp.arange(12).reshape(4, 3))"),
    ("permutation_2d_axis1", "random.permutation(K(3), jnp.arange(12).reshape(3, 4), axis=1)"),
    ("permutation_indep", "random.permutation(K(4), jnp.arange(12).reshape(3, 4), axis=1, independent=True)"),
    ("permutation_100", "random.permutation(K(5), 100)"),
    ("permutation_2000", "random.permutation(K(6), 2000)"),
]
