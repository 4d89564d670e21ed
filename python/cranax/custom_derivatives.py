"""``custom_jvp``, ``custom_vjp``, ``custom_gradient``, ``closure_convert`` and ``linear_call``: functions with
user-defined derivative rules. Mirrors ``jax.custom_derivatives``.

A call runs as JAX runs it, decided by the trace it meets (``_bind_custom_jvp`` / ``_bind_custom_vjp``):

* eager (no transformation): the function itself runs, on concrete values (it may branch on them);
* forward mode (``jvp``, and ``grad``'s linearization): the rule runs with the primal values of the level
  below (concrete outside ``jit``, so ``if x > 0`` works) and the function is not traced; a ``custom_vjp``'s
  ``fwd`` runs and its tangent is a ``custom_lin`` equation whose transpose runs ``bwd``;
* ``vmap``: the function and the rules are batched, and the call goes on one level down (so
  ``grad(vmap(f))`` still uses the rule);
* staging (``jit``, ``make_jaxpr``...): the function is traced into ``call_jaxpr`` and the call binds
  ``custom_jvp_call`` (``jvp_jaxpr_fun``: the rule, as a flat function of primals + tangents) or
  ``custom_vjp_call`` (``fwd``, ``bwd``); their jvp rules call those. Evaluating and lowering inline
  ``call_jaxpr``.

Internally the rules are flat: ``jvp(primals, tangents) -> (primals_out, tangents_out)``, ``fwd(primals,
perturbed) -> (outs, residuals, residual_tree)``, ``bwd(residual_tree, residuals, cts) -> cts_in``; tangents and
cotangents may be symbolic ``ad.Zero``s, which the user-facing wrappers turn into ``SymbolicZero``s or zeros.
"""
import dataclasses
import functools
import inspect

from . import core
from .core import Primitive, Tracer, get_aval, set_current_trace
from .errors import UnexpectedTracerError
from .interpreters import ad, batching
from .interpreters.ad import Zero
from .interpreters.eval import eval_jaxpr
from .interpreters.partial_eval import DynamicJaxprTracer, debug_info, trace_to_jaxpr
from .jaxpr import ClosedJaxpr, Jaxpr
from .primitives.elementwise import stop_gradient
from .primitives import state as _state
from ._pytree import (keystr, register_pytree_node, tree_flatten, tree_flatten_with_path, tree_map,
                        tree_unflatten)

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert", "linear_call", "custom_jvp_call_p",
           "custom_vjp_call_p", "custom_lin_p", "linear_call_p", "remat_opt_p", "SymbolicZero", "zero_from_primal",
           "CustomVJPPrimal", "custom_vjp_primal_tree_values"]


# ----------------------------------------------------------------------------------------------- primitives

class _CallPrimitive(Primitive):
    """A call of ``call_jaxpr`` (a ClosedJaxpr without consts) with extra rule params."""

    operands_reach_user_code = True

    def __init__(self, name):
        super().__init__(name, multiple_results=True)
        self.abstract_eval = lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals)
        self.impl = self._impl

    def _impl(self, *args, call_jaxpr, **_):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)

    @staticmethod
    def inline_jaxpr(eqn):
        return eqn.params["call_jaxpr"], eqn.invars


def _pp_custom_call(eqn, rename):
    """JAX 0.10.2's order for a custom call's params: ``name`` first, then the others sorted by their printed
    name (``rename`` maps a param to it: ``jvp_jaxpr_fun`` prints as ``jvp``), ``num_consts`` only when
    nonzero."""
    params = {rename.get(k, k): v for k, v in eqn.params.items() if k != "name"}
    if not params.get("num_consts"):
        params.pop("num_consts", None)
    return [("name", eqn.params["name"])] + sorted(params.items())


custom_jvp_call_p = _CallPrimitive("custom_jvp_call")
custom_jvp_call_p.pp_params = lambda eqn: _pp_custom_call(eqn, {"jvp_jaxpr_fun": "jvp"})

custom_vjp_call_p = _CallPrimitive("custom_vjp_call")
custom_vjp_call_p.pp_params = lambda eqn: _pp_custom_call(eqn, {})


class SymbolicZero:
    """A zero tangent (cotangent) given to a rule defined with ``symbolic_zeros=True``: ``aval``, ``shape``,
    ``dtype``. Mirrors ``jax.custom_derivatives.SymbolicZero``."""

    def __init__(self, aval):
        self.aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"

    @staticmethod
    def from_primal_value(x):
        return SymbolicZero(get_aval(x).strip_weak_type())


def zero_from_primal(x, symbolic_zeros=False):
    """A zero tangent for each leaf of ``x``: ``SymbolicZero``s, or zero arrays. Mirrors
    ``jax.custom_derivatives.zero_from_primal``."""
    return tree_map(lambda v: SymbolicZero(get_aval(v)) if symbolic_zeros else ad.instantiate_zeros(
        Zero(get_aval(v))), x)


@dataclasses.dataclass
class CustomVJPPrimal:
    """A primal given to a ``custom_vjp`` ``fwd`` rule defined with ``symbolic_zeros=True``: ``value`` and
    ``perturbed`` (False: this input is not differentiated). Mirrors ``jax.custom_derivatives.CustomVJPPrimal``."""

    __slots__ = ("value", "perturbed")
    value: object
    perturbed: bool


def custom_vjp_primal_tree_values(tree):
    """``tree`` with each ``CustomVJPPrimal`` leaf replaced by its ``value`` (TypeError on other leaves).
    Mirrors ``jax.custom_derivatives.custom_vjp_primal_tree_values``."""
    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value
    return tree_map(value, tree)


# ----------------------------------------------------------------------------------------------- argument handling

def _resolve_kwargs(fun, args, kwargs, what):
    if not kwargs:
        return tuple(args)
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"The input arguments to the {what}-decorated function {_name(fun)} could not be resolved "
                        f"to positional-only arguments. Binding failed with the error:\n{e}") from e
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError(f"The input arguments to the {what}-decorated function {_name(fun)} could not be resolved "
                        f"to positional-only arguments (keyword-only parameters {sorted(ba.kwargs)}).")
    return tuple(ba.args)


def _name(f):
    return getattr(f, "__name__", type(f).__name__)


