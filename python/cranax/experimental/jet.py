"""``jet``: Taylor-mode automatic differentiation (higher-order forward mode). Mirrors
``jax.experimental.jet``.

``jet(f, primals, series)`` pushes a truncated Taylor series through ``f``: each argument is the path
``x(t) = x0 + x1 t + x2 t^2/2! + ... + xK t^K/K!`` (``series[i] = [x1, ..., xK]``: the path's derivatives at 0),
and the result is ``f(x(t))``'s derivatives ``[y1, ..., yK]`` at 0, exactly (no finite differences). Internally
the terms are scaled to Taylor coefficients ``x_k / k!`` and each primitive's rule (``jet_rules``) maps input
coefficients to output coefficients with the usual recurrences (Cauchy products for bilinear maps, the
``y' = g(y) x'`` recurrences for ``exp``/``log``/``sin``/``tanh``/powers...).

Calls (``jit``, custom-derivative functions, ``custom_vmap``) are traced through: their function is expanded,
custom rules are not used, as in JAX. A primitive with no rule raises ``NotImplementedError`` naming it (JAX: a
``KeyError``); control flow (``while_loop``, ``scan``, ``cond``) has none, as in JAX.
"""
import math as _math

import numpy as _np

from .. import core as _core
from .. import dtypes as _dtypes
from .. import lax as _lax
from ..core import Tracer as _Tracer, TypedScalar as _TypedScalar, get_aval as _get_aval, set_current_trace as _set_trace
from ..interpreters.eval import eval_jaxpr as _eval_jaxpr
from .._pytree import tree_flatten as _flatten, tree_unflatten as _unflatten
from ..primitives import elementwise as _ew, structural as _st, reductions as _red, library as _lib
from ..primitives import ad_util as _adu
from ..primitives import convolution as _conv

__all__ = ["jet", "jet2", "jet_rules"]

# primitive -> rule(primals, coeffs, **params) -> (primal_out, coeffs_out). ``coeffs[i]`` is None (operand i
# is constant along the path) or the list [c1, ..., cK] of its Taylor coefficients (c_k = x_k / k!), a
# coefficient possibly None (zero); the rule returns a list of K coefficients (None: zero) per output, or
# None for an output that is constant. Multiple-result primitives return lists of both.
jet_rules = {}


def _zeros(x):
    a = _get_aval(x)
    return _lax.full(a.shape, 0, a.dtype)


def _terms(x, c, order):
    """The full coefficient list [c0 = primal, c1, ..., cK] with zeros instantiated."""
    out = [x]
    for k in range(order):
        t = None if c is None else c[k]
        out.append(_zeros(x) if t is None else t)
    return out


# ----------------------------------------------------------------------------------------------- the trace

class JetTracer(_Tracer):
    """A value on a Taylor path: ``primal`` and its coefficients ``coeffs`` (scaled terms)."""

    __slots__ = ("primal", "coeffs")

    def __init__(self, trace, primal, coeffs):
        self._trace = trace
        self.primal = primal
        self.coeffs = coeffs

    @property
    def aval(self):
        return _get_aval(self.primal)

    def _concrete(self):
        p = self.primal
        return p._concrete() if isinstance(p, _Tracer) else _np.asarray(p)


class JetTrace(_core.Trace):
    """Taylor mode to ``order``; rules run on ``parent``."""

    def __init__(self, parent, order):
        super().__init__()
        self.parent = parent
        self.order = order

    def unpack(self, x):
        if isinstance(x, JetTracer) and x._trace is self:
            return x.primal, x.coeffs
        if isinstance(x, _Tracer) and not x._trace.valid:
            raise _core.UnexpectedTracerError(_core._escaped_tracer_message(x))
        return x, None

    def wrap(self, p, c):
        if c is None or all(t is None for t in c):
            return p
        return JetTracer(self, p, c)

    def process_primitive(self, prim, args, params):
        if not self.valid:
            raise _core.UnexpectedTracerError("A jet trace was used after its function returned.")
        primals, coeffs = zip(*[self.unpack(a) for a in args]) if args else ((), ())
        inner = _CALL_JAXPR.get(prim.name)
        if inner is not None and any(c is not None for c in coeffs):
            # a call: its function is traced through on this trace (custom rules are not Taylor rules)
            closed = params[inner]
            return _eval_jaxpr(closed.jaxpr, closed.consts, *args)
        with _set_trace(self.parent):
            if all(c is None for c in coeffs):
                return prim.bind(*primals, **params)
            rule = jet_rules.get(prim)
            if rule is None:
                if prim in _ZERO:
                    return prim.bind(*primals, **params)
                raise NotImplementedError(f"jet: no Taylor rule for primitive '{prim.name}'")
            out, out_c = rule(list(primals), list(coeffs), **params)
        if prim.multiple_results:
            return [self.wrap(o, c) for o, c in zip(out, out_c)]
        return self.wrap(out, out_c)

    def __repr__(self):
        return "JetTrace"


