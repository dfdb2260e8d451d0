//! The active set and the updatable factor of `H = D⁻¹ + CᵀC/λ`.
//!
//! `C = [c_{i₁} … c_{i_m0}]` holds the active columns (`μ > 0`) and `D = diag(μ_{i_j})`
//! (Sect. 3.2). The paper keeps `G = H⁻¹` (eq. 23) and updates it with the inverse
//! formulas (24)-(27); in `f32` that drifts (gradient errors of 10-100 % after 10⁴-10⁵
//! updates at small ν). Kestrel instead keeps the Cholesky factor `L`, `LLᵀ = H`, and
//! changes it with Givens rotations in the paper's four cases:
//!
//! | case | paper | here | cost |
//! |---|---|---|---|
//! | `μ` stays 0 | eq. (24) | nothing | — |
//! | `μ_p` changes | eq. (25): `D⁻¹ += Δ e_p e_pᵀ`, `Δ = 1/μ_new − 1/μ_old` | `rank_one_update(e_p, Δ)` (a downdate when `Δ < 0`) | O(m0²) |
//! | `μ_p` → 0 | eq. (26) | `remove_column(p)` | O(m0²) |
//! | 0 → `μ_p` | eq. (27) | `append_column([Cᵀc_p/λ; 1/μ_p + ‖c_p‖²/λ])` | O(m0²) |
//!
//! Everything the solver needs follows from triangular solves with `L`:
//! `z = H⁻¹Cᵀy`, `(H⁻¹)_pp = ‖L⁻¹e_p‖²` and `‖L⁻¹Cᵀc‖²`.
//!
//! **Drift check.** After every `drift_check_every` changes one column `p` (round robin)
//! of `LLᵀ` is compared with `e_p/μ_p + Cᵀc_p/λ` computed afresh (O(n·m0 + m0²)); beyond
//! the tolerance the factor is recomputed from `C` and `μ` (O(n·m0² + m0³)). A case that
//! fails numerically (a downdate or append judged not positive definite) also triggers a
//! refactorization and one retry.
//!
//! Memory: the factor, `k(k+1)/2 + 2k` scalars for `k = max_active`, inside the learner's
//! buffer.

#![allow(
    clippy::indexing_slicing,
    reason = "positions < max_active and candidates < M index the regions Dims lays out, checked by the constructors"
)]

use crate::cholesky::Cholesky;
use crate::linalg::dot_prefix;
use crate::{Error, Real};

use super::columns::Columns;
use super::layout::{Indices, NONE, Parts};

/// Size, counters and drift-check state of the active set; the data lives in the
/// learner's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ActiveSet {
    /// Largest `m0`.
    pub capacity: usize,
    /// `m0`.
    pub len: usize,
    changes: usize,
    cursor: usize,
    /// Full refactorizations so far.
    pub refactorizations: u64,
    /// Drift checks so far.
    pub drift_checks: u64,
}

/// A view of the factor kept in `factor`.
fn view<T: Real>(factor: &mut [T], capacity: usize, len: usize) -> Result<Cholesky<T, &mut [T]>, Error> {
    Cholesky::from_parts(factor, capacity, len)
}

impl ActiveSet {
    pub fn new(capacity: usize) -> Self {
        ActiveSet { capacity, len: 0, changes: 0, cursor: 0, refactorizations: 0, drift_checks: 0 }
    }

