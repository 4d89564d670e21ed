"""``add_any``: the sum of two tangents or cotangents (``ad.add_tangents``), JAX's ``ad_util.add_jaxvals_p``.
Typed as ``add`` and lowered as ``add``; kept apart from ``add`` so that printed jaxprs of derivatives
show where autodiff accumulated, as JAX's do."""
from ..interpreters import ad as _ad
from ..jaxpr import Jaxpr, JaxprEqn, Var
from . import elementwise as _ew
from .standard import standard_primitive

__all__ = ["add_any_p"]


def _add_any_inline(eqn):
    a, b = (Var(v.aval) for v in eqn.invars)
    out = Var(eqn.outvars[0].aval)
    return Jaxpr([], [a, b], [out], [JaxprEqn([a, b], [out], _ew.add_p, {})]), eqn.invars


add_any_p = standard_primitive("add_any", _ew._binary_rule("add_any", _ew._NUM), elementwise=True)
add_any_p.inline_jaxpr = staticmethod(_add_any_inline)
add_any_p.broadcasts_size1 = True


def _add_any_jvp(primals, tangents):
    ans = add_any_p.bind(*primals)
    if all(_ad.is_zero(t) for t in tangents):
        return ans, _ad.Zero(_ad.get_aval(ans))
    return ans, _ad._fit(_ad.add_tangents(*tangents), ans)


_ad.jvp_rules[add_any_p] = _add_any_jvp
_ad.transpose_rules[add_any_p] = _ew._add_transpose
_ad.hooks["add"] = add_any_p.bind
