//! The kNN graph Laplacian of eq. (1): `L = (1+δ)I − D^{−1/2} S D^{−1/2}`, stored sparsely.
//!
//! `S_ij = exp(−‖x_i − x_j‖²/(2σ²))` when `j` is one of the `k` nearest neighbours of `i`
//! or `i` one of those of `j` (the symmetric "or" graph; ties broken by the lower index;
//! no self loops), 0 otherwise; `d_i = Σ_j S_ij` (eq. 1). Without self loops
//! `L_ii = 1 + δ` for every `i`, so only the off-diagonal entries
//! `L_ij = −S_ij/√(d_i d_j)` are stored, row by row (compressed sparse rows): row `i`
//! begins with its own `k` nearest neighbours, nearest first, followed by the points that
//! have `i` among theirs. An entry whose weight underflows to 0 is stored as 0. The
//! divisions are done in index order (`(S_ij/√d_min(i,j))/√d_max(i,j)`), so the stored
//! matrix is exactly symmetric.
//!
//! **Width.** By default `σ²` is the mean squared distance over the `n·k` directed kNN
//! edges (a typical edge weighs `e^{−1/2}`); [`GraphParams::sigma`] sets it instead. When
//! every kNN distance is 0 (or so small that `1/(2σ²)` overflows), `σ = 1`: the weights
//! are then 1, as any width gives for coinciding points.
//!
//! **Neighbour search** is exact either way:
//! - [`Search::BruteForce`]: every pair, `O(n²d)` time.
//! - [`Search::SortedProjection`] (default): the points are sorted along the coordinate of
//!   largest variance; each point scans outward in that order and stops when the gap along
//!   the axis alone exceeds its current `k`-th distance. Same neighbours as brute force
//!   (equal keys `(distance, index)`), `O(n log n + n·w·d)` where `w` is the number of
//!   points in the slab scanned — at worst `n` (the same `O(n²d)`), about `√(k·n)` for
//!   uniform 2-D data, which makes `n = 10⁵` take seconds instead of minutes. It helps
//!   little in high dimension (e.g. 64-D digits), where brute force is as fast.
//!
//! Symmetrisation costs `O(n·k²)`.
//!
//! **Memory** for `n` points and `k` neighbours: `2nk + n` scalars (entries of `L`, at most
//! `2nk` since every directed edge appears in two rows at most, and the degrees) —
//! [`Laplacian::scalars_len`]; `2nk + 2n + 1` `u32` (column indices, row offsets, and `n`
//! used while building) — [`Laplacian::indices_len`]. Indices are `u32`: `2nk` must fit.

#![allow(
    clippy::indexing_slicing,
    reason = "n points of k neighbours: lists of n·k, n + 1 row offsets up to 2nk, all in the storage build_in checked"
)]

use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

use crate::kernel::point_count;
use crate::neighbors::{Search, brute_force, sorted_projection};

/// Parameters of the graph, unchecked: `k`, the width `σ`, the shift `δ` and the search.
/// Build with [`GraphParams::new`] and the setters, then [`check`](GraphParams::check).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphParams<T> {
    neighbors: usize,
    sigma: Option<T>,
    delta: T,
    search: Search,
}

impl<T: Real> Default for GraphParams<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> GraphParams<T> {
    /// `k = 5` (the paper's setting for small data), automatic `σ`, `δ = 0.1`, sorted
    /// projection search.
    pub fn new() -> Self {
        GraphParams { neighbors: 5, sigma: None, delta: T::from_f64(0.1), search: Search::SortedProjection }
    }

    /// Number of nearest neighbours `k` (≥ 1, below the number of points).
    pub fn neighbors(mut self, k: usize) -> Self {
        self.neighbors = k;
        self
    }

    /// Gaussian width `σ` of `S_ij = exp(−‖x_i − x_j‖²/(2σ²))`, instead of the automatic one.
    pub fn sigma(mut self, sigma: T) -> Self {
        self.sigma = Some(sigma);
        self
    }

    /// The shift `δ > 0` of eq. (1) that keeps `L` nonsingular.
    pub fn delta(mut self, delta: T) -> Self {
        self.delta = delta;
        self
    }

    /// The neighbour search.
    pub fn search(mut self, search: Search) -> Self {
        self.search = search;
        self
    }

