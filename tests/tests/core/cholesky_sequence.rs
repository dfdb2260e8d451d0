//! A long random sequence of append / remove / update / downdate on a 64-capacity factor,
//! checked against the directly assembled matrix and nalgebra's fresh factorization.
//!
//! The assembled matrix is `A = A₀ + Σ xxᵀ` over the update vectors still active: a
//! downdate removes one earlier update vector (as a sliding window does), so `A` stays
//! positive definite and the test exercises accuracy, not the rejection path. `A₀` is the
//! Gram matrix `FFᵀ + I` of feature rows that come and go with append and remove, so its
//! eigenvalues stay in `[1, 1 + ‖F‖²]` however long the sequence (random triangular
//! growth would instead make it exponentially ill-conditioned). Every input is rounded to
//! the scalar under test first, so the `f64` reference sees exactly what the core saw.

use kestrel_core::cholesky::Cholesky;
use kestrel_core::{Real, Rng};
use kestrel_tests::{lower_factor, reconstruct, relative_error};
use nalgebra::{DMatrix, DVector};

const CAPACITY: usize = 64;
const OPERATIONS: usize = 10_000;
const FEATURES: usize = 16;

/// `x` rounded to `T` and back.
fn round<T: Real>(x: f64) -> f64 {
    T::from_f64(x).to_f64()
}

fn to_scalars<'a, T: Real>(values: impl IntoIterator<Item = &'a f64>) -> Vec<T> {
    values.into_iter().map(|&v| T::from_f64(v)).collect()
}

struct Reference {
    features: Vec<DVector<f64>>,
    base: DMatrix<f64>,
    active: Vec<DVector<f64>>,
}

impl Reference {
    fn new<T: Real>(rng: &mut Rng, n: usize) -> Self {
        let features: Vec<_> = (0..n).map(|_| random_feature(rng)).collect();
        let base = DMatrix::from_fn(n, n, |i, j| round::<T>(features[i].dot(&features[j]) + f64::from(i == j)));
        Reference { features, base, active: Vec::new() }
    }

    fn assembled(&self) -> DMatrix<f64> {
        self.active.iter().fold(self.base.clone(), |a, x| a + x * x.transpose())
    }

    /// A new last row and column of `A` for the feature `f`, rounded to `T`.
    fn append<T: Real>(&mut self, f: DVector<f64>) -> Vec<f64> {
        let k = self.features.len();
        let column: Vec<f64> =
            self.features.iter().map(|g| g.dot(&f)).chain([f.dot(&f) + 1.0]).map(round::<T>).collect();
        let mut grown = self.base.clone().insert_row(k, 0.0).insert_column(k, 0.0);
        for (i, &c) in column.iter().enumerate() {
            grown[(k, i)] = c;
            grown[(i, k)] = c;
        }
        self.base = grown;
        self.features.push(f);
        for x in &mut self.active {
            *x = x.clone().insert_row(k, 0.0);
        }
        // The active vectors are zero in the new coordinate, so A's new column is the base's.
        column
    }

    fn remove(&mut self, i: usize) {
        self.features.remove(i);
        self.base = self.base.clone().remove_row(i).remove_column(i);
        for x in &mut self.active {
            *x = x.clone().remove_row(i);
        }
    }
}

fn random_feature(rng: &mut Rng) -> DVector<f64> {
    DVector::from_fn(FEATURES, |_, _| 0.3 * rng.normal::<f64>())
}

/// Runs the sequence; returns (worst relative error of `LLᵀ` at the checkpoints, the
/// relative error of `L` against nalgebra's factor at the end, counts of each operation).
fn run<T: Real>(seed: u64) -> (f64, f64, [usize; 4]) {
    let mut rng = Rng::seed_from_u64(seed);
    let n0 = 32;
    let mut reference = Reference::new::<T>(&mut rng, n0);
    let a0: Vec<T> = to_scalars(reference.base.iter()); // symmetric: column-major = row-major
    let mut chol = Cholesky::from_matrix_in(vec![T::ZERO; Cholesky::scalars_len(CAPACITY)], CAPACITY, &a0, n0).unwrap();
    let mut counts = [0usize; 4];
    let mut worst = 0.0f64;
    for step in 1..=OPERATIONS {
        let k = chol.dim();
        match rng.below(4) {
            0 if k < CAPACITY => {
                let column = reference.append::<T>(random_feature(&mut rng));
                chol.append_column(&to_scalars::<T>(&column)).unwrap();
                counts[0] += 1;
            }
            1 if k > 8 => {
                let i = rng.below(k);
                chol.remove_column(i).unwrap();
                reference.remove(i);
                counts[1] += 1;
            }
            2 if reference.active.len() < 24 => {
                let x = DVector::from_fn(k, |_, _| round::<T>(0.4 * rng.normal::<f64>()));
                chol.rank_one_update(&to_scalars::<T>(x.iter()), T::ONE).unwrap();
                reference.active.push(x);
                counts[2] += 1;
            }
            3 if !reference.active.is_empty() => {
                let x = reference.active.swap_remove(rng.below(reference.active.len()));
                chol.rank_one_update(&to_scalars::<T>(x.iter()), -T::ONE).unwrap();
                counts[3] += 1;
            }
            _ => {}
        }
        if step % 1000 == 0 {
            worst = worst.max(relative_error(&reconstruct(&chol), &reference.assembled()));
        }
    }
    let fresh = reference.assembled().cholesky().expect("assembled matrix is SPD").l();
    (worst, relative_error(&lower_factor(&chol), &fresh), counts)
}

macro_rules! sequence_tests {
    ($($name:ident: $t:ty, $tol:expr;)*) => {$(
        #[test]
        fn $name() {
            for seed in [1, 2] {
                let (worst, factor_error, counts) = run::<$t>(seed);
                println!("{}: seed {seed}: LLᵀ error {worst:.3e}, L error {factor_error:.3e}, ops {counts:?}", stringify!($t));
                assert!(counts.iter().all(|&c| c > 1500), "every operation exercised: {counts:?}");
                assert!(worst < $tol, "relative error of LLᵀ {worst:e} ≥ {:e}", $tol);
                assert!(factor_error < 10.0 * $tol, "L differs from nalgebra's: {factor_error:e}");
            }
        }
    )*};
}

sequence_tests! {
    ten_thousand_operations_f64: f64, 1e-10;
    ten_thousand_operations_f32: f32, 1e-4;
}
