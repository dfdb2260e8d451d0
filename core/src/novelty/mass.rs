//! [`CentreOfMass`]: the distance of `φ(x)` to the centre of mass of a set in feature
//! space (seed 002 eq. 61), with the set represented by weighted centres so that a score
//! costs `O(m·d)` and a point entering or leaving the set `O(m)`.
//!
//! # The distance
//!
//! For a set `{x_1, …, x_n}`, eq. (61) is
//!
//! ```text
//! d²(x) = k(x, x) − (2/n) Σ_i k(x, x_i) + (1/n²) Σ_i Σ_j k(x_i, x_j).
//! ```
//!
//! **Convention (the reduced set).** Each point of the set is represented by one of `m`
//! centres `x̃_j` — the centre nearest to it in feature space, `argmin_j ‖φ(x) − φ(x̃_j)‖²
//! = argmax_j 2k(x, x̃_j) − k(x̃_j, x̃_j)` (ties to the lower index) — and the centre of
//! mass by `Σ_j (a_j/n) φ(x̃_j)`, `a_j` the points a centre represents:
//!
//! ```text
//! d²(x) ≈ k(x, x) − (2/n) Σ_j a_j k(x, x̃_j) + A/n²,     A = aᵀ K̃ a,   K̃ = K(Ã, Ã).
//! ```
//!
//! With every point its own centre this is (61) exactly. The constant `A` and the vector
//! `g = K̃a` are kept up to date: a point entering at centre `j` makes `A ← A + 2g_j + K̃_jj`,
//! `g ← g + K̃_{·j}`; one leaving `A ← A − 2g_j + K̃_jj`, `g ← g − K̃_{·j}` (`g` before the
//! change), both `O(m)`; every [`REFRESH`] changes they are recomputed from the counts
//! (`O(m²)`), so rounding cannot accumulate.
//!
//! **Normalised kernel** (eq. 62-63), when asked: `k̂(x, y) = k(x, y)/√(k(x, x) k(y, y))`,
//! so every `φ̂(x)` has unit norm; the Gaussian and Laplacian kernels are normalised
//! already. A point with `k(x, x) = 0` (the origin under the linear kernel) has no
//! normalised image and is refused.
//!
//! **Memory**: [`CentreOfMass::scalars_len`]`(m, d) = m·d + m² + 2m` scalars (centres,
//! `K̃`, `g`, the centres' `√k(x̃_j, x̃_j)`) and `m` `u32` counts.

use crate::error::check_len;
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// What [`CentreOfMass::assess`] finds: `d²(x)` (`None` for an empty set) and the
/// nearest centre with the squared distance to it (`None` without centres).
pub type Assessed<T> = (Option<T>, Option<(usize, T)>);

/// Changes (points entering or leaving) between two recomputations of `A` and `g`.
pub const REFRESH: u32 = 1024;

/// The centre of mass of a weighted reduced set in feature space; scores points by their
/// squared distance to it.
///
/// # Examples
/// ```
/// use kestrel_core::{Kernel, novelty::CentreOfMass};
/// let (m, d) = (2, 1);
/// let mut mass = CentreOfMass::new_in(vec![0.0; CentreOfMass::scalars_len(m, d)], vec![0u32; m], d,
///     Kernel::rbf(1.0)?, false)?;
/// mass.add_centre(&[0.0])?;
/// mass.add_centre(&[0.5])?;
/// for x in [0.0, 0.1, 0.4, 0.6] {
///     mass.enter(&[x])?;
/// }
/// assert!(mass.score(&[3.0])? > mass.score(&[0.3])?); // far from the set scores higher
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct CentreOfMass<T, S, C> {
    pub(super) scalars: S,
    pub(super) counts: C,
    pub(super) dim: usize,
    pub(super) capacity: usize,
    pub(super) m: usize,
    pub(super) kernel: Kernel<T>,
    pub(super) normalised: bool,
    pub(super) n: u64,
    pub(super) constant: T,
    pub(super) changes: u32,
}

