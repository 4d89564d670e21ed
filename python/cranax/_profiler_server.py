"""The profiler server ``jax.profiler.start_server(port)`` starts: a listener on every interface (``[::]:port``,
IPv4 too, as JAX's) answering HTTP requests for traces and memory profiles of this process, in a daemon
thread, until its ``ProfilerServer`` object is garbage collected.

JAX's server is the TensorFlow profiler's gRPC service (TensorBoard's "capture profile", ``jax.collect_profile``);
cranax has no gRPC, so those clients cannot connect. What a client can do instead:

* ``GET /profile?duration_ms=N`` (default 1000, at most 600000): records this process for N ms as
  ``jax.profiler.trace`` does and answers the trace, Chrome trace-event JSON gzipped (``application/gzip``;
  Perfetto and chrome://tracing open it), e.g. ``curl -o t.json.gz 'http://localhost:9999/profile?duration_ms=2000'``.
  ``409 Conflict`` while another trace is on; while the server's trace is on, ``start_trace`` raises as for
  any trace.
* ``GET /memory_profile``: ``jax.profiler.device_memory_profile()`` (gzipped pprof: ``pprof -top URL``).
* ``GET /``: this list, as text.
"""
import select
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler

__all__ = ["ProfilerServer"]

_HELP = __doc__[__doc__.index("What a client can do"):]
_MAX_MS = 600_000


class ProfilerServer:
    """What ``start_server`` returns (JAX's ``jaxlib._profiler.ProfilerServer``): the server listens while this
    object lives (``stop_server`` only drops the profiler's reference to it, as JAX's does). ``port``: the
    port it listens on (the one the system chose for port 0), None when binding failed (then, as JAX's, a
    line on stderr and a server that listens nowhere). See the module docstring for the requests it serves."""

    _shown_as = None   # the class path its repr prints (JAX's under the alias)

    def __init__(self, port, record, memory_profile):
        self.port = None
        self._stop = None
        sock = _bind(port)
        if sock is None:
            return
        self.port = sock.getsockname()[1]
        wake_r, wake_w = socket.socketpair()
        self._stop = (threading.Event(), wake_w)
        # the thread holds the sockets, not this object, so dropping the object's last reference stops it
        self._thread = threading.Thread(target=_serve, args=(sock, wake_r, wake_w, self._stop[0],
                                                             _Sources(record, memory_profile)),
                                        name=f"profiler server :{self.port}", daemon=True)
        self._thread.start()

    def _close(self):
        if self._stop is None:
            return
        stop, wake_w = self._stop
        self._stop = None
        stop.set()
        try:
            wake_w.send(b"x")
        except OSError:
            pass
        if threading.current_thread() is not self._thread:
            self._thread.join()

    def __del__(self):
        self._close()

    def __repr__(self):
        cls = type(self)
        return f"<{cls._shown_as or cls.__module__ + '.' + cls.__qualname__} object at {id(self):#x}>"


def _bind(port):
    """A listening socket on every interface at ``port`` (IPv6 with IPv4 mapped, else IPv4), None with a line on
    stderr when the port is out of range or taken."""
    try:
        if not 0 <= port <= 65535:
            raise OSError(f"port {port} out of range")
        try:
            sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            addr = ("::", port)
        except OSError:   # no IPv6 on this host
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            addr = ("0.0.0.0", port)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(16)
        except OSError:
            sock.close()
            raise
        return sock
    except OSError as e:
        print(f"Unable to bind to [::]:{port} ({e.strerror or e}): the profiler server listens nowhere",
              file=sys.stderr)
        return None


class _Sources:
    """What the requests are answered from (``profiler``'s functions): ``record(wait)`` the trace recorded while
    ``wait()`` runs, gzipped (None when a trace is on); ``memory_profile()`` the gzipped pprof."""

    def __init__(self, record, memory_profile):
        self.record, self.memory_profile = record, memory_profile


def _serve(sock, wake_r, wake_w, stop, sources):
    with sock, wake_r, wake_w:
        while not stop.is_set():
            ready, _, _ = select.select([sock, wake_r], [], [])
            if sock in ready and not stop.is_set():
                try:
                    conn, addr = sock.accept()
                except OSError:
                    continue
                threading.Thread(target=_answer, args=(conn, addr, sources), daemon=True).start()


def _answer(conn, addr, sources):
    with conn:
        try:
            _Requests(conn, addr, sources)   # (its ``server``: the sources)
        except Exception:   # a client that went away: nothing to answer
            pass


class _Requests(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    timeout = 30   # seconds a client may take to send its request

    def log_message(self, *args):   # no access log on the program's stderr
        pass

    def _reply(self, code, body, ctype):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Access-Control-Allow-Origin", "*")   # ui.perfetto.dev may fetch it
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/":
            return self._reply(200, _HELP.encode(), "text/plain; charset=utf-8")
        if url.path == "/memory_profile":
            return self._reply(200, self.server.memory_profile(), "application/gzip")
        if url.path != "/profile":
            return self._reply(404, f"no such resource {url.path!r}\n\n{_HELP}".encode(), "text/plain; charset=utf-8")
        try:
            ms = int(query.get("duration_ms", ["1000"])[0])
            if not 0 < ms <= _MAX_MS:
                raise ValueError
        except ValueError:
            return self._reply(400, f"duration_ms must be an integer in 1..{_MAX_MS}\n".encode(),
                               "text/plain; charset=utf-8")
        data = self.server.record(lambda: time.sleep(ms / 1000.0))
        if data is None:
            return self._reply(409, b"Profile has already been started. Only one profile may be run at a time.\n",
                               "text/plain; charset=utf-8")
        self._reply(200, data, "application/gzip")
