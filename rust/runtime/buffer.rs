//! Device buffers for the CPU: 64-byte aligned, shared storage so views (reshape) cost nothing.
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::ir::{Aval, DType};

pub const ALIGN: usize = 64;

/// Raw, aligned, owned bytes.
pub struct Storage {
    ptr: NonNull<u8>,
    bytes: usize,
}

// The storage is plain memory; writes happen only from the one kernel that produces it, before any reader
// is given access (the runtime orders this).
unsafe impl Send for Storage {}
unsafe impl Sync for Storage {}

impl Storage {
    /// Zeroed storage of `bytes` bytes; a `Memory` error (never an abort) if it cannot be had.
    pub fn zeroed(bytes: usize) -> Result<Storage> {
        if bytes == 0 {
            return Ok(Storage { ptr: NonNull::<u64>::dangling().cast(), bytes: 0 });
        }
        let layout = Layout::from_size_align(bytes, ALIGN)
            .map_err(|_| Error::Memory { bytes: bytes as u128, what: "buffer".into() })?;
        // SAFETY: layout has nonzero size.
        let p = unsafe { alloc_zeroed(layout) };
        NonNull::new(p)
            .map(|ptr| Storage { ptr, bytes })
            .ok_or(Error::Memory { bytes: bytes as u128, what: "buffer".into() })
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
        if self.bytes != 0 {
            // SAFETY: allocated in `zeroed` with this exact layout.
            unsafe { dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.bytes, ALIGN)) }
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
        let bytes = aval
            .numel()
            .and_then(|n| n.checked_mul(aval.dtype.size()))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| Error::Memory {
                bytes: aval.shape.iter().fold(aval.dtype.size() as u128, |a, &d| a.saturating_mul(d as u128)),
                what: format!("array of shape {:?} {}", aval.shape, aval.dtype.short_name()),
            })?;
        Ok(Buffer { storage: Arc::new(Storage::zeroed(bytes)?), aval: aval.clone() })
    }
    /// A buffer holding a copy of `bytes` (little-endian elements of `aval.dtype`, row-major).
    pub fn from_bytes(aval: &Aval, bytes: &[u8]) -> Result<Buffer> {
        let b = Buffer::alloc(aval)?;
        if bytes.len() != b.storage.len() {
            return Err(Error::Arguments(format!(
                "expected {} bytes for shape {:?} {}, got {}",
                b.storage.len(), aval.shape, aval.dtype.short_name(), bytes.len()
            )));
        }
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
