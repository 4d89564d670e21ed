"""``jax.experimental.hijax``: user primitives with their own derivative and batching rules
(``VJPHiPrimitive``), and the names of JAX's "high-level types" extension.

A ``VJPHiPrimitive`` subclass instance is one primitive application: ``Prim(avals)(*args)`` binds
``call_hi_primitive`` with the instance as its ``_prim`` param, as JAX 0.10.2 does. Its rules, by the trace
it meets:

* evaluation runs ``expand`` on the values as given; staging (``jit``, ``make_jaxpr``) records one equation,
  and lowering traces ``expand`` then (``inline_jaxpr``), so the derivative rules see the equation whole;
* differentiation reads the ``JVPTrace``'s ``mode`` (``interpreters.ad``): ``jax.jvp`` runs ``jvp``;
  ``grad``/``vjp`` run ``vjp_fwd`` and stage ``call_hi_primitive_linearized``, whose transpose runs ``vjp_bwd``
  with one accumulator per input (``vjp_bwd_retval`` by default); ``jax.linearize`` runs ``lin`` and
  ``linearized``. The primal is never traced through ``expand`` there;
* ``vmap`` runs ``batch``; its default asks ``batch_dim_rule`` where the output's batch axis goes and binds
  ``VmapOf(prim, ...)``, a hi-primitive whose rules are the inner ones run per example.

Hi-types: a ``HiType`` subclass registered for its values' class (``register_hitype``) is their aval, so
they pass through ``jit``/``grad``/``vmap`` as one value of one type (a hi-typed tracer lends the type's
``aval_method``/``aval_property``), produced and consumed by hi-primitives. A jaxpr with hi-typed values runs
on their ``lo_ty`` arrays (``_runner``: hi-primitives expanded, values lowered with ``lower_val`` and raised with
``raise_val``, also inside loop and cond bodies); a scan carries a hi-typed carry as its arrays (``_hi_scan``);
``grad`` differentiates with respect to a hi value in its ``to_tangent_aval``; ``shard_map`` takes hi-typed
arguments and results with a ``HiPspec`` (``_hi_shard_map``: their arrays split by its ``to_lo`` specs, each
block of the type's ``shard``, the result of its ``unshard``). Not provided: mapping specs
(``vmap`` over hi values), mutable hi-types and QDD, shardings other than replicated (one device). The older
``HiPrimitive`` base (flax.nnx subclasses it, used only in its ``flax_hijax_variable`` mode) can be defined,
but binding one raises ``NotImplementedError`` naming it, so a program that needs it fails loudly.
"""
import weakref as _weakref

import numpy as _np

from .. import api_pmap as _api_pmap, core as _core, lax as _lax, numpy as _jnp
from ..array import Array as _Array
from ..core import Primitive as _Primitive, Tracer as _Tracer, TypedScalar as _TypedScalar
from ..core import ShapedArray, aval_method, aval_property
from ..interpreters import ad as _ad, batching as _batching
from ..interpreters.ad import Zero, is_undefined_primal
from ..interpreters.partial_eval import trace_to_jaxpr as _trace_to_jaxpr
from ..jaxpr import ClosedJaxpr as _ClosedJaxpr, Jaxpr as _Jaxpr, Literal as _Literal
from ..primitives import control_flow as _control_flow, jit as _jit
from ..primitives.state import AbstractRef
from .._pytree import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
from ..custom_derivatives import _run_batched

__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive", "HiPspec", "HiType",
           "MutableHiType", "ShapedArray", "TransformedRef", "VJPHiPrimitive", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "instantiate_zeros", "is_undefined_primal", "register_hitype"]

# The base of the abstract values a hi-type's leaves have (cranax's arrays all have ShapedArray ones).
AbstractValue = ShapedArray


def _unsupported(what):
    raise NotImplementedError(f"jax.experimental.hijax: {what} is not supported by cranax (only VJPHiPrimitive "
                              "binds)")


# ----------------------------------------------------------------------------------------------- pytree helpers

def _leaves_checked(treedef, tree, what):
    """``tree``'s leaves, which must have structure ``treedef`` (JAX's ``tree_leaves_checked``, an assert)."""
    leaves, td = _tree_flatten(tree)
    if td != treedef:
        raise AssertionError(f"{what}: expected a value of structure {treedef}, got {td}")
    return leaves


def _up_to(treedef, tree, avals):
    """``tree``'s subtrees at ``treedef``'s leaves, ``None`` (a rule's "no tangent/cotangent") made a
    symbolic ``Zero`` of the matching aval."""
    if tree is None:
        return [Zero(a) for a in avals]
    return [Zero(a) if t is None else t for t, a in zip(treedef.flatten_up_to(tree), avals)]


def _prefix_flat(treedef, prefix):
    """A per-leaf list from ``prefix``, a pytree prefix of ``treedef`` (a bare bool/int/None broadcasts)."""
    if prefix is None or isinstance(prefix, (bool, int, _np.integer)):
        return [prefix] * treedef.num_leaves
    return [p for p in treedef.flatten_up_to(prefix)]


_DYNAMIC = (_Tracer, _Array, _np.ndarray, _np.generic, bool, int, float, complex)


