//! [`P2Quantile`]: the `q`-quantile of a stream of numbers in constant memory, by the P²
//! algorithm (Jain & Chlamtac, "The P² algorithm for dynamic calculation of quantiles and
//! histograms without storing observations", CACM 28(10), 1985).
//!
//! Five markers hold heights `h_0 ≤ … ≤ h_4` at positions `n_0 < … < n_4` (1-based ranks
//! among the observations so far): the minimum, the `q/2`, `q` and `(1+q)/2` quantiles and
//! the maximum. Each observation moves the positions of the markers above it by one and
//! their desired positions `n'_i` by `dn_i = (0, q/2, q, (1+q)/2, 1)`; a middle marker more
//! than one rank from its desired position moves one rank toward it, its height by the
//! piecewise-parabolic (P²) formula
//!
//! ```text
//! h_i ← h_i + d/(n_{i+1} − n_{i−1}) · [ (n_i − n_{i−1} + d)(h_{i+1} − h_i)/(n_{i+1} − n_i)
//!                                    + (n_{i+1} − n_i − d)(h_i − h_{i−1})/(n_i − n_{i−1}) ],   d = ±1
//! ```
//!
//! or linearly, `h_i + d·(h_{i+d} − h_i)/(n_{i+d} − n_i)`, when the parabola would leave
//! `(h_{i−1}, h_{i+1})`. The estimate is `h_2`. Until five observations, it is the exact
//! quantile of those seen (the lower one of the two around rank `q·(count − 1)`).
//!
//! **Memory**: five heights, five ranks, five desired ranks; no history is kept or sorted.
//! Ranks count in `u64` and desired ranks in `f64`, so a long stream in `f32` keeps its
//! ranks exact.

use crate::{Error, Real};

/// The increments of the desired positions for quantile `q`.
fn increments(q: f64) -> [f64; 5] {
    [0.0, q / 2.0, q, (1.0 + q) / 2.0, 1.0]
}

/// The running `q`-quantile of the numbers observed.
///
/// # Examples
/// ```
/// use kestrel_core::novelty::P2Quantile;
/// let mut median = P2Quantile::<f64>::new(0.5)?;
/// for i in 0..1001 {
///     median.observe(f64::from((i * 7919) % 1001))?; // 0..=1000 in a scrambled order
/// }
/// assert!((median.value().unwrap() - 500.0).abs() < 10.0);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct P2Quantile<T> {
    q: f64,
    heights: [T; 5],
    ranks: [u64; 5],
    desired: [f64; 5],
    count: u64,
}

impl<T: Real> P2Quantile<T> {
    /// An estimator of the `q`-quantile, `0 < q < 1`.
    ///
    /// # Errors
    /// `InvalidParam { name: "q" }` outside `(0, 1)`.
    pub fn new(q: f64) -> Result<Self, Error> {
        if !(q > 0.0 && q < 1.0) {
            return Err(Error::InvalidParam { name: "q" });
        }
        let desired = [1.0, 1.0 + 2.0 * q, 1.0 + 4.0 * q, 3.0 + 2.0 * q, 5.0];
        Ok(P2Quantile { q, heights: [T::ZERO; 5], ranks: [1, 2, 3, 4, 5], desired, count: 0 })
    }

