"""Runs optax's own test suite (the ``optax/**/*_test.py`` files its wheel ships) on cranax, under
``python -m cranax.run -m pytest``, and reports passed/total with the causes of the failures grouped.

    python tests/ecosystem/run_optax_suite.py                      # cranax only
    JAX_PYTHON=/tmp/jaxvenv/bin/python python tests/ecosystem/run_optax_suite.py   # and real JAX's counts
    python tests/ecosystem/run_optax_suite.py -k alias_test -j 2   # a subset of files, 2 files at a time
    ... --save /tmp/suite.json                  # also write every test's outcome (JSON) for a later --jax-from
    ... --jax-from /tmp/suite.json              # take JAX's outcomes from an earlier --save instead of rerunning
    ... --from-xml CRANAX_DIR JAX_DIR           # compare what two interrupted runs left (their scratch dirs)

With JAX's outcomes at hand it also prints the per-test comparison: of the test IDs that pass under JAX, how
many pass under cranax, and the causes of those that do not (the totals alone compare different collected
sets when a file fails to collect on one side). A test ID is the test file's path inside the optax package
plus pytest's class and test name, so it is the same under both interpreters.

Each test file runs in its own subprocess (a crash or a hang costs that file only; ``--timeout`` seconds per
file), from a scratch directory so that no conftest of this repository applies. Results come from pytest's
JUnit XML. A test counts as passed when pytest reports it passed; skips (optax skips some tests itself, e.g.
on one device) are counted apart and are not passes. The causes are the failures' first message lines
with numbers and names folded, so that one cause is one line with its count.

Not a pytest test file itself (its name does not start with ``test_``): it takes minutes.
"""
import argparse
import collections
import concurrent.futures
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def optax_test_files(python):
    """The optax test files installed for interpreter ``python`` (found without importing optax, which needs
    a jax)."""
    out = subprocess.run([python, "-c", "import importlib.util as u; print(u.find_spec('optax').submodule_search_locations[0])"],
                         capture_output=True, text=True, check=True)
    root = out.stdout.strip()
    files = []
    for d, _, names in os.walk(root):
        files += [os.path.join(d, n) for n in names if n.endswith("_test.py")]
    return root, sorted(files)


def run_file(python, root, path, cranax, timeout, workdir):
    """Runs one test file; returns (path, counts dict, {test id: (outcome, message)}, seconds)."""
    rel = os.path.relpath(path, root)
    xml = os.path.join(workdir, rel.replace(os.sep, "+") + (".cranax" if cranax else ".jax") + ".xml")
    pre = [python, "-m", "cranax.run", "-m", "pytest"] if cranax else [python, "-m", "pytest"]
    cmd = pre + ["-q", "-p", "no:cacheprovider", f"--junitxml={xml}", path]
    env = dict(os.environ)
    if cranax:
        spec = importlib.util.find_spec("cranax")   # an installed cranax, else the checkout's python/
        cranax_parent = os.path.dirname(os.path.dirname(spec.origin)) if spec else os.path.join(REPO, "python")
        env["PYTHONPATH"] = cranax_parent + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("JAX_PLATFORMS", "cpu")
    t0 = time.perf_counter()
    try:
        subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return path, {"timeout": 1}, {rel: ("failed", f"file timed out after {timeout} s")}, timeout
    dt = time.perf_counter() - t0
    if not os.path.exists(xml):
        return path, {"crashed": 1}, {rel: ("failed", "no JUnit XML (the process died)")}, dt
    counts, outcomes = parse_xml(xml, rel)
    return path, counts, outcomes, dt


def parse_xml(xml, rel):
    """(counts dict, {test id: (outcome, message)}) from one file's JUnit XML; ``rel`` is the test file's
    path inside the optax package."""
    counts = collections.Counter()
    outcomes = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        # The class name's last part only: the module prefix pytest puts before it depends on the rootdir.
        name = rel + "::" + case.get("classname", "").rsplit(".", 1)[-1] + "::" + case.get("name", "")
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            counts["failed"] += 1
            outcomes[name] = ("failed", bad.get("message") or
                              ((bad.text or "").strip().splitlines()[-1:] or [""])[0])
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
            outcomes[name] = ("skipped", "")
        else:
            counts["passed"] += 1
            outcomes[name] = ("passed", "")
    return dict(counts), outcomes


def outcomes_from_dir(workdir, side):
    """Every test outcome in the JUnit XML files an earlier (possibly interrupted) run left in ``workdir``
    (``side``: "cranax" or "jax"); files still running or timed out are absent."""
    out = {}
    for n in sorted(os.listdir(workdir)):
        if n.endswith(f".{side}.xml"):
            rel = n[:-len(f".{side}.xml")].replace("+", os.sep)
            try:
                out.update(parse_xml(os.path.join(workdir, n), rel)[1])
            except ET.ParseError:   # a file being written as the run was stopped
                pass
    return out


