"""``python -m cranax.bench [--quick] [--out DIR]`` — the standard suite, measured honestly.

Runs the seed examples, an MLP training step, and matmul and selu over input sizes from 10 to 1e7 for cranax,
NumPy and JAX (when ``import jax`` works; pinned to the CPU unless ``JAX_PLATFORMS`` says otherwise). Every
figure comes from :func:`cranax.bench.measure`: inputs transferred first, the result checked against NumPy
before any time is taken (wrong answers are flagged and not ranked), warm-up, then the median of calls each
waited for with ``block_until_ready``. Prints progress and the table, names the machine, and writes
``bench.json`` and ``crossover.png`` (time against input size per system, with the size from which cranax
overtakes NumPy marked) into ``--out`` (default ``bench-results/``).
"""
import argparse
import datetime
import json
import os
import sys
import time

from . import format_table, get_system, machine_info
from . import _suite
from . import _timing as bu


def _describe_systems(systems):
    return {s: get_system(s).device_info() for s in systems}


def _crossover_lines(reports, systems):
    out = []
    res = {}
    for group in ("selu", "matmul"):
        for other in [s for s in ("numpy", "jax") if s in systems]:
            c = _suite.crossovers(reports, group, "cranax", other)
            res[f"{group}:cranax<{other}"] = c
            if not c["sizes"]:
                continue
            ratios = ", ".join(f"{_suite_size(s)}: {r:.2g}x" for s, r in c["ratios"].items())
            if c["from_size"] is None:
                verdict = f"cranax is not faster than {other} at the largest size"
            elif c["always"]:
                verdict = f"cranax is faster than {other} at every size measured"
            else:
                verdict = f"cranax overtakes {other} from {_suite_size(c['from_size'])} elements"
            out.append(f"{group:6s} vs {other:5s}: {verdict}   (cranax/{other} steady-state ratio per size: {ratios})")
    return out, res


def _suite_size(s):
    e = round(__import__("math").log10(s)) if s else 0
    return f"1e{e}" if s and 10 ** e == s else str(s)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m cranax.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter timing loops; matmul up to 1e6 elements")
    ap.add_argument("--out", default="bench-results", help="directory for bench.json and crossover.png")
    ap.add_argument("--systems", nargs="+", default=["cranax", "numpy", "jax"],
                    help="which of cranax, numpy, jax to run (missing ones are skipped)")
    ap.add_argument("--only", nargs="+", choices=["seed", "mlp", "selu", "matmul"], help="run these groups")
    ap.add_argument("--no-plot", action="store_true")
    a = ap.parse_args(argv)

    systems = _suite.available_systems(a.systems)
    if "cranax" not in systems:
        print("cranax is not importable", file=sys.stderr)
        return 2
    info = _describe_systems(systems)
    m = machine_info()
    print("cranax.bench — the standard suite, measured honestly")
    print(f"machine:  {m['line']}")
    if m.get("load_average"):
        print(f"load:     {m['load_average'][0]} (1-min load average; above {m['cpus']} the CPUs are shared and "
              f"figures drift)")
    for s, d in info.items():
        print(f"{s:8s}  {d.get('version', '?'):10s} device {d.get('device')} · platform {d.get('platform')} · "
              f"backend {d.get('backend')}")
    missing = [s for s in a.systems if s not in systems]
    if missing:
        print(f"not measured (not importable here): {', '.join(missing)}")
    print("method:   inputs put on the device first (transfer timed separately); result checked against NumPy "
          "before timing; warm-up; median of calls each waited for with block_until_ready; trace, compile "
          "and first call (caches emptied) reported apart")
    print()

    cases = _suite.build_suite(quick=a.quick, only=a.only)
    t0 = time.perf_counter()
    reports = _suite.run_suite(cases, systems, quick=a.quick)
    elapsed = time.perf_counter() - t0

    print()
    print(format_table(reports, title=f"results ({m['line']})"))
    wrong = [r for r in reports if r.correct is False]
    failed = [r for r in reports if r.error]
    print()
    if wrong:
        print("WRONG answers (not ranked): " + ", ".join(f"{r.name} [{r.system}] size {r.size}" for r in wrong))
    if failed:
        print("FAILED: " + ", ".join(f"{r.name} [{r.system}]: {r.error[:60]}" for r in failed))
    lines, cross = _crossover_lines(reports, systems)
    for line in lines:
        print(line)

    os.makedirs(a.out, exist_ok=True)
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": "python -m cranax.bench" + (" --quick" if a.quick else ""),
           "quick": a.quick, "machine": m, "load_average_end": machine_info().get("load_average"),
           "systems": info, "elapsed_s": elapsed,
           "crossovers": {k: {**v, "ratios": {str(s): r for s, r in v["ratios"].items()}} for k, v in cross.items()},
           "reports": [r.to_dict() for r in reports]}
    jpath = os.path.join(a.out, "bench.json")
    with open(jpath, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"\nwrote {jpath}")
    if not a.no_plot:
        try:
            from ._plot import plot
            ppath = os.path.join(a.out, "crossover.png")
            plot(reports, cross, ppath, title_machine=m["line"], systems_info=info)
            print(f"wrote {ppath}")
        except ImportError as e:
            print(f"no plot ({e}); pip install matplotlib")
    m_end = machine_info()
    print(f"suite took {bu.fmt_time(elapsed)}; 1-min load average at start {m.get('load_average')}, "
          f"at end {m_end.get('load_average')}")
    return 1 if (wrong or failed) else 0


if __name__ == "__main__":
    sys.exit(main())