# the call primitives and the param holding their function's (const-free) jaxpr
_CALL_JAXPR = {"jit": "jaxpr", "custom_jvp_call": "call_jaxpr", "custom_vjp_call": "call_jaxpr",
               "custom_vmap_call": "call", "remat": "jaxpr", "checkpoint": "jaxpr"}

# primitives whose outputs are piecewise constant: no coefficients
_ZERO = {_ew.sign_p, _ew.floor_p, _ew.ceil_p, _ew.is_finite_p, _ew.eq_p, _ew.ne_p, _ew.lt_p, _ew.le_p, _ew.gt_p,
         _ew.ge_p, _ew.not_p, _ew.and_p, _ew.or_p, _ew.xor_p, _red.argmax_p, _red.argmin_p}
for _n in ("round_p", "stop_gradient_p", "shift_left_p", "shift_right_logical_p", "shift_right_arithmetic_p",
           "bitcast_convert_type_p"):
    if hasattr(_ew, _n):
        _ZERO.add(getattr(_ew, _n))


# ----------------------------------------------------------------------------------------------- rules

def _linear(prim, linear_positions=None):
    """A primitive linear in the operands at ``linear_positions`` (all by default) jointly, the others
    constant along the path: each coefficient is the primitive applied to the operands' coefficients."""
    def rule(primals, coeffs, **params):
        n = len(primals)
        lin = range(n) if linear_positions is None else linear_positions(n)
        for i, c in enumerate(coeffs):
            if i not in lin and c is not None:
                raise NotImplementedError(f"jet: operand {i} of '{prim.name}' must be constant along the path")
        out = prim.bind(*primals, **params)
        order = len(next(c for c in coeffs if c is not None))
        res = []
        for k in range(order):
            ts = [coeffs[i][k] if i in lin and coeffs[i] is not None else None for i in range(n)]
            if all(t is None for t in ts):
                res.append(None)
                continue
            ops = [(t if t is not None else _zeros(p)) if i in lin else p
                   for i, (p, t) in enumerate(zip(primals, ts))]
            res.append(prim.bind(*ops, **params))
        return out, res
    return rule


def _all(n):
    return range(n)


def _first(n):
    return range(1)


def _not_first(n):
    return range(1, n)


def _first_two(n):
    return range(2)


for _p in (_ew.neg_p, _ew.add_p, _ew.sub_p, _adu.add_any_p, _st.broadcast_in_dim_p, _st.reshape_p, _st.squeeze_p,
           _st.transpose_p, _st.copy_p, _st.slice_p, _st.rev_p, _st.pad_p, _red.reduce_sum_p, _lib.concatenate_p,
           _lib.cumsum_p):
    jet_rules[_p] = _linear(_p)
for _n in ("real_p", "imag_p", "conj_p", "complex_p", "reduce_precision_p"):
    if hasattr(_ew, _n):
        jet_rules[getattr(_ew, _n)] = _linear(getattr(_ew, _n))
jet_rules[_ew.convert_element_type_p] = _linear(_ew.convert_element_type_p)
jet_rules[_lib.dynamic_slice_p] = _linear(_lib.dynamic_slice_p, _first)
jet_rules[_lib.dynamic_update_slice_p] = _linear(_lib.dynamic_update_slice_p, _first_two)
jet_rules[_lib.gather_p] = _linear(_lib.gather_p, _first)
jet_rules[_ew.select_n_p] = _linear(_ew.select_n_p, _not_first)


def _scatter_add_rule(primals, coeffs, **params):
    return _linear(_lib.scatter_add_p, lambda n: (0, 2))(primals, coeffs, **params)


jet_rules[_lib.scatter_add_p] = _scatter_add_rule


