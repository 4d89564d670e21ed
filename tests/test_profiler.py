"""jax.profiler: trace files (Chrome trace-event JSON, gzipped, under log_dir/plugins/profile/<run>/) with
spans for tracing, compiling, launching, kernel runs on the device's track, transfers and waits, nested in
the annotations; the memory profile as pprof."""
import gzip
import json
import os
import re
import threading

import numpy as np
import pytest

import cranax as jax
import cranax.numpy as jnp
from cranax import _core, profiler


def load_trace(log_dir):
    runs = os.listdir(os.path.join(log_dir, "plugins", "profile"))
    assert len(runs) == 1 and re.fullmatch(r"\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d", runs[0])
    d = os.path.join(log_dir, "plugins", "profile", runs[0])
    files = [f for f in os.listdir(d) if f.endswith(".trace.json.gz")]
    assert len(files) == 1
    with gzip.open(os.path.join(d, files[0])) as f:
        return json.load(f), os.path.join(d, files[0])


def spans(doc):
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    return procs, [e for e in doc["traceEvents"] if e["ph"] == "X"]


def inside(a, b, slack=0.002):
    """Span a lies within span b (microseconds; slack for the float rounding of ts)."""
    return b["ts"] - slack <= a["ts"] and a["ts"] + a["dur"] <= b["ts"] + b["dur"] + slack


def chain(x):
    for _ in range(6):
        x = jnp.tanh(x) * 1.5
    return x


def test_trace_file_has_nested_spans_on_host_and_device_tracks(tmp_path):
    x = np.linspace(-1, 1, 100_000, dtype=np.float32)
    with profiler.trace(str(tmp_path)):
        with profiler.TraceAnnotation("outer", foo=1):
            xd = jax.device_put(x)
            f = jax.jit(chain)
            _core._stream_sleep(20)            # the stream is busy: the call is queued, the read waits
            y = f(xd)
            host = np.asarray(y)
        with profiler.StepTraceAnnotation("train", step_num=3):
            f(y).block_until_ready()
    np.testing.assert_allclose(host, np.asarray(chain(x)), rtol=1e-6)
    doc, _ = load_trace(str(tmp_path))
    assert doc["displayTimeUnit"] == "ns"
    procs, ev = spans(doc)
    assert procs[1] == "/host:CPU" and "/device:CPU:0" in procs.values()
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    dev = next(p for p, n in procs.items() if n == "/device:CPU:0")
    by = lambda pred: [e for e in ev if pred(e)]
    outer, = by(lambda e: e["name"] == "outer")
    assert threads[(outer["pid"], outer["tid"])] == "python"     # as JAX names the main thread's track
    assert outer["args"] == {"foo": "1"} and outer["cat"] == "annotation"
    step, = by(lambda e: e["name"] == "train")
    assert step["args"] == {"step_num": "3"} and step["cat"] == "step"
    tr, = by(lambda e: e["name"] == "trace chain")
    comp, = by(lambda e: e["name"] == "compile chain")
    assert comp["args"]["source"] in ("compiled", "memory") and comp["cat"] == "compile"
    launches = by(lambda e: e["name"] == "launch chain")
    runs = by(lambda e: e["cat"] == "kernel" and e["name"] == "chain")
    assert len(launches) == 2 and len(runs) == 2
    assert all(r["pid"] == dev for r in runs) and all(lc["pid"] == 1 for lc in launches)
    h2d = by(lambda e: e["name"] == "transfer host_to_device" and e["args"]["bytes"] == "400000")
    d2h = by(lambda e: e["name"] == "transfer device_to_host" and e["args"]["bytes"] == "400000")
    waits = by(lambda e: e["cat"] == "wait")
    assert h2d and d2h and waits
    # Nesting: everything the first block did lies inside "outer", the second call inside "train"; the
    # compile follows the trace; each kernel run starts after its launch began.
    for e in [tr, comp, launches[0], h2d[0], d2h[0]]:
        assert inside(e, outer), (e, outer)
    assert inside(launches[1], step) and not inside(launches[1], outer)
    assert tr["ts"] + tr["dur"] <= comp["ts"] + 0.002
    assert runs[0]["ts"] >= launches[0]["ts"] and runs[1]["ts"] >= launches[1]["ts"]
    assert any(inside(w, outer) and w["ts"] + w["dur"] >= runs[0]["ts"] + runs[0]["dur"] - 0.002 for w in waits)
    # On each thread, spans nest (never overlap partly).
    for key in {(e["pid"], e["tid"]) for e in ev}:
        line = sorted((e for e in ev if (e["pid"], e["tid"]) == key), key=lambda e: (e["ts"], -e["dur"]))
        for i, a in enumerate(line):
            for b in line[i + 1:]:
                assert b["ts"] >= a["ts"] + a["dur"] - 0.002 or inside(b, a), (a, b)


