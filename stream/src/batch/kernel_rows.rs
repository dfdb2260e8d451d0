//! Kernel rows of many data rows against the same `m` centres, a block of rows at a time by
//! one matrix product, and the passes over a data set that the streaming solvers
//! ([`super::falkon`]) make with them.
//!
//! For a block `X_b` of `b` rows (`b × d`) and the centres `Ã` (`m × d`), the kernel block
//! `K(X_b, Ã)` (`b × m`) comes from the inner products `X_bÃᵀ`, one matrix product
//! (ndarray's `general_mat_mul`, which hands it to `matrixmultiply` and the processor's vector
//! units):
//! the Gaussian from `‖x − x̃‖² = ‖x‖² + ‖x̃‖² − 2⟨x, x̃⟩`, clamped at 0 (which rounding can
//! cross when `x` lies on a centre); the polynomial and linear kernels from `⟨x, x̃⟩`
//! directly. The Laplacian's ℓ₁ distance has no such form: its rows are evaluated one by one
//! ([`Kernel::column`]). Everything is in f64 whatever the data's scalar: the passes
//! accumulate in f64 anyway.
//!
//! **The Gaussian's `exp`** is most of a block's work after the product (one per entry). Its
//! loop is compiled a second time for the widest vectors an x86-64 processor may have
//! (AVX2 with FMA, or AVX-512) and chosen when the centres are set, by the processor's
//! features (`pulp::Arch`); a portable build alone would run it 2 wide. The operations and
//! their order are the same in every version, so the values are the same bits whichever
//! runs (`pulp` falls back to the portable code elsewhere).
//!
//! **Rounding of the expansion.** Its cancellation costs `ε·(‖x‖² + ‖x̃‖²)` absolute in a
//! squared distance: for features in raw units far from 0 (a timestamp, a pressure in Pa)
//! that is far more than the distances between rows. The Gaussian is translation invariant,
//! so rows and centres are first moved by the centres' mean `o` (`x − o`, `x̃ − o`: the
//! same distances, norms of the data's spread): the cost is then `ε` times the squared
//! spread, as direct differences have it.
//!
//! **Memory**: the centres, their mean and their squared norms in f64, `m·(d + 1) + d`
//! scalars; per thread of a [`pass`], a block of rows and its kernel block
//! (`BLOCK_ROWS·(d + m)` f64) and the pass's accumulator.

use std::ops::Range;

use kestrel_core::{Error, Kernel, KernelKind, Real};
use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};

use crate::dataset::Dataset;
use crate::limits::zeroed;

/// Rows per block of a [`pass`]: the kernel block is `BLOCK_ROWS × m`.
pub const BLOCK_ROWS: usize = 256;

/// The centres of a kernel expansion, ready to give kernel blocks ([`KernelRows::block`]).
#[derive(Clone, Debug)]
pub struct KernelRows {
    kernel: Kernel<f64>,
    /// `Ã`, row-major `m × d` (Gaussian: less `origin`).
    centres: Vec<f64>,
    /// `o`, the centres' mean (Gaussian only; empty otherwise).
    origin: Vec<f64>,
    /// `‖x̃_j − o‖²` (Gaussian only).
    norms: Vec<f64>,
    /// `k̂`, subtracted from every kernel row (empty: none).
    offset: Vec<f64>,
    dim: usize,
    /// The widest vector instructions this CPU has (detected once), for the `exp` loop.
    arch: pulp::Arch,
}

