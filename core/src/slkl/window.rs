//! Sliding-window SLKL: the training set is the last `N` samples of a stream (beyond the
//! paper).
//!
//! The centres `s_m` are fixed points given at construction (e.g. a reduced set), so a
//! sample `x` only changes one row of `C`: row `i` of column `m` is `k(xᵢ, s_m)/√k(s_m, s_m)`.
//! With `ρ_old`, `ρ_new` the active entries of the row before and after,
//!
//! ```text
//! H = D⁻¹ + CᵀC/λ  ←  H + ρ_new ρ_newᵀ/λ − ρ_old ρ_oldᵀ/λ,
//! ```
//!
//! a rank-1 update and a rank-1 downdate of the factor: O(m0²) plus `m0` kernel
//! evaluations (O(m0·d)) per arrival — `M` evaluations with precomputed columns — and no
//! recomputation from scratch. (A window that is not yet full only gains a row: the update
//! alone.) The same row change updates the running sums `Cᵀ(y − y₀)`, `Cᵀ1` (the active
//! columns' sums) and `‖y − y₀‖²` in O(m0), `y₀` the targets' mean when they were last
//! used; the next [`step`](SlklWindow::step) or query moves them to the new mean
//! (`Cᵀ(y − ȳ) = Cᵀ(y − y₀) − (ȳ − y₀)Cᵀ1`, O(m0)), recomputes the mean (O(N)) and
//! `z` and `F` (O(m0²)); `r = K_λ⁻¹y` follows lazily, O(N·m0), only for a step on an
//! inactive coordinate. So a burst of arrivals costs no more than its factor updates. The
//! running sums are summed afresh (O(N·m0)) once every `N` arrivals, so their rounding
//! stays that of at most `N` updates. The drift check of the batch learner runs here too,
//! counting each update and downdate as a change.
//!
//! Memory: [`SlklWindow::bytes`] — the batch learner's buffers plus the window's
//! samples, `N·(d + 1)` scalars.

#![allow(
    clippy::indexing_slicing,
    reason = "slots < rows, candidates < M and positions < max_active index the regions Dims lays out, checked by the constructors"
)]

use crate::error::check_len;
use crate::real::{check_finite, finite};
use crate::storage::Storage;
use crate::{Error, Real};

use super::columns::{Data, compensated_sum};
use super::layout::{Dims, Indices, Parts, Region};
use super::learner::{check_points, check_targets};
use super::outcome::{Stats, Step, Summary};
use super::params::ValidParams;
use super::predictor::{Predictor, from_engine};
use super::solver::Engine;

/// SLKL over the last `N` samples of a stream, with fixed candidate centres.
///
/// # Examples
/// ```
/// use kestrel_core::slkl::{Dims, Params, SlklWindow};
/// // Window of 64 samples in 1-D, 16 candidate centres on a grid, m0 ≤ 16.
/// const DIMS: Dims = Dims::new(64, 1, 16, 16);
/// let centres: Vec<f64> = (0..16).map(|i| i as f64 / 5.0).collect();
/// let params = Params::new().nu(1e-3).check()?;
/// let mut scalars = vec![0.0; SlklWindow::scalars_len(DIMS)];
/// let mut indices = vec![0; SlklWindow::indices_len(DIMS)];
/// let mut window = SlklWindow::new_in(&mut scalars[..], &mut indices[..], DIMS, params, &centres)?;
/// for t in 0..200 {
///     let x = (t % 50) as f64 / 16.0;
///     window.push(&[x], x.sin())?; // O(m0² + m0·d)
///     window.step()?; // anytime
/// }
/// window.run()?;
/// assert_eq!(window.len(), 64);
/// assert!((window.predict(&[1.0])? - 1.0f64.sin()).abs() < 0.05);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct SlklWindow<T, S, I> {
    pub(super) scalars: S,
    pub(super) indices: I,
    pub(super) dims: Dims,
    pub(super) engine: Engine<T>,
    pub(super) len: usize,
    pub(super) head: usize,
    pub(super) mean: T,
    pub(super) mean_stale: bool,
}

type Split<'b, T> = (Parts<'b, T>, Indices<'b>, &'b mut [T], &'b mut [T]);

