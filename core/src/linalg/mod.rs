//! Dense linear-algebra kernels over slices with run-time dimensions.
//!
//! Matrices are row-major slices. A lower-triangular `n × n` matrix is stored either
//! [`Triangle::Full`] (`n²` scalars, row `i` at `i·n`) or [`Triangle::Packed`]
//! (`n(n+1)/2` scalars, row `i` at `i(i+1)/2`, only its `i + 1` leading entries) — the
//! packed form is what the Cholesky factors of this crate use, at half the memory.
//!
//! Every function checks its dimensions and returns [`Error::DimensionMismatch`] rather
//! than panicking; a rejected call writes nothing. Costs: `dot`/`axpy` O(n), `gemv` O(rc),
//! triangular solves O(n²), the symmetric eigendecomposition ([`symmetric_eigen`],
//! Householder tridiagonalisation and implicit QL) about `9m³` with the eigenvectors, and
//! the generalized one ([`generalized_symmetric_eigen`], `A v = λ B v` through the Cholesky
//! factor of `B` and the same eigensolver) about `12m³`. None allocates.
//!
//! The Krylov methods of seed 000 §3.3 reach a large symmetric matrix only through its
//! product with a vector, a [`LinearOperator`]: [`lanczos`] (the leading eigenpairs) and
//! [`conjugate_gradient`] / [`preconditioned_conjugate_gradient`] (`Ax = b`).

use crate::error::check_len;
use crate::{Error, Real};

mod cg;
mod eigen;
mod generalized;
mod lanczos;

pub use cg::{
    CgOutcome, CgParams, ValidCgParams, cg_workspace_len, conjugate_gradient, conjugate_gradient_observed,
    preconditioned_conjugate_gradient,
};
pub(crate) use eigen::mirror_lower;
pub use eigen::{MAX_QL_ITERATIONS, symmetric_eigen};
pub(crate) use generalized::generalized_leading_eigen;
pub use generalized::generalized_symmetric_eigen;
pub(crate) use generalized::transpose;
pub(crate) use lanczos::{DENSE_UP_TO, leading_pairs, leading_pairs_first_run_len, leading_pairs_work_len};
pub use lanczos::{LanczosOutcome, LanczosParams, ValidLanczosParams, lanczos, lanczos_workspace_len};

/// A linear map `y = A x` of `ℝⁿ`, known only through its products: a dense matrix, a
/// sparse graph Laplacian, a kernel matrix recomputed block by block, a Cholesky solve.
/// Every closure `FnMut(&[T], &mut [T]) -> Result<(), Error>` is one.
pub trait LinearOperator<T> {
    /// Writes `A x` into `y` (both of the operator's dimension).
    ///
    /// # Errors
    /// Whatever the operator's own computation returns; the Krylov methods pass it on.
    fn apply(&mut self, x: &[T], y: &mut [T]) -> Result<(), Error>;
}

impl<T, F: FnMut(&[T], &mut [T]) -> Result<(), Error>> LinearOperator<T> for F {
    fn apply(&mut self, x: &[T], y: &mut [T]) -> Result<(), Error> {
        self(x, y)
    }
}

/// Why a Krylov iteration stopped (not an error either way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// The stopping rule held (or the Krylov space became invariant: the answer is exact).
    Converged,
    /// The iteration cap came first; the result is the best of the iterations run.
    Capped,
}

/// How a lower-triangular matrix is laid out in its slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Triangle {
    /// `n × n` row-major; entries above the diagonal are ignored.
    Full,
    /// Row-major packed lower triangle: row `i` holds `i + 1` entries at `i(i+1)/2`.
    Packed,
}

impl Triangle {
    /// Scalars an `n × n` triangle needs in this layout (saturating).
    pub const fn len(self, n: usize) -> usize {
        match self {
            Triangle::Full => n.saturating_mul(n),
            Triangle::Packed => packed_len(n),
        }
    }

    /// Offset of row `i`.
    #[inline]
    fn row_start(self, n: usize, i: usize) -> usize {
        match self {
            Triangle::Full => i * n,
            Triangle::Packed => packed_len(i),
        }
    }