class _Static:
    """Residual leaves that are no arrays (functions, strings, symbolic zeros) kept out of the operands."""

    __slots__ = ("treedef", "statics", "mask")

    def __init__(self, treedef, statics, mask):
        self.treedef, self.statics, self.mask = treedef, statics, mask

    def rebuild(self, dynamic):
        dyn, st = iter(dynamic), iter(self.statics)
        return _tree_unflatten(self.treedef, [next(dyn) if m else next(st) for m in self.mask])


def _split_residuals(res):
    leaves, td = _tree_flatten(res)
    mask = tuple(isinstance(x, _DYNAMIC) for x in leaves)
    return [x for x, m in zip(leaves, mask) if m], _Static(td, tuple(x for x, m in zip(leaves, mask) if not m), mask)


def instantiate_zeros(x):
    """A symbolic ``Zero`` as an array of zeros of its type (a weak type kept, as JAX's); others as given."""
    if type(x) is not Zero:
        return x
    return _ad.instantiate_array(x) if x.aval.ndim == 0 else _ad.instantiate_zeros(x)


_tan = _ad._tangent_aval   # a type's tangent type (a hi-type's says: ``to_tangent_aval``)


# ----------------------------------------------------------------------------------------------- accumulators

class _GradAccum:
    """Where a ``vjp_bwd`` rule puts an input's cotangent: ``aval`` (its type) and ``accum(ct)``."""

    def __init__(self, aval):
        self.aval = aval

    def accum(self, ct):
        raise NotImplementedError


class _ValAccum(_GradAccum):
    """Sums the contributions it is given (what ``grad``/``vjp`` hand a rule)."""

    def __init__(self, aval):
        super().__init__(aval)
        self.value = None

    def accum(self, ct):
        if ct is None or type(ct) is Zero:
            return
        ct = _jnp.asarray(ct, self.aval.dtype) if not isinstance(ct, _Tracer) else ct
        if tuple(_np.shape(ct)) != tuple(self.aval.shape):
            raise ValueError(f"cotangent of shape {tuple(_np.shape(ct))} accumulated into an input of type "
                             f"{self.aval.str_short()}")
        self.value = ct if self.value is None else _ad.add_tangents(self.value, ct)


class _NullAccum(_GradAccum):
    """Drops what it is given: the input is not differentiated."""

    def accum(self, ct):
        return None


# ----------------------------------------------------------------------------------------------- VJPHiPrimitive

class VJPHiPrimitive:
    """A user primitive: a subclass's ``__init__`` sets ``in_avals`` (a tuple, an aval pytree per argument),
    ``out_aval`` and ``params`` (static, hashable; they become attributes), then calls
    ``super().__init__()``. ``expand`` is the implementation; the other methods are the rules of the
    transformations that need them (see the module's docstring)."""

    effects = frozenset()

    def __init__(self):
        for name in ("in_avals", "out_aval", "params"):
            if not hasattr(self, name):
                raise AttributeError(f"subclass __init__ should set `self.{name}`")
        cls = type(self)
        if cls.vjp_bwd is not VJPHiPrimitive.vjp_bwd and cls.vjp_bwd_retval is not VJPHiPrimitive.vjp_bwd_retval:
            raise AttributeError(f"subclass {cls} should not override both `vjp_bwd` and `vjp_bwd_retval`")
        self.in_avals_flat, self.in_tree = _tree_flatten(self.in_avals)
        self.out_avals_flat, self.out_tree = _tree_flatten(self.out_aval)
        self.__dict__.update(self.params)
        self.check(*self.in_avals)

    def expand(self, *args):
        raise NotImplementedError(f"subclass {type(self)} must implement `expand`")

    def vjp_fwd(self, nzs_in, /, *args):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement `vjp_fwd`")

    def vjp_bwd(self, res, outgrad, /, *arg_accums):
        args_grad = self.vjp_bwd_retval(res, outgrad)
        accums = self.in_tree.flatten_up_to(tuple(arg_accums))
        for acc, ct in zip(accums, _up_to(self.in_tree, args_grad, [_tan(a) for a in self.in_avals_flat])):
            if isinstance(acc, _GradAccum):
                acc.accum(ct)

    def vjp_bwd_retval(self, res, outgrad, /):
        raise NotImplementedError(f"for grad support, subclass {type(self)} must implement `vjp_bwd` or "
                                  "`vjp_bwd_retval`")

    def jvp(self, primals, tangents):
        raise NotImplementedError(f"for jvp support, subclass {type(self)} must implement `jvp`")

    def lin(self, nzs_in, *primals):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} must implement `lin` and "
                                  "`linearized`")

    def linearized(self, residuals, *tangents):
        raise NotImplementedError(f"for linearize support, subclass {type(self)} must implement `lin` and "
                                  "`linearized`")

    def transpose(self, out_ct, *maybe_accums):
        raise NotImplementedError(f"for transpose support, subclass {type(self)} must implement `transpose`")

    def batch(self, axis_data, args, dims):
        out_dim = self.batch_dim_rule(axis_data, dims)
        return _VmapOf(self, axis_data, dims, out_dim)(*args), out_dim

    def batch_dim_rule(self, axis_data, dims, /):
        raise NotImplementedError(f"for vmap support, subclass {type(self)} must implement `batch` or "
                                  "`batch_dim_rule`")

    def check(self, *arg_tys):
        return None   # a subclass may check its argument types here

    def __call__(self, *args):
        flat = _leaves_checked(self.in_tree, args, f"arguments of {type(self).__name__}")
        return _tree_unflatten(self.out_tree, _call_hi_p.bind(*flat, _prim=self))

    def __repr__(self):
        return f"{type(self).__name__}[{self.params}]"

    def __hash__(self):
        return hash((type(self).__name__, tuple(self.params.items()), self.effects))

    def __eq__(self, other):
        return type(self) is type(other) and self.params == other.params and self.effects == other.effects