_FOLD = [(re.compile(r"0x[0-9a-f]+"), "0x?"), (re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?"), "N"),
         (re.compile(r"'[^']{40,}'"), "'...'"), (re.compile(r"\s+"), " ")]


def cause(message):
    """A failure message's first line with numbers/addresses folded (one line per kind of cause)."""
    if isinstance(message, list):
        message = message[0] if message else ""
    line = (message or "").strip().splitlines()[0] if (message or "").strip() else "(no message)"
    for pat, rep in _FOLD:
        line = pat.sub(rep, line)
    return line[:160]


def run_suite(python, root, files, cranax, jobs, timeout):
    """Runs ``files``; returns (totals Counter, failure causes Counter, {test id: (outcome, message)})."""
    workdir = tempfile.mkdtemp(prefix="optax-suite-")
    totals = collections.Counter()
    causes = collections.Counter()
    outcomes = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for path, counts, got, dt in ex.map(lambda p: run_file(python, root, p, cranax, timeout, workdir), files):
            totals.update(counts)
            outcomes.update(got)
            causes.update(cause(m) for o, m in got.values() if o == "failed")
            print(f"  {'cranax' if cranax else 'jax':6} {os.path.relpath(path, root):40} {dict(counts)} {dt:.0f}s",
                  flush=True)
    return totals, causes, outcomes


def compare(ours, theirs, n_causes):
    """The per-test figure: of the IDs that pass under JAX, how many pass under cranax, and why the rest do
    not (a test missing on cranax's side is counted as not passing, under the cause of its file's failure
    when the whole file failed)."""
    want = [t for t, (o, _) in theirs.items() if o == "passed"]
    ok = [t for t in want if ours.get(t, ("missing",))[0] == "passed"]
    print(f"\nper test: of {len(want)} tests that pass under JAX, {len(ok)} pass under cranax "
          f"({len(ok) / max(len(want), 1):.1%})")
    causes = collections.Counter()
    files = collections.Counter()
    for t in want:
        o, m = ours.get(t) or ours.get(t.split("::")[0], ("missing", "not collected under cranax"))
        if o != "passed":
            causes[cause(m) if o == "failed" else f"({o}) {m}"] += 1
            files[t.split("::")[0]] += 1
    print(f"causes of the {len(want) - len(ok)} that do not (top {n_causes}):")
    for c, k in causes.most_common(n_causes):
        print(f"  {k:5d}  {c}")
    print("by file:")
    for f, k in files.most_common(n_causes):
        print(f"  {k:5d}  {f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only test files whose path contains this string")
    ap.add_argument("-j", type=int, default=1, help="test files run at a time")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per test file")
    ap.add_argument("--causes", type=int, default=25, help="how many failure causes to list")
    ap.add_argument("--save", help="write both sides' per-test outcomes to this JSON file")
    ap.add_argument("--jax-from", help="JAX's outcomes from an earlier --save (instead of running JAX)")
    ap.add_argument("--no-cranax", action="store_true", help="run only JAX's side (with JAX_PYTHON)")
    ap.add_argument("--from-xml", nargs=2, metavar=("CRANAX_DIR", "JAX_DIR"),
                    help="compare the JUnit XML two earlier (possibly interrupted) runs left, running nothing")
    args = ap.parse_args()
    if args.from_xml:
        ours = outcomes_from_dir(args.from_xml[0], "cranax")
        theirs = outcomes_from_dir(args.from_xml[1], "jax")
        done = {t.split("::")[0] for t in ours} & {t.split("::")[0] for t in theirs}
        print(f"test files finished on both sides: {len(done)}")
        compare({t: v for t, v in ours.items() if t.split("::")[0] in done},
                {t: v for t, v in theirs.items() if t.split("::")[0] in done}, args.causes)
        return
    if importlib.util.find_spec("optax") is None:
        sys.exit("optax is not installed (pip install --no-deps -r tests/ecosystem/requirements.txt)")
    saved = {}
    root, files = optax_test_files(sys.executable)
    files = [f for f in files if args.k in f]
    print(f"optax test files: {len(files)}")
    ours = {}
    if not args.no_cranax:
        totals, causes, ours = run_suite(sys.executable, root, files, True, args.j, args.timeout)
        saved["cranax"] = ours
        print(f"\ncranax: passed {totals['passed']}/{sum(totals.values())} (failed {totals['failed']}, "
              f"skipped {totals['skipped']}, files timed out {totals['timeout']}, crashed {totals['crashed']})")
        print(f"\nfailure causes on cranax (top {args.causes}):")
        for c, k in causes.most_common(args.causes):
            print(f"  {k:5d}  {c}")
    theirs = None
    jax_python = os.environ.get("JAX_PYTHON")
    if args.jax_from:
        with open(args.jax_from) as f:
            theirs = {t: tuple(v) for t, v in json.load(f)["jax"].items() if t.split("::")[0].find(args.k) >= 0}
    elif jax_python:
        jroot, jfiles = optax_test_files(jax_python)
        jfiles = [f for f in jfiles if args.k in f]
        jtotals, _, theirs = run_suite(jax_python, jroot, jfiles, False, args.j, args.timeout)
        print(f"JAX:    passed {jtotals['passed']}/{sum(jtotals.values())} (failed {jtotals['failed']}, "
              f"skipped {jtotals['skipped']})")
    if theirs is not None:
        saved["jax"] = theirs
        if ours:
            compare(ours, theirs, args.causes)
    if args.save:
        with open(args.save, "w") as f:
            json.dump(saved, f, indent=0)


if __name__ == "__main__":
    main()