def forward_def_attr(self, name):
    """``__getattr__`` of the custom-rule decorators: a missing ``def...`` attribute is the wrapped function's,
    so decorators stack (``custom_vjp(custom_vmap(f)).def_vmap``), as in JAX; anything else is missing."""
    fun = self.__dict__.get("fun")
    if fun is not None and name.startswith("def"):
        return getattr(fun, name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames):
    nums = set(int(i) for i in nondiff_argnums)
    if nondiff_argnames:
        params = list(inspect.signature(fun).parameters)
        for name in nondiff_argnames:
            if name not in params:
                raise ValueError(f"nondiff_argnames {name!r} is not a parameter of {_name(fun)}")
            nums.add(params.index(name))
    return tuple(sorted(nums))


def _split_args(args, nondiff_argnums):
    """(positions of the non-differentiable args, their values, the differentiable args)."""
    n = len(args)
    nd = tuple(sorted({i % n for i in nondiff_argnums if -n <= i < n}))
    return nd, [args[i] for i in nd], [a for i, a in enumerate(args) if i not in nd]


def _rebuild(n, nd, static, diff):
    full, s, d = [], iter(static), iter(diff)
    for i in range(n):
        full.append(next(s) if i in nd else next(d))
    return full


def _user_tangent(t, symbolic):
    if type(t) is Zero:
        return SymbolicZero(t.aval) if symbolic else ad.instantiate_array(t)
    return ad.instantiate_array(t)


def _out_type_text(tree, leaves):
    return str(tree_unflatten(tree, [get_aval(x).str_short() for x in leaves])).replace("'", "")


# ----------------------------------------------------------------------------------------------- batching helper

def _run_batched(fn, size, axis_name, dims, args):
    """Runs ``fn(list) -> list`` on per-example views of ``args`` (batch axis first where ``dims[i]`` is 0,
    unbatched where None; ``Zero``s pass as per-example ``Zero``s) under a fresh ``BatchTrace`` above the
    current trace. Every output comes back batched with its batch axis first (``Zero`` → batched ``Zero``)."""
    bt = batching.BatchTrace(core._state.trace, size, axis_name)
    ins = []
    for a, d in zip(args, dims):
        if type(a) is Zero:
            ins.append(a if d is None else Zero(a.aval.update(shape=a.aval.shape[1:])))
        else:
            ins.append(a if d is None else batching.BatchTracer(bt, a, 0))
    try:
        with set_current_trace(bt):
            if axis_name is None or core._find_axis(axis_name) is not None:
                outs = fn(ins)
            else:
                with core.extend_axis_env(axis_name, size):
                    outs = fn(ins)
        res = []
        for o in outs:
            if type(o) is Zero:
                res.append(Zero(o.aval.update(shape=(size,) + o.aval.shape)))
            else:
                v, d = bt.to_batch_info(o)
                res.append(batching.bdim_at_front(ad.instantiate_array(v) if d is None else v, d, size))
    finally:
        bt.invalidate()
    return res


def _batch_operands(trace, args):
    """``trace``'s batch info for ``args``, batch axes moved first (on the parent trace)."""
    vals, dims = [], []
    for a in args:
        v, d = trace.to_batch_info(a)
        vals.append(v)
        dims.append(d)
    return vals, dims


def _to_front(vals, dims):
    return ([v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)],
            [None if d is None else 0 for d in dims])


def _unknown_somewhere(trace, args):
    """False when ``trace`` is partial evaluation and every operand is known (the call then runs below)."""
    return any(trace.is_unknown(a) for a in args)


# ----------------------------------------------------------------------------------------------- custom_jvp

def _bind_custom_jvp(fun, jvp, args, symbolic_zeros, name):
    """Applies a custom_jvp function (flat ``fun``, flat ``jvp``) to ``args`` on the current trace."""
    trace = core._state.trace
    if trace is None:
        return list(fun(*args))
    if isinstance(trace, ad.JVPTrace):
        ps, ts = [], []
        for a in args:
            p, t = trace.unpack(a)
            ps.append(p)
            ts.append(t)
        with set_current_trace(trace.parent):
            if all(type(t) is Zero for t in ts):
                return _bind_custom_jvp(fun, jvp, ps, symbolic_zeros, name)
            p_out, t_out = jvp(ps, ts)
        return [trace.wrap(p, t) for p, t in zip(p_out, t_out)]
    if isinstance(trace, batching.BatchTrace):
        vals, dims = _batch_operands(trace, args)
        with set_current_trace(trace.parent_trace):
            if all(d is None for d in dims):
                return _bind_custom_jvp(fun, jvp, vals, symbolic_zeros, name)
            outs = _batch_custom_jvp(trace.axis_size, trace.axis_name, fun, jvp, vals, dims, symbolic_zeros, name)
        return [batching.BatchTracer(trace, o, 0) for o in outs]
    if isinstance(trace, ad.PartialEvalTrace) and not _unknown_somewhere(trace, args):
        with set_current_trace(trace.parent):
            return _bind_custom_jvp(fun, jvp, args, symbolic_zeros, name)
    # Staging: the function becomes call_jaxpr; the rule is kept for when the jaxpr is differentiated.
    call_jaxpr, consts = trace_to_jaxpr(lambda *xs: list(fun(*xs)), [get_aval(a) for a in args]).hoist_consts()
    nconst = len(consts)

    def jvp_jaxpr_fun(*primals_and_tangents):
        k = len(primals_and_tangents) // 2
        p_out, t_out = jvp(list(primals_and_tangents[nconst:k]), list(primals_and_tangents[k + nconst:]))
        return list(p_out) + list(t_out)
    jvp_jaxpr_fun.__name__ = getattr(jvp, "__name__", "jvp")
    return custom_jvp_call_p.bind(*consts, *args, call_jaxpr=call_jaxpr, jvp_jaxpr_fun=jvp_jaxpr_fun,
                                  num_consts=nconst, symbolic_zeros=symbolic_zeros, name=name)


def _batch_custom_jvp(size, axis_name, fun, jvp, vals, dims, symbolic_zeros, name):
    """The batched call, one level down: returns its outputs with their batch axis first."""
    vals, dims = _to_front(vals, dims)

    def bfun(*xs):
        return _run_batched(lambda ins: fun(*ins), size, axis_name, dims, xs)

    def bjvp(ps, ts):
        n = len(ps)
        store = {}

        def both(ins):
            p_out, t_out = jvp(ins[:n], ins[n:])
            store["n"] = len(p_out)
            return list(p_out) + list(t_out)
        outs = _run_batched(both, size, axis_name, dims + dims, list(ps) + list(ts))
        return outs[:store["n"]], outs[store["n"]:]
    bjvp.__name__ = getattr(jvp, "__name__", "jvp")
    return _bind_custom_jvp(bfun, bjvp, vals, symbolic_zeros, name)