    /// The number of neighbours `k`.
    pub fn k(&self) -> usize {
        self.neighbors
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `neighbors` (`k = 0`), `sigma` (unless `σ`, `σ²` and
    /// `1/(2σ²)` are finite and positive) or `delta` (not finite and positive).
    pub fn check(self) -> Result<ValidGraphParams<T>, Error> {
        if self.neighbors == 0 {
            return Err(Error::InvalidParam { name: "neighbors" });
        }
        if let Some(s) = self.sigma {
            let s2 = s * s;
            let scale = T::ONE / (s2 + s2);
            if !(s > T::ZERO && s.is_finite() && s2 > T::ZERO && s2.is_finite() && scale.is_finite()) {
                return Err(Error::InvalidParam { name: "sigma" });
            }
        }
        if !(self.delta > T::ZERO && self.delta.is_finite()) {
            return Err(Error::InvalidParam { name: "delta" });
        }
        Ok(ValidGraphParams(self))
    }
}

/// Graph parameters that passed [`GraphParams::check`]; read-only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidGraphParams<T>(GraphParams<T>);

impl<T: Real> ValidGraphParams<T> {
    /// The number of neighbours `k ≥ 1`.
    pub fn k(&self) -> usize {
        self.0.neighbors
    }

    /// The Gaussian width `σ`, or `None` for the automatic one.
    pub fn sigma(&self) -> Option<T> {
        self.0.sigma
    }

    /// The shift `δ > 0`.
    pub fn delta(&self) -> T {
        self.0.delta
    }

    /// The neighbour search.
    pub fn search(&self) -> Search {
        self.0.search
    }
}

/// The sparse Laplacian `L` of eq. (1) over `n` points, in caller storage.
///
/// # Examples
/// ```
/// use kestrel_core::npkl::{GraphParams, Laplacian};
/// let points = [0.0f64, 0.1, 0.2, 5.0, 5.1, 5.3]; // six points on a line
/// let (n, k) = (6, 2);
/// let graph = Laplacian::build_in(
///     [0.0; Laplacian::scalars_len(6, 2)], [0u32; Laplacian::indices_len(6, 2)],
///     &points, 1, GraphParams::new().neighbors(k).check()?)?;
/// let (cols, vals) = graph.row(0).unwrap();
/// assert_eq!(cols, &[1, 2]); // nearest first
/// assert!(vals.iter().all(|&v| v < 0.0));
/// assert_eq!(graph.diagonal(), 1.1); // 1 + δ
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Laplacian<T, S, I> {
    values: S,
    indices: I,
    n: usize,
    k: usize,
    nnz: usize,
    sigma: T,
    delta: T,
}

impl Laplacian<(), (), ()> {
    /// Scalars of the value storage for `n` points and `k` neighbours: `2nk + n`.
    pub const fn scalars_len(n: usize, k: usize) -> usize {
        n.saturating_mul(k).saturating_mul(2).saturating_add(n)
    }

    /// `u32` entries of the index storage: `2nk + 2n + 1`.
    pub const fn indices_len(n: usize, k: usize) -> usize {
        n.saturating_mul(k).saturating_mul(2).saturating_add(n.saturating_mul(2)).saturating_add(1)
    }

    /// Bytes of both storages for scalar `T`.
    pub const fn bytes<T>(n: usize, k: usize) -> usize {
        let values = Self::scalars_len(n, k).saturating_mul(core::mem::size_of::<T>());
        values.saturating_add(Self::indices_len(n, k).saturating_mul(4))
    }
}

impl<T: Real, S: Storage<T>, I: Storage<u32>> Laplacian<T, S, I> {
    /// Builds the graph of the rows of `points` (row-major, `dim` columns) and its Laplacian.
    ///
    /// # Errors
    /// `InvalidParam` for `dim = 0`
    /// (`dim`), `k ≥ n` (`neighbors`) or `2nk ≥ 2³²` (`n`); `DimensionMismatch` when
    /// `points.len()` is not a multiple of `dim`; `NonFinite` for NaN/∞ coordinates or
    /// squared distances that overflow; `CapacityExceeded` when a storage is shorter than
    /// [`Laplacian::scalars_len`] / [`Laplacian::indices_len`].
    pub fn build_in(
        mut values: S,
        mut indices: I,
        points: &[T],
        dim: usize,
        params: ValidGraphParams<T>,
    ) -> Result<Self, Error> {
        let n = point_count(points, dim)?;
        let k = params.k();
        if k >= n {
            return Err(Error::InvalidParam { name: "neighbors" });
        }
        if n.saturating_mul(k).saturating_mul(2) >= u32::MAX as usize {
            return Err(Error::InvalidParam { name: "n" });
        }
        let k32 = u32::try_from(k).map_err(|_| Error::InvalidParam { name: "neighbors" })?;
        check_capacity(Laplacian::scalars_len(n, k), values.as_ref().len())?;
        check_capacity(Laplacian::indices_len(n, k), indices.as_ref().len())?;

        let nk = n * k;
        let (ptr, rest) = indices.as_mut().split_at_mut(n + 1);
        let (cursor, cols) = rest.split_at_mut(n);
        let cols = &mut cols[..2 * nk];
        let (vals, degrees) = values.as_mut().split_at_mut(2 * nk);
        let degrees = &mut degrees[..n];

        match params.search() {
            Search::BruteForce => brute_force(points, dim, k, &mut cols[..nk], &mut vals[..nk]),
            Search::SortedProjection => {
                let (lists, perm) = cols.split_at_mut(nk);
                sorted_projection(points, dim, n, k, lists, &mut perm[..n], &mut vals[..nk]);
            }
        }
        check_finite(&vals[..nk])?;
        let sigma = width(&vals[..nk], params.sigma());
        let scale = T::ONE / (sigma * sigma * T::from_f64(2.0));
        for v in &mut vals[..nk] {
            *v = (-*v * scale).exp();
        }
        let nnz = symmetrise(n, (k, k32), ptr, cursor, cols, vals);
        normalise(ptr, &cols[..nnz], &mut vals[..nnz], degrees);
        Ok(Laplacian { values, indices, n, k, nnz, sigma, delta: params.delta() })
    }

    /// A borrowed view, what the solver and the extension read.
    pub fn view(&self) -> LaplacianView<'_, T> {
        let (ptr, rest) = self.indices.as_ref().split_at(self.n + 1);
        let cols = &rest[self.n..self.n + self.nnz];
        let (vals, degrees) = self.values.as_ref().split_at(2 * self.n * self.k);
        LaplacianView {
            ptr,
            cols,
            vals: &vals[..self.nnz],
            degrees: &degrees[..self.n],
            n: self.n,
            k: self.k,
            sigma: self.sigma,
            delta: self.delta,
        }
    }

    /// Number of points `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of nearest neighbours `k`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Stored off-diagonal entries (between `n·k` and `2n·k`).
    pub fn nnz(&self) -> usize {
        self.nnz
    }

    /// The Gaussian width `σ` used.
    pub fn sigma(&self) -> T {
        self.sigma
    }

    /// The shift `δ`.
    pub fn delta(&self) -> T {
        self.delta
    }

    /// `L_ii = 1 + δ` (the same for every `i`).
    pub fn diagonal(&self) -> T {
        T::ONE + self.delta
    }

    /// Row `i` off the diagonal: `(columns j, values L_ij)`, or `None` for `i ≥ n`.
    pub fn row(&self, i: usize) -> Option<(&[u32], &[T])> {
        self.view().row(i)
    }

    /// Degree `d_i = Σ_j S_ij`, or `None` for `i ≥ n`.
    pub fn degree(&self, i: usize) -> Option<T> {
        self.view().degree(i)
    }
}

/// A borrowed, `Copy` view of a [`Laplacian`].
#[derive(Clone, Copy, Debug)]
pub struct LaplacianView<'a, T> {
    ptr: &'a [u32],
    cols: &'a [u32],
    vals: &'a [T],
    degrees: &'a [T],
    n: usize,
    k: usize,
    sigma: T,
    delta: T,
}

