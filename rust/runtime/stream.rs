//! A device's stream: one executor thread per device running jobs in FIFO order.
//!
//! `submit` is the dispatch rule (as JAX's CPU client): a call whose inputs are all ready, whose stream has
//! nothing queued and whose work is small runs inline on the calling thread (no thread hop); anything else
//! is queued and returns pending outputs at once. Errors inside a job (including panics) fill its outputs;
//! a failed input fails its dependents without running them.
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::buffer::Buffer;
use crate::error::{run_catching, Error, Result};
use crate::ir::Aval;
use crate::runtime::pending::{Pending, Value};

/// Programs of at most this much work (kernel domain points + library work, e.g. a product's multiply-adds)
/// run inline when possible: up to about 1–2 ms on one core, such as a small MLP's training step. A hop to
/// the stream thread and back costs tens of microseconds on a small VM (futex wake-ups, a third thread
/// competing for two cores), 5–15% of such a program; only bigger programs, where overlapping Python with
/// the computation pays more, go asynchronous. JAX's CPU client makes the same trade.
pub const INLINE_MAX_WORK: usize = 1 << 26;

/// How long the stream thread keeps polling for the next job before it sleeps: back-to-back dispatches
/// (a Python loop of queued calls) then skip the wake-up.
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

type Job = Box<dyn FnOnce() + Send + 'static>;

struct Shared {
    /// Jobs enqueued and not yet finished (including the one running).
    queued: AtomicUsize,
}

pub struct Stream {
    name: String,
    tx: Mutex<Option<Sender<Job>>>,
    shared: Arc<Shared>,
}

/// Fills outputs that a job never filled (it was dropped: stream shut down) so no waiter hangs.
struct FillOnDrop(Vec<Pending>);
impl Drop for FillOnDrop {
    fn drop(&mut self) {
        for p in &self.0 {
            if !p.is_ready() {
                p.fill(Err(Error::Execution("the computation was dropped before it ran".into())));
            }
        }
    }
}

fn check_outputs(outs: Result<Vec<Buffer>>, out_avals: &[Aval]) -> Result<Vec<Buffer>> {
    let outs = outs?;
    if outs.len() != out_avals.len() || outs.iter().zip(out_avals).any(|(b, a)| &b.aval != a) {
        return Err(Error::Execution(format!(
            "backend returned {} outputs of avals {:?}, expected {:?}",
            outs.len(),
            outs.iter().map(|b| &b.aval).collect::<Vec<_>>(),
            out_avals
        )));
    }
    Ok(outs)
}