impl CentreOfMass<(), (), ()> {
    /// Scalars for `capacity` centres of `dim` features.
    pub const fn scalars_len(capacity: usize, dim: usize) -> usize {
        let square = capacity.saturating_mul(capacity);
        capacity.saturating_mul(dim).saturating_add(square).saturating_add(capacity.saturating_mul(2))
    }

    /// Bytes of both buffers for scalar `T`.
    pub const fn bytes<T>(capacity: usize, dim: usize) -> usize {
        Self::scalars_len(capacity, dim)
            .saturating_mul(size_of::<T>())
            .saturating_add(capacity.saturating_mul(size_of::<u32>()))
    }
}

impl<T: Real, S: Storage<T>, C: AsRef<[u32]> + AsMut<[u32]>> CentreOfMass<T, S, C> {
    /// An empty set with room for `counts.len()` centres of `dim` features, in `scalars`
    /// (at least [`CentreOfMass::scalars_len`]).
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for `dim = 0`, `{ name: "capacity" }` for no counts;
    /// `CapacityExceeded` when `scalars` is too short.
    pub fn new_in(scalars: S, mut counts: C, dim: usize, kernel: Kernel<T>, normalised: bool) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        let capacity = counts.as_ref().len();
        if capacity == 0 {
            return Err(Error::InvalidParam { name: "capacity" });
        }
        check_capacity(CentreOfMass::scalars_len(capacity, dim), scalars.as_ref().len())?;
        counts.as_mut().fill(0);
        Ok(CentreOfMass {
            scalars,
            counts,
            dim,
            capacity,
            m: 0,
            kernel,
            normalised,
            n: 0,
            constant: T::ZERO,
            changes: 0,
        })
    }

    /// Centres so far.
    pub fn centres_len(&self) -> usize {
        self.m
    }

    /// Points in the set.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// `true` when no point is in the set.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The points each centre represents, `a_j`.
    pub fn counts(&self) -> &[u32] {
        self.counts.as_ref().get(..self.m).unwrap_or_default()
    }

    /// The centres, row-major `m × d`.
    pub fn centres(&self) -> &[T] {
        self.scalars.as_ref().get(..self.m * self.dim).unwrap_or_default()
    }

    /// `(centres, K̃ (capacity × capacity), g, √k(x̃_j, x̃_j))`.
    fn parts(&self) -> (&[T], &[T], &[T], &[T]) {
        let (centres, rest) = self.scalars.as_ref().split_at(self.capacity * self.dim);
        let (gram, rest) = rest.split_at(self.capacity * self.capacity);
        let (g, norms) = rest.split_at(self.capacity);
        (centres, gram, g, norms)
    }

    fn parts_mut(&mut self) -> (&mut [T], &mut [T], &mut [T], &mut [T]) {
        let (centres, rest) = self.scalars.as_mut().split_at_mut(self.capacity * self.dim);
        let (gram, rest) = rest.split_at_mut(self.capacity * self.capacity);
        let (g, norms) = rest.split_at_mut(self.capacity);
        (centres, gram, g, norms)
    }

    /// `(k̂(x, x), the norm x's kernel values are divided by)`; checks `x`.
    fn norm_of(&self, x: &[T]) -> Result<(T, T), Error> {
        self_terms(&self.kernel, self.normalised, self.dim, x)
    }

    /// `K̃_ij`.
    fn gram(&self, i: usize, j: usize) -> T {
        self.parts().1.get(i * self.capacity + j).copied().unwrap_or(T::ZERO)
    }

    /// Adds a centre (it represents no point yet); returns its index.
    ///
    /// # Errors
    /// `CapacityExceeded` when every centre is taken; `DimensionMismatch` for a wrong
    /// length; `NonFinite` for NaN/∞; `InvalidParam { name: "x" }` for a point with
    /// `k(x, x) = 0` under a normalised kernel. The set is unchanged on error.
    pub fn add_centre(&mut self, x: &[T]) -> Result<usize, Error> {
        let j = self.m;
        check_capacity(j + 1, self.capacity)?;
        let (_, norm) = self.norm_of(x)?;
        self.m += 1;
        self.place_centre(j, x, norm);
        Ok(j)
    }

    /// Replaces centre `j`, which represents no point, by `x`: `A` and the other entries of
    /// `g` do not change (their terms in `a_j` are 0); `K̃`'s row and column `j` and `g_j`
    /// are computed anew, `O(m·d)`.
    ///
    /// # Errors
    /// `IndexOutOfRange` for `j ≥ m`; `InvalidParam { name: "counts" }` when centre `j`
    /// represents a point; as [`add_centre`](Self::add_centre) for `x`. The set is
    /// unchanged on error.
    pub fn replace_centre(&mut self, j: usize, x: &[T]) -> Result<(), Error> {
        let count = *self.counts().get(j).ok_or(Error::IndexOutOfRange { index: j, len: self.m })?;
        if count != 0 {
            return Err(Error::InvalidParam { name: "counts" });
        }
        let (_, norm) = self.norm_of(x)?;
        self.place_centre(j, x, norm);
        Ok(())
    }

    /// Writes `x` (of norm `norm`, from [`norm_of`](Self::norm_of)) as centre `j < m`, with
    /// `K̃`'s row and column `j` and `g_j = Σ_l K̃_jl a_l`.
    fn place_centre(&mut self, j: usize, x: &[T], norm: T) {
        let (capacity, dim, m, kernel) = (self.capacity, self.dim, self.m, self.kernel);
        let stored_norm = if self.normalised { norm } else { T::ONE };
        let (centres, gram, _, norms) = self.parts_mut();
        if let (Some(slot), Some(n)) = (centres.get_mut(j * dim..(j + 1) * dim), norms.get_mut(j)) {
            slot.copy_from_slice(x);
            *n = stored_norm;
        }
        let (live, live_norms) = (centres.get(..m * dim).unwrap_or_default(), norms.get(..m).unwrap_or_default());
        for_each_similarity(&kernel, x, norm, live, live_norms, |i, value| {
            for at in [i * capacity + j, j * capacity + i] {
                if let Some(entry) = gram.get_mut(at) {
                    *entry = value;
                }
            }
        });
        let g_j = self.weighted_row(j);
        if let Some(g) = self.parts_mut().2.get_mut(j) {
            *g = g_j;
        }
    }

    /// `(K̃a)_i = Σ_l K̃_il a_l`.
    fn weighted_row(&self, i: usize) -> T {
        self.counts().iter().enumerate().fold(T::ZERO, |acc, (l, &a)| acc + self.gram(i, l) * T::from_f64(f64::from(a)))
    }

    /// The centre that represents `x`: the nearest in feature space.
    ///
    /// # Errors
    /// As [`score`](Self::score) for `x`; `InvalidParam { name: "centres" }` with no centre.
    pub fn nearest(&self, x: &[T]) -> Result<usize, Error> {
        self.nearest_with_distance(x).map(|(j, _)| j)
    }

    /// The nearest centre to `x` in feature space and the squared distance to it,
    /// `k̂(x, x) + K̃_jj − 2k̂(x, x̃_j)`.
    ///
    /// # Errors
    /// As [`nearest`](Self::nearest).
    pub fn nearest_with_distance(&self, x: &[T]) -> Result<(usize, T), Error> {
        self.assess(x)?.1.ok_or(Error::InvalidParam { name: "centres" })
    }

    /// One pass of `m` kernel evaluations over the centres for `x`: its score `d²(x)`
    /// (`None` for an empty set, see [`score`](Self::score)) and its nearest centre with
    /// the squared distance to it (`None` without centres, see
    /// [`nearest_with_distance`](Self::nearest_with_distance)).
    ///
    /// # Errors
    /// `DimensionMismatch`, `NonFinite`, `InvalidParam { name: "x" }` as for
    /// [`add_centre`](Self::add_centre); `NonFinite` for a score that overflows.
    pub fn assess(&self, x: &[T]) -> Result<Assessed<T>, Error> {
        let (self_term, norm) = self.norm_of(x)?;
        #[allow(clippy::cast_precision_loss, reason = "n < 2⁵³ in any stream")]
        let n = T::from_f64(self.n as f64);
        let two = T::from_f64(2.0);
        let (mut cross, mut best) = (T::ZERO, None::<(usize, T)>);
        let counts = self.counts();
        for_each_similarity(&self.kernel, x, norm, self.centres(), self.norms(), |j, k| {
            if self.n > 0 {
                // With the weights a_j/n rounded as a `NoveltyModel` stores them, so that a
                // model scores exactly as the set it was frozen from.
                let a = counts.get(j).copied().unwrap_or(0);
                cross += T::from_f64(f64::from(a)) / n * k;
            }
            let closeness = two * k - self.gram(j, j);
            if best.is_none_or(|(_, b)| closeness > b) {
                best = Some((j, closeness));
            }
        });
        let nearest = best.map(|(j, closeness)| (j, (self_term - closeness).max_of(T::ZERO)));
        if self.n == 0 {
            return Ok((None, nearest));
        }
        let d2 = self_term - (cross + cross) + self.centre_norm2();
        if d2.is_finite() { Ok((Some(d2), nearest)) } else { Err(Error::NonFinite) }
    }

    /// Centres the set can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Features of a point.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel<T> {
        &self.kernel
    }

    /// `true` when scores use the normalised kernel (eq. 62).
    pub fn normalised(&self) -> bool {
        self.normalised
    }

    /// `√k(x̃_j, x̃_j)` of each centre (1 without normalisation).
    pub(super) fn norms(&self) -> &[T] {
        self.parts().3.get(..self.m).unwrap_or_default()
    }

    /// `A = aᵀK̃a`.
    pub(super) fn constant(&self) -> T {
        self.constant
    }

    /// `A/n² = ‖μ‖²`, the squared norm of the centre of mass: the term of every score
    /// `d²(x)` that is the set's, not the point's (0 for an empty set).
    pub(super) fn centre_norm2(&self) -> T {
        #[allow(clippy::cast_precision_loss, reason = "n < 2⁵³ in any stream")]
        let n = T::from_f64(self.n as f64);
        if self.n == 0 { T::ZERO } else { self.constant / (n * n) }
    }

    /// `x` joins the set, represented by its nearest centre; returns that centre.
    ///
    /// # Errors
    /// As [`nearest`](Self::nearest); `CapacityExceeded` when the centre already represents
    /// `u32::MAX` points. The set is unchanged on error.
    pub fn enter(&mut self, x: &[T]) -> Result<usize, Error> {
        let j = self.nearest(x)?;
        self.enter_at(j)?;
        Ok(j)
    }

    /// A point represented by centre `j` (its nearest, which the caller found with
    /// [`assess`](Self::assess)) joins the set.
    ///
    /// # Errors
    /// `IndexOutOfRange` for `j ≥ m`; `CapacityExceeded` when the centre already represents
    /// `u32::MAX` points. The set is unchanged on error.
    pub fn enter_at(&mut self, j: usize) -> Result<(), Error> {
        self.change(j, true)
    }

    /// A point that centre `j` represents leaves the set.
    ///
    /// # Errors
    /// `IndexOutOfRange` for `j ≥ m`; `InvalidParam { name: "counts" }` when centre `j`
    /// represents no point. The set is unchanged on error.
    pub fn leave(&mut self, j: usize) -> Result<(), Error> {
        self.change(j, false)
    }

    /// Counts one more (`enter`) or one fewer point at centre `j`, updating `A` and `g`.
    fn change(&mut self, j: usize, enter: bool) -> Result<(), Error> {
        let out_of_range = Error::IndexOutOfRange { index: j, len: self.m };
        let count = *self.counts().get(j).ok_or(out_of_range)?;
        let count = if enter {
            count
                .checked_add(1)
                .ok_or(Error::CapacityExceeded { needed: count as usize + 1, capacity: u32::MAX as usize })?
        } else {
            count.checked_sub(1).ok_or(Error::InvalidParam { name: "counts" })?
        };
        let (g_j, k_jj) = (self.parts().2.get(j).copied().unwrap_or(T::ZERO), self.gram(j, j));
        let sign = if enter { T::ONE } else { -T::ONE };
        self.constant = self.constant + sign * (g_j + g_j) + k_jj;
        // K̃ is symmetric: its row j is column j.
        let (m, capacity) = (self.m, self.capacity);
        let (_, gram, g, _) = self.parts_mut();
        let row = gram.get(j * capacity..j * capacity + m).unwrap_or_default();
        for (g_i, &k_ij) in g.iter_mut().zip(row) {
            *g_i += sign * k_ij;
        }
        if let Some(slot) = self.counts.as_mut().get_mut(j) {
            *slot = count;
        }
        self.n = if enter { self.n + 1 } else { self.n.saturating_sub(1) };
        self.changes += 1;
        if self.changes >= REFRESH {
            self.refresh();
        }
        Ok(())
    }

    /// Recomputes `g = K̃a` and `A = aᵀK̃a` from the counts.
    fn refresh(&mut self) {
        let mut constant = T::ZERO;
        for i in 0..self.m {
            let g_i = self.weighted_row(i);
            let a_i = self.counts().get(i).map_or(T::ZERO, |&a| T::from_f64(f64::from(a)));
            if let Some(g) = self.parts_mut().2.get_mut(i) {
                *g = g_i;
            }
            constant += a_i * g_i;
        }
        self.constant = constant;
        self.changes = 0;
    }

    /// `d²(x)`, the squared feature-space distance of `x` to the centre of mass.
    ///
    /// # Errors
    /// `DimensionMismatch`, `NonFinite`, `InvalidParam { name: "x" }` as for
    /// [`add_centre`](Self::add_centre); `InvalidParam { name: "empty" }` before any point
    /// entered.
    pub fn score(&self, x: &[T]) -> Result<T, Error> {
        self.assess(x)?.0.ok_or(Error::InvalidParam { name: "empty" })
    }
}