impl<'a, T: Real> LaplacianView<'a, T> {
    /// Number of points `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of nearest neighbours `k`.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The Gaussian width `σ`.
    pub fn sigma(&self) -> T {
        self.sigma
    }

    /// `L_ii = 1 + δ`.
    pub fn diagonal(&self) -> T {
        T::ONE + self.delta
    }

    /// Row `i` off the diagonal: `(columns j, values L_ij)`, or `None` for `i ≥ n`.
    pub fn row(&self, i: usize) -> Option<(&'a [u32], &'a [T])> {
        let start = *self.ptr.get(i)? as usize;
        let end = *self.ptr.get(i + 1)? as usize;
        Some((self.cols.get(start..end)?, self.vals.get(start..end)?))
    }

    /// Degree `d_i = Σ_j S_ij`, or `None` for `i ≥ n`.
    pub fn degree(&self, i: usize) -> Option<T> {
        self.degrees.get(i).copied()
    }

    /// Row `i`, empty when out of range (for loops over `0..n`).
    pub(super) fn row_or_empty(&self, i: usize) -> (&'a [u32], &'a [T]) {
        self.row(i).unwrap_or((&[], &[]))
    }
}

/// `σ`: given, or the root mean squared kNN distance (1 when that is 0 or so small that
/// `1/(2σ²)` overflows).
fn width<T: Real>(squared_distances: &[T], given: Option<T>) -> T {
    if let Some(sigma) = given {
        return sigma;
    }
    let sum = squared_distances.iter().fold(T::ZERO, |acc, &d| acc + d);
    let mean = sum / T::from_f64(squared_distances.len() as f64);
    // A width whose 1/(2σ²) overflows means all points (nearly) coincide: weights 1.
    let usable = mean > T::ZERO && mean.is_finite() && (T::ONE / (mean + mean)).is_finite();
    if usable { mean.sqrt() } else { T::ONE }
}

