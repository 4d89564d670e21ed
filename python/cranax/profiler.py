"""``jax.profiler``: traces a program's run into a file Perfetto and TensorBoard's trace viewer open.

While a trace is on (``trace(log_dir)`` or ``start_trace``/``stop_trace``), the core records a span for every
compile (``compile <name>``, with ``source``: ``compiled``, ``persistent`` (loaded from the persistent cache)
or ``memory``), launch (``launch <name>``, on the calling thread), kernel run (``<name>`` on the device's
track: ``/device:CPU:0``, ...), transfer (``transfer host_to_device`` / ``device_to_host``, with ``bytes``)
and wait (``wait``: a thread blocked on a result); Python adds ``trace <name>`` (tracing a function to a
jaxpr) and the annotations (``TraceAnnotation``, ``StepTraceAnnotation``, ``annotate_function``).
``stop_trace`` writes them as Chrome trace-event JSON, gzipped, to
``log_dir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`` (where JAX writes its
``.trace.json.gz``; cranax writes no ``.xplane.pb``): one process per track (``/host:CPU`` with a thread per
host thread, then one per device), events of kind ``X`` with ``ts``/``dur`` in microseconds and their
arguments as strings, as JAX's file has them.
"""
import datetime
import functools
import gc
import gzip
import http.server
import json
import operator
import os
import socket
import socketserver
import threading

from . import _core
from ._profiler_server import ProfilerServer as _ProfilerServer
from .array import Array, devices as _devices

__all__ = ["trace", "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation", "annotate_function",
           "device_memory_profile", "save_device_memory_profile", "ProfileOptions", "ProfileData",
           "ProfilePlane", "ProfileEvent", "start_server", "stop_server", "register_subprocess"]

_lock = threading.Lock()
_session = None   # (log_dir, create_perfetto_link, create_perfetto_trace) while a trace is on
_named = threading.local()


def _name_thread():
    """Names the calling Python thread's track once per thread and trace ("python" for the main thread, as
    JAX's traces call it; else the thread's name)."""
    if getattr(_named, "session", None) is not _session:
        t = threading.current_thread()
        _core.profiler_name_thread("python" if t is threading.main_thread() else f"python: {t.name}")
        _named.session = _session


