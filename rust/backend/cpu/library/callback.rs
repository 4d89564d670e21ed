//! Host callbacks (`pure_callback`, `io_callback`, `debug_callback`): the step hands its operand buffers to
//! the function the embedder installed (`set_host_callback`; the Python bindings install one that takes
//! the GIL for the call only) and checks that what comes back has the avals the program declared.
use std::sync::OnceLock;

use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{shape::fmt_aval, Aval};

/// `(callback id, operands, result avals) -> results`: the embedder's dispatcher.
pub type HostFn = dyn Fn(u64, &[&Buffer], &[Aval]) -> Result<Vec<Buffer>> + Send + Sync;

static HOST: OnceLock<Box<HostFn>> = OnceLock::new();

/// Installs the dispatcher (once per process; later calls are ignored).
pub fn set_host_callback(f: Box<HostFn>) {
    let _ = HOST.set(f);
}

/// Runs callback `id` on `inputs`; its results must have the avals `outs`.
pub fn call(id: u64, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let f = HOST.get().ok_or_else(|| Error::Execution(format!("host callback {id}: no host program installed a dispatcher")))?;
    let res = f(id, inputs, outs)?;
    if res.len() != outs.len() {
        return Err(Error::Execution(format!("host callback {id} returned {} results, expected {}", res.len(), outs.len())));
    }
    for (i, (b, a)) in res.iter().zip(outs).enumerate() {
        let bytes = a.numel().unwrap_or(usize::MAX).saturating_mul(a.dtype.size());
        if &b.aval != a || b.storage.len() < bytes {
            return Err(Error::Execution(format!(
                "host callback {id}: result {i} is {}, expected {}",
                fmt_aval(&b.aval),
                fmt_aval(a)
            )));
        }
    }
    Ok(res)
}