def _custom_jvp_call_jvp(primals, tangents, call_jaxpr, jvp_jaxpr_fun, num_consts, symbolic_zeros, name):
    outs = jvp_jaxpr_fun(*primals, *tangents)
    n = len(call_jaxpr.out_avals)
    return list(outs[:n]), list(outs[n:])


def _custom_jvp_call_batch(vals, dims, call_jaxpr, jvp_jaxpr_fun, num_consts, symbolic_zeros, name):
    trace = core._state.batch_rule_trace
    n = len(call_jaxpr.out_avals)

    def fun(*xs):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)

    def jvp(ps, ts):
        outs = jvp_jaxpr_fun(*ps, *ts)
        return outs[:n], outs[n:]
    jvp.__name__ = getattr(jvp_jaxpr_fun, "__name__", "jvp")
    outs = _batch_custom_jvp(trace.axis_size, trace.axis_name, fun, jvp, vals, dims, symbolic_zeros, name)
    return outs, [0] * len(outs)


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
batching.batching_rules[custom_jvp_call_p] = _custom_jvp_call_batch


def _stop_tracer_gradients(x):
    return tree_map(lambda v: stop_gradient(v) if isinstance(v, Tracer) else v, x)


class custom_jvp:
    """A function with a custom jvp rule: ``f = custom_jvp(f); f.defjvp(f_jvp)`` where
    ``f_jvp(primals, tangents) -> (primal_out, tangent_out)`` (tuples of the arguments' pytrees). Under
    ``jvp``/``grad`` the rule runs instead of differentiating ``f`` (outside ``jit`` with concrete primals) and
    ``f`` itself is not evaluated again; ``vmap`` batches both. ``nondiff_argnums``/``nondiff_argnames``
    arguments get no tangent and are passed first to the rule. Errors: ``AttributeError`` when called with no
    rule; ``TypeError`` when the rule's output is not a ``(primal, tangent)`` pair of equal structures and
    matching shapes/dtypes. Mirrors ``jax.custom_jvp``."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.jvp = None
        self.symbolic_zeros = False

    __getattr__ = forward_def_attr

    def defjvp(self, jvp, symbolic_zeros=False):
        """Sets the rule (returns it, so this works as a decorator). ``symbolic_zeros=True``: the tangents of
        inputs that are not differentiated arrive as ``SymbolicZero`` objects, and the rule may return them."""
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns):
        """One function (or None: zero) per argument: ``fn(t, primal_out, *primals) -> tangent contribution``,
        summed. Not usable with ``nondiff_argnums`` (TypeError)."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            ans = self(*primals)
            zeros = tree_map(lambda a: ad.instantiate_array(Zero(get_aval(a))), ans)
            parts = [fn(t, ans, *primals) if fn is not None else zeros for t, fn in zip(tangents, tangent_fns)]
            out = parts[0] if parts else zeros
            for p in parts[1:]:
                out = tree_map(lambda a, b: a + b, out, p)
            return ans, out
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {_name(self.fun)} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        n = len(args)
        nd, static, diff = _split_args(args, self.nondiff_argnums)
        static = [_stop_tracer_gradients(s) for s in static]
        leaves, in_tree = tree_flatten(tuple(diff))
        user_fun, user_jvp, symbolic = self.fun, self.jvp, self.symbolic_zeros
        primal_name, jvp_name = _name(user_fun), _name(user_jvp)
        store = {}

        def flat_fun(*xs):
            out = user_fun(*_rebuild(n, nd, static, tree_unflatten(in_tree, list(xs))))
            flat, store["tree"] = tree_flatten(out)
            store["avals"] = [get_aval(o) for o in flat]
            return flat
        flat_fun.__name__ = primal_name

        def flat_jvp(ps, ts):
            p_args = tree_unflatten(in_tree, list(ps))
            t_args = tree_unflatten(in_tree, [_user_tangent(t, symbolic) for t in ts])
            res = user_jvp(*static, p_args, t_args)
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"Custom JVP rule {jvp_name} for function {primal_name} must produce a pair (list "
                                f"or tuple of length two) representing primal and tangent outputs, but got {res}.")
            po, to = res
            po_l, po_tree = tree_flatten(po)
            to_l, to_tree = tree_flatten(to, is_leaf=lambda v: isinstance(v, SymbolicZero))
            if to_tree != po_tree:
                raise TypeError(f"Custom JVP rule {jvp_name} for function {primal_name} must produce primal and "
                                f"tangent outputs with equal container (pytree) structures, but got {po_tree} and "
                                f"{to_tree} respectively.")
            if "tree" in store and store["tree"] != po_tree:
                raise TypeError(
                    f"Custom JVP rule {jvp_name} for function {primal_name} must produce a pair (list or tuple of "
                    "length two) where the first element represents the primal output (equal in value to the "
                    f"output of the custom_jvp-decorated function {primal_name}, and in particular of the same "
                    "container/pytree structure), but instead the JVP rule output's first element had "
                    f"container/pytree structure:\n    {_out_type_text(po_tree, po_l)}\nwhile the "
                    f"custom_jvp-decorated function {primal_name} had output container/pytree structure:\n"
                    f"    {_out_type_text(store['tree'], store['avals'])}.")
            store.setdefault("tree", po_tree)
            t_out = []
            for p, t in zip(po_l, to_l):
                pa = get_aval(p).strip_weak_type()
                if isinstance(t, SymbolicZero):
                    t_out.append(Zero(pa))
                    continue
                ta = get_aval(t).strip_weak_type()
                if ta.shape != pa.shape or (ad.is_float(pa.dtype) and ta.dtype != pa.dtype):
                    raise TypeError("Custom JVP rule must produce primal and tangent outputs with corresponding "
                                    f"shapes and dtypes. Expected {pa.str_short(False)} (tangent type of "
                                    f"{pa.str_short(False)}) but got {ta.str_short(False)}.")
                t_out.append(t)
            return po_l, t_out
        flat_jvp.__name__ = jvp_name
        outs = _bind_custom_jvp(flat_fun, flat_jvp, leaves, symbolic, primal_name)
        return tree_unflatten(store["tree"], outs)


