//! Device buffers for the CPU: 64-byte aligned, shared storage so views (reshape) cost nothing.
//!
//! A storage is either cranax's own allocation or borrowed foreign memory (a DLPack import that aliases the
//! producer's CPU buffer, as JAX's does): the borrowed kind holds an owner (the producer's Python object)
//! that keeps the memory valid until the storage is dropped, and is never pooled or freed by cranax.
//! Borrowed memory is only ever read: the runtime writes kernel outputs into fresh storages, never into
//! an input's.
//!
//! Large storages are recycled: when one is dropped its memory goes to a small pool keyed by exact size
//! (bounded in total bytes), and the next storage of that size reuses it. The steady state of a jitted
//! loop (same shapes every call) then touches already-mapped pages instead of paying a page fault per 4 KiB.
//!
//! Small storages (at most `SMALL_MAX_BYTES`: scalars, short vectors, the per-step values of a loop-heavy
//! program) are recycled through a per-thread cache instead: an aligned allocation bypasses the allocator's
//! fast per-thread path (glibc's `memalign` takes the arena's slow path on every call), and a program of
//! many tiny steps (a diffrax solve) otherwise spends a fifth of its time in malloc and free.
//!
//! Whole small buffers are recycled too (`Buffer::recycle`): an intermediate a plan run drops while it is
//! the buffer's only holder keeps its `Arc` and shape, and the next kernel output of that size on the same
//! thread takes it as is, so a run of tiny kernels allocates nothing. Uniqueness (`Arc::get_mut`) is what
//! makes this sound: a buffer any `Array`, view or cache still holds is never handed out again.
use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::ir::{Aval, DType};

pub const ALIGN: usize = 64;

/// Storages at least this large are recycled through the pool.
pub const POOL_MIN_BYTES: usize = 64 * 1024;
/// Freed entries kept per size.
const POOL_PER_SIZE: usize = 32;
static POOL_MAX_BYTES: AtomicUsize = AtomicUsize::new(256 * 1024 * 1024);

struct Pool {
    free: HashMap<usize, Vec<usize>>,
    bytes: usize,
}

static POOL: LazyLock<Mutex<Pool>> = LazyLock::new(|| Mutex::new(Pool { free: HashMap::new(), bytes: 0 }));

/// Storages of at most this many bytes are rounded up to a multiple of `ALIGN` (one size class per
/// multiple) and recycled through the freeing thread's cache.
pub const SMALL_MAX_BYTES: usize = 4096;
const SMALL_CLASSES: usize = SMALL_MAX_BYTES / ALIGN;
/// Freed blocks kept per size class and thread, and the most bytes one thread's cache keeps.
const SMALL_PER_CLASS: usize = 64;
const SMALL_CACHE_BYTES: usize = 1 << 20;

/// One thread's free small blocks, by size class (`small_class`).
struct SmallCache {
    free: Vec<Vec<NonNull<u8>>>,
    bytes: usize,
}

impl SmallCache {
    fn clear(&mut self) {
        for (c, list) in self.free.iter_mut().enumerate() {
            for p in list.drain(..) {
                // SAFETY: cached blocks were allocated by `Storage` with the layout of class `c`.
                unsafe { dealloc(p.as_ptr(), Layout::from_size_align_unchecked((c + 1) * ALIGN, ALIGN)) }
            }
        }
        self.bytes = 0;
    }
}

impl Drop for SmallCache {
    fn drop(&mut self) {
        self.clear();
    }
}

thread_local! {
    static SMALL: std::cell::RefCell<SmallCache> =
        std::cell::RefCell::new(SmallCache { free: (0..SMALL_CLASSES).map(|_| Vec::new()).collect(), bytes: 0 });
}

/// The size class of a small storage of `bytes` (1..=SMALL_MAX_BYTES) bytes.
fn small_class(bytes: usize) -> usize {
    (bytes - 1) / ALIGN
}

/// Storages at least this large are aligned to `HUGE_ALIGN` and, on Linux, advised for transparent huge
/// pages: fresh memory is then faulted in 2 MiB at a time. On a VM each 4 KiB first-touch fault costs
/// microseconds, and the first call of a 1024² product wrote its fresh 4 MiB output through ~1,000 of them
/// (milliseconds, a third of that call).
const HUGE_MIN_BYTES: usize = 4 << 20;
const HUGE_ALIGN: usize = 2 << 20;

