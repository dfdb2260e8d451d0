//! The leading eigenpairs of `A = I + N`, `N = D^{−1/2} S D^{−1/2}` (spectrum in `[0, 2]`),
//! that the eigenmap and spectral clustering use: connected components exactly, Lanczos
//! for the rest, and a Chebyshev filter when Lanczos alone does not converge.
//!
//! **Components.** Each connected component `C` (breadth-first search over the edges of
//! nonzero weight, `O(nk)`) gives an exact eigenvector `D^{1/2}1_C` of `θ = 2` (`λ = 0`),
//! taken first, in order of each component's lowest point. Lanczos then runs on the
//! orthogonal complement of their span — every product projected, `O(n)` — for the pairs
//! that remain; from one start vector it could never see more than one direction of the
//! repeated eigenvalue.
//!
//! **Chebyshev filter.** Clusters that the graph barely connects put the wanted eigenvalues
//! within `10⁻⁴` of the next ones, and Lanczos needs about `1/√gap` steps — more than its
//! cap on 10⁵ points. The first run therefore asks for one pair more than wanted; when it
//! ends capped, that pair's Ritz value `a` lies below the wanted eigenvalues (Cauchy
//! interlacing: the `i`-th Ritz value never exceeds the `i`-th eigenvalue, and the
//! `(k+1)`-th eigenvalue is below the `k`-th), and Lanczos runs again, from the sum of the
//! wanted Ritz vectors, on `p(A) = T_q((2A − aI)/a)`: the Chebyshev polynomial of degree `q` is at
//! most 1 in magnitude on `[0, a]` and grows fast beyond, monotonically, so the wanted
//! pairs stay the leading ones and the gaps near the top grow by about `q²` — Lanczos on
//! `p(A)` needs about `q` times fewer steps, each costing `q` products of `A` (three-term
//! recurrence, two vectors). The degree is the largest with `T_q(ℓ(2)) ≤ 10³` (so nothing
//! overflows in f32), at most [`MAX_FILTER_DEGREE`]. The eigenvalues are then the Rayleigh
//! quotients `θ_i = y_iᵀAy_i` and the residuals `‖Ay_i − θ_iy_i‖/2` are computed, not
//! estimated, and decide convergence (`√ε`) — so the filtered run's own rule, relative to
//! `‖p(A)‖`, is loosened by the peak `10³`; up to [`FILTER_ROUNDS`] rounds run, each from
//! the last one's vectors.
//!
//! **Memory**: `5n` scalars beside Lanczos's — the start vector, the component labels, the
//! scratch of the search and the projections, the filter's two vectors — and the Ritz pairs.

use crate::linalg::{Exit, LanczosOutcome, LanczosParams, dot_prefix, lanczos};
use crate::npkl::LaplacianView;
use crate::{Error, Real, Rng};

/// The largest degree of the Chebyshev filter.
pub const MAX_FILTER_DEGREE: usize = 200;

/// The most filtered Lanczos runs after the first.
pub const FILTER_ROUNDS: usize = 4;

/// The filter's largest value on `[0, 2]`, which sets its degree.
const FILTER_PEAK: f64 = 1e3;

/// Steps of each filtered Lanczos run for `k` pairs, at most.
const fn filtered_steps(k: usize) -> usize {
    k.saturating_mul(2).saturating_add(40)
}

/// The regions of the workspace: the start vector, the component labels, scratch for
/// the components' search and projections, the filter's two vectors, the Ritz values and
/// vectors (one pair more than wanted), and Lanczos's.
pub(super) struct Split<'a, T> {
    start: &'a mut [T],
    labels: &'a mut [T],
    scratch: &'a mut [T],
    filter: &'a mut [T],
    pub(super) values: &'a mut [T],
    pub(super) vectors: &'a mut [T],
    work: &'a mut [T],
}

/// Scalars of the workspace beside the Ritz pairs and Lanczos's: `5n` (saturating).
pub(super) const fn scratch_len(n: usize) -> usize {
    n.saturating_mul(5)
}

