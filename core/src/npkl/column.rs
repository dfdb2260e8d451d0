//! One block of Algorithm 1: the per-column problem (18) and its minimiser for each loss.
//!
//! With `g = Σ_{k≠i} L_ik v_k` and the partners `v_j, j ∈ T(i)`, the column `v_i`
//! minimises
//!
//! ```text
//! φ_i(v) = ½ L_ii ‖v‖² + vᵀg + (γ/2) Σ_{j∈T(i)} ℓ(T_ij vᵀv_j)                (18)
//! ```
//!
//! (the terms of (10) that involve `v_i`, halved). Minimisers, with `t = |T(i)|`:
//!
//! - `t = 0`: `v = −g/L_ii` (13).
//! - hinge / squared hinge: `α` from the dual QP (22)/(25) with `P_st = T_is T_it v_sᵀv_t`,
//!   `q_s = T_is v_sᵀg + L_ii` (23), `H = P` (box `α ≤ γ/2`) or `H = P + (L_ii/γ)I`
//!   (`α ≥ 0`); then `v = (Σ_s α_s T_is v_s − g)/L_ii` (21). Cost `O(r t² + t³)`.
//! - square: `M v = γ Σ_j T_ij v_j − g` with `M = L_ii I + γ Σ_j v_j v_jᵀ` (27)-(28), by
//!   Cholesky of `M` (`O(r² t + r³)`) when `r ≤ t`, otherwise by SMW (29):
//!   `M⁻¹b = (b − A((L_ii/γ)I + AᵀA)⁻¹Aᵀb)/L_ii`, `A = [v_j]`, `O(r t² + t³)`.
//! - linear: `ṽ = ((γ/2) Σ_j T_ij v_j − g)/L_ii`, projected on `‖v‖ ≤ b` (31).
//!
//! With the linear loss every column, constrained or not, is projected on the ball.

#![allow(
    clippy::indexing_slicing,
    reason = "columns of r, partners < n and scratch sized from r and max_degree by Npkl::new_in"
)]

use crate::Real;
use crate::cholesky::Cholesky;
use crate::linalg::{axpy_prefix, dot_prefix};

use super::Loss;
use super::constraints::decode;
use super::qp::{self, QpScratch};

/// Scalars of scratch a column update needs for rank `r` and at most `t` partners.
pub(super) const fn work_len(r: usize, t: usize) -> usize {
    let m = if r > t { r } else { t };
    t.saturating_mul(t).saturating_add(t.saturating_mul(3)).saturating_add(m).saturating_add(Cholesky::scalars_len(m))
}

/// The data of one column's subproblem.
pub(super) struct Column<'a, T> {
    pub loss: Loss,
    pub gamma: T,
    /// `L_ii = 1 + δ`.
    pub diagonal: T,
    /// The norm bound `b` of the linear loss.
    pub bound: T,
    pub rank: usize,
    /// `T(i)`, encoded as `(j << 1) | must`.
    pub partners: &'a [u32],
    /// All columns of `V`, column `j` at `j·r`.
    pub columns: &'a [T],
    /// `g = Σ_{k≠i} L_ik v_k`.
    pub g: &'a [T],
}

impl<'a, T: Real> Column<'a, T> {
    /// `(v_j, T_ij)` for an encoded partner.
    fn partner(&self, entry: u32) -> (&'a [T], T) {
        let (j, sign) = decode::<T>(entry);
        let r = self.rank;
        (self.columns.get(j * r..(j + 1) * r).unwrap_or(&[]), sign)
    }

    /// `φ_i(v)` of eq. (18).
    pub fn objective(&self, v: &[T]) -> T {
        let half = T::from_f64(0.5);
        let losses = self.partners.iter().fold(T::ZERO, |acc, &e| {
            let (vj, sign) = self.partner(e);
            acc + self.loss.value(sign * dot_prefix(v, vj))
        });
        half * self.diagonal * dot_prefix(v, v) + dot_prefix(v, self.g) + half * self.gamma * losses
    }

    /// Writes the minimiser of (18) into `out` (`r` scalars) using `work`
    /// ([`work_len`] scalars); `false` when a factorisation failed numerically.
    pub fn solve(&self, out: &mut [T], work: &mut [T]) -> bool {
        let t = self.partners.len();
        let solved = match self.loss {
            _ if t == 0 => {
                self.signed_sum(T::ZERO, out);
                true
            }
            Loss::Hinge | Loss::SquaredHinge => self.dual(out, work),
            Loss::Square if self.rank <= t => self.square_direct(out, work),
            Loss::Square => self.square_smw(out, work),
            Loss::Linear => {
                self.signed_sum(self.gamma * T::from_f64(0.5), out);
                true
            }
        };
        if matches!(self.loss, Loss::Linear) {
            let norm = dot_prefix(out, out).sqrt();
            if norm > self.bound {
                let scale = self.bound / norm;
                out.iter_mut().for_each(|x| *x *= scale);
            }
        }
        solved
    }

