"""Ecosystem figures (issue 19): for canonical JAX-library programs, the first call of a jitted training step
(fresh function: trace + compile + run) and its steady-state time, under cranax (``python -m cranax.run``)
and under real JAX in the same run (``JAX_PYTHON``: a venv with jax 0.10.2 and the libraries of
tests/ecosystem/requirements.txt), as ratios.

    JAX_PYTHON=/path/to/jax-venv/bin/python python benches/bench_ecosystem.py [--markdown]
        [--cranax-cmd "python -m cranax.run"]

Each side runs in its own subprocess (this file with ``--worker``) and prints its figures as JSON.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import time

import numpy as np


class _Skip(Exception):
    """A library left out by ``_programs(only=...)``."""


def _programs(only=None):
    """name -> (make_step, args): ``make_step()`` returns a fresh jitted step; ``args`` its inputs. ``only``: a
    set of library names (``"optax"``, ``"equinox"``, ``"flax"``, ``"blackjax"``, ``"diffrax"``, ``"flax.nnx"``,
    ``"chex"``, ``"distrax"``)
    to build, default all (benches/bench_programs.py times some of these)."""
    import jax
    import jax.numpy as jnp
    progs = {}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = np.tanh(x[:, :1]).astype(np.float32)

    def mlp_init(key, sizes=(8, 32, 32, 1)):
        ps = []
        for k, (a, b) in zip(jax.random.split(key, len(sizes) - 1), zip(sizes[:-1], sizes[1:])):
            ps.append({"w": jax.random.normal(k, (a, b)) / np.sqrt(a), "b": jnp.zeros((b,))})
        return ps

    def mlp(ps, h):
        for i, p in enumerate(ps):
            h = h @ p["w"] + p["b"]
            h = jnp.tanh(h) if i < len(ps) - 1 else h
        return h

    try:
        if only is not None and 'optax' not in only:
            raise _Skip
        import optax
        opt = optax.adam(1e-2)
        params = mlp_init(jax.random.PRNGKey(0))

        def make():
            def step(p, s):
                g = jax.grad(lambda p: jnp.mean((mlp(p, x) - y) ** 2))(p)
                u, s = opt.update(g, s, p)
                return optax.apply_updates(p, u), s
            return jax.jit(step)
        progs["optax adam MLP step"] = (make, (params, opt.init(params)))

        opt2 = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-2))

        def make2():
            def train(p):
                def body(i, c):
                    p, s = c
                    g = jax.grad(lambda p: jnp.mean((mlp(p, x) - y) ** 2))(p)
                    u, s = opt2.update(g, s, p)
                    return optax.apply_updates(p, u), s
                return jax.lax.fori_loop(0, 200, body, (p, opt2.init(p)))
            return jax.jit(train)
        progs["optax chain(clip, adamw) 200 steps in fori_loop"] = (make2, (params,))
    except _Skip:
        pass
    except ImportError as e:
        print(f"optax: {e}", file=sys.stderr)
    try:
        if only is not None and 'equinox' not in only:
            raise _Skip
        import equinox as eqx
        model = eqx.nn.MLP(8, 1, 32, 2, key=jax.random.PRNGKey(1))

        def make3():
            @eqx.filter_jit
            def step(m):
                g = eqx.filter_grad(lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2))(m)
                return eqx.apply_updates(m, jax.tree_util.tree_map(lambda t: -0.01 * t, g))
            return step
        progs["equinox MLP filter_jit step"] = (make3, (model,))
    except _Skip:
        pass
    except ImportError as e:
        print(f"equinox: {e}", file=sys.stderr)
    try:
        if only is not None and 'flax' not in only:
            raise _Skip
        import flax.linen as nn

        class MLP(nn.Module):
            @nn.compact
            def __call__(self, h):
                return nn.Dense(1)(nn.tanh(nn.Dense(32)(h)))
        m = MLP()
        fparams = m.init(jax.random.PRNGKey(0), x)

        def make4():
            def step(p):
                g = jax.grad(lambda p: jnp.mean((m.apply(p, x) - y) ** 2))(p)
                return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)
            return jax.jit(step)
        progs["flax.linen Dense MLP step"] = (make4, (fparams,))
    except _Skip:
        pass
    except ImportError as e:
        print(f"flax: {e}", file=sys.stderr)
    try:
        if only is not None and 'blackjax' not in only:
            raise _Skip
        import blackjax
        kernel = blackjax.hmc(lambda q: -0.5 * jnp.sum(q ** 2), step_size=0.3, inverse_mass_matrix=jnp.ones(2),
                              num_integration_steps=10)

        def make5():
            return jax.jit(kernel.step)
        progs["blackjax HMC step"] = (make5, (jax.random.PRNGKey(0), kernel.init(jnp.ones(2))))
        nuts = blackjax.nuts(lambda q: -0.5 * jnp.sum(q ** 2), step_size=0.3, inverse_mass_matrix=jnp.ones(2))

        def make5n():
            return jax.jit(nuts.step)
        progs["blackjax NUTS step"] = (make5n, (jax.random.PRNGKey(0), nuts.init(jnp.ones(2))))
    except _Skip:
        pass
    except ImportError as e:
        print(f"blackjax: {e}", file=sys.stderr)
    try:
        if only is not None and 'diffrax' not in only:
            raise _Skip
        import diffrax

        def make6():
            def solve(y0, k):
                term = diffrax.ODETerm(lambda t, y, args: -args * y + jnp.sin(t))
                return diffrax.diffeqsolve(term, diffrax.Tsit5(), t0=0.0, t1=2.0, dt0=0.1, y0=y0, args=k,
                                           stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8),
                                           saveat=diffrax.SaveAt(t1=True)).ys
            return jax.jit(solve)
        progs["diffrax Tsit5 + PID diffeqsolve"] = (make6, (jnp.array([1.0, 2.0]), 0.7))
    except _Skip:
        pass
    except ImportError as e:
        print(f"diffrax: {e}", file=sys.stderr)
    try:
        if only is not None and 'flax.nnx' not in only:
            raise _Skip
        from flax import nnx
        nmodel = nnx.Sequential(nnx.Linear(8, 32, rngs=nnx.Rngs(0)), nnx.tanh, nnx.Linear(32, 1, rngs=nnx.Rngs(1)))
        ngraph, nstate = nnx.split(nmodel)

        def make7():
            def step(state):
                def loss(st):
                    return jnp.mean((nnx.merge(ngraph, st)(x) - y) ** 2)
                g = jax.grad(loss)(state)
                return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, state, g)
            return jax.jit(step)
        progs["flax.nnx Linear MLP step (split/merge)"] = (make7, (nstate,))
    except _Skip:
        pass
    except ImportError as e:
        print(f"flax.nnx: {e}", file=sys.stderr)
    try:
        if only is not None and 'chex' not in only:
            raise _Skip
        import chex

        @chex.dataclass
        class State:
            w: chex.Array
            n: chex.Array

        def make8():
            def step(s):
                chex.assert_shape(s.w, (3,))
                chex.assert_type(s.n, jnp.int32)
                return s.replace(w=s.w * 2.0 + 1.0, n=s.n + 1)
            return jax.jit(step)
        progs["chex dataclass step with asserts"] = (make8, (State(w=jnp.arange(3.0), n=jnp.array(0)),))
    except _Skip:
        pass
    except ImportError as e:
        print(f"chex: {e}", file=sys.stderr)
    try:
        if only is not None and 'distrax' not in only:
            raise _Skip
        import distrax
        pts = jnp.asarray(x[:, :2])

        def make9():
            def step(loc, key):
                # a flow's log-likelihood and its gradient, plus a reparameterised sample
                flow = distrax.Transformed(
                    distrax.MultivariateNormalDiag(loc=loc, scale_diag=jnp.array([1.0, 0.5])),
                    distrax.Block(distrax.Chain([distrax.ScalarAffine(shift=1.0, scale=3.0), distrax.Tanh()]), 1))
                nll = lambda l: -jnp.mean(distrax.MultivariateNormalDiag(l, jnp.ones(2)).log_prob(pts))
                return flow.sample(seed=key, sample_shape=(16,)), jax.value_and_grad(nll)(loc)
            return jax.jit(step)
        progs["distrax MVN log_prob grad + flow sample"] = (make9, (jnp.array([0.0, 1.0]), jax.random.PRNGKey(0)))
    except _Skip:
        pass
    except ImportError as e:
        print(f"distrax: {e}", file=sys.stderr)
    return progs


def _worker():
    import jax
    out = {"jax_version": jax.__version__}
    for name, (make, args) in _programs().items():
        try:
            jax.clear_caches()
            f = make()
            t0 = time.perf_counter()
            jax.block_until_ready(f(*args))
            first = time.perf_counter() - t0
            times = []
            for i in range(22):
                t0 = time.perf_counter()
                jax.block_until_ready(f(*args))
                if i >= 2:
                    times.append(time.perf_counter() - t0)
            out[name] = {"first": first, "steady": statistics.median(times)}
        except Exception as e:   # a program that fails on one side is reported, not fatal
            out[name] = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    print(json.dumps(out))


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def _fmt(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} µs"


def main():
    if "--worker" in sys.argv:
        return _worker()
    cranax_cmd = "python -m cranax.run"
    if "--cranax-cmd" in sys.argv:
        cranax_cmd = sys.argv[sys.argv.index("--cranax-cmd") + 1]
    cr_cmd = shlex.split(cranax_cmd)
    if cr_cmd[0] == "python":
        cr_cmd[0] = sys.executable
    cr = _run(cr_cmd + [os.path.abspath(__file__), "--worker"])
    jax_py = os.environ.get("JAX_PYTHON")
    jx = _run([jax_py, os.path.abspath(__file__), "--worker"]) if jax_py else {}
    rows = ["| program | cranax first call | JAX first call | first ratio | cranax steady | JAX steady | steady ratio |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name, c in cr.items():
        if name == "jax_version":
            continue
        j = jx.get(name, {})
        if "error" in c:
            rows.append(f"| {name} | error: {c['error']} | {_fmt(j.get('first'))} | - | - | {_fmt(j.get('steady'))} | - |")
            continue
        fr = f"{c['first'] / j['first']:.3g}x" if "first" in j else "-"
        sr = f"{c['steady'] / j['steady']:.3g}x" if "steady" in j else "-"
        rows.append(f"| {name} | {_fmt(c['first'])} | {_fmt(j.get('first'))} | {fr} | {_fmt(c['steady'])} | "
                    f"{_fmt(j.get('steady'))} | {sr} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