/// Cuts the workspace into its regions for `pairs` eigenpairs of dimension `n` (room for
/// `pairs + 1`).
pub(super) fn split<T>(workspace: &mut [T], n: usize, pairs: usize) -> Result<Split<'_, T>, Error> {
    let bad = Error::InvalidParam { name: "n" };
    let pairs = pairs.checked_add(1).ok_or(bad)?;
    let (start, rest) = workspace.split_at_mut_checked(n).ok_or(bad)?;
    let (labels, rest) = rest.split_at_mut_checked(n).ok_or(bad)?;
    let (scratch, rest) = rest.split_at_mut_checked(n).ok_or(bad)?;
    let (filter, rest) = rest.split_at_mut_checked(2 * n).ok_or(bad)?;
    let (values, rest) = rest.split_at_mut_checked(pairs).ok_or(bad)?;
    let (vectors, work) = rest.split_at_mut_checked(pairs.checked_mul(n).ok_or(bad)?).ok_or(bad)?;
    Ok(Split { start, labels, scratch, filter, values, vectors, work })
}

/// The `pairs` leading eigenpairs of `A` into `w.values` (decreasing) / row-major
/// `w.vectors` (`pairs × n`), Lanczos capped at `steps` per run.
pub(super) fn leading<T: Real>(
    graph: &LaplacianView<'_, T>,
    pairs: usize,
    steps: usize,
    w: &mut Split<'_, T>,
) -> Result<LanczosOutcome<T>, Error> {
    let n = graph.n();
    for i in 0..n {
        let d = graph.degree(i).unwrap_or(T::ZERO);
        if !(d > T::ZERO && d.is_finite()) {
            return Err(Error::InvalidParam { name: "degree" });
        }
    }
    let count = components(graph, w.labels, w.scratch)?;
    let known = count.min(pairs);
    let (known_vectors, rest) = w.vectors.split_at_mut(known * n);
    for (c, (value, v)) in w.values.iter_mut().zip(known_vectors.chunks_exact_mut(n)).enumerate() {
        *value = T::from_f64(2.0);
        let id = T::from_f64(c as f64);
        for (i, (x, &label)) in v.iter_mut().zip(w.labels.iter()).enumerate() {
            *x = if label == id { graph.degree(i).unwrap_or(T::ZERO).sqrt() } else { T::ZERO };
        }
        let norm = v.iter().fold(T::ZERO, |acc, &x| acc + x * x).sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
    }
    if known == pairs {
        return Ok(LanczosOutcome { exit: Exit::Converged, steps: 0, residual: T::ZERO });
    }
    let mut rng = Rng::seed_from_u64(0x5eed_5bec);
    for x in w.start.iter_mut() {
        *x = rng.uniform_in(-T::ONE, T::ONE);
    }
    let graph = Deflated { graph, labels: w.labels, count };
    let k = pairs - known;
    // One pair more than wanted when there is one: its Ritz value is the filter's cut.
    let wide = if k < n - count { k + 1 } else { k };
    let values = w.values.get_mut(known..known + wide).unwrap_or_default();
    let vectors = rest.get_mut(..wide * n).unwrap_or_default();
    graph.project(w.scratch, w.start);
    let params = LanczosParams::new(wide).max_steps(steps.min(n - count).max(wide)).check()?;
    let mut plain = |x: &[T], y: &mut [T]| graph.product(w.scratch, x, y);
    let first = lanczos(&mut plain, w.start, &params, w.work, values, vectors)?;
    if first.exit == Exit::Converged {
        return Ok(first);
    }
    let cut = values.last().copied().unwrap_or(T::ZERO);
    let (values, vectors) = (values.get_mut(..k).unwrap_or_default(), vectors.get_mut(..k * n).unwrap_or_default());
    let filtered = Filtered { graph, k, cut, steps: filtered_steps(k).min(steps).min(n - count).max(k) };
    filtered.refine(first, values, vectors, w.start, w.scratch, w.filter, w.work)
}

/// The graph's operator `A` on the complement of its components' vectors.
#[derive(Clone, Copy)]
struct Deflated<'a, 'g, T> {
    graph: &'a LaplacianView<'g, T>,
    labels: &'a [T],
    count: usize,
}

impl<T: Real> Deflated<'_, '_, T> {
    /// `y = P(I + N)x`; `sums` is scratch of [`project`](Self::project).
    fn product(&self, sums: &mut [T], x: &[T], y: &mut [T]) -> Result<(), Error> {
        for (i, (y, &x_i)) in y.iter_mut().zip(x).enumerate() {
            let (cols, vals) = self.graph.row(i).unwrap_or((&[], &[]));
            // `L_ij = −N_ij`, so `(I + N)x = x − Σ_j L_ij x_j`.
            *y = cols
                .iter()
                .zip(vals)
                .fold(x_i, |acc, (&j, &l)| acc - l * x.get(j as usize).copied().unwrap_or(T::ZERO));
        }
        self.project(sums, y);
        Ok(())
    }

