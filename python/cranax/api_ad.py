"""Differentiation API: ``jvp``, ``linearize``, ``vjp``, ``grad``, ``value_and_grad``, ``jacfwd``, ``jacrev``,
``hessian``. Mirrors ``jax``'s functions of the same names.

Reverse mode is JAX's: ``linearize`` (jvp + partial evaluation: the primal computation runs — or is staged —
on the current trace, the tangent computation becomes a linear jaxpr) and then the transpose of that jaxpr
(``ad.backward_pass``). Every function works on the current trace, so they compose with ``jit`` and each
other in any order.
"""
import dataclasses
import functools
import types

import numpy as np

from . import core, dtypes
from .array import Array, TypedNdArray, float0_zeros
from .core import get_aval
from . import lax
from . import numpy as jnp
from .api_vmap import vmap as _vmap_api
from .interpreters import ad
from .interpreters.eval import eval_jaxpr
from .interpreters.ad import Zero
from .interpreters.partial_eval import trace_to_jaxpr
from .primitives import state as _state
from .primitives.elementwise import _convert
from ._pytree import Partial, register_dataclass, register_pytree_node, tree_flatten, tree_map, tree_structure, tree_unflatten

__all__ = ["jvp", "linearize", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian", "hessian",
           "linear_transpose"]


def _flat_fun(fun, in_tree, store, has_aux=False):
    def flat(*leaves):
        args = tree_unflatten(in_tree, list(leaves))
        out = fun(*args)
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError("has_aux=True requires the function to return a pair (output, aux), got "
                                f"{type(out).__name__}")
            out, aux = out
            store["aux"] = aux
        outs, out_tree = tree_flatten(out)
        for o in outs:
            _check_value(o, "output")
        store["tree"] = out_tree
        return outs
    return flat