/// `(k̂(x, x), the norm x's kernel values are divided by)` for a point `x` of `dim`
/// features: `(k(x, x), 1)`, or `(1, √k(x, x))` under the normalised kernel (eq. 62).
///
/// # Errors
/// `DimensionMismatch`; `NonFinite` for NaN/∞ in `x`, or a `k(x, x)` that overflows under
/// the normalised kernel; `InvalidParam { name: "x" }` for `k(x, x) ≤ 0` under the
/// normalised kernel (a row of zeros under a linear kernel has no direction).
pub(super) fn self_terms<T: Real>(kernel: &Kernel<T>, normalised: bool, dim: usize, x: &[T]) -> Result<(T, T), Error> {
    check_len(dim, x.len())?;
    check_finite(x)?;
    let diagonal = kernel.diagonal(x);
    if !normalised {
        return Ok((diagonal, T::ONE));
    }
    if !diagonal.is_finite() {
        return Err(Error::NonFinite);
    }
    if diagonal <= T::ZERO {
        return Err(Error::InvalidParam { name: "x" });
    }
    Ok((T::ONE, diagonal.sqrt()))
}

/// Calls `visit(j, k̂(x, x̃_j))`, `k̂(x, x̃_j) = k(x, x̃_j)/(norm·norm_j)`, for each centre `j`
/// in order (the rows of `centres`, with their `norms`), `x` of norm `norm` (from
/// [`self_terms`]).
pub(super) fn for_each_similarity<T: Real>(
    kernel: &Kernel<T>,
    x: &[T],
    norm: T,
    centres: &[T],
    norms: &[T],
    mut visit: impl FnMut(usize, T),
) {
    // The kernel values a block of centres at a time ([`Kernel::column_of_rows`]: the
    // Gaussian's `exp` in one loop, the same bits as one by one). Each block of centres
    // has as many rows as its block of norms.
    let dim = x.len().max(1);
    let live = norms.len().min(centres.len() / dim);
    let (centres, norms) = (centres.get(..live * dim).unwrap_or_default(), norms.get(..live).unwrap_or_default());
    let blocks = centres.chunks(SIMILARITY_BLOCK * dim).zip(norms.chunks(SIMILARITY_BLOCK));
    for (index, (block, block_norms)) in blocks.enumerate() {
        let mut values = [T::ZERO; SIMILARITY_BLOCK];
        kernel.column_of_rows(x, block, &mut values);
        for (b, (&k, &centre_norm)) in values.iter().zip(block_norms).enumerate() {
            visit(index * SIMILARITY_BLOCK + b, k / (norm * centre_norm));
        }
    }
}

