//! Algorithm 1 (BCDKL): block coordinate descent over the columns of `V`, `K = VᵀV`.
//!
//! A sweep visits the constrained points `L` in a fresh random order, then the
//! unconstrained points `U` in a fresh random order (steps 5-11; index order with
//! [`NpklParams::random_order`]`(false)`), and replaces each
//! column by the minimiser of its subproblem (18) (see the `column` module for the four
//! losses). A candidate is kept only when it does not raise `φ_i` (it cannot in exact
//! arithmetic; the check guards against rounding and an inexact QP), so the objective (10)
//! never increases: it changes by exactly `2(φ_i(new) − φ_i(old))` per column, which is
//! how [`Npkl::tracked_objective`] follows it at no cost; [`Npkl::objective`] recomputes
//! it from scratch.
//!
//! Stopping rule (step 14): `‖V(t) − V(t−1)‖_F / ‖V(t)‖_F < ε`, where the numerator is
//! accumulated column by column during the sweep (each column changes once per sweep), so
//! no copy of `V` is kept; or the sweep cap. Either way [`Npkl::run`] returns an
//! [`Outcome`]: non-convergence is not an error.
//!
//! Cost per sweep: `O(r·nnz(L))` for the sums `g` (`nnz ≤ 2nk`), plus the subproblems
//! (`O(r t² + t³)` each, `t = |T(i)|`, `O(r t + r² t + r³)` for the square loss when
//! `r ≤ t`) — `O(r·k·n)` when the constraints are few (Table I).
//!
//! **Memory**: `r·n` scalars for `V` plus the scratch of one column update,
//! `3r + t² + 3t + m + m(m+1)/2 + 2m` with `t = max_i |T(i)|`, `m = max(r, t)`
//! ([`Npkl::scalars_len`]); `n` `u32` for the visiting order ([`Npkl::indices_len`]).

#![allow(
    clippy::indexing_slicing,
    reason = "V is r × n, the order n and the column scratch sized from r and max_degree: checked in new_in"
)]

use crate::linalg::{axpy_prefix, dot_prefix};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real, Rng};

use super::Loss;
use super::column::{Column, work_len};
use super::constraints::ConstraintsView;
use super::graph::LaplacianView;
use super::params::{ColumnUpdate, Embedding, Outcome, StopReason, SweepReport, ValidNpklParams};

/// BCDKL (Algorithm 1) on a graph and a set of constraints, `V` in caller storage.
///
/// # Examples
/// The objective (3) after every sweep, and the stopping rule:
/// ```
/// use kestrel_core::npkl::{Constraints, GraphParams, Laplacian, Link, Loss, Npkl, NpklParams, Pair, StopReason};
/// use kestrel_core::Rng;
/// let points: Vec<f32> = (0..40).map(|i| (i as f32 * 0.37).sin() + if i < 20 { 0.0 } else { 3.0 }).collect();
/// let (n, k) = (40, 4); // 40 points in 1-D
/// let graph = Laplacian::build_in(vec![0.0; Laplacian::scalars_len(n, k)], vec![0; Laplacian::indices_len(n, k)],
///     &points, 1, GraphParams::new().neighbors(k).check()?)?;
/// let pairs = [Pair::new(0, 5, Link::Must), Pair::new(25, 30, Link::Must), Pair::new(5, 30, Link::Cannot)];
/// let t = Constraints::new_in([0u32; Constraints::indices_len(40, 3)], n, &pairs)?;
/// // Storage for V and the scratch, known before anything runs: r = 2, at most 2 pairs per point.
/// let mut values = [0.0f32; Npkl::scalars_len(40, 2, 2)];
/// let mut order = [0u32; Npkl::indices_len(40)];
/// let mut rng = Rng::seed_from_u64(7);
/// let mut npkl = Npkl::new_in(&mut values[..], &mut order[..], graph.view(), t.view(),
///     NpklParams::new(2, Loss::SquaredHinge).tolerance(1e-4).check()?, &mut rng)?;
/// let mut objectives = Vec::new();
/// let outcome = npkl.run_with(&mut rng, |report| objectives.push(report.objective));
/// assert_eq!(outcome.reason, StopReason::Converged);
/// assert!(objectives.windows(2).all(|w| w[1] <= w[0]));
/// assert!(npkl.kernel(0, 5).unwrap() > 0.0 && npkl.kernel(5, 30).unwrap() < 0.0);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Debug)]
pub struct Npkl<'a, T, S, I> {
    values: S,
    order: I,
    graph: LaplacianView<'a, T>,
    constraints: ConstraintsView<'a>,
    params: ValidNpklParams<T>,
    n: usize,
    sweeps: usize,
    objective: T,
}