# ----------------------------------------------------------------------------------------------- custom_vjp

def _custom_lin_abstract(*avals, out_avals, **_):
    return list(out_avals)


custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.operands_reach_user_code = True
custom_lin_p.abstract_eval = _custom_lin_abstract


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p.impl = _custom_lin_impl


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, in_avals, symbolic_zeros):
    cts_in = bwd(list(args[:num_res]), list(cts))
    return [None] * num_res + list(cts_in)


ad.transpose_rules[custom_lin_p] = _custom_lin_transpose
custom_lin_p.pp_params = lambda eqn: [("num_res", eqn.params["num_res"]), ("bwd", eqn.params["bwd"])]


class _LinBwd:
    """``bwd`` for ``custom_lin``: residuals, cts → a cotangent per tangent input."""

    def __init__(self, bwd, res_tree):
        self.bwd = bwd
        self.res_tree = res_tree
        self.__name__ = getattr(bwd, "__name__", "bwd")

    def __call__(self, res, cts):
        return self.bwd(self.res_tree, res, cts)

    def __repr__(self):
        return self.__name__


def _custom_vjp_jvp(fwd, bwd, primals, tangents, symbolic_zeros):
    """Forward mode of a custom_vjp call on the current trace: ``fwd`` runs; the tangents go through a
    ``custom_lin`` whose transpose runs ``bwd``."""
    outs, res, res_tree = fwd(primals, [type(t) is not Zero for t in tangents])
    tans = [ad.instantiate_zeros(t) for t in tangents]
    t_out = custom_lin_p.bind(*res, *tans, num_res=len(res), bwd=_LinBwd(bwd, res_tree),
                              out_avals=tuple(get_aval(o) for o in outs), in_avals=tuple(get_aval(t) for t in tans),
                              symbolic_zeros=symbolic_zeros)
    return list(outs), list(t_out)


def _bind_custom_vjp(fun, fwd, bwd, args, symbolic_zeros, name):
    """Applies a custom_vjp function (flat ``fun``, ``fwd``, ``bwd``) to ``args`` on the current trace."""
    trace = core._state.trace
    if trace is None:
        return list(fun(*args))
    if isinstance(trace, ad.JVPTrace):
        ps, ts = [], []
        for a in args:
            p, t = trace.unpack(a)
            ps.append(p)
            ts.append(t)
        with set_current_trace(trace.parent):
            if all(type(t) is Zero for t in ts):
                return _bind_custom_vjp(fun, fwd, bwd, ps, symbolic_zeros, name)
            p_out, t_out = _custom_vjp_jvp(fwd, bwd, ps, ts, symbolic_zeros)
        return [trace.wrap(p, t) for p, t in zip(p_out, t_out)]
    if isinstance(trace, batching.BatchTrace):
        vals, dims = _batch_operands(trace, args)
        with set_current_trace(trace.parent_trace):
            if all(d is None for d in dims):
                return _bind_custom_vjp(fun, fwd, bwd, vals, symbolic_zeros, name)
            outs = _batch_custom_vjp(trace.axis_size, trace.axis_name, fun, fwd, bwd, vals, dims, symbolic_zeros,
                                     name)
        return [batching.BatchTracer(trace, o, 0) for o in outs]
    if isinstance(trace, ad.PartialEvalTrace) and not _unknown_somewhere(trace, args):
        with set_current_trace(trace.parent):
            return _bind_custom_vjp(fun, fwd, bwd, args, symbolic_zeros, name)
    call_jaxpr, consts = trace_to_jaxpr(lambda *xs: list(fun(*xs)), [get_aval(a) for a in args]).hoist_consts()
    nconst = len(consts)

    def fwd_c(ps, perturbed):
        return fwd(ps[nconst:], perturbed[nconst:])
    fwd_c.__name__ = getattr(fwd, "__name__", "fwd")

    def bwd_c(res_tree, res, cts):
        return [Zero(get_aval(c)) for c in consts] + list(bwd(res_tree, res, cts))
    bwd_c.__name__ = getattr(bwd, "__name__", "bwd")
    return custom_vjp_call_p.bind(*consts, *args, call_jaxpr=call_jaxpr, fwd=fwd_c, bwd=bwd_c, num_consts=nconst,
                                  symbolic_zeros=symbolic_zeros, name=name)


def _batch_custom_vjp(size, axis_name, fun, fwd, bwd, vals, dims, symbolic_zeros, name):
    """The batched call, one level down: outputs and residuals get their batch axis first; the batched
    ``bwd`` sums the cotangents of unbatched inputs over the batch."""
    vals, dims = _to_front(vals, dims)

    def bfun(*xs):
        return _run_batched(lambda ins: fun(*ins), size, axis_name, dims, xs)

    def bfwd(ps, perturbed):
        store = {}

        def run(ins):
            outs, res, store["res_tree"] = fwd(ins, perturbed)
            store["n"] = len(outs)
            return list(outs) + list(res)
        both = _run_batched(run, size, axis_name, dims, list(ps))
        return both[:store["n"]], both[store["n"]:], store["res_tree"]
    bfwd.__name__ = getattr(fwd, "__name__", "fwd")

    def bbwd(res_tree, res, cts):
        outs = _run_batched(lambda ins: bwd(res_tree, ins[:len(res)], ins[len(res):]), size, axis_name,
                            [0] * (len(res) + len(cts)), list(res) + list(cts))
        fixed = []
        for c, d in zip(outs, dims):
            if d is None:   # an unbatched input: its cotangent is the sum over the batch
                c = Zero(c.aval.update(shape=c.aval.shape[1:])) if type(c) is Zero else \
                    ad.hooks["reduce_sum"](c, (0,))
            fixed.append(c)
        return fixed
    bbwd.__name__ = getattr(bwd, "__name__", "bwd")
    return _bind_custom_vjp(bfun, bfwd, bbwd, vals, symbolic_zeros, name)


def _custom_vjp_call_jvp(primals, tangents, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name):
    return _custom_vjp_jvp(fwd, bwd, list(primals), list(tangents), symbolic_zeros)


def _custom_vjp_call_batch(vals, dims, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name):
    trace = core._state.batch_rule_trace

    def fun(*xs):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)
    outs = _batch_custom_vjp(trace.axis_size, trace.axis_name, fun, fwd, bwd, vals, dims, symbolic_zeros, name)
    return outs, [0] * len(outs)


ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
batching.batching_rules[custom_vjp_call_p] = _custom_vjp_call_batch


