"""The canonical programs of tests/ecosystem/, written as plain JAX code: the tests run them on cranax (under
``cranax.install_as_jax()``) and compare with the values real JAX 0.10.2 gave for the same code, recorded by
``python tests/ecosystem/programs.py NAME`` run with real JAX. Each returns a dict of NumPy-convertible values.
"""
import json
import sys

import numpy as np


def _data(n=64, d=8, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    w = rng.standard_normal((d, 1)).astype(np.float32)
    y = np.tanh(x @ w) + 0.1 * rng.standard_normal((n, 1)).astype(np.float32)
    return x, y.astype(np.float32)


def _mlp_init(key, sizes=(8, 16, 1)):
    import jax
    import jax.numpy as jnp
    params = []
    for k, (a, b) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
        params.append({"w": jax.random.normal(k, (a, b)) / jnp.sqrt(a), "b": jnp.zeros((b,))})
    return params


def _mlp(params, x):
    import jax.numpy as jnp
    for i, p in enumerate(params):
        x = x @ p["w"] + p["b"]
        if i < len(params) - 1:
            x = jnp.tanh(x)
    return x


def optax_quadratic():
    import jax
    import jax.numpy as jnp
    import optax
    target = jnp.array([1.0, -2.0, 3.0])

    def loss(x):
        return jnp.sum((x - target) ** 2)

    out = {}
    for name, opt, steps in [("adam", optax.adam(0.1), 100), ("sgd", optax.sgd(0.1, momentum=0.9), 50)]:
        x = jnp.zeros(3)
        state = opt.init(x)

        @jax.jit
        def step(x, state):
            g = jax.grad(loss)(x)
            upd, state = opt.update(g, state, x)
            return optax.apply_updates(x, upd), state
        for _ in range(steps):
            x, state = step(x, state)
        out[name] = np.asarray(x).tolist()
        out[name + "_loss"] = float(loss(x))
    return out


def optax_mlp():
    import jax
    import jax.numpy as jnp
    import optax
    x, y = _data()
    params = _mlp_init(jax.random.PRNGKey(0))
    opt = optax.adam(1e-2)

    def loss(p):
        return jnp.mean((_mlp(p, x) - y) ** 2)

    def step(carry):
        p, s = carry
        l, g = jax.value_and_grad(loss)(p)
        upd, s = opt.update(g, s, p)
        return optax.apply_updates(p, upd), s

    jstep = jax.jit(step)
    carry = (params, opt.init(params))
    for _ in range(200):
        carry = jstep(carry)
    out = {"loss0": float(loss(params)), "loss_steps": float(loss(carry[0])),
           "w0_steps": np.asarray(carry[0][0]["w"][0]).tolist()}

    @jax.jit
    def train(p):
        return jax.lax.fori_loop(0, 200, lambda i, c: step(c), (p, opt.init(p)))
    p_loop, _ = train(params)
    out["loss_loop"] = float(loss(p_loop))
    out["w0_loop"] = np.asarray(p_loop[0]["w"][0]).tolist()

    opt2 = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2, weight_decay=1e-4))
    p, s = params, opt2.init(params)

    @jax.jit
    def step2(p, s):
        g = jax.grad(loss)(p)
        upd, s = opt2.update(g, s, p)
        return optax.apply_updates(p, upd), s
    for _ in range(50):
        p, s = step2(p, s)
    out["loss_chain"] = float(loss(p))
    out["b1_chain"] = np.asarray(p[1]["b"]).tolist()
    return out