def _check_value(x, what):
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type (in the function's {what})")\
            from None


def _as_array(x):
    """A leaf given to jvp/vjp/grad: Python scalars and NumPy values stay as they are (weak types kept)."""
    _check_value(x, "input")
    return x


def _to_user(x):
    """A value for the user: Zeros and host scalars become Arrays; tracers and Arrays pass through."""
    return ad.instantiate_array(x)


def _user_out(x):
    """A primal output of jvp/value_and_grad: one the function returned without tracing (a Python or NumPy
    value, or a passed-through input) comes back as it was, as JAX's; TypedScalars become Arrays."""
    return x if isinstance(x, (bool, int, float, complex, np.generic, np.ndarray)) else _to_user(x)


def _tangent_out(t):
    """A computed tangent or cotangent for the user: integer/bool values get JAX's float0 zeros (a
    ``TypedNdArray``, as JAX's)."""
    if type(t) is ad.Zero and not ad.is_float(t.aval.dtype):
        return float0_zeros(t.aval.shape)
    if getattr(t, "dtype", None) == dtypes.float0 and type(t) is not TypedNdArray:
        return float0_zeros(np.shape(t))   # a float0 tangent passed through: JAX hands back its own array
    return _to_user(t)


def _aux_out(aux):
    # JAX hands aux back as the function built it: Python values (e.g. a static count) stay Python values.
    return tree_map(lambda x: x if isinstance(x, (bool, int, float, str)) else _to_user(x), aux)


# ----------------------------------------------------------------------------------------------- jvp

def jvp(fun, primals, tangents, has_aux=False):
    """``(fun(*primals), J·tangents)``. ``primals`` and ``tangents`` are tuples/lists of the same structure
    and dtypes. Mirrors ``jax.jvp``."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree structure; primals "
                        f"have tree structure {p_tree} whereas tangents have tree structure {t_tree}.")
    tans = []
    for p, t in zip(p_leaves, t_leaves):
        pa = get_aval(p)
        t_float0 = getattr(t, "dtype", None) == dtypes.float0   # NumPy float0 zeros: no cranax aval
        ta = None if t_float0 else get_aval(t)
        t_shape, t_dtype = (np.shape(t), dtypes.float0) if t_float0 else (ta.shape, ta.dtype)
        if pa.shape != t_shape:
            raise ValueError(f"jvp called with different primal and tangent shapes;Got primal shape "
                             f"{pa.shape} and tangent shape as {t_shape}")
        if not ad.is_float(pa.dtype) and not t_float0:
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
                            f"case of int/bool primal dtype the tangent dtype must be float0.Got primal dtype "
                            f"{pa.dtype.name} and so expected tangent dtype {dtypes.float0}, but got tangent "
                            f"dtype {t_dtype.name} instead.")
        if ad.is_float(pa.dtype) and pa.dtype != t_dtype:
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
                            f"case of int/bool primal dtype the tangent dtype must be float0.Got primal dtype "
                            f"{pa.dtype.name} and so expected tangent dtype {pa.dtype.name}, but got tangent "
                            f"dtype {t_dtype.name} instead.")
        tans.append(t if ad.is_float(pa.dtype) else Zero(pa))
    store = {}
    flat = _flat_fun(lambda *a: fun(*a), p_tree, store, has_aux)
    p_out, t_out = ad.jvp_flat(flat, [_as_array(p) for p in p_leaves], tans, store, mode=None)
    out_tree = store["tree"]
    po = tree_unflatten(out_tree, [_user_out(p) for p in p_out])
    # an input returned as it came keeps its tangent as given (JAX); computed tangents are Arrays
    passed = {(id(p), id(t)) for p, t in zip(p_leaves, t_leaves)}
    to = tree_unflatten(out_tree, [t if (id(p), id(t)) in passed and getattr(t, "dtype", None) != dtypes.float0
                                   else _tangent_out(t) for p, t in zip(p_out, t_out)])
    if has_aux:
        return po, to, _aux_out(store["aux"])
    return po, to


# ----------------------------------------------------------------------------------------------- linearize / vjp

def _linearize(fun, primals, has_aux, mode="vjp"):
    p_leaves, p_tree = tree_flatten(tuple(primals))
    store = {}
    flat = _flat_fun(lambda *a: fun(*a), p_tree, store, has_aux)
    p_out, linear, nz = ad.linearize_flat(flat, [_as_array(p) for p in p_leaves], store, mode)
    return p_leaves, p_tree, p_out, store, linear, nz


def linearize(fun, *primals, has_aux=False):
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` evaluates the linearized function (a jaxpr; the
    primal work is not redone). Mirrors ``jax.linearize``."""
    p_leaves, p_tree, p_out, store, linear, nz = _linearize(fun, primals, has_aux, "lin")
    out_tree = store["tree"]
    float_in = [ad.has_tangent(get_aval(p)) for p in p_leaves]
    out_avals = [get_aval(p) for p in p_out]

    def f_jvp(*tangents):
        t_leaves, t_tree = tree_flatten(tuple(tangents))
        if t_tree != p_tree:
            raise TypeError(f"linearized function called on tangent values inconsistent with the original "
                            f"primal values: expected {p_tree}, got {t_tree}")
        args = [t for t, f in zip(t_leaves, float_in) if f]
        outs = iter(eval_jaxpr(linear.jaxpr, linear.consts, *args))
        res = [next(outs) if n else Zero(a) for n, a in zip(nz, out_avals)]
        return tree_unflatten(out_tree, [_tangent_out(r) for r in res])

    po = tree_unflatten(out_tree, [_to_user(p) for p in p_out])
    if has_aux:
        return po, f_jvp, _aux_out(store["aux"])
    return po, f_jvp


def _vjp(fun, primals, has_aux):
    """(p_out flat, out_tree, vjp_flat(cts flat) -> in cts flat, p_tree, store)."""
    refs = [p for p in tree_flatten(tuple(primals))[0] if isinstance(p, _state.Ref)]
    if refs:
        # A Ref among the primals (JAX 0.10.2): the function runs with it and its value's uses are not
        # differentiated; the pullback then fails, as JAX's, wanting the cotangent as a Ref.
        return _vjp_with_ref_primals(fun, primals, has_aux, refs[0])
    p_leaves, p_tree, p_out, store, linear, nz = _linearize(fun, primals, has_aux)
    float_in = [ad.has_tangent(get_aval(p)) for p in p_leaves]
    in_avals = [get_aval(p) for p in p_leaves]

    def vjp_flat(cts, consts=None, wanted=None, refs=None):
        """The input cotangents for output cotangents ``cts``, with the residuals ``consts`` (default: the
        linearization's own; a pullback passed through ``jit``/``tree_map`` brings its leaves). ``wanted``:
        per input leaf whether its cotangent is needed (the others come back Zero, not computed). ``refs``:
        per input leaf a ``Ref`` its cotangent is added into by the backward pass (it comes back Zero)."""
        args = [ad.UndefinedPrimal(v.aval) for v in linear.jaxpr.invars]
        cts_nz = [c for c, n in zip(cts, nz) if n]
        lin_wanted = None if wanted is None else [w for w, f in zip(wanted, float_in) if f]
        lin_refs = None if refs is None else [r for r, f in zip(refs, float_in) if f]
        res = iter(ad.backward_pass(linear.jaxpr, linear.consts if consts is None else consts, args, cts_nz,
                                    wanted=lin_wanted, refs=lin_refs))
        return [next(res) if f else Zero(a) for f, a in zip(float_in, in_avals)]
    vjp_flat.residuals = list(linear.consts)
    return p_out, store, vjp_flat, p_tree


def _vjp_with_ref_primals(fun, primals, has_aux, ref):
    p_leaves, p_tree = tree_flatten(tuple(primals))
    pos = [i for i, p in enumerate(p_leaves) if not isinstance(p, _state.Ref)]

    def with_refs(*xs):
        leaves = list(p_leaves)
        for i, x in zip(pos, xs):
            leaves[i] = x
        return fun(*tree_unflatten(p_tree, leaves))
    p_out, store, _, _ = _vjp(with_refs, [p_leaves[i] for i in pos], has_aux)
    aval = get_aval(ref._val)

    def vjp_flat(cts, consts=None, wanted=None, refs=None):
        raise ValueError(f"Expected cotangent type Ref{{{aval.str_short(short_dtypes=False)}}} but got "
                         f"{aval.str_short(short_dtypes=False)}")
    vjp_flat.residuals = []
    return p_out, store, vjp_flat, p_tree


def vjp(fun, *primals, has_aux=False):
    """``(fun(*primals), f_vjp)`` where ``f_vjp(ct)`` gives the cotangents of ``primals`` (a tuple) for an
    output cotangent ``ct`` of the output's structure, and ``f_vjp.with_refs(*targets)(ct)`` says per input
    leaf what to do with its cotangent (``jax.ad.GradValue()``, ``DontWant()``, or a ``Ref`` to add it
    into). Mirrors ``jax.vjp``."""
    p_out, store, vjp_flat, p_tree = _vjp(fun, primals, has_aux)
    out_tree = store["tree"]
    out_avals = [get_aval(p) for p in p_out]

    def cotangents(ct, res, wanted=None, refs=None):
        c_leaves, c_tree = tree_flatten(ct)
        if c_tree != out_tree:
            raise TypeError(f"Tree structure of cotangent input {c_tree}, does not match structure of primal "
                            f"output {out_tree}.")
        for c, a in zip(c_leaves, out_avals):
            ca = get_aval(c)
            if ca.shape != a.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function {ca.shape} must be the same "
                                 f"as the shape of corresponding primal input {a.shape}.")
        cts = vjp_flat(c_leaves, res, wanted, refs)
        if wanted is None and refs is None:
            return [_tangent_out(c) for c in cts]
        # an unwanted cotangent or one added into a ref is dropped: no zeros made for it
        return [None if (wanted is not None and not wanted[i]) or (refs is not None and refs[i] is not None)
                else _tangent_out(c) for i, c in enumerate(cts)]

    f_vjp = VJP(cotangents, vjp_flat.residuals, p_tree, getattr(fun, "__name__", type(fun).__name__),
                tree_flatten(tuple(primals))[0])
    po = tree_unflatten(out_tree, [_to_user(p) for p in p_out])
    if has_aux:
        return po, f_vjp, _aux_out(store["aux"])
    return po, f_vjp