class ProfileOptions:
    """Options of a trace, mirroring ``jax.profiler.ProfileOptions`` (the attributes are kept; cranax's
    tracer records the same events whatever they say)."""

    def __init__(self):
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = True
        self.include_dataset_ops = True
        self.duration_ms = 0
        self.start_timestamp_ns = 0
        self.repository_path = ""
        self.session_id = ""
        self.raise_error_on_start_failure = False
        self.advanced_configuration = {}


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Starts recording; ``stop_trace`` writes the trace under ``log_dir``. Raises ``RuntimeError`` when a
    trace is already on (JAX's message). ``create_perfetto_trace`` also writes ``perfetto_trace.json.gz``
    (the trace without its ``metadata``) next to the trace; ``create_perfetto_link`` also serves that file on
    127.0.0.1:9001 when the trace stops, prints JAX's "Open URL in browser: ..." line and waits until
    ui.perfetto.dev has fetched it. Mirrors ``jax.profiler.start_trace``."""
    global _session
    with _lock:
        if _session is not None or not _core.profiler_start():
            raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
        _session = (os.fspath(log_dir), bool(create_perfetto_link), bool(create_perfetto_trace))
    _name_thread()


def _track_name(track):
    # "CpuDevice(id=0)" -> "/device:CPU:0", as JAX names device planes.
    for kind in ("Cpu", "Gpu"):
        p = f"{kind}Device(id="
        if track.startswith(p) and track.endswith(")"):
            return f"/device:{kind.upper()}:{track[len(p):-1]}"
    return track


def _chrome_trace(events):
    """The trace-event document for the core's event tuples."""
    out, pids, tids = [], {"host": 1}, {}
    for name, cat, track, tid, thread, start, dur, args in events:
        pid = pids.setdefault(track, len(pids) + 1)
        key = (pid, tid if track == "host" else 1)
        if key not in tids:
            tids[key] = thread if track == "host" else "stream"
        if track == "host" and thread and not tids[key]:
            tids[key] = thread
        ev = {"ph": "X", "pid": pid, "tid": key[1], "ts": start / 1000.0, "dur": dur / 1000.0, "name": name,
              "cat": cat}
        if args:
            ev["args"] = {str(k): str(v) for k, v in args}
        out.append(ev)
    meta = []
    for track, pid in sorted(pids.items(), key=lambda kv: kv[1]):
        meta.append({"ph": "M", "pid": pid, "name": "process_name",
                     "args": {"name": "/host:CPU" if track == "host" else _track_name(track)}})
        meta.append({"ph": "M", "pid": pid, "name": "process_sort_index", "args": {"sort_index": pid}})
    for (pid, tid), tname in sorted(tids.items()):
        meta.append({"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                     "args": {"name": tname or f"thread {tid}"}})
    out.sort(key=lambda e: (e["ts"], -e["dur"]))
    return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True}, "traceEvents": meta + out}


def _record_for(wait):
    """The profiler server's trace: records while ``wait()`` runs and returns the trace gzipped, as Perfetto
    reads it (no ``metadata``); None when a trace is already on. ``stop_trace`` does not end it."""
    global _session
    mine = (None, False, False)
    with _lock:
        if _session is not None or not _core.profiler_start():
            return None
        _session = mine
    try:
        wait()
    finally:
        with _lock:
            _session = None
            events = _core.profiler_stop() or []
    doc = _chrome_trace(events)
    doc.pop("metadata", None)
    return gzip.compress(json.dumps(doc, separators=(",", ":")).encode())


def stop_trace():
    """Stops the trace and writes it (see the module docstring for where and what). Raises ``RuntimeError``
    when no trace is on (JAX's message); returns None. Mirrors ``jax.profiler.stop_trace``."""
    global _session
    with _lock:
        if _session is None or _session[0] is None:   # (a profiler server's trace is not the caller's)
            raise RuntimeError("No profile started")
        log_dir, link, perfetto = _session
        _session = None
        events = _core.profiler_stop() or []
    doc = _chrome_trace(events)
    run = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    d = os.path.join(log_dir, "plugins", "profile", run)
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"{socket.gethostname()}.trace.json.gz")
    data = json.dumps(doc, separators=(",", ":")).encode()
    with gzip.open(path, "wb") as f:
        f.write(data)
    if perfetto or link:
        # Perfetto refuses the trace's "metadata" field: JAX drops it from this copy
        doc.pop("metadata", None)
        with gzip.open(os.path.join(d, "perfetto_trace.json.gz"), "wb") as f:
            f.write(json.dumps(doc).encode())
    if link:
        _serve_for_perfetto(d, "perfetto_trace.json.gz")


class _PerfettoRequests(http.server.SimpleHTTPRequestHandler):
    """Serves the trace folder to ui.perfetto.dev (any origin may read it) and notes each GET's path."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self):
        self.server.last_request = self.path
        super().do_GET()

    def do_POST(self):
        self.send_error(404, "File not found")


def _serve_for_perfetto(folder, filename, port=9001):
    """As JAX: ui.perfetto.dev reads traces from 127.0.0.1:9001; serve ``folder`` there until ``filename``
    has been fetched (the call blocks until then)."""
    handler = functools.partial(_PerfettoRequests, directory=folder)
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{filename}")
        while getattr(httpd, "last_request", None) != "/" + filename:
            httpd.handle_request()


class trace:
    """Context manager (and decorator) tracing its block: ``start_trace`` on entry, ``stop_trace`` on exit.
    Mirrors ``jax.profiler.trace``."""

    def __init__(self, log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
        self._args = (log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)

    def __enter__(self):
        start_trace(*self._args)
        return self

    def __exit__(self, *exc):
        stop_trace()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*a, **k):
            with trace(*self._args):
                return fn(*a, **k)
        return wrapper


class TraceAnnotation:
    """Context manager marking its block as a span named ``name`` on the calling thread's track, its keyword
    arguments as the span's arguments (strings, as JAX). Costs one check when no trace is on. Mirrors
    ``jax.profiler.TraceAnnotation``."""

    _cat = "annotation"

    def __init__(self, name, **kwargs):
        self._name = str(name)
        self._meta = kwargs
        self._start = None

    @staticmethod
    def is_enabled():
        """True while a trace is on."""
        return _core.profiler_enabled()

    def set_metadata(self, **kwargs):
        """Adds arguments to the span (before it ends)."""
        self._meta.update(kwargs)

    def __enter__(self):
        if _core.profiler_enabled():
            _name_thread()
            self._start = _core.profiler_now_ns()
        else:
            self._start = None
        return self

    def __exit__(self, *exc):
        if self._start is not None:
            end = _core.profiler_now_ns()
            _core.profiler_record(self._cat, self._name, self._start, end - self._start,
                                  [(str(k), str(v)) for k, v in self._meta.items()])
        return False


class StepTraceAnnotation(TraceAnnotation):
    """``TraceAnnotation`` for one training step: ``StepTraceAnnotation("train", step_num=3)``; its span has
    category ``step``. Mirrors ``jax.profiler.StepTraceAnnotation``."""

    _cat = "step"

    def __init__(self, name, **kwargs):
        super().__init__(name, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """Decorator: every call of ``func`` is a ``TraceAnnotation`` named ``name`` (default: its qualified
    name). Mirrors ``jax.profiler.annotate_function``."""
    name = name or getattr(func, "__qualname__", getattr(func, "__name__", str(func)))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


class _Span:
    """A span made by cranax's Python layers (``trace <fn>``); used by ``api``."""

    __slots__ = ("_name", "_start")

    def __init__(self, name):
        _name_thread()
        self._name = name
        self._start = _core.profiler_now_ns()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _core.profiler_record("trace", self._name, self._start, _core.profiler_now_ns() - self._start)
        return False


