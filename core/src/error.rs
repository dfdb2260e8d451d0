//! The one error type of the core.
//!
//! Every fallible call in `kestrel-core` returns `Result<_, Error>`. An `Error` is small,
//! `Copy` and carries the numbers that explain it, so it can travel through an embedded
//! log line as easily as through `anyhow` on a host. A call that returns an `Error` has left
//! the structure it was called on exactly as it was.

use core::fmt;

/// What went wrong in a call to the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A structure or buffer is too small: `needed` items were required, `capacity` are
    /// available. Items are scalars for storage buffers and rows/columns for factors.
    CapacityExceeded {
        /// Items the call required.
        needed: usize,
        /// Items available.
        capacity: usize,
    },
    /// A slice or dimension did not have the length the call requires.
    DimensionMismatch {
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// An input contained NaN or ±∞, or values so large that a computation on them
    /// (a squared norm, a kernel value) overflowed.
    NonFinite,
    /// A matrix is not (numerically) positive definite: the Schur complement at `pivot`
    /// is not larger than the rounding error of its diagonal.
    NotPositiveDefinite {
        /// Row/column index (0-based) at which positive definiteness is lost.
        pivot: usize,
    },
    /// A triangular system has a zero (or non-finite) diagonal entry at `pivot`.
    Singular {
        /// Row index (0-based) of the offending diagonal entry.
        pivot: usize,
    },
    /// A parameter is out of its valid range; `name` says which.
    InvalidParam {
        /// The parameter's name as it appears in the API.
        name: &'static str,
    },
    /// Model bytes were rejected (see [`ModelError`](crate::model::ModelError)).
    Model(crate::model::ModelError),
    /// An index is outside `0..len`.
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// The number of valid indices.
        len: usize,
    },
    /// A training label is not one the model accepts (±1 for a binary classifier,
    /// `0..k` for `k` classes); `row` is its 0-based row.
    InvalidLabel {
        /// Row of the offending label.
        row: usize,
    },
    /// An iteration that always converges on finite input did not within its cap.
    NotConverged {
        /// Iterations (sweeps, passes) run.
        iterations: usize,
    },
    /// A Krylov iteration could not continue at `step`: Lanczos found an invariant
    /// subspace of the start vector smaller than the eigenpairs asked for, or conjugate
    /// gradients met `pᵀAp ≤ 0` or `rᵀM⁻¹r < 0` (an operator or preconditioner that is not
    /// positive definite).
    Breakdown {
        /// The iteration (0-based) at which it happened.
        step: usize,
    },
    /// An operator taken to be symmetric is not: at Lanczos step `step` its product had a
    /// component along an earlier basis vector that symmetry rules out.
    NotSymmetric {
        /// The iteration (0-based) at which it was detected.
        step: usize,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::CapacityExceeded { needed, capacity } => {
                write!(f, "capacity exceeded: needs {needed}, has {capacity}")
            }
            Error::DimensionMismatch { expected, got } => {
                write!(f, "dimension mismatch: expected {expected}, got {got}")
            }
            Error::NonFinite => f.write_str("input contains NaN or infinity, or values large enough to overflow"),
            Error::NotPositiveDefinite { pivot } => {
                write!(f, "matrix is not positive definite (pivot {pivot})")
            }
            Error::Singular { pivot } => {
                write!(f, "triangular matrix is singular (diagonal {pivot})")
            }
            Error::InvalidParam { name } => write!(f, "invalid parameter `{name}`"),
            Error::Model(e) => write!(f, "{e}"),
            Error::IndexOutOfRange { index, len } => {
                write!(f, "index {index} out of range for length {len}")
            }
            Error::InvalidLabel { row } => write!(f, "invalid label at row {row}"),
            Error::NotConverged { iterations } => write!(f, "no convergence after {iterations} iterations"),
            Error::Breakdown { step } => write!(f, "Krylov iteration broke down at step {step}"),
            Error::NotSymmetric { step } => write!(f, "operator is not symmetric (detected at step {step})"),
        }
    }
}

impl core::error::Error for Error {}

/// Returns `DimensionMismatch` unless `got == expected`.
pub(crate) fn check_len(expected: usize, got: usize) -> Result<(), Error> {
    if expected == got { Ok(()) } else { Err(Error::DimensionMismatch { expected, got }) }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::string::ToString;

    #[test]
    fn display_names_the_numbers() {
        let e = Error::CapacityExceeded { needed: 10, capacity: 4 };
        assert_eq!(e.to_string(), "capacity exceeded: needs 10, has 4");
        let e = Error::NotPositiveDefinite { pivot: 3 };
        assert!(e.to_string().contains("pivot 3"));
        assert_eq!(Error::Breakdown { step: 4 }.to_string(), "Krylov iteration broke down at step 4");
        assert!(Error::NotSymmetric { step: 2 }.to_string().contains("not symmetric (detected at step 2)"));
        assert_eq!(check_len(2, 3), Err(Error::DimensionMismatch { expected: 2, got: 3 }));
        assert_eq!(check_len(2, 2), Ok(()));
    }
}
