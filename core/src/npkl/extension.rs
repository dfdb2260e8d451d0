//! Out-of-sample extension (Sect. III-E): a column for a new point without retraining.
//!
//! The training columns `V_I` stay as learned; a new point `x` joins the graph as an
//! unconstrained vertex, and its column minimises `tr([V_I, v] L [V_I, v]ᵀ)` over `v`
//! alone, which is eq. (13):
//!
//! ```text
//! v = −(1/L_xx) Σ_j L_xj v_j = (1/(1+δ)) Σ_{j∈N(x)} S_xj/√(d_x d_j) · v_j
//! ```
//!
//! **Convention** for the new row of `L`: `N(x)` are the `k` nearest training points
//! (exact, ties to the lower index), `S_xj = exp(−‖x − x_j‖²/(2σ²))` with the graph's `σ`,
//! `d_x = Σ_{j∈N(x)} S_xj`, and `d_j` the training degrees — the in-sample graph does not
//! change, as the paper assumes, so new points are independent of each other and of their
//! order. Under the linear loss the column is projected on `‖v‖ ≤ b`, as in-sample ones.
//!
//! For a training point `i` whose graph row is exactly its own `k` nearest neighbours (no
//! point outside them has `i` among its neighbours), [`Extension::column_excluding`]`(x_i, i)`
//! is the in-sample update (13) of column `i`: at convergence it returns `v_i` for an
//! unconstrained `i`.
//!
//! Cost per point: `O(n·d)` for the exact neighbour search (brute force) and `O(k·r)` for
//! the column. **Memory**: `k` scalars and `k` `u32` of scratch
//! ([`Extension::scalars_len`], [`Extension::indices_len`]), which also keep the last
//! point's neighbours.

use crate::linalg::{axpy_prefix, dot_prefix, squared_distance_prefix};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

use super::graph::LaplacianView;
use super::params::Embedding;
use crate::kernel::point_count;
use crate::neighbors::offer;

/// Columns for new points by eq. (13) against a learned [`Embedding`].
///
/// # Examples
/// ```
/// use kestrel_core::npkl::{Constraints, Extension, GraphParams, Laplacian, Loss, Npkl, NpklParams};
/// use kestrel_core::Rng;
/// let points: Vec<f64> = (0..30).map(|i| (i as f64 * 0.7).sin()).collect(); // 15 × 2
/// let (n, k, r) = (15, 3, 2);
/// let graph = Laplacian::build_in(vec![0.0; Laplacian::scalars_len(n, k)], vec![0; Laplacian::indices_len(n, k)],
///     &points, 2, GraphParams::new().neighbors(k).check()?)?;
/// let none = Constraints::new_in(vec![0; Constraints::indices_len(n, 0)], n, &[])?;
/// let mut rng = Rng::seed_from_u64(2);
/// let npkl = Npkl::new_in(vec![0.0; Npkl::scalars_len(n, r, 0)], vec![0; n], graph.view(), none.view(),
///     NpklParams::new(r, Loss::Square).check()?, &mut rng)?;
/// let mut ext = Extension::new_in([0.0; 3], [0u32; 3], graph.view(), &points, 2, npkl.embedding())?;
/// let mut v = [0.0; 2];
/// ext.column(&[0.1, 0.2], &mut v)?;
/// assert_eq!(ext.neighbours().len(), 3);
/// assert!(ext.column(&[0.1], &mut v).is_err()); // wrong dimension
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Extension<'a, T, S, I> {
    graph: LaplacianView<'a, T>,
    points: &'a [T],
    dim: usize,
    embedding: Embedding<'a, T>,
    distances: S,
    neighbours: I,
    found: usize,
}

