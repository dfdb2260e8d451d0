//! The batch SLKL learner (Algorithm 2 with the corrections of the module docs).

use crate::error::check_len;
use crate::real::{check_finite, finite};
use crate::storage::Storage;
use crate::{Error, Kernel, Real, Rng};

use super::columns::{Data, compensated_sum};
use super::layout::{Dims, Region};
use super::outcome::{Stats, Step, Summary};
use super::params::ValidParams;
use super::predictor::Predictor;
use super::solver::Engine;

/// The candidate set `S` of `M` rank-1 columns (eq. 3).
#[derive(Clone, Copy, Debug)]
pub enum Candidates<'c, T> {
    /// `min(M, n)` distinct training points drawn uniformly (the paper's choice).
    Random,
    /// These training points (e.g. the IRSVM reduced set); repeats are allowed.
    Indices(&'c [usize]),
    /// These points, row-major, `dim` features each (need not be training points).
    Points(&'c [T]),
}

/// Batch SLKL on `n` borrowed samples: learns `μ ≥ 0` minimising eq. (14) by coordinate
/// steps and predicts with eq. (16)-(17).
///
/// Time: a step costs O(n) kernel-free work when the drawn coordinate stays at 0 (plus
/// O(n·d) kernel work on the fly), O(n·m0 + m0²) when it changes. Memory:
/// [`Slkl::bytes`], O(n·m0 + m0²) on the fly; the samples are borrowed, not copied.
///
/// # Examples
/// ```
/// use kestrel_core::slkl::{Candidates, Dims, Params, Slkl, ExitReason};
/// // y = sin(x) on 50 points of [0, 3].
/// let x: Vec<f64> = (0..50).map(|i| 3.0 * i as f64 / 49.0).collect();
/// let y: Vec<f64> = x.iter().map(|v| v.sin()).collect();
/// let dims = Dims::new(50, 1, 20, 20);
/// let params = Params::new().nu(1e-3).check()?;
/// let mut scalars = vec![0.0; Slkl::scalars_len(dims)];
/// let mut indices = vec![0; Slkl::indices_len(dims)];
/// let mut slkl = Slkl::new_in(&mut scalars[..], &mut indices[..], dims, params, &x, &y,
///     Candidates::Random)?;
/// let summary = slkl.run()?;
/// assert_eq!(summary.reason, ExitReason::Converged);
/// assert!(slkl.active_len() > 0 && slkl.active_len() <= 20);
/// assert!((slkl.predict(&[1.5])? - 1.5f64.sin()).abs() < 0.05);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Slkl<'d, T, S, I> {
    scalars: S,
    indices: I,
    dims: Dims,
    x: &'d [T],
    y: &'d [T],
    mean: T,
    engine: Engine<T>,
}

/// Checks that the targets `ys` of a learner of `rows` samples are small enough for every
/// sum of squares over the samples to stay finite: `|y| ≤ √(MAX/(4·rows))` (`F(μ)` adds up
/// `rows` squared residuals of at most `2|y|`). Larger targets are `NonFinite`: their
/// squares overflow.
pub(crate) fn check_targets<T: Real>(ys: &[T], rows: usize) -> Result<(), Error> {
    check_finite(ys)?;
    // `4·rows` as the count's nearest scalar times 4 (exact): the same value as converting
    // `4.0·rows`, without the `f64` product, which is software on a single-precision FPU.
    let bound = (T::MAX / (T::from_f64(rows.max(1) as f64) * T::from_f64(4.0))).sqrt();
    if ys.iter().all(|y| y.abs() <= bound) { Ok(()) } else { Err(Error::NonFinite) }
}

/// Checks that `points` holds finite `dim`-vectors whose `k(x, x)` is finite (so every
/// kernel value against them is, by Cauchy–Schwarz); returns how many.
pub(crate) fn check_points<T: Real>(kernel: &Kernel<T>, points: &[T], dim: usize) -> Result<usize, Error> {
    let n = crate::kernel::point_count(points, dim)?;
    for p in points.chunks_exact(dim) {
        check_finite(&[kernel.diagonal(p)])?;
    }
    Ok(n)
}

