"""``custom_vmap`` and ``sequential_vmap``: functions with a user-defined ``vmap`` rule. Mirrors
``jax.custom_batching``; the ``custom_vmap_call`` primitive and all its rules live here.

A call traces the function into a jaxpr and binds ``custom_vmap_call`` with params ``call`` (that jaxpr, its
closed-over values passed as leading operands), ``rule`` (the user's rule), ``in_tree`` (the operands' tree:
``(consts, args)``) and ``out_tree``. What each trace does with the equation, as in JAX 0.10.2:

* eager evaluation, ``jit`` and lowering run ``call`` (the rule is never used outside ``vmap``);
* ``vmap`` calls the rule ``rule(axis_size, in_batched, *args)`` one level down, with each batched argument's
  batch axis first and ``in_batched`` a list (one pytree of bools per argument); it returns ``(out,
  out_batched)``, ``out_batched`` a pytree of bools matching ``out`` whose True leaves carry a leading axis of
  size ``axis_size``;
* ``jvp`` binds another ``custom_vmap_call`` whose ``call`` is the jvp of the function and whose rule is the
  jvp of the user's rule (the rule run under ``jvp``, with the arguments batched in only one of primal and
  tangent mapped over by an inner vmap): forward mode and ``vmap`` compose in either order;
* reverse mode is not supported (JAX neither): ``grad`` raises JAX's "Linearization failed" ``ValueError``
  (wrap the function in ``custom_vjp`` for that; ``custom_vjp`` must be the outer decorator).
"""
import functools
import inspect

from . import core
from .custom_derivatives import forward_def_attr
from .core import Primitive, get_aval, set_current_trace
from .interpreters import ad, batching
from .interpreters.ad import Zero
from .interpreters.eval import eval_jaxpr
from .interpreters.partial_eval import trace_to_jaxpr
from .primitives import control_flow as _cf
from ._pytree import tree_flatten, tree_map, tree_structure, tree_unflatten, treedef_tuple

__all__ = ["custom_vmap", "sequential_vmap"]


# ----------------------------------------------------------------------------------------------- the primitive

class _CustomVmapPrimitive(Primitive):
    """``custom_vmap_call``: a call of ``call`` (a const-free ClosedJaxpr) that ``vmap`` replaces by ``rule``."""

    operands_reach_user_code = True   # the rule sees the operands (literals as NumPy scalars)

    def __init__(self):
        super().__init__("custom_vmap_call", multiple_results=True)
        self.abstract_eval = lambda *avals, call, **_: list(call.out_avals)
        self.impl = lambda *args, call, **_: eval_jaxpr(call.jaxpr, call.consts, *args)

    @staticmethod
    def inline_jaxpr(eqn):
        return eqn.params["call"], eqn.invars

    @staticmethod
    def pp_params(eqn):
        # JAX 0.10.2's order: the params sorted by name
        return sorted(eqn.params.items())


custom_vmap_p = _CustomVmapPrimitive()


class _Rule:
    """The rule held in an equation's params. It prints as JAX prints it (``<function f_rule at 0xX...>``: the
    function's repr, address masked), so it has no ``__name__`` of its own. ``strip``: the operands' tree is
    ``(consts, args)`` and the user's rule sees only ``args`` (consts: the function's closed-over values)."""

    def __init__(self, rule, strip=True):
        self.rule = rule
        self.strip = strip

    def __str__(self):
        return str(self.rule)

    def __call__(self, axis_size, in_batched, *args):
        return self.rule(axis_size, list(in_batched), *args)


def _rule_name(rule):
    rule = rule.rule if isinstance(rule, _Rule) else rule
    return getattr(rule, "__name__", "<unnamed rule>")


def _check_trees(rule, out_tree, tree, batched_tree):
    """JAX's checks of what a rule returned (its texts)."""
    if tree != batched_tree:
        raise ValueError(f"structure of output value and output batching specification returned by custom vmap "
                         f"rule ({_rule_name(rule)}) do not match.\nOutput values: {tree}\n"
                         f"Batching spec: {batched_tree}")
    if tree != out_tree:
        raise ValueError(f"structure of output returned by custom vmap rule ({_rule_name(rule)}) does not match "
                         f"that of original custom-vmapped function.\nOriginal output: {out_tree}\n"
                         f"Rule output: {tree}")


def _check_outputs(rule, outs, batched, avals, axis_size):
    """Each output of the rule is an array of the function's output shape, with a leading ``axis_size`` where
    the rule says it is batched. (JAX does not check this: a wrong shape surfaces later as an unrelated
    error or a wrongly shaped result; cranax names the rule instead.)"""
    for i, (o, b, a) in enumerate(zip(outs, batched, avals)):
        try:
            got = tuple(get_aval(o).shape)
        except TypeError:
            raise TypeError(f"custom vmap rule ({_rule_name(rule)}) returned output {i} of type "
                            f"{type(o).__name__}, which is not a JAX array type") from None
        want = ((axis_size,) if b else ()) + tuple(a.shape)
        if got != want:
            raise ValueError(f"custom vmap rule ({_rule_name(rule)}) returned output {i} of shape {got}, but "
                             f"it is {'batched' if b else 'unbatched'} (out_batched) and the custom-vmapped "
                             f"function's output {i} has shape {tuple(a.shape)}: expected shape {want}")