# jax.ad: what ``VJP.with_refs`` is told to do with each input's cotangent, and what it answers.

@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Return this input's cotangent (the default). A leaf. Mirrors ``jax.ad.GradValue``."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """This input's cotangent is not wanted: ``DidntWant()`` stands in its place. A leaf. Mirrors
    ``jax.ad.DontWant``."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """Stands for a cotangent that was added into the ``Ref`` given for it. A pytree with no leaves.
    Mirrors ``jax.ad.GradRef``."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """Stands for a cotangent asked for with ``DontWant()``. A pytree with no leaves. Mirrors
    ``jax.ad.DidntWant``."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class NotNeeded:
    """In a pullback's ``args_res``: an argument leaf the backward pass does not read. A pytree with no
    leaves. Mirrors JAX's ``NotNeeded``."""


# ``jax.ad``: a namespace, as in JAX 0.10.2 (cranax.interpreters.ad is the AD interpreter, another thing).
ad_namespace = types.SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef, GradValue=GradValue)


_VJP_TOO_MANY_ARGS = """
The function returned by `jax.vjp` applied to {} was called with {} arguments,
but functions returned by `jax.vjp` must be called with a single argument
corresponding to the single value returned by the function being differentiated
(even if that returned value is a tuple or other container).

For example, if we have:

  def f(x):
    return (x, x)
  _, f_vjp = jax.vjp(f, 1.0)

the function `f` returns a single tuple as output, and so we call `f_vjp` with a
single tuple as its argument:

  x_bar, = f_vjp((2.0, 2.0))

If we instead call `f_vjp(2.0, 2.0)`, with the values 'splatted out' as
arguments rather than in a tuple, this error can arise.
""".format