impl Extension<'static, (), (), ()> {
    /// Scalars of the distance scratch: `k`.
    pub const fn scalars_len(k: usize) -> usize {
        k
    }

    /// `u32` entries of the neighbour scratch: `k`.
    pub const fn indices_len(k: usize) -> usize {
        k
    }

    /// Bytes of both scratch buffers for scalar `T`.
    pub const fn bytes<T>(k: usize) -> usize {
        let values = Self::scalars_len(k).saturating_mul(core::mem::size_of::<T>());
        values.saturating_add(Self::indices_len(k).saturating_mul(4))
    }
}

impl<'a, T: Real, S: Storage<T>, I: Storage<u32>> Extension<'a, T, S, I> {
    /// An extension over the training `points` (row-major, `dim` columns) the graph was
    /// built from, and the learned `embedding`.
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for `dim = 0`; `DimensionMismatch` when `points` is
    /// not `n` rows of `dim` or the embedding has another `n`; `NonFinite` for NaN/∞
    /// points; `CapacityExceeded` when a scratch holds fewer than `k`.
    pub fn new_in(
        distances: S,
        neighbours: I,
        graph: LaplacianView<'a, T>,
        points: &'a [T],
        dim: usize,
        embedding: Embedding<'a, T>,
    ) -> Result<Self, Error> {
        let n = point_count(points, dim)?;
        crate::error::check_len(graph.n(), n)?;
        crate::error::check_len(graph.n(), embedding.n())?;
        check_capacity(graph.k(), distances.as_ref().len())?;
        check_capacity(graph.k(), neighbours.as_ref().len())?;
        Ok(Extension { graph, points, dim, embedding, distances, neighbours, found: 0 })
    }

    /// The column of a new point `x` (`dim` coordinates) into `out` (`r` scalars).
    ///
    /// # Errors
    /// `DimensionMismatch` when `x.len() ≠ dim` or `out.len() ≠ r`; `NonFinite` for NaN/∞
    /// in `x`. Nothing is written on error.
    pub fn column(&mut self, x: &[T], out: &mut [T]) -> Result<(), Error> {
        self.extend(x, None, out)
    }

    /// As [`column`](Self::column), leaving training point `skip` out of the neighbour
    /// search (the leave-one-out column of a training point).
    ///
    /// # Errors
    /// As [`column`](Self::column); `IndexOutOfRange` for `skip ≥ n`.
    pub fn column_excluding(&mut self, x: &[T], skip: usize, out: &mut [T]) -> Result<(), Error> {
        if skip >= self.graph.n() {
            return Err(Error::IndexOutOfRange { index: skip, len: self.graph.n() });
        }
        self.extend(x, Some(skip), out)
    }

    /// The training points found nearest to the last point extended, nearest first.
    pub fn neighbours(&self) -> &[u32] {
        self.neighbours.as_ref().get(..self.found).unwrap_or_default()
    }

