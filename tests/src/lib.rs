//! Dense reference solutions for Kestrel's integration tests and benchmarks.
//!
//! Everything here allocates freely and uses nalgebra's dense decompositions: it is the
//! yardstick the allocation-free core is measured against, never part of the product.
//! [`libsvm`] reads the shared datasets and [`linear`] trains the core's linear SVMs on
//! them as LIBLINEAR's command line does.

pub mod libsvm;
pub mod linear;

use kestrel_core::{Cholesky, Kernel, Real, Rng};
use nalgebra::{DMatrix, DVector};

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

/// A regression task: training samples and targets, test samples and targets, row-major.
#[derive(Clone, Debug)]
pub struct Regression<T> {
    /// Training samples, `n × dim`.
    pub x: Vec<T>,
    /// Training targets.
    pub y: Vec<T>,
    /// Test samples.
    pub x_test: Vec<T>,
    /// Test targets.
    pub y_test: Vec<T>,
    /// Features per sample.
    pub dim: usize,
}

/// `sin‖x‖/‖x‖` (1 at the origin).
pub fn sinc(x: &[f64]) -> f64 {
    let r = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    if r == 0.0 { 1.0 } else { r.sin() / r }
}

/// The *sinc* task of seed 001 Sect. 5.1 (and `seeds/INDEX.md`): `x` uniform in `[−5, 5]²`,
/// target `sin‖x‖/‖x‖`; white Gaussian noise on the `n` training targets at a measured SNR
/// of 10 dB (noise variance = mean of the squared clean targets / 10, as MATLAB's
/// `awgn(y, 10, 'measured')`); `n_test` noise-free test points. Generated in `f64` from
/// `seed`, then rounded to `T`.
pub fn sinc_task<T: Real>(seed: u64, n: usize, n_test: usize) -> Regression<T> {
    let mut rng = Rng::seed_from_u64(seed);
    let mut points = |count: usize| -> Vec<f64> { (0..2 * count).map(|_| rng.uniform_in(-5.0, 5.0)).collect() };
    let x = points(n);
    let x_test = points(n_test);
    let clean: Vec<f64> = x.chunks(2).map(sinc).collect();
    let power = clean.iter().map(|v| v * v).sum::<f64>() / n as f64;
    let sd = (power / 10.0).sqrt();
    let y: Vec<f64> = clean.iter().map(|v| v + sd * rng.normal::<f64>()).collect();
    let y_test: Vec<f64> = x_test.chunks(2).map(sinc).collect();
    let cast = |v: &[f64]| v.iter().map(|&a| T::from_f64(a)).collect::<Vec<T>>();
    Regression { x: cast(&x), y: cast(&y), x_test: cast(&x_test), y_test: cast(&y_test), dim: 2 }
}

/// Rows of a row-major `T` matrix as `f64` slices' owner.
fn rows_f64<T: Real>(points: &[T], dim: usize) -> Vec<Vec<f64>> {
    points.chunks(dim).map(|p| p.iter().map(|v| v.to_f64()).collect()).collect()
}

/// The same kernel with `f64` parameters.
pub fn kernel_f64<T: Real>(kernel: &Kernel<T>) -> Kernel<f64> {
    match kernel.kind() {
        kestrel_core::KernelKind::Rbf { gamma } => Kernel::rbf(gamma.to_f64()),
        kestrel_core::KernelKind::Laplacian { gamma } => Kernel::laplacian(gamma.to_f64()),
        kestrel_core::KernelKind::Polynomial { degree, gamma, coef0 } => {
            Kernel::polynomial(degree, gamma.to_f64(), coef0.to_f64())
        }
        kestrel_core::KernelKind::Linear => Ok(Kernel::linear()),
    }
    .expect("valid kernel")
}

/// `k(a, b)` in `f64`.
fn eval(kernel: &Kernel<f64>, a: &[f64], b: &[f64]) -> f64 {
    kernel.eval(a, b).expect("equal dimensions")
}

/// Dense kernel ridge regression on all training points, targets centred by their mean:
/// predictions `ȳ + k(x)ᵀ(K + λI)⁻¹(y − ȳ)` at the test points, in `f64`.
pub fn krr_predictions<T: Real>(
    kernel: &Kernel<T>,
    x: &[T],
    y: &[T],
    dim: usize,
    lambda: f64,
    x_test: &[T],
) -> Vec<f64> {
    let kernel = &kernel_f64(kernel);
    let train = rows_f64(x, dim);
    let n = train.len();
    let mean = y.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
    let k = DMatrix::from_fn(n, n, |i, j| eval(kernel, &train[i], &train[j]) + if i == j { lambda } else { 0.0 });
    let yc = DVector::from_iterator(n, y.iter().map(|v| v.to_f64() - mean));
    let alpha = k.cholesky().expect("K + λI is SPD").solve(&yc);
    rows_f64(x_test, dim)
        .iter()
        .map(|t| mean + train.iter().zip(alpha.iter()).map(|(xi, a)| a * eval(kernel, xi, t)).sum::<f64>())
        .collect()
}

