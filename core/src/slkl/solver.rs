//! The coordinate step shared by the batch and the sliding-window learner.
//!
//! **Caches.** After every change of `μ` the solver refreshes, in O(m0²),
//! `z = H⁻¹Cᵀy` (two triangular solves with the factor) and
//! `F(μ) = ‖y‖² − (Cᵀy)ᵀz/λ + νΣμ` (eq. 14 through eq. 22). The residual vector
//! `r = K_λ⁻¹y = (y − Cz/λ)/λ` (eq. 22, O(n·m0)) is refreshed lazily, only when a step
//! needs it: for an active coordinate `a = yᵀK_λ⁻¹c_p = z_p/(λμ_p)` follows from
//! `CᵀK_λ⁻¹y = D⁻¹z/λ` in O(1), so a run of steps on active coordinates (what shrinking
//! leaves) costs O(m0²) each, not O(n·m0). `‖y − ȳ‖²` and `Cᵀ(y − ȳ)` are sums over the
//! samples, taken once with compensated summation; the window keeps them as running sums
//! (see [`Engine::arrive`]).
//!
//! **One step** on candidate `m` (eq. 18-21):
//! - `μ_m = 0`: `a = rᵀc_m`, O(n); if `λa² ≤ ν`, `∂F/∂μ_m = ν − λa² ≥ 0` and the weight
//!   stays 0 (eq. 24) whatever `b`: no `Cᵀc_m`, no solve, no factor work — only `r`
//!   brought up to date if a change since made it stale. This is what makes rejecting
//!   (and shrinking) a zero coordinate cheap;
//! - `μ_m = 0`, entering: `b = (‖c‖² − ‖L⁻¹Cᵀc‖²/λ)/λ` (O(n·m0 + m0²)), then eq. (27);
//! - `μ_p > 0`: `a = z_p/(λμ_p)`, `b = (1 − (H⁻¹)_pp/μ_p)/μ_p` (O(m0²); it follows from
//!   `CᵀK_λ⁻¹C = D⁻¹ − D⁻¹H⁻¹D⁻¹`), falling back to the general form when the
//!   difference cancels; then eq. (25) or (26).
//!
//! The new weight comes from the [`StepRule`]: by default the exact coordinate minimiser
//! `max(0, μ + (√(λa²/ν) − 1)/b)`, so `F` is non-increasing.
//!
//! The schedule around the step (draws, shrinking, stopping) is a [`Schedule`] the engine
//! owns; [`Engine::step`] asks it for the coordinate and reports the outcome back.

#![allow(
    clippy::indexing_slicing,
    reason = "positions < max_active, candidates < M and samples < rows index the regions Dims lays out, checked by the constructors"
)]

use crate::linalg::dot_prefix;
use crate::{Error, Real};

use super::active_set::ActiveSet;
use super::columns::{Columns, Data, inverse_norm};
use super::layout::{Dims, Indices, NONE, Parts};
use super::outcome::{Case, ExitReason, Stats, Step, Summary};
use super::params::{StepRule, ValidParams};
use super::schedule::Schedule;

/// The state of a learner apart from its buffers.
#[derive(Clone, Debug)]
pub(crate) struct Engine<T> {
    pub params: ValidParams<T>,
    pub columns: Columns,
    pub set: ActiveSet,
    /// Live candidates `M' ≤ M`.
    pub candidates: usize,
    pub objective: T,
    /// `‖y − y₀‖²`, `y₀ = reference`.
    pub(super) yy: T,
    /// `y₀`, the value the targets are measured from in `yy` and `Cᵀy`: the targets' mean
    /// whenever `z` and `F` are fresh.
    pub(super) reference: T,
    /// Arrivals taken into `Cᵀy`, `Cᵀ1` and `yy` as running sums since they were last
    /// summed afresh.
    pub(super) running: usize,
    /// `z` and `F` (and so `r`) need a refresh.
    pub stale: bool,
    /// `r` needs a refresh.
    pub(super) stale_r: bool,
    /// `Cᵀy`, `Cᵀ1` and `‖y − ȳ‖²` need summing afresh.
    pub stale_cty: bool,
    pub stats: Stats,
    /// Draws, shrinking pool and stopping rule.
    pub schedule: Schedule<T>,
}

