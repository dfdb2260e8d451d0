//! Kernel principal component analysis: exact (seed 002 §5.1) for small `n`, reduced
//! (seed 003 §4.1) through the reduced kernel `K(A, Ã)` for large `n`, and the
//! [`KernelProjection`] both produce — `k` nonlinear features of a row, computed without
//! heap on a host or a device.
//!
//! **Exact** ([`KernelProjection::fit_exact_in`]). The kernel matrix `K` of the `n` rows is
//! centred in feature space, `K_C = K − K1_{1/n} − 1_{1/n}K + 1_{1/n}K1_{1/n}` (seed 002
//! eq. 55); its leading eigenpairs `K_C α = λα` (eq. 73, 75; unit `α`) are rescaled to
//! `α/√λ`, so that the direction `w = X_C α/√λ` has `‖w‖ = 1` in feature space (seed 002,
//! after eq. 75). A row `x` projects onto `w` through its centred kernel vector (eq. 57):
//! `y = (α/√λ)ᵀ k_C(x)`, with `k_C(x)_j = k(x, x_j) − k̄_j − (mean_i k(x, x_i) − K̄)`,
//! `k̄ = K1/n` the column means and `K̄` the grand mean. The last term multiplies `Σ_j α_j`,
//! which is 0 — `K_C 1 = 0`, so an eigenvector of a positive eigenvalue is orthogonal to
//! `1` — hence **the convention for new rows**: `y = (α/√λ)ᵀ(k(x) − k̄)`, `n` kernel
//! evaluations and no other statistic. The training rows project to `√λ·α` (eq. 75).
//!
//! **Reduced** ([`KernelProjection::fit_reduced_in`]). With a reduced set `Ã` of `m` rows,
//! each row is represented by `z_i = K(Ã, x_i) ∈ ℝᵐ`, centred by `k̃ = mean_i z_i`, and the
//! covariance is `Σ = (1/n) Σ_i (z_i − k̃)(z_i − k̃)ᵀ` (seed 003 eq. 37). Seed 003 eq. 36
//! takes the plain eigenvectors of `Σ`; we take those of the pencil
//!
//! `Σ α = λ K(Ã, Ã) α`,  `αᵀ K(Ã, Ã) α = 1`,
//!
//! i.e. seed 002's feature-space normalisation `‖w‖ = 1` of `w = Σ_j α_j φ(ã_j)`, which
//! eq. 36 leaves out. This is the Nyström change of variables of seed 003 eq. 10-11
//! (`α = L⁻ᵀv`, `LLᵀ = K(Ã, Ã)`: plain PCA of the features `L⁻¹z`), and it is what makes
//! reduced KPCA **converge to KPCA**: with `Ã = A`, `Σα = λKα` is `H K α = nλα`, the
//! exact problem with the same projections `y = αᵀ(K(Ã, x) − k̃)` and variances. (The plain
//! eigenvectors of eq. 36 at `Ã = A` are those of `K H K`, another method.) A ridge
//! `δ·tr K(Ã, Ã)/m` with `δ = √ε` is added to `K(Ã, Ã)` so that near-duplicate centres do
//! not break the Cholesky factor; it moves the leading components by `O(δ)`.
//!
//! Both fits store the same model: centres `c_j` (the rows, or `Ã`), coefficients `α_cj`,
//! offsets `o_c = α_cᵀk̄`, and the eigenvalues — for KPCA the variances `λ_c/n` of the
//! components on the training rows (decreasing), so `y_c(x) = Σ_j α_cj k(x, c_j) − o_c`. Each component's sign is
//! fixed so that its largest coefficient in magnitude is positive.
//!
//! **Cost.** Exact: `n²` kernel evaluations, and `K_C`'s leading eigenpairs: up to 200
//! rows by its whole decomposition (`≈ 9n³`), beyond by Lanczos (`O(s·n²)` for `s` steps,
//! by `linalg::lanczos`); work storage [`KernelProjection::exact_work_len`]`(n, k)`:
//! `2n² + 2n` scalars up to 200 rows, `n²` and `O(n·k)` beyond. Reduced: `2nm`
//! kernel evaluations (two passes: means, then centred outer products, for accuracy in
//! f32), `n·m²/2` for `Σ` (its lower triangle), `≈ 12m³` for the pencil up to 200 centres, beyond `O(s·m²)` for
//! its `k` leading pairs by Lanczos (`s` steps; the whole pencil when it does not converge); work
//! [`KernelProjection::reduced_work_len`]`(m) = 3m² + 3m + m(m+1)/2 + 2m` scalars —
//! independent of `n`. **Memory** of the model: [`KernelProjection::scalars_len`]`(d, m, k)
//! = m·d + k·m + 2k` scalars; projecting a row needs none beyond its `k` outputs.
//!
//! A **linear** projection (LPP's, [`crate::spectral::lpp`]) is stored in the same model:
//! the linear kernel with the `d` unit vectors as centres, so that `y_c(x) = φ_cᵀx − o_c`.
//!
//! **Supervised** projections on the same reduced kernel — KSIR and the kernel Fisher
//! discriminant — are [`KernelProjection::fit_discriminant_in`] (module `discriminant`);
//! reduced **KCCA** of two views, one projection per view, is
//! [`KernelProjection::fit_kcca_in`] (module `kcca`).
//!
//! Payload (postcard, model kind [`ModelKind::KernelPca`]): `((dim, centres m, components
//! k, kernel), centres: [T; m·d], coefficients: [T; k·m], offsets: [T; k], eigenvalues: [T; k])`.