def _call_rule(rule, axis_size, in_tree, vals, batched, out_tree, out_avals=None):
    """Runs ``rule`` on flat ``vals`` (batch axes first where ``batched``) as ``rule(axis_size, in_batched,
    *args)``; returns its flat outputs and their batched flags, checked against ``out_tree`` (and the shapes
    against ``out_avals`` unless None)."""
    args = tree_unflatten(in_tree, list(vals))
    in_batched = tree_unflatten(in_tree, [bool(b) for b in batched])
    if rule.strip:
        consts_b, in_batched = in_batched
        if any(tree_flatten(consts_b)[0]):
            raise ValueError(f"custom_vmap: the function with custom vmap rule ({_rule_name(rule)}) closes over "
                             f"a value that this vmap batches; pass it to the function as an argument")
        args = args[1]
    out, out_batched = _pair(rule(axis_size, in_batched, *args), rule)
    outs, tree1 = tree_flatten(out)
    flags, tree2 = tree_flatten(out_batched)
    _check_trees(rule, out_tree, tree1, tree2)
    flags = [bool(f) for f in flags]
    if out_avals is not None:
        _check_outputs(rule, outs, flags, out_avals, axis_size)
    return outs, flags


def _pair(res, rule):
    if not (isinstance(res, (tuple, list)) and len(res) == 2):
        raise TypeError(f"custom vmap rule ({_rule_name(rule)}) must return a pair (out, out_batched), got "
                        f"{type(res).__name__}")
    return res


def _batch_rule(vals, dims, *, call, rule, in_tree, out_tree):
    axis_size = batching.axis_size_of(vals, dims)
    vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    outs, flags = _call_rule(rule, axis_size, in_tree, vals, [d is not None for d in dims], out_tree,
                             call.out_avals)
    return outs, [0 if f else None for f in flags]


def _vmap_unrestricted(fun, args, in_dims, axis_size):
    """``fun`` (flat list -> flat list) run under a fresh vmap of the current trace with input batch dims
    ``in_dims`` (0 or None); returns its outputs, batch axes first, and their dims (0 or None) as they came."""
    bt = batching.BatchTrace(core._state.trace, axis_size)
    ins = [a if d is None else batching.BatchTracer(bt, a, d) for a, d in zip(args, in_dims)]
    try:
        with set_current_trace(bt):
            outs = fun(ins)
        vals, dims = [], []
        for o in outs:
            v, d = bt.to_batch_info(o)
            vals.append(v if d is None else batching.moveaxis(v, d, 0))
            dims.append(None if d is None else 0)
    finally:
        bt.invalidate()
    return vals, dims


def _jvp_flat_all(fun, ps, ts):
    """Forward mode of flat ``fun`` with a tangent for every input and output: integer inputs' tangents are
    ignored (cranax's integer tangents are symbolic zeros), missing output tangents are zeros."""
    ts = [t if ad.is_float(get_aval(p).dtype) else Zero(get_aval(p)) for p, t in zip(ps, ts)]
    p_out, t_out = ad.jvp_flat(fun, ps, ts)
    return list(p_out) + [ad.instantiate_zeros(t) for t in t_out]


def custom_vmap_jvp(primals, tangents, *, call, rule, in_tree, out_tree):
    """The jvp rule of ``custom_vmap_call`` (named as JAX's, whose inner rule prints as
    ``custom_vmap_jvp.<locals>.jvp_of_rule_rule``): another ``custom_vmap_call`` of the function's jvp,
    batched by the jvp of the rule."""
    n_in = len(primals)
    out_avals = list(call.out_avals)

    def jvp_of_rule_rule(axis_size, in_batched, primals, tangents):
        bp = tree_flatten(in_batched[0])[0]
        bt = tree_flatten(in_batched[1])[0]
        both = [a and b for a, b in zip(bp, bt)]
        store = {}

        def to_jvp(*xs):   # the rule, on arguments batched in both primal and tangent
            # (its out_batched is only OR-ed with the inner vmap's: shapes are checked on the result)
            outs, store["flags"] = _call_rule(rule, axis_size, in_tree, xs, both, out_tree)
            return outs

        def pair(ins):
            return _jvp_flat_all(to_jvp, ins[:n_in], ins[n_in:])

        # an argument batched in only one of primal/tangent is mapped over here, so the rule sees it unbatched
        extra = [0 if a and not b else None for a, b in zip(bp, bt)] + \
                [0 if b and not a else None for a, b in zip(bp, bt)]
        outs, dims = _vmap_unrestricted(pair, tree_flatten(primals)[0] + tree_flatten(tangents)[0], extra,
                                        axis_size)
        k = len(outs) // 2
        mutual = store["flags"]
        b_p = [m or d is not None for m, d in zip(mutual, dims[:k])]
        b_t = [m or d is not None for m, d in zip(mutual, dims[k:])]
        return ((tree_unflatten(out_tree, outs[:k]), tree_unflatten(out_tree, outs[k:])),
                (tree_unflatten(out_tree, b_p), tree_unflatten(out_tree, b_t)))

    tangents = [ad.instantiate_zeros(t) for t in tangents]
    n = len(call.in_avals)
    jvp_call, consts = trace_to_jaxpr(
        lambda *a: _jvp_flat_all(lambda *xs: eval_jaxpr(call.jaxpr, call.consts, *xs), list(a[:n]), list(a[n:])),
        list(call.in_avals) * 2).hoist_consts()
    in_tree2 = treedef_tuple((in_tree, in_tree))
    if consts:   # arrays the jvp made while tracing (rare) lead, as a function's consts do
        in_tree2 = treedef_tuple((tree_structure(list(consts)), in_tree2))
    outs = custom_vmap_p.bind(*consts, *primals, *tangents, call=jvp_call,
                              rule=_Rule(jvp_of_rule_rule, strip=bool(consts)), in_tree=in_tree2,
                              out_tree=treedef_tuple((out_tree, out_tree)))
    k = len(outs) // 2
    return list(outs[:k]), [t if ad.is_float(a.dtype) else Zero(a) for t, a in zip(outs[k:], out_avals)]


