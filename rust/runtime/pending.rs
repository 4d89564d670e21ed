//! Futures of buffers, and the value an array handle holds (ready or pending).
//!
//! A `Pending` is filled exactly once (by the stream that runs the producing job) with the buffer or the
//! error of the computation; `wait()` blocks until then. Reads after the fill are lock-free (`OnceLock`).
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::Aval;

struct Inner {
    cell: OnceLock<Result<Buffer>>,
    lock: Mutex<()>,
    cv: Condvar,
}

/// A buffer that some queued job will produce (or an error it will raise). Cloning shares the future.
#[derive(Clone)]
pub struct Pending(Arc<Inner>);

impl Default for Pending {
    fn default() -> Self {
        Self::new()
    }
}

impl Pending {
    pub fn new() -> Pending {
        Pending(Arc::new(Inner { cell: OnceLock::new(), lock: Mutex::new(()), cv: Condvar::new() }))
    }
    /// A future that is already filled (e.g. an error known at dispatch).
    pub fn filled(r: Result<Buffer>) -> Pending {
        let p = Pending::new();
        p.fill(r);
        p
    }
    /// Fills the future and wakes every waiter. A second fill is ignored (returns false).
    pub fn fill(&self, r: Result<Buffer>) -> bool {
        let first = self.0.cell.set(r).is_ok();
        if first {
            // Taking the lock orders the fill before any waiter's re-check under the lock.
            let _g = self.0.lock.lock();
            self.0.cv.notify_all();
        }
        first
    }
    /// Polls briefly before sleeping: small queued jobs finish within microseconds, and a condvar
    /// wake-up costs more than that on a loaded VM.
    fn spin_get(&self) -> Option<Result<Buffer>> {
        let start = std::time::Instant::now();
        loop {
            if let Some(r) = self.0.cell.get() {
                return Some(r.clone());
            }
            if start.elapsed() >= std::time::Duration::from_micros(20) {
                return None;
            }
            std::hint::spin_loop();
        }
    }
    /// The result if filled, without waiting.
    #[inline]
    pub fn try_get(&self) -> Option<&Result<Buffer>> {
        self.0.cell.get()
    }
    #[inline]
    pub fn is_ready(&self) -> bool {
        self.0.cell.get().is_some()
    }
    /// Blocks at most `timeout`; `None` if still not filled then. Callers that must stay interruptible
    /// (Ctrl-C in Python) wait in slices with this.
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Option<Result<Buffer>> {
        if let Some(r) = self.spin_get() {
            return Some(r);
        }
        let deadline = std::time::Instant::now() + timeout;
        let mut g = self.0.lock.lock();
        while self.0.cell.get().is_none() {
            if self.0.cv.wait_until(&mut g, deadline).timed_out() {
                break;
            }
        }
        drop(g);
        self.0.cell.get().cloned()
    }
    /// Blocks until filled; returns the buffer (shared storage) or the error.
    pub fn wait(&self) -> Result<Buffer> {
        if let Some(r) = self.spin_get() {
            return r;
        }
        let mut g = self.0.lock.lock();
        while self.0.cell.get().is_none() {
            self.0.cv.wait(&mut g);
        }
        drop(g);
        self.0.cell.get().expect("filled").clone()
    }
}

/// The contents of an array handle: a ready buffer, or a future of one with its aval known up front.
/// `aval` of a pending value may differ from the produced buffer's in shape only (a reshape view of a
/// pending array); reads reinterpret the bytes under the value's aval.
#[derive(Clone)]
pub enum Value {
    Ready(Buffer),
    Pending { pending: Pending, aval: Aval },
    /// An array on a GPU (`backend::gpu`): host reads (`wait`, `try_buffer` once done) read it back.
    #[cfg(feature = "gpu")]
    Gpu(crate::backend::gpu::GpuValue),
}

