//! Machine code kept across processes: while recording, every function the backend defines is kept as its
//! bytes and relocations (targets by symbol name); while replaying, the backend builds the same modules and
//! declarations but hands those bytes to the JIT (`define_function_bytes`) instead of running Cranelift's
//! compiler. The JIT resolves the relocations at load exactly as for freshly compiled code, so nothing
//! process-specific (addresses) is ever stored. The mode is per thread: compiling a plan (its sub-plans and
//! fused loops included) happens on the calling thread, in a fixed order, so replay consumes the functions in
//! the order recording produced them, and checks each one's name.
//!
//! Only what this file writes is read back, and only after the runtime checked the entry's hash; `decode`
//! still bounds-checks everything, and relocations must lie inside their function.
use std::cell::RefCell;
use std::collections::VecDeque;

use cranelift_codegen::binemit::Reloc;
use cranelift_codegen::ir::LibCall;
use cranelift_codegen::Context;
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, FuncOrDataId, Module, ModuleReloc, ModuleRelocTarget};

use crate::error::{Error, Result};

/// One defined function: its symbol name, alignment, machine code and relocations.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncCode {
    pub name: String,
    pub align: u64,
    pub bytes: Vec<u8>,
    pub relocs: Vec<RelocCode>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RelocCode {
    pub offset: u32,
    pub kind: u8,
    pub addend: i64,
    pub target: Target,
}

/// A relocation's target by name (function ids differ between modules; names do not).
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    Func(String),
    LibCall(String),
    FuncOffset(String, u32),
}

enum Mode {
    Off,
    /// Functions defined so far; `storable` turns false at the first one this file cannot keep.
    Record { funcs: Vec<FuncCode>, storable: bool },
    Replay(VecDeque<FuncCode>),
}

thread_local! {
    static MODE: RefCell<Mode> = const { RefCell::new(Mode::Off) };
}

/// Puts the thread back in `Off` even when the compile panics.
struct Reset;
impl Drop for Reset {
    fn drop(&mut self) {
        MODE.with(|m| *m.borrow_mut() = Mode::Off);
    }
}

fn is_off() -> bool {
    MODE.with(|m| matches!(*m.borrow(), Mode::Off))
}

/// Runs `f` (a compile) keeping every function it defines; the code is `None` when some function could
/// not be kept (an unsupported relocation) or when recording is already active on this thread.
pub fn record<T>(f: impl FnOnce() -> Result<T>) -> Result<(T, Option<Vec<FuncCode>>)> {
    if !is_off() {
        return Ok((f()?, None));
    }
    MODE.with(|m| *m.borrow_mut() = Mode::Record { funcs: Vec::new(), storable: true });
    let reset = Reset;
    let r = f();
    let mode = MODE.with(|m| std::mem::replace(&mut *m.borrow_mut(), Mode::Off));
    drop(reset);
    let t = r?;
    match mode {
        Mode::Record { funcs, storable: true } => Ok((t, Some(funcs))),
        _ => Ok((t, None)),
    }
}

/// Runs `f` (the same compile that recorded `code`) defining its functions from `code` instead of
/// compiling them. Errors when the compile asks for other functions than `code` holds.
pub fn replay<T>(code: Vec<FuncCode>, f: impl FnOnce() -> Result<T>) -> Result<T> {
    if !is_off() {
        return Err(Error::Codegen("stored code: replay inside another record or replay".into()));
    }
    MODE.with(|m| *m.borrow_mut() = Mode::Replay(code.into()));
    let reset = Reset;
    let r = f();
    let left = MODE.with(|m| match &*m.borrow() {
        Mode::Replay(q) => q.len(),
        _ => 0,
    });
    drop(reset);
    let t = r?;
    if left != 0 {
        return Err(Error::Codegen(format!("stored code: {left} functions left over")));
    }
    Ok(t)
}

/// True while this thread defines functions from stored code (their bodies need not be built).
pub fn replaying() -> bool {
    MODE.with(|m| matches!(*m.borrow(), Mode::Replay(_)))
}

fn bad(m: impl std::fmt::Display) -> String {
    format!("stored code: {m}")
}

// Relocation kinds kept (those the JIT applies on the hosts cranax runs on), with their widths in bytes.
const KINDS: [(Reloc, u8, u32); 10] = [
    (Reloc::Abs4, 1, 4),
    (Reloc::Abs8, 2, 8),
    (Reloc::X86PCRel4, 3, 4),
    (Reloc::X86CallPCRel4, 4, 4),
    (Reloc::X86CallPLTRel4, 5, 4),
    (Reloc::X86GOTPCRel4, 6, 4),
    (Reloc::Arm64Call, 7, 4),
    (Reloc::Aarch64AdrGotPage21, 8, 4),
    (Reloc::Aarch64Ld64GotLo12Nc, 9, 4),
    (Reloc::Aarch64AdrPrelPgHi21, 10, 4),
];