def _user(x):
    """What user rules see: cranax's internal typed scalars (literals read back) as Arrays."""
    return _ad.instantiate_array(x) if isinstance(x, _TypedScalar) else x


def _expand_flat(prim, args_flat):
    out = prim.expand(*_tree_unflatten(prim.in_tree, [_user(a) for a in args_flat]))
    return _leaves_checked(prim.out_tree, out, f"output of {type(prim).__name__}.expand")


_call_hi_p = _Primitive("call_hi_primitive", multiple_results=True)
_call_hi_p.operands_reach_user_code = True   # expand and the rules are user code
_call_hi_p.abstract_eval = lambda *avals, _prim: list(_prim.out_avals_flat)
_call_hi_p.impl = lambda *args, _prim: _expand_flat(_prim, args)
_call_hi_p.pp_params = lambda eqn: [("_prim", eqn.params["_prim"])]


def _inline(eqn):
    """Lowering: ``expand`` traced on the equation's operand types (JAX's ``to_lojax``)."""
    prim = eqn.params["_prim"]
    closed = _trace_to_jaxpr(lambda *xs: _expand_flat(prim, xs), [a.aval for a in eqn.invars])
    return _const_free(closed, repr(prim) + ".expand"), eqn.invars


def _const_free(closed, what):
    """``closed``'s Jaxpr with the scalars it closes over made literals (lowering inlines const-free jaxprs,
    and a rebuilt loop body must keep its operands)."""
    j = closed.jaxpr
    if not j.constvars:
        return j
    lits = {}
    for v, c in zip(j.constvars, closed.consts):
        if _np.shape(c) != ():
            raise NotImplementedError(f"{what} closes over an array of shape {_np.shape(c)}; cranax lowers "
                                      "hi-primitive expansions that close over scalars only (pass the array as an "
                                      "argument)")
        lits[v] = _Literal(c._value_scalar() if isinstance(c, _Array) else _np.asarray(c)[()], v.aval)
    sub = lambda a: lits.get(a, a) if not isinstance(a, _Literal) else a   # noqa: E731
    eqns = [e.__class__([sub(a) for a in e.invars], e.outvars, e.primitive, e.params, e.src) for e in j.eqns]
    return _Jaxpr([], j.invars, [sub(a) for a in j.outvars], eqns, getattr(j, "debug_info", None))


_call_hi_p.inline_jaxpr = staticmethod(_inline)


# ----------------------------------------------------------------------------------------------- hi-typed jaxprs

def _high_jaxpr(closed):
    """Whether ClosedJaxpr ``closed`` (or a jaxpr nested in it) has a hi-typed variable."""
    hit = _high_cache.get(closed)
    if hit is None:
        j = closed.jaxpr
        hit = _high_cache[closed] = (any(_core.is_hi(v.aval) for v in j.invars + j.constvars)
                                     or any(_core.is_hi(v.aval) for e in j.eqns for v in e.outvars)
                                     or any(_high_jaxpr(c) for e in j.eqns for c in _jit._sub_closed(e.params)))
    return hit


def _lo_sub(v):
    """A param of a loop or cond: each nested jaxpr with hi-typed values inside (not at its boundary, whose
    arity the equation fixes) made one on lo types."""
    if isinstance(v, tuple):
        return tuple(_lo_sub(x) for x in v)
    if not isinstance(v, _ClosedJaxpr) or not _high_jaxpr(v):
        return v
    hit = _lo_subs.get(v)
    if hit is None:
        if any(_core.is_hi(a) for a in v.in_avals + v.out_avals):
            raise NotImplementedError("a loop or cond whose carries, operands or results are hi-typed: cranax "
                                      "lowers hi-types inside them, and through hi-primitives and jit")
        closed = _trace_to_jaxpr(lambda *xs: _eval_lo(v.jaxpr, v.consts, xs), v.in_avals)
        hit = _lo_subs[v] = _ClosedJaxpr(_const_free(closed, "a hi-primitive in a loop body"), [])
    return hit


_lo_subs = _weakref.WeakKeyDictionary()
_high_cache = _weakref.WeakKeyDictionary()
_runners = _weakref.WeakKeyDictionary()


