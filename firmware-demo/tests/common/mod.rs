//! Dense references for the on-device tests, written here from the textbook formulas and
//! computed in `f64`, independently of the kestrel-core code under test: a row-major
//! Cholesky factorization and SPD solve, matrix products, and tolerance helpers. Matrices
//! are at most [`MAX`] × [`MAX`] so every buffer is a fixed array on the stack.

#![allow(dead_code)] // each test binary uses a different part

/// Largest order of a reference matrix.
pub const MAX: usize = 24;

/// A row-major `n × n` matrix of `f64`, `n ≤ MAX`.
#[derive(Clone, Copy, Debug)]
pub struct Dense {
    pub n: usize,
    pub a: [f64; MAX * MAX],
}

impl Dense {
    /// The `n × n` zero matrix.
    pub fn zeros(n: usize) -> Self {
        Dense { n: n.min(MAX), a: [0.0; MAX * MAX] }
    }
    /// The identity.
    pub fn identity(n: usize) -> Self {
        let mut m = Self::zeros(n);
        for i in 0..m.n {
            m.set(i, i, 1.0);
        }
        m
    }
    /// Entry `(i, j)`.
    pub fn get(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }
    /// Sets entry `(i, j)`.
    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] = v;
    }
    /// Adds `v` to entry `(i, j)`.
    pub fn add(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] += v;
    }
    /// `L·Lᵀ` of a packed lower triangle (`L[i][j]` at `i(i+1)/2 + j`), as the core stores it.
    pub fn from_packed_product<T: Copy + Into<f64>>(packed: &[T], n: usize) -> Self {
        let l = |i: usize, j: usize| if j <= i { packed[i * (i + 1) / 2 + j].into() } else { 0.0 };
        let mut m = Self::zeros(n);
        for i in 0..n {
            for j in 0..n {
                m.set(i, j, (0..n).map(|k| l(i, k) * l(j, k)).sum());
            }
        }
        m
    }
    /// Largest absolute entry.
    pub fn max_abs(&self) -> f64 {
        self.a[..self.n * self.n].iter().fold(0.0, |m, v| if v.abs() > m { v.abs() } else { m })
    }
    /// Largest absolute entry of `self − other`.
    pub fn max_diff(&self, other: &Dense) -> f64 {
        let mut m: f64 = 0.0;
        for i in 0..self.n {
            for j in 0..self.n {
                let d = (self.get(i, j) - other.get(i, j)).abs();
                m = if d > m { d } else { m };
            }
        }
        m
    }
    /// The textbook Cholesky–Banachiewicz factor `L` (row-major, upper part 0), or `None`
    /// when a pivot is not positive.
    pub fn cholesky(&self) -> Option<Dense> {
        let n = self.n;
        let mut l = Dense::zeros(n);
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..j).map(|k| l.get(i, k) * l.get(j, k)).sum();
                if i == j {
                    let d = self.get(i, i) - s;
                    if d <= 0.0 {
                        return None;
                    }
                    l.set(i, i, libm::sqrt(d));
                } else {
                    l.set(i, j, (self.get(i, j) - s) / l.get(j, j));
                }
            }
        }
        Some(l)
    }
    /// `x = A⁻¹b` for SPD `A` through [`cholesky`](Self::cholesky).
    pub fn solve(&self, b: &[f64]) -> Option<[f64; MAX]> {
        let n = self.n;
        let l = self.cholesky()?;
        let mut x = [0.0; MAX];
        for i in 0..n {
            let s: f64 = (0..i).map(|k| l.get(i, k) * x[k]).sum();
            x[i] = (b[i] - s) / l.get(i, i);
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| l.get(k, i) * x[k]).sum();
            x[i] = (x[i] - s) / l.get(i, i);
        }
        Some(x)
    }
}

/// `Σ aᵢbᵢ` in `f64`.
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `|a − b| ≤ tol·max(1, |b|)`.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    let scale = if b.abs() > 1.0 { b.abs() } else { 1.0 };
    (a - b).abs() <= tol * scale
}

/// Widens an `f32` slice into a fixed `f64` array (first `MAX·MAX` entries).
pub fn widen(values: &[f32]) -> [f64; MAX * MAX] {
    let mut out = [0.0; MAX * MAX];
    for (o, &v) in out.iter_mut().zip(values) {
        *o = f64::from(v);
    }
    out
}