impl Npkl<'static, (), (), ()> {
    /// Scalars of the value storage for `n` points, rank `r` and at most `t` constraints
    /// on one point ([`Constraints::max_degree`](super::Constraints::max_degree)).
    pub const fn scalars_len(n: usize, rank: usize, max_degree: usize) -> usize {
        n.saturating_mul(rank).saturating_add(rank.saturating_mul(3)).saturating_add(work_len(rank, max_degree))
    }

    /// `u32` entries of the order storage: `n`.
    pub const fn indices_len(n: usize) -> usize {
        n
    }

    /// Bytes of both storages for scalar `T`.
    pub const fn bytes<T>(n: usize, rank: usize, max_degree: usize) -> usize {
        let values = Self::scalars_len(n, rank, max_degree).saturating_mul(core::mem::size_of::<T>());
        values.saturating_add(Self::indices_len(n).saturating_mul(4))
    }
}

impl<'a, T: Real, S: Storage<T>, I: Storage<u32>> Npkl<'a, T, S, I> {
    /// A solver with a random `V(0)` (entries `N(0, 1/r)`, columns projected on the ball
    /// for the linear loss).
    ///
    /// # Errors
    /// `DimensionMismatch` when the graph and the constraints have different `n`;
    /// `CapacityExceeded` when a storage is shorter than [`Npkl::scalars_len`] /
    /// [`Npkl::indices_len`].
    pub fn new_in(
        values: S,
        order: I,
        graph: LaplacianView<'a, T>,
        constraints: ConstraintsView<'a>,
        params: ValidNpklParams<T>,
        rng: &mut Rng,
    ) -> Result<Self, Error> {
        let n = graph.n();
        if constraints.n() != n {
            return Err(Error::DimensionMismatch { expected: n, got: constraints.n() });
        }
        check_capacity(Npkl::scalars_len(n, params.rank(), constraints.max_degree()), values.as_ref().len())?;
        check_capacity(n, order.as_ref().len())?;
        let mut npkl = Npkl { values, order, graph, constraints, params, n, sweeps: 0, objective: T::ZERO };
        let r = params.rank();
        let scale = T::ONE / T::from_f64(r as f64).sqrt();
        for column in npkl.values.as_mut()[..n * r].chunks_exact_mut(r) {
            column.iter_mut().for_each(|x| *x = rng.normal::<T>() * scale);
            if params.loss() == Loss::Linear {
                let norm = dot_prefix(column, column).sqrt();
                if norm > params.bound() {
                    let shrink = params.bound() / norm;
                    column.iter_mut().for_each(|x| *x *= shrink);
                }
            }
        }
        // Constrained points first (the set L), then the others (U).
        let order = &mut npkl.order.as_mut()[..n];
        let constrained = |i: usize| constraints.encoded(i).is_some_and(|p| !p.is_empty());
        let mut slot = 0;
        for first in [true, false] {
            for i in (0..n).filter(|&i| constrained(i) == first) {
                order[slot] = u32::try_from(i).map_err(|_| Error::InvalidParam { name: "n" })?;
                slot += 1;
            }
        }
        npkl.objective = npkl.objective();
        Ok(npkl)
    }

