//! [`RecentQuantile`]: the `q`-quantile of the recent numbers of a stream in constant
//! memory — two [`P2Quantile`]s in turn, so that an estimate forgets what came long ago (a
//! single P² estimator keeps every observation's weight forever: the quantile of a stream
//! whose scores drift would stay where they began).
//!
//! Observations go to the estimator being filled; when it holds `span` of them it becomes
//! the last full one and a fresh estimator starts. The value is the last full estimator's
//! (the filling one's until the first `span` observations): the `q`-quantile of the last
//! `span` observations as of the end of its epoch, at most `2·span` observations old.
//!
//! **Memory**: two P² estimators, a count.

use serde::{Deserialize, Serialize};

use super::P2Quantile;
use crate::{Error, Real};

/// The `q`-quantile of the last `span` to `2·span` numbers observed.
///
/// # Examples
/// ```
/// use kestrel_core::novelty::RecentQuantile;
/// let mut median = RecentQuantile::<f64>::new(0.5, 100)?;
/// for i in 0..1000 {
///     median.observe(f64::from(i))?; // a median that keeps rising
/// }
/// assert!((median.value().unwrap() - 950.0).abs() < 5.0); // that of 900..=999
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecentQuantile<T> {
    filling: P2Quantile<T>,
    full: Option<P2Quantile<T>>,
    span: u64,
    count: u64,
}

impl<T: Real> RecentQuantile<T> {
    /// An estimator of the `q`-quantile, `0 < q < 1`, over epochs of `span ≥ 1`
    /// observations.
    ///
    /// # Errors
    /// `InvalidParam { name: "q" }` outside `(0, 1)`; `InvalidParam { name: "span" }` for 0.
    pub fn new(q: f64, span: u64) -> Result<Self, Error> {
        if span == 0 {
            return Err(Error::InvalidParam { name: "span" });
        }
        Ok(RecentQuantile { filling: P2Quantile::new(q)?, full: None, span, count: 0 })
    }

    /// The quantile estimated, `q`.
    pub fn q(&self) -> f64 {
        self.filling.q()
    }

    /// Observations in an epoch.
    pub fn span(&self) -> u64 {
        self.span
    }

    /// Observations so far, all epochs together.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds an observation.
    ///
    /// # Errors
    /// `NonFinite` for NaN or ±∞ (the estimator is unchanged).
    pub fn observe(&mut self, x: T) -> Result<(), Error> {
        self.filling.observe(x)?;
        self.count = self.count.saturating_add(1);
        if self.filling.count() >= self.span {
            let fresh = P2Quantile::new(self.filling.q())?;
            self.full = Some(core::mem::replace(&mut self.filling, fresh));
        }
        Ok(())
    }

    /// The estimate (module doc), `None` before the first observation.
    pub fn value(&self) -> Option<T> {
        self.full.as_ref().unwrap_or(&self.filling).value()
    }

    /// `true` for a state [`observe`](Self::observe) can reach: both estimators
    /// consistent and of one `q`, the filling one short of `span`, the full one at it.
    pub(super) fn is_consistent(&self) -> bool {
        let full = self
            .full
            .as_ref()
            .is_none_or(|full| full.is_consistent() && full.q() == self.filling.q() && full.count() == self.span);
        let filling = self.filling.count();
        let counted = match self.full {
            None => self.count == filling,
            Some(_) => self.count >= filling.saturating_add(self.span),
        };
        self.span > 0 && self.filling.is_consistent() && filling < self.span && full && counted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A level that steps down: within two epochs the estimate is the new level's, where a
    /// single P² estimator stays at the old one.
    fn follows_a_stream_that_moves<T: Real>() {
        let mut recent = RecentQuantile::<T>::new(0.9, 200).unwrap();
        let mut forever = P2Quantile::<T>::new(0.9).unwrap();
        let mut rng = crate::Rng::seed_from_u64(4);
        for i in 0..4000 {
            let level = if i < 3000 { 10.0 } else { 0.0 };
            let x = T::from_f64(level + rng.next_f64());
            recent.observe(x).unwrap();
            forever.observe(x).unwrap();
        }
        let (recent, forever) = (recent.value().unwrap().to_f64(), forever.value().unwrap().to_f64());
        assert!((recent - 0.9).abs() < 0.05, "{recent}");
        assert!(forever > 10.0, "{forever}");
    }

    fn epochs_and_bad_input<T: Real>() {
        assert_eq!(RecentQuantile::<T>::new(0.5, 0).err(), Some(Error::InvalidParam { name: "span" }));
        assert_eq!(RecentQuantile::<T>::new(1.5, 10).err(), Some(Error::InvalidParam { name: "q" }));
        let mut median = RecentQuantile::<T>::new(0.5, 3).unwrap();
        assert_eq!(median.value(), None);
        for (x, want) in [(5.0, 5.0), (1.0, 1.0), (3.0, 3.0), (100.0, 3.0), (200.0, 3.0), (300.0, 200.0)] {
            median.observe(T::from_f64(x)).unwrap();
            assert_eq!(median.value(), Some(T::from_f64(want)), "after {x}");
            assert!(median.is_consistent());
        }
        assert_eq!(median.count(), 6);
        let before = median;
        assert_eq!(median.observe(T::from_f64(f64::NAN)), Err(Error::NonFinite));
        assert_eq!(median, before);
        let mut wrong = median;
        wrong.count = 2;
        assert!(!wrong.is_consistent());
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn follows_a_stream_that_moves() {
                    super::follows_a_stream_that_moves::<$scalar>();
                }
                #[test]
                fn epochs_and_bad_input() {
                    super::epochs_and_bad_input::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