impl Slkl<'static, (), (), ()> {
    /// Scalars of a batch learner's scalar buffer (saturating): the factor
    /// `A(A+1)/2 + 2A` for `A = max_active`, the columns, `rows` for `K_λ⁻¹y`, `5A`
    /// vectors, `M` weights, `M·dim` centres and `M + 1` objective values (see [`Dims`]).
    pub const fn scalars_len(dims: Dims) -> usize {
        dims.batch_scalars()
    }

    /// `usize` entries of the index buffer: `max_active + 2·candidates`.
    pub const fn indices_len(dims: Dims) -> usize {
        dims.indices()
    }

    /// Bytes of both buffers for scalar `T` (not counting the borrowed training data).
    pub const fn bytes<T>(dims: Dims) -> usize {
        dims.bytes::<T>(dims.batch_scalars())
    }
}

impl<'d, T: Real, S: Storage<T>, I: Storage<usize>> Slkl<'d, T, S, I> {
    /// A learner on samples `x` (row-major, `dims.dim()` features) and targets `y`, with
    /// `μ = 0`. The targets are centred by their mean, which the model adds back.
    ///
    /// # Errors
    /// - `InvalidParam` naming `dim`, `rows`, `candidates` or `max_active` when one is 0,
    ///   `samples` when `y` is empty, `lag` when the stopping lag exceeds `M`;
    /// - `CapacityExceeded` when a buffer is shorter than [`Slkl::scalars_len`] /
    ///   [`Slkl::indices_len`], when `n > rows`, or when more than `M` candidates are given;
    /// - `DimensionMismatch` when `x.len() ≠ n·dim` or candidate points are not `dim`-vectors;
    /// - `NonFinite` for NaN/∞ in `x`, `y` or candidate points (or a kernel value that
    ///   overflows); `IndexOutOfRange` for a candidate index `≥ n`.
    pub fn new_in(
        mut scalars: S,
        mut indices: I,
        dims: Dims,
        params: ValidParams<T>,
        x: &'d [T],
        y: &'d [T],
        candidates: Candidates<'_, T>,
    ) -> Result<Self, Error> {
        dims.check(scalars.as_ref().len(), dims.batch_scalars(), indices.as_ref().len())?;
        let (d, n) = (dims.dim(), y.len());
        if n == 0 {
            return Err(Error::InvalidParam { name: "samples" });
        }
        if n > dims.rows() {
            return Err(Error::CapacityExceeded { needed: n, capacity: dims.rows() });
        }
        check_len(n.saturating_mul(d), x.len())?;
        check_targets(y, y.len())?;
        let kernel = params.kernel();
        check_points(&kernel, x, d)?;
        let m = match candidates {
            Candidates::Random => dims.candidates().min(n),
            Candidates::Indices(ix) => {
                if let Some(&index) = ix.iter().find(|&&i| i >= n) {
                    return Err(Error::IndexOutOfRange { index, len: n });
                }
                ix.len()
            }
            Candidates::Points(p) => check_points(&kernel, p, d)?,
        };
        if m == 0 {
            return Err(Error::InvalidParam { name: "candidates" });
        }
        if m > dims.candidates() {
            return Err(Error::CapacityExceeded { needed: m, capacity: dims.candidates() });
        }
        let mut engine = Engine::new(&dims, params, m)?;
        let mean = compensated_sum(y.iter().copied()) / T::from_f64(n as f64);
        let data = Data { x, y, dim: d, mean };
        // What the buffers held before must not reach the learner (see `SlklWindow::new_in`).
        scalars.as_mut().iter_mut().take(dims.batch_scalars()).for_each(|v| *v = T::ZERO);
        indices.as_mut().iter_mut().take(dims.indices()).for_each(|i| *i = 0);
        let mut parts = dims.split(scalars.as_mut());
        let mut idx = dims.split_indices(indices.as_mut());
        let centres = parts.centres.get_mut(..m * d).unwrap_or_default();
        match candidates {
            Candidates::Random => {
                // Selection sampling (Knuth's Algorithm S): m of n, in order, O(n).
                let mut rng = Rng::seed_from_u64(params.seed() ^ 0x5eed_ca4d_1da7_e5c0_u64);
                let mut slots = centres.chunks_exact_mut(d);
                let mut chosen = 0;
                for i in 0..n {
                    if chosen < m && rng.below(n - i) < m - chosen {
                        if let Some(centre) = slots.next() {
                            centre.copy_from_slice(data.row(i));
                        }
                        chosen += 1;
                    }
                }
            }
            Candidates::Indices(ix) => {
                for (c, &i) in centres.chunks_exact_mut(d).zip(ix) {
                    c.copy_from_slice(data.row(i));
                }
            }
            Candidates::Points(p) => centres.copy_from_slice(p),
        }
        engine.init(&mut parts, &mut idx, &data)?;
        Ok(Slkl { scalars, indices, dims, x, y, mean, engine })
    }