    /// One sweep of Algorithm 1 (steps 5-13).
    pub fn sweep(&mut self, rng: &mut Rng) -> SweepReport<T> {
        let l = self.constraints.constrained_points();
        let order = &mut self.order.as_mut()[..self.n];
        if self.params.random_order() {
            let (constrained, free) = order.split_at_mut(l.min(order.len()));
            rng.shuffle(constrained);
            rng.shuffle(free);
        }
        let (mut change, mut rejected) = (T::ZERO, 0);
        for p in 0..self.n {
            let i = self.order.as_ref()[p] as usize;
            let (update, moved) = self.update(i);
            change += moved;
            rejected += usize::from(!update.accepted);
        }
        self.sweeps += 1;
        let columns = &self.values.as_ref()[..self.n * self.params.rank()];
        let norm2 = dot_prefix(columns, columns);
        let relative_change = if norm2 > T::ZERO {
            (change / norm2).sqrt()
        } else if change > T::ZERO {
            T::ONE / T::ZERO
        } else {
            T::ZERO
        };
        SweepReport { sweep: self.sweeps, objective: self.objective, relative_change, rejected }
    }

    /// Sweeps until the stopping rule of step 14 or the sweep cap.
    pub fn run(&mut self, rng: &mut Rng) -> Outcome<T> {
        self.run_with(rng, |_| {})
    }

    /// As [`run`](Self::run), calling `on_sweep` after every sweep (progress, the
    /// objective per sweep).
    pub fn run_with(&mut self, rng: &mut Rng, mut on_sweep: impl FnMut(&SweepReport<T>)) -> Outcome<T> {
        let initial_objective = self.objective;
        let mut sweeps = 0;
        loop {
            let report = self.sweep(rng);
            sweeps += 1;
            on_sweep(&report);
            let reason = if report.relative_change < self.params.tolerance() {
                Some(StopReason::Converged)
            } else if sweeps >= self.params.max_sweeps() {
                Some(StopReason::SweepCap)
            } else {
                None
            };
            if let Some(reason) = reason {
                let relative_change = report.relative_change;
                return Outcome { reason, sweeps, initial_objective, objective: self.objective, relative_change };
            }
        }
    }

    /// Updates column `i` alone (one block of a sweep).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `i ≥ n` (nothing changes).
    pub fn update_column(&mut self, i: usize) -> Result<ColumnUpdate<T>, Error> {
        if i >= self.n {
            return Err(Error::IndexOutOfRange { index: i, len: self.n });
        }
        Ok(self.update(i).0)
    }

    /// Replaces column `i` by `v` (a warm start, or a test's chosen point).
    ///
    /// # Errors
    /// `IndexOutOfRange` for `i ≥ n`; `DimensionMismatch` when `v.len() ≠ r`;
    /// `NonFinite` for NaN/∞; `InvalidParam { name: "bound" }` when `‖v‖ > b` under the
    /// linear loss. Nothing changes on error.
    pub fn set_column(&mut self, i: usize, v: &[T]) -> Result<(), Error> {
        let r = self.params.rank();
        if i >= self.n {
            return Err(Error::IndexOutOfRange { index: i, len: self.n });
        }
        crate::error::check_len(r, v.len())?;
        check_finite(v)?;
        if self.params.loss() == Loss::Linear && dot_prefix(v, v).sqrt() > self.params.bound() {
            return Err(Error::InvalidParam { name: "bound" });
        }
        let (columns, scratch) = self.values.as_mut().split_at_mut(self.n * r);
        let (old, rest) = scratch.split_at_mut(r);
        let g = &mut rest[..r];
        old.copy_from_slice(&columns[i * r..(i + 1) * r]);
        neighbour_sum(&self.graph, i, columns, r, g);
        let column = Column {
            loss: self.params.loss(),
            gamma: self.params.gamma(),
            diagonal: self.graph.diagonal(),
            bound: self.params.bound(),
            rank: r,
            partners: self.constraints.encoded(i).unwrap_or(&[]),
            columns,
            g,
        };
        let delta = column.objective(v) - column.objective(old);
        columns[i * r..(i + 1) * r].copy_from_slice(v);
        self.objective += delta + delta;
        Ok(())
    }