# --- device memory profile (pprof, as JAX) ---

def _varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num, value):
    """One protobuf field: ints as varints, bytes length-delimited."""
    if isinstance(value, (bytes, bytearray)):
        return _varint(num << 3 | 2) + _varint(len(value)) + bytes(value)
    return _varint(num << 3) + _varint(value)


def _live_buffers():
    """(device, dtype, shape, nbytes) of every live array the Python layer holds."""
    out = []
    for obj in gc.get_objects():
        # Concrete arrays only (isinstance(x, Array) is also True for tracers).
        if type(obj) is Array:
            try:
                if not obj.is_deleted():
                    out.append((str(obj.device), str(obj.dtype), tuple(obj.shape), int(obj.nbytes)))
            except AttributeError:  # an array whose construction has not finished: not live yet
                continue
    return out


def device_memory_profile(backend=None) -> bytes:
    """A profile of the live arrays, gzipped pprof (``profile.proto``) as JAX returns: sample types
    ``allocations``/``count`` and ``space``/``bytes``, one sample per array with labels ``device``, ``dtype``
    and ``shape``, its location the array's kind (``buffer``). Readable with ``pprof``. cranax counts the
    arrays the Python layer holds (buffers held only by the core, such as a pending computation's
    temporaries, are not in it). ``backend`` is accepted and ignored (every device is included). Mirrors
    ``jax.profiler.device_memory_profile``."""
    strings = [""]

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    body = bytearray()
    body += _field(1, _field(1, s("allocations")) + _field(2, s("count")))
    body += _field(1, _field(1, s("space")) + _field(2, s("bytes")))
    bufs = _live_buffers()
    body += _field(5, _field(1, 1) + _field(2, s("buffer")) + _field(3, s("buffer")))
    body += _field(4, _field(1, 1) + _field(4, _field(1, 1)))
    for dev, dtype, shape, nbytes in bufs:
        labels = b"".join(_field(3, _field(1, s(k)) + _field(2, s(v)))
                          for k, v in (("device", dev), ("dtype", dtype), ("shape", str(list(shape)))))
        labels += _field(3, _field(1, s("bytes")) + _field(3, nbytes))
        body += _field(2, _field(1, 1) + _field(2, 1) + _field(2, nbytes) + labels)
    for x in strings:
        body += _field(6, x.encode())
    return gzip.compress(bytes(body))