impl KernelRows {
    /// `kernel` against `centres` (row-major, `dim` features each).
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for `dim = 0`, `DimensionMismatch` for centres that are
    /// not whole rows, `NonFinite` for a centre that is not finite; an allocation failure.
    pub fn new<T: Real>(kernel: &Kernel<T>, centres: &[T], dim: usize) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        if !centres.len().is_multiple_of(dim) {
            return Err(Error::DimensionMismatch { expected: centres.len() / dim * dim, got: centres.len() });
        }
        let mut wide = zeroed(centres.len(), "the centres")?;
        for (w, c) in wide.iter_mut().zip(centres) {
            *w = c.to_f64();
        }
        if !wide.iter().all(|c| c.is_finite()) {
            return Err(Error::NonFinite);
        }
        let kernel = Kernel::new(match kernel.kind() {
            KernelKind::Rbf { gamma } => KernelKind::Rbf { gamma: gamma.to_f64() },
            KernelKind::Laplacian { gamma } => KernelKind::Laplacian { gamma: gamma.to_f64() },
            KernelKind::Polynomial { degree, gamma, coef0 } => {
                KernelKind::Polynomial { degree, gamma: gamma.to_f64(), coef0: coef0.to_f64() }
            }
            KernelKind::Linear => KernelKind::Linear,
        })?;
        let (mut origin, mut norms) = (Vec::new(), Vec::new());
        if let KernelKind::Rbf { .. } = kernel.kind() {
            origin = zeroed(dim, "the centres")?;
            let count = (wide.len() / dim).max(1) as f64;
            for c in wide.chunks_exact(dim) {
                for (o, v) in origin.iter_mut().zip(c) {
                    *o += v / count;
                }
            }
            for c in wide.chunks_exact_mut(dim) {
                for (v, o) in c.iter_mut().zip(&origin) {
                    *v -= o;
                }
            }
            norms = wide.chunks_exact(dim).map(|c| c.iter().map(|v| v * v).sum()).collect();
        }
        Ok(KernelRows { kernel, centres: wide, origin, norms, offset: Vec::new(), dim, arch: pulp::Arch::new() })
    }

    /// The same centres giving `k − k̂` for each kernel row `k`: accumulating the products
    /// of rows shifted near their mean keeps a sum of squares from cancelling when it is
    /// centred.
    ///
    /// # Errors
    /// `DimensionMismatch` unless `offset` has `m` values; `NonFinite` for one that is not
    /// finite.
    pub fn offset_by(&self, offset: Vec<f64>) -> Result<Self, Error> {
        if offset.len() != self.len() {
            return Err(Error::DimensionMismatch { expected: self.len(), got: offset.len() });
        }
        if !offset.iter().all(|v| v.is_finite()) {
            return Err(Error::NonFinite);
        }
        Ok(KernelRows { offset, ..self.clone() })
    }

    /// [`KernelRows::offset_by`] the mean kernel row of the first [`BLOCK_ROWS`] rows of
    /// `data` (no offset when it has no rows).
    ///
    /// # Errors
    /// An allocation failure.
    pub fn offset_by_first_rows<T: Real>(&self, data: &Dataset<T>) -> Result<Self, Error> {
        let (m, b) = (self.len(), data.len().min(BLOCK_ROWS));
        if b == 0 {
            return Ok(self.clone());
        }
        let mut mean = blocks(self, data, 0..b, m, &|_, block, acc| {
            for k in block.chunks_exact(m) {
                acc.iter_mut().zip(k).for_each(|(s, k)| *s += k);
            }
            Ok(())
        })?;
        // The rows' kernel values themselves: less any offset `self` has, plus it back.
        for (s, o) in mean.iter_mut().zip(self.offset.iter().chain(std::iter::repeat(&0.0))) {
            *s = *s / b as f64 + o;
        }
        self.offset_by(mean)
    }

    /// The offset `k̂` (empty for none).
    pub fn offset(&self) -> &[f64] {
        &self.offset
    }

    /// Number of centres `m`.
    pub fn len(&self) -> usize {
        self.centres.len() / self.dim
    }

    /// Whether there are no centres.
    pub fn is_empty(&self) -> bool {
        self.centres.is_empty()
    }

    /// Features per row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// `out = K(X_b, Ã)` (less the offset, [`KernelRows::offset_by`]), row-major `b × m`, for
    /// the rows `rows` (row-major `b × d`), which are scratch: the Gaussian moves them by the
    /// centres' mean in place (see the module doc).
    ///
    /// # Errors
    /// `DimensionMismatch` when `rows` is not whole rows or `out` not `b × m`.
    pub fn block(&self, rows: &mut [f64], out: &mut [f64]) -> Result<(), Error> {
        self.kernel_block(rows, out)?;
        if !self.offset.is_empty() {
            for row in out.chunks_exact_mut(self.len()) {
                for (k, o) in row.iter_mut().zip(&self.offset) {
                    *k -= o;
                }
            }
        }
        Ok(())
    }

    /// `out = K(X_b, Ã)`, `rows` moved by `origin`.
    fn kernel_block(&self, rows: &mut [f64], out: &mut [f64]) -> Result<(), Error> {
        let (dim, m) = (self.dim, self.len());
        let b = rows.len() / dim;
        if b * dim != rows.len() || out.len() != b * m {
            return Err(Error::DimensionMismatch { expected: b * m, got: out.len() });
        }
        if b == 0 || m == 0 {
            return Ok(());
        }
        let kind = self.kernel.kind();
        if let KernelKind::Laplacian { .. } = kind {
            for (x, o) in rows.chunks_exact(dim).zip(out.chunks_exact_mut(m)) {
                self.kernel.column(x, &self.centres, o)?;
            }
            return Ok(());
        }
        if !self.origin.is_empty() {
            for x in rows.chunks_exact_mut(dim) {
                for (v, o) in x.iter_mut().zip(&self.origin) {
                    *v -= o;
                }
            }
        }
        let rows = &*rows;
        let shape = |_| Error::DimensionMismatch { expected: b * m, got: out.len() };
        let x = ArrayView2::from_shape((b, dim), rows).map_err(shape)?;
        let centres = ArrayView2::from_shape((m, dim), &self.centres).map_err(shape)?;
        let shape = |_| Error::DimensionMismatch { expected: b * m, got: b * m };
        let mut products = ArrayViewMut2::from_shape((b, m), &mut *out).map_err(shape)?;
        general_mat_mul(1.0, &x, &centres.t(), 0.0, &mut products);
        match kind {
            KernelKind::Rbf { gamma } => {
                self.arch.dispatch(GaussianFromProducts { gamma, norms: &self.norms, rows, dim, out });
            }
            KernelKind::Polynomial { degree, gamma, coef0 } => {
                for k in out.iter_mut() {
                    *k = Real::powi(gamma * *k + coef0, degree);
                }
            }
            KernelKind::Linear | KernelKind::Laplacian { .. } => {}
        }
        Ok(())
    }
}