    /// Runs `f` on the engine with the buffers split and the samples in view.
    fn with<R>(
        &mut self,
        f: impl FnOnce(&mut Engine<T>, &mut super::layout::Parts<'_, T>, &mut super::layout::Indices<'_>, &Data<'_, T>) -> R,
    ) -> R {
        let data = Data { x: self.x, y: self.y, dim: self.dims.dim(), mean: self.mean };
        let mut parts = self.dims.split(self.scalars.as_mut());
        let mut idx = self.dims.split_indices(self.indices.as_mut());
        f(&mut self.engine, &mut parts, &mut idx, &data)
    }

    /// One coordinate step (anytime: `F`, `m0` and the model are valid after every step).
    /// Draws a coordinate uniformly from the pool (all candidates without shrinking),
    /// moves it by the step rule, updates the factor, and keeps the stopping rule's books.
    ///
    /// # Errors
    /// `NonFinite` only when intermediate sums overflow `T` (samples or targets of extreme
    /// scale for a polynomial or linear kernel); never for an ordinary numerical outcome,
    /// which is a [`Case`](super::Case) (a singular update is retried after a fresh
    /// factorization, then skipped as `IllConditioned`).
    pub fn step(&mut self) -> Result<Step<T>, Error> {
        self.with(|e, p, i, d| e.step(p, i, d))
    }

    /// Steps until `F(μ^{k−lag}) − F(μ^k) ≤ ε·F(μ^{k−lag})` (confirmed by a full sweep when
    /// shrinking), or `max_steps` steps.
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self) -> Result<Summary<T>, Error> {
        self.with(|e, p, i, d| e.run(p, i, d))
    }

    /// `(∂F/∂μ_m, ∂²F/∂μ_m²)` at the current `μ` (eq. 20-21), O(n·m0 + m0²).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `m ≥ M`.
    pub fn derivatives(&mut self, m: usize) -> Result<(T, T), Error> {
        self.check_candidate(m)?;
        self.with(|e, p, i, d| e.derivatives(p, i, d, m))
    }

    /// Sets `μ_m` (e.g. a warm start) through the matching case of eq. (25)-(27).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `m ≥ M`; `NonFinite`; `InvalidParam { name: "mu" }` for
    /// `μ < 0`; `CapacityExceeded` when `m0` is at `max_active`; `NotPositiveDefinite` when
    /// the update is numerically singular. The learner is unchanged on error.
    pub fn set_weight(&mut self, m: usize, mu: T) -> Result<(), Error> {
        self.with(|e, p, i, d| e.set_weight(p, i, d, m, mu))
    }

    /// Recomputes the factor of `D⁻¹ + CᵀC/λ` from scratch, O(n·m0² + m0³).
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn refactor(&mut self) -> Result<(), Error> {
        self.with(|e, p, i, d| {
            let columns = e.columns;
            let lambda = e.params.lambda();
            e.set.refactor(p, i, &columns, d.n(), lambda)?;
            e.refresh(p, i, d)
        })
    }

    fn check_candidate(&self, m: usize) -> Result<(), Error> {
        if m < self.engine.candidates {
            Ok(())
        } else {
            Err(Error::IndexOutOfRange { index: m, len: self.engine.candidates })
        }
    }

