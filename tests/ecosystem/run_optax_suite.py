"""Runs optax's own test suite (the ``optax/**/*_test.py`` files its wheel ships) on cranax, under
``python -m cranax.run -m pytest``, and reports passed/total with the causes of the failures grouped.

    python tests/ecosystem/run_optax_suite.py                      # cranax only
    JAX_PYTHON=/tmp/jaxvenv/bin/python python tests/ecosystem/run_optax_suite.py   # and real JAX's counts
    python tests/ecosystem/run_optax_suite.py -k alias_test -j 2   # a subset of files, 2 files at a time

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


def run_file(python, path, cranax, timeout, workdir):
    """Runs one test file; returns (path, counts dict, list of (test id, message), seconds)."""
    xml = os.path.join(workdir, os.path.basename(path) + (".cranax" if cranax else ".jax") + ".xml")
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
        return path, {"timeout": 1}, [(os.path.basename(path), f"file timed out after {timeout} s")], timeout
    dt = time.perf_counter() - t0
    if not os.path.exists(xml):
        return path, {"crashed": 1}, [(os.path.basename(path), "no JUnit XML (the process died)")], dt
    counts = collections.Counter()
    failures = []
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("classname", "") + "::" + case.get("name", "")
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            counts["failed"] += 1
            failures.append((name, bad.get("message") or (bad.text or "").strip().splitlines()[-1:] or ""))
        elif case.find("skipped") is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return path, dict(counts), failures, dt


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


def run_suite(python, files, cranax, jobs, timeout):
    workdir = tempfile.mkdtemp(prefix="optax-suite-")
    totals = collections.Counter()
    causes = collections.Counter()
    per_file = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        for path, counts, failures, dt in ex.map(lambda p: run_file(python, p, cranax, timeout, workdir), files):
            totals.update(counts)
            per_file[path] = (counts, dt)
            causes.update(cause(m) for _, m in failures)
            print(f"  {'cranax' if cranax else 'jax':6} {os.path.basename(path):34} {dict(counts)} {dt:.0f}s",
                  flush=True)
    return totals, causes, per_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-k", default="", help="only test files whose path contains this string")
    ap.add_argument("-j", type=int, default=1, help="test files run at a time")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per test file")
    ap.add_argument("--causes", type=int, default=25, help="how many failure causes to list")
    args = ap.parse_args()
    if importlib.util.find_spec("optax") is None:
        sys.exit("optax is not installed (pip install --no-deps -r tests/ecosystem/requirements.txt)")
    _, files = optax_test_files(sys.executable)
    files = [f for f in files if args.k in f]
    print(f"optax test files: {len(files)}")
    ours, causes, _ = run_suite(sys.executable, files, True, args.j, args.timeout)
    n_ours = sum(ours.values())
    print(f"\ncranax: passed {ours['passed']}/{n_ours} (failed {ours['failed']}, skipped {ours['skipped']}, "
          f"files timed out {ours['timeout']}, crashed {ours['crashed']})")
    jax_python = os.environ.get("JAX_PYTHON")
    if jax_python:
        _, jfiles = optax_test_files(jax_python)
        jfiles = [f for f in jfiles if args.k in f]
        theirs, _, _ = run_suite(jax_python, jfiles, False, args.j, args.timeout)
        n_theirs = sum(theirs.values())
        print(f"JAX:    passed {theirs['passed']}/{n_theirs} (failed {theirs['failed']}, skipped "
              f"{theirs['skipped']})")
        if theirs["passed"]:
            print(f"cranax passes {ours['passed'] / theirs['passed']:.1%} of JAX's pass count")
    print(f"\nfailure causes on cranax (top {args.causes}):")
    for c, k in causes.most_common(args.causes):
        print(f"  {k:5d}  {c}")


if __name__ == "__main__":
    main()