def test_start_stop_errors_and_annotations(tmp_path):
    with pytest.raises(RuntimeError, match="^No profile started$"):
        profiler.stop_trace()
    with profiler.TraceAnnotation("not recorded"):
        pass
    assert not profiler.TraceAnnotation.is_enabled()
    profiler.start_trace(tmp_path)
    try:
        assert profiler.TraceAnnotation.is_enabled()
        with pytest.raises(RuntimeError, match="^Profile has already been started. Only one profile may be run at a time.$"):
            profiler.start_trace(tmp_path)

        @profiler.annotate_function
        def helper(a):
            return a + 1

        @profiler.annotate_function
        def other(a):
            return a * 2
        other = profiler.annotate_function(other.__wrapped__, name="named", kind="k")
        assert helper(1) == 2 and other(3) == 6
        with profiler.TraceAnnotation("meta") as t:
            t.set_metadata(extra=2.5)

        def work():
            with profiler.TraceAnnotation("in worker"):
                pass
        th = threading.Thread(target=work, name="worker")
        th.start()
        th.join()
    finally:
        profiler.stop_trace()
    doc, path = load_trace(str(tmp_path))
    _, ev = spans(doc)
    names = [e["name"] for e in ev]
    assert "not recorded" not in names
    assert "test_start_stop_errors_and_annotations.<locals>.helper" in names
    named, = [e for e in ev if e["name"] == "named"]
    assert named["args"] == {"kind": "k"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in doc["traceEvents"]
               if e["ph"] == "M" and e["name"] == "thread_name"}
    w, = [e for e in ev if e["name"] == "in worker"]
    assert threads[(w["pid"], w["tid"])] == "python: worker"
    meta, = [e for e in ev if e["name"] == "meta"]
    assert meta["args"] == {"extra": "2.5"}
    data = profiler.ProfileData.from_file(path)
    host = data.find_plane_with_name("/host:CPU")
    got = [e.name for line in host.lines for e in line.events]
    assert "named" in got and "meta" in got
    e = next(e for line in host.lines for e in line.events if e.name == "meta")
    assert e.end_ns - e.start_ns == e.duration_ns >= 0 and e.stats == [("extra", "2.5")]


def test_compile_span_says_persistent_load(tmp_path):
    from cranax.experimental.compilation_cache import compilation_cache as cc
    keep = jax.config.jax_persistent_cache_min_compile_time_secs
    try:
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
        cc.set_cache_dir(str(tmp_path / "cache"))
        fn = lambda v: jnp.cos(v) * 7.0 - 2.0
        jax.jit(fn)(np.ones(5, np.float32)).block_until_ready()
        jax.clear_caches()
        with profiler.trace(str(tmp_path / "log")):
            jax.jit(fn)(np.ones(5, np.float32)).block_until_ready()
    finally:
        cc.set_cache_dir(None)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", keep)
        cc.reset_cache()
    _, ev = spans(load_trace(str(tmp_path / "log"))[0])
    comp, = [e for e in ev if e["name"] == "compile <lambda>"]
    assert comp["args"]["source"] == "persistent"


