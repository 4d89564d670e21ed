"""The Rust core's own checks, run from the test suite so that the README's one test command runs everything:

* ``cargo test --release --lib`` (with ``--features gpu`` where a wgpu adapter exists, so the GPU backend's Rust
  tests run on lavapipe in CI), and
* ``mypy.stubtest`` of ``cranax._core`` against ``python/cranax/_core.pyi``, so the stub cannot drift from the
  native module again.

Both need the source checkout (these tests live in it) and, for the first, ``cargo`` (needed to build cranax at
all). The first run of the Rust tests compiles the crate in test mode (a few minutes on 2 cores); later runs are
incremental.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from cranax import _core

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def _cargo():
    found = shutil.which("cargo")
    if found:
        return found
    home = os.path.join(os.path.expanduser("~"), ".cargo", "bin", "cargo")  # where rustup puts it
    assert os.path.exists(home), "cargo not found on PATH or in ~/.cargo/bin: the Rust tests need it"
    return home


def _has_adapter():
    return bool(getattr(_core, "HAS_GPU_BACKEND", False) and _core.gpu_devices())


def test_rust_unit_tests_pass():
    cmd = [_cargo(), "test", "--release", "--lib"] + (["--features", "gpu"] if _has_adapter() else [])
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=3600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{' '.join(cmd)} failed (exit {proc.returncode}):\n{out[-6000:]}"
    results = re.findall(r"test result: ok\. (\d+) passed; (\d+) failed", out)
    assert results, f"no test result line in cargo's output:\n{out[-3000:]}"
    passed = sum(int(p) for p, _ in results)
    assert passed >= 100 and all(f == "0" for _, f in results), out[-3000:]


def test_stub_matches_native_module():
    with tempfile.TemporaryDirectory() as cache:  # keep mypy's cache out of the checkout
        proc = subprocess.run([sys.executable, "-m", "mypy.stubtest", "cranax._core"], cwd=ROOT, capture_output=True,
                              text=True, timeout=600, env={**os.environ, "MYPY_CACHE_DIR": cache})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Success" in out, f"cranax/_core.pyi disagrees with the native module:\n{out}"
