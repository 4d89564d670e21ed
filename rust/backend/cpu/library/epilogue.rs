//! The elementwise kernel a convolution or product runs in place on its output (`LibStep::epilogue`,
//! conditions in `Plan::epilogue_of`): the library calls `range` on each block of output elements it has
//! just written, while they are in cache, or `whole` once at the end when its blocks are not contiguous
//! element ranges. Either way each point is computed by the same compiled kernel code as the unfused
//! kernel step, so the results are bitwise the same.
use crate::backend::cpu::jit::CompiledKernel;

pub struct Epilogue<'a> {
    pub kernel: &'a CompiledKernel,
    /// The kernel's input pointers; `None` where the input reads the library output.
    pub ins: Vec<Option<*const u8>>,
    /// The kernel's output pointers; `None` at the output that takes over the library's buffer.
    pub outs: Vec<Option<*mut u8>>,
    /// Each output buffer's size in bytes (the library buffer's included).
    pub out_bytes: Vec<usize>,
}

// SAFETY: the pointers are read-only inputs and disjointly written outputs of one plan step; the library
// calls `range` on disjoint element ranges from its worker threads.
unsafe impl Sync for Epilogue<'_> {}
unsafe impl Send for Epilogue<'_> {}

impl Epilogue<'_> {
    fn pointers(&self, out: *mut u8) -> (Vec<*const u8>, Vec<*mut u8>) {
        (
            self.ins.iter().map(|p| p.unwrap_or(out as *const u8)).collect(),
            self.outs.iter().map(|p| p.unwrap_or(out)).collect(),
        )
    }

    /// Runs the kernel on output elements `[begin, end)` (row-major indices of the library output `out`).
    ///
    /// # Safety
    /// `out` is the library's output buffer, fully written on `[begin, end)`; ranges of concurrent calls
    /// are disjoint; `end` is at most the output's element count.
    pub unsafe fn range(&self, out: *mut u8, begin: usize, end: usize) {
        let (ins, outs) = self.pointers(out);
        (self.kernel.entry)(ins.as_ptr(), outs.as_ptr(), begin as u64, end as u64);
    }

    /// Runs the kernel over the whole output (split across threads as a kernel step is).
    ///
    /// # Safety
    /// `out` is the library's output buffer, fully written.
    pub unsafe fn whole(&self, out: *mut u8) {
        let (ins, outs) = self.pointers(out);
        crate::backend::cpu::threads::run_kernel(self.kernel, &ins, &outs, &self.out_bytes);
    }
}
