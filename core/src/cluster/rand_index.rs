//! The RAND index (Rand 1971), the clustering accuracy of seed 004, Sect. IV-A.
//!
//! Of the `n(n−1)/2` pairs of points, the share on which a clustering agrees with the true
//! classes: `(a + b) / (n(n−1)/2)`, where `a` counts pairs in the same class placed in the
//! same cluster and `b` pairs in different classes placed in different clusters. The
//! paper reports it as a percentage. Invariant to renaming clusters.
//!
//! Two ways to count: [`rand_index`] compares every pair (`O(n²)` time, no memory, any
//! labels with `==`); [`rand_index_table`] counts through the contingency table
//! (`O(n + c₁c₂)` time, `c₁c₂` counters of caller storage, labels `0..c`):
//! `a = Σ_ij C(n_ij, 2)`, and with `A = Σ_i C(n_i·, 2)`, `B = Σ_j C(n_·j, 2)`,
//! `N = C(n, 2)`: `RAND = (N − A − B + 2a)/N`.

use crate::Error;
use crate::error::check_len;
use crate::storage::check_capacity;

/// The RAND index of `predicted` against `truth`, in `[0, 1]`, by comparing all pairs.
///
/// # Errors
/// `DimensionMismatch` when the lengths differ; `InvalidParam { name: "labels" }` for
/// fewer than two points.
///
/// # Examples
/// ```
/// use kestrel_core::cluster::rand_index;
/// assert_eq!(rand_index(&[0, 0, 1, 1], &[5, 5, 2, 2])?, 1.0); // names do not matter
/// assert_eq!(rand_index(&[0, 0, 1, 1], &[0, 1, 0, 1])?, 2.0 / 6.0);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn rand_index<A: PartialEq, B: PartialEq>(truth: &[A], predicted: &[B]) -> Result<f64, Error> {
    check_len(truth.len(), predicted.len())?;
    let n = truth.len();
    if n < 2 {
        return Err(Error::InvalidParam { name: "labels" });
    }
    let mut agree = 0u64;
    for (i, (ti, pi)) in truth.iter().zip(predicted).enumerate() {
        for (tj, pj) in truth.iter().zip(predicted).skip(i + 1) {
            agree += u64::from((ti == tj) == (pi == pj));
        }
    }
    Ok(agree as f64 / pairs(n as u64) as f64)
}

/// The RAND index through the contingency table; labels are `0..c₁` and `0..c₂` with
/// `c₁`, `c₂` one more than the largest label, and `table` holds at least `c₁·c₂`
/// counters (overwritten).
///
/// # Errors
/// As [`rand_index`]; `CapacityExceeded` when `table` is shorter than `c₁·c₂`.
///
/// # Examples
/// ```
/// use kestrel_core::cluster::{rand_index, rand_index_table};
/// let (truth, predicted) = ([0u32, 0, 1, 1, 2], [1u32, 1, 0, 0, 0]);
/// let mut table = [0u64; 6];
/// assert_eq!(rand_index_table(&truth, &predicted, &mut table)?, rand_index(&truth, &predicted)?);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
pub fn rand_index_table(truth: &[u32], predicted: &[u32], table: &mut [u64]) -> Result<f64, Error> {
    check_len(truth.len(), predicted.len())?;
    let n = truth.len();
    if n < 2 {
        return Err(Error::InvalidParam { name: "labels" });
    }
    let rows = truth.iter().max().map_or(0, |&m| m as usize + 1);
    let cols = predicted.iter().max().map_or(0, |&m| m as usize + 1);
    check_capacity(rows.saturating_mul(cols), table.len())?;
    let table = table.get_mut(..rows * cols).unwrap_or_default();
    table.fill(0);
    for (&a, &b) in truth.iter().zip(predicted) {
        // `a < rows` and `b < cols`: the table holds every pair of labels.
        if let Some(count) = table.get_mut(a as usize * cols + b as usize) {
            *count += 1;
        }
    }
    let same_both: u128 = table.iter().map(|&c| pairs(c)).sum();
    let same_truth: u128 = table.chunks_exact(cols).map(|row| pairs(row.iter().sum())).sum();
    let same_predicted: u128 = (0..cols).map(|j| pairs(table.iter().skip(j).step_by(cols).sum())).sum();
    let total = pairs(n as u64);
    let agree = total + 2 * same_both - same_truth - same_predicted;
    Ok(agree as f64 / total as f64)
}

/// `C(c, 2)`, exact for every `u64`.
fn pairs(c: u64) -> u128 {
    let c = u128::from(c);
    c * c.saturating_sub(1) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_counted_cases() {
        // Classes {0,1,2}{3,4}, clusters {0,1}{2,3,4}.
        let truth = [0u32, 0, 0, 1, 1];
        let predicted = [0u32, 0, 1, 1, 1];
        // Pairs: (0,1) ss ✓, (0,2) sd ✗, (0,3) dd ✓, (0,4) dd ✓, (1,2) sd ✗, (1,3) dd ✓,
        // (1,4) dd ✓, (2,3) ds ✗, (2,4) ds ✗, (3,4) ss ✓  → 6/10.
        assert_eq!(rand_index(&truth, &predicted), Ok(0.6));
        let mut table = [0u64; 4];
        assert_eq!(rand_index_table(&truth, &predicted, &mut table), Ok(0.6));
        assert_eq!(rand_index(&truth, &truth), Ok(1.0));
        assert_eq!(rand_index(&[1, 2, 3], &[0, 0, 0]), Ok(0.0));
        assert_eq!(rand_index(&[1], &[0]), Err(Error::InvalidParam { name: "labels" }));
        assert_eq!(rand_index(&[1, 2], &[0]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(
            rand_index_table(&truth, &predicted, &mut table[..3]),
            Err(Error::CapacityExceeded { needed: 4, capacity: 3 })
        );
        assert_eq!((pairs(0), pairs(1), pairs(2), pairs(5)), (0, 0, 1, 10));
        assert_eq!(pairs(u64::MAX), u128::from(u64::MAX) * u128::from(u64::MAX - 1) / 2);
    }
}