fn kind_code(k: Reloc) -> Option<u8> {
    KINDS.iter().find(|(r, _, _)| *r == k).map(|&(_, c, _)| c)
}

fn kind_of(c: u8) -> Option<(Reloc, u32)> {
    KINDS.iter().find(|(_, k, _)| *k == c).map(|&(r, _, w)| (r, w))
}

fn func_name(module: &JITModule, id: FuncId) -> Option<String> {
    module.declarations().get_function_decl(id).name.clone()
}

fn keep(module: &JITModule, id: FuncId, ctx: &Context) -> Option<FuncCode> {
    let cc = ctx.compiled_code()?;
    let mut relocs = Vec::new();
    for r in cc.buffer.relocs() {
        let m = ModuleReloc::from_mach_reloc(r, &ctx.func, id);
        let target = match m.name {
            ModuleRelocTarget::User { namespace: 0, index } => Target::Func(func_name(module, FuncId::from_u32(index))?),
            ModuleRelocTarget::LibCall(lc) => Target::LibCall(lc.to_string()),
            ModuleRelocTarget::FunctionOffset(f, off) => Target::FuncOffset(func_name(module, f)?, off),
            _ => return None,
        };
        relocs.push(RelocCode { offset: m.offset, kind: kind_code(m.kind)?, addend: m.addend, target });
    }
    Some(FuncCode { name: func_name(module, id)?, align: cc.buffer.alignment as u64, bytes: cc.code_buffer().to_vec(), relocs })
}

fn resolve(module: &JITModule, name: &str) -> std::result::Result<FuncId, String> {
    match module.get_name(name) {
        Some(FuncOrDataId::Func(id)) => Ok(id),
        _ => Err(bad(format!("relocation to unknown function {name}"))),
    }
}

fn define_stored(module: &mut JITModule, id: FuncId, f: FuncCode) -> std::result::Result<(), String> {
    if func_name(module, id).as_deref() != Some(f.name.as_str()) {
        return Err(bad(format!("expected function {:?}, found {}", func_name(module, id), f.name)));
    }
    let mut relocs = Vec::with_capacity(f.relocs.len());
    for r in &f.relocs {
        let (kind, width) = kind_of(r.kind).ok_or_else(|| bad("unknown relocation kind"))?;
        if (r.offset as u64) + (width as u64) > f.bytes.len() as u64 {
            return Err(bad("relocation outside its function"));
        }
        let name = match &r.target {
            Target::Func(n) => ModuleRelocTarget::user(0, resolve(module, n)?.as_u32()),
            Target::LibCall(n) => ModuleRelocTarget::LibCall(n.parse::<LibCall>().map_err(|_| bad(format!("unknown libcall {n}")))?),
            Target::FuncOffset(n, off) => {
                let fid = resolve(module, n)?;
                if fid != id || *off as usize > f.bytes.len() {
                    return Err(bad("offset relocation outside its function"));
                }
                ModuleRelocTarget::FunctionOffset(fid, *off)
            }
        };
        relocs.push(ModuleReloc { offset: r.offset, kind, name, addend: r.addend });
    }
    if !f.align.is_power_of_two() || f.align > 4096 {
        return Err(bad("bad alignment"));
    }
    module.define_function_bytes(id, f.align, &f.bytes, &relocs).map_err(|e| format!("{e:?}"))
}

/// Defines function `id` from `ctx`: compiles it (keeping the code while recording), or, while replaying,
/// takes the next stored function instead. The backend calls this for every function it defines.
pub(super) fn define(module: &mut JITModule, id: FuncId, ctx: &mut Context) -> std::result::Result<(), String> {
    let next = MODE.with(|m| match &mut *m.borrow_mut() {
        Mode::Replay(q) => Some(q.pop_front()),
        _ => None,
    });
    match next {
        Some(Some(f)) => return define_stored(module, id, f),
        Some(None) => return Err(bad("fewer functions stored than the plan defines")),
        None => {}
    }
    module.define_function(id, ctx).map_err(|e| format!("{e:?}"))?;
    MODE.with(|m| {
        if let Mode::Record { funcs, storable } = &mut *m.borrow_mut() {
            if *storable {
                match keep(module, id, ctx) {
                    Some(f) => funcs.push(f),
                    None => *storable = false,
                }
            }
        }
    });
    Ok(())
}