/// Turns the directed lists (`cols[ik..ik+k]`, weights in `vals`) into the compressed rows
/// of the symmetric graph; returns the number of entries.
fn symmetrise<T: Real>(
    n: usize,
    (k, k32): (usize, u32),
    ptr: &mut [u32],
    cursor: &mut [u32],
    cols: &mut [u32],
    vals: &mut [T],
) -> usize {
    // Pass 1, in the directed layout: count the edges j → i that i does not have itself.
    cursor.fill(0);
    for (j, j32) in (0..n).zip(0u32..) {
        for s in j * k..(j + 1) * k {
            let i = cols[s] as usize;
            if !cols[i * k..(i + 1) * k].contains(&j32) {
                cursor[i] += 1;
            }
        }
    }
    ptr[0] = 0;
    for i in 0..n {
        ptr[i + 1] = ptr[i] + k32 + cursor[i];
    }
    // Move each directed list to the head of its row, last row first: row i starts at or
    // after i·k, so no list is overwritten before it moves.
    for i in (0..n).rev() {
        let (src, dst) = (i * k, ptr[i] as usize);
        cols.copy_within(src..src + k, dst);
        vals.copy_within(src..src + k, dst);
        cursor[i] = ptr[i] + k32;
    }
    // Pass 2: append the one-way edges to the rows that lack them.
    for (j, j32) in (0..n).zip(0u32..) {
        let head = ptr[j] as usize;
        for s in head..head + k {
            let i = cols[s] as usize;
            let own = ptr[i] as usize;
            if !cols[own..own + k].contains(&j32) {
                let c = cursor[i] as usize;
                cols[c] = j32;
                vals[c] = vals[s];
                cursor[i] += 1;
            }
        }
    }
    ptr[n] as usize
}