def _cauchy(bind, a, b, k):
    """Coefficient k of the product series of full lists ``a``, ``b`` (entries None: zero)."""
    acc = None
    for i in range(k + 1):
        x, y = a[i], b[k - i]
        if x is None or y is None:
            continue
        t = bind(x, y)
        acc = t if acc is None else acc + t
    return acc


def _bilinear(prim):
    def rule(primals, coeffs, **params):
        x, y = primals
        order = len(next(c for c in coeffs if c is not None))
        a = [x] + (list(coeffs[0]) if coeffs[0] is not None else [None] * order)
        b = [y] + (list(coeffs[1]) if coeffs[1] is not None else [None] * order)
        bind = lambda u, v: prim.bind(u, v, **params)   # noqa: E731
        return bind(x, y), [_cauchy(bind, a, b, k) for k in range(1, order + 1)]
    return rule


jet_rules[_ew.mul_p] = _bilinear(_ew.mul_p)
jet_rules[_lib.dot_general_p] = _bilinear(_lib.dot_general_p)


def _full(primals, coeffs, i=0):
    order = len(next(c for c in coeffs if c is not None))
    return _terms(primals[i], coeffs[i], order), order


def _mul(u, v):
    return _ew.mul_p.bind(*_bcast(u, v))


def _bcast(u, v):
    su, sv = _get_aval(u).shape, _get_aval(v).shape
    if su == sv:
        return u, v
    shape = _np.broadcast_shapes(su, sv)
    return (_lax.broadcast_in_dim(u, shape, tuple(range(len(shape) - len(su), len(shape)))) if su != shape else u,
            _lax.broadcast_in_dim(v, shape, tuple(range(len(shape) - len(sv), len(shape)))) if sv != shape else v)


def _exp_series(a, y0, order):
    """y = exp(x) given y0: y_k = (1/k) sum_j j a_j y_{k-j}."""
    y = [y0]
    for k in range(1, order + 1):
        s = sum(_mul(a[j], y[k - j]) * (j / k) for j in range(1, k + 1))
        y.append(s)
    return y


def _exp_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y = _exp_series(a, _lax.exp(a[0]), order)
    return y[0], y[1:]


def _expm1_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y0 = _lax.expm1(a[0])
    e = _exp_series(a, y0 + 1, order)
    return y0, e[1:]


def _log_series(a, y0, order, base0):
    """y = log(x): y_k = (a_k - (1/k) sum_{j<k} j y_j a_{k-j}) / base0 (base0: the path's value at 0)."""
    y = [y0]
    for k in range(1, order + 1):
        s = a[k]
        for j in range(1, k):
            s = s - _mul(y[j], a[k - j]) * (j / k)
        y.append(s / base0)
    return y


def _log_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y = _log_series(a, _lax.log(a[0]), order, a[0])
    return y[0], y[1:]


def _log1p_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y = _log_series(a, _lax.log1p(a[0]), order, a[0] + 1)
    return y[0], y[1:]


def _trig_pair(a, s0, c0, order, sign):
    """s' = c x', c' = sign * s x' (sin/cos: sign -1; sinh/cosh: +1)."""
    s, c = [s0], [c0]
    for k in range(1, order + 1):
        s.append(sum(_mul(a[j], c[k - j]) * (j / k) for j in range(1, k + 1)))
        c.append(sum(_mul(a[j], s[k - j]) * (sign * j / k) for j in range(1, k + 1)))
    return s, c


def _trig(which, sign, f, g):
    def rule(primals, coeffs):
        a, order = _full(primals, coeffs)
        s, c = _trig_pair(a, f(a[0]), g(a[0]), order, sign)
        out = s if which == 0 else c
        return out[0], out[1:]
    return rule


jet_rules[_ew.sin_p] = _trig(0, -1, _lax.sin, _lax.cos)
jet_rules[_ew.cos_p] = _trig(1, -1, _lax.sin, _lax.cos)
jet_rules[_ew.sinh_p] = _trig(0, 1, _lax.sinh, _lax.cosh)
jet_rules[_ew.cosh_p] = _trig(1, 1, _lax.sinh, _lax.cosh)
jet_rules[_ew.exp_p] = _exp_rule
jet_rules[_ew.expm1_p] = _expm1_rule
jet_rules[_ew.log_p] = _log_rule
jet_rules[_ew.log1p_p] = _log1p_rule