    /// Objective (3) = (10), recomputed from `V`:
    /// `Σ_i (L_ii‖v_i‖² + Σ_{k≠i} L_ik v_iᵀv_k) + γ Σ_{(i,j)∈T} ℓ(T_ij v_iᵀv_j)`.
    /// `O(r·(nnz + n + m))`.
    pub fn objective(&self) -> T {
        let r = self.params.rank();
        let columns = &self.values.as_ref()[..self.n * r];
        let column = |i: usize| &columns[i * r..(i + 1) * r];
        let mut smooth = T::ZERO;
        for i in 0..self.n {
            let vi = column(i);
            let (cols, vals) = self.graph.row_or_empty(i);
            let off = cols.iter().zip(vals).fold(T::ZERO, |acc, (&k, &l)| acc + l * dot_prefix(vi, column(k as usize)));
            smooth += self.graph.diagonal() * dot_prefix(vi, vi) + off;
        }
        let losses = self.constraints.pairs().fold(T::ZERO, |acc, p| {
            let z = p.link.sign::<T>() * dot_prefix(column(p.i), column(p.j));
            acc + self.params.loss().value(z)
        });
        smooth + self.params.gamma() * losses
    }

    /// The objective as followed through the column updates (equal to
    /// [`objective`](Self::objective) up to rounding).
    pub fn tracked_objective(&self) -> T {
        self.objective
    }

    /// Column `v_i` (`r` scalars), or `None` for `i ≥ n`.
    pub fn column(&self, i: usize) -> Option<&[T]> {
        self.embedding().column(i)
    }

    /// All columns, `v_i` at `i·r`: the rows of the `n × r` matrix `Vᵀ`, the points on
    /// which k-means clusters with the kernel `K = VᵀV`.
    pub fn columns(&self) -> &[T] {
        &self.values.as_ref()[..self.n * self.params.rank()]
    }

    /// The learned kernel entry `K_ij = v_iᵀv_j`, or `None` out of range.
    pub fn kernel(&self, i: usize, j: usize) -> Option<T> {
        Some(dot_prefix(self.column(i)?, self.column(j)?))
    }

    /// The learned representation, borrowed (for the out-of-sample extension).
    pub fn embedding(&self) -> Embedding<'_, T> {
        Embedding::new(self.columns(), self.params.rank(), self.params.column_bound())
    }

    /// Number of points `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.params.rank()
    }

    /// The parameters.
    pub fn params(&self) -> &ValidNpklParams<T> {
        &self.params
    }

    /// Sweeps made since construction.
    pub fn sweeps(&self) -> usize {
        self.sweeps
    }

    /// Minimises (18) over column `i` (`i < n`); returns the update and `‖Δv_i‖²`.
    fn update(&mut self, i: usize) -> (ColumnUpdate<T>, T) {
        let r = self.params.rank();
        let (columns, scratch) = self.values.as_mut().split_at_mut(self.n * r);
        let (old, rest) = scratch.split_at_mut(r);
        let (g, rest) = rest.split_at_mut(r);
        let (candidate, work) = rest.split_at_mut(r);
        old.copy_from_slice(&columns[i * r..(i + 1) * r]);
        neighbour_sum(&self.graph, i, columns, r, g);
        let column = Column {
            loss: self.params.loss(),
            gamma: self.params.gamma(),
            diagonal: self.graph.diagonal(),
            bound: self.params.bound(),
            rank: r,
            partners: self.constraints.encoded(i).unwrap_or(&[]),
            columns,
            g,
        };
        let before = column.objective(old);
        let solved = column.solve(candidate, work) && check_finite(candidate).is_ok();
        let after = if solved { column.objective(candidate) } else { T::from_f64(f64::NAN) };
        let improves = after <= before; // false for NaN
        if !improves {
            return (ColumnUpdate { before, after, accepted: false }, T::ZERO);
        }
        let moved = candidate.iter().zip(old.iter()).fold(T::ZERO, |acc, (&a, &b)| acc + (a - b) * (a - b));
        columns[i * r..(i + 1) * r].copy_from_slice(candidate);
        self.objective += (after - before) + (after - before);
        (ColumnUpdate { before, after, accepted: true }, moved)
    }
}

