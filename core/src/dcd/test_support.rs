//! Synthetic problems and from-scratch checks shared by the unit tests of `dcd`.

use std::vec;
use std::vec::Vec;

use super::online_ovr::OnlineOneVsRest;
use super::params::{Loss, Params, ValidParams};
use super::rows::{DenseRows, Rows, SparseRows};
use super::sweep::Sweep;
use crate::{Real, Rng};

/// A random binary problem: `n` rows of `dim` features, about `density` of them non-zero,
/// labelled by a random hyperplane with 10 % of the labels flipped (not separable).
pub(crate) struct Synthetic<T> {
    pub(crate) dim: usize,
    pub(crate) dense: Vec<T>,
    pub(crate) offsets: Vec<usize>,
    pub(crate) indices: Vec<u32>,
    pub(crate) values: Vec<T>,
    pub(crate) labels: Vec<i32>,
}

impl<T: Real> Synthetic<T> {
    pub(crate) fn new(seed: u64, n: usize, dim: usize, density: f64) -> Self {
        let mut rng = Rng::seed_from_u64(seed);
        let normal: Vec<f64> = (0..dim).map(|_| rng.normal()).collect();
        let mut data = Synthetic {
            dim,
            dense: Vec::new(),
            offsets: std::vec![0],
            indices: Vec::new(),
            values: Vec::new(),
            labels: Vec::new(),
        };
        for _ in 0..n {
            let mut side = 0.3;
            for (j, &wj) in normal.iter().enumerate() {
                let x = if rng.next_f64() < density { rng.normal::<f64>() } else { 0.0 };
                side += wj * x;
                data.dense.push(T::from_f64(x));
                if x != 0.0 {
                    data.indices.push(j as u32);
                    data.values.push(T::from_f64(x));
                }
            }
            data.offsets.push(data.indices.len());
            let flip = rng.next_f64() < 0.1;
            data.labels.push(if (side > 0.0) != flip { 1 } else { -1 });
        }
        data
    }

    pub(crate) fn dense_rows(&self) -> DenseRows<'_, T> {
        DenseRows::new(&self.dense, self.dim).unwrap()
    }

    pub(crate) fn sparse_rows(&self) -> SparseRows<'_, T> {
        SparseRows::new(self.dim, &self.offsets, &self.indices, &self.values).unwrap()
    }
}

/// `ŵ = Σ yᵢαᵢx̂ᵢ` from scratch, in f64: `d` weights then the bias weight.
pub(crate) fn weights_from_alpha<T: Real>(
    rows: &impl Rows<T>,
    signs: impl Fn(usize) -> f64,
    alpha: &[T],
    bias: T,
) -> Vec<f64> {
    let mut w = std::vec![0.0; rows.dim() + 1];
    for (i, &a) in alpha.iter().enumerate() {
        let mut xi = std::vec![T::ZERO; rows.dim()];
        rows.row(i).write_dense(&mut xi);
        let ya = signs(i) * a.to_f64();
        for (wj, x) in w.iter_mut().zip(&xi) {
            *wj += ya * x.to_f64();
        }
        w[rows.dim()] += ya * bias.to_f64();
    }
    w
}

/// The largest KKT violation at `α` with gradient `Gᵢ = yᵢŵᵀx̂ᵢ − 1 + Dᵢᵢαᵢ` from scratch:
/// `−Gᵢ` at `αᵢ = 0`, `Gᵢ` at `αᵢ = U`, `|Gᵢ|` inside; also checks `0 ≤ αᵢ ≤ U`.
pub(crate) fn kkt_violation<T: Real>(
    rows: &impl Rows<T>,
    signs: impl Fn(usize) -> f64,
    alpha: &[T],
    params: &ValidParams<T>,
) -> f64 {
    let w = weights_from_alpha(rows, &signs, alpha, params.bias());
    let mut worst: f64 = 0.0;
    for (i, &a) in alpha.iter().enumerate() {
        let y = signs(i);
        let coordinate = params.coordinate(T::from_f64(y));
        let (a, upper) = (a.to_f64(), coordinate.upper.to_f64());
        assert!((0.0..=upper).contains(&a), "α_{i} = {a} outside [0, {upper}]");
        let mut xi = std::vec![T::ZERO; rows.dim()];
        rows.row(i).write_dense(&mut xi);
        let wx: f64 =
            xi.iter().zip(&w).map(|(x, w)| x.to_f64() * w).sum::<f64>() + w[rows.dim()] * params.bias().to_f64();
        let g = y * wx - 1.0 + coordinate.diagonal.to_f64() * a;
        let violation = if a == 0.0 {
            -g
        } else if a == upper {
            g
        } else {
            g.abs()
        };
        worst = worst.max(violation);
    }
    worst
}

/// A one-vs-rest learner in host memory.
pub(crate) type VecOvr<T> = OnlineOneVsRest<T, Vec<T>, Vec<Sweep<T>>>;

pub(crate) fn ovr_params<T: Real>(loss: Loss) -> ValidParams<T> {
    Params::new().loss(loss).c(T::from_f64(0.5)).class_weights(T::ONE, T::from_f64(0.7)).bias(T::ONE).check().unwrap()
}

/// `classes` Gaussian blobs of unit spread in `dim` features, their centres drawn with
/// spread `apart` (1.5: close enough that one-vs-rest keeps stepping).
pub(crate) fn blobs<T: Real>(n: usize, dim: usize, classes: usize, seed: u64, apart: f64) -> (Vec<Vec<T>>, Vec<usize>) {
    let mut rng = Rng::seed_from_u64(seed);
    let centres: Vec<Vec<f64>> =
        (0..classes).map(|_| (0..dim).map(|_| apart * rng.normal::<f64>()).collect()).collect();
    let classes_of: Vec<usize> = (0..n).map(|i| (i * 7 + i / 3) % classes).collect();
    let rows = classes_of
        .iter()
        .map(|&c| centres[c].iter().map(|&m| T::from_f64(m + rng.normal::<f64>())).collect())
        .collect();
    (rows, classes_of)
}

pub(crate) fn ovr_learner<T: Real>(
    window: usize,
    dim: usize,
    classes: usize,
    loss: Loss,
    decay: Option<f64>,
) -> VecOvr<T> {
    let scalars = vec![T::ZERO; OnlineOneVsRest::scalars_len(window, dim, classes, decay.is_some())];
    let decay = decay.map(T::from_f64);
    OnlineOneVsRest::new_in(scalars, vec![Sweep::new(); classes], window, dim, ovr_params(loss), 6, decay).unwrap()
}