def _pb_fields(buf):
    """(field number, value) pairs of a protobuf message: varints as ints, length-delimited as bytes."""
    i, out = 0, []
    def varint():
        nonlocal i
        n = s = 0
        while True:
            b = buf[i]
            i += 1
            n |= (b & 0x7F) << s
            s += 7
            if not b & 0x80:
                return n
    while i < len(buf):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            n = varint()
            out.append((key >> 3, buf[i:i + n]))
            i += n
    return out


def test_device_memory_profile_is_pprof_of_live_arrays(tmp_path):
    a = jax.device_put(np.zeros((123, 7), np.float32))
    prof = gzip.decompress(profiler.device_memory_profile())
    fields = _pb_fields(prof)
    strings = [v.decode() for k, v in fields if k == 6]
    assert strings[0] == ""
    types = [[strings[v] for _, v in _pb_fields(m)] for k, m in fields if k == 1]
    assert types == [["allocations", "count"], ["space", "bytes"]]
    samples = []
    for k, m in fields:
        if k == 2:
            sf = _pb_fields(m)
            vals = [v for kk, v in sf if kk == 2]
            labels = {}
            for kk, lab in sf:
                if kk == 3:
                    lf = dict(_pb_fields(lab))
                    labels[strings[lf[1]]] = strings[lf[2]] if 2 in lf else lf[3]
            samples.append((vals, labels))
    mine = [s for s in samples if s[1].get("shape") == "[123, 7]"]
    assert mine and mine[0][0] == [1, 123 * 7 * 4]
    assert mine[0][1]["dtype"] == "float32" and mine[0][1]["bytes"] == 123 * 7 * 4
    profiler.save_device_memory_profile(tmp_path / "m.prof")
    assert (tmp_path / "m.prof").read_bytes()[:2] == b"\x1f\x8b"
    del a


def _connects(port):
    import socket
    with socket.socket() as c:
        return c.connect_ex(("127.0.0.1", port)) == 0


def test_profiler_server_listens_until_dropped_and_errors_as_jax():
    # JAX 0.10.2: start_server returns a ProfilerServer that listens on every interface; a second start is a
    # ValueError; stop_server() returns None and only drops the profiler's reference: the port stays open
    # while the caller holds the object, and closes when it is collected; stop_server() with none started is
    # a ValueError; a port that is not an int is pybind's TypeError.
    import gc
    s = profiler.start_server(0)
    # (JAX's class path under the alias: tests/ecosystem/test_alias.py)
    assert re.fullmatch(r"<(cranax\._profiler_server|jaxlib\._profiler)\.ProfilerServer object at 0x[0-9a-f]+>",
                        repr(s))
    port = s.port
    assert isinstance(port, int) and port > 0 and _connects(port)
    with pytest.raises(ValueError, match=r"^Only one profiler server can be active at a time\.$"):
        profiler.start_server(0)
    assert profiler.stop_server() is None
    assert _connects(port)
    del s
    gc.collect()
    assert not _connects(port)
    with pytest.raises(ValueError, match=r"^No active profiler server\.$"):
        profiler.stop_server()
    for bad, name in (("abc", "str"), (9996.0, "float"), (None, "NoneType")):
        with pytest.raises(TypeError) as e:
            profiler.start_server(bad)
        assert str(e.value) == (
            "start_server(): incompatible function arguments. The following argument types are supported:\n"
            "    1. start_server(port: int) -> jaxlib._profiler.ProfilerServer\n\n"
            f"Invoked with types: {name}")
    s = profiler.start_server(np.int64(0))   # an integer of any kind, as pybind's int
    assert s.port > 0
    profiler.stop_server()


def test_profiler_server_on_a_taken_port_listens_nowhere(capsys):
    # JAX 0.10.2 logs "Unable to bind to [::]:PORT" and still returns a server (which listens nowhere); it
    # counts as started until stop_server.
    import socket
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        s = profiler.start_server(port)
        assert s.port is None
        assert f"Unable to bind to [::]:{port}" in capsys.readouterr().err
        with pytest.raises(ValueError, match="^Only one profiler server"):
            profiler.start_server(0)
        profiler.stop_server()
    s = profiler.start_server(70000)
    assert s.port is None and "Unable to bind to [::]:70000" in capsys.readouterr().err
    profiler.stop_server()


