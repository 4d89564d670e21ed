//! A few freed frame-stack chunks kept for reuse (the first call's hidden cost).
//!
//! CPython 3.11+ keeps the frames of Python calls in 16 KiB chunks that it maps and unmaps through its arena
//! allocator (`PyObject_SetArenaAllocator`), with no slack: each time the stack depth crosses a chunk's start
//! going down it maps a chunk (a page fault on first touch) and going back up it unmaps it. Tracing recurses
//! up and down around such depths: diffrax's first jitted call crossed ~1,400 times, i.e. ~1,400 mmap/munmap
//! pairs and faults (6 µs of CPU each on a Firecracker VM, far more under gVisor), and how many depends on the
//! depth the call starts at (a plain call and `trace().lower().compile()` differ by hundreds).
//!
//! The wrapper here hands the blocks CPython frees that are no larger than `MAX_BLOCK` (never its 1 MiB
//! object arenas) back for the next request of the same size, up to `keep` of them; everything else goes to
//! the allocator that was installed before. Every kept block came from that allocator, so any block may
//! still be released through it. Python calls it with the GIL held; the mutex covers interpreters with a
//! GIL of their own. Installed once at import by `cranax._stack_chunks`.
use pyo3::prelude::*;
use std::ffi::c_void;
use std::sync::Mutex;

type AllocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
type FreeFn = unsafe extern "C" fn(*mut c_void, *mut c_void, usize);

/// CPython's `PyObjectArenaAllocator` (unchanged since 3.4).
#[repr(C)]
#[derive(Clone, Copy)]
struct ArenaAllocator {
    ctx: *mut c_void,
    alloc: Option<AllocFn>,
    free: Option<FreeFn>,
}

/// Blocks above this size are CPython's object arenas (1 MiB; 256 KiB on 32-bit hosts): never kept.
const MAX_BLOCK: usize = 64 * 1024;
/// Slots for kept blocks; diffrax's first call never held more than two at once.
const SLOTS: usize = 8;

struct State {
    /// The allocator installed before ours (ctx, alloc, free as addresses: the static must be `Send`).
    prev: Option<(usize, usize, usize)>,
    keep: usize,
    held: [(usize, usize); SLOTS],
    n: usize,
    reused: u64,
}

static STATE: Mutex<State> = Mutex::new(State { prev: None, keep: 0, held: [(0, 0); SLOTS], n: 0, reused: 0 });

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe fn prev_alloc(prev: (usize, usize, usize), size: usize) -> *mut c_void {
    // SAFETY: `prev` is the allocator CPython had installed, read through its own getter.
    let f: AllocFn = std::mem::transmute::<usize, AllocFn>(prev.1);
    f(prev.0 as *mut c_void, size)
}

unsafe fn prev_free(prev: (usize, usize, usize), ptr: usize, size: usize) {
    let f: FreeFn = std::mem::transmute::<usize, FreeFn>(prev.2);
    f(prev.0 as *mut c_void, ptr as *mut c_void, size)
}

unsafe extern "C" fn alloc(_ctx: *mut c_void, size: usize) -> *mut c_void {
    let prev = {
        let mut s = state();
        if let Some(i) = s.held[..s.n].iter().position(|&(_, sz)| sz == size) {
            let p = s.held[i].0;
            s.n -= 1;
            let last = s.n;
            s.held[i] = s.held[last];
            s.reused += 1;
            return p as *mut c_void;
        }
        s.prev
    };
    match prev {
        Some(prev) => prev_alloc(prev, size),
        None => std::ptr::null_mut(),
    }
}

unsafe extern "C" fn free(_ctx: *mut c_void, ptr: *mut c_void, size: usize) {
    let prev = {
        let mut s = state();
        if size <= MAX_BLOCK && s.n < s.keep.min(SLOTS) && !ptr.is_null() {
            let n = s.n;
            s.held[n] = (ptr as usize, size);
            s.n += 1;
            return;
        }
        s.prev
    };
    if let Some(prev) = prev {
        prev_free(prev, ptr as usize, size);
    }
}

/// Installs the wrapper (first call) and sets how many freed blocks it keeps (`keep`, at most 8; 0 releases
/// the kept ones and passes every block through). `get_fn`/`set_fn` are the addresses of CPython's
/// `PyObject_GetArenaAllocator`/`PyObject_SetArenaAllocator` (from `ctypes.pythonapi`: abi3 modules cannot
/// link them on every platform). Returns (blocks reused so far, blocks held now).
#[pyfunction]
fn _stack_chunk_cache(get_fn: usize, set_fn: usize, keep: usize) -> PyResult<(u64, usize)> {
    if get_fn == 0 || set_fn == 0 {
        return Err(pyo3::exceptions::PyValueError::new_err("null PyObject_Get/SetArenaAllocator address"));
    }
    let mut release = Vec::new();
    let out = {
        let mut s = state();
        if s.prev.is_none() {
            let get: unsafe extern "C" fn(*mut ArenaAllocator) = unsafe { std::mem::transmute::<usize, _>(get_fn) };
            let set: unsafe extern "C" fn(*mut ArenaAllocator) = unsafe { std::mem::transmute::<usize, _>(set_fn) };
            let mut old = ArenaAllocator { ctx: std::ptr::null_mut(), alloc: None, free: None };
            // SAFETY: CPython's getter fills the struct it is handed.
            unsafe { get(&mut old) };
            let (Some(a), Some(f)) = (old.alloc, old.free) else {
                return Err(pyo3::exceptions::PyRuntimeError::new_err("CPython has no arena allocator installed"));
            };
            s.prev = Some((old.ctx as usize, a as usize, f as usize));
            let mut mine = ArenaAllocator { ctx: std::ptr::null_mut(), alloc: Some(alloc), free: Some(free) };
            // SAFETY: `set` copies the struct and calls neither function (so the lock held here is not re-entered).
            unsafe { set(&mut mine) };
        }
        s.keep = keep.min(SLOTS);
        while s.n > s.keep {
            s.n -= 1;
            let n = s.n;
            release.push(s.held[n]);
        }
        (s.reused, s.n, s.prev)
    };
    if let Some(prev) = out.2 {
        for (p, size) in release {
            unsafe { prev_free(prev, p, size) };
        }
    }
    Ok((out.0, out.1))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_stack_chunk_cache, m)?)
}