    /// `out = c Σ_j T_ij v_j − g`.
    fn combination(&self, c: T, out: &mut [T]) {
        for (o, &gi) in out.iter_mut().zip(self.g) {
            *o = -gi;
        }
        for &e in self.partners {
            let (vj, sign) = self.partner(e);
            axpy_prefix(c * sign, vj, out);
        }
    }

    /// `out = (c Σ_j T_ij v_j − g)/L_ii`.
    fn signed_sum(&self, c: T, out: &mut [T]) {
        self.combination(c, out);
        out.iter_mut().for_each(|x| *x /= self.diagonal);
    }

    /// Hinge and squared hinge: the dual QP (22)/(25), then (21).
    fn dual(&self, out: &mut [T], work: &mut [T]) -> bool {
        let t = self.partners.len();
        let (h, rest) = work.split_at_mut(t * t);
        let (q, rest) = rest.split_at_mut(t);
        let (alpha, rest) = rest.split_at_mut(t);
        let (grad, rest) = rest.split_at_mut(t);
        let (rhs, chol) = rest.split_at_mut(t.max(self.rank));
        for (s, &es) in self.partners.iter().enumerate() {
            let (vs, ss) = self.partner(es);
            q[s] = ss * dot_prefix(vs, self.g) + self.diagonal;
            for (c, &ec) in self.partners.iter().enumerate().take(s + 1) {
                let (vc, sc) = self.partner(ec);
                let p = ss * sc * dot_prefix(vs, vc);
                h[s * t + c] = p;
                h[c * t + s] = p;
            }
        }
        let upper = match self.loss {
            Loss::Hinge => Some(self.gamma * T::from_f64(0.5)),
            _ => {
                let ridge = self.diagonal / self.gamma;
                (0..t).for_each(|s| h[s * t + s] += ridge);
                None
            }
        };
        let mut scratch = QpScratch { alpha, grad, rhs, chol };
        qp::solve(t, h, q, upper, &mut scratch);
        for (o, &gi) in out.iter_mut().zip(self.g) {
            *o = -gi;
        }
        for (&e, &a) in self.partners.iter().zip(scratch.alpha.iter()) {
            let (vj, sign) = self.partner(e);
            axpy_prefix(a * sign, vj, out);
        }
        out.iter_mut().for_each(|x| *x /= self.diagonal);
        true
    }

    /// Square loss, `M v = b` by Cholesky of the `r × r` matrix `M` (27)-(28).
    fn square_direct(&self, out: &mut [T], work: &mut [T]) -> bool {
        let r = self.rank;
        self.combination(self.gamma, out); // b = γ Σ T_ij v_j − g
        let chol = &mut work[..Cholesky::scalars_len(r)];
        let factor = Cholesky::factor_in(chol, r, r, |a, b| {
            let base = if a == b { self.diagonal } else { T::ZERO };
            self.partners.iter().fold(base, |acc, &e| {
                let v = self.partner(e).0;
                acc + self.gamma * v.get(a).copied().unwrap_or(T::ZERO) * v.get(b).copied().unwrap_or(T::ZERO)
            })
        });
        factor.and_then(|f| f.solve_in_place(out)).is_ok()
    }

    /// Square loss by the Sherman–Morrison–Woodbury form (29): a `t × t` solve.
    fn square_smw(&self, out: &mut [T], work: &mut [T]) -> bool {
        let t = self.partners.len();
        self.combination(self.gamma, out); // b
        let (y, chol) = work.split_at_mut(t);
        for (ys, &e) in y.iter_mut().zip(self.partners) {
            *ys = dot_prefix(self.partner(e).0, out); // Aᵀb
        }
        let ridge = self.diagonal / self.gamma;
        let factor = Cholesky::factor_in(&mut chol[..Cholesky::scalars_len(t)], t, t, |a, b| {
            let va = self.partner(self.partners[a]).0;
            let vb = self.partner(self.partners[b]).0;
            dot_prefix(va, vb) + if a == b { ridge } else { T::ZERO }
        });
        if factor.and_then(|f| f.solve_in_place(y)).is_err() {
            return false;
        }
        for (&ys, &e) in y.iter().zip(self.partners) {
            axpy_prefix(-ys, self.partner(e).0, out);
        }
        out.iter_mut().for_each(|x| *x /= self.diagonal);
        true
    }
}
