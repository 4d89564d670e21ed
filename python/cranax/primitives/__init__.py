"""Primitives, one family per module, each primitive defined once with its public ``lax`` wrapper, abstract
eval, eager impl, wire params and transformation rules (jvp, transpose, batching): ``elementwise``,
``reductions``, ``structural`` (shapes), ``library`` (calls into Rust routines: products, concatenate,
dynamic slices, gather/scatter, sort, cumulative ops), ``control_flow`` (cond, while, scan), ``jit`` and
``ad_util`` (``add_any``); ``complex_lowering`` lowers complex values as pairs of reals for all of them. Importing the package registers every family's rules and interpreter hooks."""
from . import ad_util, control_flow, elementwise, jit, library, reductions, structural  # noqa: F401
from . import complex_lowering, fft  # noqa: F401
from .standard import standard_primitive  # noqa: F401
