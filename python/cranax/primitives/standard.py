"""``standard_primitive``: a primitive whose eager impl compiles it as a one-equation program."""
from ..core import Primitive
from ..interpreters import dispatch, lowering

__all__ = ["standard_primitive"]


def standard_primitive(name, abstract_eval, wire=None, multiple_results=False, elementwise=False):
    """A primitive whose eager impl compiles it as a one-equation program. ``wire(eqn) -> dict`` gives the
    params the core reads."""
    p = Primitive(name, multiple_results)
    p.abstract_eval = abstract_eval
    p.impl = dispatch._default_impl(p)
    p.elementwise = elementwise
    if wire is not None:
        lowering.wire_params[name] = wire
    return p
