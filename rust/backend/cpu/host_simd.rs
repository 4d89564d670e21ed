//! `CRANAX_CPU_BLOCK_MATH=avx2` for the libraries too: faer (through pulp), the gemm crate, faer's
//! private-gemm-x86 products, cranax's own AVX-512 paths and Cranelift's ISA flags all choose their lanes
//! from Rust's `std::is_x86_feature_detected!`, whose answers std detects once per process and caches where
//! no crate can change them (pulp caches its own answer again; neither has a runtime switch). So in avx2
//! mode, at import and before anything in this library asks, the process detects once with CPUID
//! *faulting* on (Linux `arch_prctl(ARCH_SET_CPUID, 0)`): each `cpuid` of that one detection traps to a
//! handler that runs the real instruction and clears the AVX-512 bits, and std caches an AVX2 machine.
//! Faulting is per thread, lasts only for that detection, and the handler chains any other fault to the
//! previous SIGSEGV handler. Where the kernel or CPU offers no CPUID faulting, the mode covers cranax's
//! own kernels only, and `state()` says so.
use std::sync::OnceLock;

/// What start-up did about the libraries' SIMD level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Masking {
    /// Not asked for (`CRANAX_CPU_BLOCK_MATH` is not `avx2`), or not an x86-64 Linux host.
    NotRequested,
    /// The host has no AVX-512: the libraries already use AVX2 (or less).
    NotNeeded,
    /// AVX-512 hidden from this library's feature detection.
    Masked,
    /// Asked for, but CPUID faulting is not available here: the libraries keep AVX-512.
    Unavailable,
    /// Asked for, but something in this process had already detected the features.
    TooLate,
}

static STATE: OnceLock<Masking> = OnceLock::new();

/// Applies the `CRANAX_CPU_BLOCK_MATH` mode to feature detection; the Python module calls this first.
pub fn init() -> Masking {
    *STATE.get_or_init(|| {
        let want = std::env::var("CRANAX_CPU_BLOCK_MATH").unwrap_or_default().to_ascii_lowercase();
        if want != "avx2" {
            return Masking::NotRequested;
        }
        imp::mask_avx512()
    })
}

/// What `init` did (`NotRequested` before it ran).
pub fn state() -> Masking {
    STATE.get().copied().unwrap_or(Masking::NotRequested)
}

/// The lanes faer's own kernels dispatch to (pulp's choice) and those of the matrix products it and cranax
/// call (std's detection, as faer's matmul and the gemm crate read it): "avx512", "avx2" or "scalar".
pub fn library_levels() -> (&'static str, &'static str) {
    #[cfg(target_arch = "x86_64")]
    {
        use faer::traits::pulp::Arch;
        let faer = match Arch::new() {
            Arch::V4(_) => "avx512",
            Arch::V3(_) => "avx2",
            _ => "scalar",
        };
        let gemm = if std::is_x86_feature_detected!("avx512f") {
            "avx512"
        } else if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            "avx2"
        } else {
            "scalar"
        };
        (faer, gemm)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        ("scalar", "scalar")
    }
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod imp {
    use super::Masking;
    use std::arch::x86_64::__cpuid_count;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// `arch_prctl` code: argument 0 makes `cpuid` fault in this thread, 1 allows it again.
    const ARCH_SET_CPUID: libc::c_long = 0x1012;
    /// `si_code` of a general-protection fault (how a faulting `cpuid` arrives).
    const SI_KERNEL: libc::c_int = 0x80;

    static ACTIVE: AtomicBool = AtomicBool::new(false);
    /// The SIGSEGV action before ours; written once before ours is installed, read by the handler.
    static mut PREVIOUS: MaybeUninit<libc::sigaction> = MaybeUninit::uninit();

    fn allow_cpuid(allowed: bool) -> bool {
        // SAFETY: a plain system call on this thread's own flag.
        unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_SET_CPUID, allowed as libc::c_long) == 0 }
    }

    /// Leaf 7 feature bits of AVX-512 extensions (Intel SDM / AMD APM `CPUID.(EAX=7)`).
    const L7_EBX: u32 = (1 << 16) | (1 << 17) | (1 << 21) | (1 << 26) | (1 << 27) | (1 << 28) | (1 << 30) | (1 << 31);
    const L7_ECX: u32 = (1 << 1) | (1 << 6) | (1 << 11) | (1 << 12) | (1 << 14);
    const L7_EDX: u32 = (1 << 2) | (1 << 3) | (1 << 8) | (1 << 23);
    /// `CPUID.(EAX=7,ECX=1):EAX`: AVX512_BF16.
    const L7S1_EAX: u32 = 1 << 5;

    extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo and ucontext; RIP is read only for a general-protection
        // fault, whose instruction was fetched (so its bytes are mapped).
        unsafe {
            let uc = &mut *(ctx as *mut libc::ucontext_t);
            let g = &mut uc.uc_mcontext.gregs;
            let rip = g[libc::REG_RIP as usize] as *const u8;
            let ours = ACTIVE.load(Ordering::Relaxed) && (*info).si_code == SI_KERNEL && *rip == 0x0f && *rip.add(1) == 0xa2;
            if !ours {
                // Not our cpuid: the previous handler takes the fault when the instruction runs again.
                libc::sigaction(sig, (*std::ptr::addr_of!(PREVIOUS)).as_ptr(), std::ptr::null_mut());
                return;
            }
            let (leaf, sub) = (g[libc::REG_RAX as usize] as u32, g[libc::REG_RCX as usize] as u32);
            allow_cpuid(true);
            let mut r = __cpuid_count(leaf, sub);
            allow_cpuid(false);
            if leaf == 7 && sub == 0 {
                r.ebx &= !L7_EBX;
                r.ecx &= !L7_ECX;
                r.edx &= !L7_EDX;
            } else if leaf == 7 && sub == 1 {
                r.eax &= !L7S1_EAX;
            }
            g[libc::REG_RAX as usize] = r.eax as i64;
            g[libc::REG_RBX as usize] = r.ebx as i64;
            g[libc::REG_RCX as usize] = r.ecx as i64;
            g[libc::REG_RDX as usize] = r.edx as i64;
            g[libc::REG_RIP as usize] += 2; // `cpuid` is 0F A2
        }
    }

    pub(super) fn mask_avx512() -> Masking {
        // The real CPU, asked directly (asking std would fill its cache unmasked).
        let avx512f = __cpuid_count(0, 0).eax >= 7 && __cpuid_count(7, 0).ebx & (1 << 16) != 0;
        if !avx512f {
            return Masking::NotNeeded;
        }
        // SAFETY: `PREVIOUS` is written here, before the handler can run; the handler only reads it.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(libc::SIGSEGV, &sa, (*std::ptr::addr_of_mut!(PREVIOUS)).as_mut_ptr()) != 0 {
                return Masking::Unavailable;
            }
            ACTIVE.store(true, Ordering::SeqCst);
            let faulting = allow_cpuid(false);
            // std detects every feature on the first question and keeps the answers.
            let seen = std::is_x86_feature_detected!("avx512f");
            if faulting {
                allow_cpuid(true);
            }
            ACTIVE.store(false, Ordering::SeqCst);
            libc::sigaction(libc::SIGSEGV, (*std::ptr::addr_of!(PREVIOUS)).as_ptr(), std::ptr::null_mut());
            match (faulting, seen) {
                (false, _) => Masking::Unavailable,
                (true, true) => Masking::TooLate,
                (true, false) => Masking::Masked,
            }
        }
    }
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
mod imp {
    use super::Masking;

    pub(super) fn mask_avx512() -> Masking {
        Masking::Unavailable
    }
}
