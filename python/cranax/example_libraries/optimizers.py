"""``cranax.example_libraries.optimizers``: first-order optimizers over pytrees of arrays. Each optimizer
maker returns an ``Optimizer(init_fn, update_fn, params_fn)``: ``init_fn(params) -> OptimizerState``,
``update_fn(step, grads, state) -> state`` and ``params_fn(state) -> params``; the state is a pytree, so it
passes through ``jit``. Step sizes are numbers or schedules ``step -> size``. Mirrors
``jax.example_libraries.optimizers``."""
from __future__ import annotations

import builtins
import functools
from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from .. import numpy as jnp
from .. import tree_util as _tu
from .._util import safe_map, safe_zip, unzip2  # jax._src.util's, which JAX's optimizers module imports

__all__ = ["Array", "InitFn", "JoinPoint", "Optimizer", "OptimizerState", "Params", "ParamsFn", "Schedule",
           "State", "Step", "UpdateFn", "Updates", "adagrad", "adam", "adamax", "clip_grads", "constant",
           "exponential_decay", "inverse_time_decay", "l2_norm", "make_schedule", "momentum", "nesterov",
           "optimizer", "pack_optimizer_state", "piecewise_constant", "polynomial_decay", "rmsprop",
           "rmsprop_momentum", "sgd", "sm3", "unpack_optimizer_state", "unzip2", "safe_map", "safe_zip"]


map = safe_map
zip = safe_zip

# The flat per-leaf states, the parameters' tree structure, and each leaf state's own structure.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
_tu.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]))

Array = Any
Params = Any
State = Any
Updates = Params
InitFn = Callable[[Params], OptimizerState]
Step = int
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], float]


