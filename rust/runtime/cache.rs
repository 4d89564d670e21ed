//! The process-wide second-level cache: canonical key of the optimized program → compiled executable.
//! A re-created lambda retraces in Python but never recompiles. Thread-safe; each key is compiled once even
//! when threads race; bounded (least-recently-used eviction drops the `Arc`, so the machine code is freed
//! once no array or Python object still holds the executable).
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};

use parking_lot::{Condvar, Mutex};

use crate::error::Result;
use crate::error::run_catching;
use crate::ir::Program;
use crate::plan::Plan;
use crate::runtime::device;
use crate::runtime::executable::Executable;

pub const DEFAULT_MAX_SIZE: usize = 4096;

struct Entry {
    exe: Arc<Executable>,
    tick: u64,
}

struct State {
    map: HashMap<String, Entry>,
    inflight: HashSet<String>,
    tick: u64,
    max: usize,
}

pub struct ExecutableCache {
    state: Mutex<State>,
    done: Condvar,
    compiles: AtomicU64,
}

static CACHE: LazyLock<ExecutableCache> = LazyLock::new(|| {
    let max = std::env::var("CRANAX_CACHE_MAX_SIZE").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(DEFAULT_MAX_SIZE);
    ExecutableCache::new(max)
});

/// The process-wide cache.
pub fn global() -> &'static ExecutableCache {
    &CACHE
}

/// Parse, verify, optimize and fuse a program without compiling it.
pub fn pipeline(json: &str) -> Result<(Program, Plan)> {
    crate::opt::compile_pipeline(json)
}

/// The structural key of a program (var ids renumbered, name ignored).
pub fn canonical_key(p: &Program) -> String {
    crate::ir::print::canonical_key(p)
}

/// The optimized program's text.
pub fn program_text(p: &Program) -> String {
    crate::ir::print::print(p)
}

impl ExecutableCache {
    pub fn new(max: usize) -> ExecutableCache {
        ExecutableCache {
            state: Mutex::new(State { map: HashMap::new(), inflight: HashSet::new(), tick: 0, max }),
            done: Condvar::new(),
            compiles: AtomicU64::new(0),
        }
    }

