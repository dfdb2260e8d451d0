//! Candidate renewal for the sliding-window learner: an inactive candidate's centre may
//! be replaced while the window learns, so that the candidates follow a stream that
//! moves (beyond the paper, whose candidates are fixed).
//!
//! A candidate `m` with `μ_m = 0` is in neither the factor of `H = D⁻¹ + CᵀC/λ` (over the
//! active columns) nor `z`, `r` or `F(μ)` (eq. 14, 22): only its column `c_m`, which the
//! next step that draws it computes from the centre (on the fly) or reads from the
//! precomputed store. Replacing its centre `s_m` therefore changes that column and
//! nothing else — the objective, the model and the factor stay as they are — and the
//! schedule starts afresh (shrinking pool refilled, stopping rule reset) so that the new
//! candidate is drawn and may enter by the usual step (eq. 27).
//!
//! Cost: O(d), plus `N` kernel evaluations to recompute the column when columns are
//! precomputed. No memory.

use crate::error::check_len;
use crate::real::check_finite;
use crate::storage::Storage;
use crate::{Error, Real};

use super::layout::{NONE, Region};
use super::window::{SlklWindow, split};

impl<T: Real, S: Storage<T>, I: Storage<usize>> SlklWindow<T, S, I> {
    /// The centre `s_m` of candidate `m` (`dim` features), `None` past the candidates.
    pub fn candidate(&self, m: usize) -> Option<&[T]> {
        let d = self.dims.dim();
        self.candidates().get(m * d..(m + 1) * d)
    }

    /// The centres of all candidates, row-major (`dim` values each).
    pub fn candidates(&self) -> &[T] {
        let live = self.engine.candidates * self.dims.dim();
        let centres = self.scalars.as_ref().get(self.dims.region(Region::Centres)).unwrap_or_default();
        centres.get(..live).unwrap_or(centres)
    }

    /// Replaces the centre of the inactive candidate `m` (`μ_m = 0`) by `centre` (module
    /// doc).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `m` past the candidates; `InvalidParam { name: "candidate" }`
    /// when `m` is active; `DimensionMismatch` when `centre.len() ≠ dim`; `NonFinite` for
    /// NaN/∞ in `centre` or its `k(s, s)`. The learner is unchanged on error.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::slkl::{Dims, Params, SlklWindow};
    /// const DIMS: Dims = Dims::new(32, 1, 4, 4);
    /// let params = Params::new().nu(1e-3).check()?;
    /// let mut scalars = vec![0.0; SlklWindow::scalars_len(DIMS)];
    /// let mut indices = vec![0; SlklWindow::indices_len(DIMS)];
    /// let centres = [0.0, 0.5, 1.0, 1.5];
    /// let mut window = SlklWindow::new_in(&mut scalars[..], &mut indices[..], DIMS, params, &centres)?;
    /// // The stream moves to [5, 6]: the candidates' centres follow it.
    /// for m in 0..4 {
    ///     window.replace_candidate(m, &[5.0 + 0.3 * m as f64])?;
    /// }
    /// for t in 0..64 {
    ///     let x = 5.0 + (t % 16) as f64 / 16.0;
    ///     window.push(&[x], x.sin())?;
    /// }
    /// window.run()?;
    /// assert!((window.predict(&[5.5])? - 5.5f64.sin()).abs() < 0.05);
    /// // An active candidate keeps its centre.
    /// let active = window.active()[0];
    /// assert!(window.replace_candidate(active, &[0.0]).is_err());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn replace_candidate(&mut self, m: usize, centre: &[T]) -> Result<(), Error> {
        let (d, candidates) = (self.dims.dim(), self.engine.candidates);
        if m >= candidates {
            return Err(Error::IndexOutOfRange { index: m, len: candidates });
        }
        check_len(d, centre.len())?;
        check_finite(centre)?;
        let kernel = self.engine.params.kernel();
        check_finite(&[kernel.diagonal(centre)])?;
        let len = self.len;
        let (parts, idx, xs, ys) = split(&self.dims, self.scalars.as_mut(), self.indices.as_mut());
        if idx.position.get(m) != Some(&NONE) {
            return Err(Error::InvalidParam { name: "candidate" });
        }
        if let Some(slot) = parts.centres.get_mut(m * d..(m + 1) * d) {
            slot.copy_from_slice(centre);
        }
        let (x, y) = (xs.get(..len * d).unwrap_or(&[]), ys.get(..len).unwrap_or(&[]));
        let data = super::columns::Data { x, y, dim: d, mean: T::ZERO };
        self.engine.columns.recompute(parts.cols, m, parts.centres, &kernel, &data);
        self.engine.schedule.reset();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::slkl::{Dims, Params};

