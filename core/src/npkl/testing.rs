//! Fixtures for the unit tests of the `npkl` modules and of the spectral methods on the
//! same graph.

extern crate std;
use std::vec;
use std::vec::Vec;

use crate::{Real, Rng};

use super::{Constraints, GraphParams, Laplacian};

/// `3·per` points in 2-D around three centres, and their classes.
pub fn blobs<T: Real>(seed: u64, per: usize) -> (Vec<T>, Vec<u32>) {
    let mut rng = Rng::seed_from_u64(seed);
    let centres = [(0.0, 0.0), (3.0, 0.0), (0.0, 3.0)];
    let mut points = Vec::new();
    let mut labels = Vec::new();
    for p in 0..3 * per {
        let (cx, cy) = centres[p % 3];
        points.push(T::from_f64(cx + 0.6 * rng.normal::<f64>()));
        points.push(T::from_f64(cy + 0.6 * rng.normal::<f64>()));
        labels.push((p % 3) as u32);
    }
    (points, labels)
}

pub type Graph<T> = Laplacian<T, Vec<T>, Vec<u32>>;

pub fn graph<T: Real>(points: &[T], dim: usize, k: usize) -> Graph<T> {
    let n = points.len() / dim;
    Laplacian::build_in(
        vec![T::ZERO; Laplacian::scalars_len(n, k)],
        vec![0; Laplacian::indices_len(n, k)],
        points,
        dim,
        GraphParams::new().neighbors(k).check().unwrap(),
    )
    .unwrap()
}

pub fn drawn(labels: &[u32], must: usize, cannot: usize, seed: u64) -> Constraints<Vec<u32>> {
    let n = labels.len();
    let mut rng = Rng::seed_from_u64(seed);
    Constraints::from_labels_in(vec![0; Constraints::indices_len(n, must + cannot)], labels, must, cannot, &mut rng)
        .unwrap()
}