mod discriminant;
mod kcca;

pub use discriminant::{Criterion, DEFAULT_MU};
pub use kcca::View;

use serde::de::DeserializeSeed;

use crate::cholesky::Cholesky;
use crate::error::check_len;
use crate::kernel::KernelKind;
use crate::linalg::{
    DENSE_UP_TO, gemv, generalized_leading_eigen, leading_pairs, leading_pairs_work_len, mirror_lower, symmetric_eigen,
    transpose,
};
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed, u32_field};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// A kernel principal-component projection `y_c(x) = Σ_j α_cj k(x, c_j) − o_c`,
/// `c = 0..k`, in storage `S`.
///
/// # Examples
/// ```
/// use kestrel_core::{Kernel, kpca::KernelProjection};
/// // Six points on a circle: two components, the training rows at √λ·α.
/// let rows: Vec<f64> = (0..6).flat_map(|i| {
///     let t = i as f64 * std::f64::consts::PI / 3.0;
///     [t.cos(), t.sin()]
/// }).collect();
/// let mut work = vec![0.0; KernelProjection::exact_work_len(6, 2)];
/// let storage = vec![0.0; KernelProjection::scalars_len(2, 6, 2)];
/// let kpca = KernelProjection::fit_exact_in(storage, &mut work, Kernel::rbf(0.5)?, &rows, 2, 2)?;
/// let mut y = [0.0; 2];
/// kpca.project(&rows[..2], &mut y)?;
/// // The two leading variances are equal (the circle's symmetry) and y has that scale.
/// let v = kpca.eigenvalues();
/// assert!((v[0] - v[1]).abs() < 1e-12 && (y[0] * y[0] + y[1] * y[1] - 2.0 * v[0]).abs() < 1e-12);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KernelProjection<T, S> {
    storage: S,
    kernel: Kernel<T>,
    dim: usize,
    centres: usize,
    components: usize,
}

/// The regions of a model's storage.
struct Parts<'a, T> {
    centres: &'a mut [T],
    coefficients: &'a mut [T],
    offsets: &'a mut [T],
    eigenvalues: &'a mut [T],
}

impl KernelProjection<(), ()> {
    /// Scalars of a model of `centres` centres of dimension `dim` and `components`
    /// components: `m·d + k·m + 2k` (saturating).
    pub const fn scalars_len(dim: usize, centres: usize, components: usize) -> usize {
        let coefficients = components.saturating_mul(centres.saturating_add(2));
        centres.saturating_mul(dim).saturating_add(coefficients)
    }

    /// Work scalars of [`fit_exact_in`](KernelProjection::fit_exact_in) on `n` rows keeping
    /// `components` (saturating): up to 200 rows `2n² + 2n` (the centred kernel matrix,
    /// its eigenvectors, its eigenvalues, the kernel's column means); beyond,
    /// `n² + n` and what Lanczos needs for the `k` leading pairs — `k + (k + 1)·n` and its
    /// workspace of `s = min(n, 4·max(4k, 40))` steps, `n(s + 1) + 2s² + 3s` — or the
    /// former if smaller. At 10⁴ rows and 2 components: `1.0·10⁸ + 1.6·10⁶` scalars
    /// against `2.0·10⁸`.
    pub const fn exact_work_len(n: usize, components: usize) -> usize {
        let dense = n.saturating_mul(n).saturating_add(n).saturating_mul(2);
        if n <= DENSE_UP_TO {
            return dense;
        }
        let work = n.saturating_mul(n).saturating_add(n).saturating_add(leading_pairs_work_len(n, components));
        if work < dense { work } else { dense }
    }

    /// Work scalars of [`fit_reduced_in`](KernelProjection::fit_reduced_in) with `m`
    /// centres: `Σ`, `K(Ã, Ã)` and the eigenvectors (`3m²`), the eigenvalues, a kernel
    /// row and the mean (`3m`), and the Cholesky factor of `K(Ã, Ã)`.
    pub const fn reduced_work_len(m: usize) -> usize {
        let squares = m.saturating_mul(m).saturating_mul(3);
        squares.saturating_add(m.saturating_mul(3)).saturating_add(Cholesky::scalars_len(m))
    }
}

