//! Trace events for `jax.profiler`: while a trace is on, the runtime records spans (compile, launch,
//! kernel run on a device's track, transfers, waits) and the embedder adds its own (annotations, tracing);
//! `stop` hands them all back, the embedder writes the trace file. Off, each hook costs one relaxed load.
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::LazyLock;
use std::time::Instant;

use parking_lot::Mutex;

/// One complete span. `track` is `"host"` for the thread that made it (`tid`, `thread`), or a device's name
/// for work that device's stream ran.
#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub cat: &'static str,
    pub track: String,
    pub tid: u64,
    pub thread: String,
    /// Nanoseconds since the process's profiler epoch.
    pub start_ns: u64,
    pub dur_ns: u64,
    /// Extra fields, `key=value` pairs.
    pub args: Vec<(String, String)>,
}

static ON: AtomicBool = AtomicBool::new(false);
static EPOCH: LazyLock<Instant> = LazyLock::new(Instant::now);
static EVENTS: Mutex<Vec<Event>> = Mutex::new(Vec::new());
static NEXT_TID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    static TID: Cell<u64> = const { Cell::new(0) };
    /// The name the embedder gave this thread (its threads are not Rust's, so they have no Rust name).
    static NAME: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Names this thread's track (kept for the thread's life; later events carry it).
pub fn name_thread(name: &str) {
    NAME.with(|n| *n.borrow_mut() = name.to_string());
}

#[inline]
pub fn enabled() -> bool {
    ON.load(Ordering::Relaxed)
}

pub fn now_ns() -> u64 {
    EPOCH.elapsed().as_nanos() as u64
}

/// This thread's small id (1, 2, ... in order of first use).
pub fn thread_id() -> u64 {
    TID.with(|t| {
        if t.get() == 0 {
            t.set(NEXT_TID.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    })
}

/// Starts recording (dropping events of an earlier trace). False when a trace is already on.
pub fn start() -> bool {
    LazyLock::force(&EPOCH);
    let mut ev = EVENTS.lock();
    if ON.swap(true, Ordering::SeqCst) {
        return false;
    }
    ev.clear();
    true
}

/// Stops recording and returns the events; `None` when no trace was on.
pub fn stop() -> Option<Vec<Event>> {
    let mut ev = EVENTS.lock();
    if !ON.swap(false, Ordering::SeqCst) {
        return None;
    }
    Some(std::mem::take(&mut *ev))
}

/// Records a finished span made by this thread (dropped when no trace is on).
pub fn record(cat: &'static str, name: String, track: String, start_ns: u64, dur_ns: u64, args: Vec<(String, String)>) {
    if !enabled() {
        return;
    }
    let mut thread = NAME.with(|n| n.borrow().clone());
    if thread.is_empty() {
        thread = std::thread::current().name().unwrap_or("").to_string();
    }
    let e = Event { name, cat, track, tid: thread_id(), thread, start_ns, dur_ns, args };
    let mut ev = EVENTS.lock();
    if enabled() {
        ev.push(e);
    }
}

/// A span recorded when dropped.
pub struct Span {
    cat: &'static str,
    pub name: String,
    track: String,
    start: u64,
    pub args: Vec<(String, String)>,
}

impl Drop for Span {
    fn drop(&mut self) {
        let end = now_ns();
        record(self.cat, std::mem::take(&mut self.name), std::mem::take(&mut self.track), self.start, end.saturating_sub(self.start), std::mem::take(&mut self.args));
    }
}

/// A span on `track` starting now, when a trace is on (`name` is only built then).
#[inline]
pub fn span(cat: &'static str, name: impl FnOnce() -> String, track: impl FnOnce() -> String) -> Option<Span> {
    if !enabled() {
        return None;
    }
    Some(Span { cat, name: name(), track: track(), start: now_ns(), args: Vec::new() })
}

/// A span on this thread's host track.
#[inline]
pub fn host_span(cat: &'static str, name: impl FnOnce() -> String) -> Option<Span> {
    span(cat, name, || "host".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_nest_and_only_while_on() {
        drop(host_span("x", || "before".into()));
        assert!(start());
        assert!(!start());
        {
            let _outer = host_span("a", || "outer".into());
            std::thread::sleep(std::time::Duration::from_millis(2));
            drop(span("k", || "inner".into(), || "/device:CPU:0".into()));
        }
        let ev = stop().unwrap();
        assert!(stop().is_none());
        drop(host_span("x", || "after".into()));
        let names: Vec<&str> = ev.iter().map(|e| e.name.as_str()).collect();
        assert!(names.contains(&"outer") && names.contains(&"inner") && !names.contains(&"before"));
        let o = ev.iter().find(|e| e.name == "outer").unwrap();
        let i = ev.iter().find(|e| e.name == "inner").unwrap();
        assert!(o.start_ns <= i.start_ns && i.start_ns + i.dur_ns <= o.start_ns + o.dur_ns);
        assert!(o.dur_ns >= 2_000_000);
        assert!(start());
        name_thread("python");
        drop(host_span("x", || "named".into()));
        let ev = stop().unwrap();
        assert_eq!(ev.iter().find(|e| e.name == "named").unwrap().thread, "python");
    }
}