/// Centres whose kernel values [`for_each_similarity`] takes at once (a stack buffer): a block
/// where the `exp` loop runs on vector units, one at a time on the microcontrollers (a
/// Cortex-M4F scored 23 % more instructions by blocks of 8).
const SIMILARITY_BLOCK: usize = if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) { 8 } else { 1 };

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Rng;

    /// Eq. (61) with every point: `k(x,x) − (2/n)Σ k(x,x_i) + (1/n²)ΣΣ k(x_i,x_j)`, in
    /// `f64`, through `k̂` when `normalised`.
    fn dense_score(kernel: &Kernel<f64>, normalised: bool, points: &[f64], dim: usize, x: &[f64]) -> f64 {
        let k = |a: &[f64], b: &[f64]| {
            let value = kernel.eval(a, b).unwrap();
            if normalised { value / (kernel.diagonal(a) * kernel.diagonal(b)).sqrt() } else { value }
        };
        let rows: Vec<&[f64]> = points.chunks_exact(dim).collect();
        let n = rows.len() as f64;
        let cross: f64 = rows.iter().map(|r| k(x, r)).sum();
        let total: f64 = rows.iter().flat_map(|a| rows.iter().map(move |b| (a, b))).map(|(a, b)| k(a, b)).sum();
        k(x, x) - 2.0 * cross / n + total / (n * n)
    }

    fn cloud(n: usize, dim: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::seed_from_u64(seed);
        (0..n * dim).map(|_| rng.normal::<f64>() + 0.5).collect()
    }

    fn new<T: Real>(m: usize, dim: usize, kernel: Kernel<T>, normalised: bool) -> CentreOfMass<T, Vec<T>, Vec<u32>> {
        CentreOfMass::new_in(vec![T::ZERO; CentreOfMass::scalars_len(m, dim)], vec![0; m], dim, kernel, normalised)
            .unwrap()
    }

    fn kernels() -> [(Kernel<f64>, bool); 4] {
        [
            (Kernel::rbf(0.3).unwrap(), false),
            (Kernel::polynomial(2, 0.5, 1.0).unwrap(), false),
            (Kernel::polynomial(2, 0.5, 1.0).unwrap(), true),
            (Kernel::linear(), true),
        ]
    }

    /// Every point its own centre: the score is eq. (61) with all n points.
    fn exact_with_every_point_a_centre<T: Real>() {
        let (n, dim) = (120, 3);
        let points = cloud(n, dim, 1);
        let tolerance = if T::BYTES == 4 { 1e-3 } else { 1e-9 };
        for (kernel, normalised) in kernels() {
            let kernel_t = Kernel::new(match kernel.kind() {
                crate::KernelKind::Rbf { gamma } => crate::KernelKind::Rbf { gamma: T::from_f64(gamma) },
                crate::KernelKind::Polynomial { degree, gamma, coef0 } => {
                    crate::KernelKind::Polynomial { degree, gamma: T::from_f64(gamma), coef0: T::from_f64(coef0) }
                }
                _ => crate::KernelKind::Linear,
            })
            .unwrap();
            let mut mass = new::<T>(n, dim, kernel_t, normalised);
            let as_t = |row: &[f64]| row.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>();
            for row in points.chunks_exact(dim) {
                let j = mass.add_centre(&as_t(row)).unwrap();
                assert_eq!(mass.enter(&as_t(row)), Ok(j), "a centre represents itself");
            }
            let rounded: Vec<f64> = as_t(&points).iter().map(|v| v.to_f64()).collect();
            for x in cloud(20, dim, 2).chunks_exact(dim).chain([&[4.0, -3.0, 2.0][..]]) {
                let x_t = as_t(x);
                let x64: Vec<f64> = x_t.iter().map(|v| v.to_f64()).collect();
                let want = dense_score(&kernel, normalised, &rounded, dim, &x64);
                let got = mass.score(&x_t).unwrap().to_f64();
                assert!(
                    (got - want).abs() <= tolerance * (1.0 + want.abs()),
                    "{kernel:?} {normalised}: {got} vs {want}"
                );
            }
        }
    }

    /// Points entering and leaving, and centres replaced, keep `A` and `g` as a rebuild
    /// from the counts would: after thousands of changes (with refreshes between) the score
    /// equals a fresh set's holding the same centres and counts.
    fn entering_and_leaving_match_a_rebuild<T: Real>() {
        let (m, dim) = (17, 2);
        let kernel = Kernel::rbf(T::from_f64(0.5)).unwrap();
        let mut mass = new::<T>(m, dim, kernel, false);
        let as_t = |row: &[f64]| row.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>();
        for row in cloud(m - 1, dim, 3).chunks_exact(dim) {
            mass.add_centre(&as_t(row)).unwrap();
        }
        // Far from the stream: it represents no point.
        let far = mass.add_centre(&as_t(&[9.0, 9.0])).unwrap();
        let stream = cloud(3000, dim, 4);
        let mut window: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
        for row in stream.chunks_exact(dim) {
            window.push_back(mass.enter(&as_t(row)).unwrap());
            if window.len() > 100 {
                mass.leave(window.pop_front().unwrap()).unwrap();
            }
        }
        assert_eq!(mass.len(), 100);
        assert_eq!(mass.counts()[far], 0);
        mass.replace_centre(far, &as_t(&[0.4, 0.6])).unwrap();
        let used = window[0];
        assert_eq!(mass.replace_centre(used, &as_t(&[0.0, 0.0])), Err(Error::InvalidParam { name: "counts" }));
        assert_eq!(mass.replace_centre(m, &as_t(&[0.0, 0.0])), Err(Error::IndexOutOfRange { index: m, len: m }));
        for row in stream.chunks_exact(dim).take(50) {
            window.push_back(mass.enter(&as_t(row)).unwrap());
            mass.leave(window.pop_front().unwrap()).unwrap();
        }
        let mut fresh = new::<T>(m, dim, kernel, false);
        for row in mass.centres().chunks_exact(dim) {
            fresh.add_centre(row).unwrap();
        }
        for (j, &count) in mass.counts().to_vec().iter().enumerate() {
            for _ in 0..count {
                fresh.change(j, true).unwrap();
            }
        }
        let tolerance = if T::BYTES == 4 { 1e-4 } else { 1e-12 };
        for x in cloud(10, dim, 5).chunks_exact(dim) {
            let (a, b) = (mass.score(&as_t(x)).unwrap().to_f64(), fresh.score(&as_t(x)).unwrap().to_f64());
            assert!((a - b).abs() <= tolerance, "{a} vs {b}");
        }
    }

    /// With fewer centres than points the reduced score ranks points as the exact one:
    /// the nearest 10 % and the farthest 10 % of test points are the same sets.
    #[test]
    fn a_reduced_set_ranks_as_the_exact_score() {
        let (n, dim, m) = (400, 2, 40);
        let points = cloud(n, dim, 6);
        let kernel = Kernel::rbf(0.5).unwrap();
        let mut mass = new::<f64>(m, dim, kernel, false);
        for row in points.chunks_exact(dim).take(m) {
            mass.add_centre(row).unwrap();
        }
        for row in points.chunks_exact(dim) {
            mass.enter(row).unwrap();
        }
        let tests = cloud(200, dim, 7).iter().map(|v| v * 1.8).collect::<Vec<f64>>();
        let order = |score: &dyn Fn(&[f64]) -> f64| {
            let mut scored: Vec<(f64, usize)> = tests.chunks_exact(dim).map(score).zip(0..).collect();
            scored.sort_by(|a, b| a.0.total_cmp(&b.0));
            scored.iter().map(|&(_, i)| i).collect::<Vec<usize>>()
        };
        let exact = order(&|x| dense_score(&kernel, false, &points, dim, x));
        let reduced = order(&|x| mass.score(x).unwrap());
        for (a, b) in [(&exact[..20], &reduced[..20]), (&exact[180..], &reduced[180..])] {
            let shared = a.iter().filter(|i| b.contains(i)).count();
            assert!(shared >= 16, "{shared} of 20 shared");
        }
    }

    fn bad_input_leaves_the_set_unchanged<T: Real>() {
        let kernel = Kernel::rbf(T::ONE).unwrap();
        let empty = new::<T>(2, 2, kernel, false);
        assert_eq!(empty.score(&[T::ZERO, T::ZERO]), Err(Error::InvalidParam { name: "empty" }));
        assert_eq!(empty.nearest(&[T::ZERO, T::ZERO]), Err(Error::InvalidParam { name: "centres" }));
        let mut mass = new::<T>(2, 2, kernel, false);
        mass.add_centre(&[T::ZERO, T::ONE]).unwrap();
        mass.enter(&[T::ZERO, T::ZERO]).unwrap();
        let before = (mass.score(&[T::ONE, T::ONE]).unwrap(), mass.counts().to_vec(), mass.len());
        assert_eq!(mass.enter(&[T::ONE]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(mass.enter(&[T::from_f64(f64::NAN), T::ONE]), Err(Error::NonFinite));
        assert_eq!(mass.leave(1), Err(Error::IndexOutOfRange { index: 1, len: 1 }));
        mass.add_centre(&[T::ONE, T::ZERO]).unwrap();
        assert_eq!(mass.leave(1), Err(Error::InvalidParam { name: "counts" }));
        assert!(matches!(mass.add_centre(&[T::ONE, T::ONE]), Err(Error::CapacityExceeded { .. })));
        assert_eq!((mass.score(&[T::ONE, T::ONE]).unwrap(), mass.counts()[..1].to_vec(), mass.len()), before);
        let mut normalised = new::<T>(2, 2, Kernel::linear(), true);
        assert_eq!(normalised.add_centre(&[T::ZERO, T::ZERO]), Err(Error::InvalidParam { name: "x" }));
        let huge = T::MAX.sqrt() * T::from_f64(2.0);
        assert_eq!(normalised.add_centre(&[huge, T::ZERO]), Err(Error::NonFinite), "k(x, x) overflows");
        assert_eq!(normalised.centres_len(), 0);
        assert!(CentreOfMass::new_in(vec![T::ZERO; 3], vec![0u32; 2], 2, kernel, false).is_err());
        assert!(CentreOfMass::new_in(vec![T::ZERO; 30], Vec::<u32>::new(), 2, kernel, false).is_err());
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn exact_with_every_point_a_centre() {
                    super::exact_with_every_point_a_centre::<$scalar>();
                }
                #[test]
                fn entering_and_leaving_match_a_rebuild() {
                    super::entering_and_leaving_match_a_rebuild::<$scalar>();
                }
                #[test]
                fn bad_input_leaves_the_set_unchanged() {
                    super::bad_input_leaves_the_set_unchanged::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