impl<T: Real, S: Storage<T>> KernelProjection<T, S> {
    /// Exact kernel PCA of the `n` rows `rows` (row-major `n × dim`), keeping `components`
    /// components; `work` holds at least
    /// [`KernelProjection::exact_work_len`]`(n, components)` scalars.
    ///
    /// # Errors
    /// `InvalidParam` naming `dim` (0), `rows` (fewer than 2, or not a multiple of `dim`)
    /// or `components` (0, or more than the positive eigenvalues of `K_C`);
    /// `NonFinite` for NaN/∞ in `rows` or the kernel matrix; `CapacityExceeded` when
    /// `storage` or `work` is short; `NotConverged` from the eigensolver, or when Lanczos
    /// did not converge in the steps `work` holds and it cannot hold the whole
    /// decomposition (`2n² + 2n`) instead.
    pub fn fit_exact_in(
        storage: S,
        work: &mut [T],
        kernel: Kernel<T>,
        rows: &[T],
        dim: usize,
        components: usize,
    ) -> Result<Self, Error> {
        let n = row_count(rows, dim)?;
        check_capacity(KernelProjection::exact_work_len(n, components), work.len())?;
        let mut model = Self::new_in(storage, kernel, dim, n, components)?;
        let (matrix, rest) = work.split_at_mut(n * n);
        let (means, rest) = rest.split_at_mut(n);
        model.parts_mut().centres.copy_from_slice(rows);
        centred_kernel_matrix(&kernel, rows, dim, matrix, means)?;
        // `None` when Lanczos converged, else the most steps it ran (0: not tried).
        let mut operator = |x: &[T], y: &mut [T]| gemv(matrix, n, n, x, y);
        let unconverged = if n > DENSE_UP_TO { leading_pairs(&mut operator, n, components, rest)? } else { Some(0) };
        let (values, vectors): (&[T], &[T]) = if let Some(steps) = unconverged {
            if rest.len() < n * n + n {
                return Err(Error::NotConverged { iterations: steps });
            }
            let (vectors, rest) = rest.split_at_mut(n * n);
            let values = rest.get_mut(..n).unwrap_or_default();
            symmetric_eigen(matrix, n, values, vectors)?;
            // Eigenvectors in columns, as `symmetric_eigen` writes them, into rows, as
            // `lanczos` does.
            transpose(vectors, n);
            (values, vectors)
        } else {
            let (values, vectors) = rest.split_at_checked(components).unwrap_or_default();
            (values, vectors.get(..components * n).unwrap_or_default())
        };
        let largest = values.first().copied().unwrap_or(T::ZERO);
        let parts = model.parts_mut();
        for ((alpha, variance), (&lambda, vector)) in parts
            .coefficients
            .chunks_exact_mut(n)
            .zip(parts.eigenvalues.iter_mut())
            .zip(values.iter().zip(vectors.chunks_exact(n)))
        {
            if lambda <= T::EPSILON * T::from_f64(n as f64) * largest {
                return Err(Error::InvalidParam { name: "components" });
            }
            let scale = T::ONE / lambda.sqrt();
            for (a, &v) in alpha.iter_mut().zip(vector) {
                *a = v * scale;
            }
            *variance = lambda / T::from_f64(n as f64);
        }
        model.finish(means)?;
        Ok(model)
    }

    /// Reduced kernel PCA of the rows `rows` through the `m` centres `centres` (both
    /// row-major with `dim` columns), keeping `components ≤ m` components; `work` holds at
    /// least [`KernelProjection::reduced_work_len`]`(m)` scalars. `centres` may be any
    /// reduced set (a sample of the rows, k-means centres, …).
    ///
    /// # Errors
    /// As [`fit_exact_in`](Self::fit_exact_in); `InvalidParam { name: "centres" }` for
    /// an empty or misshapen reduced set; `NotPositiveDefinite` when `K(Ã, Ã)` is singular
    /// even with its ridge.
    pub fn fit_reduced_in(
        storage: S,
        work: &mut [T],
        kernel: Kernel<T>,
        rows: &[T],
        centres: &[T],
        dim: usize,
        components: usize,
    ) -> Result<Self, Error> {
        let n = row_count(rows, dim)?;
        let m = row_count(centres, dim).map_err(|_| Error::InvalidParam { name: "centres" })?;
        check_capacity(KernelProjection::reduced_work_len(m), work.len())?;
        if components > m {
            return Err(Error::InvalidParam { name: "components" });
        }
        let mut model = Self::new_in(storage, kernel, dim, m, components)?;
        let (covariance, rest) = work.split_at_mut(m * m);
        let (gram, rest) = rest.split_at_mut(m * m);
        let (vectors, rest) = rest.split_at_mut(m * m);
        let (values, rest) = rest.split_at_mut(m);
        let (z, rest) = rest.split_at_mut(m);
        let (mean, factor) = rest.split_at_mut(m);
        reduced_moments(&kernel, rows, centres, n, covariance, vectors, z, mean)?;
        reduced_gram(&kernel, centres, m, gram)?;
        generalized_leading_eigen(covariance, gram, m, components, values, vectors, factor)?;
        let parts = model.parts_mut();
        parts.centres.copy_from_slice(centres);
        for (c, (alpha, variance)) in
            parts.coefficients.chunks_exact_mut(m).zip(parts.eigenvalues.iter_mut()).enumerate()
        {
            for (a, row) in alpha.iter_mut().zip(vectors.chunks_exact(m)) {
                *a = row.get(c).copied().unwrap_or(T::ZERO);
            }
            *variance = values.get(c).copied().unwrap_or(T::ZERO).max_of(T::ZERO);
        }
        model.finish(mean)?;
        Ok(model)
    }

    /// The linear projection `y_c(x) = φ_cᵀ(x − x̄)` as a model of this kind (what
    /// [`lpp`](crate::spectral::lpp) fits): the linear kernel, the `d` unit vectors as
    /// centres, `α_c = φ_c` (`directions`, row-major `k × d`), offsets `φ_cᵀx̄` from the
    /// `d` values of `mean`, and the `k` `eigenvalues` as given. Each direction's sign is
    /// fixed as in the kernel fits (its largest entry in magnitude positive).
    ///
    /// # Errors
    /// `InvalidParam` for an empty `mean` (`dim`), no eigenvalues or more than `d`
    /// (`components`); `DimensionMismatch` when `directions` is not `k·d` long;
    /// `CapacityExceeded` when `storage` is shorter than [`KernelProjection::scalars_len`]`(d, d, k)`;
    /// `NonFinite` for an offset that overflows.
    pub(crate) fn linear_in(storage: S, directions: &[T], mean: &[T], eigenvalues: &[T]) -> Result<Self, Error> {
        let (dim, components) = (mean.len(), eigenvalues.len());
        check_len(components.saturating_mul(dim), directions.len())?;
        let mut model = Self::new_in(storage, Kernel::linear(), dim, dim, components)?;
        let parts = model.parts_mut();
        parts.centres.fill(T::ZERO);
        for (j, unit) in parts.centres.chunks_exact_mut(dim).enumerate() {
            if let Some(one) = unit.get_mut(j) {
                *one = T::ONE;
            }
        }
        parts.coefficients.copy_from_slice(directions);
        parts.eigenvalues.copy_from_slice(eigenvalues);
        model.finish(mean)?;
        Ok(model)
    }