# ----------------------------------------------------------------------------------------------- remat_opt_p

def _memoize(thunk):
    """``thunk`` run once, its result kept (JAX's ``pe._memoize``; the name shows in printed jaxprs)."""
    box = []

    def memoized():
        if not box:
            box.append(thunk())
        return box[0]
    return memoized


def _with_constvars(closed, consts):
    """``(jaxpr, consts)`` (the thunk's form, as JAX's) from a const-free ClosedJaxpr taking ``consts`` first."""
    j = closed.jaxpr
    n = len(consts)
    return Jaxpr(list(j.invars[:n]), list(j.invars[n:]), j.outvars, j.eqns), list(consts)


class _Repr:
    """Prints a function param as JAX does, by its repr (the printer masks the address)."""

    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f

    def __str__(self):
        return repr(self.f)


class _RematOptPrimitive(Primitive):
    """``remat_opt *consts *args [fun_jaxpr_thunk fwd_jaxpr num_consts num_res]``: a ``custom_vjp`` fwd rule
    defined with ``optimize_remat=True``, traced to ``fwd_jaxpr`` (a ClosedJaxpr without consts taking the
    consts then the primal inputs, returning ``num_res`` residuals then the primal outputs); ``fun_jaxpr_thunk()``
    gives ``(jaxpr, consts)`` of the primal function. Evaluation and lowering run ``fwd_jaxpr`` (the core's
    dead-code elimination drops residuals a ``checkpoint`` does not keep); jvp and vmap derive a new
    ``remat_opt``; transposing one (higher-order AD) is NotImplementedError, as in JAX. Mirrors
    ``jax.custom_derivatives.remat_opt_p``."""

    def __init__(self):
        super().__init__("remat_opt", multiple_results=True)
        self.abstract_eval = lambda *avals, fwd_jaxpr, **_: list(fwd_jaxpr.out_avals)
        self.impl = self._impl

    @staticmethod
    def _impl(*args, fwd_jaxpr, **_):
        return eval_jaxpr(fwd_jaxpr.jaxpr, fwd_jaxpr.consts, *args)

    @staticmethod
    def inline_jaxpr(eqn):
        return eqn.params["fwd_jaxpr"], eqn.invars

    @staticmethod
    def pp_params(eqn):
        p = eqn.params
        return [("fun_jaxpr_thunk", _Repr(p["fun_jaxpr_thunk"])), ("fwd_jaxpr", p["fwd_jaxpr"]),
                ("num_consts", p["num_consts"]), ("num_res", p["num_res"])]


remat_opt_p = _RematOptPrimitive()