class VJP:
    """The pullback ``jax.vjp`` returns: ``f_vjp(ct)`` is a tuple of cotangents in the primals' structure;
    ``f_vjp.with_refs(*targets)`` (targets in the primals' structure: ``GradValue()``, ``DontWant()`` or a
    ``Ref`` of the input's cotangent type, into which the cotangent is added) gives a ``Partial`` taking
    ``ct`` and returning, per input leaf, its cotangent, ``DidntWant()`` or ``GradRef()``. Mirrors
    ``jax._src.api.VJP``.

    As JAX's, it is a pytree whose leaves are the residuals the backward pass reads (the rest, the linear
    jaxpr and the structures, is static): it can be passed into and returned from ``jit`` and mapped over
    with ``tree_map``."""

    __slots__ = ("_cotangents", "args_res", "opaque_residuals", "_where", "in_tree", "_name", "__weakref__")

    def __init__(self, cotangents, res, in_tree, name, primal_leaves=None, where=None):
        self._cotangents = cotangents   # (out_ct, residuals) -> input cotangents, flat
        self.in_tree = in_tree
        self._name = name
        res = list(res)
        if where is None:
            # As JAX's: residuals that are the primals themselves are ``args_res`` (one entry per argument,
            # ``NotNeeded()`` where a leaf is not kept; the user may swap them, e.g. to save memory between
            # the passes), the others ``opaque_residuals``. ``_where``: per residual, ("a", primal leaf) or
            # ("o", opaque position).
            ids = {}
            for i, p in enumerate(primal_leaves or ()):
                if isinstance(p, Array):
                    ids.setdefault(id(p), []).append(i)
            where, used, opaque = [], {}, []
            for r in res:
                pos = ids.get(id(r))
                if pos is not None:   # every argument leaf that is this very array holds it, as in JAX
                    used.update((i, r) for i in pos)
                    where.append(("a", pos[0]))
                else:
                    where.append(("o", len(opaque)))
                    opaque.append(r)
            it = iter([used.get(i, NotNeeded()) for i in range(in_tree.num_leaves)])

            def as_tuples(t):   # JAX's shape: each argument's containers become tuples of their children
                kids = t.children()
                return next(it) if not kids and t.num_leaves == 1 else tuple(as_tuples(c) for c in kids)
            self.args_res = [as_tuples(t) for t in in_tree.children()]
            self.opaque_residuals = opaque
        else:   # rebuilt from its pytree leaves
            self.args_res, self.opaque_residuals = res
        self._where = tuple(where)

    @property
    def _res(self):
        """The residuals in the backward pass's order, read from ``args_res`` and ``opaque_residuals``."""
        args = tree_flatten(list(self.args_res), is_leaf=lambda x: isinstance(x, NotNeeded))[0]
        return [args[i] if k == "a" else self.opaque_residuals[i] for k, i in self._where]

    def __call__(self, out_ct, *extra_args):
        if extra_args:
            raise TypeError(_VJP_TOO_MANY_ARGS(self._name, len(extra_args) + 1))
        return tree_unflatten(self.in_tree, self._cotangents(out_ct, self._res))

    def with_refs(self, *maybe_ct_refs):
        if not maybe_ct_refs:
            targets = [GradValue()] * self.in_tree.num_leaves
        else:
            targets, tree = tree_flatten(maybe_ct_refs, is_leaf=lambda x: isinstance(x, _state.Ref))
            if tree != self.in_tree:
                raise TypeError(f"VJP.with_refs: the targets' structure {tree} is not the primals' {self.in_tree}")
        for t in targets:
            if not isinstance(t, (GradValue, DontWant, _state.Ref)):
                raise TypeError("VJP.with_refs: each target must be jax.ad.GradValue(), jax.ad.DontWant() or a "
                                f"jax.Ref, got {type(t).__name__}")
        return Partial(_vjp_into, self, tuple(targets))

    __hash__ = object.__hash__
    __eq__ = object.__eq__


