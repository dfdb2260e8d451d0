//! Dense reference solutions for Kestrel's integration tests and benchmarks.
//!
//! Everything here allocates freely and uses nalgebra's dense decompositions: it is the
//! yardstick the allocation-free core is measured against, never part of the product.
//! [`libsvm`] reads the shared datasets and [`linear`] trains the core's linear SVMs on
//! them as LIBLINEAR's command line does.

pub mod libsvm;
pub mod linear;

use kestrel_core::{Cholesky, Kernel, Real, Rng};
use nalgebra::DMatrix;

/// `n` points in `dim` dimensions, uniform in `[0, 1)`, row-major.
pub fn uniform_points<T: Real>(rng: &mut Rng, n: usize, dim: usize) -> Vec<T> {
    (0..n * dim).map(|_| rng.uniform()).collect()
}

/// The dense kernel (Gram) matrix of row-major `points`, in `f64`.
pub fn gram_matrix<T: Real>(kernel: &Kernel<T>, points: &[T], dim: usize) -> DMatrix<f64> {
    let n = points.len() / dim;
    let p = |i: usize| &points[i * dim..(i + 1) * dim];
    DMatrix::from_fn(n, n, |i, j| kernel.eval(p(i), p(j)).expect("equal dimensions").to_f64())
}

/// A random symmetric positive-definite `n × n` matrix `BBᵀ/n + shift·I` in `f64`.
pub fn random_spd(rng: &mut Rng, n: usize, shift: f64) -> DMatrix<f64> {
    let b = DMatrix::from_fn(n, n, |_, _| rng.normal::<f64>());
    &b * b.transpose() / n as f64 + DMatrix::identity(n, n) * shift
}

/// `L·Lᵀ` of a core factor, in `f64`.
pub fn reconstruct<T: Real, S: kestrel_core::storage::Storage<T>>(chol: &Cholesky<T, S>) -> DMatrix<f64> {
    let l = lower_factor(chol);
    &l * l.transpose()
}

/// The factor `L` of a core Cholesky as a dense `f64` matrix.
pub fn lower_factor<T: Real, S: kestrel_core::storage::Storage<T>>(chol: &Cholesky<T, S>) -> DMatrix<f64> {
    let k = chol.dim();
    DMatrix::from_fn(k, k, |i, j| chol.get(i, j).expect("inside k × k").to_f64())
}

/// `‖a − b‖_F / ‖b‖_F`.
pub fn relative_error(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).norm() / b.norm()
}