    /// Real backend compilations so far.
    pub fn compile_count(&self) -> u64 {
        self.compiles.load(Ordering::Relaxed)
    }
    pub fn len(&self) -> usize {
        self.state.lock().map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn clear(&self) {
        // Drop the executables outside the lock (freeing machine code may take a while).
        let old = std::mem::take(&mut self.state.lock().map);
        drop(old);
    }
    pub fn max_size(&self) -> usize {
        self.state.lock().max
    }
    pub fn set_max_size(&self, n: usize) {
        let mut st = self.state.lock();
        st.max = n;
        let evicted = evict(&mut st);
        drop(st);
        drop(evicted);
    }

    /// Parses, verifies, optimizes `json`; returns the cached executable for its canonical key or compiles
    /// it (once per key, even when threads race).
    pub fn compile_json(&self, json: &str) -> Result<Arc<Executable>> {
        let mut span = super::profiler::host_span("compile", || "compile".into());
        let (program, plan) = run_catching("compile", || pipeline(json))?;
        let key = run_catching("compile", || Ok(canonical_key(&program)))?;
        // Where the code came from, for the trace: this cache, the persistent cache, or the compiler.
        let how = std::cell::Cell::new("memory");
        // A persistent-cache hit loads the code without compiling: only real compiles are counted.
        let r = self.get_or_build(key.clone(), || {
            how.set("persistent");
            let text = program_text(&program);
            let cpu = super::persistent::compile_cpu_global(&key, &plan, || {
                how.set("compiled");
                self.compiles.fetch_add(1, Ordering::Relaxed);
            })?;
            Executable::new(String::new(), text, plan.clone(), cpu, device::cpu().clone())
        });
        if let Some(s) = &mut span {
            s.name = format!("compile {}", plan.name);
            s.args.push(("source".into(), how.get().into()));
        }
        r
    }

    /// The executable for `key`, building it with `build` on a miss. `build`'s error is returned to this
    /// caller and the key stays absent; concurrent callers wait for the first builder, then retry.
    pub fn get_or_compile(&self, key: String, build: impl FnOnce() -> Result<Executable>) -> Result<Arc<Executable>> {
        self.get_or_build(key, || {
            self.compiles.fetch_add(1, Ordering::Relaxed);
            build()
        })
    }

    /// `get_or_compile` where `build` counts its own compiles (it may load the code instead).
    fn get_or_build(&self, key: String, build: impl FnOnce() -> Result<Executable>) -> Result<Arc<Executable>> {
        let mut st = self.state.lock();
        loop {
            st.tick += 1;
            let tick = st.tick;
            if let Some(e) = st.map.get_mut(&key) {
                e.tick = tick;
                return Ok(e.exe.clone());
            }
            if st.inflight.contains(&key) {
                self.done.wait(&mut st);
                continue;
            }
            st.inflight.insert(key.clone());
            break;
        }
        drop(st);
        let built = run_catching("compile", build).map(|mut e| {
            e.key = key.clone();
            Arc::new(e)
        });
        let mut st = self.state.lock();
        st.inflight.remove(&key);
        let mut evicted = Vec::new();
        if let Ok(exe) = &built {
            if st.max > 0 {
                st.tick += 1;
                let tick = st.tick;
                st.map.insert(key, Entry { exe: exe.clone(), tick });
                evicted = evict(&mut st);
            }
        }
        drop(st);
        self.done.notify_all();
        drop(evicted);
        built
    }
}

/// Removes least-recently-used entries beyond the bound; returns them so they drop outside the lock.
fn evict(st: &mut State) -> Vec<Arc<Executable>> {
    let mut out = Vec::new();
    while st.map.len() > st.max {
        let Some(k) = st.map.iter().min_by_key(|(_, e)| e.tick).map(|(k, _)| k.clone()) else { break };
        if let Some(e) = st.map.remove(&k) {
            out.push(e.exe);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Aval, DType};
    use crate::plan::Plan;

    fn dummy(name: &str) -> Result<Executable> {
        let plan = Plan {
            name: name.into(),
            num_inputs: 1,
            slots: vec![Aval::new(DType::F32, vec![3])],
            steps: vec![],
            outputs: vec![0],
        };
        let cpu = crate::backend::cpu::compile(&plan)?;
        Executable::new(String::new(), String::new(), plan, cpu, device::cpu().clone())
    }

    #[test]
    fn compiles_once_per_key_under_races_and_evicts_lru() {
        let c = Arc::new(ExecutableCache::new(2));
        let hs: Vec<_> = (0..8)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        let k = format!("k{}", i % 3);
                        c.get_or_compile(k.clone(), || {
                            std::thread::sleep(std::time::Duration::from_millis(1));
                            dummy(&k)
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert!(c.len() <= 2);
        let n = c.compile_count();
        assert!(n >= 3);
        // LRU: touch k0, insert k9 → k0 survives.
        c.clear();
        c.get_or_compile("a".into(), || dummy("a")).unwrap();
        c.get_or_compile("b".into(), || dummy("b")).unwrap();
        c.get_or_compile("a".into(), || dummy("a")).unwrap();
        c.get_or_compile("c".into(), || dummy("c")).unwrap();
        let before = c.compile_count();
        c.get_or_compile("a".into(), || dummy("a")).unwrap();
        assert_eq!(c.compile_count(), before);
        c.get_or_compile("b".into(), || dummy("b")).unwrap();
        assert_eq!(c.compile_count(), before + 1);
    }

    #[test]
    fn failed_build_leaves_key_absent() {
        let c = ExecutableCache::new(10);
        assert!(c.get_or_compile("x".into(), || Err(crate::Error::Codegen("no".into()))).is_err());
        assert_eq!(c.len(), 0);
        assert!(c.get_or_compile("x".into(), || panic!("boom")).is_err());
        assert!(c.get_or_compile("x".into(), || dummy("x")).is_ok());
        assert_eq!(c.len(), 1);
    }
}