/// The new weight from `a`, `b > 0` under `rule`.
fn next_weight<T: Real>(rule: StepRule, mu: T, a: T, b: T, lambda: T, nu: T) -> T {
    let la2 = lambda * a * a;
    let two = T::ONE + T::ONE;
    let moved = match rule {
        StepRule::Exact => mu + ((la2 / nu).sqrt() - T::ONE) / b,
        _ if la2 == T::ZERO => T::ZERO,
        StepRule::Newton => mu + (la2 - nu) / (two * la2 * b),
        StepRule::NewtonAsPrinted => mu + (la2 - nu) / (la2 * b),
    };
    // `1/μ` enters `D⁻¹`: a weight whose reciprocal overflows counts as 0.
    if moved > T::ZERO && moved.is_finite() && (T::ONE / moved).is_finite() { moved } else { T::ZERO }
}

impl<T: Real> Engine<T> {
    /// # Errors
    /// `InvalidParam { name: "lag" }` when the lag exceeds the candidate capacity.
    pub fn new(dims: &Dims, params: ValidParams<T>, candidates: usize) -> Result<Self, Error> {
        let lag = if params.lag() == 0 { candidates } else { params.lag() };
        if lag > dims.candidates() {
            return Err(Error::InvalidParam { name: "lag" });
        }
        Ok(Engine {
            params,
            columns: Columns { mode: dims.column_mode(), rows: dims.rows(), max_active: dims.max_active() },
            set: ActiveSet::new(dims.max_active()),
            candidates,
            objective: T::ZERO,
            yy: T::ZERO,
            reference: T::ZERO,
            running: 0,
            stale: true,
            stale_r: true,
            stale_cty: true,
            stats: Stats::default(),
            schedule: Schedule::new(candidates, lag, &params),
        })
    }

    /// `μ = 0`, the columns precomputed if so configured, caches fresh.
    pub fn init(&mut self, parts: &mut Parts<'_, T>, idx: &mut Indices<'_>, data: &Data<'_, T>) -> Result<(), Error> {
        parts.mu.fill(T::ZERO);
        idx.position.fill(NONE);
        for (i, p) in idx.pool.iter_mut().enumerate() {
            *p = i;
        }
        let kernel = self.params.kernel();
        self.columns.precompute(parts.cols, self.candidates, parts.centres, &kernel, data);
        self.refresh(parts, idx, data)?;
        self.schedule.reset();
        Ok(())
    }

    /// One step of Algorithm 1 on the coordinate the schedule gives (drawn from the pool,
    /// or the next one of a confirming sweep), then the schedule's bookkeeping.
    pub fn step(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
    ) -> Result<Step<T>, Error> {
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        let (j, slot) = self.schedule.next(idx.pool, self.objective, &mut self.stats);
        let case = self.coordinate_step(parts, idx, data, j)?;
        self.stats.record(case);
        self.schedule.after_step(slot, case, self.objective, idx.pool, parts.history, &mut self.stats);
        Ok(Step { candidate: j, case, objective: self.objective, active: self.set.len })
    }

    /// Steps until the stopping rule holds or `max_steps` steps were taken.
    pub fn run(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
    ) -> Result<Summary<T>, Error> {
        let mut steps = 0;
        while !self.schedule.converged && steps < self.params.max_steps() {
            self.step(parts, idx, data)?;
            steps += 1;
        }
        Ok(Summary {
            reason: if self.schedule.converged { ExitReason::Converged } else { ExitReason::StepCap },
            steps,
            objective: self.objective,
            active: self.set.len,
        })
    }

