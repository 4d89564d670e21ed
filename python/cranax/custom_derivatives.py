"""``custom_jvp`` and ``custom_vjp``: functions with user-defined derivative rules. Mirrors
``jax.custom_jvp`` / ``jax.custom_vjp``.

A call binds ``custom_jvp_call`` (params: ``call_jaxpr``, the primal function traced for the arguments'
avals, and ``jvp_jaxpr_fun``, a Python function of primals + tangents) or ``custom_vjp_call`` (``call_jaxpr``,
``fwd``, ``bwd``). Evaluating, staging, batching and lowering use ``call_jaxpr`` (lowering inlines it); the
jvp rule calls the user's rule. Under reverse mode a ``custom_vjp`` function's tangent is a ``custom_lin``
equation whose transpose runs ``bwd``.
"""
import functools

from .core import Primitive, get_aval
from .interpreters import ad, batching
from .interpreters.ad import Zero
from .interpreters.eval import eval_jaxpr
from .interpreters.partial_eval import trace_to_jaxpr
from .tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = ["custom_jvp", "custom_vjp", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p",
           "SymbolicZero", "zero_from_primal"]


# ----------------------------------------------------------------------------------------------- primitives

class _CallPrimitive(Primitive):
    """A call of ``call_jaxpr`` (a ClosedJaxpr without consts) with extra rule params."""

    def __init__(self, name):
        super().__init__(name, multiple_results=True)
        self.abstract_eval = lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals)
        self.impl = self._impl

    def _impl(self, *args, call_jaxpr, **_):
        return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)

    @staticmethod
    def inline_jaxpr(eqn):
        return eqn.params["call_jaxpr"], eqn.invars


custom_jvp_call_p = _CallPrimitive("custom_jvp_call")
custom_jvp_call_p.pp_params = lambda eqn: [
    ("name", eqn.params["name"]), ("call_jaxpr", eqn.params["call_jaxpr"]),
    ("jvp_jaxpr_fun", eqn.params["jvp_jaxpr_fun"]), ("num_consts", eqn.params["num_consts"]),
    ("symbolic_zeros", eqn.params["symbolic_zeros"])]

custom_vjp_call_p = _CallPrimitive("custom_vjp_call")
custom_vjp_call_p.pp_params = lambda eqn: [
    ("name", eqn.params["name"]), ("call_jaxpr", eqn.params["call_jaxpr"]), ("fwd", eqn.params["fwd"]),
    ("bwd", eqn.params["bwd"]), ("num_consts", eqn.params["num_consts"]),
    ("symbolic_zeros", eqn.params["symbolic_zeros"])]


def _trace_call(flat_fun, avals):
    return trace_to_jaxpr(flat_fun, avals).hoist_consts()


class SymbolicZero:
    """A zero tangent passed to a ``custom_jvp`` rule defined with ``symbolic_zeros=True``."""

    def __init__(self, aval):
        self.aval = aval
        self.shape = aval.shape
        self.dtype = aval.dtype

    def __repr__(self):
        return f"SymbolicZero({self.aval.str_short()})"


def zero_from_primal(x, symbolic_zeros=False):
    return tree_map(lambda v: SymbolicZero(get_aval(v)) if symbolic_zeros else ad.instantiate_zeros(
        Zero(get_aval(v))), x)


# ----------------------------------------------------------------------------------------------- custom_jvp

def _trace_primal(fun, nondiff_argnums, args, kwargs):
    """Binds keyword arguments to positions, splits off the non-differentiable ones and traces ``fun`` on the
    rest (flattened). Returns ``(n, nd, static, kwargs, leaves, in_tree, call_jaxpr, consts, out_tree)``."""
    if kwargs:
        import inspect
        ba = inspect.signature(fun).bind(*args, **kwargs)
        ba.apply_defaults()
        args, kwargs = ba.args, ba.kwargs
    n = len(args)
    nd, static, diff = _resolve_nondiff(args, nondiff_argnums)
    leaves, in_tree = tree_flatten(tuple(diff))
    store = {}

    def flat_fun(*xs):
        out = fun(*_rebuild(n, nd, static, tree_unflatten(in_tree, list(xs))), **kwargs)
        outs, store["tree"] = tree_flatten(out)
        return outs
    call_jaxpr, consts = _trace_call(flat_fun, [get_aval(x) for x in leaves])
    return n, nd, static, kwargs, leaves, in_tree, call_jaxpr, consts, store["tree"]


def _resolve_nondiff(args, nondiff_argnums):
    nd = tuple(sorted(i % len(args) for i in nondiff_argnums)) if args else tuple(nondiff_argnums)
    diff = [a for i, a in enumerate(args) if i not in nd]
    static = [args[i] for i in nd]
    return nd, static, diff


def _rebuild(n, nd, static, diff):
    full, s, d = [], iter(static), iter(diff)
    for i in range(n):
        full.append(next(s) if i in nd else next(d))
    return full