    /// The offsets of rows `from..n`, each from the one before (`n` further on in full
    /// storage, `i + 1` after row `i` packed): no multiplication per row.
    #[inline]
    fn row_starts(self, n: usize, from: usize) -> impl Iterator<Item = usize> {
        (from..n).scan(self.row_start(n, from), move |start, i| {
            let row = *start;
            *start += match self {
                Triangle::Full => n,
                Triangle::Packed => i + 1,
            };
            Some(row)
        })
    }
}

/// `n(n+1)/2`, the length of a packed `n × n` triangle (saturating).
pub const fn packed_len(n: usize) -> usize {
    if n.is_multiple_of(2) { (n / 2).saturating_mul(n.saturating_add(1)) } else { n.saturating_mul(n.div_ceil(2)) }
}

/// `Σ aᵢbᵢ`.
///
/// # Errors
/// `DimensionMismatch` when the lengths differ.
///
/// # Examples
/// ```
/// # use kestrel_core::linalg::dot;
/// assert_eq!(dot(&[1.0, 2.0], &[3.0, 4.0]), Ok(11.0));
/// assert!(dot(&[1.0f32], &[]).is_err());
/// ```
pub fn dot<T: Real>(a: &[T], b: &[T]) -> Result<T, Error> {
    check_len(a.len(), b.len())?;
    Ok(dot_prefix(a, b))
}

/// Independent partial sums of [`dot_prefix`] and [`dot3_prefix`].
const LANES: usize = 8;

/// `Σ aᵢbᵢ` over the common prefix (the unchecked kernel behind [`dot`]).
///
/// Eight independent partial sums, added pairwise at the end: the compiler can keep them
/// in vector registers (one chain of dependent additions cannot be vectorised), and the
/// order of operations is fixed, so every platform gets the same bits.
pub(crate) fn dot_prefix<T: Real>(a: &[T], b: &[T]) -> T {
    let n = a.len().min(b.len());
    let (a, b) = (a.get(..n).unwrap_or_default(), b.get(..n).unwrap_or_default());
    let (a_chunks, b_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let tail = a_chunks.remainder().iter().zip(b_chunks.remainder()).fold(T::ZERO, |acc, (&x, &y)| acc + x * y);
    let mut lanes = [T::ZERO; LANES];
    for (x, y) in a_chunks.zip(b_chunks) {
        for ((lane, &xi), &yi) in lanes.iter_mut().zip(x).zip(y) {
            *lane += xi * yi;
        }
    }
    add_lanes(lanes) + tail
}

/// `Σ aᵢbᵢcᵢ` over the common prefix, with the lanes of [`dot_prefix`] (the weighted
/// inner products of the kernel ridge path, `Σ_k P_ik d_k q_k`).
pub(crate) fn dot3_prefix<T: Real>(a: &[T], b: &[T], c: &[T]) -> T {
    let n = a.len().min(b.len()).min(c.len());
    let (a, b, c) = (a.get(..n).unwrap_or_default(), b.get(..n).unwrap_or_default(), c.get(..n).unwrap_or_default());
    let (a_chunks, b_chunks, c_chunks) = (a.chunks_exact(LANES), b.chunks_exact(LANES), c.chunks_exact(LANES));
    let remainders = a_chunks.remainder().iter().zip(b_chunks.remainder()).zip(c_chunks.remainder());
    let tail = remainders.fold(T::ZERO, |acc, ((&x, &y), &z)| acc + x * y * z);
    let mut lanes = [T::ZERO; LANES];
    for ((x, y), z) in a_chunks.zip(b_chunks).zip(c_chunks) {
        for (((lane, &xi), &yi), &zi) in lanes.iter_mut().zip(x).zip(y).zip(z) {
            *lane += xi * yi * zi;
        }
    }
    add_lanes(lanes) + tail
}

/// `[Σ aᵢ·b_r,ᵢ]_r` over the prefix common to `a` and every `b_r`: bit for bit `R` calls
/// of [`dot_prefix`] (the same lanes, the same order), with one load of `a` for all of
/// them (a triangle's row against the rows of several right-hand sides).
#[allow(clippy::indexing_slicing, reason = "j < n, the shortest of a and every b_r")]
pub(crate) fn dot_many_prefix<T: Real, const R: usize>(a: &[T], bs: [&[T]; R]) -> [T; R] {
    let n = bs.iter().fold(a.len(), |n, b| n.min(b.len()));
    let chunked = n - n % LANES;
    let mut lanes = [[T::ZERO; LANES]; R];
    for (start, x) in (0..chunked).step_by(LANES).zip(a[..chunked].chunks_exact(LANES)) {
        for (lanes, b) in lanes.iter_mut().zip(&bs) {
            for ((lane, &xi), &yi) in lanes.iter_mut().zip(x).zip(&b[start..start + LANES]) {
                *lane += xi * yi;
            }
        }
    }
    core::array::from_fn(|r| {
        let tail = a[chunked..n].iter().zip(&bs[r][chunked..n]).fold(T::ZERO, |acc, (&x, &y)| acc + x * y);
        add_lanes(lanes[r]) + tail
    })
}

/// The partial sums of [`dot_prefix`] added pairwise, in a fixed order.
fn add_lanes<T: Real>(lanes: [T; LANES]) -> T {
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lanes;
    ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))
}