/// `k = exp(−γ·max(0, ‖x‖² + ‖x̃‖² − 2⟨x, x̃⟩))` in place of the products `⟨x, x̃⟩`, for
/// [`pulp::Arch::dispatch`], which inlines it into a function compiled for the processor's
/// widest vectors (module doc).
struct GaussianFromProducts<'a> {
    gamma: f64,
    norms: &'a [f64],
    rows: &'a [f64],
    dim: usize,
    out: &'a mut [f64],
}

impl pulp::WithSimd for GaussianFromProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let m = self.norms.len();
        for (o, x) in self.out.chunks_exact_mut(m).zip(self.rows.chunks_exact(self.dim)) {
            let norm: f64 = x.iter().map(|v| v * v).sum();
            for (k, &c) in o.iter_mut().zip(self.norms) {
                *k = -self.gamma * (norm + c - 2.0 * *k).max(0.0);
            }
            // A loop of `exp` alone, which the compiler vectorises.
            for k in o.iter_mut() {
                *k = Real::exp(*k);
            }
        }
    }
}

/// One pass over the rows of `data`, split into contiguous ranges over `threads` threads:
/// each block of up to [`BLOCK_ROWS`] consecutive rows `range` is handed to `block` with its
/// kernel block (row-major `range.len() × m`) and the thread's f64 accumulator of `width`;
/// the threads' accumulators are added.
///
/// # Errors
/// `NonFinite` when an accumulator is not finite at the end; `block`'s errors; an allocation
/// failure.
pub fn pass<T: Real>(
    kernel_rows: &KernelRows,
    data: &Dataset<T>,
    threads: usize,
    width: usize,
    block: impl Fn(Range<usize>, &[f64], &mut [f64]) -> Result<(), Error> + Sync,
) -> Result<Vec<f64>, Error> {
    let n = data.len();
    let threads = threads.clamp(1, n.max(1));
    let chunk = n.div_ceil(threads);
    let ranges: Vec<Range<usize>> = (0..threads).map(|t| t * chunk..((t + 1) * chunk).min(n)).collect();
    let results: Vec<Result<Vec<f64>, Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .map(|range| scope.spawn(|| blocks(kernel_rows, data, range.clone(), width, &block)))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut total = zeroed(width, "a pass's sums")?;
    for result in results {
        for (t, x) in total.iter_mut().zip(result?) {
            *t += x;
        }
    }
    Ok(total)
}