/// The layout a storage of `bytes` (> 0) bytes is allocated with: small ones take their whole class.
fn storage_layout(bytes: usize) -> Option<Layout> {
    let size = if bytes <= SMALL_MAX_BYTES { (small_class(bytes) + 1) * ALIGN } else { bytes };
    Layout::from_size_align(size, if size >= HUGE_MIN_BYTES { HUGE_ALIGN } else { ALIGN }).ok()
}

/// Advises the whole 2 MiB pages of a fresh, untouched block of `size` bytes at `p` for huge pages (only
/// advice: where the kernel declines, 4 KiB pages serve as before).
fn advise_huge(p: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if size >= HUGE_MIN_BYTES && !p.is_null() {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        // SAFETY: [p, p + len) lies inside the block just allocated (p is HUGE_ALIGN-aligned, len <= size);
        // madvise only changes how the kernel backs those pages.
        unsafe { madvise(p.cast(), size & !(HUGE_ALIGN - 1), MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, size);
}

fn small_take(bytes: usize) -> Option<NonNull<u8>> {
    // `try_with`: during thread teardown the cache may be gone; the allocator serves then.
    SMALL
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            let p = c.free[small_class(bytes)].pop()?;
            c.bytes -= (small_class(bytes) + 1) * ALIGN;
            Some(p)
        })
        .ok()
        .flatten()
}

/// Keeps the small block `ptr` in this thread's cache; false when it is full (the caller frees it).
fn small_put(ptr: NonNull<u8>, bytes: usize) -> bool {
    let size = (small_class(bytes) + 1) * ALIGN;
    SMALL
        .try_with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else { return false };
            if c.bytes + size > SMALL_CACHE_BYTES || c.free[small_class(bytes)].len() >= SMALL_PER_CLASS {
                return false;
            }
            c.free[small_class(bytes)].push(ptr);
            c.bytes += size;
            true
        })
        .unwrap_or(false)
}

fn pool_take(bytes: usize) -> Option<NonNull<u8>> {
    let mut p = POOL.lock();
    let addr = p.free.get_mut(&bytes)?.pop()?;
    p.bytes -= bytes;
    NonNull::new(addr as *mut u8)
}

/// Keeps `ptr` for reuse; false when the pool is full (the caller frees it).
fn pool_put(ptr: NonNull<u8>, bytes: usize) -> bool {
    let max = POOL_MAX_BYTES.load(Ordering::Relaxed);
    let mut p = POOL.lock();
    if p.bytes + bytes > max {
        return false;
    }
    let list = p.free.entry(bytes).or_default();
    if list.len() >= POOL_PER_SIZE {
        return false;
    }
    list.push(ptr.as_ptr() as usize);
    p.bytes += bytes;
    true
}

/// Spare small buffers kept per thread and size class (`Buffer::recycle`), at most `SPARE_PER_CLASS` each
/// (a fused loop's outputs are thirty scalars of one class) and `SPARE_BYTES` in all.
const SPARE_PER_CLASS: usize = 48;
const SPARE_BYTES: usize = 256 * 1024;

struct Spares {
    by_class: Vec<Vec<Buffer>>,
    bytes: usize,
}

thread_local! {
    static SPARE: std::cell::RefCell<Spares> = const { std::cell::RefCell::new(Spares { by_class: Vec::new(), bytes: 0 }) };
}

/// A spare buffer of exactly `bytes` bytes read as `aval`: one of the same aval when there is one (no
/// allocation at all), else one of the same size given `aval`.
fn spare_take(aval: &Aval, bytes: usize) -> Option<Buffer> {
    SPARE
        .try_with(|c| {
            let mut c = c.try_borrow_mut().ok()?;
            let list = c.by_class.get_mut(small_class(bytes))?;
            let i = list.iter().rposition(|b| b.aval == *aval).or_else(|| list.iter().rposition(|b| b.storage.len() == bytes))?;
            let mut b = list.swap_remove(i);
            c.bytes -= bytes;
            if b.aval != *aval {
                b.aval = aval.clone();
            }
            Some(b)
        })
        .ok()
        .flatten()
}