    /// The quantile estimated, `q`.
    pub fn q(&self) -> f64 {
        self.q
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds an observation.
    ///
    /// # Errors
    /// `NonFinite` for NaN or ±∞ (the estimator is unchanged).
    #[allow(clippy::indexing_slicing, reason = "constant indices 0..5 and k ≤ 3 on arrays of 5")]
    pub fn observe(&mut self, x: T) -> Result<(), Error> {
        if !x.is_finite() {
            return Err(Error::NonFinite);
        }
        if self.count < 5 {
            self.insert_sorted(x);
            self.count += 1;
            return Ok(());
        }
        let h = &mut self.heights;
        let k = if x < h[0] {
            h[0] = x;
            0
        } else if x >= h[4] {
            h[4] = x;
            3
        } else {
            // h[0] ≤ x < h[4]: the cell whose lower marker is the last one ≤ x.
            (1..4).take_while(|&i| h[i] <= x).count()
        };
        for rank in self.ranks.iter_mut().skip(k + 1) {
            *rank += 1;
        }
        for (desired, step) in self.desired.iter_mut().zip(increments(self.q)) {
            *desired += step;
        }
        for i in 1..4 {
            self.adjust(i);
        }
        self.count += 1;
        Ok(())
    }

    /// The estimate, `None` before the first observation.
    pub fn value(&self) -> Option<T> {
        match self.count {
            0 => None,
            n @ 1..5 => {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 ≤ q·(n − 1) < 4")]
                let rank = (self.q * (n - 1) as f64) as usize;
                self.heights.get(rank).copied()
            }
            _ => self.heights.get(2).copied(),
        }
    }

    /// `true` for a state [`observe`](Self::observe) can reach (a restored one is checked
    /// with this): `q` in `(0, 1)`; the heights observed finite and in order; past five
    /// observations, ranks rising strictly from 1 to the count (before, the initial ones).
    pub(super) fn is_consistent(&self) -> bool {
        let seen = usize::try_from(self.count.min(5)).unwrap_or(5);
        let heights = self.heights.get(..seen).unwrap_or_default();
        let ordered = heights.windows(2).all(|pair| matches!(pair, [a, b] if a <= b));
        let finite = heights.iter().all(|h| h.is_finite()) && self.desired.iter().all(|d| d.is_finite());
        let ranks = (self.count < 5 && self.ranks == [1, 2, 3, 4, 5])
            || (self.count >= 5
                && self.ranks.first() == Some(&1)
                && self.ranks.last() == Some(&self.count)
                && self.ranks.windows(2).all(|pair| matches!(pair, [a, b] if a < b)));
        self.q > 0.0 && self.q < 1.0 && ordered && finite && ranks
    }

    /// Puts `x` among the first `count` heights, in order.
    #[allow(clippy::indexing_slicing, reason = "1 ≤ i ≤ n ≤ 4 on an array of 5")]
    fn insert_sorted(&mut self, x: T) {
        let n = usize::try_from(self.count).unwrap_or(4).min(4);
        let mut i = n;
        while i > 0 && self.heights[i - 1] > x {
            self.heights[i] = self.heights[i - 1];
            i -= 1;
        }
        self.heights[i] = x;
    }

    /// Moves marker `i` (1..=3) one rank toward its desired position when it is more than
    /// one rank away and the move keeps the ranks distinct.
    #[allow(clippy::indexing_slicing, reason = "1 ≤ i ≤ 3: i − 1, i, i + 1 index arrays of 5")]
    fn adjust(&mut self, i: usize) {
        let (n, h) = (&mut self.ranks, &mut self.heights);
        let offset = self.desired[i] - n[i] as f64;
        let up = offset >= 1.0 && n[i + 1] - n[i] > 1;
        let down = offset <= -1.0 && n[i] - n[i - 1] > 1;
        if !(up || down) {
            return;
        }
        let d: i64 = if up { 1 } else { -1 };
        let rank = |j: usize| n[j] as f64;
        let (below, at, above) = (rank(i - 1), rank(i), rank(i + 1));
        let df = d as f64;
        let parabolic = h[i].to_f64()
            + df / (above - below)
                * ((at - below + df) * (h[i + 1].to_f64() - h[i].to_f64()) / (above - at)
                    + (above - at - df) * (h[i].to_f64() - h[i - 1].to_f64()) / (at - below));
        let height = if h[i - 1].to_f64() < parabolic && parabolic < h[i + 1].to_f64() {
            parabolic
        } else {
            let j = if up { i + 1 } else { i - 1 };
            h[i].to_f64() + df * (h[j].to_f64() - h[i].to_f64()) / (rank(j) - at)
        };
        h[i] = T::from_f64(height);
        n[i] = n[i].saturating_add_signed(d);
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::Rng;

    /// The exact `q`-quantile of `values` (the lower one around rank `q·(n − 1)`).
    fn exact(values: &[f64], q: f64) -> f64 {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted[(q * (sorted.len() - 1) as f64) as usize]
    }

    fn tracks_the_exact_quantile<T: Real>() {
        let mut rng = Rng::seed_from_u64(5);
        for q in [0.5, 0.9, 0.99] {
            for (name, draw) in [
                ("uniform", (|r: &mut Rng| r.next_f64()) as fn(&mut Rng) -> f64),
                ("normal", |r: &mut Rng| r.normal::<f64>()),
                ("exponential", |r: &mut Rng| -(1.0 - r.next_f64()).ln()),
            ] {
                let mut estimator = P2Quantile::<T>::new(q).unwrap();
                let values: Vec<f64> = (0..20_000).map(|_| T::from_f64(draw(&mut rng)).to_f64()).collect();
                for &v in &values {
                    estimator.observe(T::from_f64(v)).unwrap();
                }
                let (estimate, truth) = (estimator.value().unwrap().to_f64(), exact(&values, q));
                // Within a percentile of rank of the true quantile.
                let rank_error = (exact(&values, (q - 0.01).max(0.0)) - truth)
                    .abs()
                    .max((exact(&values, (q + 0.01).min(1.0)) - truth).abs());
                assert!(
                    (estimate - truth).abs() <= rank_error,
                    "{name} q = {q}: {estimate} vs {truth} (±{rank_error})"
                );
                assert_eq!(estimator.count(), 20_000);
            }
        }
    }

    fn few_observations_and_bad_input<T: Real>() {
        assert_eq!(P2Quantile::<T>::new(0.0).err(), Some(Error::InvalidParam { name: "q" }));
        assert_eq!(P2Quantile::<T>::new(f64::NAN).err(), Some(Error::InvalidParam { name: "q" }));
        let mut median = P2Quantile::<T>::new(0.5).unwrap();
        assert_eq!(median.value(), None);
        for (x, want) in [(3.0, 3.0), (1.0, 1.0), (2.0, 2.0), (5.0, 2.0)] {
            median.observe(T::from_f64(x)).unwrap();
            assert_eq!(median.value(), Some(T::from_f64(want)));
        }
        assert!(median.is_consistent());
        let mut disordered = median;
        disordered.heights.swap(0, 3);
        assert!(!disordered.is_consistent());
        let mut ranks = median;
        ranks.ranks[1] = 7;
        assert!(!ranks.is_consistent());
        let before = median;
        assert_eq!(median.observe(T::from_f64(f64::NAN)), Err(Error::NonFinite));
        assert_eq!(median.observe(T::from_f64(f64::INFINITY)), Err(Error::NonFinite));
        assert_eq!(median, before);
        // A constant stream's quantile is the constant.
        let mut constant = P2Quantile::<T>::new(0.9).unwrap();
        for _ in 0..100 {
            constant.observe(T::from_f64(2.5)).unwrap();
        }
        assert_eq!(constant.value(), Some(T::from_f64(2.5)));
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn tracks_the_exact_quantile() {
                    super::tracks_the_exact_quantile::<$scalar>();
                }
                #[test]
                fn few_observations_and_bad_input() {
                    super::few_observations_and_bad_input::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