def chex_program():
    import jax
    import jax.numpy as jnp
    import chex

    @chex.dataclass
    class State:
        w: chex.Array
        n: chex.Array

    @jax.jit
    def step(s):
        chex.assert_shape(s.w, (3,))
        chex.assert_type(s.n, jnp.int32)
        return s.replace(w=s.w * 2.0 + 1.0, n=s.n + 1)

    s = State(w=jnp.arange(3.0), n=jnp.array(0))
    for _ in range(3):
        s = step(s)
    chex.assert_trees_all_close(s.w, jnp.array([7.0, 15.0, 23.0]))
    caught = []
    for bad in (lambda: chex.assert_shape(jnp.ones(2), (3,)), lambda: chex.assert_rank(jnp.ones((2, 2)), 1),
                lambda: chex.assert_equal_shape([jnp.ones(2), jnp.ones(3)]),
                lambda: chex.assert_trees_all_close({"a": jnp.ones(2)}, {"a": jnp.zeros(2)}),
                lambda: chex.assert_tree_all_finite({"a": jnp.array([1.0, jnp.inf])})):
        try:
            bad()
            caught.append(0)
        except AssertionError:
            caught.append(1)
    leaves = jax.tree_util.tree_leaves(s)
    return {"w": np.asarray(s.w).tolist(), "n": int(s.n), "caught": caught, "n_leaves": len(leaves)}


def equinox_program():
    import jax
    import jax.numpy as jnp
    import equinox as eqx
    x, y = _data(n=32, d=4)
    model = eqx.nn.MLP(in_size=4, out_size=1, width_size=8, depth=2, key=jax.random.PRNGKey(1))

    def loss(m, x, y):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    @eqx.filter_jit
    def step(m, x, y):
        l, g = eqx.filter_value_and_grad(loss)(m, x, y)
        m = eqx.apply_updates(m, jax.tree_util.tree_map(lambda gp: -0.05 * gp, g))
        return m, l
    losses = []
    m = model
    for _ in range(30):
        m, l = step(m, x, y)
        losses.append(float(l))
    g = eqx.filter_grad(loss)(model, x, y)
    batched = eqx.filter_vmap(lambda m_, xi: m_(xi), in_axes=(None, 0))(m, x[:3])
    return {"loss0": losses[0], "loss_last": losses[-1], "g_w0": np.asarray(g.layers[0].weight[0]).tolist(),
            "out": np.asarray(batched).ravel().tolist(),
            "init_w0": np.asarray(model.layers[0].weight[0]).tolist()}


def flax_linen_program():
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    x, y = _data(n=32, d=4)

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.tanh(nn.Dense(8)(x))
            return nn.Dense(1)(x)

    model = MLP()
    params = model.init(jax.random.PRNGKey(0), x)

    def loss(p):
        return jnp.mean((model.apply(p, x) - y) ** 2)
    g = jax.grad(loss)(params)

    @jax.jit
    def step(p):
        l, g = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), l
    p = params
    for _ in range(20):
        p, l = step(p)
    k0 = params["params"]["Dense_0"]["kernel"]
    return {"kernel0": np.asarray(k0).ravel().tolist(), "bias0": np.asarray(params["params"]["Dense_0"]["bias"]).tolist(),
            "loss0": float(loss(params)), "loss20": float(l),
            "g_kernel1": np.asarray(g["params"]["Dense_1"]["kernel"]).ravel().tolist()}


def blackjax_program():
    import jax
    import jax.numpy as jnp
    import blackjax
    cov = jnp.array([[1.0, 0.6], [0.6, 2.0]])
    prec = jnp.array([[2.0, -0.6], [-0.6, 1.0]]) / 1.64   # the inverse of cov, written out

    def logdensity(x):
        return -0.5 * x @ prec @ x

    out = {}
    for name, kernel in [("hmc", blackjax.hmc(logdensity, step_size=0.3, inverse_mass_matrix=jnp.ones(2),
                                              num_integration_steps=10)),
                         ("nuts", blackjax.nuts(logdensity, step_size=0.3, inverse_mass_matrix=jnp.ones(2)))]:
        state = kernel.init(jnp.array([1.0, -1.0]))
        step = jax.jit(kernel.step)

        def body(carry, key):
            st = step(key, carry)[0]
            return st, st.position
        keys = jax.random.split(jax.random.PRNGKey(0), 200)
        _, samples = jax.lax.scan(body, state, keys)
        out[name + "_first"] = np.asarray(samples[:3]).tolist()
        out[name + "_mean"] = np.asarray(samples.mean(0)).tolist()
    return out


