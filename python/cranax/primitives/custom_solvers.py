"""``lax.custom_linear_solve`` and ``lax.custom_root``: solves whose derivatives come from the implicit
function theorem at the solution instead of from differentiating through the solver (which may be a
``while_loop``, not reverse-differentiable). Mirrors ``jax.lax.custom_linear_solve`` / ``custom_root``.

``linear_solve_p`` carries four const-free jaxprs (``matvec``, ``vecmat``, ``solve``, ``transpose_solve``;
the last two ``None`` without a transpose solver) and takes their consts, then ``b``, as operands. It
evaluates (and lowers, by inlining) ``solve``; its jvp solves ``matvec(x_dot) = b_dot - matvec_dot(x)``
with the same primitive, which is linear in the right-hand side; its transpose swaps the roles of
(``matvec``, ``solve``) and (``vecmat``, ``transpose_solve``). ``custom_root`` is a ``custom_jvp`` whose rule
solves the linearized system ``df/dx(x*) x_dot = -df/dparams(x*) params_dot`` with ``tangent_solve``.
"""
from collections import namedtuple

from ..core import Primitive, get_aval
from ..interpreters import ad as _ad
from ..interpreters import batching as _batching
from ..interpreters.eval import eval_jaxpr
from ..jaxpr import ClosedJaxpr, Jaxpr
from .._pytree import tree_flatten, tree_leaves, tree_unflatten
from ..custom_derivatives import custom_jvp
from . import elementwise as _ew
from .control_flow import trace_closed

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


class _Solve(namedtuple("_Solve", "matvec vecmat solve transpose_solve")):
    """One entry per role: the jaxprs, or the numbers of their consts."""

    def transpose(self):
        return _Solve(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _split(args, lengths):
    out, i = [], 0
    for n in lengths:
        out.append(list(args[i:i + n]))
        i += n
    return _Solve(*out), list(args[i:])


def _call(closed, *args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _shapes_text(xs):
    return [tuple(get_aval(x).shape) for x in xs]


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    if has_aux:
        children = actual_tree.children()
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, but a pytree tuple "
                             f"with auxiliary output was expected because has_aux was set to True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got {actual_tree} "
                        f"and {expected_tree}.")


def _trace(fun, tree, avals, name, expected, has_aux):
    """Traces ``fun(unflatten(tree, xs))`` to ``(closed, consts, out_tree, n_aux)``, checking that its
    (main) output has the leaves' shapes ``expected``."""
    store = {}

    def flat(*xs):
        out = fun(tree_unflatten(tree, list(xs)))
        main = out[0] if has_aux and isinstance(out, (tuple, list)) and len(out) == 2 else out
        got = _shapes_text(tree_leaves(main))
        if got != expected:
            raise ValueError(f"{name}() output shapes must match b, got {got} and {expected}")
        leaves, store["tree"] = tree_flatten(out)
        return leaves
    closed, consts = trace_closed(flat, avals)
    out_tree = store["tree"]
    _check_tree(name, "b", out_tree, tree, has_aux)
    n_aux = len(closed.out_avals) - tree.num_leaves
    return closed, consts, out_tree, n_aux


# ----------------------------------------------------------------------------------------------- linear_solve_p

linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.operands_reach_user_code = True


def _ls_abstract(*args, const_lengths, jaxprs):
    return list(jaxprs.solve.out_avals)


def _ls_impl(*args, const_lengths, jaxprs):
    params, b = _split(args, const_lengths)
    return list(_call(jaxprs.solve, *params.solve, *b))


def _ls_inline(eqn):
    # lowering: the equation is the solve jaxpr on its consts and b
    params, b = _split(eqn.invars, eqn.params["const_lengths"])
    return eqn.params["jaxprs"].solve, params.solve + b


linear_solve_p.abstract_eval = _ls_abstract
linear_solve_p.impl = _ls_impl
linear_solve_p.inline_jaxpr = staticmethod(_ls_inline)
linear_solve_p.pp_params = lambda eqn: [("const_lengths", tuple(eqn.params["const_lengths"])),
                                        ("jaxprs", eqn.params["jaxprs"])]


def _ls_jvp(primals, tangents, const_lengths, jaxprs):
    # A x = b with A = matvec(params): A x_dot = b_dot - A_dot x; solve's own consts get no tangent
    params, b = _split(primals, const_lengths)
    params_dot, b_dot = _split(tangents, const_lengths)
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    nb = len(b)
    x, aux = outs[:nb], outs[nb:]
    if all(type(t) is _ad.Zero for t in params_dot.matvec):
        rhs_from_a = None
    else:
        _, rhs_from_a = _ad.jvp_flat(lambda *c: _call(jaxprs.matvec, *c, *x), params.matvec, params_dot.matvec)
    if all(type(t) is _ad.Zero for t in b_dot) and (rhs_from_a is None or
                                                  all(type(t) is _ad.Zero for t in rhs_from_a)):
        x_dot = [_ad.Zero(get_aval(v)) for v in x]
    else:
        rhs = []
        for k in range(nb):
            r = _ad.instantiate_zeros(b_dot[k]) if type(b_dot[k]) is not _ad.Zero else None
            if rhs_from_a is not None and type(rhs_from_a[k]) is not _ad.Zero:
                r = _ew.neg(rhs_from_a[k]) if r is None else _ew.sub(r, rhs_from_a[k])
            rhs.append(_ad.instantiate_zeros(_ad.Zero(get_aval(x[k]))) if r is None else r)
        x_dot = linear_solve_p.bind(*_flat(params), *rhs, const_lengths=const_lengths, jaxprs=jaxprs)[:nb]
    return outs, list(x_dot) + [_ad.Zero(get_aval(a)) for a in aux]


def _flat(params):
    return [v for group in params for v in group]


def _ls_transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                        "custom_linear_solve")
    params, b = _split(args, const_lengths)
    if any(_ad.is_undefined(v) for v in _flat(params)):
        raise NotImplementedError("custom_linear_solve is linear in b only; its matvec/solve operands cannot be "
                                  "transposed")
    nb = len(b)
    ct_x = [_ad.instantiate_zeros(c) for c in cts[:nb]]
    ct_b = linear_solve_p.bind(*_flat(params.transpose()), *ct_x, const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())[:nb]
    return [None] * sum(const_lengths) + list(ct_b)