def _eval_lo(j, consts, args):
    """Evaluates Jaxpr ``j`` with each hi-primitive expanded (its hi-typed values are then values of their
    classes, holding arrays); jits with hi-typed variables are evaluated inline the same way."""
    env = {}

    def read(a):
        return _TypedScalar(a.val, a.aval, a.py) if isinstance(a, _Literal) else env[a]
    env.update(zip(j.constvars, consts))
    env.update(zip(j.invars, args))
    for e in j.eqns:
        ins = [read(a) for a in e.invars]
        inner = e.params.get("jaxpr") if e.primitive is _jit.jit_p else None
        if e.primitive is _call_hi_p:
            outs = _expand_flat(e.params["_prim"], ins)
        elif e.primitive is _raise_p or e.primitive is _lower_p:
            outs = _raise_p.impl(*ins, **e.params) if e.primitive is _raise_p else _lower_p.impl(*ins, **e.params)
            outs = [outs] if e.primitive is _raise_p else outs
        elif inner is not None and _high_jaxpr(inner):   # a jit: inline, whatever its boundary's types
            outs = _eval_lo(inner.jaxpr, inner.consts, ins)
        elif any(_core.is_hi(v.aval) for v in e.outvars) or any(_core.is_hi(getattr(a, "aval", None)) for a in ins):
            raise NotImplementedError(f"{e.primitive.name} on hi-typed values: cranax lowers hi-types through "
                                      "hi-primitives and jit, and inside loops and conds")
        else:
            params = {k: _lo_sub(v) for k, v in e.params.items()}
            outs = e.primitive.bind(*ins, **params)
            outs = outs if e.primitive.multiple_results else [outs]
        env.update(zip(e.outvars, outs))
    return [read(a) for a in j.outvars]


def _lo_parts(aval):
    return list(aval.lo_ty()) if _core.is_hi(aval) else [aval]


def _runner(closed):
    """For a ClosedJaxpr with hi-typed variables, ``run(args, name)``: the jaxpr on their ``lo_ty`` arrays
    (JAX's lowering of hi-types), compiled as a jit, the hi-typed arguments lowered (``lower_val``) and
    results raised (``raise_val``); None for any other jaxpr. Built once per jaxpr."""
    hit = _runners.get(closed, _runners)
    if hit is not _runners:
        return hit
    if not _high_jaxpr(closed):
        _runners[closed] = None
        return None
    in_avals, out_avals = closed.in_avals, closed.out_avals
    for v, c in zip(closed.jaxpr.constvars, closed.consts):
        # a hi value the function closes over: its arrays become the program's; holding tracers (the value
        # class built on traced arrays outside a hi-primitive) it is JAX's error
        for x in (v.aval.lower_val(c) if _core.is_hi(v.aval) else ()):
            if isinstance(x, _Tracer):
                raise TypeError(f"No constant handler for type: {type(x)}")

    def lo_fun(*lo_args):
        it = iter(lo_args)
        args = [a.raise_val(*[next(it) for _ in a.lo_ty()]) if _core.is_hi(a) else next(it) for a in in_avals]
        outs = _eval_lo(closed.jaxpr, closed.consts, args)
        return [x for a, o in zip(out_avals, outs) for x in (a.lower_val(o) if _core.is_hi(a) else [o])]
    lo_jaxpr, lo_consts = _trace_to_jaxpr(lo_fun, [t for a in in_avals for t in _lo_parts(a)]).hoist_consts()

    def run(args, name):
        lo_args = [x for a, v in zip(in_avals, args) for x in (a.lower_val(v) if _core.is_hi(a) else [v])]
        outs = iter(_jit.jit_p.impl(*lo_consts, *lo_args, jaxpr=lo_jaxpr, name=name))
        return [a.raise_val(*[next(outs) for _ in a.lo_ty()]) if _core.is_hi(a) else next(outs) for a in out_avals]
    _runners[closed] = run
    return run


_jit.hi_runner.append(_runner)


# A hi-typed value made of its lo arrays and back, as equations (a scan's hi-typed carry crosses the loop
# boundary as its arrays): ``aval`` names the hi-type; evaluating one is ``raise_val``/``lower_val``.
_raise_p = _Primitive("hi_raise")
_raise_p.abstract_eval = lambda *avals, aval: aval
_raise_p.impl = lambda *xs, aval: aval.raise_val(*[_user(x) for x in xs])
_lower_p = _Primitive("hi_lower", multiple_results=True)
_lower_p.abstract_eval = lambda x, *, aval: list(aval.lo_ty())
_lower_p.impl = lambda x, *, aval: list(aval.lower_val(x))


def _lower_any(aval, x):
    """``x``'s lo arrays: a hi value's (``lower_val``), a hi-typed tracer's (a ``hi_lower`` equation)."""
    if isinstance(x, _Tracer):
        return _lower_p.bind(x, aval=aval)
    return list(aval.lower_val(x))