register_pytree_node(
    VJP,
    lambda f: ((f.args_res, f.opaque_residuals), (f._cotangents, f.in_tree, f._name, f._where)),
    lambda aux, ch: VJP(aux[0], (list(ch[0]), list(ch[1])), aux[1], aux[2], where=aux[3]))


def _vjp_into(f_vjp, targets, out_ct):
    out = []
    wanted = [not isinstance(t, DontWant) for t in targets]
    # a Ref target is handed to the backward pass, which adds each contribution into it where it arises
    # (a jit's transpose takes the ref and writes only the slice it touches), as JAX's RefAccum
    refs = [t if isinstance(t, _state.Ref) else None for t in targets]
    for ct, t in zip(f_vjp._cotangents(out_ct, f_vjp._res, wanted, refs), targets):
        if isinstance(t, DontWant):
            out.append(DidntWant())
        elif isinstance(t, _state.Ref):
            out.append(GradRef())
        else:
            out.append(ct)
    return tree_unflatten(f_vjp.in_tree, out)


# ----------------------------------------------------------------------------------------------- grad

def _argnums_tuple(argnums):
    if isinstance(argnums, int):
        return (argnums,), True
    argnums = tuple(argnums)
    for a in argnums:
        if not isinstance(a, int):
            raise TypeError(f"argnums must be an int or a tuple of ints, got {argnums!r}")
    return argnums, False


def _check_input_dtype(x, allow_int, what, holomorphic=False):
    dt = ad._tangent_aval(get_aval(x)).dtype
    if holomorphic and dt.kind != "c":
        raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but got {dt.name}.")
    if ad.is_float(dt):
        return
    if not allow_int:
        raise TypeError(f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                        f"np.inexact), but got {dt.name}. If you want to use Boolean- or integer-valued inputs, "
                        f"use vjp or set allow_int to True.")


def _check_output_dtype(x, holomorphic, what):
    """JAX's checks of a reverse-mode output: complex only with ``holomorphic``, otherwise real floating."""
    dt = get_aval(x).dtype
    if holomorphic:
        if dt.kind != "c":
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex dtype, but got "
                            f"{dt.name}.")
    elif dt.kind == "c":
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {dt.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        f"differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
                        f"directly.")
    elif not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"{what} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                        f"but got {dt.name}. For differentiation of functions with integer outputs, use jax.vjp "
                        f"directly.")


def _check_jacfwd_input(x, holomorphic):
    dt = get_aval(x).dtype
    if holomorphic:
        if dt.kind != "c":
            raise TypeError(f"jacfwd with holomorphic=True requires inputs with complex dtype, but got {dt.name}.")
    elif not dtypes.issubdtype(dt, np.floating):
        raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                        f"got {dt.name}. For holomorphic differentiation, pass holomorphic=True. For "
                        f"differentiation of non-holomorphic functions involving complex inputs or integer inputs, "
                        f"use jax.jvp directly.")