/// `‖a − b‖²`.
///
/// # Errors
/// `DimensionMismatch` when the lengths differ.
pub fn squared_distance<T: Real>(a: &[T], b: &[T]) -> Result<T, Error> {
    check_len(a.len(), b.len())?;
    Ok(squared_distance_prefix(a, b))
}

/// `‖a − b‖²` over the common prefix (the unchecked kernel behind [`squared_distance`]).
pub(crate) fn squared_distance_prefix<T: Real>(a: &[T], b: &[T]) -> T {
    a.iter().zip(b).fold(T::ZERO, |acc, (&x, &y)| {
        let d = x - y;
        acc + d * d
    })
}

/// `y ← y + αx`.
///
/// # Errors
/// `DimensionMismatch` when the lengths differ.
pub fn axpy<T: Real>(alpha: T, x: &[T], y: &mut [T]) -> Result<(), Error> {
    check_len(x.len(), y.len())?;
    axpy_prefix(alpha, x, y);
    Ok(())
}

pub(crate) fn axpy_prefix<T: Real>(alpha: T, x: &[T], y: &mut [T]) {
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi += alpha * xi;
    }
}

/// Rows a pass over a Gram or Hessian matrix serves ([`axpy_many_prefix`],
/// [`axpy_into_many_prefix`]): four, so that each entry is loaded and stored once for four
/// rows' terms while the sums keep their row order.
pub(crate) const ROWS_PER_PASS: usize = 4;

/// `y ← y + Σ_r α_r·x_r` over the leading `min(|y|, |x_r|)` entries, each entry's terms
/// added in the order of `r`: bit for bit `R` calls of [`axpy_prefix`], with one load and
/// one store of `y` instead of `R` (the blocks of rows of a Gram or Hessian matrix).
#[allow(clippy::indexing_slicing, reason = "j < len, the shortest of y and every x_r")]
pub(crate) fn axpy_many_prefix<T: Real, const R: usize>(alphas: [T; R], xs: [&[T]; R], y: &mut [T]) {
    let len = xs.iter().fold(y.len(), |len, x| len.min(x.len()));
    for (j, yj) in y[..len].iter_mut().enumerate() {
        *yj = alphas.iter().zip(&xs).fold(*yj, |sum, (&alpha, x)| sum + alpha * x[j]);
    }
}

/// `y_r ← y_r + α_r·x` for each `r`, over the leading `min(|x|, |y_r|)` entries: bit for
/// bit `R` calls of [`axpy_prefix`], with one load of `x` for all of them.
#[allow(clippy::indexing_slicing, reason = "j < len, the shortest of x and every y_r")]
pub(crate) fn axpy_into_many_prefix<T: Real, const R: usize>(alphas: [T; R], x: &[T], ys: &mut [&mut [T]; R]) {
    let len = ys.iter().fold(x.len(), |len, y| len.min(y.len()));
    for (j, &xj) in x[..len].iter().enumerate() {
        for (y, &alpha) in ys.iter_mut().zip(&alphas) {
            y[j] += alpha * xj;
        }
    }
}