    /// A zero model of the given shape.
    fn new_in(storage: S, kernel: Kernel<T>, dim: usize, centres: usize, components: usize) -> Result<Self, Error> {
        check_shape(dim, centres, components)?;
        check_capacity(KernelProjection::scalars_len(dim, centres, components), storage.as_ref().len())?;
        Ok(KernelProjection { storage, kernel, dim, centres, components })
    }

    /// Fixes each component's sign and sets its offset `o_c = α_cᵀ k̄` from the kernel
    /// means `means` (`m` values).
    fn finish(&mut self, means: &[T]) -> Result<(), Error> {
        let m = self.centres.max(1);
        for alpha in self.parts_mut().coefficients.chunks_exact_mut(m) {
            let largest = alpha.iter().fold(T::ZERO, |best, &a| if a.abs() > best.abs() { a } else { best });
            if largest < T::ZERO {
                alpha.iter_mut().for_each(|a| *a = -*a);
            }
        }
        self.set_offsets(means)
    }

    /// Sets each component's offset `o_c = α_cᵀ k̄` from the kernel means `means` (`m`
    /// values), keeping the signs.
    fn set_offsets(&mut self, means: &[T]) -> Result<(), Error> {
        let parts = self.parts_mut();
        for (alpha, offset) in parts.coefficients.chunks_exact(means.len().max(1)).zip(parts.offsets.iter_mut()) {
            *offset = finite(alpha.iter().zip(means).fold(T::ZERO, |acc, (&a, &k)| acc + a * k))?;
        }
        Ok(())
    }

    /// The regions of the storage the constructor checked.
    fn parts_mut(&mut self) -> Parts<'_, T> {
        split_mut(self.storage.as_mut(), self.dim, self.centres, self.components)
    }

    /// `(centres, coefficients, offsets, eigenvalues)`.
    fn parts(&self) -> (&[T], &[T], &[T], &[T]) {
        let (d, m, k) = (self.dim, self.centres, self.components);
        let values = self.storage.as_ref().get(..KernelProjection::scalars_len(d, m, k)).unwrap_or_default();
        let (centres, rest) = values.split_at_checked(m * d).unwrap_or_default();
        let (coefficients, rest) = rest.split_at_checked(k * m).unwrap_or_default();
        let (offsets, eigenvalues) = rest.split_at_checked(k).unwrap_or_default();
        (centres, coefficients, offsets, eigenvalues)
    }

    /// Writes the `k` components `y_c(x)` of the row `x` into `out`. O(m·(d + k)), no scratch.
    ///
    /// # Errors
    /// `DimensionMismatch` for `x` or `out` of the wrong length; `NonFinite` for NaN/∞ in
    /// `x` or an overflowing projection (then `out` may hold partial sums).
    pub fn project(&self, x: &[T], out: &mut [T]) -> Result<(), Error> {
        check_len(self.dim, x.len())?;
        check_len(self.components, out.len())?;
        check_finite(x)?;
        let (centres, coefficients, offsets, _) = self.parts();
        for (o, &offset) in out.iter_mut().zip(offsets) {
            *o = -offset;
        }
        for (j, centre) in centres.chunks_exact(self.dim).enumerate() {
            let k = self.kernel.eval_prefix(x, centre);
            for (o, alpha) in out.iter_mut().zip(coefficients.chunks_exact(self.centres)) {
                *o += alpha.get(j).copied().unwrap_or(T::ZERO) * k;
            }
        }
        check_finite(out)
    }

    /// The eigenvalue of each component: for KPCA its variance on the training rows
    /// (`λ_c/n`); for KSIR and KFD its between-slice variance (`αᵀΣ_Bα`); for KCCA the
    /// regularised canonical correlation `ρ_c` of the pair — all decreasing; for LPP the
    /// locality `μ_c` of the direction (increasing: the smallest is the most local).
    pub fn eigenvalues(&self) -> &[T] {
        self.parts().3
    }

    /// The centres `c_j` (row-major `m × d`).
    pub fn centres(&self) -> &[T] {
        self.parts().0
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel<T> {
        &self.kernel
    }

    /// Input dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of components `k`.
    pub fn components(&self) -> usize {
        self.components
    }

    /// Writes the model file bytes into `out`; returns their length.
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small; `InvalidParam` for a shape beyond `u32`.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        model::encode(ModelKind::KernelPca, ScalarKind::of::<T>(), &self.payload()?, out)
    }

    /// Bytes [`encode`](Self::encode) writes (`usize::MAX` when the shape does not fit).
    pub fn encoded_len(&self) -> usize {
        self.payload().and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    /// The payload: `((dim, centres, components, kernel), centres, coefficients, offsets,
    /// eigenvalues)`.
    #[allow(clippy::type_complexity, reason = "the payload tuple is the file format, spelled out once")]
    fn payload(&self) -> Result<((u32, u32, u32, KernelKind<T>), &[T], &[T], &[T], &[T]), Error> {
        let (centres, coefficients, offsets, eigenvalues) = self.parts();
        let shape = (
            u32_field(self.dim, "dim")?,
            u32_field(self.centres, "centres")?,
            u32_field(self.components, "components")?,
            self.kernel.kind(),
        );
        Ok((shape, centres, coefficients, offsets, eigenvalues))
    }

    /// Decodes the payload of a parsed envelope into `storage`. A model fitted on
    /// standardised rows (`kestrel transform --scale`) carries a scaler section: decode it
    /// with [`Scaler::from_envelope_in`](crate::scaler::Scaler::from_envelope_in) and
    /// transform each row with it before [`project`](Self::project).
    ///
    /// # Errors
    /// `Error::Model` for an envelope that is not a kernel PCA model of scalar `T`;
    /// `CapacityExceeded` when `storage` is shorter than [`KernelProjection::scalars_len`].
    pub fn from_envelope_in(envelope: &Envelope<'_>, storage: S) -> Result<Self, Error> {
        let corrupt = |_| Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::KernelPca, ScalarKind::of::<T>())?;
        let ((dim, centres, components, kind), rest) =
            postcard::take_from_bytes::<(u32, u32, u32, KernelKind<T>)>(envelope.payload).map_err(corrupt)?;
        let kernel = Kernel::new(kind).map_err(|_| Error::Model(ModelError::Payload))?;
        let (dim, centres, components) = (dim as usize, centres as usize, components as usize);
        check_shape(dim, centres, components).map_err(|_| Error::Model(ModelError::Payload))?;
        let mut model = Self::new_in(storage, kernel, dim, centres, components)?;
        let parts = model.parts_mut();
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let mut complete = true;
        for part in [parts.centres, parts.coefficients, parts.offsets, parts.eigenvalues] {
            let expected = part.len();
            complete &= SliceSeed(part).deserialize(&mut deserializer).map_err(corrupt)? == expected;
        }
        if !complete || !deserializer.finalize().map_err(corrupt)?.is_empty() {
            return Err(Error::Model(ModelError::Payload));
        }
        Ok(model)
    }
}

