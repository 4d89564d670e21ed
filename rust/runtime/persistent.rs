//! The persistent compilation cache (JAX's `jax_compilation_cache_dir`): compiled CPU code kept on disk so
//! that another process running the same program loads it instead of compiling it.
//!
//! An entry is the machine code of every function the CPU backend defined for a plan, with relocations by
//! symbol name (`backend::cpu::code_store`); loading re-runs the (cheap) plan pipeline and module setup and
//! hands the bytes to the JIT, which resolves the relocations for this process. The file name is the
//! SHA-256 of everything that changes the code: the optimized program's canonical text, cranax's version and
//! build id (the embedder passes a digest of the native module), the target triple, Cranelift's flags and the
//! host ISA features it detected, and the codegen switches. Each file holds
//! `MAGIC | sha256(body) | body`, with `body = key | sha256(plan) | compile seconds | code`; an entry
//! whose checksum, key or plan digest does not match (corrupt, truncated, copied from another program or
//! build) is never loaded: it counts as rejected and is rewritten by the compile that follows. Writes go
//! to a temporary file renamed into place, so a reader never sees half an entry.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Mutex, RwLock};
use sha2::{Digest, Sha256};

use crate::backend::cpu::{self, code_store, CpuExecutable};
use crate::error::Result;
use crate::plan::Plan;

const MAGIC: &[u8; 8] = b"CRNXPC\x00\x01";
const HEADER: usize = 8 + 32;
const BODY_FIXED: usize = 32 + 32 + 8;

/// Where and when entries are written (JAX's `jax_compilation_cache_dir`,
/// `jax_persistent_cache_min_compile_time_secs`, `jax_persistent_cache_min_entry_size_bytes`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// `None`: the cache is off.
    pub dir: Option<PathBuf>,
    pub min_compile_secs: f64,
    pub min_entry_bytes: i64,
    /// Identifies the build of the core (part of every key).
    pub build_id: String,
}

impl Settings {
    pub const fn off() -> Settings {
        Settings { dir: None, min_compile_secs: 1.0, min_entry_bytes: 0, build_id: String::new() }
    }
}

/// Counters since the last reset.
#[derive(Default)]
pub struct Stats {
    /// Entries loaded (no compile).
    pub hits: AtomicU64,
    /// No entry for the key.
    pub misses: AtomicU64,
    /// An entry existed but failed a check (or its code could not be defined); it was not used.
    pub rejected: AtomicU64,
    /// Entries written.
    pub writes: AtomicU64,
    /// Reads or writes that failed (the compile went on without the cache).
    pub errors: AtomicU64,
    last_error: Mutex<String>,
}

impl Stats {
    pub const fn new() -> Stats {
        Stats {
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            writes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            last_error: Mutex::new(String::new()),
        }
    }
    /// `[hits, misses, rejected, writes, errors]`.
    pub fn counts(&self) -> [u64; 5] {
        [&self.hits, &self.misses, &self.rejected, &self.writes, &self.errors].map(|c| c.load(Ordering::Relaxed))
    }
    /// Why the last entry was rejected or the last read/write failed.
    pub fn last_error(&self) -> String {
        self.last_error.lock().clone()
    }
    pub fn reset(&self) {
        for c in [&self.hits, &self.misses, &self.rejected, &self.writes, &self.errors] {
            c.store(0, Ordering::Relaxed);
        }
        self.last_error.lock().clear();
    }
    fn note(&self, counter: &AtomicU64, why: String) {
        counter.fetch_add(1, Ordering::Relaxed);
        *self.last_error.lock() = why;
    }
}

static SETTINGS: RwLock<Settings> = RwLock::new(Settings::off());
static STATS: Stats = Stats::new();

pub fn configure(s: Settings) {
    *SETTINGS.write() = s;
}
pub fn settings() -> Settings {
    SETTINGS.read().clone()
}
pub fn stats() -> &'static Stats {
    &STATS
}