def _batch_all(closed, size):
    # every input batched along a new leading axis: the batched jaxpr takes its new consts first
    if closed is None:
        return None, []
    j, consts, _ = _batching.batch_jaxpr(closed, size, [0] * len(closed.in_avals), [True] * len(closed.out_avals))
    return j, list(consts)


def _ls_batch(vals, dims, const_lengths, jaxprs):
    size = _batching.axis_size_of(vals, dims)
    vals = [_batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
    params, b = _split(vals, const_lengths)
    new_j, new_p = [], []
    for closed, ps in zip(jaxprs, params):
        j, extra = _batch_all(closed, size)
        new_j.append(j)
        new_p.append(extra + ps)
    outs = linear_solve_p.bind(*_flat(new_p), *b, const_lengths=_Solve(*[len(p) for p in new_p]),
                               jaxprs=_Solve(*new_j))
    return outs, [0] * len(outs)


_ad.jvp_rules[linear_solve_p] = _ls_jvp
_ad.transpose_rules[linear_solve_p] = _ls_transpose
_batching.batching_rules[linear_solve_p] = _ls_batch


def _transpose_linear(closed, nconsts, in_avals):
    """``vecmat``: the transpose of the linear ``matvec`` jaxpr (consts first, then x), as a const-free
    jaxpr of (consts, y)."""
    out_avals = closed.out_avals

    def vecmat(*args):
        consts, ys = args[:nconsts], args[nconsts:]
        undefined = [_ad.UndefinedPrimal(a) for a in in_avals]
        cts = _ad.backward_pass(closed.jaxpr, closed.consts, list(consts) + undefined, list(ys))[nconsts:]
        return [_ad.instantiate_zeros(c) for c in cts]
    j, extra = trace_closed(vecmat, list(closed.in_avals[:nconsts]) + list(out_avals))
    return j, extra


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """``solve(matvec, b)`` (``x`` with ``matvec(x) == b``, not checked) with derivatives defined implicitly at
    the solution: forward mode through ``solve`` again, reverse mode through ``transpose_solve(vecmat, ct)``
    where ``vecmat`` is ``matvec``'s transpose (found by transposing it; ``symmetric=True`` uses ``solve``
    and ``matvec``). ``b``: any pytree of arrays; ``matvec``/``solve`` must map it to the same structure and
    shapes (else TypeError/ValueError). ``has_aux``: the solvers return ``(x, aux)`` and so does this.
    Reverse mode without a transpose solver raises TypeError. Mirrors ``jax.lax.custom_linear_solve``."""
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    avals = [get_aval(v) for v in b_leaves]
    expected = [tuple(a.shape) for a in avals]
    mv, mv_consts, _, _ = _trace(matvec, tree, avals, "matvec", expected, False)
    sv, sv_consts, out_tree, n_aux = _trace(lambda x: solve(matvec, x), tree, avals, "solve", expected, has_aux)
    if transpose_solve is None:
        vm = ts = None
        vm_consts = ts_consts = []
    else:
        if symmetric:
            vm, vm_consts = mv, mv_consts
            vecmat = matvec
        else:
            vm0, vm_consts = _transpose_linear(mv, len(mv_consts), avals)
            vm = vm0
            vm_call_consts = list(vm_consts) + list(mv_consts)

            def vecmat(y):
                ys = tree_leaves(y)
                return tree_unflatten(tree, _call(vm, *vm_call_consts, *ys))
            vm_consts = vm_call_consts
        ts, ts_consts, ts_tree, ts_aux = _trace(lambda x: transpose_solve(vecmat, x), tree, avals,
                                                "transpose_solve", expected, has_aux)
        if ts_aux != n_aux:
            raise TypeError("transpose_solve() must return auxiliary outputs of the same structure as solve()")
    lengths = _Solve(len(mv_consts), len(vm_consts), len(sv_consts), len(ts_consts))
    outs = linear_solve_p.bind(*mv_consts, *vm_consts, *sv_consts, *ts_consts, *b_leaves,
                               const_lengths=lengths, jaxprs=_Solve(mv, vm, sv, ts))
    return tree_unflatten(out_tree, outs)


# ----------------------------------------------------------------------------------------------- custom_root

def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """``solve(f, initial_guess)``, a root ``x*`` of ``f`` (``f(x*) == 0``, not checked), differentiable in the
    values ``f`` closes over by implicit differentiation: ``x_dot = -tangent_solve(g, df/dparams params_dot)``
    with ``g`` the linearization of ``f`` at ``x*`` (``tangent_solve(g, y)`` solves ``g(x) = y``, e.g.
    ``lambda g, y: y / g(1.0)`` for scalars). ``f`` must map ``initial_guess``'s pytree to the same structure
    (TypeError otherwise); ``has_aux``: ``solve`` returns ``(x, aux)`` and so does this (aux gets no
    gradient). Mirrors ``jax.lax.custom_root``."""
    g_leaves, tree = tree_flatten(initial_guess)
    avals = [get_aval(v) for v in g_leaves]
    store = {}

    def f_flat(*xs):
        out = f(tree_unflatten(tree, list(xs)))
        leaves, store["f"] = tree_flatten(out)
        return leaves
    fj, f_consts = trace_closed(f_flat, avals)
    _check_tree("f", "initial_guess", store["f"], tree)

    def solve_flat(*xs):
        out = solve(f, tree_unflatten(tree, list(xs)))
        leaves, store["solve"] = tree_flatten(out)
        return leaves
    sj, s_consts = trace_closed(solve_flat, avals)
    _check_tree("solve", "initial_guess", store["solve"], tree, has_aux)
    out_tree = store["solve"]

    def linearize_and_solve(fp, xs, bs):
        # tangent_solve(g, b) with g the linearization of f (at these consts) around x
        _, lin, nz = _ad.linearize_flat(lambda *v: _call(fj, *fp, *v), xs)

        def g(t):
            ts = [v for v, keep in zip(tree_leaves(t), _float_mask(avals)) if keep]
            outs = iter(_call(lin, *ts))
            return tree_unflatten(tree, [next(outs) if k else _ad.instantiate_zeros(_ad.Zero(a))
                                         for k, a in zip(nz, avals)])
        out = tangent_solve(g, tree_unflatten(tree, bs))
        leaves, store["tangent"] = tree_flatten(out)
        return leaves

    nf = len(f_consts)

    def root(*args):
        return _call(sj, *args[nf:nf + len(s_consts)], *args[nf + len(s_consts):])

    root_cj = custom_jvp(root)

    @root_cj.defjvp
    def _root_jvp(primals, tangents):
        sol = root_cj(*primals)
        n = tree.num_leaves
        x, aux = sol[:n], sol[n:]
        fp, fd = list(primals[:nf]), list(tangents[:nf])
        _, rhs = _ad.jvp_flat(lambda *c: _call(fj, *c, *x), fp, fd)
        rhs = [_ad.instantiate_zeros(r) if type(r) is _ad.Zero else r for r in rhs]
        x_dot = linearize_and_solve(fp, x, rhs)
        if store["tangent"] != tree:
            raise TypeError(f"tangent_solve() output pytree structure must match x, got {store['tangent']} and "
                            f"{tree}.")
        x_dot = [_ew.neg(v) for v in x_dot]
        return list(sol), x_dot + [_ad.instantiate_zeros(_ad.Zero(get_aval(a))) for a in aux]

    outs = root_cj(*f_consts, *s_consts, *g_leaves)
    return tree_unflatten(out_tree, outs)


def _float_mask(avals):
    return [_ad.is_float(a.dtype) for a in avals]
