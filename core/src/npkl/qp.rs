//! The small dual QPs of the hinge (22) and squared hinge (25) losses:
//!
//! ```text
//! min_α  ½ αᵀHα − qᵀα   subject to  0 ≤ α ≤ u      (u = γ/2, or u = ∞ for (25))
//! ```
//!
//! with `H ⪰ 0` of size `t = |T(i)|`. For `t = 1` the paper's closed form
//! `α = min(max(q/H, 0), u)`. Otherwise dual coordinate descent — each step minimises
//! exactly over one coordinate, clipped to the box — until the projected gradient is below
//! `√ε·(1 + max|q|)` (at most `50 + 20t` passes, `O(t²)` each), then an exact Newton step
//! on the free set `F = {s | 0 < α_s < u}` found by it: `H_FF α_F = q_F − H_{F,U} u`
//! solved by Cholesky (`O(t³)`), kept when it lies strictly inside the box and lowers the
//! dual objective. When coordinate descent has identified the optimal active set (the
//! usual case) the result is the exact minimiser, up to rounding; when `H_FF` is singular
//! (hinge loss with linearly dependent partners) the coordinate-descent point is kept.
//!
//! Memory: the caller's scratch, `3t + t(t+1)/2 + 2t` scalars besides `H` and `q`.

#![allow(
    clippy::indexing_slicing,
    reason = "t × t systems and vectors of t in scratch the caller sized from max_degree"
)]

use crate::Real;
use crate::cholesky::Cholesky;
use crate::linalg::dot_prefix;

/// Scratch of the QP solver, each of at least `t` scalars, `chol` of
/// [`Cholesky::scalars_len`]`(t)`.
pub(super) struct QpScratch<'a, T> {
    pub alpha: &'a mut [T],
    pub grad: &'a mut [T],
    pub rhs: &'a mut [T],
    pub chol: &'a mut [T],
}

/// Solves the box QP for `H` (`t × t` row-major) and `q`; the solution is in
/// `scratch.alpha[..t]`.
pub(super) fn solve<T: Real>(t: usize, h: &[T], q: &[T], upper: Option<T>, scratch: &mut QpScratch<'_, T>) {
    let clamp = |x: T| {
        let x = x.max_of(T::ZERO);
        match upper {
            Some(u) if x > u => u,
            _ => x,
        }
    };
    let alpha = &mut scratch.alpha[..t];
    if t == 1 {
        alpha[0] = if h[0] > T::ZERO {
            clamp(q[0] / h[0])
        } else if q[0] > T::ZERO {
            upper.unwrap_or(T::ZERO)
        } else {
            T::ZERO
        };
        return;
    }
    let grad = &mut scratch.grad[..t];
    alpha.fill(T::ZERO);
    for (g, &qs) in grad.iter_mut().zip(q) {
        *g = -qs;
    }
    let q_max = q.iter().fold(T::ZERO, |m, &x| m.max_of(x.abs()));
    let tolerance = T::EPSILON.sqrt() * (T::ONE + q_max);
    let at_upper = |a: T| upper.is_some_and(|u| a >= u);
    for _ in 0..50 + 20 * t {
        let mut worst = T::ZERO;
        for s in 0..t {
            let (g, a) = (grad[s], alpha[s]);
            let projected = if a <= T::ZERO {
                if g < T::ZERO { g } else { T::ZERO }
            } else if at_upper(a) {
                g.max_of(T::ZERO)
            } else {
                g
            };
            worst = worst.max_of(projected.abs());
            if projected == T::ZERO {
                continue;
            }
            let hss = h[s * t + s];
            let new = if hss > T::ZERO {
                clamp(a - g / hss)
            } else if g < T::ZERO {
                // A zero row of H ⪰ 0: the objective is linear in α_s.
                match upper {
                    Some(u) => u,
                    None => continue,
                }
            } else {
                T::ZERO
            };
            let step = new - a;
            if step != T::ZERO {
                alpha[s] = new;
                for (r, gr) in grad.iter_mut().enumerate() {
                    *gr += h[r * t + s] * step;
                }
            }
        }
        if worst <= tolerance {
            break;
        }
    }
    polish(t, h, q, upper, scratch);
}

