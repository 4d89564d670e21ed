"""Type stub for ``cranax._core``, the native (Rust) core: compiler entry points, device arrays, the
executable cache, devices and the thread-safe signature cache used by ``jit``."""
from typing import Any, Callable, Hashable, Sequence, final

import numpy as np

INLINE_MAX_WORK: int
"""Programs touching at most this many domain points run inline on the calling thread when the stream is idle."""

@final
class Device:
    @property
    def id(self) -> int: ...
    @property
    def platform(self) -> str: ...  # "cpu"
    @property
    def device_kind(self) -> str: ...  # "cpu"
    @property
    def description(self) -> str: ...  # e.g. "cpu:0 (x86_64, 2 threads)"
    @property
    def process_index(self) -> int: ...
    def synchronize(self) -> None:
        """Waits (GIL released) until every computation queued on this device has finished."""
    def __repr__(self) -> str: ...  # "CpuDevice(id=0)"
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class DeviceArray:
    """A device buffer that may still be pending. Dtype short names: bool, i32, u32, i64, f32, f64."""
    @staticmethod
    def from_numpy(arr: Any) -> DeviceArray:
        """Copies ``arr`` (made C-contiguous/native-endian as needed). Other dtypes raise TypeError."""
    @staticmethod
    def from_numpy_alias(arr: Any) -> DeviceArray | None:
        """Aliases ``arr``'s memory (no copy), holding ``arr``; None unless a C-contiguous, native-endian,
        nonempty NumPy array with 64-byte aligned data. Unsupported dtypes raise TypeError."""
    def buffer_pointer(self) -> int:
        """Address of the CPU buffer (waits); ValueError for an array on another device."""
    @staticmethod
    def from_scalar(value: bool | int | float, dtype: str) -> DeviceArray:
        """A 0-d array; ``dtype`` is a short name ("f32") or NumPy name ("float32")."""
    def to_numpy(self) -> np.ndarray:
        """Fresh writable copy; waits with the GIL released and raises the computation's error."""
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray: ...
    def block_until_ready(self) -> None:
        """Waits with the GIL released; raises the computation's error."""
    def is_ready(self) -> bool: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def ndim(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> Device: ...
    def reshape_view(self, shape: Sequence[int]) -> DeviceArray:
        """Same bytes, new shape (one dimension may be -1); ValueError if the element count differs."""
    def _ref_write(self, src: DeviceArray) -> DeviceArray:
        """A jax.Ref's write: src copied into this (the ref's private) storage, after the queued work."""
    def _ref_detach(self, held: Sequence[DeviceArray]) -> DeviceArray:
        """This array, or a copy when its storage is one of held's (a value later ref writes cannot change)."""
    def _host_view(self) -> np.ndarray:
        """Read-only flat uint8 view of the computed bytes, no copy (waits; a GPU array's host copy)."""
    @staticmethod
    def _empty_host(dtype: str, shape: Sequence[int]) -> tuple[DeviceArray, np.ndarray]:
        """A new CPU array with unspecified contents and a writable flat uint8 view of its bytes, which the
        caller fills before handing the array out."""

@final
class Executable:
    def execute(self, args: Sequence[DeviceArray], alias: Sequence[tuple[int, int]] | None = None,
                donate: Sequence[tuple[int, int]] | None = None) -> list[DeviceArray]:
        """Dispatches a call: inline when cheap and the stream is idle, else queued (outputs pending).
        Wrong argument count/shape/dtype raise TypeError now; execution errors surface at the wait.
        alias: (input, output) pairs whose output may be written into the input's buffer (a Ref's write);
        donate: the same for donated arguments, taken where the argument alone holds its storage."""
    def as_text(self) -> str:
        """Optimized program (jaxpr text) followed by the plan and its compiled kernels."""
    def jaxpr_text(self) -> str:
        """The optimized program in jaxpr text form."""
    @property
    def name(self) -> str: ...
    @property
    def num_outputs(self) -> int: ...
    @property
    def out_avals(self) -> list[tuple[tuple[int, ...], str]]: ...
    @property
    def in_avals(self) -> list[tuple[tuple[int, ...], str]]: ...
    @property
    def temp_bytes(self) -> int:
        """Bytes of the plan's temporaries (written buffers that are neither views nor outputs)."""

@final
class JitCache:
    """Thread-safe map from hashable keys to values; builds each key once even under races."""
    def __init__(self) -> None: ...
    def get(self, key: Hashable) -> Any | None: ...
    def get_or_insert_with(self, key: Hashable, fn_: Callable[[], Any]) -> Any:
        """On a miss calls ``fn_()`` once per key; concurrent callers wait (GIL released) for it. If it raises,
        the exception reaches that caller, the key stays absent and waiters retry."""
    def insert(self, key: Hashable, value: Any) -> None: ...
    def clear(self) -> None: ...
    def __len__(self) -> int: ...
    def __contains__(self, key: Hashable) -> bool: ...

def compile(program_json: str) -> Executable:
    """Parse → verify → optimize → fuse → Cranelift (GIL released). A hit in the second-level cache (keyed
    by the canonical optimized program) returns the cached executable without compiling.
    Raises ValueError (unreadable), TypeError (ill-typed), NotImplementedError (unsupported), RuntimeError."""

def verify(program_json: str) -> None:
    """Parse and verify only; raises ValueError/TypeError on a malformed program."""

def compile_count() -> int:
    """Real backend compilations so far in this process."""

def executable_cache_size() -> int: ...
def clear_caches() -> None:
    """Empties the executable cache and frees pooled buffers."""
def set_cache_max_size(n: int) -> None:
    """Bound of the executable cache; least-recently-used executables beyond it are dropped."""
def cache_max_size() -> int: ...
def set_buffer_pool_max_bytes(n: int) -> None:
    """Bound of freed large buffers kept for reuse by later arrays of the same size (0 disables)."""
def buffer_pool_bytes() -> int: ...
def devices() -> list[Device]: ...
def set_process_index(index: int) -> None: ...

# Placement and the GPU backend (rust/py/placement.rs). GPU functions exist in every build; without the
# `gpu` feature they report no devices.
class CommittedArray(DeviceArray):
    """A DeviceArray committed to its device (placed with device_put(x, device), or computed from such)."""

HAS_GPU_BACKEND: bool
def put(x: DeviceArray, device: Device, committed: bool = True) -> DeviceArray:
    """x on device (a transfer when it is elsewhere), committed or not."""
def is_committed(x: DeviceArray) -> bool: ...
def block(x: DeviceArray) -> None:
    """Waits for x's computation without reading GPU values back; raises its error."""
def set_default_device(device: Device | None = None) -> None:
    """Where uncommitted computations run (None: the CPU)."""
def get_default_device() -> Device: ...
def gpu_devices() -> list[Device]:
    """GPU devices, one per usable wgpu adapter (discovered on the first call)."""
def gpu_unavailable_reason() -> str: ...
def gpu_info(device: Device) -> dict[str, Any]:
    """name, backend, device_type, driver, driver_info, software, max_storage_buffer_binding_size,
    max_buffer_size, max_storage_buffers_per_shader_stage, shader_f16, pipelines, pipeline_compiles, pool_bytes."""
def gpu_shaders(exe: Executable, device: Device) -> list[str]:
    """The WGSL of exe's kernels as compiled for GPU device."""
def gpu_clear_caches() -> None: ...

# Testing hooks.
def _stream_sleep(ms: int) -> None: ...
def _simd_levels() -> dict[str, str]: ...
def _stack_chunk_cache(get_fn: int, set_fn: int, keep: int) -> tuple[int, int]: ...
def _queued_failure(message: str, panic: bool = False, delay_ms: int = 0) -> DeviceArray: ...

# Host callbacks (cranax.primitives.callback): the dispatcher a compiled callback step calls, GIL taken.
def _set_host_callback(dispatch: Callable[[int, list[DeviceArray], list[tuple[list[int], str]]], Any]) -> None: ...

# jax.profiler and the persistent compilation cache (rust/py/profiler.rs).
def profiler_start() -> bool:
    """Starts recording trace events; False when a trace is already on."""
def profiler_stop() -> list[tuple[str, str, str, int, str, int, int, list[tuple[str, str]]]] | None:
    """Stops recording; (name, cat, track, tid, thread, start_ns, dur_ns, args) per span, None if none was on."""
def profiler_enabled() -> bool: ...
def profiler_now_ns() -> int:
    """Nanoseconds since the profiler's epoch (every event's clock)."""
def profiler_name_thread(name: str) -> None: ...
def profiler_record(cat: str, name: str, start_ns: int, dur_ns: int, args: list[tuple[str, str]] = ...) -> None:
    """Records a span of the calling thread (cat: "annotation", "step" or "trace"; ValueError otherwise)."""
def set_persistent_cache(dir: str | None, min_compile_time_secs: float, min_entry_size_bytes: int,
                         build_id: str) -> None:
    """Configures the persistent compilation cache (dir None: off); OSError when dir cannot be created."""
def persistent_cache_stats() -> dict[str, int | str]:
    """hits, misses, rejected, writes, errors and last_error since the last reset."""
def reset_persistent_cache_stats() -> None: ...