fn sha(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().into()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The key of the code for the program whose canonical text is `canonical`.
pub fn key(s: &Settings, canonical: &str) -> Result<[u8; 32]> {
    let fp = code_store::fingerprint()?;
    Ok(sha(&[b"cranax persistent cache 1", env!("CARGO_PKG_VERSION").as_bytes(), s.build_id.as_bytes(), fp.as_bytes(), canonical.as_bytes()]))
}

/// The file holding the entry of `key` under `dir`.
pub fn entry_path(dir: &Path, key: &[u8; 32]) -> PathBuf {
    dir.join(format!("cranax-{}.cex", hex(key)))
}

fn plan_digest(plan: &Plan) -> [u8; 32] {
    sha(&[format!("{plan:?}").as_bytes()])
}

/// An entry's bytes.
pub fn encode_entry(key: &[u8; 32], plan: &Plan, compile_secs: f64, code: &[code_store::FuncCode]) -> Vec<u8> {
    let mut body = Vec::new();
    body.extend_from_slice(key);
    body.extend_from_slice(&plan_digest(plan));
    body.extend_from_slice(&compile_secs.to_le_bytes());
    body.extend_from_slice(&code_store::encode(code));
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&sha(&[&body]));
    out.extend_from_slice(&body);
    out
}

/// The code in `data` when it is an intact entry for `key` and `plan`; why not otherwise.
pub fn decode_entry(data: &[u8], key: &[u8; 32], plan: &Plan) -> std::result::Result<Vec<code_store::FuncCode>, String> {
    if data.len() < HEADER + BODY_FIXED || &data[..8] != MAGIC {
        return Err("not a cranax cache entry (or another format version)".into());
    }
    let body = &data[HEADER..];
    if sha(&[body]) != data[8..HEADER] {
        return Err("checksum mismatch (corrupt or truncated entry)".into());
    }
    if &body[..32] != key {
        return Err("entry belongs to another key".into());
    }
    if body[32..64] != plan_digest(plan) {
        return Err("entry was compiled for another plan".into());
    }
    code_store::decode(&body[BODY_FIXED..]).map_err(|e| e.to_string())
}