/// `y ← A x` for a row-major `rows × cols` matrix `A`.
///
/// # Errors
/// `DimensionMismatch` when `a.len() ≠ rows·cols`, `x.len() ≠ cols` or `y.len() ≠ rows`.
///
/// # Examples
/// ```
/// # use kestrel_core::linalg::gemv;
/// let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
/// let mut y = [0.0; 2];
/// gemv(&a, 2, 3, &[1.0, 0.0, -1.0], &mut y)?;
/// assert_eq!(y, [-2.0, -2.0]);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn gemv<T: Real>(a: &[T], rows: usize, cols: usize, x: &[T], y: &mut [T]) -> Result<(), Error> {
    check_len(rows.saturating_mul(cols), a.len())?;
    check_len(cols, x.len())?;
    check_len(rows, y.len())?;
    if cols == 0 {
        y.fill(T::ZERO);
        return Ok(());
    }
    for (yi, row) in y.iter_mut().zip(a.chunks_exact(cols)) {
        *yi = dot_prefix(row, x);
    }
    Ok(())
}

/// Checks the triangle's storage and right-hand side, and that its diagonal is usable.
#[allow(
    clippy::indexing_slicing,
    reason = "l.len() ≥ layout.len(n) is checked first, and row i of the triangle ends within it"
)]
pub(crate) fn check_triangle<T: Real>(l: &[T], n: usize, layout: Triangle, b: &[T]) -> Result<(), Error> {
    let needed = layout.len(n);
    if l.len() < needed {
        return Err(Error::CapacityExceeded { needed, capacity: l.len() });
    }
    check_len(n, b.len())?;
    for (i, start) in layout.row_starts(n, 0).enumerate() {
        let d = l[start + i];
        if d == T::ZERO || !d.is_finite() {
            return Err(Error::Singular { pivot: i });
        }
    }
    Ok(())
}

/// Solves `L x = b` in place (forward substitution); `b` becomes `x`.
///
/// # Errors
/// `CapacityExceeded` when `l` is shorter than the layout needs, `DimensionMismatch` when
/// `b.len() ≠ n`, `Singular` when a diagonal entry is zero or non-finite (`b` untouched).
///
/// # Examples
/// ```
/// # use kestrel_core::linalg::{solve_lower, Triangle};
/// let l = [2.0, 1.0, 4.0]; // packed [[2, 0], [1, 4]]
/// let mut b = [2.0, 9.0];
/// solve_lower(&l, 2, Triangle::Packed, &mut b)?;
/// assert_eq!(b, [1.0, 2.0]);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[allow(clippy::indexing_slicing, reason = "check_triangle verified l.len() ≥ layout.len(n) and b.len() = n")]
pub fn solve_lower<T: Real>(l: &[T], n: usize, layout: Triangle, b: &mut [T]) -> Result<(), Error> {
    solve_lower_from(l, n, layout, b, 0)
}

/// [`solve_lower`] for a factor with a positive, finite diagonal and finite entries (a
/// Cholesky factor's) and a `b` whose entries before `first` are zeros (a unit vector's
/// solve starts at its one), which it skips. The result has the same bits as
/// [`solve_lower`]'s: a zero `b_j` ahead of `first` stays itself, and each row's products
/// with those zeros, which leave the [`dot_prefix`] lanes at `+0`, are skipped in whole
/// chunks of [`LANES`], so the sums keep their lanes and their order.
///
/// # Errors
/// As [`solve_lower`].
pub(crate) fn solve_lower_from<T: Real>(
    l: &[T],
    n: usize,
    layout: Triangle,
    b: &mut [T],
    first: usize,
) -> Result<(), Error> {
    check_triangle(l, n, layout, b)?;
    forward_substitution(l, n, layout, b, first.min(n));
    Ok(())
}

/// The number of leading zeros of `v`.
pub(crate) fn leading_zeros<T: Real>(v: &[T]) -> usize {
    v.iter().position(|&x| x != T::ZERO).unwrap_or(v.len())
}