    /// Takes an arrival into the running sums `Cᵀ(y − y₀)`, `Cᵀ1` and `‖y − y₀‖²`, O(m0):
    /// row `slot` of the active columns becomes `parts.w1[..m0]` with target `y`, replacing
    /// `parts.w2[..m0]` and target `evicted` (`None`: the window was not full and no sample
    /// left). After a window's worth (`rows`) of arrivals the sums are marked for summing
    /// afresh, so their rounding never builds up beyond that of `rows` updates.
    pub fn arrive(&mut self, parts: &mut Parts<'_, T>, y: T, evicted: Option<T>, rows: usize) {
        let m0 = self.set.len;
        let y0 = self.reference;
        let (dy, dy_old) = (y - y0, evicted.map_or(T::ZERO, |old| old - y0));
        let sums = parts.cty[..m0].iter_mut().zip(&mut parts.col_sums[..m0]);
        for ((cty, sum), (&new, &old)) in sums.zip(parts.w1[..m0].iter().zip(&parts.w2[..m0])) {
            let old = if evicted.is_some() { old } else { T::ZERO };
            *cty += new * dy - old * dy_old;
            *sum += new - old;
        }
        self.yy = (self.yy + dy * dy - dy_old * dy_old).max_of(T::ZERO);
        self.running = (self.running + 1).min(rows);
        if self.running == rows {
            self.stale_cty = true;
        }
    }

    /// The live part of active column `p`.
    fn active_range(&self, idx: &Indices<'_>, p: usize, n: usize) -> core::ops::Range<usize> {
        self.columns.active(p, idx.active[p], n)
    }

    /// Recomputes `z` and `F`, O(m0²), after bringing `Cᵀy` and `‖y − ȳ‖²` to the targets'
    /// current mean: O(m0) from the running sums, or O(n·m0) when they are summed afresh.
    /// Leaves `r` stale.
    pub fn refresh(&mut self, parts: &mut Parts<'_, T>, idx: &Indices<'_>, data: &Data<'_, T>) -> Result<(), Error> {
        let (m0, n) = (self.set.len, data.n());
        let (lambda, nu) = (self.params.lambda(), self.params.nu());
        if self.stale_cty {
            for p in 0..m0 {
                (parts.cty[p], parts.col_sums[p]) = data.column_sums(&parts.cols[self.active_range(idx, p, n)]);
            }
            self.yy = data.centred_norm2();
            (self.reference, self.running, self.stale_cty) = (data.mean, 0, false);
        } else if data.mean != self.reference {
            // `Σ c(y − ȳ) = Σ c(y − y₀) − (ȳ − y₀)Σ c`, `Σ (y − ȳ)² = Σ (y − y₀)² − n(ȳ − y₀)²`.
            let shift = data.mean - self.reference;
            for (cty, &sum) in parts.cty[..m0].iter_mut().zip(&parts.col_sums[..m0]) {
                *cty -= shift * sum;
            }
            self.yy = (self.yy - T::from_f64(n as f64) * shift * shift).max_of(T::ZERO);
            self.reference = data.mean;
        }
        self.set.solve_z(parts)?;
        let explained = dot_prefix(&parts.cty[..m0], &parts.z[..m0]);
        let l1 = idx.active[..m0].iter().fold(T::ZERO, |acc, &j| acc + parts.mu[j]);
        self.objective = self.yy - explained / lambda + nu * l1;
        self.stale = false;
        self.stale_r = true;
        Ok(())
    }

    /// Brings `r = K_λ⁻¹y = (y − Cz/λ)/λ` up to date (eq. 22). O(n·m0) when stale.
    fn refresh_r(&mut self, parts: &mut Parts<'_, T>, idx: &Indices<'_>, data: &Data<'_, T>) -> Result<(), Error> {
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        if !self.stale_r {
            return Ok(());
        }
        let (m0, n, lambda) = (self.set.len, data.n(), self.params.lambda());
        let r = &mut parts.r[..n];
        for (ri, &yi) in r.iter_mut().zip(data.y) {
            *ri = yi - data.mean;
        }
        for p in 0..m0 {
            let scale = parts.z[p] / lambda;
            for (ri, &ci) in r.iter_mut().zip(&parts.cols[self.active_range(idx, p, n)]) {
                *ri -= scale * ci;
            }
        }
        for ri in r.iter_mut() {
            *ri /= lambda;
        }
        self.stale_r = false;
        Ok(())
    }