    fn extend(&mut self, x: &[T], skip: Option<usize>, out: &mut [T]) -> Result<(), Error> {
        crate::error::check_len(self.dim, x.len())?;
        crate::error::check_len(self.embedding.rank(), out.len())?;
        check_finite(x)?;
        let k = self.graph.k();
        // The constructor checked both scratch buffers for `k` entries.
        let idx = self.neighbours.as_mut().get_mut(..k).unwrap_or_default();
        let dist = self.distances.as_mut().get_mut(..k).unwrap_or_default();
        let mut len = 0;
        for ((j, j32), xj) in (0..).zip(0u32..).zip(self.points.chunks_exact(self.dim)) {
            if Some(j) != skip {
                len = offer(idx, dist, len, j32, squared_distance_prefix(x, xj));
            }
        }
        self.found = len;
        let sigma = self.graph.sigma();
        let scale = T::ONE / (sigma * sigma * T::from_f64(2.0));
        let (idx, dist) = (idx.get(..len).unwrap_or_default(), dist.get_mut(..len).unwrap_or_default());
        for d in dist.iter_mut() {
            *d = (-*d * scale).exp(); // now S_xj
        }
        let degree = dist.iter().fold(T::ZERO, |acc, &w| acc + w);
        out.fill(T::ZERO);
        if degree > T::ZERO {
            let root = degree.sqrt();
            for (&j, &w) in idx.iter().zip(dist.iter()) {
                let dj = self.graph.degree(j as usize).unwrap_or(T::ONE);
                let vj = self.embedding.column(j as usize).unwrap_or(&[]);
                axpy_prefix((w / root) / dj.sqrt(), vj, out);
            }
        }
        let diagonal = self.graph.diagonal();
        out.iter_mut().for_each(|v| *v /= diagonal);
        if let Some(bound) = self.embedding.bound() {
            let norm = dot_prefix(out, out).sqrt();
            if norm > bound {
                let shrink = bound / norm;
                out.iter_mut().for_each(|v| *v *= shrink);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use crate::npkl::testing::{blobs, drawn, graph};
    use crate::npkl::{Loss, Npkl, NpklParams};
    use std::vec;

    macro_rules! gen_tests {
        ($($name:ident: $t:ty),*) => {$(
            #[test]
            fn $name() {
                type T = $t;
                let (points, labels) = blobs::<T>(6, 15);
                let (n, k, r) = (45, 4, 3);
                let g = graph(&points, 2, k);
                let t = drawn(&labels, 6, 6, 2);
                let mut rng = Rng::seed_from_u64(4);
                let mut npkl = Npkl::new_in(vec![0.0; Npkl::scalars_len(n, r, t.max_degree())], vec![0; n],
                    g.view(), t.view(), NpklParams::new(r, Loss::Hinge).check().unwrap(), &mut rng).unwrap();
                npkl.sweep(&mut rng);
                // Unconstrained points whose row is exactly their own k nearest neighbours.
                let plain: std::vec::Vec<usize> = (0..n)
                    .filter(|&i| g.row(i).unwrap().0.len() == k && t.partners(i).unwrap().count() == 0)
                    .collect();
                assert!(plain.len() > 3);
                let mut compared = 0;
                for &i in &plain {
                    let mut out = [0.0 as T; 3];
                    let x = &points[2 * i..2 * i + 2];
                    {
                        let mut ext = Extension::new_in([0.0; 4], [0u32; 4], g.view(), &points, 2, npkl.embedding()).unwrap();
                        ext.column_excluding(x, i, &mut out).unwrap();
                        assert_eq!(ext.neighbours(), g.row(i).unwrap().0);
                        assert_eq!(ext.column(&[0.0], &mut out.clone()), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
                        assert_eq!(ext.column(&[T::NAN, 0.0], &mut out.clone()), Err(Error::NonFinite));
                        assert_eq!(ext.column_excluding(x, n, &mut out.clone()), Err(Error::IndexOutOfRange { index: n, len: n }));
                        assert_eq!(ext.column(x, &mut [0.0; 2]), Err(Error::DimensionMismatch { expected: 3, got: 2 }));
                    }
                    let update = npkl.update_column(i).unwrap();
                    let v = npkl.column(i).unwrap();
                    if update.accepted {
                        compared += 1;
                        for (a, b) in out.iter().zip(v) {
                            assert!((a - b).abs() <= 1e2 * T::EPSILON * (1.0 + b.abs()), "{i}: {out:?} vs {v:?}");
                        }
                    }
                }
                assert!(compared > 3);
                let r = Extension::new_in([0.0; 3], [0u32; 4], g.view(), &points, 2, npkl.embedding());
                assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: 4, capacity: 3 }));
                let r = Extension::new_in([0.0; 4], [0u32; 4], g.view(), &points[..88], 2, npkl.embedding());
                assert_eq!(r.err(), Some(Error::DimensionMismatch { expected: 45, got: 44 }));
            }
        )*};
    }

    gen_tests!(leave_one_out_is_the_in_sample_update_f32: f32, leave_one_out_is_the_in_sample_update_f64: f64);
}