/// Rows `first..n` of the forward substitution, their products with `b[..first]` (zeros)
/// skipped up to the last multiple of [`LANES`]; the caller has checked the triangle.
#[allow(clippy::indexing_slicing, reason = "check_triangle verified l.len() ≥ layout.len(n) and b.len() = n")]
// Inlined: out of line the Cortex-M4F's downdate took 1.2 % more instructions (the loop
// then does not know its callers' shapes).
#[inline(always)]
fn forward_substitution<T: Real>(l: &[T], n: usize, layout: Triangle, b: &mut [T], first: usize) {
    let skip = first - first % LANES;
    for (i, start) in (first..n).zip(layout.row_starts(n, first)) {
        let row = &l[start..][..=i];
        let (solved, rest) = b.split_at_mut(i);
        rest[0] = (rest[0] - dot_prefix(&row[skip..i], &solved[skip..])) / row[i];
    }
}

/// Solves `Lᵀ x = b` in place (back substitution with the transpose); `b` becomes `x`.
///
/// # Errors
/// As [`solve_lower`].
#[allow(clippy::indexing_slicing, reason = "check_triangle verified l.len() ≥ layout.len(n) and b.len() = n")]
pub fn solve_lower_transposed<T: Real>(l: &[T], n: usize, layout: Triangle, b: &mut [T]) -> Result<(), Error> {
    check_triangle(l, n, layout, b)?;
    backward_substitution(l, n, layout, b);
    Ok(())
}

/// [`solve_lower_from`] for `R` right-hand sides at once, each row of the triangle loaded
/// once for all of them: bit for bit `R` calls (a right-hand side with more leading
/// zeros than `first` gets exact zeros for them and `+0` lane terms, as its own call
/// would). The caller has checked the triangle against every `b_r` (of length `n`).
#[allow(clippy::indexing_slicing, reason = "the caller checked l.len() ≥ layout.len(n) and every b_r.len() = n")]
pub(crate) fn forward_substitution_many<T: Real, const R: usize>(
    l: &[T],
    n: usize,
    layout: Triangle,
    bs: &mut [&mut [T]; R],
    first: usize,
) {
    let first = first.min(n);
    let skip = first - first % LANES;
    for (i, start) in (first..n).zip(layout.row_starts(n, first)) {
        let row = &l[start..][..=i];
        let dots: [T; R] = dot_many_prefix(&row[skip..i], core::array::from_fn(|r| &bs[r][skip..i]));
        for (b, dot) in bs.iter_mut().zip(dots) {
            b[i] = (b[i] - dot) / row[i];
        }
    }
}

/// [`solve_lower`] then [`solve_lower_transposed`] (`LLᵀx = b`), the triangle checked
/// once, the forward pass skipping `b`'s first `first` entries, which are zeros (as
/// [`solve_lower_from`] does, for a Cholesky factor's triangle).
///
/// # Errors
/// As [`solve_lower`].
pub(crate) fn solve_both_from<T: Real>(
    l: &[T],
    n: usize,
    layout: Triangle,
    b: &mut [T],
    first: usize,
) -> Result<(), Error> {
    solve_lower_from(l, n, layout, b, first)?;
    backward_substitution(l, n, layout, b);
    Ok(())
}