/// `g = Σ_{k≠i} L_ik v_k` over row `i` of the graph (`O(r·|row|)`).
fn neighbour_sum<T: Real>(graph: &LaplacianView<'_, T>, i: usize, columns: &[T], r: usize, g: &mut [T]) {
    g.fill(T::ZERO);
    let (cols, vals) = graph.row_or_empty(i);
    for (&k, &l) in cols.iter().zip(vals) {
        let k = k as usize;
        axpy_prefix(l, &columns[k * r..(k + 1) * r], g);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::npkl::NpklParams;
    use crate::npkl::testing::{blobs, drawn, graph};
    use std::vec;
    use std::vec::Vec;

    const LOSSES: [Loss; 4] = [Loss::Hinge, Loss::SquaredHinge, Loss::Square, Loss::Linear];

    macro_rules! gen_tests {
        ($($name:ident: $t:ty),*) => {$(
            mod $name {
                use super::*;
                type T = $t;

                #[test]
                fn objective_never_increases() {
                    let (points, labels) = blobs::<T>(1, 20);
                    let g = graph(&points, 2, 4);
                    let t = drawn(&labels, 20, 20, 2);
                    for loss in LOSSES {
                        let r = 4;
                        let mut rng = Rng::seed_from_u64(3);
                        let mut npkl = Npkl::new_in(
                            vec![0.0; Npkl::scalars_len(60, r, t.max_degree())], vec![0; 60],
                            g.view(), t.view(), NpklParams::new(r, loss).check().unwrap(), &mut rng).unwrap();
                        let mut previous = npkl.objective();
                        let slack = 1e2 * T::EPSILON;
                        for _ in 0..15 {
                            let report = npkl.sweep(&mut rng);
                            let now = npkl.objective();
                            assert!(now <= previous + slack * previous.abs().max_of(1.0), "{loss:?}: {now} > {previous}");
                            assert!((report.objective - now).abs() <= 1e3 * T::EPSILON * now.abs().max_of(1.0), "{loss:?}: tracked");
                            previous = now;
                        }
                    }
                }

                #[test]
                fn bad_input_leaves_the_solver_unchanged() {
                    let (points, labels) = blobs::<T>(4, 10);
                    let g = graph(&points, 2, 3);
                    let t = drawn(&labels, 5, 5, 1);
                    let mut rng = Rng::seed_from_u64(1);
                    let make = |params: NpklParams<T>, len: usize, rng: &mut Rng| {
                        Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), params.check()?, rng).map(|_| ())
                    };
                    let len = Npkl::scalars_len(30, 2, t.max_degree());
                    assert_eq!(make(NpklParams::new(0, Loss::Hinge), len, &mut rng), Err(Error::InvalidParam { name: "rank" }));
                    assert_eq!(make(NpklParams::new(2, Loss::Hinge).gamma(-1.0), len, &mut rng), Err(Error::InvalidParam { name: "gamma" }));
                    assert_eq!(make(NpklParams::new(2, Loss::Linear).bound(T::NAN), len, &mut rng), Err(Error::InvalidParam { name: "bound" }));
                    assert_eq!(make(NpklParams::new(2, Loss::Hinge), len - 1, &mut rng), Err(Error::CapacityExceeded { needed: len, capacity: len - 1 }));
                    let other = drawn(&labels[..20], 2, 2, 1);
                    let r = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), other.view(), NpklParams::new(2, Loss::Hinge).check().unwrap(), &mut rng);
                    assert_eq!(r.err(), Some(Error::DimensionMismatch { expected: 30, got: 20 }));

                    let mut npkl = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), NpklParams::new(2, Loss::Linear).check().unwrap(), &mut rng).unwrap();
                    let (before, objective): (Vec<T>, T) = (npkl.columns().to_vec(), npkl.tracked_objective());
                    assert_eq!(npkl.update_column(30), Err(Error::IndexOutOfRange { index: 30, len: 30 }));
                    assert_eq!(npkl.set_column(3, &[1.0]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
                    assert_eq!(npkl.set_column(3, &[T::NAN, 0.0]), Err(Error::NonFinite));
                    assert_eq!(npkl.set_column(3, &[1.0, 1.0]), Err(Error::InvalidParam { name: "bound" }));
                    assert_eq!(npkl.set_column(30, &[0.0, 0.0]), Err(Error::IndexOutOfRange { index: 30, len: 30 }));
                    assert_eq!((npkl.columns(), npkl.tracked_objective()), (&before[..], objective));
                    assert!(npkl.column(30).is_none() && npkl.kernel(0, 30).is_none());
                }

                #[test]
                fn runs_stop_by_the_rule_or_the_cap() {
                    let (points, labels) = blobs::<T>(2, 10);
                    let g = graph(&points, 2, 3);
                    let t = drawn(&labels, 6, 6, 3);
                    let mut rng = Rng::seed_from_u64(9);
                    let len = Npkl::scalars_len(30, 3, t.max_degree());
                    let params = NpklParams::new(3, Loss::Square).tolerance(1e-3).max_sweeps(500).check().unwrap();
                    let mut npkl = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), params, &mut rng).unwrap();
                    let mut seen = 0;
                    let outcome = npkl.run_with(&mut rng, |_| seen += 1);
                    assert_eq!((outcome.reason, outcome.sweeps), (StopReason::Converged, seen));
                    assert!(outcome.relative_change < 1e-3 && outcome.objective <= outcome.initial_objective);
                    let params = NpklParams::new(3, Loss::Square).tolerance(0.0).max_sweeps(2).check().unwrap();
                    let mut npkl = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), params, &mut rng).unwrap();
                    let outcome = npkl.run(&mut rng);
                    assert_eq!((outcome.reason, outcome.sweeps, npkl.sweeps()), (StopReason::SweepCap, 2, 2));
                    // In index order the sweeps do not draw from the generator.
                    let params = NpklParams::new(3, Loss::Hinge).random_order(false).check().unwrap();
                    let mut a = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), params, &mut Rng::seed_from_u64(1)).unwrap();
                    let mut b = Npkl::new_in(vec![0.0; len], vec![0; 30], g.view(), t.view(), params, &mut Rng::seed_from_u64(1)).unwrap();
                    a.sweep(&mut Rng::seed_from_u64(2));
                    b.sweep(&mut Rng::seed_from_u64(3));
                    assert_eq!(a.columns(), b.columns());
                }
            }
        )*};
    }

    gen_tests!(f32_bcd: f32, f64_bcd: f64);

    #[test]
    fn linear_loss_keeps_every_column_in_the_ball() {
        let (points, labels) = blobs::<f64>(5, 10);
        let g = graph(&points, 2, 3);
        let t = drawn(&labels, 8, 8, 5);
        let mut rng = Rng::seed_from_u64(5);
        let params = NpklParams::new(3, Loss::Linear).gamma(50.0).bound(0.5).check().unwrap();
        let mut npkl = Npkl::new_in(
            vec![0.0; Npkl::scalars_len(30, 3, t.max_degree())],
            vec![0; 30],
            g.view(),
            t.view(),
            params,
            &mut rng,
        )
        .unwrap();
        for _ in 0..5 {
            npkl.sweep(&mut rng);
        }
        for i in 0..30 {
            let v = npkl.column(i).unwrap();
            assert!(dot_prefix(v, v).sqrt() <= 0.5 * (1.0 + 1e-12));
        }
        assert_eq!(npkl.embedding().bound(), Some(0.5));
    }
}
