//! SLKL (seed 001) against dense `f64` references: objective, derivatives and factor
//! (`dense`), accuracy of the maintained factor over 10⁵ steps in `f32` (`drift`), the
//! sliding window against a batch learner on the same samples (`window`), shrinking
//! (`shrinking`), accuracy on the sinc task against dense KRR (`accuracy`), bad input
//! (`errors`).

mod accuracy;
mod dense;
mod drift;
mod errors;
mod shrinking;
mod window;

use kestrel_core::Real;
use kestrel_core::slkl::{Candidates, Dims, Slkl, ValidParams};
use kestrel_tests::{DenseSlkl, Regression, lower_factor_packed};
use nalgebra::DMatrix;

/// A learner in `Vec` buffers on `task`'s training samples.
fn learner<'d, T: Real>(
    task: &'d Regression<T>,
    dims: Dims,
    params: ValidParams<T>,
    candidates: Candidates<'_, T>,
) -> Slkl<'d, T, Vec<T>, Vec<usize>> {
    Slkl::new_in(
        vec![T::ZERO; Slkl::scalars_len(dims)],
        vec![0; Slkl::indices_len(dims)],
        dims,
        params,
        &task.x,
        &task.y,
        candidates,
    )
    .expect("valid configuration")
}

/// `μ` of every candidate, in `f64`.
fn weights<T: Real>(slkl: &Slkl<'_, T, Vec<T>, Vec<usize>>) -> Vec<f64> {
    (0..slkl.candidates_len()).map(|m| slkl.weight(m).expect("in range").to_f64()).collect()
}

/// The candidate centres, row-major.
fn centres<T: Real>(slkl: &Slkl<'_, T, Vec<T>, Vec<usize>>) -> Vec<T> {
    (0..slkl.candidates_len()).flat_map(|m| slkl.centre(m).expect("in range").to_vec()).collect()
}

/// The dense reference of `slkl`'s problem.
fn dense_of<T: Real>(
    slkl: &Slkl<'_, T, Vec<T>, Vec<usize>>,
    task: &Regression<T>,
    params: &ValidParams<T>,
) -> DenseSlkl {
    DenseSlkl::new(
        &params.kernel(),
        &task.x,
        &task.y,
        task.dim,
        &centres(slkl),
        params.lambda().to_f64(),
        params.nu().to_f64(),
    )
}

/// `(L·Lᵀ, L)` of a learner's packed factor of dimension `k`.
fn factor_of<T: Real>(packed: &[T], k: usize) -> (DMatrix<f64>, DMatrix<f64>) {
    let l = lower_factor_packed(packed, k);
    (&l * l.transpose(), l)
}