    /// The factor of the current active set.
    pub fn factor<'b, T: Real>(&self, factor: &'b mut [T]) -> Result<Cholesky<T, &'b mut [T]>, Error> {
        view(factor, self.capacity, self.len)
    }

    /// `‖L⁻¹v‖²` for `v = w[..m0]` (overwritten with `L⁻¹v`). O(m0²).
    pub fn inverse_quadratic<T: Real>(&self, factor: &mut [T], w: &mut [T]) -> Result<T, Error> {
        let v = &mut w[..self.len];
        self.factor(factor)?.solve_lower_in_place(v)?;
        Ok(dot_prefix(v, v))
    }

    /// `(H⁻¹)_pp = ‖L⁻¹e_p‖²`, with `w` as scratch. O(m0²).
    pub fn inverse_diagonal<T: Real>(&self, factor: &mut [T], p: usize, w: &mut [T]) -> Result<T, Error> {
        w[..self.len].fill(T::ZERO);
        w[p] = T::ONE;
        self.inverse_quadratic(factor, w)
    }

    /// `z = H⁻¹Cᵀy` from `cty`. O(m0²).
    pub fn solve_z<T: Real>(&self, parts: &mut Parts<'_, T>) -> Result<(), Error> {
        let z = &mut parts.z[..self.len];
        z.copy_from_slice(&parts.cty[..self.len]);
        self.factor(parts.factor)?.solve_in_place(z)
    }

    /// Case 4, eq. (27): candidate `j` enters with weight `mu` at position `m0`.
    /// `parts.w1[..m0]` holds `Cᵀc_j` (clobbered); `cc = ‖c_j‖²`; `sums` are `c_j`'s
    /// `(c_jᵀ(y − y₀), c_jᵀ1)` (see [`Parts::cty`]). The column itself has been prepared by
    /// [`Columns::prepare`].
    ///
    /// # Errors
    /// `CapacityExceeded` at `m0 = max_active`; `NotPositiveDefinite` when the grown
    /// matrix is numerically singular. Nothing changes on error.
    #[allow(clippy::too_many_arguments)]
    pub fn enter<T: Real>(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        columns: &Columns,
        j: usize,
        mu: T,
        cc: T,
        sums: (T, T),
        lambda: T,
    ) -> Result<(), Error> {
        let p = self.len;
        if p >= self.capacity {
            return Err(Error::CapacityExceeded { needed: p + 1, capacity: self.capacity });
        }
        let column = &mut parts.w1[..=p];
        for v in &mut column[..p] {
            *v /= lambda;
        }
        column[p] = T::ONE / mu + cc / lambda;
        self.factor(parts.factor)?.append_column(column)?;
        columns.enter(parts.cols, p);
        idx.active[p] = j;
        idx.position[j] = p;
        parts.mu[j] = mu;
        (parts.cty[p], parts.col_sums[p]) = sums;
        self.len = p + 1;
        Ok(())
    }

    /// Case 3, eq. (26): active position `p` leaves (`μ → 0`).
    pub fn leave<T: Real>(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        columns: &Columns,
        p: usize,
    ) -> Result<(), Error> {
        self.factor(parts.factor)?.remove_column(p)?;
        self.forget(parts, idx, columns, p);
        Ok(())
    }

    /// The bookkeeping of a leave, without touching the factor.
    fn forget<T: Real>(&mut self, parts: &mut Parts<'_, T>, idx: &mut Indices<'_>, columns: &Columns, p: usize) {
        let m0 = self.len;
        let j = idx.active[p];
        columns.leave(parts.cols, p, m0);
        idx.active.copy_within(p + 1..m0, p);
        parts.cty.copy_within(p + 1..m0, p);
        parts.col_sums.copy_within(p + 1..m0, p);
        for q in p..m0 - 1 {
            idx.position[idx.active[q]] = q;
        }
        idx.position[j] = NONE;
        parts.mu[j] = T::ZERO;
        self.len = m0 - 1;
    }

    /// Case 2, eq. (25): the weight at position `p` changes from `mu_old` to `mu_new`
    /// (both > 0): `H ← H + (1/μ_new − 1/μ_old) e_p e_pᵀ`.
    ///
    /// # Errors
    /// `NotPositiveDefinite` when the downdate fails numerically; nothing changes.
    pub fn change<T: Real>(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &Indices<'_>,
        p: usize,
        mu_new: T,
    ) -> Result<(), Error> {
        let j = idx.active[p];
        let delta = T::ONE / mu_new - T::ONE / parts.mu[j];
        let e = &mut parts.w2[..self.len];
        e.fill(T::ZERO);
        e[p] = T::ONE;
        self.factor(parts.factor)?.rank_one_update(e, delta)?;
        parts.mu[j] = mu_new;
        Ok(())
    }

    /// Counts one change of the factor; `true` when a drift check is due.
    pub fn note_change(&mut self, every: usize) -> bool {
        self.changes += 1;
        if self.changes >= every && self.len > 0 {
            self.changes = 0;
            true
        } else {
            false
        }
    }

    /// `H e_p` computed afresh into `out[..m0]`: `Cᵀc_p/λ + e_p/μ_p`. O(n·m0).
    #[allow(clippy::too_many_arguments)]
    fn fresh_column<T: Real>(
        cols: &[T],
        mu: &[T],
        active: &[usize],
        columns: &Columns,
        n: usize,
        p: usize,
        lambda: T,
        out: &mut [T],
    ) {
        let cp = &cols[columns.active(p, active[p], n)];
        for (q, o) in out.iter_mut().enumerate().take(active.len()) {
            let cq = &cols[columns.active(q, active[q], n)];
            *o = dot_prefix(cq, cp) / lambda;
        }
        out[p] += T::ONE / mu[active[p]];
    }

    /// Compares one column of `LLᵀ` with `H` computed afresh and refactors when the
    /// relative error exceeds `tolerance`. Returns whether it refactored.
    #[allow(clippy::too_many_arguments)]
    pub fn drift_check<T: Real>(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        columns: &Columns,
        n: usize,
        lambda: T,
        tolerance: T,
    ) -> Result<bool, Error> {
        let m0 = self.len;
        if m0 == 0 {
            return Ok(false);
        }
        self.drift_checks += 1;
        self.cursor = (self.cursor + 1) % m0;
        let p = self.cursor;
        let exact = &mut *parts.w1;
        let active = &idx.active[..m0];
        Self::fresh_column(parts.cols, parts.mu, active, columns, n, p, lambda, exact);
        let chol = self.factor(parts.factor)?;
        let (mut err, mut norm) = (T::ZERO, T::ZERO);
        let lp = chol.row(p).unwrap_or(&[]);
        for (q, &e) in exact.iter().enumerate().take(m0) {
            let lq = chol.row(q).unwrap_or(&[]);
            let k = q.min(p) + 1;
            let approx = dot_prefix(&lq[..k.min(lq.len())], &lp[..k.min(lp.len())]);
            err += (approx - e) * (approx - e);
            norm += e * e;
        }
        let within = err <= tolerance * tolerance * norm; // false for NaN too
        let drifted = !within;
        if drifted {
            self.refactor(parts, idx, columns, n, lambda)?;
        }
        Ok(drifted)
    }

    /// Recomputes `L` from `C` and `μ`: O(n·m0² + m0³). A pivot that is numerically not
    /// positive definite (a column that is a combination of the others, with weights so
    /// large that `D⁻¹` does not lift it) leaves the active set and the factorization
    /// restarts without it.
    pub fn refactor<T: Real>(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        columns: &Columns,
        n: usize,
        lambda: T,
    ) -> Result<(), Error> {
        self.refactorizations += 1;
        loop {
            let m0 = self.len;
            let (cols, mu, active) = (&*parts.cols, &*parts.mu, &*idx.active);
            let entry = |i: usize, k: usize| {
                let ci = &cols[columns.active(i, active[i], n)];
                let ck = &cols[columns.active(k, active[k], n)];
                let diagonal = if i == k { T::ONE / mu[active[i]] } else { T::ZERO };
                dot_prefix(ci, ck) / lambda + diagonal
            };
            match Cholesky::factor_in(&mut *parts.factor, self.capacity, m0, entry) {
                Ok(_) => return Ok(()),
                Err(Error::NotPositiveDefinite { pivot }) if pivot < m0 => {
                    self.forget(parts, idx, columns, pivot);
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Kernel;
    use crate::slkl::columns::{ColumnMode, Data};
    use crate::slkl::layout::Dims;
    use std::vec;
    use std::vec::Vec;

    /// `H = D⁻¹ + CᵀC/λ` over the active set, assembled directly.
    fn assembled<T: Real>(
        parts: &Parts<'_, T>,
        idx: &Indices<'_>,
        set: &ActiveSet,
        columns: &Columns,
        n: usize,
        lambda: T,
    ) -> Vec<T> {
        let k = set.len;
        let mut h = vec![T::ZERO; k * k];
        for p in 0..k {
            for q in 0..k {
                let cp = &parts.cols[columns.active(p, idx.active[p], n)];
                let cq = &parts.cols[columns.active(q, idx.active[q], n)];
                h[p * k + q] = dot_prefix(cp, cq) / lambda;
            }
            h[p * k + p] += T::ONE / parts.mu[idx.active[p]];
        }
        h
    }

    fn assert_factor_of<T: Real>(parts: &mut Parts<'_, T>, set: &ActiveSet, h: &[T]) {
        let k = set.len;
        let chol = set.factor(parts.factor).unwrap();
        let tol = T::from_f64(1e3) * T::EPSILON;
        for i in 0..k {
            for j in 0..k {
                let m = i.min(j) + 1;
                let (ri, rj) = (chol.row(i).unwrap(), chol.row(j).unwrap());
                let llt = dot_prefix(&ri[..m], &rj[..m]);
                let want = h[i * k + j];
                assert!((llt - want).abs() <= tol * (T::ONE + want.abs()), "({i}, {j}) {llt} vs {want}");
            }
        }
    }

    fn four_cases<T: Real>(mode: ColumnMode) {
        let dims = Dims::new(6, 1, 4, 3).columns(mode);
        let mut buf = vec![T::ZERO; dims.batch_scalars()];
        let mut ibuf = vec![0usize; dims.indices()];
        let mut parts = dims.split(&mut buf);
        let mut idx = dims.split_indices(&mut ibuf);
        idx.position.fill(NONE);
        let x: Vec<T> = [0.0, 0.5, 1.0, 1.5, 2.0, 2.5].iter().map(|&v| T::from_f64(v)).collect();
        let y: Vec<T> = x.iter().map(|&v| v * v).collect();
        let data = Data { x: &x, y: &y, dim: 1, mean: T::ZERO };
        let kernel = Kernel::rbf(T::ONE).unwrap();
        for (c, v) in parts.centres.iter_mut().zip([0.0, 1.0, 2.0, 3.0]) {
            *c = T::from_f64(v);
        }
        let columns = Columns { mode, rows: 6, max_active: 3 };
        columns.precompute(parts.cols, 4, parts.centres, &kernel, &data);
        let lambda = T::from_f64(0.5);
        let mut set = ActiveSet::new(3);
        // Case 4 (eq. 27) three times, the third at capacity fails without a change.
        for (j, mu) in [(2usize, 0.5), (0, 2.0), (3, 1.0)] {
            let (range, _) = columns.prepare(parts.cols, j, parts.centres, &kernel, &data);
            let m0 = set.len;
            for p in 0..m0 {
                parts.w1[p] = dot_prefix(&parts.cols[columns.active(p, idx.active[p], 6)], &parts.cols[range.clone()]);
            }
            let cc = dot_prefix(&parts.cols[range.clone()], &parts.cols[range]);
            set.enter(&mut parts, &mut idx, &columns, j, T::from_f64(mu), cc, (T::ZERO, T::ZERO), lambda).unwrap();
        }
        assert_eq!(&idx.active[..3], &[2, 0, 3]);
        let h = assembled(&parts, &idx, &set, &columns, 6, lambda);
        assert_factor_of(&mut parts, &set, &h);
        assert!(matches!(
            set.enter(&mut parts, &mut idx, &columns, 1, T::ONE, T::ONE, (T::ZERO, T::ZERO), lambda),
            Err(Error::CapacityExceeded { .. })
        ));
        // Case 2 (eq. 25): up (a downdate of D⁻¹) and down.
        set.change(&mut parts, &idx, 1, T::from_f64(7.0)).unwrap();
        set.change(&mut parts, &idx, 2, T::from_f64(0.1)).unwrap();
        let h = assembled(&parts, &idx, &set, &columns, 6, lambda);
        assert_factor_of(&mut parts, &set, &h);
        // (H⁻¹)_pp against the inverse of the assembled 3 × 3 (cofactor of entry (1, 1)).
        let w = &mut [T::ZERO; 3];
        let hpp = set.inverse_diagonal(parts.factor, 1, w).unwrap();
        let det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6])
            + h[2] * (h[3] * h[7] - h[4] * h[6]);
        let cofactor = h[0] * h[8] - h[2] * h[6];
        assert!((hpp - cofactor / det).abs() <= T::from_f64(1e-3) * hpp);
        // Case 3 (eq. 26): the middle column leaves; positions shift.
        set.leave(&mut parts, &mut idx, &columns, 1).unwrap();
        assert_eq!(&idx.active[..2], &[2, 3]);
        assert_eq!((idx.position[0], idx.position[3]), (NONE, 1));
        assert_eq!(parts.mu[0], T::ZERO);
        let h = assembled(&parts, &idx, &set, &columns, 6, lambda);
        assert_factor_of(&mut parts, &set, &h);
        // A fresh factorization gives the same factor; a drift check within tolerance
        // leaves it alone.
        set.refactor(&mut parts, &mut idx, &columns, 6, lambda).unwrap();
        assert_eq!(set.refactorizations, 1);
        assert_factor_of(&mut parts, &set, &h);
        assert!(!set.drift_check(&mut parts, &mut idx, &columns, 6, lambda, T::ONE).unwrap());
    }

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                four_cases::<$t>(ColumnMode::OnTheFly);
                four_cases::<$t>(ColumnMode::Precomputed);
            }
        )*};
    }

    gen_tests! {
        four_cases_f32: f32,
        four_cases_f64: f64,
    }
}