def _hi_scan(f, init, xs, length, reverse, unroll):
    """``lax.scan`` with hi-typed carries: the loop carries their lo arrays; the body gets the hi values back
    (``hi_raise``), and its hi-typed results (carries, and ys: stacked as their arrays, then raised) are
    lowered again (JAX's ``scan`` lowering of hi-types)."""
    leaves, tree = _tree_flatten(init)
    avals = [_core.get_aval(v) for v in leaves]
    hi = [_core.is_hi(a) for a in avals]
    lo_init = [_lower_any(a, v) if h else [v] for a, v, h in zip(avals, leaves, hi)]
    store = {}

    def body(lo_carry, x):
        carry = [_raise_p.bind(*lo, aval=a) if h else lo[0] for lo, a, h in zip(lo_carry, avals, hi)]
        c, y = f(_tree_unflatten(tree, carry), x)
        c_leaves, c_tree = _tree_flatten(c)
        c_avals = [_core.get_aval(v) for v in c_leaves]
        if c_tree != tree or any(h and a != b for a, b, h in zip(avals, c_avals, hi)):
            raise TypeError(f"scan body function carry input and carry output must have the same pytree "
                            f"structure and hi-types; the carry input has types {avals} and the carry output "
                            f"{c_avals}")
        y_leaves, store["y_tree"] = _tree_flatten(y)
        store["y_avals"] = y_avals = [_core.get_aval(v) for v in y_leaves]
        return ([_lower_any(a, v) if h else [v] for a, v, h in zip(avals, c_leaves, hi)],
                [_lower_any(a, v) if _core.is_hi(a) else [v] for a, v in zip(y_avals, y_leaves)])
    lo_c, lo_y = _lax.scan(body, lo_init, xs, length=length, reverse=reverse, unroll=unroll)
    carry = [(_raise_p.bind(*lo, aval=a) if any(isinstance(x, _Tracer) for x in lo) else a.raise_val(*lo))
             if h else lo[0] for lo, a, h in zip(lo_c, avals, hi)]
    ys = [a.raise_val(*lo) if _core.is_hi(a) else lo[0] for lo, a in zip(lo_y, store["y_avals"])]
    return _tree_unflatten(tree, carry), _tree_unflatten(store["y_tree"], ys)


_control_flow.hi_scan.append(_hi_scan)


def _hi_shard_map(body, leaves, specs, mesh, names, sizes, out_specs, check_vma):
    """``shard_map`` with hi-typed arguments or results (JAX's ``shard``/``unshard`` of hi-types). A hi value
    enters the blocks as its lo arrays (``hi_lower``), each split by its ``HiPspec``'s ``to_lo`` spec; a block's
    type is the hi-type's ``shard`` of it, and the body, traced on the block types, runs with its hi-primitives
    expanded (``_eval_lo``), so the blocks compute on lo arrays and no batching rule of the type's primitives
    is used (JAX lowers hi-types before partitioning too). Hi-typed results leave as their lo arrays, merged
    by their out spec's ``to_lo``, and are raised (``hi_raise``) at the hi-type's ``unshard``."""
    manual = frozenset(names)
    lo_leaves, lo_specs, in_info = [], [], []
    for x, sp in zip(leaves, specs):
        aval = _core.get_aval(x)
        if _core.is_hi(aval):
            if not _api_pmap._is_hi_spec(sp):   # (JAX 0.10.2's error: it reads the hi-type as an array type)
                raise AttributeError(f"'{type(aval).__name__}' object has no attribute 'ndim'")
            lo = _lower_any(aval, x)
            lo_sp = list(sp.to_lo())
            if len(lo_sp) != len(lo):
                raise ValueError(f"{sp!r}.to_lo() gave {len(lo_sp)} specs for the {len(lo)} arrays of {aval!r}")
            in_info.append((aval.shard(mesh, manual, check_vma, sp), len(lo)))
            lo_leaves += lo
            lo_specs += lo_sp
        else:
            if _api_pmap._is_hi_spec(sp):   # (JAX 0.10.2's error: it reads the HiPspec as a PartitionSpec)
                raise AttributeError(f"'{type(sp).__name__}' object has no attribute 'unreduced'")
            in_info.append((None, 1))
            lo_leaves.append(x)
            lo_specs.append(sp)
    split = [_api_pmap._split(x, sp, names, sizes) for x, sp in zip(lo_leaves, lo_specs)]

    def flat_g(box, *xs):
        it = iter(xs)
        args, avals = [], []
        for hi_aval, n in in_info:
            part = [next(it) for _ in range(n)]
            args.append(part[0] if hi_aval is None else hi_aval.raise_val(*part))
            avals.append(_core.get_aval(part[0]) if hi_aval is None else hi_aval)
        store = {}

        def traced(*ts):
            flat, store["tree"] = _tree_flatten(body(*ts))
            return flat
        closed = _trace_to_jaxpr(traced, avals)
        outs = _eval_lo(closed.jaxpr, closed.consts, args)
        tree = store["tree"]
        out_sp = _api_pmap._broadcast_prefix(out_specs, _tree_unflatten(tree, [0] * tree.num_leaves), "out_specs")
        lo_out, lo_osp, out_info = [], [], []
        for o, a, sp in zip(outs, closed.out_avals, out_sp):
            if _core.is_hi(a):
                if not _api_pmap._is_hi_spec(sp):   # (JAX 0.10.2's error, as for an argument)
                    raise AttributeError(f"'{type(a).__name__}' object has no attribute 'mat'")
                lo = list(a.lower_val(o))
                out_info.append((a, len(lo), sp))
                lo_out += lo
                lo_osp += list(sp.to_lo())
            else:
                out_info.append((None, 1, sp))
                lo_out.append(o)
                lo_osp.append(sp)
        box.append((tree, lo_osp, out_info))
        return lo_out
    merged, (tree, _, out_info) = _api_pmap._run_nested(None, [x for x, _ in split], [u for _, u in split], names,
                                                  sizes, out_specs, mesh, flat_g)
    it = iter(merged)
    res = []
    for a, n, sp in out_info:
        part = [next(it) for _ in range(n)]
        if a is None:
            res.append(part[0])
            continue
        full = a.unshard(mesh, check_vma, sp)
        res.append(_raise_p.bind(*part, aval=full) if any(isinstance(p, _Tracer) for p in part)
                   else full.raise_val(*part))
    return _tree_unflatten(tree, res)