def save_device_memory_profile(filename, backend=None) -> None:
    """Writes ``device_memory_profile(backend)`` to ``filename``. Mirrors
    ``jax.profiler.save_device_memory_profile``."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


# --- the profiler server (``_profiler_server``) ---

_server = None   # the ProfilerServer start_server returned, until stop_server


def start_server(port, requires_backend=True):
    """Starts a profiler server listening on ``port`` (an int; 0: one the system picks, read back as the
    result's ``port``) on every interface, and returns it (a ``ProfilerServer``; it keeps listening while
    that object lives, also after ``stop_server``, as JAX's). Clients ask it over HTTP for a trace of this
    process of N ms (``GET /profile?duration_ms=N``: gzipped trace-event JSON Perfetto opens) or for the
    memory profile (``GET /memory_profile``: gzipped pprof); ``GET /`` lists them. JAX's server speaks the
    TensorFlow profiler's gRPC instead, so TensorBoard's "capture profile" and ``jax.collect_profile`` cannot
    use cranax's. Raises ``ValueError`` when a server was started and not stopped, ``TypeError`` for a port
    that is not an int (JAX's texts); a port taken or out of range prints a line on stderr and returns a
    server listening nowhere (``port`` None), as JAX's does. ``requires_backend``: the devices are started
    first (JAX's default). Mirrors ``jax.profiler.start_server``."""
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    try:
        port = operator.index(port)
    except TypeError:
        raise TypeError("start_server(): incompatible function arguments. The following argument types are "
                        "supported:\n    1. start_server(port: int) -> jaxlib._profiler.ProfilerServer\n\n"
                        f"Invoked with types: {type(port).__name__}") from None
    if requires_backend:
        _devices()
    _server = _ProfilerServer(port, _record_for, device_memory_profile)
    return _server


def stop_server():
    """Drops the profiler's reference to the server ``start_server`` returned (it stops listening once no
    other reference holds it, as JAX's). Raises ``ValueError`` ("No active profiler server.") when none was
    started. Mirrors ``jax.profiler.stop_server``."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None


def register_subprocess(pid, port):
    """JAX profiles a subprocess's gRPC profiler server alongside this process; cranax's traces cover this
    process only: raises ``NotImplementedError``."""
    raise NotImplementedError("cranax's traces cover this process only: it cannot profile a subprocess alongside")


class ProfileEvent:
    """One span of a trace: ``name``, ``start_ns``, ``duration_ns``, ``end_ns``, ``stats`` (its arguments as
    ``(name, value)`` pairs). Mirrors ``jax.profiler.ProfileEvent``."""

    def __init__(self, name, start_ns, duration_ns, stats=()):
        self.name, self.start_ns, self.duration_ns = name, start_ns, duration_ns
        self.stats = list(stats)

    @property
    def end_ns(self):
        return self.start_ns + self.duration_ns

    def __repr__(self):
        return f"ProfileEvent({self.name!r}, start_ns={self.start_ns}, duration_ns={self.duration_ns})"


class _ProfileLine:
    def __init__(self, name, events):
        self.name, self.events = name, events


class ProfilePlane:
    """One track of a trace (``/host:CPU``, ``/device:CPU:0``, ...): ``name``, ``lines`` (one per thread,
    each with ``name`` and ``events``), ``stats``. Mirrors ``jax.profiler.ProfilePlane``."""

    def __init__(self, name, lines):
        self.name, self.lines, self.stats = name, lines, []


class ProfileData:
    """A trace read back: ``ProfileData.from_file(path)`` on a ``.trace.json.gz`` that ``stop_trace`` wrote,
    ``planes``, ``find_plane_with_name``. cranax reads its own trace-event files, not XSpace protobufs
    (``from_serialized_xspace`` raises ``NotImplementedError``). Mirrors ``jax.profiler.ProfileData``."""

    def __init__(self, planes):
        self._planes = planes

    @property
    def planes(self):
        return iter(self._planes)

    def find_plane_with_name(self, name):
        return next((p for p in self._planes if p.name == name), None)

    @classmethod
    def from_file(cls, path):
        with gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb") as f:
            doc = json.load(f)
        return cls.from_trace_events(doc)

    @classmethod
    def from_trace_events(cls, doc):
        procs, threads, events = {}, {}, {}
        for e in doc.get("traceEvents", []):
            if e.get("ph") == "M" and e.get("name") == "process_name":
                procs[e["pid"]] = e["args"]["name"]
            elif e.get("ph") == "M" and e.get("name") == "thread_name":
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e.get("ph") == "X":
                events.setdefault((e["pid"], e["tid"]), []).append(
                    ProfileEvent(e["name"], int(round(e["ts"] * 1000)), int(round(e["dur"] * 1000)),
                                 sorted(e.get("args", {}).items())))
        planes = []
        for pid, pname in sorted(procs.items()):
            lines = [_ProfileLine(threads.get(k, str(k[1])), evs) for k, evs in sorted(events.items()) if k[0] == pid]
            planes.append(ProfilePlane(pname, lines))
        return cls(planes)

    @classmethod
    def from_serialized_xspace(cls, data):
        raise NotImplementedError("cranax writes trace-event JSON, not XSpace; use ProfileData.from_file")

    @classmethod
    def from_text_proto(cls, text):
        raise NotImplementedError("cranax writes trace-event JSON, not XSpace; use ProfileData.from_file")

    @staticmethod
    def text_proto_to_serialized_xspace(text):
        raise NotImplementedError("cranax writes trace-event JSON, not XSpace")

    @classmethod
    def from_raw_cpp_ptr(cls, ptr):
        raise NotImplementedError("cranax has no C++ XSpace")