/// `K_C` (eq. 55) of `rows` in `matrix` (`n × n`), the column means `k̄` in `means`.
fn centred_kernel_matrix<T: Real>(
    kernel: &Kernel<T>,
    rows: &[T],
    dim: usize,
    matrix: &mut [T],
    means: &mut [T],
) -> Result<(), Error> {
    let n = means.len();
    for (i, (row, x)) in matrix.chunks_exact_mut(n).zip(rows.chunks_exact(dim)).enumerate() {
        kernel.column(x, rows, row)?;
        if let Some(mean) = means.get_mut(i) {
            *mean = row.iter().fold(T::ZERO, |acc, &k| acc + k) / T::from_f64(n as f64);
        }
    }
    check_finite(matrix)?;
    let grand = means.iter().fold(T::ZERO, |acc, &k| acc + k) / T::from_f64(n as f64);
    for (row, &mean_i) in matrix.chunks_exact_mut(n).zip(means.iter()) {
        for (k, &mean_j) in row.iter_mut().zip(means.iter()) {
            *k = *k - mean_i - mean_j + grand;
        }
    }
    Ok(())
}

/// The mean `k̃` of `z_i = K(Ã, x_i)` and the covariance `Σ` of eq. 37 (two passes;
/// `z` is one kernel row of scratch, `block` room for up to [`BLOCK_ROWS`] of them).
///
/// `Σ`'s lower triangle is accumulated a block of centred rows at a time: each row of `Σ`
/// takes the block's products while it is in cache, instead of the whole `m × m` matrix
/// streaming through memory once per data row; every entry still adds its products in
/// row order, so the bits are those of one row at a time. The upper triangle is the
/// mirror (`z_i·z_j = z_j·z_i` exactly), copied at the end.
#[allow(clippy::too_many_arguments, reason = "the data, the reduced set and four regions of work")]
fn reduced_moments<T: Real>(
    kernel: &Kernel<T>,
    rows: &[T],
    centres: &[T],
    n: usize,
    covariance: &mut [T],
    block: &mut [T],
    z: &mut [T],
    mean: &mut [T],
) -> Result<(), Error> {
    let (m, dim) = (mean.len(), rows.len() / n.max(1));
    let scale = T::ONE / T::from_f64(n as f64);
    mean.fill(T::ZERO);
    for x in rows.chunks_exact(dim) {
        kernel.column(x, centres, z)?;
        mean.iter_mut().zip(z.iter()).for_each(|(s, &k)| *s += k * scale);
    }
    covariance.fill(T::ZERO);
    let block_rows = (block.len() / m.max(1)).clamp(1, BLOCK_ROWS);
    for chunk in rows.chunks(dim.max(1) * block_rows) {
        let count = chunk.len() / dim.max(1);
        let block = block.get_mut(..count * m).unwrap_or_default();
        for (x, centred) in chunk.chunks_exact(dim).zip(block.chunks_exact_mut(m)) {
            kernel.column(x, centres, centred)?;
            centred.iter_mut().zip(mean.iter()).for_each(|(k, &s)| *k -= s);
        }
        for (i, row) in covariance.chunks_exact_mut(m).enumerate() {
            let row = row.get_mut(..=i).unwrap_or_default();
            for centred in block.chunks_exact(m) {
                let z_i = centred.get(i).copied().unwrap_or(T::ZERO);
                row.iter_mut().zip(centred).for_each(|(c, &z_j)| *c += z_i * z_j * scale);
            }
        }
    }
    mirror_lower(covariance, m);
    check_finite(covariance)
}