def _remat_opt_jvp(primals, tangents, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
    n_out = len(fwd_jaxpr.out_avals)
    nonzeros = [type(t) is not Zero for t in tangents[:num_consts]] + [True] * (len(tangents) - num_consts)
    jj, consts, out_nz = ad.jvp_jaxpr(fwd_jaxpr, nonzeros, instantiate=[True] * n_out)
    tans = [ad.instantiate_zeros(t) for t, z in zip(tangents, nonzeros) if z]

    def fun_jvp_thunk():
        jaxpr, fconsts = fun_jaxpr_thunk()
        fj, fc, _ = ad.jvp_jaxpr(ClosedJaxpr(jaxpr, list(fconsts)), [True] * len(jaxpr.invars))
        return _with_constvars(fj, fc)
    # The jvp jaxpr returns primal outputs then tangents; its residual part is the primal residuals.
    outs = remat_opt_p.bind(*consts, *primals, *tans, num_consts=len(consts) + num_consts, num_res=num_res,
                            fwd_jaxpr=jj, fun_jaxpr_thunk=_memoize(fun_jvp_thunk))
    t_out = iter(outs[n_out:])
    return outs[:n_out], [next(t_out) if nz else Zero(a) for nz, a in zip(out_nz, fwd_jaxpr.out_avals)]


def _remat_opt_transpose(cts, *args, **params):
    raise NotImplementedError("remat optimization for custom_vjp does not support higher-order AD")


def _remat_opt_batch(vals, dims, num_consts, num_res, fwd_jaxpr, fun_jaxpr_thunk):
    size = batching.axis_size_of(vals, dims)
    moved = [v if d is batching.not_mapped else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [d if d is batching.not_mapped else 0 for d in dims]
    new, consts, out_dims = batching.batch_jaxpr(fwd_jaxpr, size, in_dims)

    def batched_fun_thunk():
        jaxpr, fconsts = fun_jaxpr_thunk()
        bj, bc, _ = batching.batch_jaxpr(ClosedJaxpr(jaxpr, list(fconsts)), size, in_dims[num_consts:])
        return _with_constvars(bj, bc)
    outs = remat_opt_p.bind(*consts, *moved, num_consts=len(consts) + num_consts, num_res=num_res, fwd_jaxpr=new,
                            fun_jaxpr_thunk=_memoize(batched_fun_thunk))
    return outs, out_dims


ad.jvp_rules[remat_opt_p] = _remat_opt_jvp
ad.transpose_rules[remat_opt_p] = _remat_opt_transpose
batching.batching_rules[remat_opt_p] = _remat_opt_batch


def _remat_opt_fwd(flat_fun, flat_fwd, user_fwd):
    """``flat_fwd`` (a custom_vjp's flat fwd rule) staged as one ``remat_opt`` equation, as JAX's
    ``optimize_remat_of_custom_vjp_fwd`` does: the rule is traced (not run on concrete values, even outside
    ``jit``) and its residuals are outputs of that equation."""
    def fwd(ps, perturbed):
        avals = [get_aval(p) for p in ps]
        store = {}

        def traced(*xs):
            outs, res, store["res_tree"] = flat_fwd(list(xs), perturbed)
            store["n_out"] = len(outs)
            return list(res) + list(outs)
        closed = trace_to_jaxpr(traced, avals, debug_info(user_fwd, "custom_vjp fwd", None))
        fwd_jaxpr, consts = closed.hoist_consts()
        num_res = len(fwd_jaxpr.out_avals) - store["n_out"]

        def fun_thunk():
            fj = trace_to_jaxpr(lambda *xs: list(flat_fun(*xs)), avals)
            return fj.jaxpr, list(fj.consts)
        outs = remat_opt_p.bind(*consts, *ps, num_consts=len(consts), num_res=num_res, fwd_jaxpr=fwd_jaxpr,
                                fun_jaxpr_thunk=_memoize(fun_thunk))
        return list(outs[num_res:]), list(outs[:num_res]), store["res_tree"]
    fwd.__name__ = getattr(flat_fwd, "__name__", "fwd")
    return fwd


_NONDIFF_TRACER = (
    "Found a JAX Tracer object passed as an argument to a custom_vjp function in a position indicated by "
    "nondiff_argnums as non-differentiable. Tracers cannot be passed as non-differentiable arguments to "
    "custom_vjp functions; instead, nondiff_argnums should only be used for arguments that can't be or contain "
    "JAX tracers, e.g. function-valued arguments. In particular, array-valued arguments should typically not be "
    "indicated as nondiff_argnums.")


class custom_vjp:
    """A function with a custom vjp: ``f.defvjp(fwd, bwd)``; ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, ct_out) -> tuple of cts``, one per differentiable argument (``None``: zero).
    ``nondiff_argnums``/``nondiff_argnames`` arguments (not tracers: ``UnexpectedTracerError``) are passed first
    to ``bwd``. Under ``grad``/``vjp`` ``fwd`` runs (outside ``jit`` on concrete values) instead of the function;
    ``jvp`` raises ``TypeError``. Mirrors ``jax.custom_vjp``."""

    def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
        self.fwd = None
        self.bwd = None
        self.symbolic_zeros = False
        self.optimize_remat = False

    __getattr__ = forward_def_attr

    def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
        """Sets the rules. ``symbolic_zeros=True``: ``fwd`` gets a ``CustomVJPPrimal(value, perturbed)`` per
        leaf and ``bwd`` gets ``SymbolicZero`` for zero output cotangents. ``optimize_remat=True``: ``fwd``
        is traced into one ``remat_opt`` equation (``remat_opt_p``), as in JAX."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = symbolic_zeros
        self.optimize_remat = optimize_remat
        if symbolic_zeros and optimize_remat:
            raise NotImplementedError("remat optimization for custom_vjp does not support symbolic zeros")

    def __call__(self, *args, **kwargs):
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {_name(self.fun)} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        n = len(args)
        nd, static, diff = _split_args(args, self.nondiff_argnums)
        for s in static:
            if any(isinstance(v, Tracer) for v in tree_flatten(s)[0]):
                raise UnexpectedTracerError(_NONDIFF_TRACER)
        leaves, in_tree = tree_flatten(tuple(diff))
        # array references passed in (plumbing refs, JAX's stash_grads recipe) reach fun, fwd and bwd as they
        # are: not differentiated, no cotangent
        refs = {i: v for i, v in enumerate(leaves) if isinstance(v, _state.Ref)} if _state.any_refs() else {}
        if refs:
            ref_avals = {i: r._ref_aval().inner_aval for i, r in refs.items()}
            leaves = [v for i, v in enumerate(leaves) if i not in refs]

        def unflatten(xs):
            if refs:
                it = iter(xs)
                xs = [refs[i] if i in refs else next(it) for i in range(in_tree.num_leaves)]
            return tree_unflatten(in_tree, list(xs))
        in_avals = [get_aval(x) for x in leaves]
        user_fun, user_fwd, user_bwd, symbolic = self.fun, self.fwd, self.bwd, self.symbolic_zeros
        primal_name, fwd_name = _name(user_fun), _name(user_fwd)
        store = {}

        def flat_fun(*xs):
            out = user_fun(*_rebuild(n, nd, static, unflatten(xs)))
            flat, store["tree"] = tree_flatten(out)
            store["avals"] = [get_aval(o) for o in flat]
            return flat
        flat_fun.__name__ = primal_name

        def flat_fwd(ps, perturbed):
            xs = [CustomVJPPrimal(p, z) for p, z in zip(ps, perturbed)] if symbolic else list(ps)
            pair = user_fwd(*_rebuild(n, nd, static, unflatten(xs)))
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {primal_name} must produce a pair (list or tuple "
                    "of length two) where the first element represents the primal output (equal to those of the "
                    f"custom_vjp-decorated function {primal_name}) and the second element represents residuals "
                    "(i.e. values stored from the forward pass for use on the backward pass), but instead of a "
                    f"pair the fwd rule {fwd_name} produced {pair}.")
            out, res = pair
            outs, o_tree = tree_flatten(out)
            if "tree" in store and store["tree"] != o_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {fwd_name} for function {primal_name} must produce a pair (list or tuple "
                    "of length two) where the first element represents the primal output (equal to the output of "
                    f"the custom_vjp-decorated function {primal_name}) and the second element represents residuals "
                    "(i.e. values stored from the forward pass for use on the backward pass), but instead the fwd "
                    f"rule output's first element had container/pytree structure:\n    "
                    f"{_out_type_text(o_tree, outs)}\nwhile the custom_vjp-decorated function {primal_name} had "
                    f"output container/pytree structure:\n    {_out_type_text(store['tree'], store['avals'])}.")
            store.setdefault("tree", o_tree)
            res_l, res_tree = _ResTree.split(res)
            return outs, res_l, res_tree
        flat_fwd.__name__ = fwd_name

        def flat_bwd(res_tree, res, cts):
            py_res = res_tree.unflatten([ad.instantiate_array(r) for r in res])
            py_ct = tree_unflatten(store["tree"], [_user_tangent(c, symbolic) for c in cts])
            cts_in = user_bwd(*static, py_res, py_ct)
            if not refs:
                return _flatten_bwd_out(cts_in, diff, in_tree, in_avals)
            it = iter(in_avals)
            full = [ref_avals[i] if i in refs else next(it) for i in range(in_tree.num_leaves)]
            cts = _flatten_bwd_out(cts_in, diff, in_tree, full)
            return [c for i, c in enumerate(cts) if i not in refs]
        flat_bwd.__name__ = _name(user_bwd)
        if self.optimize_remat:
            flat_fwd = _remat_opt_fwd(flat_fun, flat_fwd, user_fwd)
        outs = _bind_custom_vjp(flat_fun, flat_fwd, flat_bwd, leaves, symbolic, primal_name)
        return tree_unflatten(store["tree"], outs)


class _ResTree:
    """A custom_vjp fwd rule's residual structure: its treedef and the Python scalar leaves kept out of the
    traced residuals, which reach ``bwd`` as they were, not as arrays (as in JAX, whose fwd rule runs
    eagerly under jvp: equinox's filter_custom_vjp keeps Python bools there and ``equinox.partition`` on them
    needs bools)."""

    def __init__(self, treedef, static):
        self.treedef, self.static = treedef, static

    @classmethod
    def split(cls, res):
        leaves, treedef = tree_flatten(res)
        static = {i: v for i, v in enumerate(leaves)
                  if type(v) in (bool, int, float, complex) or isinstance(v, _state.Ref)}
        return [v for i, v in enumerate(leaves) if i not in static], cls(treedef, static)

    def unflatten(self, dynamic):
        it = iter(dynamic)
        leaves = [self.static[i] if i in self.static else next(it) for i in range(self.treedef.num_leaves)]
        return tree_unflatten(self.treedef, leaves)


def _flatten_bwd_out(cts_in, diff, in_tree, in_avals):
    """A bwd rule's output (a tuple with one entry per differentiable argument; None entries/leaves are zeros)
    flattened to one cotangent (or Zero) per input leaf, with JAX's checks."""
    if isinstance(cts_in, list) and len(cts_in) == len(diff):
        cts_in = tuple(cts_in)
    bad = not isinstance(cts_in, tuple) or len(cts_in) != len(diff)
    flat = []
    if not bad:
        for c, d in zip(cts_in, diff):
            n_leaves = len(tree_flatten(d)[0])
            if c is None:
                flat.extend([None] * n_leaves)
                continue
            c_leaves, c_tree = tree_flatten(c, is_leaf=lambda v: v is None or isinstance(v, SymbolicZero))
            # None is a leaf on both sides: where the primal has a None (no leaf), the cotangent's None (or
            # anything) stands for nothing (JAX maps the cts over the primal with None as a leaf).
            d_slots, d_tree_none = tree_flatten(d, is_leaf=lambda v: v is None)
            if c_tree == d_tree_none:
                flat.extend(cl for cl, x in zip(c_leaves, d_slots) if x is not None)
                continue
            d_tree = tree_flatten(d)[1]
            if len(c_leaves) != n_leaves or (c_tree != d_tree and not any(v is None for v in c_leaves)):
                bad = True
                break
            flat.extend(c_leaves)
    if bad:
        raise TypeError("Custom VJP bwd rule must produce an output with the same container (pytree) structure as "
                        "the args tuple of the primal function, and in particular must produce a tuple of length "
                        "equal to the number of arguments to the primal function, but got bwd output structure "
                        f"{tree_flatten(cts_in)[1]} for primal input structure {in_tree}.")
    paths = [keystr(p) for p, _ in tree_flatten_with_path(tree_unflatten(in_tree, list(range(len(in_avals)))))[0]]
    out = []
    for path, a, c in zip(paths, in_avals, flat):
        if c is None:
            out.append(Zero(a))
        elif isinstance(c, SymbolicZero):
            if c.aval.shape != a.shape:
                raise ValueError("Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not match "
                                 "the corresponding input tangent shape/dtype: at output"
                                 f"{path} the SymbolicZero had shape/dtype {c.aval.str_short(False)} while the "
                                 f"corresponding input had shape/dtype {a.str_short(False)}. Consider just returning a "
                                 "None here instead of a SymbolicZero object.")
            out.append(Zero(a))
        else:
            ca = get_aval(c)
            if ca.shape != a.shape:
                raise ValueError("Custom VJP bwd rule must produce an output with the same type as the args tuple "
                                 f"of the primal function, but at output{path} the bwd rule produced an output of "
                                 f"type {ca.str_short(False)} corresponding to an input of type "
                                 f"{a.str_short(False)}, so the shapes do not match")
            out.append(c)
    return out


# ----------------------------------------------------------------------------------------------- custom_gradient
# (issue 19: tensorflow-probability's JAX substrate, used by distrax, builds its gradients with it)

class _GradRule:
    """The residual of ``custom_gradient``: the traced gradient rule (static) and its constants (leaves)."""

    def __init__(self, jaxpr, consts, in_tree):
        self.jaxpr, self.consts, self.in_tree = jaxpr, consts, in_tree


def _grad_rule_flatten(r):
    return list(r.consts), (r.jaxpr, r.in_tree)


def _grad_rule_unflatten(aux, consts):
    return _GradRule(aux[0], list(consts), aux[1])


register_pytree_node(_GradRule, _grad_rule_flatten, _grad_rule_unflatten)


def custom_gradient(fun):
    """``fun(*args)`` returns ``(out, vjp)``, ``vjp(ct) -> ct for each of args``: the function giving ``out``
    with ``vjp`` as its reverse-mode derivative. Mirrors ``jax.custom_gradient``."""
    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        out, rule = fun(*args)
        out_flat, out_tree = tree_flatten(out)
        store = {}

        def flat_rule(*cts):
            res = rule(tree_unflatten(out_tree, list(cts)))
            res_flat, store["in_tree"] = tree_flatten(res if isinstance(res, tuple) else (res,))
            return res_flat
        closed = trace_to_jaxpr(flat_rule, [get_aval(o) for o in out_flat])
        return out, _GradRule(closed.jaxpr, closed.consts, store["in_tree"])

    def bwd(res, ct):
        cts = eval_jaxpr(res.jaxpr, res.consts, *tree_flatten(ct)[0])
        return tuple(tree_unflatten(res.in_tree, cts))

    wrapped.defvjp(fwd, bwd)
    return wrapped


# ----------------------------------------------------------------------------------------------- closure_convert

def _maybe_perturbed(x):
    """False when ``x`` cannot carry a non-zero tangent (a concrete value, or a staged non-float value)."""
    if not isinstance(x, Tracer):
        return False
    if isinstance(x, DynamicJaxprTracer):
        return ad.is_float(x.aval.dtype)
    if isinstance(x, batching.BatchTracer):
        return _maybe_perturbed(x.val)
    return True


def closure_convert(fun, *example_args):
    """``(converted, hoisted)``: ``converted(*args, *hoisted)`` computes ``fun(*args)`` with the values ``fun``
    closes over that may be differentiated (tracers of an enclosing transformation) passed explicitly, so a
    ``custom_vjp``/``custom_jvp`` taking ``converted`` as a non-differentiable argument can differentiate them.
    ``fun`` is traced for ``example_args``' shapes/dtypes; ``converted`` raises TypeError for arguments of
    another pytree structure. Mirrors ``jax.closure_convert``."""
    flat, in_tree = tree_flatten(example_args)
    store = {}

    def flat_fun(*xs):
        out, store["tree"] = tree_flatten(fun(*tree_unflatten(in_tree, list(xs))))
        return out
    closed = trace_to_jaxpr(flat_fun, [get_aval(x) for x in flat])
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    out_tree = store["tree"]
    hoist = [_maybe_perturbed(c) for c in consts]
    kept = [c for c, h in zip(consts, hoist) if not h]
    hoisted = [c for c, h in zip(consts, hoist) if h]

    def converted_fun(*args_and_hoisted):
        args = args_and_hoisted[:len(args_and_hoisted) - len(hoisted)]
        hv = iter(args_and_hoisted[len(args):])
        kv = iter(kept)
        all_consts = [next(hv) if h else next(kv) for h in hoist]
        leaves, tree2 = tree_flatten(tuple(args))
        if tree2 != in_tree:
            raise TypeError("The inputs to the closure produced by closure_convert must have the same Pytree "
                            "structure as the example arguments passed when closure_convert was called. Expected "
                            f"{in_tree}, but got {tree2}")
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, all_consts, *leaves))
    converted_fun.__name__ = _name(fun)
    return converted_fun, hoisted