/// Degrees `d_i = Σ_j S_ij`, then `S_ij ← −S_ij/√(d_i d_j)`.
fn normalise<T: Real>(ptr: &[u32], cols: &[u32], vals: &mut [T], degrees: &mut [T]) {
    for (i, d) in degrees.iter_mut().enumerate() {
        *d = vals[ptr[i] as usize..ptr[i + 1] as usize].iter().fold(T::ZERO, |acc, &w| acc + w);
    }
    for i in 0..degrees.len() {
        for s in ptr[i] as usize..ptr[i + 1] as usize {
            let (w, j) = (vals[s], cols[s] as usize);
            // Divided in index order, so that L_ij and L_ji round alike.
            let (first, second) = if i < j { (degrees[i], degrees[j]) } else { (degrees[j], degrees[i]) };
            vals[s] = if w > T::ZERO { -(w / first.sqrt()) / second.sqrt() } else { T::ZERO };
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn build<T: Real>(
        points: &[T],
        dim: usize,
        params: GraphParams<T>,
    ) -> Result<Laplacian<T, Vec<T>, Vec<u32>>, Error> {
        let n = points.len() / dim.max(1);
        let params = params.check()?;
        let k = params.k();
        Laplacian::build_in(
            vec![T::ZERO; Laplacian::scalars_len(n, k)],
            vec![0; Laplacian::indices_len(n, k)],
            points,
            dim,
            params,
        )
    }

    fn random_points<T: Real>(seed: u64, n: usize, dim: usize) -> Vec<T> {
        let mut rng = crate::Rng::seed_from_u64(seed);
        (0..n * dim).map(|_| rng.uniform()).collect()
    }

    macro_rules! gen_tests {
        ($($name:ident: $t:ty),*) => {$(
            mod $name {
                use super::*;

                #[test]
                fn searches_agree_and_rows_are_symmetric() {
                    for (dim, k) in [(1, 1), (2, 5), (3, 4), (7, 3)] {
                        let points = random_points::<$t>(dim as u64, 60, dim);
                        let a = build(&points, dim, GraphParams::new().neighbors(k)).unwrap();
                        let b = build(&points, dim, GraphParams::new().neighbors(k).search(Search::BruteForce)).unwrap();
                        assert_eq!(a.nnz(), b.nnz());
                        assert!(a.nnz() >= 60 * k && a.nnz() <= 120 * k);
                        for i in 0..60 {
                            assert_eq!(a.row(i), b.row(i));
                            let (cols, vals) = a.row(i).unwrap();
                            for (&j, &v) in cols.iter().zip(vals) {
                                let (cj, vj) = a.row(j as usize).unwrap();
                                let back = cj.iter().position(|&c| c as usize == i).expect("symmetric");
                                assert_eq!(vj[back], v);
                                assert!(v < 0.0 && j as usize != i);
                            }
                        }
                    }
                }

                #[test]
                fn bad_input_is_an_error() {
                    let points = random_points::<$t>(1, 10, 2);
                    assert_eq!(build(&points, 2, GraphParams::new().neighbors(10)).err(), Some(Error::InvalidParam { name: "neighbors" }));
                    assert_eq!(build(&points, 2, GraphParams::new().neighbors(0)).err(), Some(Error::InvalidParam { name: "neighbors" }));
                    assert_eq!(build(&points, 0, GraphParams::new()).err(), Some(Error::InvalidParam { name: "dim" }));
                    assert_eq!(build(&points[..19], 2, GraphParams::new()).err(), Some(Error::DimensionMismatch { expected: 20, got: 19 }));
                    assert_eq!(build(&points, 2, GraphParams::new().delta(0.0)).err(), Some(Error::InvalidParam { name: "delta" }));
                    assert_eq!(build(&points, 2, GraphParams::new().sigma(-1.0)).err(), Some(Error::InvalidParam { name: "sigma" }));
                    let mut nan = points.clone();
                    nan[3] = <$t>::NAN;
                    assert_eq!(build(&nan, 2, GraphParams::new()).err(), Some(Error::NonFinite));
                    let r = Laplacian::build_in(vec![0.0 as $t; 3], vec![0u32; Laplacian::indices_len(10, 5)], &points, 2, GraphParams::new().check().unwrap());
                    assert_eq!(r.err(), Some(Error::CapacityExceeded { needed: Laplacian::scalars_len(10, 5), capacity: 3 }));
                }

                #[test]
                fn identical_points_get_unit_weights() {
                    let points = [1.0 as $t; 8];
                    let g = build(&points, 2, GraphParams::new().neighbors(2)).unwrap();
                    assert_eq!(g.sigma(), 1.0);
                    for i in 0..4 {
                        assert!(g.degree(i).unwrap() >= 2.0);
                    }
                }
            }
        )*};
    }

    gen_tests!(f32_graph: f32, f64_graph: f64);

    #[test]
    fn widths_whose_scale_overflows_are_rejected() {
        let points = random_points::<f32>(2, 10, 2);
        let r = build(&points, 2, GraphParams::new().sigma(1e-20f32));
        assert_eq!(r.err(), Some(Error::InvalidParam { name: "sigma" }));
        // Nearly coinciding points: the automatic width falls back to 1 (weights 1).
        let tiny: Vec<f32> = (0..20).map(|i| i as f32 * 1e-22).collect();
        let g = build(&tiny, 2, GraphParams::new().neighbors(3)).unwrap();
        assert_eq!(g.sigma(), 1.0);
        assert!((0..10).all(|i| g.row(i).unwrap().1.iter().all(|v| v.is_finite() && *v < 0.0)));
    }

    #[test]
    fn budget() {
        assert_eq!(Laplacian::bytes::<f32>(10, 5), (110 + 121) * 4);
    }
}
