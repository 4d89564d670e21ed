"""``python -m cranax.tour``'s command line: which sections exist, and running some or all of them."""
import argparse
import traceback

from . import __doc__ as _TOUR_DOC  # the package's docstring is the command's description
from . import control_flow, gpu, grad, seeds, vmap
from .harness import Tour, _header_line, _row_line, describe_device

__all__ = ["main", "SECTIONS"]


# (name, function of the Tour), in the order they run; --list prints each function's first doc line.
SECTIONS = [
    ("selu", seeds.section_selu),
    ("first_call", seeds.section_first_call),
    ("jaxpr", seeds.section_jaxpr),
    ("retracing", seeds.section_retracing),
    ("static", seeds.section_static),
    ("errors", seeds.section_errors),
    ("where", seeds.section_where),
    ("closure", seeds.section_closure),
    ("jit_in_loop", seeds.section_jit_in_loop),
    ("grad", grad.tour_grad),
    ("vmap", vmap.tour_vmap),
    ("control_flow", control_flow.tour_control_flow),
    ("gpu", gpu.tour_gpu),
]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m cranax.tour", description=_TOUR_DOC.splitlines()[0])
    p.add_argument("sections", nargs="*", help="names of sections to run (default: all)")
    p.add_argument("--list", action="store_true", help="list the sections and exit")
    p.add_argument("--quick", action="store_true", help="shorter timing loops")
    ns = p.parse_args(argv)
    sections = SECTIONS
    if ns.list:
        for name, fn in sections:
            print(f"{name:14s} {(fn.__doc__ or '').strip().splitlines()[0]}")
        return 0
    chosen = sections
    if ns.sections:
        known = dict(sections)
        bad = [s for s in ns.sections if s not in known]
        if bad:
            p.error(f"unknown section(s) {bad}; --list names them")
        chosen = [(s, known[s]) for s in ns.sections]

    tour = Tour(quick=ns.quick)
    describe_device(tour)
    failed = []
    for name, fn in chosen:
        try:
            fn(tour)
        except Exception:
            failed.append(name)
            tour.say(f"!! section {name!r} failed:")
            tour.say(traceback.format_exc())

    tour.title("summary (all times are medians after warm-up unless 'first call'; waited with block_until_ready)")
    tour.say(_header_line())
    for r in tour.rows:
        tour.say(_row_line(r))
    if failed:
        tour.say(f"\nFAILED sections: {', '.join(failed)}")
        return 1
    tour.say("\nall sections ran")
    return 0