    /// Removes from `x` its parts along the `count` component vectors `D^{1/2}1_C/‖·‖`;
    /// `sums` holds `2·count ≤ n` scalars of scratch.
    fn project(&self, sums: &mut [T], x: &mut [T]) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "a component number below n ≤ 2/ε")]
        let component = |label: T| label.to_f64() as usize;
        let (along, mass) = sums.split_at_mut(self.count.min(sums.len()));
        along.fill(T::ZERO);
        mass.fill(T::ZERO);
        for (i, (&x_i, &label)) in x.iter().zip(self.labels).enumerate() {
            let (d, c) = (self.graph.degree(i).unwrap_or(T::ZERO), component(label));
            if let (Some(a), Some(m)) = (along.get_mut(c), mass.get_mut(c)) {
                (*a, *m) = (*a + d.sqrt() * x_i, *m + d);
            }
        }
        for (i, (x_i, &label)) in x.iter_mut().zip(self.labels).enumerate() {
            let c = component(label);
            if let (Some(&a), Some(&m)) = (along.get(c), mass.get(c)) {
                *x_i -= a * self.graph.degree(i).unwrap_or(T::ZERO).sqrt() / m;
            }
        }
    }
}

/// Lanczos on the Chebyshev filter `p(A)` of the deflated operator, for `k` pairs.
struct Filtered<'a, 'g, T> {
    graph: Deflated<'a, 'g, T>,
    k: usize,
    /// The cut `a`: below it the filter damps, above it it amplifies.
    cut: T,
    steps: usize,
}

impl<T: Real> Filtered<'_, '_, T> {
    /// Up to [`FILTER_ROUNDS`] filtered runs after the capped `first`, each from the sum of
    /// the last Ritz vectors; `values`/`vectors` end with the Rayleigh quotients and their
    /// vectors. The outcome counts every product of `A`.
    #[allow(clippy::too_many_arguments, reason = "the workspace's regions, each used here")]
    fn refine(
        &self,
        first: LanczosOutcome<T>,
        values: &mut [T],
        vectors: &mut [T],
        start: &mut [T],
        sums: &mut [T],
        filter: &mut [T],
        work: &mut [T],
    ) -> Result<LanczosOutcome<T>, Error> {
        let n = start.len();
        let mut outcome = first;
        let cut = self.cut.to_f64();
        if !(cut > 0.0 && cut < 2.0) {
            return Ok(outcome);
        }
        let degree = filter_degree(cut);
        // Relative to ‖p(A)‖ (up to the peak): the Rayleigh residuals in A decide.
        let loose = T::EPSILON.sqrt() * T::from_f64(FILTER_PEAK);
        let params = LanczosParams::new(self.k).max_steps(self.steps).tolerance(loose).check()?;
        for _ in 0..FILTER_ROUNDS {
            start.fill(T::ZERO);
            for v in vectors.chunks_exact(n) {
                start.iter_mut().zip(v).for_each(|(s, &x)| *s += x);
            }
            self.graph.project(sums, start);
            let mut p = |x: &[T], y: &mut [T]| self.chebyshev(degree, T::from_f64(cut), sums, filter, x, y);
            let run = lanczos(&mut p, start, &params, work, values, vectors)?;
            let residual = self.rayleigh(sums, filter, values, vectors)?;
            let products = outcome.steps + run.steps * degree + self.k;
            let exit = if residual <= T::EPSILON.sqrt() { Exit::Converged } else { Exit::Capped };
            outcome = LanczosOutcome { exit, steps: products, residual };
            if exit == Exit::Converged {
                break;
            }
        }
        Ok(outcome)
    }