/// The back substitution of [`solve_lower_transposed`]; the caller has checked the triangle.
#[allow(clippy::indexing_slicing, reason = "check_triangle verified l.len() ≥ layout.len(n) and b.len() = n")]
fn backward_substitution<T: Real>(l: &[T], n: usize, layout: Triangle, b: &mut [T]) {
    for i in (0..n).rev() {
        let row = &l[layout.row_start(n, i)..][..=i];
        let (head, rest) = b.split_at_mut(i);
        rest[0] /= row[i];
        axpy_prefix(-rest[0], &row[..i], head);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_handles_every_tail_length() {
        for n in 0..40usize {
            let a: [f64; 40] = core::array::from_fn(|i| i as f64 + 1.0);
            let b: [f64; 40] = core::array::from_fn(|i| if i % 2 == 0 { 1.0 } else { -2.0 });
            let expected: f64 = (0..n).map(|i| a[i] * b[i]).sum();
            assert_eq!(dot(&a[..n], &b[..n]), Ok(expected));
            assert_eq!(dot_prefix(&a[..n], &b[..n + 1]), expected);
        }
    }

    /// The many-row axpys give the bits of one `axpy_prefix` after another, over the
    /// shortest slice, whatever the lengths.
    #[test]
    fn many_row_axpys_are_successive_axpys() {
        let mut rng = crate::Rng::seed_from_u64(3);
        let mut draw = |n: usize| -> [f32; 11] { core::array::from_fn(|i| if i < n { rng.normal() } else { 0.0 }) };
        for n in 0..11 {
            let (x0, x1, x2, y0, y1, y2) = (draw(n), draw(n), draw(n), draw(11), draw(11), draw(11));
            let alphas = [0.3f32, -1.7, 2.9];
            let mut many = y0;
            axpy_many_prefix(alphas, [&x0[..n], &x1[..n], &x2[..n]], &mut many);
            let mut successive = y0;
            for (alpha, x) in alphas.into_iter().zip([&x0[..n], &x1[..n], &x2[..n]]) {
                axpy_prefix(alpha, x, &mut successive);
            }
            assert_eq!(many.map(f32::to_bits), successive.map(f32::to_bits), "n = {n}");
            let (mut a, mut b, mut c) = (y0, y1, y2);
            axpy_into_many_prefix(alphas, &x0[..n], &mut [&mut a[..], &mut b[..n], &mut c[..]]);
            let (mut a2, mut b2, mut c2) = (y0, y1, y2);
            for (alpha, y) in alphas.into_iter().zip([&mut a2[..], &mut b2[..n], &mut c2[..]]) {
                axpy_prefix(alpha, &x0[..n], y);
            }
            assert_eq!([a, b, c].map(|y| y.map(f32::to_bits)), [a2, b2, c2].map(|y| y.map(f32::to_bits)), "n = {n}");
        }
    }

    #[test]
    fn packed_len_matches_formula() {
        for n in 0..50usize {
            assert_eq!(packed_len(n), n * (n + 1) / 2);
        }
        assert_eq!(packed_len(usize::MAX), usize::MAX);
    }

    #[test]
    fn full_and_packed_solves_agree() {
        // L = [[2,0,0],[1,3,0],[-1,2,4]]
        let full = [2.0, 9.0, 9.0, 1.0, 3.0, 9.0, -1.0, 2.0, 4.0];
        let packed = [2.0, 1.0, 3.0, -1.0, 2.0, 4.0];
        let x = [1.0, -2.0, 0.5];
        // b = L x
        let b = [2.0, 1.0 - 6.0, -1.0 - 4.0 + 2.0];
        for (l, layout) in [(&full[..], Triangle::Full), (&packed[..], Triangle::Packed)] {
            let mut y = b;
            solve_lower(l, 3, layout, &mut y).unwrap();
            assert_eq!(y, x);
            // Lᵀ x = c
            let c = [2.0 * 1.0 + 1.0 * -2.0 - 0.5, 3.0 * -2.0 + 2.0 * 0.5, 4.0 * 0.5];
            let mut z = c;
            solve_lower_transposed(l, 3, layout, &mut z).unwrap();
            assert_eq!(z, x);
        }
    }

    #[test]
    fn errors_leave_inputs_untouched() {
        let l = [1.0, 2.0, 0.0];
        let mut b = [1.0, 1.0];
        assert_eq!(solve_lower(&l, 2, Triangle::Packed, &mut b), Err(Error::Singular { pivot: 1 }));
        assert_eq!(b, [1.0, 1.0]);
        assert_eq!(
            solve_lower(&l, 3, Triangle::Packed, &mut b),
            Err(Error::CapacityExceeded { needed: 6, capacity: 3 })
        );
        let mut y = [0.0; 2];
        assert_eq!(gemv(&l, 2, 2, &b, &mut y), Err(Error::DimensionMismatch { expected: 4, got: 3 }));
        assert!(axpy(1.0, &[1.0], &mut y).is_err());
        assert_eq!(y, [0.0, 0.0]);
        assert!(squared_distance(&[1.0], &[1.0, 2.0]).is_err());
    }
}
