//! Reduced sets: the few training points `Ã` whose kernel functions `K(·, x̃)` span a
//! nonlinear model (seed 003, Sect. 2.2 and 3.1).
//!
//! A reduced-kernel model `h(x) = Σ_j ũ_j K(x, x̃_j) + b` (eq. 13) needs only `|Ã|`
//! centres; the reduced kernel `K(A, Ã)` is the Nyström approximation of the full one
//! (eq. 10-11). Three ways of choosing `Ã`:
//!
//! - [`select_random`]: a uniform random subset (the plain RSVM default), the baseline.
//! - [`Irsvm`]: Algorithm 1 of the paper (IRSVM). A random candidate `x_j` joins when its
//!   kernel column `K(A, x_j)` is at distance `r ≥ δ` from the column space of `K(A, Ã)`
//!   (eq. 25-28), computed through an updatable Cholesky factor of `K(A, Ã)ᵀK(A, Ã)`.
//! - [`StreamingSelector`]: for a stream, where `A` is never whole: the distance of
//!   `φ(x)` to the span of `φ(Ã)` in feature space, `k(x,x) − kᵀK(Ã,Ã)⁻¹k`, through an
//!   updatable Cholesky factor of `K(Ã, Ã)`.
//!
//! The trained classifier, `h(x) = Σ_j u_j K(x, x̃_j) + b` with only the centres, the
//! kernel and the coefficients, is a [`ReducedKernelModel`]; [`mapreduce`] combines several,
//! one per part of the data, by a linear model on their decision values (seed 003 §5).

mod irsvm;
pub mod mapreduce;
mod model;
mod streaming;

pub use irsvm::{Irsvm, IrsvmParams, SelectionStop, ValidIrsvmParams};
pub use mapreduce::MapReduceModel;
pub use model::ReducedKernelModel;
pub use streaming::{Offer, StreamingSelector};

use crate::storage::check_capacity;
use crate::{Error, Rng};

/// Fills `out` with `out.len()` distinct indices drawn uniformly from `0..n`, in the
/// order drawn (Floyd's algorithm; O(m²) comparisons, no extra memory).
///
/// # Errors
/// `CapacityExceeded` when more indices are asked than `n` holds (`out` untouched).
///
/// # Examples
/// ```
/// use kestrel_core::{reduced_set::select_random, Rng};
/// let mut centres = [0usize; 5];
/// select_random(100, &mut Rng::seed_from_u64(1), &mut centres)?;
/// assert!(centres.iter().all(|&i| i < 100));
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn select_random(n: usize, rng: &mut Rng, out: &mut [usize]) -> Result<(), Error> {
    let m = out.len();
    check_capacity(m, n)?;
    // Floyd: for j in n−m..n, draw t in 0..=j; take t unless taken, else take j.
    for (filled, j) in (n - m..n).enumerate() {
        let t = rng.below(j + 1);
        let (taken, rest) = out.split_at_mut(filled);
        if let Some(slot) = rest.first_mut() {
            *slot = if taken.contains(&t) { j } else { t };
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_subsets_are_distinct_and_uniform() {
        let mut rng = Rng::seed_from_u64(4);
        let mut counts = [0usize; 10];
        for _ in 0..3000 {
            let mut out = [0usize; 3];
            select_random(10, &mut rng, &mut out).unwrap();
            assert!(out[0] != out[1] && out[1] != out[2] && out[0] != out[2]);
            for i in out {
                counts[i] += 1;
            }
        }
        assert!(counts.iter().all(|&c| (800..1000).contains(&c)), "{counts:?}");
        let mut all = [0usize; 4];
        select_random(4, &mut rng, &mut all).unwrap();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 3]);
        let mut too_many = [7usize; 5];
        assert_eq!(select_random(4, &mut rng, &mut too_many), Err(Error::CapacityExceeded { needed: 5, capacity: 4 }));
        assert_eq!(too_many, [7; 5]);
    }
}