/// The exact Newton step on the free set, kept when it is strictly feasible and better.
fn polish<T: Real>(t: usize, h: &[T], q: &[T], upper: Option<T>, scratch: &mut QpScratch<'_, T>) {
    let QpScratch { alpha, rhs, chol, .. } = scratch;
    let alpha = &mut alpha[..t];
    let is_free = |a: T| a > T::ZERO && upper.is_none_or(|u| a < u);
    let free_count = alpha.iter().filter(|&&a| is_free(a)).count();
    if free_count == 0 {
        return;
    }
    // The a-th free coordinate (O(t) scan; the factorisation is O(t³) anyway).
    let free =
        |alpha: &[T], a: usize| alpha.iter().enumerate().filter(|&(_, &x)| is_free(x)).nth(a).map_or(0, |(s, _)| s);
    let current: &[T] = alpha;
    let factor = Cholesky::factor_in(&mut chol[..Cholesky::scalars_len(free_count)], free_count, free_count, |a, b| {
        h[free(current, a) * t + free(current, b)]
    });
    let Ok(factor) = factor else { return };
    let rhs = &mut rhs[..free_count];
    let mut a = 0;
    for s in 0..t {
        if is_free(alpha[s]) {
            let row = &h[s * t..(s + 1) * t];
            let bound_part = match upper {
                Some(u) => (0..t).filter(|&c| alpha[c] >= u).fold(T::ZERO, |acc, c| acc + row[c] * u),
                None => T::ZERO,
            };
            rhs[a] = q[s] - bound_part;
            a += 1;
        }
    }
    if factor.solve_in_place(rhs).is_err() || !rhs.iter().all(|&x| is_free(x)) {
        return;
    }
    let before = dual_value(t, h, q, alpha);
    swap_free(alpha, rhs, is_free);
    if dual_value(t, h, q, alpha) > before {
        swap_free(alpha, rhs, is_free);
    }
}

/// Exchanges the free coordinates of `alpha` with `values`, in order (both sides free, so
/// the free set is the same before and after).
fn swap_free<T: Real>(alpha: &mut [T], values: &mut [T], is_free: impl Fn(T) -> bool) {
    let mut a = 0;
    for x in alpha.iter_mut() {
        if is_free(*x) {
            core::mem::swap(x, &mut values[a]);
            a += 1;
        }
    }
}

/// `½ αᵀHα − qᵀα`.
fn dual_value<T: Real>(t: usize, h: &[T], q: &[T], alpha: &[T]) -> T {
    let half = T::from_f64(0.5);
    h.chunks_exact(t)
        .zip(alpha)
        .zip(q)
        .fold(T::ZERO, |acc, ((row, &a), &qs)| acc + a * (half * dot_prefix(row, alpha) - qs))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec;
    use std::vec::Vec;

    /// Brute force over the 3^t active sets with projected-gradient KKT checks.
    fn solve_with<T: Real>(h: &[T], q: &[T], upper: Option<T>) -> Vec<T> {
        let t = q.len();
        let (mut alpha, mut grad, mut rhs, mut chol) =
            (vec![T::ZERO; t], vec![T::ZERO; t], vec![T::ZERO; t], vec![T::ZERO; Cholesky::scalars_len(t)]);
        let mut scratch = QpScratch { alpha: &mut alpha, grad: &mut grad, rhs: &mut rhs, chol: &mut chol };
        solve(t, h, q, upper, &mut scratch);
        alpha
    }

    fn kkt_violation(h: &[f64], q: &[f64], upper: Option<f64>, alpha: &[f64]) -> f64 {
        let t = q.len();
        (0..t)
            .map(|s| {
                let g = (0..t).map(|c| h[s * t + c] * alpha[c]).sum::<f64>() - q[s];
                if alpha[s] <= 0.0 {
                    (-g).max(0.0)
                } else if upper.is_some_and(|u| alpha[s] >= u) {
                    g.max(0.0)
                } else {
                    g.abs()
                }
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn random_problems_satisfy_kkt() {
        let mut rng = crate::Rng::seed_from_u64(11);
        for trial in 0..200 {
            let t = 1 + trial % 6;
            let r = 1 + trial % 4; // rank of H = BᵀB may be below t
            let b: Vec<f64> = (0..r * t).map(|_| rng.normal()).collect();
            let ridge = if trial % 2 == 0 { 0.0 } else { 0.3 };
            let h: Vec<f64> = (0..t * t)
                .map(|e| {
                    let (s, c) = (e / t, e % t);
                    (0..r).map(|k| b[k * t + s] * b[k * t + c]).sum::<f64>() + if s == c { ridge } else { 0.0 }
                })
                .collect();
            let q: Vec<f64> = (0..t).map(|_| rng.normal::<f64>() + 0.5).collect();
            let upper = if ridge > 0.0 { None } else { Some(0.7) };
            let alpha = solve_with(&h, &q, upper);
            assert!(alpha.iter().all(|&a| a >= 0.0 && upper.is_none_or(|u| a <= u)));
            assert!(kkt_violation(&h, &q, upper, &alpha) < 1e-6, "trial {trial}: {alpha:?}");
        }
    }

    #[test]
    fn one_coordinate_is_the_closed_form() {
        assert_eq!(solve_with(&[2.0f32], &[1.0], Some(10.0)), [0.5]);
        assert_eq!(solve_with(&[2.0f64], &[1.0], Some(0.25)), [0.25]);
        assert_eq!(solve_with(&[2.0f64], &[-1.0], None), [0.0]);
        assert_eq!(solve_with(&[0.0f64], &[1.0], Some(3.0)), [3.0]);
    }
}