_api_pmap.hi_shard_map.append(_hi_shard_map)


# ----------------------------------------------------------------------------------------------- autodiff

def _hi_jvp(primals, tangents, *, _prim):
    prim, mode = _prim, _ad.current_mode()
    if mode is None:   # jax.jvp: the user's forward rule
        p_out, t_out = prim.jvp(_tree_unflatten(prim.in_tree, list(primals)),
                                _tree_unflatten(prim.in_tree, list(tangents)))
        p_flat = _leaves_checked(prim.out_tree, p_out, f"primal output of {type(prim).__name__}.jvp")
        return p_flat, _up_to(prim.out_tree, t_out, [_tan(a) for a in prim.out_avals_flat])
    nz_in = [type(t) is not Zero for t in tangents]
    args = _tree_unflatten(prim.in_tree, list(primals))
    nzs_in = _tree_unflatten(prim.in_tree, nz_in)
    if mode == "lin":   # jax.linearize: the user's linearization, its linear part traced on the tangents
        ans, res, *rest = prim.lin(nzs_in, *args)
        p_flat = _leaves_checked(prim.out_tree, ans, f"primal output of {type(prim).__name__}.lin")
        nz_out = _nz_out(prim, rest)
        t_out = prim.linearized(res, *_tree_unflatten(prim.in_tree, list(tangents)))
        t_avals = [_tan(a) for a in prim.out_avals_flat]
        t_flat = _up_to(prim.out_tree, t_out, t_avals)
        return p_flat, [t if nz else Zero(a) for t, nz, a in zip(t_flat, nz_out, t_avals)]
    ans, res, *rest = prim.vjp_fwd(nzs_in, *args)
    p_flat = _leaves_checked(prim.out_tree, ans, f"primal output of {type(prim).__name__}.vjp_fwd")
    nz_out = _nz_out(prim, rest)
    dyn, static = _split_residuals(res)
    t_out = _call_hi_linearized_p.bind(
        *dyn, *[t for t in tangents if type(t) is not Zero], _prim=prim, residuals=static,
        nz_in_flat=tuple(nz_in), nz_out_flat=tuple(nz_out))
    it = iter(t_out)
    return p_flat, [next(it) if nz else Zero(_tan(a)) for nz, a in zip(nz_out, prim.out_avals_flat)]


def _nz_out(prim, rest):
    """Which outputs have nonzero tangents: the rule's optional third result (a prefix), floats only."""
    nz = _prefix_flat(prim.out_tree, rest[0]) if rest else [True] * prim.out_tree.num_leaves
    return [bool(z) and _ad.has_tangent(a) for z, a in zip(nz, prim.out_avals_flat)]


_ad.jvp_rules[_call_hi_p] = _hi_jvp


def _hi_transpose(cts, *args, _prim):
    """A hi-primitive linear in some inputs: its ``transpose`` rule, given accumulators for those."""
    accs = [_ValAccum(a.aval) if is_undefined_primal(a) else _user(a) for a in args]
    cts_tree = _tree_unflatten(_prim.out_tree, [_user(c) for c in cts])
    if _prim.transpose(cts_tree, *_tree_unflatten(_prim.in_tree, accs)) is not None:
        raise AssertionError(f"{type(_prim).__name__}.transpose must return None")
    return [_acc_value(a) if isinstance(a, _ValAccum) else None for a in accs]


def _acc_value(acc):
    return Zero(acc.aval) if acc.value is None else acc.value


_ad.transpose_rules[_call_hi_p] = _hi_transpose


def _lin_abstract(*avals, _prim, residuals, nz_in_flat, nz_out_flat):
    return [_tan(a) for a, nz in zip(_prim.out_avals_flat, nz_out_flat) if nz]


def _lin_impl(*args, **params):
    # (JAX's text for forward mode through a reverse-only rule)
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


_call_hi_linearized_p = _Primitive("call_hi_primitive_linearized", multiple_results=True)
_call_hi_linearized_p.operands_reach_user_code = True
_call_hi_linearized_p.abstract_eval = _lin_abstract
_call_hi_linearized_p.impl = _lin_impl
_call_hi_linearized_p.pp_params = lambda eqn: [
    ("_prim", str(type(eqn.params["_prim"]))), ("nz_in_flat", eqn.params["nz_in_flat"]), ("residuals_tree", "...")]


def _lin_transpose(cts, *args, _prim, residuals, nz_in_flat, nz_out_flat):
    """The backward pass: ``vjp_bwd(residuals, output cotangents, *accumulators)``."""
    n_res = sum(residuals.mask)
    res = residuals.rebuild([_user(a) for a in args[:n_res]])
    it = iter(_user(c) for c in cts)
    cts_flat = [next(it) if nz else Zero(_tan(a)) for nz, a in zip(nz_out_flat, _prim.out_avals_flat)]
    accs = [_ValAccum(_tan(a)) if nz else _NullAccum(_tan(a)) for a, nz in zip(_prim.in_avals_flat, nz_in_flat)]
    out = _prim.vjp_bwd(res, _tree_unflatten(_prim.out_tree, cts_flat), *_tree_unflatten(_prim.in_tree, accs))
    if out is not None:
        raise AssertionError(f"{type(_prim).__name__}.vjp_bwd must return None (it accumulates into its "
                             f"accumulator arguments), got {type(out).__name__}")
    return [None] * n_res + [_acc_value(a) for a in accs if isinstance(a, _ValAccum)]