/// Rows [`reduced_moments`] centres together before adding their products to `Σ`.
const BLOCK_ROWS: usize = 32;

/// `K(Ã, Ã) + δ·(tr/m)·I` with `δ = √ε` into `gram` (`m × m`).
fn reduced_gram<T: Real>(kernel: &Kernel<T>, centres: &[T], m: usize, gram: &mut [T]) -> Result<(), Error> {
    let dim = centres.len() / m.max(1);
    for (row, c) in gram.chunks_exact_mut(m).zip(centres.chunks_exact(dim)) {
        kernel.column(c, centres, row)?;
    }
    check_finite(gram)?;
    let trace = (0..m).fold(T::ZERO, |acc, i| acc + gram.get(i * m + i).copied().unwrap_or(T::ZERO));
    let ridge = gram_ridge(trace, m);
    for i in 0..m {
        if let Some(g) = gram.get_mut(i * m + i) {
            *g += ridge;
        }
    }
    Ok(())
}

/// The ridge `δ·tr/m`, `δ = √ε`, that [`reduced_gram`] adds to a Gram matrix of trace `trace`.
fn gram_ridge<T: Real>(trace: T, m: usize) -> T {
    T::EPSILON.sqrt() * trace / T::from_f64(m as f64)
}

/// The kernel-norm regulariser of the supervised and two-view projections: `d += μ·(tr d /
/// tr G)·G + δ·(tr d/m)·I` for the `m × m` `d`, `G` the ridged `K(Ã, Ã)` of
/// [`reduced_gram`] (formed a row at a time in `row`, `m` scalars of scratch, rather than
/// stored). The second term, `d`'s own ridge of relative size `δ = √ε`, keeps the sum
/// numerically positive definite in f32 when `μ` is small: without it the smallest
/// eigenvalue, `≈ μ·δ·tr d/m`, falls below `d`'s rounding error `≈ ε·‖d‖`.
fn add_kernel_norm<T: Real>(kernel: &Kernel<T>, centres: &[T], mu: T, d: &mut [T], row: &mut [T]) -> Result<(), Error> {
    let m = row.len();
    let dim = centres.len() / m.max(1);
    let trace_k = centres.chunks_exact(dim).fold(T::ZERO, |acc, c| acc + kernel.eval_prefix(c, c));
    let ridge = gram_ridge(trace_k, m);
    let trace_d = (0..m).fold(T::ZERO, |acc, i| acc + d.get(i * m + i).copied().unwrap_or(T::ZERO));
    let weight = finite(mu * trace_d / (trace_k + ridge * T::from_f64(m as f64)))?;
    let own_ridge = gram_ridge(trace_d, m);
    for (i, (out, c)) in d.chunks_exact_mut(m).zip(centres.chunks_exact(dim)).enumerate() {
        kernel.column(c, centres, row)?;
        if let Some(g) = row.get_mut(i) {
            *g += ridge;
        }
        out.iter_mut().zip(row.iter()).for_each(|(o, &g)| *o += weight * g);
        if let Some(o) = out.get_mut(i) {
            *o += own_ridge;
        }
    }
    check_finite(d)
}

/// Rows of the row-major `rows` with `dim` columns: at least 2, all finite.
fn row_count<T: Real>(rows: &[T], dim: usize) -> Result<usize, Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    if !rows.len().is_multiple_of(dim) || rows.len() / dim < 2 {
        return Err(Error::InvalidParam { name: "rows" });
    }
    check_finite(rows)?;
    Ok(rows.len() / dim)
}

fn check_shape(dim: usize, centres: usize, components: usize) -> Result<(), Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    if centres == 0 {
        return Err(Error::InvalidParam { name: "centres" });
    }
    if components == 0 || components > centres {
        return Err(Error::InvalidParam { name: "components" });
    }
    Ok(())
}