/// A copy of the learner; `clone_from` copies into the buffers the target already has
/// (no allocation for `Vec` storage of the same length), so a caller can keep an undo copy
/// of an arrival at the cost of a copy of the buffers.
impl<T: Real, S: Clone, I: Clone> Clone for SlklWindow<T, S, I> {
    fn clone(&self) -> Self {
        let (scalars, indices) = (self.scalars.clone(), self.indices.clone());
        let (dims, engine, len, head, mean, mean_stale) =
            (self.dims, self.engine.clone(), self.len, self.head, self.mean, self.mean_stale);
        SlklWindow { scalars, indices, dims, engine, len, head, mean, mean_stale }
    }

    fn clone_from(&mut self, source: &Self) {
        self.scalars.clone_from(&source.scalars);
        self.indices.clone_from(&source.indices);
        self.engine.clone_from(&source.engine);
        (self.dims, self.len, self.head, self.mean, self.mean_stale) =
            (source.dims, source.len, source.head, source.mean, source.mean_stale);
    }
}

impl SlklWindow<(), (), ()> {
    /// Scalars of a sliding-window learner's scalar buffer (saturating): the batch
    /// learner's ([`Slkl::scalars_len`](super::Slkl::scalars_len)) plus the window's
    /// samples, `rows·(dim + 1)`.
    pub const fn scalars_len(dims: Dims) -> usize {
        dims.window_scalars()
    }

    /// `usize` entries of the index buffer: `max_active + 2·candidates`.
    pub const fn indices_len(dims: Dims) -> usize {
        dims.indices()
    }

    /// Bytes of both buffers for scalar `T`.
    pub const fn bytes<T>(dims: Dims) -> usize {
        dims.bytes::<T>(dims.window_scalars())
    }
}

impl<T: Real, S: Storage<T>, I: Storage<usize>> SlklWindow<T, S, I> {
    /// An empty window of `dims.rows()` samples with the candidate `centres` (row-major,
    /// `dims.dim()` features, at most `dims.candidates()` of them), `μ = 0`.
    ///
    /// # Errors
    /// `InvalidParam` naming a zero capacity, `candidates` when `centres` is empty, or
    /// `lag`; `CapacityExceeded` when a buffer is shorter than
    /// [`SlklWindow::scalars_len`] / [`SlklWindow::indices_len`] or there are more than `M`
    /// centres; `DimensionMismatch` when `centres` are not `dim`-vectors; `NonFinite`.
    pub fn new_in(
        mut scalars: S,
        mut indices: I,
        dims: Dims,
        params: ValidParams<T>,
        centres: &[T],
    ) -> Result<Self, Error> {
        dims.check(scalars.as_ref().len(), dims.window_scalars(), indices.as_ref().len())?;
        let m = check_points(&params.kernel(), centres, dims.dim())?;
        if m == 0 {
            return Err(Error::InvalidParam { name: "candidates" });
        }
        if m > dims.candidates() {
            return Err(Error::CapacityExceeded { needed: m, capacity: dims.candidates() });
        }
        let mut engine = Engine::new(&dims, params, m)?;
        // Whatever the buffers held before (a learner that used them) must not reach the
        // new one: its state, and so a checkpoint of it, depends on its samples alone.
        scalars.as_mut().iter_mut().take(dims.window_scalars()).for_each(|v| *v = T::ZERO);
        indices.as_mut().iter_mut().take(dims.indices()).for_each(|i| *i = 0);
        let (mut parts, mut idx, _, _) = split(&dims, scalars.as_mut(), indices.as_mut());
        parts.centres[..centres.len()].copy_from_slice(centres);
        let data = Data { x: &[], y: &[], dim: dims.dim(), mean: T::ZERO };
        engine.init(&mut parts, &mut idx, &data)?;
        Ok(SlklWindow { scalars, indices, dims, engine, len: 0, head: 0, mean: T::ZERO, mean_stale: false })
    }