def _self_ode(f, g):
    """y = f(x) with y' = g(y) x' where g is a polynomial in y given as a series function: y_k = (1/k) sum_j j
    a_j u_{k-j}, u = g(y) series."""
    def rule(primals, coeffs):
        a, order = _full(primals, coeffs)
        y = [f(a[0])]
        u = [g(y, 0)]
        for k in range(1, order + 1):
            y.append(sum(_mul(a[j], u[k - j]) * (j / k) for j in range(1, k + 1)))
            u.append(g(y, k))
        return y[0], y[1:]
    return rule


def _square_coeff(y, k):
    return sum(_mul(y[i], y[k - i]) for i in range(k + 1))


jet_rules[_ew.tanh_p] = _self_ode(_lax.tanh, lambda y, k: (1 - y[0] * y[0]) if k == 0 else -_square_coeff(y, k))
jet_rules[_ew.logistic_p] = _self_ode(_lax.logistic, lambda y, k: y[k] - _square_coeff(y, k))


def _power_series(a, y0, p, order):
    """y = x^p (p constant): y_k = sum_{i=1..k} (p i - k + i) a_i y_{k-i} / (k a_0)."""
    y = [y0]
    for k in range(1, order + 1):
        s = sum(_mul(a[i], y[k - i]) * (p * i - k + i) for i in range(1, k + 1))
        y.append(s / (a[0] * k))
    return y


def _div_series(a, b, q0, order):
    """q = a / b: q_k = (a_k - sum_{i=1..k} b_i q_{k-i}) / b_0."""
    q = [q0]
    for k in range(1, order + 1):
        s = a[k]
        for i in range(1, k + 1):
            s = s - _mul(b[i], q[k - i])
        q.append(s / b[0])
    return q


def _div_rule(primals, coeffs):
    order = len(next(c for c in coeffs if c is not None))
    a = _terms(primals[0], coeffs[0], order)
    b = _terms(primals[1], coeffs[1], order)
    q = _div_series(a, b, _lax.div(primals[0], primals[1]), order)
    return q[0], q[1:]


jet_rules[_ew.div_p] = _div_rule


def _sqrt_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y = [_lax.sqrt(a[0])]
    for k in range(1, order + 1):
        s = a[k]
        for i in range(1, k):
            s = s - _mul(y[i], y[k - i])
        y.append(s / (2 * y[0]))
    return y[0], y[1:]


def _rsqrt_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    y = _power_series(a, _lax.rsqrt(a[0]), -0.5, order)
    return y[0], y[1:]


def _square_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    return _lax.square(a[0]), [_square_coeff(a, k) for k in range(1, order + 1)]


def _integer_pow_rule(primals, coeffs, y):
    a, order = _full(primals, coeffs)
    out0 = _lax.integer_pow(a[0], y)
    if y == 0:
        return out0, [None] * order
    # repeated Cauchy products (exact at x0 = 0, unlike the power recurrence), then a reciprocal if negative
    r = a
    for _ in range(abs(y) - 1):
        r = [r[0] * a[0]] + [_cauchy(_mul, r, a, k) for k in range(1, order + 1)]
    if y < 0:
        one = [_lax.full_like(a[0], 1)] + [_zeros(a[0])] * order
        r = _div_series(one, r, out0, order)
    return out0, r[1:]


def _pow_rule(primals, coeffs):
    x, p = primals
    order = len(next(c for c in coeffs if c is not None))
    out0 = _lax.pow(x, p)
    if coeffs[1] is None:   # constant exponent: the power recurrence
        if isinstance(p, _TypedScalar):   # (a literal exponent: its value, for the recurrence's arithmetic)
            p = p.val
        a = _terms(x, coeffs[0], order)
        y = _power_series(a, out0, p, order)
        return out0, y[1:]
    # x^p = exp(p log x)
    a = _terms(x, coeffs[0], order)
    L = _log_series(a, _lax.log(x), order, x)
    P = _terms(p, coeffs[1], order)
    E = [_mul(L[0], P[0])] + [_cauchy(_mul, L, P, k) for k in range(1, order + 1)]
    y = _exp_series(E, out0, order)
    return out0, y[1:]


jet_rules[_ew.sqrt_p] = _sqrt_rule
jet_rules[_ew.rsqrt_p] = _rsqrt_rule
jet_rules[_ew.square_p] = _square_rule
jet_rules[_ew.integer_pow_p] = _integer_pow_rule
jet_rules[_ew.pow_p] = _pow_rule