    /// `a = yᵀK_λ⁻¹c_j`: `z_p/(λμ_j)` for an active `j` at position `p` (from
    /// `CᵀK_λ⁻¹y = D⁻¹z/λ`), O(1); `c_jᵀr` otherwise, O(n) (plus O(n·m0) if `r` is stale).
    fn coordinate_a(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &Indices<'_>,
        data: &Data<'_, T>,
        j: usize,
        range: core::ops::Range<usize>,
    ) -> Result<T, Error> {
        let p = idx.position[j];
        if p != NONE {
            return Ok(parts.z[p] / (self.params.lambda() * parts.mu[j]));
        }
        self.refresh_r(parts, idx, data)?;
        Ok(dot_prefix(&parts.cols[range], &parts.r[..data.n()]))
    }

    /// Fills `w1[..m0]` with `Cᵀc` for the column at `range` and returns
    /// `(‖c‖², ‖L⁻¹Cᵀc‖²)` (`w2` holds `L⁻¹Cᵀc`). O(n·m0 + m0²).
    fn project(
        &self,
        parts: &mut Parts<'_, T>,
        idx: &Indices<'_>,
        range: core::ops::Range<usize>,
    ) -> Result<(T, T), Error> {
        let (m0, n) = (self.set.len, range.len());
        let col = &parts.cols[range.clone()];
        for p in 0..m0 {
            parts.w1[p] = dot_prefix(&parts.cols[self.active_range(idx, p, n)], col);
        }
        let cc = dot_prefix(col, col);
        parts.w2[..m0].copy_from_slice(&parts.w1[..m0]);
        let quad = self.set.inverse_quadratic(parts.factor, parts.w2)?;
        Ok((cc, quad))
    }

    /// `b = c_mᵀK_λ⁻¹c_m` in the general form, with a floor `ε‖c‖²/λ` (`b > 0` holds
    /// exactly; the floor only catches cancellation).
    fn general_b(&self, cc: T, quad: T) -> T {
        let lambda = self.params.lambda();
        let b = (cc - quad / lambda) / lambda;
        let floor = T::EPSILON * cc / lambda;
        if b > floor { b } else { floor }
    }

    /// Makes candidate `j`'s column available (the stored one when active, else computed
    /// on the fly or precomputed); returns its live range.
    fn prepare(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &Indices<'_>,
        data: &Data<'_, T>,
        j: usize,
    ) -> core::ops::Range<usize> {
        let p = idx.position[j];
        if p != NONE {
            return self.active_range(idx, p, data.n());
        }
        let kernel = self.params.kernel();
        let (range, evaluated) = self.columns.prepare(parts.cols, j, parts.centres, &kernel, data);
        if evaluated {
            self.stats.column_evaluations += 1;
        }
        range
    }