_ad.transpose_rules[_call_hi_linearized_p] = _lin_transpose


def _lin_batch(vals, dims, **params):
    _lin_impl()


_batching.batching_rules[_call_hi_linearized_p] = _lin_batch


# ----------------------------------------------------------------------------------------------- vmap

def _hi_batch(vals, dims, *, _prim):
    trace = _core._state.batch_rule_trace
    # an unnamed axis is named by a fresh object, as JAX's (its rules and printed params show it)
    name = object() if trace.axis_name is None else trace.axis_name
    axis_data = _batching.AxisData(name, trace.axis_size)
    ans, out_dims = _prim.batch(axis_data, _tree_unflatten(_prim.in_tree, list(vals)),
                                _tree_unflatten(_prim.in_tree, list(dims)))
    return (_leaves_checked(_prim.out_tree, ans, f"output of {type(_prim).__name__}.batch"),
            _prefix_flat(_prim.out_tree, out_dims))


_batching.batching_rules[_call_hi_p] = _hi_batch


def _unmapped(aval, d, size):
    if d is None or isinstance(aval, Zero):
        return aval
    return aval.update(shape=aval.shape[:d] + (size,) + aval.shape[d:])


def _front(x, d):
    """``x`` with its batch axis ``d`` first (a symbolic zero's aval likewise)."""
    if d is None or d == 0:
        return x
    if type(x) is Zero:
        s = x.aval.shape
        return Zero(x.aval.update(shape=(s[d],) + s[:d] + s[d + 1:]))
    return _batching.moveaxis(x, d, 0)


def _from_front(x, d):
    if d == 0:
        return x
    if type(x) is Zero:
        s = x.aval.shape
        return Zero(x.aval.update(shape=s[1:d + 1] + (s[0],) + s[d + 1:]))
    return _batching.moveaxis(x, 0, d)


class _VmapOf(VJPHiPrimitive):
    """``prim`` applied to a batch (the default ``batch`` rule binds it): each rule is ``prim``'s, run per
    example; an input that is not batched gets the sum of its per-example cotangents."""

    def __init__(self, prim, axis_data, in_dims, out_dim):
        size = axis_data.size
        self._in_dims = _prefix_flat(prim.in_tree, in_dims)
        self._out_dims = _prefix_flat(prim.out_tree, out_dim)
        self.in_avals = _tree_unflatten(prim.in_tree, [_unmapped(a, d, size)
                                                      for a, d in zip(prim.in_avals_flat, self._in_dims)])
        self.out_aval = _tree_unflatten(prim.out_tree, [_unmapped(a, d, size)
                                                       for a, d in zip(prim.out_avals_flat, self._out_dims)])
        self.params = dict(prim=prim, axis_data=axis_data, in_dims=in_dims, out_dim=out_dim)
        super().__init__()

    def _run(self, fn, args, dims):
        """``fn(flat per-example args) -> flat outputs`` over ``args`` batched along ``dims``; the outputs
        come back with their batch axis first."""
        name = self.axis_data.name
        name = None if type(name) is object else name   # (unnamed)
        return _run_batched(fn, self.axis_data.size, name, [None if d is None else 0 for d in dims],
                            [_front(a, d) for a, d in zip(args, dims)])

    def _place(self, outs):
        return [o[0] if d is None else _from_front(o, d) for o, d in zip(outs, self._out_dims)]

    def expand(self, *args):
        p = self.prim
        outs = self._run(lambda ins: _expand_flat(p, ins), _tree_flatten(args)[0], self._in_dims)
        return _tree_unflatten(p.out_tree, self._place(outs))

    def jvp(self, primals, tangents):
        p = self.prim
        n = len(p.in_avals_flat)

        def fn(ins):
            po, to = p.jvp(_tree_unflatten(p.in_tree, ins[:n]), _tree_unflatten(p.in_tree, ins[n:]))
            return _leaves_checked(p.out_tree, po, "primal output") + _up_to(p.out_tree, to, p.out_avals_flat)
        flat = self.in_tree.flatten_up_to(primals) + self.in_tree.flatten_up_to(tangents)
        outs = self._place_twice(self._run(fn, flat, self._in_dims * 2))
        m = len(p.out_avals_flat)
        return _tree_unflatten(p.out_tree, outs[:m]), _tree_unflatten(p.out_tree, outs[m:])

    def _place_twice(self, outs):
        m = len(self._out_dims)
        return self._place(outs[:m]) + self._place(outs[m:])

    def vjp_fwd(self, nzs_in, *args):
        p = self.prim
        store = {}

        def fn(ins):
            ans, res, *rest = p.vjp_fwd(nzs_in, *_tree_unflatten(p.in_tree, ins))
            dyn, store["static"] = _split_residuals(res)
            store["rest"] = rest
            return _leaves_checked(p.out_tree, ans, "primal output") + list(dyn)
        outs = self._run(fn, _tree_flatten(args)[0], self._in_dims)
        m = len(p.out_avals_flat)
        ans = _tree_unflatten(p.out_tree, self._place(outs[:m]))
        return (ans, (outs[m:], store["static"]), *store["rest"])

    def vjp_bwd_retval(self, res, g):
        p = self.prim
        dyn, static = res
        n = len(dyn)

        def fn(ins):
            cts = p.vjp_bwd_retval(static.rebuild(ins[:n]), _tree_unflatten(p.out_tree, ins[n:]))
            return _up_to(p.in_tree, cts, p.in_avals_flat)
        g_flat = _up_to(self.out_tree, g, self.out_avals_flat)
        outs = self._run(fn, list(dyn) + g_flat, [0] * n + self._out_dims)
        cts = []
        for c, d in zip(outs, self._in_dims):
            if d is None:   # an unbatched input: the sum of its per-example cotangents
                c = Zero(c.aval.update(shape=c.aval.shape[1:])) if type(c) is Zero else _ad.hooks["reduce_sum"](c, (0,))
            else:
                c = _from_front(c, d)
            cts.append(c)
        return _tree_unflatten(self.in_tree, cts)

    def batch_dim_rule(self, axis_data, in_dims):
        # the inner primitive's view of the outer axes: this one's own axis removed, then put back in its out
        outer = _prefix_flat(self.in_tree, in_dims)
        inner_view = [d if (d is None or d_ is None) else d - (d_ < d) for d, d_ in zip(outer, self._in_dims)]
        out = _prefix_flat(self.prim.out_tree,
                           self.prim.batch_dim_rule(axis_data, _tree_unflatten(self.prim.in_tree, inner_view)))
        return _tree_unflatten(self.out_tree, [d if (d is None or d_ is None) else d + (d_ < d)
                                              for d, d_ in zip(out, self._out_dims)])

    def __hash__(self):
        return hash((type(self).__name__, self.prim, self.axis_data.size, str(self.in_dims), str(self.out_dim)))