def _abs_rule(primals, coeffs):
    x = primals[0]
    sign = _lax.select(_lax.lt(x, _lax.full_like(x, 0)), _lax.full_like(x, -1), _lax.full_like(x, 1))
    return _lax.abs(x), [None if t is None else sign * t for t in coeffs[0]]


def _choose(pick):
    """max/min: the chosen operand's coefficients; the mean of both where they tie (as JAX)."""
    def rule(primals, coeffs):
        x, y = _bcast(*primals)
        take_x = pick(x, y)
        tie = _lax.eq(x, y)
        order = len(next(c for c in coeffs if c is not None))
        a = _terms(x, coeffs[0] and [None if t is None else _bcast(t, x)[0] for t in coeffs[0]], order)
        b = _terms(y, coeffs[1] and [None if t is None else _bcast(t, y)[0] for t in coeffs[1]], order)
        out = [_lax.select(tie, (a[k] + b[k]) / 2, _lax.select(take_x, a[k], b[k])) for k in range(1, order + 1)]
        return _lax.select(take_x, x, y), out
    return rule


def _reduce_choose(prim):
    """reduce_max/min: the coefficients at the chosen elements, averaged over ties (as JAX)."""
    def rule(primals, coeffs, axes, **params):
        x = primals[0]
        out = prim.bind(x, axes=axes, **params)
        shape = tuple(1 if i in axes else d for i, d in enumerate(_get_aval(x).shape))
        hit = _lax.convert_element_type(_lax.eq(x, _lax.broadcast_in_dim(
            _lax.reshape(out, shape), _get_aval(x).shape, tuple(range(len(shape))))), _get_aval(x).dtype)
        counts = _red.reduce_sum_p.bind(hit, axes=tuple(axes))
        return out, [None if t is None else _red.reduce_sum_p.bind(t * hit, axes=tuple(axes)) / counts
                     for t in coeffs[0]]
    return rule


jet_rules[_red.reduce_max_p] = _reduce_choose(_red.reduce_max_p)
jet_rules[_red.reduce_min_p] = _reduce_choose(_red.reduce_min_p)
jet_rules[_ew.abs_p] = _abs_rule
jet_rules[_ew.max_p] = _choose(_lax.gt)
jet_rules[_ew.min_p] = _choose(_lax.lt)


def _composite(fun):
    """A primitive's rule as the jet of ``fun`` (other primitives) on the same coefficients, as JAX's
    ``def_comp`` and its cumulative rules (``params`` passed to ``fun`` as keywords)."""
    def rule(primals, coeffs, **params):
        order = len(next(c for c in coeffs if c is not None))
        full = [_terms(p, c, order)[1:] for p, c in zip(primals, coeffs)]
        return _jet(lambda *xs: fun(*xs, **params), tuple(primals), tuple(full), False)
    return rule


def _along(deriv_coeffs, u, y0):
    """y with y' = c u' (``c``'s coefficients ``deriv_coeffs``, ``u``'s the full list): y_k = (1/k) sum_j j
    c_{k-j} u_j."""
    y = [y0]
    for k in range(1, len(u)):
        y.append(sum(_mul(deriv_coeffs[k - j], u[j]) * (j / k) for j in range(1, k + 1)))
    return y


def _erf_rule(primals, coeffs):
    a, order = _full(primals, coeffs)
    # erf' = 2/sqrt(pi) exp(-x^2), its series by the jet of that expression
    c0, cs = _jet(lambda x: _lax.exp(-(x * x)) * (2 / _math.sqrt(_math.pi)), (a[0],), (a[1:],), False)
    y = _along([c0] + list(cs), a, _lax.erf(a[0]))
    return y[0], y[1:]


def _erf_inv_rule(primals, coeffs):
    """y = erf_inv(x): y' = c x' with c = sqrt(pi)/2 exp(y^2), built term by term from y's known terms."""
    a, order = _full(primals, coeffs)
    k0 = _math.sqrt(_math.pi) / 2
    y = [_lax.erf_inv(a[0])]
    sq = [y[0] * y[0]]
    ex = [_lax.exp(sq[0])]
    c = [ex[0] * k0]
    for k in range(1, order + 1):
        y.append(sum(_mul(c[k - j], a[j]) * (j / k) for j in range(1, k + 1)))
        if k < order:
            sq.append(sum(_mul(y[k - j], y[j]) for j in range(k + 1)))
            ex.append(sum(_mul(ex[k - j], sq[j]) * (j / k) for j in range(1, k + 1)))
            c.append(ex[k] * k0)
    return y[0], y[1:]