batching.batching_rules[custom_vmap_p] = _batch_rule
ad.jvp_rules[custom_vmap_p] = custom_vmap_jvp


# ----------------------------------------------------------------------------------------------- custom_vmap

class custom_vmap:
    """Customizes how ``vmap`` batches a function: ``f = custom_vmap(fun)``, then ``f.def_vmap(rule)``.

    ``f(*args)`` computes ``fun(*args)`` (eagerly, under ``jit`` and ``jvp``); ``vmap(f)`` calls
    ``rule(axis_size, in_batched, *args)`` instead, where each batched array argument has its batch axis first
    (size ``axis_size``), ``in_batched`` is a list with one pytree of bools per argument, and the rule returns
    ``(out, out_batched)``: ``out`` with ``fun``'s output structure, ``out_batched`` a matching pytree of bools
    (True: that leaf has a leading ``axis_size`` axis). Keyword arguments are resolved to positions against
    ``fun``'s signature (``TypeError`` when they cannot be). Calling without a rule raises ``AttributeError``; a
    rule output of the wrong structure ``ValueError`` (JAX's texts), of the wrong shape ``ValueError``. Forward
    mode works (through the rule's own jvp under ``vmap``); reverse mode raises ``ValueError`` as in JAX:
    wrap in ``custom_vjp`` (outermost) for it. Mirrors ``jax.custom_batching.custom_vmap``."""

    def __init__(self, fun):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule = None

    __getattr__ = forward_def_attr

    def def_vmap(self, vmap_rule):
        """Sets the vmap rule (``rule(axis_size, in_batched, *args) -> (out, out_batched)``) and returns it
        unchanged, so it can be a decorator."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", type(self.fun).__name__)
        if kwargs:
            args = _resolve_kwargs(self.fun, args, kwargs, name)
        if not self.vmap_rule:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        leaves, tree = tree_flatten(tuple(args))
        store = {}

        def flat(*xs):
            out = self.fun(*tree_unflatten(tree, list(xs)))
            outs, store["tree"] = tree_flatten(out)
            return outs
        closed, consts = trace_to_jaxpr(flat, [get_aval(x) for x in leaves]).hoist_consts()
        in_tree = treedef_tuple((tree_structure(list(consts)), tree))
        outs = custom_vmap_p.bind(*consts, *leaves, call=closed, rule=_Rule(self.vmap_rule), in_tree=in_tree,
                                  out_tree=store["tree"])
        return tree_unflatten(store["tree"], list(outs))


def _resolve_kwargs(fun, args, kwargs, name):
    """``args`` with ``kwargs`` bound to their positions (JAX's texts when they cannot be)."""
    head = (f"The input arguments to the custom_vmap-decorated function {name} could not be resolved to "
            f"positional-only arguments. Binding failed with the error:\n")
    try:
        ba = inspect.signature(fun).bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(head + str(e)) from e
    ba.apply_defaults()
    if ba.kwargs:
        raise TypeError(head + "The following keyword arguments could not be resolved to positions: "
                        + ", ".join(ba.kwargs))
    return tuple(ba.args)


# ----------------------------------------------------------------------------------------------- sequential_vmap

def sequential_vmap(f):
    """``f`` as a ``custom_vmap`` whose rule runs ``f`` once per batch element in a loop (``lax.map``, a
    ``scan``), for functions that cannot batch themselves (host callbacks...). The unbatched arguments are
    passed whole to each iteration; every output is batched. Mirrors ``jax.custom_batching.sequential_vmap``."""
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        args = list(args)
        mapped = tree_map(lambda b, x: x if b else None, in_batched, args)
        fixed = tree_map(lambda b, x: None if b else x, in_batched, args)

        def one(m):
            return f(*tree_map(lambda b, x, y: x if b else y, in_batched, m, fixed))
        out = _cf.map(one, mapped)
        return out, tree_map(lambda _: True, out)

    return f