/// `values` split into the model's regions (empty ones if it is short, which the
/// constructor's check rules out).
fn split_mut<T>(values: &mut [T], dim: usize, centres: usize, components: usize) -> Parts<'_, T> {
    let len = KernelProjection::scalars_len(dim, centres, components);
    let values = match values.get_mut(..len) {
        Some(values) => values,
        None => &mut [],
    };
    let (centres_part, rest) = values.split_at_mut_checked(centres * dim).unwrap_or_default();
    let (coefficients, rest) = rest.split_at_mut_checked(components * centres).unwrap_or_default();
    let (offsets, eigenvalues) = rest.split_at_mut_checked(components).unwrap_or_default();
    Parts { centres: centres_part, coefficients, offsets, eigenvalues }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use nalgebra::{DMatrix, SymmetricEigen};
    use std::vec;
    use std::vec::Vec;

    /// Two noisy concentric rings in 2-D, `n` rows.
    fn rings(n: usize, rng: &mut Rng) -> Vec<f64> {
        (0..n)
            .flat_map(|i| {
                let radius: f64 = if i % 2 == 0 { 1.0 } else { 2.0 };
                let t: f64 = rng.uniform_in(0.0, core::f64::consts::TAU);
                [radius * t.cos() + rng.uniform_in(-0.1, 0.1), radius * t.sin() + rng.uniform_in(-0.1, 0.1)]
            })
            .collect()
    }

    fn convert<T: Real>(x: &[f64]) -> Vec<T> {
        x.iter().map(|&v| T::from_f64(v)).collect()
    }

    /// The `n × k` projections of `rows` by `model`, in f64.
    fn scores<T: Real, S: Storage<T>>(model: &KernelProjection<T, S>, rows: &[T]) -> DMatrix<f64> {
        let (d, k) = (model.dim(), model.components());
        let n = rows.len() / d;
        let mut out = DMatrix::zeros(n, k);
        let mut y = vec![T::ZERO; k];
        for (i, x) in rows.chunks_exact(d).enumerate() {
            model.project(x, &mut y).unwrap();
            for c in 0..k {
                out[(i, c)] = y[c].to_f64();
            }
        }
        out
    }

    /// The largest principal angle between the column spaces of `a` and `b`, in radians.
    fn subspace_angle(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
        let (qa, qb) = (a.clone().qr().q(), b.clone().qr().q());
        let sigma = (qa.transpose() * qb).singular_values();
        sigma.min().clamp(-1.0, 1.0).acos()
    }

    fn exact<T: Real>(rows: &[T], kernel: Kernel<T>, k: usize) -> KernelProjection<T, Vec<T>> {
        let n = rows.len() / 2;
        let mut work = vec![T::ZERO; KernelProjection::exact_work_len(n, k)];
        KernelProjection::fit_exact_in(
            vec![T::ZERO; KernelProjection::scalars_len(2, n, k)],
            &mut work,
            kernel,
            rows,
            2,
            k,
        )
        .unwrap()
    }

    fn reduced<T: Real>(rows: &[T], centres: &[T], kernel: Kernel<T>, k: usize) -> KernelProjection<T, Vec<T>> {
        let m = centres.len() / 2;
        let mut work = vec![T::ZERO; KernelProjection::reduced_work_len(m)];
        let storage = vec![T::ZERO; KernelProjection::scalars_len(2, m, k)];
        KernelProjection::fit_reduced_in(storage, &mut work, kernel, rows, centres, 2, k).unwrap()
    }

    /// The training scores of exact KPCA are `√λ·α` of nalgebra's decomposition of `K_C`
    /// (eq. 55, 73, 75), component by component up to sign.
    fn check_exact_against_nalgebra<T: Real>(n: usize, tol: f64) {
        let mut rng = Rng::seed_from_u64(21);
        let rows = rings(n, &mut rng);
        let kernel = |a: &[f64], b: &[f64]| (-0.5 * ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2))).exp();
        let k = DMatrix::from_fn(n, n, |i, j| kernel(&rows[2 * i..2 * i + 2], &rows[2 * j..2 * j + 2]));
        let h = DMatrix::identity(n, n) - DMatrix::from_element(n, n, 1.0 / n as f64);
        let eigen = SymmetricEigen::new(&h * k * &h);
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
        let model = exact::<T>(&convert(&rows), Kernel::rbf(T::from_f64(0.5)).unwrap(), 4);
        let ours = scores(&model, &convert(&rows));
        for (c, &index) in order.iter().take(4).enumerate() {
            let lambda = eigen.eigenvalues[index];
            let reference = eigen.eigenvectors.column(index) * lambda.sqrt();
            let column = ours.column(c);
            let error = (column - &reference).norm().min((column + &reference).norm());
            assert!(error <= tol * reference.norm(), "component {c}: {error}");
            assert!((model.eigenvalues()[c].to_f64() - lambda / n as f64).abs() <= tol * lambda, "variance {c}");
        }
    }

    /// Up to [`DENSE_UP_TO`] rows `K_C` is decomposed whole; beyond, by Lanczos.
    #[test]
    fn exact_kpca_matches_nalgebra() {
        for n in [60, 300] {
            check_exact_against_nalgebra::<f64>(n, 1e-9);
            check_exact_against_nalgebra::<f32>(n, 2e-3);
        }
    }

    /// Past [`DENSE_UP_TO`], Lanczos converges within the work of an exact fit (the test
    /// above checks its eigenpairs against nalgebra's at 300 rows), in both scalars; at
    /// 1,000 rows that work holds the matrix and the Lanczos runs, not a second `n²`.
    fn check_lanczos_converges<T: Real>() {
        let (n, k) = (1000, 4);
        let rows: Vec<T> = convert(&rings(n, &mut Rng::seed_from_u64(21)));
        assert!(KernelProjection::exact_work_len(n, k) < n * n + n * n / 4);
        let mut work = vec![T::ZERO; KernelProjection::exact_work_len(n, k)];
        let (matrix, rest) = work.split_at_mut(n * n);
        let (means, rest) = rest.split_at_mut(n);
        centred_kernel_matrix(&Kernel::rbf(T::from_f64(0.5)).unwrap(), &rows, 2, matrix, means).unwrap();
        let mut operator = |x: &[T], y: &mut [T]| gemv(matrix, n, n, x, y);
        assert_eq!(leading_pairs(&mut operator, n, k, rest), Ok(None));
        assert!(rest[..k].windows(2).all(|w| w[0] >= w[1]), "largest first");
    }

    #[test]
    fn lanczos_converges_past_the_dense_rows() {
        check_lanczos_converges::<f64>();
        check_lanczos_converges::<f32>();
    }

    /// The leading columns of a whole decomposition, one eigenvector a row.
    #[test]
    fn leading_columns_become_rows() {
        let n = 4;
        let mut vectors: Vec<f64> = (0..n * n).map(|i| i as f64).collect();
        transpose(&mut vectors, n);
        assert_eq!(&vectors[..2 * n], &[0.0, 4.0, 8.0, 12.0, 1.0, 5.0, 9.0, 13.0]);
    }

    /// Reduced KPCA through every row as a centre is exact KPCA; with fewer centres its
    /// subspace approaches the exact one as `m` grows.
    fn check_reduced_converges<T: Real>(tol: f64) -> Vec<f64> {
        let mut rng = Rng::seed_from_u64(22);
        let rows: Vec<T> = convert(&rings(200, &mut rng));
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let full = scores(&exact(&rows, kernel, 3), &rows);
        let angles: Vec<f64> = [10, 25, 50, 100, 200]
            .iter()
            .map(|&m| subspace_angle(&full, &scores(&reduced(&rows, &rows[..2 * m], kernel, 3), &rows)))
            .collect();
        assert!(angles[4] <= tol, "m = n: angle {}", angles[4]);
        assert!(angles[0] > angles[3] && angles[3] >= angles[4], "not converging: {angles:?}");
        angles
    }

    #[test]
    fn reduced_kpca_converges_to_kpca() {
        std::eprintln!("largest principal angle, m = 10, 25, 50, 100, 200 of n = 200:");
        std::eprintln!("f64 {:?}", check_reduced_converges::<f64>(1e-5));
        std::eprintln!("f32 {:?}", check_reduced_converges::<f32>(2e-2));
    }

    #[test]
    fn reduced_kpca_at_m_equal_n_matches_exact_variances_and_projections() {
        let mut rng = Rng::seed_from_u64(23);
        let rows = rings(80, &mut rng);
        let kernel = Kernel::rbf(0.5).unwrap();
        let (full, red) = (exact(&rows, kernel, 3), reduced(&rows, &rows, kernel, 3));
        for (a, b) in full.eigenvalues().iter().zip(red.eigenvalues()) {
            assert!((a - b).abs() <= 1e-6 * a, "{a} vs {b}");
        }
        // New rows, including far ones, project alike (sign fixed by the same convention
        // on different coefficients, so compare up to sign).
        let fresh = rings(10, &mut rng);
        let (a, b) = (scores(&full, &fresh), scores(&red, &fresh));
        for c in 0..3 {
            let error = (a.column(c) - b.column(c)).norm().min((a.column(c) + b.column(c)).norm());
            assert!(error <= 1e-5 * a.column(c).norm().max(1.0), "component {c}: {error}");
        }
    }

    #[test]
    fn a_model_survives_the_envelope() {
        let mut rng = Rng::seed_from_u64(24);
        let rows = rings(30, &mut rng);
        let model = reduced(&rows, &rows[..20], Kernel::rbf(0.5).unwrap(), 2);
        let mut bytes = vec![0u8; model.encoded_len()];
        assert_eq!(model.encode(&mut bytes), Ok(bytes.len()));
        let envelope = Envelope::parse(&bytes).unwrap();
        let decoded = KernelProjection::<f64, _>::from_envelope_in(&envelope, vec![0.0; 64]).unwrap();
        assert_eq!((decoded.dim(), decoded.components(), decoded.centres()), (2, 2, model.centres()));
        assert_eq!(scores(&decoded, &rows), scores(&model, &rows));
        assert!(KernelProjection::<f32, _>::from_envelope_in(&envelope, vec![0.0f32; 64]).is_err());
        assert!(matches!(
            KernelProjection::<f64, _>::from_envelope_in(&envelope, vec![0.0; 10]),
            Err(Error::CapacityExceeded { .. })
        ));
    }

    #[test]
    fn bad_input_is_an_error() {
        let rows = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0];
        let kernel = Kernel::rbf(1.0).unwrap();
        let mut work = vec![0.0; KernelProjection::exact_work_len(3, 1)];
        let fit = |k, work: &mut [f64]| KernelProjection::fit_exact_in(vec![0.0; 64], work, kernel, &rows, 2, k);
        // Three rows centred in feature space have rank 2.
        assert_eq!(fit(3, &mut work).err(), Some(Error::InvalidParam { name: "components" }));
        assert_eq!(fit(0, &mut work).err(), Some(Error::InvalidParam { name: "components" }));
        assert!(matches!(fit(2, &mut work[..5]), Err(Error::CapacityExceeded { .. })));
        let nan = [0.0, f64::NAN, 1.0, 0.0];
        assert_eq!(
            KernelProjection::fit_exact_in(vec![0.0; 64], &mut work, kernel, &nan, 2, 1).err(),
            Some(Error::NonFinite)
        );
        assert_eq!(
            KernelProjection::fit_exact_in(vec![0.0; 64], &mut work, kernel, &rows[..5], 2, 1).err(),
            Some(Error::InvalidParam { name: "rows" })
        );
        let mut work = vec![0.0; KernelProjection::reduced_work_len(2)];
        let fit = KernelProjection::fit_reduced_in(vec![0.0; 64], &mut work, kernel, &rows, &rows[..4], 2, 3);
        assert_eq!(fit.err(), Some(Error::InvalidParam { name: "components" }));
        let model = fit_ok(&rows);
        assert!(model.project(&[0.0], &mut [0.0]).is_err());
        assert!(model.project(&[0.0, f64::INFINITY], &mut [0.0]).is_err());
    }

    fn fit_ok(rows: &[f64]) -> KernelProjection<f64, Vec<f64>> {
        reduced(rows, &rows[..4], Kernel::rbf(1.0).unwrap(), 1)
    }
}