fn write_atomic(dir: &Path, path: &Path, data: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let r = std::fs::write(&tmp, data).and_then(|_| std::fs::rename(&tmp, path));
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

/// The CPU code for `plan` (whose optimized program has canonical text `canonical`): loaded from the
/// cache when `s` names a directory holding a valid entry, else compiled (`count_compile` is called first)
/// and, when the compile took at least `s.min_compile_secs` and the entry is at least `s.min_entry_bytes`,
/// written there. Cache failures never fail the call: they count in `stats`, and the code is compiled.
pub fn compile_cpu(s: &Settings, stats: &Stats, canonical: &str, plan: &Plan, count_compile: impl FnOnce()) -> Result<Arc<CpuExecutable>> {
    let entry = match &s.dir {
        Some(dir) => match key(s, canonical) {
            Ok(k) => Some((dir.clone(), k)),
            Err(e) => {
                stats.note(&stats.errors, e.to_string());
                None
            }
        },
        None => None,
    };
    let Some((dir, key)) = entry else {
        count_compile();
        return cpu::compile(plan);
    };
    let path = entry_path(&dir, &key);
    match std::fs::read(&path) {
        Ok(data) => match decode_entry(&data, &key, plan) {
            Ok(code) => match code_store::replay(code, || cpu::compile(plan)) {
                Ok(exe) => {
                    stats.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(exe);
                }
                Err(e) => stats.note(&stats.rejected, format!("{}: {e}", path.display())),
            },
            Err(why) => stats.note(&stats.rejected, format!("{}: {why}", path.display())),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            stats.misses.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => stats.note(&stats.errors, format!("reading {}: {e}", path.display())),
    }
    count_compile();
    let t0 = Instant::now();
    let (exe, code) = code_store::record(|| cpu::compile(plan))?;
    let secs = t0.elapsed().as_secs_f64();
    if let Some(code) = code {
        if secs >= s.min_compile_secs {
            let data = encode_entry(&key, plan, secs, &code);
            if (data.len() as i64) >= s.min_entry_bytes {
                match write_atomic(&dir, &path, &data) {
                    Ok(()) => {
                        stats.writes.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => stats.note(&stats.errors, format!("writing {}: {e}", path.display())),
                }
            }
        }
    }
    Ok(exe)
}

/// `compile_cpu` with the process's settings and counters.
pub fn compile_cpu_global(canonical: &str, plan: &Plan, count_compile: impl FnOnce()) -> Result<Arc<CpuExecutable>> {
    let s = settings();
    compile_cpu(&s, &STATS, canonical, plan, count_compile)
}

/// Checks `dir` can hold entries (creates it); why not otherwise.
pub fn check_dir(dir: &Path) -> std::result::Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("compilation cache directory {}: {e}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;
    use crate::ir::{Aval, DType};

    // x -> (sum(tanh(x) * 2 + 1), a while loop over a scalar (a fused loop), a scan over x): kernels, a
    // reduction and control steps, so the entry holds several modules' functions.
    const PROG: &str = include_str!("persistent_test_prog.json");

    fn plan_of(json: &str) -> (String, Plan) {
        let (p, plan) = crate::opt::compile_pipeline(json).unwrap();
        (crate::ir::print::canonical_key(&p), plan)
    }

    fn run(exe: &CpuExecutable, x: &[f32]) -> Vec<u8> {
        let b = Buffer::from_bytes(&Aval::new(DType::F32, vec![x.len()]), &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).unwrap();
        exe.run(&[b]).unwrap().iter().flat_map(|o| o.as_bytes().to_vec()).collect()
    }

    #[test]
    fn entries_load_without_compiling_and_bad_ones_are_rejected() {
        let (canon, plan) = plan_of(PROG);
        let dir = std::env::temp_dir().join(format!("cranax-pcache-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let s = Settings { dir: Some(dir.clone()), min_compile_secs: 0.0, min_entry_bytes: 0, build_id: "test".into() };
        let stats = Stats::new();
        let x: Vec<f32> = (0..64).map(|i| i as f32 / 8.0 - 4.0).collect();
        let mut compiles = 0;
        let a = compile_cpu(&s, &stats, &canon, &plan, || compiles += 1).unwrap();
        assert_eq!((compiles, stats.counts()), (1, [0, 1, 0, 1, 0]));
        let b = compile_cpu(&s, &stats, &canon, &plan, || compiles += 1).unwrap();
        assert_eq!((compiles, stats.counts()), (1, [1, 1, 0, 1, 0]));
        assert_eq!(run(&a, &x), run(&b, &x));
        assert!(b.as_text().contains("loaded from the persistent compilation cache"));
        assert!(!a.as_text().contains("loaded from the persistent compilation cache"));
        let path = entry_path(&dir, &key(&s, &canon).unwrap());
        // A flipped byte in the code: rejected by the checksum, then rewritten by the compile.
        let mut data = std::fs::read(&path).unwrap();
        let n = data.len();
        data[n - 40] ^= 0x55;
        std::fs::write(&path, &data).unwrap();
        let c = compile_cpu(&s, &stats, &canon, &plan, || compiles += 1).unwrap();
        assert_eq!((compiles, stats.counts()), (2, [1, 1, 1, 2, 0]));
        assert!(stats.last_error().contains("checksum"), "{}", stats.last_error());
        assert_eq!(run(&c, &x), run(&a, &x));
        compile_cpu(&s, &stats, &canon, &plan, || compiles += 1).unwrap();
        assert_eq!((compiles, stats.counts()), (2, [2, 1, 1, 2, 0]));
        // Another build id is another key; an entry copied under a foreign name is rejected by its key.
        let s2 = Settings { build_id: "other".into(), ..s.clone() };
        let p2 = entry_path(&dir, &key(&s2, &canon).unwrap());
        std::fs::copy(&path, &p2).unwrap();
        compile_cpu(&s2, &stats, &canon, &plan, || compiles += 1).unwrap();
        assert_eq!((compiles, stats.counts()), (3, [2, 1, 2, 3, 0]));
        assert!(stats.last_error().contains("another key"), "{}", stats.last_error());
        // Thresholds: a compile faster than min_compile_secs, or an entry smaller than min_entry_bytes, is
        // not written.
        let _ = std::fs::remove_dir_all(&dir);
        for s3 in [Settings { min_compile_secs: 1e9, ..s.clone() }, Settings { min_entry_bytes: 1 << 40, ..s.clone() }] {
            compile_cpu(&s3, &stats, &canon, &plan, || compiles += 1).unwrap();
            assert!(!path.exists());
        }
        assert_eq!(compiles, 5);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn replay_rejects_other_code() {
        let (_, plan) = plan_of(PROG);
        let (_, code) = code_store::record(|| cpu::compile(&plan)).unwrap();
        let code = code.unwrap();
        assert!(!code.is_empty());
        assert_eq!(code_store::decode(&code_store::encode(&code)).unwrap(), code);
        let mut fewer = code.clone();
        fewer.pop();
        assert!(code_store::replay(fewer, || cpu::compile(&plan)).is_err());
        let mut renamed = code.clone();
        renamed[0].name.push('x');
        assert!(code_store::replay(renamed, || cpu::compile(&plan)).is_err());
        let mut more = code.clone();
        more.push(code[0].clone());
        assert!(code_store::replay(more, || cpu::compile(&plan)).is_err());
        assert!(code_store::decode(&code_store::encode(&code)[..10]).is_err());
    }
}