class Optimizer(NamedTuple):
    """The three functions of an optimizer over pytrees."""
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def optimizer(opt_maker):
    """Lifts a maker of per-array ``(init, update, get_params)`` functions to one over pytrees of arrays:
    each leaf gets its own state. ``update_fn`` raises ``TypeError`` when the gradient tree's structure is
    not the parameters' or a per-leaf update changes its state's structure. Mirrors
    ``jax.example_libraries.optimizers.optimizer``."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, treedef = _tu.tree_flatten(x0_tree)
            flat, subdefs = unzip2(_tu.tree_flatten(init(x0)) for x0 in leaves)
            return OptimizerState(list(flat), treedef, list(subdefs))

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            flat, treedef, subdefs = opt_state
            grads, treedef2 = _tu.tree_flatten(grad_tree)
            if treedef2 != treedef:
                raise TypeError("optimizer update function was passed a gradient tree that did not match the "
                                f"parameter tree structure with which it was initialized: parameter tree "
                                f"{treedef} and grad tree {treedef2}.")
            new = [update(i, g, _tu.tree_unflatten(d, s)) for g, d, s in zip(grads, subdefs, flat)]
            new_flat, new_defs = unzip2(_tu.tree_flatten(s) for s in new)
            for d, d2 in zip(subdefs, new_defs):
                if d2 != d:
                    raise TypeError("optimizer update function produced an output structure that did not match "
                                    f"its input structure: input {d} and output {d2}.")
            return OptimizerState(list(new_flat), treedef, list(subdefs))

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            flat, treedef, subdefs = opt_state
            return _tu.tree_unflatten(treedef, [get_params(_tu.tree_unflatten(d, s)) for d, s in zip(subdefs, flat)])

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Plain gradient descent, ``x -= step_size(i) * g``. Mirrors ``optimizers.sgd``."""
    lr = make_schedule(step_size)
    return (lambda x0: x0), (lambda i, g, x: x - lr(i) * g), (lambda x: x)


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: ``v = mass * v + g; x -= step_size(i) * v``. Mirrors ``optimizers.momentum``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - lr(i) * v, v
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: ``v = mass * v + g; x -= step_size(i) * (mass * v + g)``. Mirrors
    ``optimizers.nesterov``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - lr(i) * (mass * v + g), v
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad with momentum: the gradient divided by the root of the summed squares (0 where that sum is
    0), averaged with weight ``momentum``. Mirrors ``optimizers.adagrad``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        scaled = g * jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * scaled + momentum * m
        return x - lr(i) * m, g_sq, m
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: a running mean of squared gradients (decay ``gamma``) normalizes the step. Mirrors
    ``optimizers.rmsprop``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, avg = state
        avg = avg * gamma + jnp.square(g) * (1. - gamma)
        return x - lr(i) * g / jnp.sqrt(avg + eps), avg
    return (lambda x0: (x0, jnp.zeros_like(x0))), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with momentum on the normalized step. Mirrors ``optimizers.rmsprop_momentum``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, avg, mom = state
        avg = avg * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + lr(i) * g / jnp.sqrt(avg + eps)
        return x - mom, avg, mom
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma & Ba): bias-corrected first and second moment estimates, step
    ``step_size(i) * m̂ / (sqrt(v̂) + eps)``; ``i`` counts from 0. Mirrors ``optimizers.adam``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - lr(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm, ``u = max(b2 * u, |g|)``. Mirrors ``optimizers.adamax``."""
    lr = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (lr(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps), m, u
    return (lambda x0: (x0, jnp.zeros_like(x0), jnp.zeros_like(x0))), update, _first


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al., memory-efficient adaptive optimization): one accumulator vector per axis; the
    per-entry accumulator is the minimum of its axes' entries plus ``g²``. Scalars are handled as 1-D.
    Mirrors ``optimizers.sm3``."""
    lr = make_schedule(step_size)

    def along(ndim, v, axis):
        # v (length of axis `axis`) shaped to broadcast against an ndim array
        return jnp.reshape(v, tuple(v.shape[0] if d == axis else 1 for d in range(ndim)))

    def init(x0):
        shape = jnp.shape(x0)
        x0 = jnp.atleast_1d(x0)
        return x0, jnp.zeros_like(x0), [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape], shape

    def update(i, g, state):
        x, m, vs, shape = state
        g = jnp.reshape(g, x.shape)
        acc = functools.reduce(jnp.minimum, [along(x.ndim, v, a) for a, v in enumerate(vs)]) + jnp.square(g)
        m = (1. - momentum) * (g * jnp.where(acc > 0, 1. / jnp.sqrt(acc), 0)) + momentum * m
        x = x - lr(i) * m
        vs = [jnp.max(acc, axis=tuple(d for d in range(x.ndim) if d != a)) for a in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        return jnp.reshape(state[0], state[3])
    return init, update, get_params


# ---- schedules: step -> step size ----

def constant(step_size):
    """The schedule that is always ``step_size``. Mirrors ``optimizers.constant``."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    """``step_size * decay_rate ** (i / decay_steps)``. Mirrors ``optimizers.exponential_decay``."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """``step_size / (1 + decay_rate * i / decay_steps)``, the ratio floored with ``staircase``. Mirrors
    ``optimizers.inverse_time_decay``."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From ``step_size`` to ``final_step_size`` over ``decay_steps`` as ``(1 - i/decay_steps) ** power``,
    then constant. Mirrors ``optimizers.polynomial_decay``."""
    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        return (1 - step_num / decay_steps) ** power * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """``values[k]`` where ``k`` is how many ``boundaries`` the step exceeds; ``values`` has one more entry
    than ``boundaries`` (``ValueError`` otherwise, or when either is not 1-D). Mirrors
    ``optimizers.piecewise_constant``."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    """A schedule from a schedule (kept) or a scalar (constant); anything else raises ``TypeError``.
    Mirrors ``optimizers.make_schedule``."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


def l2_norm(tree):
    """The Euclidean norm of all a pytree's leaves together. Mirrors ``optimizers.l2_norm``."""
    leaves = _tu.tree_leaves(tree)
    return jnp.sqrt(builtins.sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """The gradient tree scaled down so its ``l2_norm`` is at most ``max_norm``. Mirrors
    ``optimizers.clip_grads``."""
    norm = l2_norm(grad_tree)
    return _tu.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where a per-leaf state subtree sits in an unpacked optimizer state (a pytree leaf)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An ``OptimizerState`` as a plain pytree shaped like the parameters, each leaf a ``JoinPoint`` holding
    that parameter's state (for pickling). Mirrors ``optimizers.unpack_optimizer_state``."""
    flat, treedef, subdefs = opt_state
    return _tu.tree_unflatten(treedef, [JoinPoint(_tu.tree_unflatten(d, s)) for d, s in zip(subdefs, flat)])


def pack_optimizer_state(marked_pytree):
    """The inverse of ``unpack_optimizer_state``. Mirrors ``optimizers.pack_optimizer_state``."""
    sentinels, treedef = _tu.tree_flatten(marked_pytree)
    assert all(isinstance(s, JoinPoint) for s in sentinels)
    flat, subdefs = unzip2(_tu.tree_flatten(s.subtree) for s in sentinels)
    return OptimizerState(list(flat), treedef, list(subdefs))
