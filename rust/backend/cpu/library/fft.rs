//! `fft` along the last axis through `rustfft` (complex transforms) and `realfft` (real-input ones), on
//! f32 or f64 parts: complex values arrive as separate real and imaginary buffers (cranax lowers complex
//! values as pairs of reals), so rows are interleaved into a scratch buffer, transformed in place, and
//! split again. Plans are cached per thread and length (rustfft's planners keep them).
use super::elem::{elems, elems_mut, numel, uninit};
use crate::buffer::Buffer;
use crate::error::{Error, Result};
use crate::ir::{Aval, DType, FftKind};
use realfft::{ComplexToReal, RealFftPlanner, RealToComplex};
use rustfft::num_complex::Complex;
use rustfft::{Fft, FftNum, FftPlanner};
use std::cell::RefCell;
use std::sync::Arc;

type Planners<T> = RefCell<(FftPlanner<T>, RealFftPlanner<T>)>;

thread_local! {
    static P32: Planners<f32> = RefCell::new((FftPlanner::new(), RealFftPlanner::new()));
    static P64: Planners<f64> = RefCell::new((FftPlanner::new(), RealFftPlanner::new()));
}

/// The element types with a per-thread planner cache.
trait Planned: FftNum + Default {
    fn with<R>(f: impl FnOnce(&mut (FftPlanner<Self>, RealFftPlanner<Self>)) -> R) -> R;
    fn complex(n: usize, forward: bool) -> Arc<dyn Fft<Self>> {
        Self::with(|p| if forward { p.0.plan_fft_forward(n) } else { p.0.plan_fft_inverse(n) })
    }
    fn r2c(n: usize) -> Arc<dyn RealToComplex<Self>> {
        Self::with(|p| p.1.plan_fft_forward(n))
    }
    fn c2r(n: usize) -> Arc<dyn ComplexToReal<Self>> {
        Self::with(|p| p.1.plan_fft_inverse(n))
    }
}

impl Planned for f32 {
    fn with<R>(f: impl FnOnce(&mut (FftPlanner<f32>, RealFftPlanner<f32>)) -> R) -> R {
        P32.with(|p| f(&mut p.borrow_mut()))
    }
}

impl Planned for f64 {
    fn with<R>(f: impl FnOnce(&mut (FftPlanner<f64>, RealFftPlanner<f64>)) -> R) -> R {
        P64.with(|p| f(&mut p.borrow_mut()))
    }
}

pub fn fft(kind: FftKind, n: usize, inputs: &[&Buffer], outs: &[Aval]) -> Result<Vec<Buffer>> {
    let res: Vec<Buffer> = outs.iter().map(uninit).collect::<Result<_>>()?;
    if numel(&outs[0].shape) == 0 || n == 0 {
        return Ok(res);
    }
    match inputs[0].aval.dtype {
        DType::F32 => run::<f32>(kind, n, inputs, &res)?,
        DType::F64 => run::<f64>(kind, n, inputs, &res)?,
        d => return Err(Error::Execution(format!("fft does not accept dtype {}", d.short_name()))),
    }
    Ok(res)
}

fn run<T: Planned>(kind: FftKind, n: usize, inputs: &[&Buffer], res: &[Buffer]) -> Result<()> {
    let scale = T::from_f64(1.0 / n as f64).unwrap_or_else(T::one);
    let err = |e: realfft::FftError| Error::Execution(format!("fft: {e}"));
    let m = n / 2 + 1;
    match kind {
        FftKind::Fft | FftKind::Ifft => {
            let plan = T::complex(n, kind == FftKind::Fft);
            // SAFETY: the shape rule gave both inputs and both outputs dtype T; the outputs are fresh.
            let (re, im) = unsafe { (elems::<T>(inputs[0]), elems::<T>(inputs[1])) };
            let (ore, oim) = unsafe { (elems_mut::<T>(&res[0]), elems_mut::<T>(&res[1])) };
            let mut line: Vec<Complex<T>> = re.iter().zip(im).map(|(&a, &b)| Complex::new(a, b)).collect();
            plan.process(&mut line); // every row: the buffer is a whole number of length-n lines
            let inv = kind == FftKind::Ifft;
            for ((c, r), i) in line.iter().zip(ore.iter_mut()).zip(oim.iter_mut()) {
                (*r, *i) = if inv { (c.re * scale, c.im * scale) } else { (c.re, c.im) };
            }
        }
        FftKind::Rfft => {
            let plan = T::r2c(n);
            // SAFETY: as above.
            let x = unsafe { elems::<T>(inputs[0]) };
            let (ore, oim) = unsafe { (elems_mut::<T>(&res[0]), elems_mut::<T>(&res[1])) };
            let mut input = plan.make_input_vec();
            let mut spec = plan.make_output_vec();
            let mut scratch = plan.make_scratch_vec();
            for (row, (r, i)) in x.chunks_exact(n).zip(ore.chunks_exact_mut(m).zip(oim.chunks_exact_mut(m))) {
                input.copy_from_slice(row);
                plan.process_with_scratch(&mut input, &mut spec, &mut scratch).map_err(err)?;
                for ((c, a), b) in spec.iter().zip(r.iter_mut()).zip(i.iter_mut()) {
                    (*a, *b) = (c.re, c.im);
                }
            }
        }
        FftKind::Irfft => {
            let plan = T::c2r(n);
            // SAFETY: as above.
            let (re, im) = unsafe { (elems::<T>(inputs[0]), elems::<T>(inputs[1])) };
            let out = unsafe { elems_mut::<T>(&res[0]) };
            let mut spec = plan.make_input_vec();
            let mut output = plan.make_output_vec();
            let mut scratch = plan.make_scratch_vec();
            for ((r, i), o) in re.chunks_exact(m).zip(im.chunks_exact(m)).zip(out.chunks_exact_mut(n)) {
                for ((c, &a), &b) in spec.iter_mut().zip(r).zip(i) {
                    *c = Complex::new(a, b);
                }
                // a real signal's spectrum is real at frequency 0 (and n/2 for even n): those imaginary parts
                // are ignored, as NumPy's irfft does (realfft refuses them)
                spec[0].im = T::zero();
                if n % 2 == 0 {
                    spec[m - 1].im = T::zero();
                }
                plan.process_with_scratch(&mut spec, &mut output, &mut scratch).map_err(err)?;
                for (d, &v) in o.iter_mut().zip(output.iter()) {
                    *d = v * scale;
                }
            }
        }
    }
    Ok(())
}