def test_profiler_server_serves_traces_and_memory_profiles(tmp_path):
    import urllib.error
    import urllib.request
    s = profiler.start_server(0)
    try:
        base = f"http://127.0.0.1:{s.port}"
        assert "/profile?duration_ms=N" in urllib.request.urlopen(base + "/").read().decode()
        stop = threading.Event()

        def work():   # another thread computing while the trace records
            f = jax.jit(chain)
            while not stop.is_set():
                f(jnp.ones(64)).block_until_ready()
        th = threading.Thread(target=work)
        th.start()
        try:
            with urllib.request.urlopen(base + "/profile?duration_ms=300") as r:
                assert r.headers["Content-Type"] == "application/gzip"
                doc = json.loads(gzip.decompress(r.read()))
        finally:
            stop.set()
            th.join()
        assert "metadata" not in doc   # Perfetto's form
        procs, xs = spans(doc)
        assert "/host:CPU" in procs.values() and "/device:CPU:0" in procs.values()
        assert any(e["name"].startswith("launch") for e in xs)
        # over IPv6 too, the memory profile (gzipped pprof)
        assert urllib.request.urlopen(f"http://[::1]:{s.port}/memory_profile").read()[:2] == b"\x1f\x8b"
        for path, code in (("/nothing", 404), ("/profile?duration_ms=0", 400), ("/profile?duration_ms=x", 400)):
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(base + path)
            assert e.value.code == code
        # one trace at a time: the server's request waits for none and is refused while the caller traces,
        # and the caller's stop_trace is not the server's
        profiler.start_trace(tmp_path / "a")
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(base + "/profile?duration_ms=10")
        assert e.value.code == 409
        profiler.stop_trace()
        got = {}
        th = threading.Thread(target=lambda: got.setdefault(
            "r", urllib.request.urlopen(base + "/profile?duration_ms=2000").read()))
        th.start()
        for _ in range(190):
            if _core.profiler_enabled():
                break
            threading.Event().wait(0.01)
        with pytest.raises(RuntimeError, match="^No profile started$"):
            profiler.stop_trace()
        with pytest.raises(RuntimeError, match="^Profile has already been started"):
            profiler.start_trace("unused")
        th.join()
        assert got["r"][:2] == b"\x1f\x8b"
        profiler.start_trace(tmp_path / "b")   # free again once the server's trace ended
        profiler.stop_trace()
    finally:
        profiler.stop_server()
        del s


def test_stop_trace_returns_none_and_perfetto_link_serves_the_trace(tmp_path, capsys):
    # JAX 0.10.2 (the profiling guide): stop_trace() returns None; with create_perfetto_link=True it prints
    # this line and serves perfetto_trace.json.gz (the trace without "metadata") on 127.0.0.1:9001 until fetched.
    import urllib.request
    profiler.start_trace(tmp_path / "a")
    jnp.sin(jnp.arange(3.0)).block_until_ready()
    assert profiler.stop_trace() is None
    profiler.start_trace(tmp_path / "b", create_perfetto_link=True)
    jax.jit(chain)(jnp.ones(4)).block_until_ready()
    done = threading.Event()
    th = threading.Thread(target=lambda: (profiler.stop_trace(), done.set()))
    th.start()
    body = None
    for _ in range(200):
        try:
            with urllib.request.urlopen("http://127.0.0.1:9001/perfetto_trace.json.gz", timeout=5) as r:
                assert r.headers["Access-Control-Allow-Origin"] == "*"
                body = r.read()
            break
        except OSError:
            done.wait(0.05)
    th.join(10)
    assert done.is_set() and body is not None
    out = capsys.readouterr().out
    assert out == "Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/perfetto_trace.json.gz\n"
    doc = json.loads(gzip.decompress(body))
    assert "metadata" not in doc and any(e.get("name", "").startswith("launch") for e in doc["traceEvents"])
    d = os.path.dirname(load_trace(str(tmp_path / "b"))[1])
    with gzip.open(os.path.join(d, "perfetto_trace.json.gz")) as f:
        assert json.load(f) == doc