impl Value {
    pub fn failed(e: Error, aval: Aval) -> Value {
        Value::Pending { pending: Pending::filled(Err(e)), aval }
    }
    #[inline]
    pub fn aval(&self) -> &Aval {
        match self {
            Value::Ready(b) => &b.aval,
            Value::Pending { aval, .. } => aval,
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => &g.aval,
        }
    }
    /// True once the value is computed or has failed.
    #[inline]
    pub fn is_ready(&self) -> bool {
        match self {
            Value::Ready(_) => true,
            Value::Pending { pending, .. } => pending.is_ready(),
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => g.is_ready(),
        }
    }
    /// The buffer or error if available now, without blocking.
    #[inline]
    pub fn try_buffer(&self) -> Option<Result<Buffer>> {
        match self {
            Value::Ready(b) => Some(Ok(b.clone())),
            Value::Pending { pending, aval } => pending.try_get().map(|r| r.clone().map(|b| reaval(b, aval))),
            #[cfg(feature = "gpu")]
            Value::Gpu(_) => None,
        }
    }
    /// Consumes the value into its buffer if available now.
    #[inline]
    pub fn into_buffer_now(self) -> std::result::Result<Result<Buffer>, Value> {
        match self {
            Value::Ready(b) => Ok(Ok(b)),
            Value::Pending { ref pending, ref aval } => match pending.try_get() {
                Some(r) => Ok(r.clone().map(|b| reaval(b, aval))),
                None => Err(self),
            },
            // A transfer: reads the device buffer back (blocking).
            #[cfg(feature = "gpu")]
            Value::Gpu(ref g) => Ok(g.to_host()),
        }
    }
    /// Blocks until the value is computed; the buffer read under this value's aval, or the error.
    pub fn wait(&self) -> Result<Buffer> {
        match self {
            Value::Ready(b) => Ok(b.clone()),
            Value::Pending { pending, aval } => pending.wait().map(|b| reaval(b, aval)),
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => g.to_host(),
        }
    }
    /// Like `wait`, but gives up after `timeout` (`None`: still pending).
    pub fn wait_timeout(&self, timeout: std::time::Duration) -> Option<Result<Buffer>> {
        match self {
            Value::Ready(b) => Some(Ok(b.clone())),
            Value::Pending { pending, aval } => pending.wait_timeout(timeout).map(|r| r.map(|b| reaval(b, aval))),
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => match g.wait_done_timeout(timeout) {
                Ok(false) => None,
                Ok(true) => Some(g.to_host()),
                Err(e) => Some(Err(e)),
            },
        }
    }
    /// The same bytes under another aval (same dtype, same element count; the caller checks).
    pub fn view(&self, aval: Aval) -> Value {
        match self {
            Value::Ready(b) => Value::Ready(Buffer { storage: b.storage.clone(), aval }),
            Value::Pending { pending, .. } => Value::Pending { pending: pending.clone(), aval },
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => Value::Gpu(g.view(aval)),
        }
    }
    /// Waits until computed without reading device values back (`block_until_ready`).
    pub fn block(&self) -> Result<()> {
        match self {
            #[cfg(feature = "gpu")]
            Value::Gpu(g) => g.wait_done(),
            _ => self.wait().map(drop),
        }
    }
}

#[inline]
fn reaval(b: Buffer, aval: &Aval) -> Buffer {
    if &b.aval == aval {
        b
    } else {
        Buffer { storage: b.storage, aval: aval.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    #[test]
    fn fill_then_wait_across_threads() {
        let p = Pending::new();
        let q = p.clone();
        let h = std::thread::spawn(move || q.wait().map(|b| b.aval.shape.clone()));
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(!p.is_ready());
        let b = Buffer::alloc(&Aval::new(DType::F32, vec![2, 3])).unwrap();
        assert!(p.fill(Ok(b)));
        assert!(!p.fill(Err(Error::Execution("late".into()))));
        assert_eq!(h.join().unwrap().unwrap(), vec![2, 3]);
    }

    #[test]
    fn wait_timeout_gives_up_then_sees_the_fill() {
        let p = Pending::new();
        let t = std::time::Instant::now();
        assert!(p.wait_timeout(std::time::Duration::from_millis(20)).is_none());
        assert!(t.elapsed() >= std::time::Duration::from_millis(20));
        let q = p.clone();
        let h = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(10));
            q.fill(Err(Error::Execution("x".into())));
        });
        let mut got = None;
        for _ in 0..100 {
            got = p.wait_timeout(std::time::Duration::from_millis(50));
            if got.is_some() {
                break;
            }
        }
        h.join().unwrap();
        assert!(matches!(got, Some(Err(Error::Execution(m))) if m == "x"));
    }

    #[test]
    fn pending_view_reads_under_its_aval() {
        let p = Pending::new();
        let v = Value::Pending { pending: p.clone(), aval: Aval::new(DType::F32, vec![6]) };
        let w = v.view(Aval::new(DType::F32, vec![3, 2]));
        p.fill(Ok(Buffer::alloc(&Aval::new(DType::F32, vec![6])).unwrap()));
        assert_eq!(w.wait().unwrap().aval.shape, vec![3, 2]);
        assert_eq!(v.wait().unwrap().aval.shape, vec![6]);
    }
}