    /// Runs `f` with the buffers split and the window's samples in view.
    fn with<R>(&mut self, f: impl FnOnce(&mut Engine<T>, &mut Parts<'_, T>, &mut Indices<'_>, &Data<'_, T>) -> R) -> R {
        if self.mean_stale {
            self.mean = self.mean();
            self.mean_stale = false;
        }
        self.with_stale_mean(f)
    }

    /// As [`with`](Self::with) without bringing the mean up to date (O(N)): for the
    /// factor work of an arrival, which does not read the targets.
    fn with_stale_mean<R>(
        &mut self,
        f: impl FnOnce(&mut Engine<T>, &mut Parts<'_, T>, &mut Indices<'_>, &Data<'_, T>) -> R,
    ) -> R {
        let (d, len) = (self.dims.dim(), self.len);
        let (mut parts, mut idx, xs, ys) = split(&self.dims, self.scalars.as_mut(), self.indices.as_mut());
        let data = Data { x: &xs[..len * d], y: &ys[..len], dim: d, mean: self.mean };
        f(&mut self.engine, &mut parts, &mut idx, &data)
    }

    /// Adds sample `(x, y)`, evicting the oldest one when the window is full: one row of
    /// `C` changes, the factor takes a rank-1 update and (when full) a rank-1 downdate.
    /// O(m0² + m0·d) (`M·d` kernel work with precomputed columns), plus a drift check,
    /// O(N·m0), every `drift_check_every / 2` arrivals. Resets the stopping rule and the
    /// shrinking pool.
    ///
    /// # Errors
    /// `DimensionMismatch` when `x.len() ≠ dim`; `NonFinite` for NaN/∞ in `x` or `y`, a
    /// target beyond `√(MAX/(4N))`, or a kernel value or factor update that overflows: the
    /// sample is refused and the learner is unchanged. Once the factor has taken the
    /// sample, the refactorization a singular downdate or a due drift check runs can still
    /// overflow (`NonFinite`, extreme scales only); the sample then stays in the window
    /// with the factor as the failure left it — a caller that must undo such an arrival
    /// keeps a copy from before (`clone_from` into a second learner, no allocation).
    pub fn push(&mut self, x: &[T], y: T) -> Result<(), Error> {
        let d = self.dims.dim();
        check_len(d, x.len())?;
        check_finite(x)?;
        check_targets(&[y], self.dims.rows())?;
        let kernel = self.engine.params.kernel();
        check_finite(&[kernel.diagonal(x)])?;
        let lambda = self.engine.params.lambda();
        let rows = self.dims.rows();
        let replacing = self.len == rows;
        let slot = if replacing { self.head } else { self.len };
        let m0 = self.engine.set.len;
        let columns = self.engine.columns;
        let mut singular = false;
        {
            let (mut parts, idx, xs, ys) = split(&self.dims, self.scalars.as_mut(), self.indices.as_mut());
            let active = &idx.active[..m0];
            columns.read_row(parts.cols, slot, x, parts.centres, active, &kernel, parts.w2, parts.w1);
            let mut factor = self.engine.set.factor(parts.factor)?;
            factor.rank_one_update(&parts.w1[..m0], T::ONE / lambda)?;
            if replacing {
                // The update is applied: from here on the call cannot be rejected, and a
                // downdate judged singular is repaired by a fresh factorization below.
                singular = factor.rank_one_update(&parts.w2[..m0], -T::ONE / lambda).is_err();
            }
            let position = &idx.position[..self.engine.candidates];
            columns.write_row(parts.cols, slot, x, parts.centres, position, &kernel, &parts.w1[..m0]);
            self.engine.arrive(&mut parts, y, replacing.then_some(ys[slot]), rows);
            xs[slot * d..(slot + 1) * d].copy_from_slice(x);
            ys[slot] = y;
        }
        if replacing {
            self.head = (self.head + 1) % rows;
        } else {
            self.len += 1;
        }
        self.mean_stale = true;
        self.engine.stale = true;
        let every = self.engine.params.drift_check_every();
        let due = self.engine.set.note_change(every) | self.engine.set.note_change(every);
        if singular || due {
            self.refactor_or_check(singular, lambda)?;
        }
        self.engine.schedule.reset();
        Ok(())
    }

    /// The fresh factorization a singular downdate calls for, else the drift check that is
    /// due, O(N·m0): the rare part of an arrival, which alone splits the buffers again (a
    /// few hundred instructions on a microcontroller).
    #[cold]
    fn refactor_or_check(&mut self, singular: bool, lambda: T) -> Result<(), Error> {
        self.with_stale_mean(|e, p, i, data| {
            let columns = e.columns;
            if singular {
                e.set.refactor(p, i, &columns, data.n(), lambda)
            } else {
                let tol = e.params.drift_tolerance();
                e.set.drift_check(p, i, &columns, data.n(), lambda, tol).map(|_| ())
            }
        })
    }

    /// [`push`](Self::push), then coordinate steps until the stopping rule holds on the
    /// window or `max_steps` steps were taken — the per-arrival rule of the online learners
    /// (converged, not counted, steps). Returns the steps taken.
    ///
    /// # Errors
    /// As [`push`](Self::push) (the window is unchanged) and [`step`](Self::step).
    pub fn learn(&mut self, x: &[T], y: T, max_steps: usize) -> Result<usize, Error> {
        self.push(x, y)?;
        let mut taken = 0;
        while taken < max_steps && !self.converged() {
            self.step()?;
            taken += 1;
        }
        Ok(taken)
    }

    /// One coordinate step on the current window (anytime; see [`Slkl::step`]).
    ///
    /// # Errors
    /// As [`Slkl::step`](super::Slkl::step).
    ///
    /// [`Slkl::step`]: super::Slkl::step
    pub fn step(&mut self) -> Result<Step<T>, Error> {
        self.with(|e, p, i, d| e.step(p, i, d))
    }

    /// Steps until the stopping rule holds on the current window, or `max_steps` steps.
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn run(&mut self) -> Result<Summary<T>, Error> {
        self.with(|e, p, i, d| e.run(p, i, d))
    }

    /// Brings `z`, `r` and `F` up to date with the window (O(N·m0) after arrivals).
    fn refresh(&mut self) -> Result<(), Error> {
        self.with(|e, p, i, d| if e.stale { e.refresh(p, i, d) } else { Ok(()) })
    }

    /// `F(μ)` of eq. (14) on the current window.
    ///
    /// # Errors
    /// As [`step`](Self::step).
    pub fn objective(&mut self) -> Result<T, Error> {
        self.refresh()?;
        Ok(self.engine.objective)
    }

    /// `(∂F/∂μ_m, ∂²F/∂μ_m²)` on the current window (eq. 20-21).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `m ≥ M`.
    pub fn derivatives(&mut self, m: usize) -> Result<(T, T), Error> {
        if m >= self.engine.candidates {
            return Err(Error::IndexOutOfRange { index: m, len: self.engine.candidates });
        }
        self.with(|e, p, i, d| e.derivatives(p, i, d, m))
    }

    /// Sets `μ_m`; see [`Slkl::set_weight`](super::Slkl::set_weight).
    ///
    /// # Errors
    /// As [`Slkl::set_weight`](super::Slkl::set_weight); the learner is unchanged on error.
    pub fn set_weight(&mut self, m: usize, mu: T) -> Result<(), Error> {
        self.with(|e, p, i, d| e.set_weight(p, i, d, m, mu))
    }

    /// `f(x)` of eq. (16)-(17) for the current window. O(m0·d) (plus O(N·m0) once after
    /// arrivals).
    ///
    /// # Errors
    /// `DimensionMismatch` when `x.len() ≠ dim`; `NonFinite` for NaN/∞ in `x`.
    pub fn predict(&mut self, x: &[T]) -> Result<T, Error> {
        check_len(self.dims.dim(), x.len())?;
        check_finite(x)?;
        self.refresh()?;
        let buf = self.scalars.as_ref();
        let centres = &buf[self.dims.region(Region::Centres)];
        let z = &buf[self.dims.region(Region::Z)];
        let active = &self.indices.as_ref()[..self.engine.set.len];
        // A finite x far from the centres can overflow a kernel value: no prediction then.
        finite(self.mean + self.engine.predict_centred(centres, z, active, x))
    }

    /// The model of the current window in `storage`; see [`Slkl::predictor_in`].
    ///
    /// # Errors
    /// `CapacityExceeded` when `storage` is too short.
    ///
    /// [`Slkl::predictor_in`]: super::Slkl::predictor_in
    pub fn predictor_in<P: Storage<T>>(&mut self, storage: P) -> Result<Predictor<T, P>, Error> {
        self.refresh()?;
        let active = &self.indices.as_ref()[..self.engine.set.len];
        from_engine(storage, &self.engine, &self.dims, self.scalars.as_ref(), active, self.mean)
    }

    /// Samples in the window.
    pub fn len(&self) -> usize {
        self.len
    }
    /// `true` before the first sample.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// `true` once `N` samples have arrived (each new one evicts the oldest).
    pub fn is_full(&self) -> bool {
        self.len == self.dims.rows()
    }
    /// The mean of the window's targets (the model's offset), O(N).
    pub fn mean(&self) -> T {
        if self.len == 0 {
            return T::ZERO;
        }
        let start = self.dims.batch_scalars() + self.dims.rows() * self.dims.dim();
        let ys = &self.scalars.as_ref()[start..start + self.len];
        compensated_sum(ys.iter().copied()) / T::from_f64(self.len as f64)
    }
    /// The window's samples `(x, y)` in arrival order, oldest first.
    pub fn sample(&self, age: usize) -> Option<(&[T], T)> {
        if age >= self.len {
            return None;
        }
        let (d, rows) = (self.dims.dim(), self.dims.rows());
        let slot = if self.is_full() { (self.head + age) % rows } else { age };
        let xs = self.dims.batch_scalars();
        let buf = self.scalars.as_ref();
        let x = buf.get(xs + slot * d..xs + (slot + 1) * d)?;
        let y = *buf.get(xs + rows * d + slot)?;
        Some((x, y))
    }
    /// `m0`.
    pub fn active_len(&self) -> usize {
        self.engine.set.len
    }
    /// The active candidates in factor order.
    pub fn active(&self) -> &[usize] {
        &self.indices.as_ref()[..self.engine.set.len]
    }
    /// `μ_m`, or `None` for `m ≥ M`.
    pub fn weight(&self, m: usize) -> Option<T> {
        if m >= self.engine.candidates {
            return None;
        }
        self.scalars.as_ref()[self.dims.region(Region::Mu)].get(m).copied()
    }
    /// The packed lower factor of `D⁻¹ + CᵀC/λ`, rows in [`active`](Self::active) order.
    pub fn factor_packed(&self) -> &[T] {
        let start = self.dims.region(Region::Factor).start;
        &self.scalars.as_ref()[start..start + crate::linalg::packed_len(self.engine.set.len)]
    }
    /// Whether the stopping rule has held since the last arrival.
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
    /// Gives the buffers back.
    pub fn into_storage(self) -> (S, I) {
        (self.scalars, self.indices)
    }
}

/// The engine's regions, then the window's samples and targets.
pub(super) fn split<'b, T: Real>(dims: &Dims, scalars: &'b mut [T], indices: &'b mut [usize]) -> Split<'b, T> {
    let (engine, samples) = scalars.split_at_mut(dims.batch_scalars());
    let (xs, rest) = samples.split_at_mut(dims.rows() * dims.dim());
    let (ys, _) = rest.split_at_mut(dims.rows());
    (dims.split(engine), dims.split_indices(indices), xs, ys)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slkl::Params;
    use std::vec;

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                let dims = Dims::new(3, 1, 2, 2);
                let params = Params::new().check().unwrap();
                let mut w = SlklWindow::new_in(
                    vec![0.0 as $t; dims.window_scalars()],
                    vec![0; dims.indices()],
                    dims,
                    params,
                    &[0.0, 1.0],
                )
                .unwrap();
                assert!(w.is_empty() && w.mean() == 0.0 && w.sample(0).is_none());
                assert_eq!(w.objective().unwrap(), 0.0);
                for t in 0..5 {
                    w.push(&[t as $t], (t * t) as $t).unwrap();
                    w.step().unwrap();
                }
                // Samples 2, 3, 4 remain, oldest first.
                assert!(w.is_full());
                let kept: std::vec::Vec<_> = (0..3).map(|a| w.sample(a).unwrap()).collect();
                assert_eq!(kept, [(&[2.0][..], 4.0), (&[3.0][..], 9.0), (&[4.0][..], 16.0)]);
                assert_eq!(w.mean(), 29.0 / 3.0);
                assert!(w.objective().unwrap() > 0.0);
                assert!(w.stats().steps == 5);
            }
        )*};
    }

    gen_tests! {
        ring_order_and_mean_f32: f32,
        ring_order_and_mean_f64: f64,
    }

    /// The running sums (`Cᵀy`, `Cᵀ1`, `‖y − y₀‖²`, moved to each new mean) give the
    /// objective and the coefficients `z` that summing afresh gives, through bursts of arrivals
    /// without steps and past the resummation every `N` arrivals, on targets in raw units
    /// (an offset of 1000 on a spread of 1, where moving the sums to a new mean cancels
    /// most digits): 1e-9 relative in f64, 1e-3 in f32.
    fn running_sums_match_fresh_sums<T: Real>(tolerance: f64) {
        let dims = Dims::new(32, 2, 12, 12);
        let kernel = crate::Kernel::rbf(T::from_f64(1.5)).unwrap();
        let params = Params::new().kernel(kernel).nu(T::from_f64(1e-3)).seed(3).check().unwrap();
        let centres: std::vec::Vec<T> = (0..24).map(|i| T::from_f64(((i * 7) % 11) as f64 / 5.0 - 1.0)).collect();
        let mut w =
            SlklWindow::new_in(vec![T::ZERO; dims.window_scalars()], vec![0; dims.indices()], dims, params, &centres)
                .unwrap();
        let mut fresh = w.clone();
        let mut compared = 0;
        for t in 0..300usize {
            let x = [((t * 13) % 29) as f64 / 14.5 - 1.0, ((t * 5) % 17) as f64 / 8.5 - 1.0];
            let y = 1000.0 + (3.0 * x[0]).sin() * x[1] + 0.01 * (t % 7) as f64;
            w.push(&[T::from_f64(x[0]), T::from_f64(x[1])], T::from_f64(y)).unwrap();
            if t % 40 >= 30 {
                continue; // a burst of arrivals without steps
            }
            w.step().unwrap();
            if t % 9 == 0 && w.engine.running > 0 {
                fresh.clone_from(&w);
                fresh.engine.stale_cty = true;
                fresh.engine.stale = true;
                let (a, b) = (w.objective().unwrap().to_f64(), fresh.objective().unwrap().to_f64());
                assert!((a - b).abs() <= tolerance * b.abs().max(1.0), "objective at {t}: {a} vs {b}");
                // The model's coefficients `z` (a prediction adds them to the offset of 1000,
                // beside which a difference would round away).
                let z = w.dims.region(Region::Z);
                let (za, zb) = (&w.scalars[z.clone()][..w.engine.set.len], &fresh.scalars[z][..w.engine.set.len]);
                let scale = zb.iter().fold(0.0f64, |m, v| m.max(v.to_f64().abs()));
                for (a, b) in za.iter().zip(zb) {
                    let (a, b) = (a.to_f64(), b.to_f64());
                    assert!((a - b).abs() <= tolerance * scale, "z at {t}: {a} vs {b}");
                }
                compared += 1;
            }
        }
        assert!(compared > 10 && w.stats().steps > 200);
    }

    #[test]
    fn running_sums_match_fresh_sums_f64() {
        running_sums_match_fresh_sums::<f64>(1e-9);
    }

    #[test]
    fn running_sums_match_fresh_sums_f32() {
        running_sums_match_fresh_sums::<f32>(1e-3);
    }

    /// Buffers a previous learner used hold other values: the new learner must not see
    /// them (found by fuzzing the checkpoints: a restored stream diverged from its copy).
    #[test]
    fn a_learner_in_used_buffers_is_the_learner_in_fresh_ones() {
        let dims = Dims::new(4, 1, 2, 2);
        let params = Params::new().check().unwrap();
        let build = |fill: f64, index: usize| {
            SlklWindow::new_in(
                vec![fill; dims.window_scalars()],
                vec![index; dims.indices()],
                dims,
                params,
                &[0.0, 1.0],
            )
            .unwrap()
        };
        let (mut fresh, mut used) = (build(0.0, 0), build(3.5, 1));
        for t in 0..7 {
            for w in [&mut fresh, &mut used] {
                w.push(&[t as f64 * 0.3], (t as f64).sin()).unwrap();
                w.step().unwrap();
            }
        }
        assert_eq!((fresh.storage(), fresh.state()), (used.storage(), used.state()));
    }
}