# ----------------------------------------------------------------------------------------------- linear_call

linear_call_p = Primitive("linear_call", multiple_results=True)
linear_call_p.abstract_eval = lambda *avals, callee, **_: list(callee.out_avals)
linear_call_p.impl = lambda *args, callee, **_: eval_jaxpr(callee.jaxpr, callee.consts, *args)
linear_call_p.inline_jaxpr = staticmethod(lambda eqn: (eqn.params["callee"], eqn.invars))


def _linear_call_jvp(primals, tangents, callee, transpose_thunk, num_callee_consts, num_res):
    k = num_callee_consts + num_res
    params = dict(callee=callee, transpose_thunk=transpose_thunk, num_callee_consts=num_callee_consts,
                  num_res=num_res)
    p_out = linear_call_p.bind(*primals, **params)
    lin = [ad.instantiate_zeros(t) for t in tangents[k:]]
    t_out = linear_call_p.bind(*primals[:k], *lin, **params)
    return p_out, t_out


def _linear_call_transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    transpose, t_consts = transpose_thunk()
    f_consts = args[:num_callee_consts]
    res = args[num_callee_consts:num_callee_consts + num_res]
    cts = [ad.instantiate_zeros(c) for c in cts]
    cts_out = linear_call_p.bind(*t_consts, *res, *cts, callee=transpose,
                                 transpose_thunk=lambda: (callee, list(f_consts)),
                                 num_callee_consts=len(t_consts), num_res=num_res)
    return [None] * (num_callee_consts + num_res) + list(cts_out)