    /// `y = T_q(ℓ(A))x`, `ℓ(A) = (2/a)A − I`, by the three-term recurrence
    /// `t_{j+1} = 2ℓ(A)t_j − t_{j−1}` in the two vectors of `filter`.
    fn chebyshev(
        &self,
        degree: usize,
        a: T,
        sums: &mut [T],
        filter: &mut [T],
        x: &[T],
        y: &mut [T],
    ) -> Result<(), Error> {
        let n = x.len();
        let (previous, current) = filter.split_at_mut(n);
        let scale = T::from_f64(2.0) / a;
        previous.copy_from_slice(x);
        self.graph.product(sums, x, current)?;
        current.iter_mut().zip(x).for_each(|(c, &x)| *c = scale * *c - x);
        for _ in 1..degree {
            self.graph.product(sums, current, y)?;
            for ((y, c), p) in y.iter_mut().zip(current.iter_mut()).zip(previous.iter_mut()) {
                let next = T::from_f64(2.0) * (scale * *y - *c) - *p;
                (*p, *c, *y) = (*c, next, next);
            }
        }
        y.copy_from_slice(current);
        Ok(())
    }

    /// Replaces each `values[i]` by the Rayleigh quotient `θ_i = y_iᵀAy_i` of its unit
    /// vector; returns the largest `‖Ay_i − θ_iy_i‖/2`.
    fn rayleigh(&self, sums: &mut [T], filter: &mut [T], values: &mut [T], vectors: &[T]) -> Result<T, Error> {
        let n = filter.len() / 2;
        let product = filter.get_mut(..n).unwrap_or_default();
        let mut largest = T::ZERO;
        for (value, y) in values.iter_mut().zip(vectors.chunks_exact(n)) {
            self.graph.product(sums, y, product)?;
            let theta = dot_prefix(y, product);
            let residual =
                product.iter().zip(y).fold(T::ZERO, |acc, (&ay, &y)| acc + (ay - theta * y) * (ay - theta * y));
            (*value, largest) = (theta, largest.max_of(residual.sqrt() / T::from_f64(2.0)));
        }
        Ok(largest)
    }
}

/// The largest degree `q ≤` [`MAX_FILTER_DEGREE`] with `T_q(ℓ(2)) ≤` [`FILTER_PEAK`],
/// `ℓ(2) = (4 − a)/a` (at least 2).
fn filter_degree(a: f64) -> usize {
    let top = (4.0 - a) / a;
    let acosh = |x: f64| libm::log(x + libm::sqrt(x * x - 1.0));
    let degree = acosh(FILTER_PEAK) / acosh(top);
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "clamped to 2..=MAX_FILTER_DEGREE")]
    let degree = degree.clamp(2.0, MAX_FILTER_DEGREE as f64) as usize;
    degree
}

/// Labels each point with its connected component (0, 1, … in order of each component's
/// lowest point; an edge whose weight underflowed to 0 does not connect) by breadth-first
/// search, the queue in `queue`; returns the number of components. Labels and queued
/// points are integers held in `T`, exact for `n ≤ 2/ε` (`2²⁴` points in f32).
fn components<T: Real>(graph: &LaplacianView<'_, T>, labels: &mut [T], queue: &mut [T]) -> Result<usize, Error> {
    let n = graph.n();
    if n as f64 > 2.0 / T::EPSILON.to_f64() {
        return Err(Error::InvalidParam { name: "n" });
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a point number below n ≤ 2/ε, written from a usize"
    )]
    let point = |x: T| x.to_f64() as usize;
    labels.fill(-T::ONE);
    let mut count = 0;
    for root in 0..n {
        if labels.get(root).is_none_or(|&label| label >= T::ZERO) {
            continue;
        }
        let id = T::from_f64(count as f64);
        let (mut head, mut tail) = (0, 1);
        if let (Some(label), Some(first)) = (labels.get_mut(root), queue.first_mut()) {
            (*label, *first) = (id, T::from_f64(root as f64));
        }
        while head < tail {
            let i = queue.get(head).map_or(n, |&x| point(x));
            head += 1;
            let (cols, vals) = graph.row(i).unwrap_or((&[], &[]));
            for (&j, &l) in cols.iter().zip(vals) {
                let j = j as usize;
                if l != T::ZERO && labels.get(j).is_some_and(|&label| label < T::ZERO) {
                    if let (Some(label), Some(slot)) = (labels.get_mut(j), queue.get_mut(tail)) {
                        (*label, *slot) = (id, T::from_f64(j as f64));
                    }
                    tail += 1;
                }
            }
        }
        count += 1;
    }
    Ok(count)
}