def _atan2_rule(primals, coeffs):
    """atan2(x, y) has the derivatives of atan(x / y): d = 1 / (1 + q^2) along q = x / y."""
    x, y = primals
    order = len(next(c for c in coeffs if c is not None))
    full = [_terms(p, c, order)[1:] for p, c in zip(primals, coeffs)]
    q0, qs = _jet(_lax.div, (x, y), tuple(full), False)
    d0, ds = _jet(lambda q: 1 / (1 + q * q), (q0,), (qs,), False)
    out = _along([d0] + list(ds), [q0] + list(qs), _lax.atan2(x, y))
    return out[0], out[1:]


jet_rules[_ew.erf_p] = _erf_rule
jet_rules[_ew.erfc_p] = _composite(lambda x: 1 - _lax.erf(x))
jet_rules[_ew.erf_inv_p] = _erf_inv_rule
jet_rules[_ew.atan2_p] = _atan2_rule
# cumulative products and extrema through their parallel-prefix form, as JAX (its reduce_window form has no
# rule of every order)
jet_rules[_lib.cumprod_p] = _composite(lambda x, axis, reverse: _lax.associative_scan(_lax.mul, x, reverse, axis))
jet_rules[_lib.cummax_p] = _composite(lambda x, axis, reverse: _lax.associative_scan(_lax.max, x, reverse, axis))
jet_rules[_lib.cummin_p] = _composite(lambda x, axis, reverse: _lax.associative_scan(_lax.min, x, reverse, axis))
jet_rules[_conv.conv_general_dilated_p] = _bilinear(_conv.conv_general_dilated_p)


# ----------------------------------------------------------------------------------------------- jet

def _fact(n):
    return float(_math.factorial(n))


def jet(fun, primals, series, **_):
    """``(f(*primals), terms_out)``: the derivatives of ``f`` along the Taylor path given by ``series``.

    ``primals``: a tuple of arrays (each argument a single array, not a pytree); ``series``: a tuple, one
    list ``[x1, ..., xK]`` per argument (the path's derivatives at 0; every argument the same ``K``), each term
    of its argument's shape and dtype. Returns ``f``'s outputs (any pytree) and, with the same structure, the
    lists ``[y1, ..., yK]`` of the derivatives of ``f(x(t))`` at 0 (zeros for outputs that do not depend on
    the path). Errors (JAX's texts): ``ValueError`` when the lists differ in length or an argument or term is
    not an array; ``NotImplementedError`` for a primitive with no Taylor rule. Mirrors
    ``jax.experimental.jet.jet``."""
    return _jet(fun, primals, series, True)


def jet2(fun, primals, series):
    """:func:`jet` with Taylor coefficients in and out (``x(t) = x0 + c1 t + c2 t^2 + ...``) instead of
    derivatives. Mirrors ``jax.experimental.jet.jet2``."""
    return _jet(fun, primals, series, False)


def _jet(fun, primals, series, factorial_scaled):
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if len(_flatten(x)[0]) != 1 or isinstance(x, (tuple, list, dict)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if len(_flatten(t)[0]) != 1 or isinstance(t, (tuple, list, dict)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    coeffs = []
    for terms in series:
        coeffs.append([(t / _fact(k + 1)) if factorial_scaled else t for k, t in enumerate(terms)])
    parent = _core._state.trace
    trace = JetTrace(parent, order)
    ins = [trace.wrap(p, list(c)) for p, c in zip(primals, coeffs)]
    try:
        with _set_trace(trace):
            out = fun(*ins)
        leaves, tree = _flatten(out)
        outs, out_terms = [], []
        for o in leaves:
            p, c = trace.unpack(o)
            outs.append(p)
            terms = []
            for k in range(order):
                t = None if c is None else c[k]
                if t is None:
                    a = _get_aval(p)
                    dt = a.dtype if _dtypes.issubdtype(a.dtype, _np.inexact) else _dtypes.canonicalize_dtype(float)
                    t = _lax.full(a.shape, 0, dt)
                elif factorial_scaled:
                    t = t * _fact(k + 1)
                terms.append(t)
            out_terms.append(terms)
    finally:
        trace.invalidate()
    return _unflatten(tree, outs), _unflatten(tree, out_terms)