    /// Moves coordinate `j` by the step rule. Leaves the caches fresh.
    pub fn coordinate_step(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
        j: usize,
    ) -> Result<Case, Error> {
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        let (lambda, nu, rule) = (self.params.lambda(), self.params.nu(), self.params.rule());
        let n = data.n();
        let range = self.prepare(parts, idx, data, j);
        let a = self.coordinate_a(parts, idx, data, j, range.clone())?;
        let p = idx.position[j];
        let case = if p == NONE {
            let descends = lambda * a * a > nu; // false for NaN too
            if !descends {
                return Ok(Case::StayZero);
            }
            if self.set.len >= self.set.capacity {
                return Ok(Case::AtCapacity);
            }
            let (cc, quad) = self.project(parts, idx, range.clone())?;
            let b = self.general_b(cc, quad);
            let mu = next_weight(rule, T::ZERO, a, b, lambda, nu);
            // A weight whose column adds less than rounding to λI would only make the
            // factor singular: it stays 0.
            let visible = mu * cc > T::EPSILON * lambda; // false for NaN too
            if !visible {
                return Ok(Case::StayZero);
            }
            let sums = data.column_sums(&parts.cols[range]);
            let columns = self.columns;
            match self.set.enter(parts, idx, &columns, j, mu, cc, sums, lambda) {
                Ok(()) => Case::Enter,
                Err(Error::NotPositiveDefinite { .. }) => {
                    self.set.refactor(parts, idx, &columns, n, lambda)?;
                    self.refresh(parts, idx, data)?;
                    return Ok(Case::IllConditioned);
                }
                Err(e) => return Err(e),
            }
        } else {
            let mu_old = parts.mu[j];
            let h = self.set.inverse_diagonal(parts.factor, p, parts.w2)?;
            let q = T::ONE - h / mu_old;
            let b = if q > T::EPSILON.sqrt() {
                q / mu_old
            } else {
                let (cc, quad) = self.project(parts, idx, range)?;
                self.general_b(cc, quad)
            };
            let mu_new = next_weight(rule, mu_old, a, b, lambda, nu);
            let columns = self.columns;
            if mu_new == T::ZERO {
                self.set.leave(parts, idx, &columns, p)?;
                Case::Leave
            } else if (mu_new - mu_old).abs() <= T::from_f64(4.0) * T::EPSILON * mu_old {
                return Ok(Case::Unchanged);
            } else {
                match self.set.change(parts, idx, p, mu_new) {
                    Ok(()) => Case::Change,
                    Err(Error::NotPositiveDefinite { .. }) => {
                        // A fresh factor, then one retry (the refactorization may have
                        // dropped columns, so look the position up again).
                        self.set.refactor(parts, idx, &columns, n, lambda)?;
                        let p = idx.position[j];
                        let retried = if p == NONE {
                            Err(Error::NotPositiveDefinite { pivot: 0 })
                        } else {
                            self.set.change(parts, idx, p, mu_new)
                        };
                        match retried {
                            Ok(()) => Case::Change,
                            Err(Error::NotPositiveDefinite { .. }) => {
                                self.refresh(parts, idx, data)?;
                                return Ok(Case::IllConditioned);
                            }
                            Err(e) => return Err(e),
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        self.after_change(parts, idx, data)?;
        Ok(case)
    }

    /// Drift check when due, then a refresh of the caches.
    pub fn after_change(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
    ) -> Result<(), Error> {
        if self.set.note_change(self.params.drift_check_every()) {
            let columns = self.columns;
            let (lambda, tol) = (self.params.lambda(), self.params.drift_tolerance());
            self.set.drift_check(parts, idx, &columns, data.n(), lambda, tol)?;
        }
        self.refresh(parts, idx, data)
    }

    /// `(∂F/∂μ_j, ∂²F/∂μ_j²) = (ν − λa², 2λa²b)` (eq. 20-21). O(n·m0 + m0²).
    pub fn derivatives(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &Indices<'_>,
        data: &Data<'_, T>,
        j: usize,
    ) -> Result<(T, T), Error> {
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        let (lambda, nu) = (self.params.lambda(), self.params.nu());
        let range = self.prepare(parts, idx, data, j);
        let a = self.coordinate_a(parts, idx, data, j, range.clone())?;
        let (cc, quad) = self.project(parts, idx, range)?;
        let b = (cc - quad / lambda) / lambda;
        let la2 = lambda * a * a;
        Ok((nu - la2, (T::ONE + T::ONE) * la2 * b))
    }

    /// Sets `μ_j = mu` through the matching case. On error nothing changed.
    pub fn set_weight(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
        j: usize,
        mu: T,
    ) -> Result<(), Error> {
        if j >= self.candidates {
            return Err(Error::IndexOutOfRange { index: j, len: self.candidates });
        }
        if !mu.is_finite() {
            return Err(Error::NonFinite);
        }
        if mu < T::ZERO || (mu > T::ZERO && !(T::ONE / mu).is_finite()) {
            return Err(Error::InvalidParam { name: "mu" });
        }
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        let columns = self.columns;
        let lambda = self.params.lambda();
        let p = idx.position[j];
        if p == NONE {
            if mu == T::ZERO {
                return Ok(());
            }
            if self.set.len >= self.set.capacity {
                return Err(Error::CapacityExceeded { needed: self.set.len + 1, capacity: self.set.capacity });
            }
            let stats = self.stats;
            let range = self.prepare(parts, idx, data, j);
            let (cc, _) = self.project(parts, idx, range.clone())?;
            let sums = data.column_sums(&parts.cols[range]);
            let entered = self.set.enter(parts, idx, &columns, j, mu, cc, sums, lambda);
            if entered.is_err() {
                self.stats = stats; // a rejected call leaves even the counters as they were
            }
            entered?;
        } else if mu == T::ZERO {
            self.set.leave(parts, idx, &columns, p)?;
        } else {
            self.set.change(parts, idx, p, mu)?;
        }
        self.after_change(parts, idx, data)?;
        self.schedule.reset();
        Ok(())
    }

    /// `f(x) − ȳ = Σ_p (z_p/λ)·k(x, s_p)/√k(s_p, s_p)`: eq. (16)-(17), since
    /// `α* = 2λK_λ⁻¹y = 2λr` (eq. 15), `α~_p = 2λμ_p c_pᵀr/√k(s_p, s_p)` and
    /// `μ_p c_pᵀr = μ_p (D⁻¹z/λ)_p = z_p/λ`. O(m0·d).
    pub fn predict_centred(&self, centres: &[T], z: &[T], active: &[usize], x: &[T]) -> T {
        let kernel = self.params.kernel();
        let lambda = self.params.lambda();
        let dim = x.len();
        let mut f = T::ZERO;
        for (&zp, &j) in z.iter().zip(active).take(self.set.len) {
            let s = &centres[j * dim..(j + 1) * dim];
            f += zp / lambda * kernel.eval_prefix(x, s) * inverse_norm(&kernel, s);
        }
        f
    }

    /// Counters, with the active set's.
    pub fn stats(&self) -> Stats {
        Stats { refactorizations: self.set.refactorizations, drift_checks: self.set.drift_checks, ..self.stats }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `φ(t) = −λa²t/(1 + tb) + νt`: `F(μ + t e_m) − F(μ)` by Sherman–Morrison.
    fn phi(t: f64, a: f64, b: f64, lambda: f64, nu: f64) -> f64 {
        -lambda * a * a * t / (1.0 + t * b) + nu * t
    }

    #[test]
    fn exact_rule_minimises_the_coordinate_restriction() {
        for &(mu, a, b, lambda, nu) in &[
            (0.0, 0.5, 2.0, 1.0, 0.01),
            (1.5, 0.05, 0.3, 1.0, 0.01),
            (0.2, 0.01, 4.0, 2.0, 0.5),
            (3.0, 0.3, 0.25, 1.0, 0.01),
        ] {
            let new = next_weight(StepRule::Exact, mu, a, b, lambda, nu);
            let best = phi(new - mu, a, b, lambda, nu);
            // No point of a fine grid over [0, μ + 10/b] does better.
            for k in 0..=10_000 {
                let v = (mu + 10.0 / b) * k as f64 / 10_000.0;
                assert!(best <= phi(v - mu, a, b, lambda, nu) + 1e-12, "{mu} {a} {b}: {new} vs {v}");
            }
        }
    }

    #[test]
    fn newton_rules_follow_eq_19_and_algorithm_2() {
        let (mu, a, b, lambda, nu) = (1.0f64, 0.2, 0.5, 1.0, 0.01);
        let la2 = lambda * a * a;
        let newton = mu + (la2 - nu) / (2.0 * la2 * b);
        assert_eq!(next_weight(StepRule::Newton, mu, a, b, lambda, nu), newton);
        let printed = next_weight(StepRule::NewtonAsPrinted, mu, a, b, lambda, nu);
        assert!((printed - mu - 2.0 * (newton - mu)).abs() < 1e-12);
        // Projection on μ ≥ 0; a = 0 gives 0 (Prop. 1, "otherwise").
        assert_eq!(next_weight(StepRule::Newton, 0.0, 0.0, b, lambda, nu), 0.0);
        assert_eq!(next_weight(StepRule::Exact, 0.1, 0.001, b, lambda, nu), 0.0);
        assert_eq!(next_weight(StepRule::Exact, 0.0f32, 0.05, 1.0, 1.0, 0.01), 0.0);
        // A weight whose reciprocal overflows counts as 0.
        assert_eq!(next_weight(StepRule::Exact, 1e-320, 1e-160, 1e300, 1.0, 1.0), 0.0);
    }
}