def diffrax_program():
    import jax
    import jax.numpy as jnp
    import diffrax

    def solve(y0, solver, k):
        term = diffrax.ODETerm(lambda t, y, args: -args * y + jnp.sin(t))
        sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=2.0, dt0=0.1, y0=y0, args=k,
                                  stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8),
                                  saveat=diffrax.SaveAt(t1=True))
        return sol.ys[-1], sol.stats["num_steps"]
    out = {}
    for name, solver in [("tsit5", diffrax.Tsit5()), ("dopri5", diffrax.Dopri5())]:
        y, n = jax.jit(lambda y0, k: solve(y0, solver, k))(jnp.array([1.0, 2.0]), 0.7)
        out[name] = np.asarray(y).tolist()
        out[name + "_steps"] = int(n)
        g = jax.jit(jax.grad(lambda k: jnp.sum(solve(jnp.array([1.0, 2.0]), solver, k)[0])))(0.7)
        out[name + "_grad"] = float(g)
    return out


def distrax_program():
    import jax
    import jax.numpy as jnp
    import distrax
    n = distrax.Normal(loc=1.0, scale=2.0)
    x = jnp.array([-1.0, 0.5, 3.0])
    mvn = distrax.MultivariateNormalDiag(loc=jnp.array([0.0, 1.0]), scale_diag=jnp.array([1.0, 0.5]))
    s = mvn.sample(seed=jax.random.PRNGKey(0), sample_shape=(3,))
    bij = distrax.Chain([distrax.ScalarAffine(shift=1.0, scale=3.0), distrax.Tanh()])
    y, ldj = bij.forward_and_log_det(jnp.array([0.1, -0.4]))
    xi, ildj = bij.inverse_and_log_det(y)
    td = distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.Lambda(jnp.exp))
    g = jax.grad(lambda m: jnp.sum(distrax.Normal(m, 1.0).log_prob(x)))(0.3)
    return {"log_prob": np.asarray(n.log_prob(x)).tolist(), "cdf": np.asarray(n.cdf(x)).tolist(),
            "entropy": float(n.entropy()), "mvn_log_prob": np.asarray(jax.jit(mvn.log_prob)(s)).tolist(),
            "mvn_sample": np.asarray(s).tolist(), "bij_y": np.asarray(y).tolist(), "bij_ldj": np.asarray(ldj).tolist(),
            "bij_x": np.asarray(xi).tolist(), "bij_ildj": np.asarray(ildj).tolist(),
            "lognormal_log_prob": float(td.log_prob(2.0)), "grad_loc": float(g)}


def flax_nnx_program():
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx
    x, y = _data(n=32, d=4)

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(4, 8, rngs=rngs)
            self.l2 = nnx.Linear(8, 1, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.tanh(self.l1(x)))

    model = MLP(nnx.Rngs(0))
    init_k1 = np.asarray(model.l1.kernel[...]).ravel().tolist()

    def loss_fn(m):
        return jnp.mean((m(x) - y) ** 2)
    g = nnx.grad(loss_fn)(model)
    optimizer = nnx.Optimizer(model, optax.adam(0.05), wrt=nnx.Param)

    @nnx.jit
    def step(m, opt):
        l, grads = nnx.value_and_grad(loss_fn)(m)
        opt.update(m, grads)
        return l
    losses = [float(step(model, optimizer)) for _ in range(20)]
    return {"init_k1": init_k1, "g_k2": np.asarray(g.l2.kernel[...]).ravel().tolist(),
            "loss0": losses[0], "loss19": losses[-1], "out": np.asarray(nnx.jit(lambda m: m(x[:3]))(model)).ravel().tolist(),
            "k2_after": np.asarray(model.l2.kernel[...]).ravel().tolist()}


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, "=", json.dumps(globals()[name]()))