/// Frees every pooled storage (e.g. from `clear_caches`), and the calling thread's small blocks.
pub fn trim_pool() {
    let spare = SPARE.try_with(|c| {
        let Ok(mut c) = c.try_borrow_mut() else { return Vec::new() };
        c.bytes = 0;
        std::mem::take(&mut c.by_class)
    });
    drop(spare);
    let _ = SMALL.try_with(|c| {
        if let Ok(mut c) = c.try_borrow_mut() {
            c.clear();
        }
    });
    let free = {
        let mut p = POOL.lock();
        p.bytes = 0;
        std::mem::take(&mut p.free)
    };
    for (bytes, ptrs) in free {
        for a in ptrs {
            // SAFETY: pooled pointers were allocated by `Storage` with `storage_layout` of this size.
            if let Some(layout) = storage_layout(bytes) {
                unsafe { dealloc(a as *mut u8, layout) }
            }
        }
    }
    release_free_heap();
}

/// Hands memory the allocator keeps after frees back to the OS (glibc keeps freed chunks of the heap —
/// e.g. the machine code and plans of executables a cache clear just dropped — until `malloc_trim`).
/// A no-op elsewhere.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::os::raw::c_int;
        }
        // SAFETY: glibc's malloc_trim only releases free memory; it is thread-safe.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Bounds the bytes the pool may keep (0 disables it).
pub fn set_pool_max_bytes(n: usize) {
    POOL_MAX_BYTES.store(n, Ordering::Relaxed);
    if n == 0 {
        trim_pool();
    }
}

/// Bytes currently kept by the pool.
pub fn pool_bytes() -> usize {
    POOL.lock().bytes
}

/// Raw, aligned bytes: owned, or borrowed and kept valid by `owner`.
pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
    /// What keeps borrowed memory alive (dropped with the storage); None for cranax's own allocations.
    owner: Option<Box<dyn Send + Sync>>,
}

// The storage is plain memory; writes happen only from the one kernel that produces it, before any reader
// is given access (the runtime orders this).
unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

/// A recycled block for `bytes` bytes: the per-thread small cache for small sizes, the pool for big ones,
/// none in between (those go to the allocator).
fn recycled(bytes: usize) -> Option<NonNull<u8>> {
    if bytes <= SMALL_MAX_BYTES {
        small_take(bytes)
    } else if bytes >= POOL_MIN_BYTES {
        pool_take(bytes)
    } else {
        None
    }
}