    type VecWindow<T> = SlklWindow<T, Vec<T>, Vec<usize>>;

    fn window<T: Real>(dims: Dims, centres: &[T]) -> VecWindow<T> {
        let params = Params::new().nu(T::from_f64(1e-3)).check().unwrap();
        let (scalars, indices) = (vec![T::ZERO; SlklWindow::scalars_len(dims)], vec![0; SlklWindow::indices_len(dims)]);
        SlklWindow::new_in(scalars, indices, dims, params, centres).unwrap()
    }

    /// A window whose inactive candidate was renewed computes as one built with the new
    /// centre: the same derivatives for it (eq. 20-21), then the same model once both run.
    fn renewed_candidate_matches_a_fresh_window<T: Real>(dims: Dims) {
        let centres: Vec<T> = (0..6).map(|i| T::from_f64(f64::from(i) * 0.4)).collect();
        let mut renewed_centres = centres.clone();
        renewed_centres[4] = T::from_f64(3.3);
        let (mut renewed, mut fresh) = (window::<T>(dims, &centres), window::<T>(dims, &renewed_centres));
        for t in 0..30 {
            let x = f64::from(t % 12) * 0.3;
            let (x, y) = (T::from_f64(x), T::from_f64(x.sin()));
            renewed.push(&[x], y).unwrap();
            fresh.push(&[x], y).unwrap();
        }
        renewed.replace_candidate(4, &[T::from_f64(3.3)]).unwrap();
        let tolerance = 1e3 * T::EPSILON.to_f64();
        let close = |a: T, b: T| (a - b).abs().to_f64() <= tolerance * (1.0 + b.abs().to_f64());
        let ((a1, b1), (a2, b2)) = (renewed.derivatives(4).unwrap(), fresh.derivatives(4).unwrap());
        assert!(close(a1, a2) && close(b1, b2), "{a1} {b1} vs {a2} {b2}");
        renewed.run().unwrap();
        fresh.run().unwrap();
        for t in 0..20 {
            let x = [T::from_f64(f64::from(t) * 0.17)];
            let (a, b) = (renewed.predict(&x).unwrap(), fresh.predict(&x).unwrap());
            assert!((a - b).abs().to_f64() <= 1e-2, "{a} vs {b}");
        }
    }

    #[test]
    fn renewed_candidate_matches_a_fresh_window_f64() {
        renewed_candidate_matches_a_fresh_window::<f64>(Dims::new(24, 1, 6, 6));
        renewed_candidate_matches_a_fresh_window::<f64>(Dims::new(24, 1, 6, 6).precomputed());
    }

    #[test]
    fn renewed_candidate_matches_a_fresh_window_f32() {
        renewed_candidate_matches_a_fresh_window::<f32>(Dims::new(24, 1, 6, 6).precomputed());
    }

    #[test]
    fn refused_renewals_change_nothing() {
        let dims = Dims::new(8, 1, 3, 3).precomputed();
        // Candidate 2, far from every sample, never enters.
        let mut learner = window::<f64>(dims, &[0.0, 1.0, 50.0]);
        for t in 0..8 {
            learner.push(&[f64::from(t) * 0.25], f64::from(t)).unwrap();
        }
        learner.run().unwrap();
        let active = learner.active()[0];
        assert_eq!(learner.weight(2), Some(0.0));
        let before = (learner.storage().0.to_vec(), learner.storage().1.to_vec());
        for (m, centre, error) in [
            (3, vec![0.5], Error::IndexOutOfRange { index: 3, len: 3 }),
            (active, vec![0.5], Error::InvalidParam { name: "candidate" }),
            (2, vec![0.5, 0.5], Error::DimensionMismatch { expected: 1, got: 2 }),
            (2, vec![f64::NAN], Error::NonFinite),
        ] {
            assert_eq!(learner.replace_candidate(m, &centre), Err(error));
            assert_eq!((learner.storage().0, learner.storage().1), (&before.0[..], &before.1[..]));
        }
        learner.replace_candidate(2, &[0.6]).unwrap();
        assert_eq!(learner.candidate(2), Some(&[0.6][..]));
        assert_eq!(learner.candidate(3), None);
    }
}