def _check_jacfwd_output(x, holomorphic):
    dt = get_aval(x).dtype
    if holomorphic and dt.kind != "c":
        raise TypeError(f"jacfwd with holomorphic=True requires outputs with complex dtype, but got {dt.name}.")


def _one_like(x):
    a = get_aval(x)
    return core.typed_scalar(1, a.dtype, a.weak_type) if a.ndim == 0 else ad._lax().full(a.shape, 1, a.dtype)


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """A function returning ``(fun(*args), gradient)``: the gradient of the scalar ``fun`` with respect to
    the arguments ``argnums`` (pytrees allowed). Mirrors ``jax.value_and_grad``."""
    nums, single = _argnums_tuple(argnums)

    @functools.wraps(fun)
    def vag(*args, **kwargs):
        for a in nums:
            if not -len(args) <= a < len(args):
                raise TypeError(f"differentiating with respect to argnums={argnums} requires at least "
                                f"{max(nums) + 1} positional arguments to be passed by the caller, but got only "
                                f"{len(args)} positional arguments.")
        norm = [a % len(args) for a in nums]
        dyn = [args[i] for i in norm]
        for d in dyn:
            for leaf in tree_flatten(d)[0]:
                if not isinstance(leaf, _state.Ref):   # a Ref's pullback fails later, with JAX's error
                    _check_input_dtype(leaf, allow_int, "grad", holomorphic)

        def f_part(*dyn_args):
            full = list(args)
            for i, v in zip(norm, dyn_args):
                full[i] = v
            return fun(*full, **kwargs)

        p_out, store, vjp_flat, p_tree = _vjp(f_part, dyn, has_aux)
        out_tree = store["tree"]
        if len(p_out) != 1 or out_tree != tree_structure(0):
            if len(p_out) == 1:
                ans = p_out[0]
            else:
                raise TypeError(f"Gradient only defined for scalar-output functions. Output was "
                                f"{tree_unflatten(out_tree, [get_aval(p).str_short() for p in p_out])}.")
        ans = p_out[0]
        aval = get_aval(ans)
        if aval.shape != ():
            raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {aval.shape}.")
        _check_output_dtype(ans, holomorphic, "grad")
        cts = vjp_flat([_one_like(ans)])
        g = tree_unflatten(p_tree, [_tangent_out(c) for c in cts])
        g = g[0] if single else tuple(g)
        value = _user_out(ans)
        if has_aux:
            return (value, _aux_out(store["aux"])), g
        return value, g
    return vag


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of the scalar-valued ``fun`` with respect to argument(s) ``argnums`` (an int or a tuple;
    pytrees of float arrays). With ``has_aux`` ``fun`` returns ``(value, aux)`` and the result is
    ``(gradient, aux)``. Mirrors ``jax.grad``."""
    vag = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def grad_f(*args, **kwargs):
        if has_aux:
            (_, aux), g = vag(*args, **kwargs)
            return g, aux
        _, g = vag(*args, **kwargs)
        return g
    return grad_f


# ----------------------------------------------------------------------------------------------- jacobians

def _std_basis(aval):
    """The ``aval.size`` one-hot arrays of ``aval``'s shape and dtype (as one stacked array)."""
    n = aval.size
    return jnp.reshape(jnp.eye(n, dtype=aval.dtype), (n,) + aval.shape)


def _stack(xs):
    """Stacks same-shape values along a new leading axis with selects (works for tracers of any trace)."""
    xs = [ad.instantiate_zeros(x) if type(x) is Zero else x for x in xs]
    a = get_aval(xs[0])
    n = len(xs)
    shape = (n,) + a.shape
    dims = tuple(range(1, len(shape)))
    out = None
    idx = lax.broadcasted_iota(np.int32, shape, 0)
    for i, x in enumerate(xs):
        xb = lax.broadcast_in_dim(x, shape, dims)
        if out is None:
            out = xb
        else:
            out = lax.select(lax.eq(idx, lax.full(shape, i, np.int32)), xb, out)
    return out


def _possible_downcast(x, example):
    """``x`` as the dtype and weak type of the aval ``example`` (a complex ``x`` for a real ``example`` keeps
    its real part), as JAX's jacobians give each block the type of its input (jacrev) or output (jacfwd)."""
    xa = get_aval(x)
    if xa.dtype.kind == "c" and example.dtype.kind != "c":
        x = lax.real(x)
    return _convert(x, example.dtype, example.weak_type)