/// What the stored code depends on besides the plan: the target triple, Cranelift's shared and ISA flags
/// (the host features it detected), the block-math routines chosen, and the switches that change codegen.
pub fn fingerprint() -> Result<String> {
    let isa = super::module::host_isa()?;
    let flags: Vec<String> = isa.isa_flags().iter().map(|v| v.to_string()).collect();
    let env: Vec<String> = ["CRANAX_CPU_NO_SIMD", "CRANAX_NO_FUSED_LOOPS", "CRANAX_NO_DIRECT_LOOPS", "CRANAX_CPU_DISASM", "CRANAX_NO_EPILOGUE", "CRANAX_NO_ROW_CHAINS", "CRANAX_NO_WIDE"]
        .iter()
        .map(|k| format!("{k}={}", std::env::var(k).unwrap_or_default()))
        .collect();
    Ok(format!(
        "{}\n{}\n{}\nblockmath={:?}\nhalf_chain={}\nno_simd={}\n{}",
        isa.triple(),
        isa.flags(),
        flags.join(","),
        super::blockmath::isa(),
        super::wide_half::routine().is_some(),
        super::loop_plan::simd_disabled(),
        env.join(",")
    ))
}

// --- encoding: little-endian, length-prefixed; `decode` rejects anything it did not write ---

fn put_u32(o: &mut Vec<u8>, v: u32) {
    o.extend_from_slice(&v.to_le_bytes());
}
fn put_bytes(o: &mut Vec<u8>, b: &[u8]) {
    put_u32(o, b.len() as u32);
    o.extend_from_slice(b);
}

/// The functions as bytes.
pub fn encode(funcs: &[FuncCode]) -> Vec<u8> {
    let mut o = Vec::new();
    put_u32(&mut o, funcs.len() as u32);
    for f in funcs {
        put_bytes(&mut o, f.name.as_bytes());
        o.extend_from_slice(&f.align.to_le_bytes());
        put_bytes(&mut o, &f.bytes);
        put_u32(&mut o, f.relocs.len() as u32);
        for r in &f.relocs {
            put_u32(&mut o, r.offset);
            o.push(r.kind);
            o.extend_from_slice(&r.addend.to_le_bytes());
            match &r.target {
                Target::Func(n) => {
                    o.push(0);
                    put_bytes(&mut o, n.as_bytes());
                }
                Target::LibCall(n) => {
                    o.push(1);
                    put_bytes(&mut o, n.as_bytes());
                }
                Target::FuncOffset(n, off) => {
                    o.push(2);
                    put_bytes(&mut o, n.as_bytes());
                    put_u32(&mut o, *off);
                }
            }
        }
    }
    o
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.0.len() {
            return Err(Error::Codegen(bad("truncated")));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| Error::Codegen(bad("truncated")))?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| Error::Codegen(bad("truncated")))?))
    }
    fn bytes(&mut self) -> Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> Result<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| Error::Codegen(bad("bad name")))
    }
    /// A count of items each at least `min` bytes long, checked against what is left.
    fn count(&mut self, min: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min) > self.0.len() {
            return Err(Error::Codegen(bad("count past the end")));
        }
        Ok(n)
    }
}

/// Reads what `encode` wrote; `Error::Codegen` for anything else.
pub fn decode(data: &[u8]) -> Result<Vec<FuncCode>> {
    let mut r = Reader(data);
    let n = r.count(4 + 8 + 4 + 4)?;
    let mut funcs = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.string()?;
        let align = r.u64()?;
        let bytes = r.bytes()?.to_vec();
        let nr = r.count(4 + 1 + 8 + 1 + 4)?;
        let mut relocs = Vec::with_capacity(nr);
        for _ in 0..nr {
            let offset = r.u32()?;
            let kind = r.u8()?;
            let addend = r.u64()? as i64;
            let target = match r.u8()? {
                0 => Target::Func(r.string()?),
                1 => Target::LibCall(r.string()?),
                2 => Target::FuncOffset(r.string()?, r.u32()?),
                _ => return Err(Error::Codegen(bad("bad relocation target"))),
            };
            if kind_of(kind).is_none() {
                return Err(Error::Codegen(bad("unknown relocation kind")));
            }
            relocs.push(RelocCode { offset, kind, addend, target });
        }
        funcs.push(FuncCode { name, align, bytes, relocs });
    }
    if !r.0.is_empty() {
        return Err(Error::Codegen(bad("trailing bytes")));
    }
    Ok(funcs)
}