/// The next job: polled for `SPIN`, then waited for.
fn poll_then_block(rx: &std::sync::mpsc::Receiver<Job>) -> Option<Job> {
    use std::sync::mpsc::TryRecvError;
    let start = std::time::Instant::now();
    loop {
        match rx.try_recv() {
            Ok(job) => return Some(job),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if start.elapsed() < SPIN => std::hint::spin_loop(),
            Err(TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

thread_local! {
    /// On an executor thread, the address of its stream's `Shared`: a job that calls back into the host
    /// (a host callback) and dispatches to the same stream runs that work at once on this thread, since
    /// queueing it behind the running job would wait for itself.
    static ON_STREAM: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Stream {
    /// Whether the calling thread is this stream's executor thread (inside one of its jobs).
    fn on_own_thread(&self) -> bool {
        ON_STREAM.with(|c| c.get()) == Arc::as_ptr(&self.shared) as usize
    }

    /// Starts the executor thread.
    pub fn new(name: &str) -> Result<Stream> {
        let (tx, rx) = channel::<Job>();
        let shared = Arc::new(Shared { queued: AtomicUsize::new(0) });
        let me = Arc::as_ptr(&shared) as usize;
        std::thread::Builder::new()
            .name(format!("cranax-stream-{name}"))
            .spawn(move || {
                ON_STREAM.with(|c| c.set(me));
                // Each job decrements `queued` itself, before it publishes its outputs, so a caller woken by
                // an output sees the stream idle (and may then run small calls inline).
                loop {
                    let job = match poll_then_block(&rx) {
                        Some(job) => job,
                        None => break, // every sender gone: the stream is shut down
                    };
                    // Jobs catch their own panics; this is a last guard so the thread never dies.
                    let _ = catch_unwind(AssertUnwindSafe(job));
                }
            })
            .map_err(|e| Error::Execution(format!("cannot start stream thread: {e}")))?;
        Ok(Stream { name: name.to_string(), tx: Mutex::new(Some(tx)), shared })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Jobs queued or running.
    pub fn queued(&self) -> usize {
        self.shared.queued.load(Ordering::Acquire)
    }

    /// Queues a job; it runs after every job queued before it.
    pub fn enqueue(&self, job: Job) {
        let sh = self.shared.clone();
        self.push(Box::new(move || {
            let _ = catch_unwind(AssertUnwindSafe(job));
            sh.queued.fetch_sub(1, Ordering::AcqRel);
        }));
    }

    /// Queues a job that decrements `queued` exactly once itself (before publishing its results).
    fn push(&self, job: Job) {
        self.shared.queued.fetch_add(1, Ordering::AcqRel);
        let g = self.tx.lock();
        let sent = match g.as_ref() {
            Some(tx) => tx.send(job).map_err(|e| e.0),
            None => Err(job),
        };
        drop(g);
        if let Err(job) = sent {
            // Stream gone: run it here so its outputs are filled.
            let _ = catch_unwind(AssertUnwindSafe(job));
        }
    }

    /// Blocks until every job queued so far has finished.
    pub fn synchronize(&self) {
        let _ = self.sync_marker().wait();
    }

    /// A future filled once every job queued so far has finished (for waits that poll, e.g. for Ctrl-C).
    pub fn sync_marker(&self) -> Pending {
        let p = Pending::new();
        if self.on_own_thread() {
            // From inside a job (a host callback): every job before it has finished; waiting would wait
            // for the running job itself.
            p.fill(Err(Error::Execution(String::new())));
            return p;
        }
        let q = p.clone();
        let sh = self.shared.clone();
        self.push(Box::new(move || {
            sh.queued.fetch_sub(1, Ordering::AcqRel);
            q.fill(Err(Error::Execution(String::new())));
        }));
        p
    }

    /// Dispatches `f` over `inputs` producing buffers of `out_avals`: inline when `small`, every input is
    /// ready and nothing is queued; otherwise on the stream thread, returning pending outputs at once.
    /// Errors (from `f`, a panic in `f`, or a failed input) are never returned here: they fill the outputs
    /// and surface at the wait.
    pub fn submit<F>(&self, inputs: Vec<Value>, out_avals: &[Aval], small: bool, f: F) -> Vec<Value>
    where
        F: FnOnce(&[Buffer]) -> Result<Vec<Buffer>> + Send + 'static,
    {
        let nested = self.on_own_thread();
        if nested || (small && self.shared.queued.load(Ordering::Acquire) == 0 && inputs.iter().all(|v| v.is_ready())) {
            let mut bufs = Vec::with_capacity(inputs.len());
            for v in inputs {
                match v.wait() {
                    Ok(b) => bufs.push(b),
                    Err(e) => return out_avals.iter().map(|a| Value::failed(e.clone(), a.clone())).collect(),
                }
            }
            return match check_outputs(run_catching("execute", || f(&bufs)), out_avals) {
                Ok(outs) => outs.into_iter().map(Value::Ready).collect(),
                Err(e) => out_avals.iter().map(|a| Value::failed(e.clone(), a.clone())).collect(),
            };
        }
        let pendings: Vec<Pending> = out_avals.iter().map(|_| Pending::new()).collect();
        let values = pendings
            .iter()
            .zip(out_avals)
            .map(|(p, a)| Value::Pending { pending: p.clone(), aval: a.clone() })
            .collect();
        let out_avals = out_avals.to_vec();
        let guard = FillOnDrop(pendings);
        let sh = self.shared.clone();
        self.push(Box::new(move || {
            let guard = guard;
            let result = run_catching("execute", || {
                let mut bufs = Vec::with_capacity(inputs.len());
                for v in &inputs {
                    bufs.push(v.wait()?);
                }
                drop(inputs);
                check_outputs(f(&bufs), &out_avals)
            });
            sh.queued.fetch_sub(1, Ordering::AcqRel);
            match result {
                Ok(outs) => {
                    for (p, b) in guard.0.iter().zip(outs) {
                        p.fill(Ok(b));
                    }
                }
                Err(e) => {
                    for p in &guard.0 {
                        p.fill(Err(e.clone()));
                    }
                }
            }
        }));
        values
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        // Closing the channel ends the thread after the queued jobs.
        self.tx.lock().take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    fn aval(n: usize) -> Aval {
        Aval::new(DType::F32, vec![n])
    }

    #[test]
    fn inline_when_idle_and_small() {
        let s = Stream::new("t0").unwrap();
        let x = Value::Ready(Buffer::alloc(&aval(3)).unwrap());
        let caller = std::thread::current().id();
        let out = s.submit(vec![x], &[aval(3)], true, move |b| {
            assert_eq!(std::thread::current().id(), caller);
            Ok(vec![b[0].clone()])
        });
        assert!(matches!(out[0], Value::Ready(_)));
    }

    #[test]
    fn queued_when_large_then_ready_and_fifo() {
        let s = Stream::new("t1").unwrap();
        let x = Value::Ready(Buffer::alloc(&aval(3)).unwrap());
        let out = s.submit(vec![x], &[aval(3)], false, |b| {
            std::thread::sleep(std::time::Duration::from_millis(30));
            Ok(vec![b[0].clone()])
        });
        assert!(!out[0].is_ready());
        // Small, but the queue is busy and the input pending: queued too, runs after.
        let out2 = s.submit(out.clone(), &[aval(3)], true, |b| Ok(vec![b[0].clone()]));
        assert!(!out2[0].is_ready());
        assert!(out2[0].wait().is_ok());
        assert!(out[0].is_ready());
        s.synchronize();
        assert_eq!(s.queued(), 0);
    }

    #[test]
    fn errors_and_panics_fill_outputs_and_propagate() {
        let s = Stream::new("t2").unwrap();
        let x = Value::Ready(Buffer::alloc(&aval(3)).unwrap());
        let bad = s.submit(vec![x.clone()], &[aval(3), aval(3)], false, |_| Err(Error::Execution("boom".into())));
        let dep = s.submit(vec![bad[1].clone()], &[aval(3)], false, |_| panic!("must not run"));
        assert!(matches!(bad[0].wait(), Err(Error::Execution(m)) if m == "boom"));
        assert!(matches!(dep[0].wait(), Err(Error::Execution(m)) if m == "boom"));
        let p = s.submit(vec![x.clone()], &[aval(3)], false, |_| panic!("kaboom"));
        assert!(matches!(p[0].wait(), Err(Error::Execution(m)) if m.contains("kaboom")));
        let p = s.submit(vec![x], &[aval(3)], true, |_| panic!("inline kaboom"));
        assert!(matches!(p[0].wait(), Err(Error::Execution(m)) if m.contains("inline kaboom")));
        // The stream still works.
        let y = Value::Ready(Buffer::alloc(&aval(1)).unwrap());
        let ok = s.submit(vec![y], &[aval(1)], false, |b| Ok(vec![b[0].clone()]));
        assert!(ok[0].wait().is_ok());
    }
}