/// [`pass`] over the rows `range` on this thread.
fn blocks<T: Real>(
    kernel_rows: &KernelRows,
    data: &Dataset<T>,
    range: Range<usize>,
    width: usize,
    block: &impl Fn(Range<usize>, &[f64], &mut [f64]) -> Result<(), Error>,
) -> Result<Vec<f64>, Error> {
    let (dim, m) = (kernel_rows.dim(), kernel_rows.len());
    let mut row = zeroed(dim, "a pass's row")?;
    let mut rows = zeroed(BLOCK_ROWS * dim, "a pass's rows")?;
    let mut kernel = zeroed(BLOCK_ROWS * m, "a pass's kernel block")?;
    let mut acc = zeroed(width, "a pass's sums")?;
    let mut start = range.start;
    while start < range.end {
        let end = (start + BLOCK_ROWS).min(range.end);
        let b = end - start;
        widen(data, start..end, &mut row, &mut rows);
        let kernel = kernel.get_mut(..b * m).unwrap_or_default();
        kernel_rows.block(rows.get_mut(..b * dim).unwrap_or_default(), kernel)?;
        block(start..end, kernel, &mut acc)?;
        start = end;
    }
    if acc.iter().all(|a| a.is_finite()) { Ok(acc) } else { Err(Error::NonFinite) }
}