def _linear_call_batch(vals, dims, callee, transpose_thunk, num_callee_consts, num_res):
    """Batches the callee and (lazily) its transpose; the linear operands are all given a batch axis so that
    the transpose's outputs (all batched) match them."""
    size = batching.axis_size_of(vals, dims)
    k = num_callee_consts + num_res
    vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    dims = [None if d is None else 0 for d in dims]
    lin = [batching.bdim_at_front(v, d, size) for v, d in zip(vals[k:], dims[k:])]
    in_dims = dims[:k] + [0] * len(lin)
    new, consts, _ = batching.batch_jaxpr(callee, size, in_dims, [True] * len(callee.out_avals))
    res_dims = dims[num_callee_consts:k]

    def batched_transpose():
        transpose, t_consts = transpose_thunk()
        t_in = [None] * len(t_consts) + res_dims + [0] * (len(transpose.in_avals) - len(t_consts) - num_res)
        t_new, t_c, _ = batching.batch_jaxpr(transpose, size, t_in, [True] * len(transpose.out_avals))
        return t_new, list(t_c) + list(t_consts)
    outs = linear_call_p.bind(*consts, *vals[:k], *lin, callee=new, transpose_thunk=batched_transpose,
                              num_callee_consts=len(consts) + num_callee_consts, num_res=num_res)
    return outs, [0] * len(outs)


ad.jvp_rules[linear_call_p] = _linear_call_jvp
ad.transpose_rules[linear_call_p] = _linear_call_transpose
batching.batching_rules[linear_call_p] = _linear_call_batch


def linear_call(fun, fun_transpose, residual_args, linear_args):
    """``fun(residual_args, linear_args)``, a function linear in ``linear_args``, whose transpose (under
    ``linear_transpose``/``grad``) is ``fun_transpose(residual_args, ct)`` (and whose transpose's transpose is
    ``fun`` again). TypeError when ``fun_transpose``'s output structure differs from ``linear_args``'. Mirrors
    ``jax.custom_derivatives.linear_call``."""
    res_l, res_tree = tree_flatten(residual_args)
    lin_l, lin_tree = tree_flatten(linear_args)
    store = {}

    def f_flat(*xs):
        out = fun(tree_unflatten(res_tree, list(xs[:len(res_l)])), tree_unflatten(lin_tree, list(xs[len(res_l):])))
        flat, store["out_tree"] = tree_flatten(out)
        return flat
    res_avals = [get_aval(x) for x in res_l]
    f_jaxpr, f_consts = trace_to_jaxpr(f_flat, res_avals + [get_aval(x) for x in lin_l]).hoist_consts()
    out_tree = store["out_tree"]
    out_avals = list(f_jaxpr.out_avals)
    cache = {}

    def transpose_thunk():
        if "t" not in cache:
            def t_flat(*xs):
                out = fun_transpose(tree_unflatten(res_tree, list(xs[:len(res_l)])),
                                    tree_unflatten(out_tree, list(xs[len(res_l):])))
                flat, t_tree = tree_flatten(out)
                if t_tree != lin_tree:
                    raise TypeError("transpose output pytree structure must match that of linear inputs, got "
                                    f"output structure {t_tree} and input structure {lin_tree}.")
                return flat
            cache["t"] = trace_to_jaxpr(t_flat, res_avals + out_avals).hoist_consts()
        t_jaxpr, t_consts = cache["t"]
        return t_jaxpr, list(t_consts)
    outs = linear_call_p.bind(*f_consts, *res_l, *lin_l, callee=f_jaxpr, transpose_thunk=transpose_thunk,
                              num_callee_consts=len(f_consts), num_res=len(res_l))
    return tree_unflatten(out_tree, outs)