def _dyn_args(args, nums):
    norm = [a % len(args) for a in nums]
    return norm, [args[i] for i in norm]


def _rebuild_with_nones(in_tree):
    """JAX's jacfwd/jacrev check the inputs' dtypes with a ``tree_map`` whose results are None: a custom node
    whose unflatten rejects None (the custom-pytrees guide's ``jnp.asarray`` in ``__init__``) fails there,
    with its own error, before anything is differentiated. The same rebuild here gives the same error."""
    tree_unflatten(in_tree, [None] * in_tree.num_leaves)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of ``fun`` by forward mode (one jvp per input element, batched with ``vmap``). Output
    leaves have shape ``out.shape + in.shape``. Mirrors ``jax.jacfwd``."""
    nums, single = _argnums_tuple(argnums)

    def jac(*args, **kwargs):
        norm, dyn = _dyn_args(args, nums)
        in_leaves, in_tree = tree_flatten(tuple(dyn))
        for leaf in in_leaves:
            _check_jacfwd_input(leaf, holomorphic)
        _rebuild_with_nones(in_tree)

        def f_flat(*leaves):
            full = list(args)
            for i, v in zip(norm, tree_unflatten(in_tree, list(leaves))):
                full[i] = v
            return fun(*full, **kwargs)

        avals = [get_aval(x) for x in in_leaves]
        # One pushforward per element of the flattened inputs.
        cols = []   # per input leaf: list of (out pytree of tangents)
        vmap = _vmap_api
        out_store = {}
        for k, a in enumerate(avals):
            basis = _std_basis(a)

            def push(t, k=k):
                tans = [t if j == k else Zero(b) for j, b in enumerate(avals)]
                res = jvp(f_flat, tuple(in_leaves), tuple(tans), has_aux=has_aux)
                out_store["primal"] = res[0]
                if has_aux:
                    out_store["aux"] = res[2]
                return res[1]
            if vmap is not None and a.size > 0:
                stacked = vmap(push)(basis)   # leaves: (n,) + out.shape
                out_leaves, out_tree = tree_flatten(stacked)
            else:
                per = [push(basis[i]) for i in range(a.size)]
                out_tree = tree_structure(per[0]) if per else None
                out_leaves = [_stack([tree_flatten(p)[0][j] for p in per])
                              for j in range(len(tree_flatten(per[0])[0]))] if per else []
            cols.append((out_leaves, out_tree))
        out_tree = next(t for _, t in cols if t is not None)
        for ls, _ in cols[:1]:
            for leaf in ls:
                _check_jacfwd_output(leaf, holomorphic)
        n_out = out_tree.num_leaves
        out_avals = [get_aval(p) for p in tree_flatten(out_store["primal"])[0]]
        jac_leaves = []
        for j in range(n_out):
            per_in = []
            for (ls, _), a in zip(cols, avals):
                x = ls[j]                               # (n,) + out_shape
                xa = get_aval(x)
                out_shape = xa.shape[1:]
                perm = tuple(range(1, xa.ndim)) + (0,)
                x = lax.transpose(x, perm)              # out_shape + (n,)
                per_in.append(_possible_downcast(lax.reshape(x, out_shape + a.shape), out_avals[j]))
            jac_leaves.append(tree_unflatten(in_tree, per_in))   # a tuple over argnums
        res = tree_unflatten(out_tree, [jl[0] if single else jl for jl in jac_leaves])
        if has_aux:
            return res, out_store["aux"]
        return res
    return jac


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of ``fun`` by reverse mode (one vjp per output element, batched with ``vmap``). Output
    leaves have shape ``out.shape + in.shape``. Mirrors ``jax.jacrev``."""
    nums, single = _argnums_tuple(argnums)

    def jac(*args, **kwargs):
        norm, dyn = _dyn_args(args, nums)
        in_leaves, in_tree = tree_flatten(tuple(dyn))
        for leaf in in_leaves:
            _check_input_dtype(leaf, allow_int, "jacrev", holomorphic)
        _rebuild_with_nones(in_tree)

        def f_part(*leaves):
            full = list(args)
            for i, v in zip(norm, tree_unflatten(in_tree, list(leaves))):
                full[i] = v
            return fun(*full, **kwargs)

        p_out, store, vjp_flat, _ = _vjp(f_part, in_leaves, has_aux)
        out_tree = store["tree"]
        out_avals = [get_aval(p) for p in p_out]
        for p in p_out:
            _check_output_dtype(p, holomorphic, "jacrev")
        in_avals = [get_aval(x) for x in in_leaves]
        vmap = _vmap_api
        jac_leaves = []   # per output leaf: list per input leaf
        for j, oa in enumerate(out_avals):
            basis = _std_basis(oa)

            def pull(c, j=j):
                cts = [c if i == j else Zero(b) for i, b in enumerate(out_avals)]
                return [ad.instantiate_zeros(x) for x in vjp_flat(cts)]
            if vmap is not None and oa.size > 0:
                rows = vmap(pull)(basis)                   # per input leaf: (n_out,) + in_shape
            else:
                per = [pull(basis[i]) for i in range(oa.size)]
                rows = [_stack([p[i] for p in per]) for i in range(len(in_avals))]
            jac_leaves.append([_possible_downcast(lax.reshape(r, oa.shape + ia.shape), ia)
                               for r, ia in zip(rows, in_avals)])
        if single:
            res = tree_unflatten(out_tree, [tree_unflatten(in_tree, jl)[0] for jl in jac_leaves])
        else:
            res = tree_unflatten(out_tree, [tuple(tree_unflatten(in_tree, jl)) for jl in jac_leaves])
        if has_aux:
            return res, _aux_out(store["aux"])
        return res
    return jac


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """``jacfwd(jacrev(fun))``. Mirrors ``jax.hessian``."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)


def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of ``fun``, a function linear in its arguments, at arguments shaped like ``primals``
    (arrays or ``ShapeDtypeStruct``s): ``f_t = linear_transpose(fun, *primals)``; ``f_t(ct)`` (``ct`` shaped as
    ``fun``'s output) returns a tuple with one cotangent per primal. TypeError for mixed float/integer inputs
    or outputs, or a cotangent of another structure or type. Mirrors ``jax.linear_transpose``."""
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    leaves, in_tree = tree_flatten(primals)
    in_avals = [core.ShapedArray(tuple(x.shape), np.dtype(x.dtype), getattr(x, "weak_type", False))
                if not isinstance(x, (int, float, complex, bool)) else get_aval(x) for x in leaves]
    in_dtypes = [a.dtype for a in in_avals]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in in_dtypes)
            or all(dtypes.issubdtype(d, np.integer) for d in in_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {in_dtypes}.")
    store = {}
    closed = trace_to_jaxpr(_flat_fun(fun, in_tree, store), in_avals)
    out_tree = store["tree"]
    out_avals = closed.out_avals
    out_dtypes = [a.dtype for a in out_avals]
    if not (all(dtypes.issubdtype(d, np.inexact) for d in out_dtypes + in_dtypes)
            or all(dtypes.issubdtype(d, np.integer) for d in out_dtypes + in_dtypes)):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or complex], and integer -> "
                        f"integer functions, but got {in_dtypes} -> {out_dtypes}.")

    def transposed_fun(consts, out_cotangent):
        out_cts, out_tree2 = tree_flatten(out_cotangent)
        if out_tree != out_tree2:
            raise TypeError(f"cotangent tree does not match function output, expected {out_tree} but got "
                            f"{out_tree2}")
        cts_avals = [get_aval(c) for c in out_cts]
        if any(a.shape != b.shape or a.dtype != b.dtype for a, b in zip(out_avals, cts_avals)):
            raise TypeError(f"cotangent type does not match function output, expected {list(out_avals)} but got "
                            f"{cts_avals}")
        dummies = [ad.UndefinedPrimal(a) for a in in_avals]
        in_cts = ad.backward_pass(closed.jaxpr, consts, dummies, out_cts)
        return tree_unflatten(in_tree, [_to_user(c) for c in in_cts])
    return Partial(transposed_fun, list(closed.consts))