/// The rows `range` of `data` in f64 into `rows` (row-major), through the scratch `row`.
fn widen<T: Real>(data: &Dataset<T>, range: Range<usize>, row: &mut [T], rows: &mut [f64]) {
    for (i, wide) in range.zip(rows.chunks_exact_mut(row.len())) {
        data.dense_row(i, row);
        for (w, x) in wide.iter_mut().zip(row.iter()) {
            *w = x.to_f64();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Record;
    use kestrel_core::Rng;

    /// The `exp` loop compiled for this processor's widest vectors gives the portable
    /// version's bits, over products that reach the clamp, the underflow and `exp(0)`.
    #[test]
    fn the_dispatched_gaussian_equals_the_portable_one_bit_for_bit() {
        use pulp::WithSimd;
        let (b, m, dim) = (29, 13, 3);
        let mut rng = Rng::seed_from_u64(5);
        let norms: Vec<f64> = (0..m).map(|_| rng.uniform_in(0.0, 40.0)).collect();
        let rows: Vec<f64> = (0..b * dim).map(|_| rng.uniform_in(-4.0, 4.0)).collect();
        let mut portable: Vec<f64> = (0..b * m).map(|_| rng.uniform_in(-30.0, 30.0)).collect();
        portable[0] = 1e6; // a squared distance below 0: clamped, exp(0) = 1
        portable[1] = -1e6; // exp underflows to 0
        let mut dispatched = portable.clone();
        let gamma = 0.9;
        GaussianFromProducts { gamma, norms: &norms, rows: &rows, dim, out: &mut portable }.with_simd(pulp::Scalar);
        pulp::Arch::new().dispatch(GaussianFromProducts {
            gamma,
            norms: &norms,
            rows: &rows,
            dim,
            out: &mut dispatched,
        });
        assert_eq!((portable[0], portable[1]), (1.0, 0.0));
        for (p, d) in portable.iter().zip(&dispatched) {
            assert_eq!(p.to_bits(), d.to_bits());
        }
    }

    /// Every kernel's block equals [`Kernel::column`] row by row (the Gaussian to 10⁻¹³
    /// absolute: the expansion rounds differently), in f64 and from f32 data and centres, with
    /// rows lying on centres (squared distance 0) among them.
    #[test]
    fn blocks_equal_columns() {
        let (b, m, dim) = (37, 11, 5);
        let mut rng = Rng::seed_from_u64(3);
        let centres: Vec<f64> = (0..m * dim).map(|_| rng.uniform_in(-3.0, 3.0)).collect();
        let mut rows: Vec<f64> = (0..b * dim).map(|_| rng.uniform_in(-3.0, 3.0)).collect();
        rows[..2 * dim].copy_from_slice(&centres[3 * dim..5 * dim]);
        let kernels = [
            Kernel::rbf(0.7).unwrap(),
            Kernel::laplacian(0.3).unwrap(),
            Kernel::polynomial(3, 0.2, 1.0).unwrap(),
            Kernel::linear(),
        ];
        for kernel in kernels {
            let kernel_rows = KernelRows::new(&kernel, &centres, dim).unwrap();
            assert_eq!((kernel_rows.len(), kernel_rows.dim()), (m, dim));
            let mut out = vec![0.0; b * m];
            kernel_rows.block(&mut rows.clone(), &mut out).unwrap();
            let mut column = vec![0.0; m];
            for (x, o) in rows.chunks_exact(dim).zip(out.chunks_exact(m)) {
                kernel.column(x, &centres, &mut column).unwrap();
                for (a, e) in o.iter().zip(&column) {
                    assert!((a - e).abs() <= 1e-13 * e.abs().max(1.0), "{kernel:?}: {a} against {e}");
                }
            }
            // From f32 centres: the f32 values, widened.
            let narrow: Vec<f32> = centres.iter().map(|&c| c as f32).collect();
            let kind = match kernel.kind() {
                KernelKind::Rbf { gamma } => KernelKind::Rbf { gamma: gamma as f32 },
                KernelKind::Laplacian { gamma } => KernelKind::Laplacian { gamma: gamma as f32 },
                KernelKind::Polynomial { degree, gamma, coef0 } => {
                    KernelKind::Polynomial { degree, gamma: gamma as f32, coef0: coef0 as f32 }
                }
                KernelKind::Linear => KernelKind::Linear,
            };
            let from_f32 = KernelRows::new(&Kernel::new(kind).unwrap(), &narrow, dim).unwrap();
            let wide_rows: Vec<f64> = rows.iter().map(|&x| f64::from(x as f32)).collect();
            from_f32.block(&mut wide_rows.clone(), &mut out).unwrap();
            let wide_centres: Vec<f64> = narrow.iter().map(|&c| f64::from(c)).collect();
            let wide_kernel = Kernel::new(from_f32.kernel.kind()).unwrap();
            for (x, o) in wide_rows.chunks_exact(dim).zip(out.chunks_exact(m)) {
                wide_kernel.column(x, &wide_centres, &mut column).unwrap();
                for (a, e) in o.iter().zip(&column) {
                    assert!((a - e).abs() <= 1e-13 * e.abs().max(1.0), "{kernel:?} from f32: {a} against {e}");
                }
            }
        }
    }

    /// Features in raw units far from 0 (10⁶ ± 3): the Gaussian's block still equals the
    /// columns of direct differences to 10⁻¹³ (without moving rows and centres by the
    /// centres' mean, the expansion's cancellation, ε·10¹², would be ~10⁻³ here).
    #[test]
    fn far_from_the_origin_the_gaussian_keeps_its_digits() {
        let (b, m, dim) = (20, 7, 3);
        let mut rng = Rng::seed_from_u64(5);
        let mut draw = |count: usize| -> Vec<f64> { (0..count).map(|_| 1e6 + rng.uniform_in(-3.0, 3.0)).collect() };
        let (centres, rows) = (draw(m * dim), draw(b * dim));
        let kernel = Kernel::rbf(0.2).unwrap();
        let mut out = vec![0.0; b * m];
        KernelRows::new(&kernel, &centres, dim).unwrap().block(&mut rows.clone(), &mut out).unwrap();
        let mut column = vec![0.0; m];
        for (x, o) in rows.chunks_exact(dim).zip(out.chunks_exact(m)) {
            kernel.column(x, &centres, &mut column).unwrap();
            for (a, e) in o.iter().zip(&column) {
                assert!((a - e).abs() <= 1e-13, "{a} against {e}");
            }
        }
    }

    /// A pass's sums over blocks and threads equal the sums row by row, for row counts that
    /// are and are not multiples of the block.
    #[test]
    fn a_pass_sums_every_row_once() {
        let dim = 3;
        let kernel = Kernel::rbf(0.5).unwrap();
        let mut rng = Rng::seed_from_u64(4);
        let centres: Vec<f64> = (0..4 * dim).map(|_| rng.normal()).collect();
        let kernel_rows = KernelRows::new(&kernel, &centres, dim).unwrap();
        for n in [1, BLOCK_ROWS, 3 * BLOCK_ROWS + 17] {
            let mut data = Dataset::<f64>::new();
            for i in 0..n {
                let values: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
                data.push(&Record { label: i as f64, indices: vec![0, 1, 2], values, ..Record::default() }).unwrap();
            }
            let mut expected = vec![0.0; 5];
            let (mut x, mut k) = (vec![0.0; dim], vec![0.0; 4]);
            for i in 0..n {
                data.dense_row(i, &mut x);
                kernel.column(&x, &centres, &mut k).unwrap();
                for (e, v) in expected.iter_mut().zip(&k) {
                    *e += v;
                }
                expected[4] += i as f64;
            }
            for threads in [1, 2, 5] {
                let sums = pass(&kernel_rows, &data, threads, 5, |range, block, acc| {
                    for (i, k) in range.zip(block.chunks_exact(4)) {
                        for (a, v) in acc.iter_mut().zip(k) {
                            *a += v;
                        }
                        acc[4] += i as f64;
                    }
                    Ok(())
                })
                .unwrap();
                for (s, e) in sums.iter().zip(&expected) {
                    assert!((s - e).abs() <= 1e-12 * e.abs().max(1.0), "n = {n}, {threads} threads: {s} against {e}");
                }
            }
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let kernel = Kernel::rbf(1.0).unwrap();
        assert!(matches!(KernelRows::new(&kernel, &[1.0; 6], 0), Err(Error::InvalidParam { .. })));
        assert!(matches!(KernelRows::new(&kernel, &[1.0; 7], 2), Err(Error::DimensionMismatch { .. })));
        assert!(matches!(KernelRows::new(&kernel, &[f64::NAN; 4], 2), Err(Error::NonFinite)));
        let rows = KernelRows::new(&kernel, &[1.0; 6], 2).unwrap();
        assert!(rows.block(&mut [0.0; 5], &mut [0.0; 6]).is_err());
        assert!(rows.block(&mut [0.0; 4], &mut [0.0; 5]).is_err());
    }
}