impl Storage {
    /// Zeroed storage of `bytes` bytes; a `Memory` error (never an abort) if it cannot be had.
    pub fn zeroed(bytes: usize) -> Result<Storage> {
        if bytes == 0 {
            return Ok(Storage { ptr: NonNull::<u64>::dangling().cast(), bytes: 0, owner: None });
        }
        let reused = recycled(bytes);
        if let Some(ptr) = reused {
            // SAFETY: a recycled block of at least `bytes` bytes, owned by nobody else.
            unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, bytes) };
            return Ok(Storage { ptr, bytes, owner: None });
        }
        let layout = storage_layout(bytes).ok_or_else(|| Error::Memory { bytes: bytes as u128, what: "buffer".into() })?;
        let p = if layout.size() >= HUGE_MIN_BYTES {
            // advised before the zero fill touches it (alloc_zeroed at this alignment is alloc + memset)
            // SAFETY: layout has nonzero size; the zero fill stays inside the block.
            unsafe {
                let p = alloc(layout);
                advise_huge(p, layout.size());
                if !p.is_null() {
                    std::ptr::write_bytes(p, 0, layout.size());
                }
                p
            }
        } else {
            // SAFETY: layout has nonzero size.
            unsafe { alloc_zeroed(layout) }
        };
        NonNull::new(p)
            .map(|ptr| Storage { ptr, bytes, owner: None })
            .ok_or(Error::Memory { bytes: bytes as u128, what: "buffer".into() })
    }
    /// Storage of `bytes` bytes with unspecified contents, for callers that overwrite all of it.
    pub fn uninit(bytes: usize) -> Result<Storage> {
        if bytes == 0 {
            return Ok(Storage { ptr: NonNull::<u64>::dangling().cast(), bytes: 0, owner: None });
        }
        let reused = recycled(bytes);
        if let Some(ptr) = reused {
            return Ok(Storage { ptr, bytes, owner: None });
        }
        let layout = storage_layout(bytes).ok_or_else(|| Error::Memory { bytes: bytes as u128, what: "buffer".into() })?;
        // SAFETY: layout has nonzero size.
        let p = unsafe { alloc(layout) };
        advise_huge(p, layout.size());
        NonNull::new(p)
            .map(|ptr| Storage { ptr, bytes, owner: None })
            .ok_or(Error::Memory { bytes: bytes as u128, what: "buffer".into() })
    }
    /// Borrows `bytes` bytes at `ptr` without copying; `owner` is held (and dropped with the storage) to keep
    /// them valid. `Arguments` error unless `ptr` is `ALIGN`-aligned (kernels assume it) and `bytes` > 0.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` must stay valid for reads for as long as `owner` lives, and the caller accepts that
    /// whoever else holds that memory may write to it (as with JAX's DLPack imports).
    pub unsafe fn borrowed(ptr: *mut u8, bytes: usize, owner: Box<dyn Send + Sync>) -> Result<Storage> {
        if bytes == 0 || (ptr as usize) % ALIGN != 0 {
            return Err(Error::Arguments(format!(
                "cannot borrow {bytes} bytes at {ptr:p}: need a nonempty buffer aligned to {ALIGN} bytes"
            )));
        }
        let ptr = NonNull::new(ptr).ok_or_else(|| Error::Arguments("cannot borrow a null pointer".into()))?;
        Ok(Storage { ptr, bytes, owner: Some(owner) })
    }
    /// True for borrowed foreign memory.
    pub fn is_borrowed(&self) -> bool {
        self.owner.is_some()
    }
    pub fn len(&self) -> usize {
        self.bytes
    }
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if self.owner.take().is_some() {
            return; // borrowed: dropping the owner releases it; the memory is not cranax's to free
        }
        if self.bytes == 0 {
            return;
        }
        if self.bytes <= SMALL_MAX_BYTES && small_put(self.ptr, self.bytes) {
            return;
        }
        if self.bytes >= POOL_MIN_BYTES && pool_put(self.ptr, self.bytes) {
            return;
        }
        if let Some(layout) = storage_layout(self.bytes) {
            // SAFETY: allocated in `zeroed`/`uninit` with this layout (`storage_layout` of the same size).
            unsafe { dealloc(self.ptr.as_ptr(), layout) }
        }
    }
}

/// An array on the CPU: storage plus the aval it is read as. Cloning shares the storage.
#[derive(Clone)]
pub struct Buffer {
    pub storage: Arc<Storage>,
    pub aval: Aval,
}