class custom_jvp:
    """A function with a custom jvp rule: ``f = custom_jvp(f); f.defjvp(f_jvp)`` where
    ``f_jvp(primals, tangents) -> (primal_out, tangent_out)``. ``nondiff_argnums`` arguments are passed
    first to the rule and get no tangent. Mirrors ``jax.custom_jvp``."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp = None
        self.symbolic_zeros = False

    def defjvp(self, jvp, symbolic_zeros=False):
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *tangent_fns):
        """One function per argument: ``fn(g, primal_out, *primals) -> tangent contribution``."""
        if self.nondiff_argnums:
            raise TypeError("Can't use custom_jvp.defjvps with nondiff_argnums.")

        def jvp(primals, tangents):
            ans = self(*primals)
            t_out = None
            for fn, t in zip(tangent_fns, tangents):
                if fn is None:
                    continue
                c = fn(t, ans, *primals)
                t_out = c if t_out is None else tree_map(lambda a, b: a + b, t_out, c)
            return ans, (t_out if t_out is not None else tree_map(lambda a: a * 0, ans))
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs):
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {self.__name__} using defjvp.")
        n, nd, static, kwargs, leaves, in_tree, call_jaxpr, consts, out_tree = _trace_primal(
            self.fun, self.nondiff_argnums, args, kwargs)
        out_avals = call_jaxpr.out_avals
        user_jvp, symbolic = self.jvp, self.symbolic_zeros
        nconst = len(consts)

        def jvp_fun(*primals_and_tangents):
            k = len(primals_and_tangents) // 2
            ps = list(primals_and_tangents[nconst:k])
            ts = list(primals_and_tangents[k + nconst:])
            ts = [(SymbolicZero(t.aval) if symbolic else ad.instantiate_array(t)) if type(t) is Zero
                  else ad.instantiate_array(t) for t in ts]
            p_args = tree_unflatten(in_tree, ps)
            t_args = tree_unflatten(in_tree, ts)
            res = user_jvp(*static, tuple(p_args), tuple(t_args)) if nd else user_jvp(tuple(p_args), tuple(t_args))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"Custom JVP rule {getattr(user_jvp, '__name__', user_jvp)} must return a pair "
                                f"(primal_out, tangent_out), got {type(res).__name__}.")
            po, to = res
            po_l, po_tree = tree_flatten(po)
            to_l, to_tree = tree_flatten(to)
            if po_tree != out_tree:
                raise TypeError(f"Custom JVP rule must produce primal outputs with the same container (pytree) "
                                f"structure as the function: expected {out_tree}, got {po_tree}.")
            if to_tree != po_tree:
                raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with equal container "
                                f"(pytree) structures, but got {po_tree} and {to_tree} respectively.")
            to_l = [Zero(a) if isinstance(t, SymbolicZero) else t for t, a in zip(to_l, out_avals)]
            return po_l + to_l
        jvp_fun.__name__ = getattr(user_jvp, "__name__", "jvp")
        outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr, jvp_jaxpr_fun=jvp_fun,
                                      num_consts=nconst, symbolic_zeros=symbolic,
                                      name=getattr(self.fun, "__name__", "custom_jvp"))
        return tree_unflatten(out_tree, outs)


def _custom_jvp_call_jvp(primals, tangents, call_jaxpr, jvp_jaxpr_fun, num_consts, symbolic_zeros, name):
    outs = jvp_jaxpr_fun(*primals, *tangents)
    n = len(call_jaxpr.out_avals)
    p_out, t_out = list(outs[:n]), list(outs[n:])
    fixed = []
    for t, a in zip(t_out, call_jaxpr.out_avals):
        if type(t) is not Zero and get_aval(t).shape != a.shape:
            raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with corresponding shapes, "
                            f"got tangent shape {get_aval(t).shape} for primal shape {a.shape}.")
        fixed.append(t)
    return p_out, fixed


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


# ----------------------------------------------------------------------------------------------- custom_vjp

def _custom_lin_abstract(*avals, num_res, bwd, out_avals, **_):
    return list(out_avals)


custom_lin_p = Primitive("custom_lin", multiple_results=True)
custom_lin_p.abstract_eval = _custom_lin_abstract


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p.impl = _custom_lin_impl


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, in_avals):
    res = [ad.instantiate_array(r) for r in args[:num_res]]
    cts = [ad.instantiate_array(c) for c in cts]
    cts_in = bwd(*res, *cts)
    return [None] * num_res + list(cts_in)


ad.transpose_rules[custom_lin_p] = _custom_lin_transpose


class custom_vjp:
    """A function with a custom vjp: ``f.defvjp(fwd, bwd)``; ``fwd(*args) -> (out, residuals)`` and
    ``bwd(residuals, ct_out) -> tuple of cts, one per (differentiable) argument``; ``nondiff_argnums``
    arguments are passed first to ``bwd``. Mirrors ``jax.custom_vjp``."""

    def __init__(self, fun, nondiff_argnums=()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd = None
        self.bwd = None

    def defvjp(self, fwd, bwd, symbolic_zeros=False):
        self.fwd = fwd
        self.bwd = bwd

    def __call__(self, *args, **kwargs):
        if self.fwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {self.__name__} using defvjp.")
        n, nd, static, kwargs, leaves, in_tree, call_jaxpr, consts, out_tree = _trace_primal(
            self.fun, self.nondiff_argnums, args, kwargs)
        diff = tree_unflatten(in_tree, leaves)  # the differentiable arguments, as the user passed them
        nconst = len(consts)
        user_fwd, user_bwd = self.fwd, self.bwd

        def fwd(*xs):
            """flat primals -> (flat outs, flat residuals, residual tree)."""
            out, res = user_fwd(*_rebuild(n, nd, static, tree_unflatten(in_tree, list(xs[nconst:]))))
            outs, o_tree = tree_flatten(out)
            if o_tree != out_tree:
                raise TypeError(f"Custom VJP fwd rule {getattr(user_fwd, '__name__', '')} must produce a pair "
                                f"whose first element has the same structure as the primal output: expected "
                                f"{out_tree}, got {o_tree}.")
            res_l, res_tree = tree_flatten(res)
            return outs, res_l, res_tree
        fwd.__name__ = getattr(user_fwd, "__name__", "fwd")

        def bwd(res_tree, *res_and_cts):
            """flat residuals + flat cts -> flat cts of the leaves."""
            k = res_tree.num_leaves
            res = tree_unflatten(res_tree, list(res_and_cts[:k]))
            ct = tree_unflatten(out_tree, list(res_and_cts[k:]))
            cts_in = user_bwd(*static, res, ct) if nd else user_bwd(res, ct)
            if not isinstance(cts_in, (tuple, list)):
                raise TypeError(f"Custom VJP bwd rule must produce a tuple, got {type(cts_in).__name__}.")
            cts_in = tuple(cts_in)
            if len(cts_in) != len(diff):
                raise TypeError(f"Custom VJP bwd rule must produce an output with the same container (pytree) "
                                f"structure as the args tuple of the primal function: expected {len(diff)} "
                                f"entries, got {len(cts_in)}.")
            flat = []
            for c, d in zip(cts_in, diff):
                d_leaves = tree_flatten(d)[0]
                if c is None:
                    flat.extend(Zero(get_aval(x)) for x in d_leaves)
                else:
                    c_leaves = tree_flatten(c, is_leaf=lambda v: v is None)[0]
                    if len(c_leaves) != len(d_leaves):
                        raise TypeError("Custom VJP bwd rule produced a cotangent with a different structure "
                                        "from its primal argument.")
                    flat.extend(Zero(get_aval(x)) if cl is None else cl for cl, x in zip(c_leaves, d_leaves))
            return [None] * nconst + flat
        bwd.__name__ = getattr(user_bwd, "__name__", "bwd")
        outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr, fwd=fwd, bwd=bwd,
                                      num_consts=nconst, symbolic_zeros=False,
                                      name=getattr(self.fun, "__name__", "custom_vjp"))
        return tree_unflatten(out_tree, outs)


def _custom_vjp_call_jvp(primals, tangents, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros, name):
    outs, res, res_tree = fwd(*primals)
    tans = [ad.instantiate_zeros(t) for t in tangents]
    out_avals = [get_aval(o) for o in outs]
    n_res = len(res)

    # The primal inputs' tangents (consts included, their cotangents are None) follow the residuals.
    t_out = custom_lin_p.bind(*res, *tans, num_res=n_res, bwd=_LinBwd(bwd, res_tree, len(tans)),
                              out_avals=tuple(out_avals), in_avals=tuple(get_aval(t) for t in tans))
    return list(outs), list(t_out)


class _LinBwd:
    """``bwd`` for ``custom_lin``: residuals + cts → a cotangent per tangent input (consts first: None)."""

    def __init__(self, bwd, res_tree, n_in):
        self.bwd = bwd
        self.res_tree = res_tree
        self.n_in = n_in
        self.__name__ = getattr(bwd, "__name__", "bwd")

    def __call__(self, *res_and_cts):
        return self.bwd(self.res_tree, *res_and_cts)


ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp


def _custom_lin_pp(eqn):
    return [("num_res", eqn.params["num_res"]), ("bwd", eqn.params["bwd"])]


custom_lin_p.pp_params = _custom_lin_pp


# Batching: vmap of a custom function batches its primal computation (the custom rule applies under
# differentiation; ``vmap(grad(f))`` applies it first). The batched call is evaluated inline.
def _call_batch_rule(vals, dims, call_jaxpr, **params):
    size = batching.axis_size_of(vals, dims)
    moved = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [d if d is None else 0 for d in dims]
    new, consts, out_dims = batching.batch_jaxpr(call_jaxpr, size, in_dims)
    return eval_jaxpr(new.jaxpr, new.consts, *consts, *moved), out_dims


for _prim in (custom_jvp_call_p, custom_vjp_call_p):
    batching.batching_rules[_prim] = _call_batch_rule


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