    /// `F(μ)` of eq. (14).
    pub fn objective(&self) -> T {
        self.engine.objective
    }
    /// `m0`, the number of non-zero weights.
    pub fn active_len(&self) -> usize {
        self.engine.set.len
    }
    /// `M`, the number of candidates.
    pub fn candidates_len(&self) -> usize {
        self.engine.candidates
    }
    /// Whether the stopping rule has held since the last change from outside.
    pub fn converged(&self) -> bool {
        self.engine.schedule.converged
    }
    /// Counters since construction.
    pub fn stats(&self) -> Stats {
        self.engine.stats()
    }
    /// The capacities.
    pub fn dims(&self) -> Dims {
        self.dims
    }
    /// The training-target mean `ȳ` (the model's offset).
    pub fn mean(&self) -> T {
        self.mean
    }
    /// The active candidates in factor order.
    pub fn active(&self) -> &[usize] {
        self.indices.as_ref().get(..self.engine.set.len).unwrap_or_default()
    }
    /// `μ_m`, or `None` for `m ≥ M`.
    pub fn weight(&self, m: usize) -> Option<T> {
        self.check_candidate(m).ok()?;
        self.scalars.as_ref().get(self.dims.region(Region::Mu)).and_then(|mu| mu.get(m).copied())
    }
    /// Candidate `m`'s centre `s_m`, or `None` for `m ≥ M`.
    pub fn centre(&self, m: usize) -> Option<&[T]> {
        self.check_candidate(m).ok()?;
        let d = self.dims.dim();
        let centres = self.scalars.as_ref().get(self.dims.region(Region::Centres))?;
        centres.get(m * d..(m + 1) * d)
    }
    /// The packed lower factor `L` of `D⁻¹ + CᵀC/λ` (rows in [`active`](Self::active)
    /// order, layout [`Triangle::Packed`](crate::linalg::Triangle::Packed)).
    pub fn factor_packed(&self) -> &[T] {
        let start = self.dims.region(Region::Factor).start;
        self.scalars.as_ref().get(start..start + crate::linalg::packed_len(self.engine.set.len)).unwrap_or_default()
    }

    /// `f(x)` of eq. (16)-(17). O(m0·d).
    ///
    /// # Errors
    /// `DimensionMismatch` when `x.len() ≠ dim`; `NonFinite` for NaN/∞ in `x`.
    pub fn predict(&self, x: &[T]) -> Result<T, Error> {
        check_len(self.dims.dim(), x.len())?;
        check_finite(x)?;
        let region = |r| self.scalars.as_ref().get(self.dims.region(r)).unwrap_or_default();
        // A finite x far from the centres can overflow a kernel value: no prediction then.
        finite(self.mean + self.engine.predict_centred(region(Region::Centres), region(Region::Z), self.active(), x))
    }

    /// The model (`m0` centres, weights, mean) in `storage` of at least
    /// [`Predictor::scalars_len`]`(m0, dim)` scalars.
    ///
    /// # Errors
    /// `CapacityExceeded` when `storage` is too short.
    pub fn predictor_in<P: Storage<T>>(&self, storage: P) -> Result<Predictor<T, P>, Error> {
        let buf = self.scalars.as_ref();
        super::predictor::from_engine(storage, &self.engine, &self.dims, buf, self.active(), self.mean)
    }

