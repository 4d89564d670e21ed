"""cranax.bench: measure's report (fields, ordering, correctness flagging), the suite's pieces, the CLI."""
import json
import math

import numpy as np
import pytest

import cranax
import cranax.numpy as jnp
from cranax import bench
from cranax.bench import _suite


def selu(x):
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x) - 1.67)


def selu_np(x):
    return 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)


def selu_wrong(x):  # forgets "- alpha": fast, plausible, wrong
    return 1.05 * jnp.where(x > 0, x, 1.67 * jnp.exp(x))


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).standard_normal(10_000).astype(np.float32)


@pytest.fixture(scope="module")
def good(x):
    return bench.measure(cranax.jit(selu), x, reference=selu_np, repeat=7, warmup=2)


def test_report_fields_present_and_sane(good, x):
    d = good.to_dict()
    assert list(d)[:len(bench.FIELDS)] == bench.FIELDS
    assert good.error is None
    assert good.correct is True and good.ranked
    assert good.system == "cranax" and good.platform == "cpu"
    assert "Cranelift" in good.backend and "CpuDevice" in good.device
    assert good.max_abs_diff < 1e-5 and good.max_rel_diff < 1e-4
    for k in ("trace_s", "compile_s", "transfer_s", "first_call_s", "steady_median_s", "steady_min_s",
              "steady_max_s", "steady_mean_s"):
        v = getattr(good, k)
        assert isinstance(v, float) and v > 0 and math.isfinite(v), k
    assert good.compile_s > 0
    assert good.steady_min_s <= good.steady_median_s <= good.steady_max_s
    assert good.steady_median_s <= good.first_call_s   # the first call traces and compiles
    assert good.repeat == 7 and good.inner >= 1 and good.warmup == 2
    assert good.input_bytes == x.nbytes and good.output_bytes == x.nbytes
    assert good.peak_rss_bytes is None or good.peak_rss_bytes > 0
    assert good.machine["cpus"] >= 1 and good.machine["line"]
    json.dumps(d)  # JSON-ready


def test_table_names_device_and_status(good):
    t = str(good)
    assert "correct" in t and "CpuDevice" in t and "steady state median" in t and "compile" in t
    assert "WRONG" not in t


def test_wrong_answer_is_flagged_not_ranked(x):
    r = bench.measure(selu_wrong, x, reference=selu_np, repeat=3, warmup=1)
    assert r.correct is False and not r.ranked
    assert r.max_abs_diff > 1.0
    assert "WRONG" in r.table()
    row = bench.format_table([r])
    assert "WRONG" in row
    d = r.to_dict()
    assert d["correct"] is False and d["ranked"] is False
    json.dumps(d)


def test_reference_as_value_and_tolerances(x):
    expect = selu_np(x)
    r = bench.measure(cranax.jit(selu), x, reference=expect, repeat=3, warmup=1, trace=False)
    assert r.correct and r.trace_s is None
    r = bench.measure(cranax.jit(selu), x, reference=expect + 1e-2, repeat=3, warmup=1, rtol=1e-5, atol=0.0)
    assert r.correct is False


def test_compare_rules():
    ok, mabs, mrel, *_ = bench.compare(np.ones(3, np.float32), np.ones(3, np.float32))
    assert ok and mabs == 0 and mrel == 0
    ok, *_ = bench.compare(np.ones(3, np.float32), np.ones(4, np.float32))
    assert not ok
    ok, *_ = bench.compare(np.array([1, 2, 3]), np.array([1, 2, 4]))   # integers: exact
    assert not ok
    ok, *_ = bench.compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))
    assert ok
    # float32 sums: errors judged against the result's scale
    ok, *_ = bench.compare(np.array([1000.0, 1e-3], np.float32), np.array([1000.01, 1.1e-3]))
    assert ok
    ok, *_ = bench.compare((np.ones(2), {"a": np.zeros(2)}), (np.ones(2), {"a": np.ones(2)}))
    assert not ok


def test_no_reference_is_unchecked(x):
    r = bench.measure(selu, x, repeat=3, warmup=1)   # a plain function is jitted with cranax.jit
    assert r.correct is None and r.ranked and r.compile_s > 0
    assert "unchecked" in str(r)


def test_numpy_backend(x):
    r = bench.measure(selu_np, x, backend="numpy", reference=selu_np, repeat=3, warmup=1)
    assert r.system == "numpy" and r.correct
    assert r.trace_s is None and r.compile_s is None and r.transfer_s is None
    assert r.steady_median_s > 0


