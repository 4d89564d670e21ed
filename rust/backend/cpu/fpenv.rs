//! Denormals as JAX's CPU backend treats them: flushed to zero in arithmetic, inputs and results alike.
//!
//! XLA's CPU runtime runs with the x86 MXCSR bits FTZ (results that would be subnormal become ±0) and DAZ
//! (subnormal operands read as ±0) set, so `x * 1.5` of a float32 `1e-39` is `0.0` and `x == 0` is true.
//! Keeping subnormals also costs: an operation on them takes a microcode assist of ~100 cycles, which made a
//! long Adam run (moments decaying into subnormals) 5× slower per step. cranax matches JAX, scoped to its own
//! execution: [`FlushDenormals`] sets the bits for as long as a plan runs on the calling thread and restores
//! the caller's MXCSR afterwards (NumPy in the same thread still sees subnormals), and cranax's own pool
//! threads set them once when they start. Data movement (copies, views, bit casts, `abs`/`neg` on the bits)
//! never touches the float unit, so it keeps subnormals as JAX does. aarch64's FPCR.FZ flushes both inputs and
//! results; other targets keep subnormals.

/// Writes a control word and restores the previous one on drop (also when a panic unwinds through it); a
/// guard that finds the word already as wanted (nested runs, pool threads) has nothing to restore.
struct Restore {
    saved: Option<Word>,
}

impl Restore {
    fn set(want: impl FnOnce(Word) -> Word) -> Restore {
        let old = read();
        let new = want(old);
        if new == old {
            return Restore { saved: None };
        }
        write(new);
        Restore { saved: Some(old) }
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(old) = self.saved {
            write(old);
        }
    }
}

/// Sets flush-to-zero and denormals-are-zero while alive; restores the previous control word on drop.
pub struct FlushDenormals {
    _restore: Restore,
}

impl FlushDenormals {
    pub fn new() -> FlushDenormals {
        FlushDenormals { _restore: Restore::set(|w| w | FLUSH_BITS) }
    }
}

impl Default for FlushDenormals {
    fn default() -> Self {
        Self::new()
    }
}

/// Clears flush-to-zero and denormals-are-zero while alive (IEEE subnormals), restoring the previous control
/// word on drop. For library code whose scaling tricks need subnormal intermediates: faer's complex
/// reciprocal scales `z` up by `sqrt(1 / MIN_POSITIVE)` and multiplies by `1 / |scaled z|^2`, a subnormal
/// whenever `1 < |z|^2` with both parts at most 1, so under FTZ it returns 0 (and complex triangular solves,
/// LU, Householder reflectors and the eigenvectors built on it go wrong). LAPACK, which XLA calls under FTZ,
/// has no such step.
pub struct KeepDenormals {
    _restore: Restore,
}

impl KeepDenormals {
    pub fn new() -> KeepDenormals {
        KeepDenormals { _restore: Restore::set(|w| w & !FLUSH_BITS) }
    }
}

impl Default for KeepDenormals {
    fn default() -> Self {
        Self::new()
    }
}

/// Sets the bits for the rest of this thread's life (cranax's own pool threads).
pub fn flush_denormals_on_this_thread() {
    write(read() | FLUSH_BITS);
}

/// Whether this thread currently flushes denormals (for tests).
pub fn flushing() -> bool {
    FLUSH_BITS != 0 && read() & FLUSH_BITS == FLUSH_BITS
}

#[cfg(target_arch = "x86_64")]
type Word = u32;
/// MXCSR: FTZ is bit 15, DAZ bit 6.
#[cfg(target_arch = "x86_64")]
const FLUSH_BITS: Word = (1 << 15) | (1 << 6);

#[cfg(target_arch = "x86_64")]
fn read() -> Word {
    let mut v: Word = 0;
    // SAFETY: stores the 32-bit MXCSR into `v`, a valid, aligned local.
    unsafe { core::arch::asm!("stmxcsr [{}]", in(reg) &mut v, options(nostack, preserves_flags)) };
    v
}

#[cfg(target_arch = "x86_64")]
fn write(v: Word) {
    // SAFETY: loads MXCSR from `v`; only the rounding/flush/mask bits that SSE defines are ever set here.
    unsafe { core::arch::asm!("ldmxcsr [{}]", in(reg) &v, options(nostack, preserves_flags, readonly)) };
}

#[cfg(target_arch = "aarch64")]
type Word = u64;
/// FPCR: FZ is bit 24 (flushes subnormal inputs and results of single and double precision).
#[cfg(target_arch = "aarch64")]
const FLUSH_BITS: Word = 1 << 24;

#[cfg(target_arch = "aarch64")]
fn read() -> Word {
    let v: Word;
    // SAFETY: reads the floating-point control register.
    unsafe { core::arch::asm!("mrs {}, fpcr", out(reg) v, options(nomem, nostack, preserves_flags)) };
    v
}

#[cfg(target_arch = "aarch64")]
fn write(v: Word) {
    // SAFETY: writes back a value read from FPCR with only the FZ bit changed.
    unsafe { core::arch::asm!("msr fpcr, {}", in(reg) v, options(nomem, nostack, preserves_flags)) };
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
type Word = u32;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const FLUSH_BITS: Word = 0;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn read() -> Word {
    0
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn write(_: Word) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scoped_and_restored() {
        let tiny = std::hint::black_box(1e-39f32);
        let before = read();
        {
            let _g = FlushDenormals::new();
            assert!(flushing() || FLUSH_BITS == 0);
            {
                let _nested = FlushDenormals::new();
            }
            // The nested guard restored nothing: still flushing.
            assert!(flushing() || FLUSH_BITS == 0);
            if FLUSH_BITS != 0 {
                assert_eq!(std::hint::black_box(tiny) * 1.5, 0.0);
            }
        }
        assert_eq!(read(), before);
        assert_eq!(std::hint::black_box(tiny) * 1.5, 1.5e-39);
    }

    #[test]
    fn keep_denormals_inside_a_flushing_run() {
        let tiny = std::hint::black_box(1e-39f32);
        let before = read();
        {
            let _g = FlushDenormals::new();
            {
                let _k = KeepDenormals::new();
                assert!(!flushing());
                assert_eq!(std::hint::black_box(tiny) * 1.5, 1.5e-39);
            }
            assert!(flushing() || FLUSH_BITS == 0);
        }
        assert_eq!(read(), before);
    }
}