_VmapOf.__name__ = _VmapOf.__qualname__ = "VmapOf"   # JAX's name, as jaxprs print it


# ----------------------------------------------------------------------------------------------- hi-types (names)

class HiType:
    """Base of an abstract hi-type (JAX's ``HiType``): a subclass, hashable and comparable, says which arrays
    make up its values (``lo_ty``), how a value becomes them and back (``lower_val``, ``raise_val``) and,
    for autodiff, its tangent type (``to_tangent_aval``); ``register_hitype`` ties it to its values' class."""
    __slots__ = ()

    def lo_ty(self):
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `lo_ty`")

    def lower_val(self, hi_val):
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `lower_val`")

    def raise_val(self, *lo_vals):
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `raise_val`")

    def to_tangent_aval(self):
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `to_tangent_aval` to be "
                                  "differentiated")

    def shard(self, mesh, manual_axes, check_vma, spec):
        """The type of one block of a value split by ``spec`` (a ``HiPspec``) in ``shard_map``."""
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `shard` to enter a shard_map")

    def unshard(self, mesh, check_vma, spec):
        """The type of the value ``shard_map`` assembles from blocks of this type by ``spec``."""
        raise NotImplementedError(f"hi-type {type(self).__name__} must implement `unshard` to leave a shard_map")


class HiPspec:
    """Base of a hi-type's partition spec (JAX's ``HiPspec``: ``to_lo``, ``to_tangent_spec``, ``to_ct_spec``)."""

    def to_lo(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `to_lo`")

    def to_tangent_spec(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `to_tangent_spec`")

    def to_ct_spec(self):
        raise NotImplementedError(f"{type(self).__name__} must implement `to_ct_spec`")


class TransformedRef:
    """JAX's type of a ``Ref`` seen through indexing (``ref.at[...]``); cranax's ``Ref.at`` raises as JAX
    0.10.2's does, so no value is ever of this type (``isinstance`` checks are False)."""

    def __init__(self, ref, transforms):
        self.ref, self.transforms = ref, transforms


class MutableHiType(HiType):
    """Base of a mutable abstract hi-type (JAX's ``MutableHiType``)."""
    __slots__ = ()


class HiPrimitive:
    """A primitive over hi-types: ``HiPrimitive(name)`` builds; ``bind`` raises NotImplementedError."""

    multiple_results = False

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        _unsupported(f"binding the hi-primitive {self.name!r}")


class AvalQDD:
    """An abstract value with its quasi-dynamic data (JAX's ``AvalQDD``)."""

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD(AvalQDD):
    """An abstract value with mutable quasi-dynamic data."""


class _EffectTypeSet:
    """The set of effect types allowed in control flow (JAX's ``control_flow_allowed_effects``)."""

    def __init__(self):
        self._types = set()

    def add_type(self, t):
        self._types.add(t)

    def contains(self, eff):
        return any(isinstance(eff, t) for t in self._types)


control_flow_allowed_effects = _EffectTypeSet()



def register_hitype(cls, to_aval):
    """Makes ``to_aval(value)`` the abstract value (``jax.typeof``) of the values of ``cls``."""
    _core.hi_avals[cls] = to_aval