def test_pytree_arguments_and_outputs():
    def f(p, x):
        return {"y": p["w"] * x + p["b"], "s": jnp.sum(x)}
    p = {"w": np.float32(2.0) * np.ones(4, np.float32), "b": np.arange(4, dtype=np.float32)}
    xs = np.linspace(0, 1, 4).astype(np.float32)
    r = bench.measure(cranax.jit(f), p, xs, reference=lambda p, x: {"y": p["w"] * x + p["b"], "s": x.sum()},
                      repeat=3, warmup=1)
    assert r.correct and r.error is None and r.input_bytes == 48


def test_failure_is_recorded():
    def bad(x):
        raise RuntimeError("boom")
    r = bench.measure(bad, np.ones(3, np.float32), repeat=3, warmup=1)
    assert r.error and "boom" in r.error and not r.ranked
    assert "FAILED" in str(r) and "FAILED" in bench.format_table([r])


def test_flops_give_gflops():
    a = np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32)
    r = bench.measure(cranax.jit(lambda a, b: a @ b), a, a, reference=lambda a, b: a @ b, flops=2 * 64 ** 3,
                      repeat=3, warmup=1)
    assert r.correct and r.gflops > 0


def test_suite_cases_run_and_check(tmp_path):
    cases = [c for c in _suite.build_suite(quick=True) if c.group in ("selu", "matmul") and c.size <= 1000]
    cases += [c for c in _suite.build_suite(quick=True, only=["mlp"])]
    assert {c.group for c in cases} == {"selu", "matmul", "mlp"}
    lines = []
    reps = _suite.run_suite(cases, ["cranax", "numpy"], quick=True, progress=lines.append)
    assert len(reps) == 2 * len(cases) and len(lines) == len(reps)
    assert all(r.error is None for r in reps), [r.error for r in reps if r.error]
    assert all(r.correct for r in reps), [(r.name, r.system, r.max_abs_diff) for r in reps if not r.correct]
    c = _suite.crossovers(reps, "selu")
    assert c["sizes"] == [10, 100, 1000]
    t = reps.table()
    assert "selu" in t and "matmul" in t and "mlp step" in t
    json.dumps(reps.to_dict())
    pytest.importorskip("matplotlib")
    from cranax.bench._plot import plot
    out = tmp_path / "x.png"
    plot(reps, {"selu:cranax<numpy": c}, str(out), title_machine="test")
    assert out.stat().st_size > 1000


def _fake(system, size, t, correct=True):
    r = bench.BenchReport(name="selu", system=system, size=size, steady_median_s=t, correct=correct)
    r.extra["group"] = "selu"
    return r


def test_crossover_logic():
    reps = [_fake("cranax", 10, 5e-6), _fake("numpy", 10, 1e-6), _fake("cranax", 100, 5e-6),
            _fake("numpy", 100, 6e-6), _fake("cranax", 1000, 1e-5), _fake("numpy", 1000, 3e-5)]
    c = _suite.crossovers(reps, "selu")
    assert c["from_size"] == 100 and not c["always"]
    # a wrong (fast) answer at the largest size is not ranked, so it cannot create a crossover
    reps = [_fake("cranax", 10, 5e-6), _fake("numpy", 10, 1e-6), _fake("cranax", 100, 1e-9, correct=False),
            _fake("numpy", 100, 6e-6)]
    c = _suite.crossovers(reps, "selu")
    assert c["from_size"] is None and c["sizes"] == [10]


def test_cli_quick_subset(tmp_path, capsys, monkeypatch):
    from cranax.bench import __main__ as cli
    build = _suite.build_suite
    small = lambda quick=False, only=None, seed=0: [
        c for c in build(quick=True, only=["selu"]) if c.size <= 100]
    monkeypatch.setattr(_suite, "build_suite", small)
    rc = cli.main(["--quick", "--out", str(tmp_path), "--systems", "cranax", "numpy"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "machine:" in out and "CpuDevice" in out and "[  1/4]" in out
    doc = json.loads((tmp_path / "bench.json").read_text())
    assert doc["machine"]["line"] and len(doc["reports"]) == 4 and "cranax" in doc["systems"]
    assert "selu:cranax<numpy" in doc["crossovers"]


def test_noisy_figures_are_marked():
    r = bench.BenchReport(name="x", system="numpy", size=10, steady_median_s=3e-3, steady_min_s=1e-3,
                          steady_max_s=4e-3, correct=True)
    assert r.noisy and r.to_dict()["noisy"] is True
    t = bench.format_table([r])
    assert "ok*" in t and "noisy" in t
    r = bench.BenchReport(name="x", system="numpy", size=10, steady_median_s=1.1e-3, steady_min_s=1e-3,
                          correct=True)
    assert not r.noisy and "ok*" not in bench.format_table([r])
