//! The buffer of a `jax.Ref`: a ref keeps one buffer for its whole life, as JAX's does (XLA aliases a
//! written ref's input buffer to the output, and an eager write runs the same way), so
//! `Ref.unsafe_buffer_pointer()` stays put across writes. Arrays are immutable everywhere else in cranax,
//! and outputs may share storage with inputs, so the ref's side keeps its buffer private: `detach` gives a
//! value sharing no storage with the ref's buffer (a new ref's first value, a read of a ref), and
//! `write_into` copies each new value into the buffer. Both run on the device's stream, after the work
//! queued before them (which may still read the old value); with several CPU devices, after every CPU
//! stream's queued work too (a program on another device's stream may read the buffer).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::buffer::Buffer;
use crate::error::Result;
use crate::runtime::device::{devices, Device, DeviceKind};
use crate::runtime::pending::{Pending, Value};

/// Copies made since the process started (read by tests through `_core._ref_copies`): new values copied
/// into a ref's buffer by `write_into` (none when the program wrote straight into it), and values copied off
/// a ref's buffer by `detach`.
pub static WRITE_COPIES: AtomicU64 = AtomicU64::new(0);
pub static DETACH_COPIES: AtomicU64 = AtomicU64::new(0);

/// Markers filled once the other CPU streams' queued work has finished (empty with one CPU device).
fn other_streams(dev: &Device) -> Vec<Pending> {
    let all = devices();
    if all.len() < 2 {
        return Vec::new();
    }
    all.iter().filter(|d| !std::ptr::eq(d.as_ref(), dev)).map(|d| d.stream.sync_marker()).collect()
}

/// The bytes of `b`'s aval, when its storage holds them.
fn held_bytes(b: &Buffer) -> Option<usize> {
    Buffer::byte_len(&b.aval).ok().filter(|&n| b.storage.len() >= n)
}

/// `src` copied into `dst`'s storage; the result is `dst`'s storage with `dst`'s aval. When the copy cannot
/// be made (storage borrowed from NumPy, sizes that differ, a device other than the CPU) the result is
/// `src` itself, as an immutable value. `dst` must be reachable from nowhere but the ref (its storage is
/// overwritten); readers queued before keep the old value.
pub fn write_into(dev: &Arc<Device>, dst: &Value, src: &Value) -> Result<Value> {
    if dev.kind != DeviceKind::Cpu {
        return Ok(src.clone());
    }
    let aval = dst.aval().clone();
    let markers = other_streams(dev);
    let small = markers.is_empty();
    let out_aval = aval.clone();
    let out = dev.stream.submit(vec![dst.clone(), src.clone()], std::slice::from_ref(&out_aval), small, move |bufs| {
        for m in &markers {
            let _ = m.wait(); // filled with an empty error by design: only the wait matters
        }
        let (d, s) = (&bufs[0], &bufs[1]);
        if Arc::ptr_eq(&d.storage, &s.storage) {
            return Ok(vec![d.clone()]);
        }
        match (held_bytes(d), held_bytes(s)) {
            (Some(n), Some(m)) if n == m && !d.storage.is_borrowed() => {
                // SAFETY: both storages hold `n` bytes and are distinct allocations; `dst` is the ref's
                // private storage (the caller's contract), so no reader can observe the overwrite.
                unsafe { std::ptr::copy_nonoverlapping(s.as_ptr() as *const u8, d.as_ptr(), n) };
                WRITE_COPIES.fetch_add(1, Ordering::Relaxed);
                Ok(vec![d.clone()])
            }
            _ => Ok(vec![s.view(&aval)]),
        }
    });
    one_output(out)
}

/// `v`, or a copy of it when its storage is one of `held`'s (or `v` is in `held`): a value that later
/// `write_into`s of `held` cannot change. A device other than the CPU gives `v` (its buffers are never
/// written in place).
pub fn detach(dev: &Arc<Device>, v: &Value, held: &[Value]) -> Result<Value> {
    if dev.kind != DeviceKind::Cpu {
        return Ok(v.clone());
    }
    let aval = v.aval().clone();
    let mut inputs = Vec::with_capacity(held.len() + 1);
    inputs.push(v.clone());
    inputs.extend(held.iter().cloned());
    let out = dev.stream.submit(inputs, std::slice::from_ref(&aval), true, move |bufs| {
        let b = &bufs[0];
        if !bufs[1..].iter().any(|h| Arc::ptr_eq(&h.storage, &b.storage)) {
            return Ok(vec![b.clone()]);
        }
        DETACH_COPIES.fetch_add(1, Ordering::Relaxed);
        Ok(vec![copy(b)?])
    });
    one_output(out)
}

/// The one value a single-output `submit` returns (an error, never a panic, should it return none).
fn one_output(mut out: Vec<Value>) -> Result<Value> {
    out.pop().ok_or_else(|| crate::error::Error::Execution("a ref copy queued no output".into()))
}

/// A fresh buffer holding `b`'s bytes.
fn copy(b: &Buffer) -> Result<Buffer> {
    let o = Buffer::uninit(&b.aval)?;
    let n = held_bytes(b).ok_or_else(|| crate::error::Error::Execution("a buffer smaller than its aval".into()))?;
    // SAFETY: `o` is a fresh (or recycled, unshared) allocation of `n` bytes; `b` holds `n` bytes.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr() as *const u8, o.as_ptr(), n) };
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Aval, DType};

    fn f32s(v: &[f32]) -> Value {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Value::Ready(Buffer::from_bytes(&Aval::new(DType::F32, vec![v.len()]), &bytes).unwrap())
    }
    fn read(v: &Value) -> Vec<f32> {
        v.wait().unwrap().as_bytes().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn write_into_keeps_the_destination_storage() {
        let dev = crate::runtime::device::cpu();
        let dst = detach(dev, &f32s(&[0.0, 1.0, 2.0]), &[]).unwrap();
        let held = dst.wait().unwrap().as_ptr() as usize;
        let out = write_into(dev, &dst, &f32s(&[5.0, 6.0, 7.0])).unwrap();
        assert_eq!(out.wait().unwrap().as_ptr() as usize, held);
        assert_eq!(read(&out), vec![5.0, 6.0, 7.0]);
    }

    #[test]
    fn detach_copies_only_shared_storage() {
        let dev = crate::runtime::device::cpu();
        let a = f32s(&[1.0, 2.0]);
        let p = a.wait().unwrap().as_ptr() as usize;
        let same = detach(dev, &a, &[]).unwrap();
        assert_eq!(same.wait().unwrap().as_ptr() as usize, p);
        let copied = detach(dev, &a, std::slice::from_ref(&a)).unwrap();
        assert_ne!(copied.wait().unwrap().as_ptr() as usize, p);
        assert_eq!(read(&copied), vec![1.0, 2.0]);
        // writing the original leaves the copy alone
        let _ = write_into(dev, &a, &f32s(&[9.0, 9.0])).unwrap().wait();
        assert_eq!(read(&copied), vec![1.0, 2.0]);
    }
}