/// Mean squared error of `predictions` against `targets`.
pub fn mse<T: Real>(predictions: &[f64], targets: &[T]) -> f64 {
    let sum: f64 = predictions.iter().zip(targets).map(|(p, t)| (p - t.to_f64()).powi(2)).sum();
    sum / targets.len() as f64
}

/// SLKL's quantities computed densely in `f64` (seed 001 eq. 1-3, 14, 20-23): the
/// reference the core's incremental computations are checked against.
#[derive(Clone, Debug)]
pub struct DenseSlkl {
    /// All candidate columns `c_m = K(·, s_m)/√k(s_m, s_m)`, `n × M`.
    pub c: DMatrix<f64>,
    /// Centred targets.
    pub y: DVector<f64>,
    /// `λ`.
    pub lambda: f64,
    /// `ν`.
    pub nu: f64,
}

impl DenseSlkl {
    /// The columns of `centres` against the samples `x`; `y` is centred by its mean.
    pub fn new<T: Real>(kernel: &Kernel<T>, x: &[T], y: &[T], dim: usize, centres: &[T], lambda: f64, nu: f64) -> Self {
        let kernel = &kernel_f64(kernel);
        let samples = rows_f64(x, dim);
        let centres = rows_f64(centres, dim);
        let c = DMatrix::from_fn(samples.len(), centres.len(), |i, m| {
            let s = &centres[m];
            eval(kernel, &samples[i], s) / eval(kernel, s, s).sqrt()
        });
        let n = samples.len();
        let mean = y.iter().map(|v| v.to_f64()).sum::<f64>() / n as f64;
        let y = DVector::from_iterator(n, y.iter().map(|v| v.to_f64() - mean));
        DenseSlkl { c, y, lambda, nu }
    }

    /// `K_λ = λI + Σ μ_m c_m c_mᵀ`.
    pub fn k_lambda(&self, mu: &[f64]) -> DMatrix<f64> {
        let n = self.c.nrows();
        let scaled = DMatrix::from_fn(n, mu.len(), |i, m| self.c[(i, m)] * mu[m]);
        &scaled * self.c.transpose() + DMatrix::identity(n, n) * self.lambda
    }

    /// `K_λ⁻¹y`.
    fn k_inv_y(&self, mu: &[f64]) -> DVector<f64> {
        self.k_lambda(mu).cholesky().expect("K_λ is SPD").solve(&self.y)
    }

    /// `F(μ) = yᵀ(I + K~(μ)/λ)⁻¹y + νΣμ` (eq. 14).
    pub fn objective(&self, mu: &[f64]) -> f64 {
        self.lambda * self.y.dot(&self.k_inv_y(mu)) + self.nu * mu.iter().sum::<f64>()
    }

    /// `(a, b) = (yᵀK_λ⁻¹c_m, c_mᵀK_λ⁻¹c_m)` for every `m` (eq. 20-21).
    pub fn coordinates(&self, mu: &[f64]) -> Vec<(f64, f64)> {
        let chol = self.k_lambda(mu).cholesky().expect("K_λ is SPD");
        let r = chol.solve(&self.y);
        let kc = chol.solve(&self.c);
        (0..self.c.ncols()).map(|m| (self.c.column(m).dot(&r), self.c.column(m).dot(&kc.column(m)))).collect()
    }

    /// `(∂F/∂μ_m, ∂²F/∂μ_m²) = (ν − λa², 2λa²b)` for every `m` (eq. 20-21 with `p = 2`).
    pub fn derivatives(&self, mu: &[f64]) -> Vec<(f64, f64)> {
        self.coordinates(mu)
            .into_iter()
            .map(|(a, b)| {
                let la2 = self.lambda * a * a;
                (self.nu - la2, 2.0 * la2 * b)
            })
            .collect()
    }

    /// `H = D⁻¹ + CᵀC/λ` over `active` (in that order).
    pub fn h_matrix(&self, mu: &[f64], active: &[usize]) -> DMatrix<f64> {
        let k = active.len();
        DMatrix::from_fn(k, k, |p, q| {
            let (i, j) = (active[p], active[q]);
            let cc = self.c.column(i).dot(&self.c.column(j)) / self.lambda;
            cc + if p == q { 1.0 / mu[i] } else { 0.0 }
        })
    }

    /// The fitted values on the training points, `K~(K~ + λI)⁻¹y` (eq. 15-17), centred.
    pub fn fitted(&self, mu: &[f64]) -> DVector<f64> {
        &self.y - self.k_inv_y(mu) * self.lambda
    }
}

/// The lower factor `L` held as a packed row-major triangle of dimension `k`.
pub fn lower_factor_packed<T: Real>(packed: &[T], k: usize) -> DMatrix<f64> {
    DMatrix::from_fn(k, k, |i, j| if j > i { 0.0 } else { packed[i * (i + 1) / 2 + j].to_f64() })
}