    /// Gives the buffers back.
    pub fn into_storage(self) -> (S, I) {
        (self.scalars, self.indices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slkl::{Case, Params};
    use std::vec;

    /// One candidate: `F(μ) = ‖y‖² − μ(cᵀy)²/(λ + μ‖c‖²) + νμ`, minimised in closed form at
    /// `μ* = max(0, (√(λa₀²/ν) − 1)/b₀)` with `a₀ = cᵀy/λ`, `b₀ = ‖c‖²/λ`; one exact step
    /// from `μ = 0` lands on it.
    fn one_column<T: Real>() {
        let x: [T; 4] = [0.0, 1.0, 2.0, 3.0].map(T::from_f64);
        let y: [T; 4] = [1.0, 2.0, 2.5, 4.5].map(T::from_f64);
        let (lambda, nu) = (2.0, 0.05);
        let params =
            Params::new().kernel(Kernel::linear()).lambda(T::from_f64(lambda)).nu(T::from_f64(nu)).check().unwrap();
        let dims = Dims::new(4, 1, 1, 1);
        let centre = [T::from_f64(2.0)];
        let mut slkl = Slkl::new_in(
            vec![T::ZERO; dims.batch_scalars()],
            vec![0; dims.indices()],
            dims,
            params,
            &x,
            &y,
            Candidates::Points(&centre),
        )
        .unwrap();
        let mean = 2.5;
        let yc = [1.0 - mean, 2.0 - mean, 2.5 - mean, 4.5 - mean];
        let c = [0.0, 1.0, 2.0, 3.0]; // x·s/√(s·s) with s = 2
        let cy: f64 = c.iter().zip(&yc).map(|(a, b)| a * b).sum();
        let cc: f64 = c.iter().map(|a| a * a).sum();
        let yy: f64 = yc.iter().map(|a| a * a).sum();
        let (a0, b0) = (cy / lambda, cc / lambda);
        let mu = ((lambda * a0 * a0 / nu).sqrt() - 1.0) / b0;
        let f = yy - mu * cy * cy / (lambda + mu * cc) + nu * mu;
        let tol = 1e3 * T::EPSILON.to_f64();
        assert!((slkl.objective().to_f64() - yy).abs() <= tol * yy);
        let step = slkl.step().unwrap();
        assert_eq!((step.candidate, step.case, step.active), (0, Case::Enter, 1));
        assert!((slkl.weight(0).unwrap().to_f64() - mu).abs() <= tol * mu);
        assert!((slkl.objective().to_f64() - f).abs() <= tol * f);
        let (g, _) = slkl.derivatives(0).unwrap();
        assert!(g.to_f64().abs() <= tol, "∂F = {g} at the optimum");
        let again = slkl.step().unwrap().case;
        assert!(matches!(again, Case::Unchanged | Case::Change), "{again:?}");
        assert!((slkl.weight(0).unwrap().to_f64() - mu).abs() <= tol * mu);
        let summary = slkl.run().unwrap();
        assert_eq!(summary.reason, crate::slkl::ExitReason::Converged);
        let stats = slkl.stats();
        assert_eq!(stats.steps, stats.stay_zero + stats.change + stats.leave + stats.enter + stats.unchanged);
        assert_eq!(slkl.mean().to_f64(), mean);
        // The model: ȳ + β k(x, s) with β = z/(λ√k(s, s)).
        let p = slkl.predict(&[T::ONE]).unwrap().to_f64();
        let fitted = mean + mu * cy / (lambda + mu * cc) * 1.0; // c(x=1) = 1
        assert!((p - fitted).abs() <= tol, "{p} vs {fitted}");
    }

    /// Owned fixed-capacity buffers sized by the `const fn`s: the learner can live in a
    /// `static` and the linker enforces its budget.
    #[test]
    fn owned_arrays_and_constant_targets() {
        const DIMS: Dims = Dims::new(8, 1, 4, 4);
        let x = [0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0];
        let y = [2.5f32; 8];
        let params = Params::new().check().unwrap();
        let mut slkl = Slkl::new_in(
            [0.0f32; Slkl::scalars_len(DIMS)],
            [0usize; Slkl::indices_len(DIMS)],
            DIMS,
            params,
            &x,
            &y,
            Candidates::Random,
        )
        .unwrap();
        // Centred targets are 0: F = 0, nothing enters, the model is the mean.
        let summary = slkl.run().unwrap();
        assert_eq!(summary.reason, crate::slkl::ExitReason::Converged);
        assert_eq!((slkl.active_len(), slkl.objective()), (0, 0.0));
        assert_eq!(slkl.predict(&[3.5]), Ok(2.5));
        assert_eq!(slkl.stats().stay_zero, slkl.stats().steps);
        let (scalars, indices) = slkl.into_storage();
        assert_eq!(core::mem::size_of_val(&scalars) + core::mem::size_of_val(&indices), Slkl::bytes::<f32>(DIMS));
    }

    #[test]
    fn one_column_closed_form_f32() {
        one_column::<f32>();
    }

    #[test]
    fn one_column_closed_form_f64() {
        one_column::<f64>();
    }
}