impl Buffer {
    /// A zeroed buffer for `aval`; `Memory` error naming the bytes when too large.
    pub fn alloc(aval: &Aval) -> Result<Buffer> {
        let bytes = Buffer::byte_len(aval)?;
        Ok(Buffer { storage: Arc::new(Storage::zeroed(bytes)?), aval: aval.clone() })
    }
    /// A buffer for `aval` with unspecified contents (pooled memory is reused as is), for producers that
    /// write every element (kernel outputs).
    pub fn uninit(aval: &Aval) -> Result<Buffer> {
        let bytes = Buffer::byte_len(aval)?;
        if bytes > 0 && bytes <= SMALL_MAX_BYTES {
            if let Some(b) = spare_take(aval, bytes) {
                return Ok(b);
            }
        }
        Ok(Buffer { storage: Arc::new(Storage::uninit(bytes)?), aval: aval.clone() })
    }
    /// Drops this handle, keeping the whole buffer for the next `uninit` of its size on this thread when
    /// it is small, cranax's own memory, and this is its only holder (no `Array`, view or cache can still
    /// read it, so handing it out again aliases nothing); otherwise a plain drop.
    pub fn recycle(self) {
        let bytes = self.storage.len();
        // Plain loads, not `Arc::get_mut`'s locked compare-exchange (this runs for every intermediate): no
        // `Weak` of a storage exists, so one strong count held here means no one else can reach it; the
        // fence orders the other holders' last reads (their release decrements) before its reuse.
        let s = &self.storage;
        if bytes == 0 || bytes > SMALL_MAX_BYTES || Arc::strong_count(s) != 1 || Arc::weak_count(s) != 0 || s.is_borrowed() {
            return;
        }
        std::sync::atomic::fence(Ordering::Acquire);
        let _ = SPARE.try_with(|c| {
            if let Ok(mut c) = c.try_borrow_mut() {
                if c.by_class.is_empty() {
                    c.by_class = (0..SMALL_CLASSES).map(|_| Vec::new()).collect();
                }
                let k = small_class(bytes);
                if c.bytes + bytes <= SPARE_BYTES && c.by_class[k].len() < SPARE_PER_CLASS {
                    c.by_class[k].push(self);
                    c.bytes += bytes;
                }
            }
        });
    }
    /// Bytes of a buffer for `aval`; `Memory` error naming the bytes when too large.
    pub fn byte_len(aval: &Aval) -> Result<usize> {
        aval
            .numel()
            .and_then(|n| n.checked_mul(aval.dtype.size()))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| Error::Memory {
                bytes: aval.shape.iter().fold(aval.dtype.size() as u128, |a, &d| a.saturating_mul(d as u128)),
                what: format!("array of shape {:?} {}", aval.shape, aval.dtype.short_name()),
            })
    }
    /// A buffer holding a copy of `bytes` (little-endian elements of `aval.dtype`, row-major).
    pub fn from_bytes(aval: &Aval, bytes: &[u8]) -> Result<Buffer> {
        let want = Buffer::byte_len(aval)?;
        if bytes.len() != want {
            return Err(Error::Arguments(format!(
                "expected {} bytes for shape {:?} {}, got {}",
                want, aval.shape, aval.dtype.short_name(), bytes.len()
            )));
        }
        let b = Buffer { storage: Arc::new(Storage::uninit(want)?), aval: aval.clone() };
        // SAFETY: sizes checked; the new storage is not shared yet.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), b.storage.as_ptr(), bytes.len()) };
        Ok(b)
    }
    /// The same bytes read under another shape with the same element count (reshape/squeeze/expand_dims).
    pub fn view(&self, aval: &Aval) -> Buffer {
        Buffer { storage: self.storage.clone(), aval: aval.clone() }
    }
    pub fn dtype(&self) -> DType {
        self.aval.dtype
    }
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: storage is valid for its length while self lives.
        unsafe { std::slice::from_raw_parts(self.storage.as_ptr(), self.storage.len()) }
    }
    pub fn as_ptr(&self) -> *mut u8 {
        self.storage.as_ptr()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    #[test]
    fn pooled_storage_is_reused_and_zeroed() {
        let aval = Aval::new(DType::F32, vec![3 * POOL_MIN_BYTES / 4 + 1]);
        let b = Buffer::from_bytes(&aval, &vec![7u8; Buffer::byte_len(&aval).unwrap()]).unwrap();
        let addr = b.as_ptr() as usize;
        drop(b);
        let c = Buffer::alloc(&aval).unwrap();
        // Tests run in parallel, so another test may have taken it; when reused it must be zeroed.
        if c.as_ptr() as usize == addr {
            assert!(c.as_bytes().iter().all(|&x| x == 0));
        }
        assert!(c.as_bytes().iter().all(|&x| x == 0));
        let small = Buffer::from_bytes(&Aval::new(DType::I32, vec![2]), &[1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        assert_eq!(small.as_bytes(), &[1, 0, 0, 0, 2, 0, 0, 0]);
    }

    /// A small block freed on a thread is the next one of its size class that thread allocates (the
    /// cache is per thread, so parallel tests cannot take it), zeroed when asked for zeroed memory, and
    /// a block of another class is not handed out for it.
    #[test]
    fn small_storage_is_recycled_per_thread_and_zeroed() {
        let a = Buffer::from_bytes(&Aval::new(DType::U8, vec![40]), &[7u8; 40]).unwrap();
        let addr = a.as_ptr() as usize;
        assert_eq!(addr % ALIGN, 0);
        drop(a);
        let big = Buffer::alloc(&Aval::new(DType::U8, vec![65])).unwrap();
        assert_ne!(big.as_ptr() as usize, addr, "a 128-byte class block from the 64-byte class");
        let b = Buffer::alloc(&Aval::new(DType::F32, vec![16])).unwrap();
        assert_eq!(b.as_ptr() as usize, addr);
        assert!(b.as_bytes().iter().all(|&x| x == 0));
        assert_eq!(b.as_bytes().len(), 64);
        let c = Buffer::from_bytes(&Aval::new(DType::I32, vec![2]), &[1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        assert_ne!(c.as_ptr() as usize, addr, "a live block handed out twice");
        assert_eq!(c.as_bytes(), &[1, 0, 0, 0, 2, 0, 0, 0]);
    }

    /// A small buffer recycled while it is the only holder is the next `uninit` of its size on this
    /// thread (read as the new aval); one still shared (a clone, a view) is never handed out again.
    #[test]
    fn recycled_buffer_is_reused_only_when_unshared() {
        let a = Buffer::from_bytes(&Aval::new(DType::F32, vec![3]), &[1u8; 12]).unwrap();
        let addr = a.as_ptr() as usize;
        let held = a.view(&Aval::new(DType::F32, vec![3, 1]));
        a.recycle();
        let b = Buffer::uninit(&Aval::new(DType::I32, vec![3])).unwrap();
        assert_ne!(b.as_ptr() as usize, addr, "a buffer a view still reads was handed out");
        assert_eq!(held.as_bytes(), &[1u8; 12]);
        held.recycle();
        let c = Buffer::uninit(&Aval::new(DType::I32, vec![3])).unwrap();
        assert_eq!(c.as_ptr() as usize, addr);
        assert_eq!(c.aval, Aval::new(DType::I32, vec![3]));
        assert_eq!(c.storage.len(), 12);
        c.recycle();
        let d = Buffer::uninit(&Aval::new(DType::F32, vec![4])).unwrap();
        assert_ne!(d.as_ptr() as usize, addr, "a 12-byte buffer handed out for 16 bytes");
        trim_pool();
    }

    /// Borrowed memory is read in place, its owner is held until the last view drops, and it is neither
    /// pooled nor freed by cranax; misaligned memory is refused.
    #[test]
    fn borrowed_storage_aliases_and_releases_its_owner() {
        // field 1 is the memory the buffer borrows, read only through its pointer
        struct Owner(Arc<std::sync::atomic::AtomicBool>, #[allow(dead_code)] Vec<u64>);
        impl Drop for Owner {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // u64 storage with one 64-byte aligned window of 4 f32s inside
        let mut mem = vec![0u64; 24];
        let base = mem.as_mut_ptr() as usize;
        let start = (base + ALIGN - 1) / ALIGN * ALIGN;
        let ptr = start as *mut u8;
        unsafe { std::ptr::copy_nonoverlapping([1f32, 2., 3., 4.].as_ptr() as *const u8, ptr, 16) };
        let owner = Box::new(Owner(dropped.clone(), mem));
        let s = unsafe { Storage::borrowed(ptr, 16, owner) }.unwrap();
        assert!(s.is_borrowed() && s.as_ptr() == ptr);
        let b = Buffer { storage: Arc::new(s), aval: Aval::new(DType::F32, vec![4]) };
        let v = b.view(&Aval::new(DType::F32, vec![2, 2]));
        assert_eq!(&v.as_bytes()[4..8], &2f32.to_le_bytes());
        drop(b);
        assert!(!dropped.load(Ordering::SeqCst), "a view still holds the owner");
        drop(v);
        assert!(dropped.load(Ordering::SeqCst));
        let mut m2 = vec![0u64; 24];
        let odd = unsafe { (m2.as_mut_ptr() as *mut u8).add(if (m2.as_ptr() as usize) % ALIGN == 4 { 8 } else { 4 }) };
        assert!(unsafe { Storage::borrowed(odd, 16, Box::new(())) }.is_err());
    }
}
