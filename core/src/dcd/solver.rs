//! The batch solver: Hsieh et al.'s dual coordinate descent with shrinking, over lent
//! slices, exactly as LIBLINEAR's `solve_l2r_l1l2_svc` runs it.
//!
//! One outer pass shuffles the active coordinates (core [`Rng`]), then for each active `i`:
//!
//! 1. `G = yᵢ wᵀx̂ᵢ − 1 + Dᵢᵢαᵢ`, the partial derivative of `f` (eq. (4)) kept cheap by `w`;
//! 2. the projected gradient `PG = min(G, 0)` at `αᵢ = 0`, `max(G, 0)` at `αᵢ = U`, else `G`;
//!    with shrinking, `αᵢ = 0` and `G > M̄` (or `αᵢ = U` and `G < m̄`) drops `i` from the
//!    active set instead, `M̄`/`m̄` being the previous pass's largest/smallest `PG`;
//! 3. if `|PG| > 10⁻¹²`: `αᵢ ← min(max(αᵢ − G/Q̄ᵢᵢ, 0), U)` and `w ← w + Δαᵢ yᵢ x̂ᵢ`.
//!
//! The pass ends with `M = max PG`, `m = min PG`. When `M − m ≤ ε` on the active set it is
//! re-checked on all rows (active set reset, `M̄ = ∞`, `m̄ = −∞`), and only a pass over all
//! rows with `M − m ≤ ε` converges. `M̄ ← M` (`∞` when `M ≤ 0`), `m̄ ← m` (`−∞` when `m ≥ 0`).

#![allow(
    clippy::indexing_slicing,
    reason = "rows, labels, α, Q̄ᵢᵢ and the visiting order have n entries (check_problem) and w has d + 1"
)]

use super::params::{Coordinate, ValidParams};
use super::rows::{Row, Rows, check_rows};
use crate::error::check_len;
use crate::storage::check_capacity;
use crate::{Error, Real, Rng};

/// Why training stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// A pass over all rows had a projected-gradient range `max PG − min PG ≤ ε`.
    Converged,
    /// The pass cap ([`Params::max_passes`](super::Params::max_passes)) came first; the
    /// model is usable but less accurate (LIBLINEAR warns "reaching max number of
    /// iterations" here).
    Capped,
}

/// The result of a training run: not an error even when capped.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome<T> {
    /// Converged or capped.
    pub exit: Exit,
    /// Outer passes run (LIBLINEAR's `#iter`).
    pub passes: usize,
    /// The dual objective `f(α) = ½αᵀQ̄α − eᵀα` at the returned `α`, which LIBLINEAR prints
    /// as `Objective value` (negative: `f(0) = 0` and no step increases it).
    pub objective: T,
    /// Rows with `αᵢ > 0` (LIBLINEAR's `nSV`).
    pub support_vectors: usize,
}

/// The state after one outer pass, shown to a training observer.
#[derive(Clone, Copy, Debug)]
pub struct Pass<'a, T> {
    pub(super) number: usize,
    pub(super) active: usize,
    pub(super) pg_max: T,
    pub(super) pg_min: T,
    pub(super) problem: &'a Problem<'a, T>,
    pub(super) alpha: &'a [T],
    pub(super) w: &'a [T],
}

impl<T: Real> Pass<'_, T> {
    /// 1 for the first pass.
    pub fn number(&self) -> usize {
        self.number
    }
    /// Size of the active set at the end of this pass (`n` without shrinking).
    pub fn active(&self) -> usize {
        self.active
    }
    /// `(max PG, min PG)` over the coordinates visited; `max − min ≤ ε` stops.
    pub fn projected_gradient_range(&self) -> (T, T) {
        (self.pg_max, self.pg_min)
    }
    /// `α`, one per training row, in row order.
    pub fn alpha(&self) -> &[T] {
        self.alpha
    }
    /// `w` of the `d` features, then the bias weight.
    pub fn weights(&self) -> &[T] {
        self.w
    }
    /// The dual objective `f(α)` now. O(n + d).
    pub fn objective(&self) -> T {
        self.problem.objective(self.alpha, self.w)
    }
}

/// One binary problem: `yᵢ = +1` when `labels[i] = positive`, else −1; with row weights
/// `sᵢ`, row `i`'s cost is `sᵢ·C₊` or `sᵢ·C₋` (a row of weight 2 counts as two copies of
/// it: eq. (1) with `Cᵢ = sᵢC`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Problem<'a, T> {
    labels: &'a [i32],
    positive: i32,
    params: ValidParams<T>,
    /// The box and diagonal of the rows labelled +1 and −1, computed once.
    coordinates: [Coordinate<T>; 2],
    /// `sᵢ`, checked by [`check_row_weights`]; `None`: every row weighs 1.
    row_weights: Option<&'a [T]>,
}

impl<'a, T: Real> Problem<'a, T> {
    pub(crate) fn new(labels: &'a [i32], positive: i32, params: ValidParams<T>) -> Self {
        let coordinates = [params.coordinate(T::ONE), params.coordinate(-T::ONE)];
        Problem { labels, positive, params, coordinates, row_weights: None }
    }

    /// The problem with row `i`'s cost weighed by `row_weights[i]` (checked by
    /// [`check_row_weights`] against these labels and parameters).
    pub(crate) fn with_row_weights(self, row_weights: Option<&'a [T]>) -> Self {
        Problem { row_weights, ..self }
    }

    /// `yᵢ` and the box and diagonal of `αᵢ`; callers pass `i < labels.len()` (a row
    /// index of the problem).
    fn row(&self, i: usize) -> (T, Coordinate<T>) {
        let (y, coordinate) = if self.labels[i] == self.positive {
            (T::ONE, self.coordinates[0])
        } else {
            (-T::ONE, self.coordinates[1])
        };
        match self.row_weights {
            // `U = sC` for the hinge (`∞` stays), `D = 1/(2sC)` for the squared hinge (0 stays).
            Some(weights) => {
                (y, Coordinate { upper: coordinate.upper * weights[i], diagonal: coordinate.diagonal / weights[i] })
            }
            None => (y, coordinate),
        }
    }

    /// `f(α) = ½‖w‖² + ½Σ Dᵢᵢαᵢ² − Σαᵢ`, equal to eq. (4) because `w = Σ yᵢαᵢx̂ᵢ`.
    pub(crate) fn objective(&self, alpha: &[T], w: &[T]) -> T {
        let half = T::from_f64(0.5);
        let norm = crate::linalg::dot_prefix(w, w);
        let dual = alpha.iter().enumerate().fold(T::ZERO, |acc, (i, &a)| {
            let d = self.row(i).1.diagonal;
            acc + a * (half * d * a - T::ONE)
        });
        half * norm + dual
    }
}

/// The solver's lent working memory for `n` rows of dimension `d`.
pub(crate) struct Workspace<'a, T> {
    /// `d + 1`: the feature weights, then the bias weight.
    pub(crate) w: &'a mut [T],
    /// `n`: the dual variables.
    pub(crate) alpha: &'a mut [T],
    /// `n`: `Q̄ᵢᵢ = ‖xᵢ‖² + B² + Dᵢᵢ`.
    pub(crate) q_diagonal: &'a mut [T],
    /// `n`: a permutation of `0..n`; its first `active` entries are the active set.
    pub(crate) order: &'a mut [usize],
}

/// Runs the solver from `α = 0` on checked rows (every row passed [`Row::check`] against
/// `d = w.len() − 1`, and `n = rows.len()` equals every other slice's length).
///
/// [`Row::check`]: super::Row::check
pub(crate) fn solve<T: Real, R: Rows<T> + ?Sized>(
    rows: &R,
    problem: &Problem<'_, T>,
    ws: Workspace<'_, T>,
    rng: &mut Rng,
    observer: &mut impl FnMut(&Pass<'_, T>),
) -> Outcome<T> {
    let mut solver = Solver { rows, problem, ws };
    solver.initialise();
    let (exit, passes) = solver.run(rng, observer);
    let ws = &solver.ws;
    Outcome {
        exit,
        passes,
        objective: problem.objective(ws.alpha, ws.w),
        support_vectors: ws.alpha.iter().filter(|&&a| a > T::ZERO).count(),
    }
}

/// Shrinking thresholds `M̄`, `m̄` of the previous pass.
#[derive(Clone, Copy)]
pub(crate) struct Thresholds<T> {
    pg_max_old: T,
    pg_min_old: T,
}

impl<T: Real> Thresholds<T> {
    /// `(∞, −∞)`: nothing is shrunk.
    pub(crate) fn open() -> Self {
        let infinity = T::from_f64(f64::INFINITY);
        Thresholds { pg_max_old: infinity, pg_min_old: -infinity }
    }
}

struct Solver<'s, 'a, T, R: ?Sized> {
    rows: &'s R,
    problem: &'s Problem<'a, T>,
    ws: Workspace<'s, T>,
}

impl<T: Real, R: Rows<T> + ?Sized> Solver<'_, '_, T, R> {
    /// `α = 0`, `w = 0`, `Q̄ᵢᵢ` cached, the identity order.
    fn initialise(&mut self) {
        let bias = self.problem.params.bias();
        self.ws.w.fill(T::ZERO);
        self.ws.alpha.fill(T::ZERO);
        for (i, q) in self.ws.q_diagonal.iter_mut().enumerate() {
            let diagonal = self.problem.row(i).1.diagonal;
            *q = self.rows.row(i).squared_norm() + bias * bias + diagonal;
        }
        for (i, slot) in self.ws.order.iter_mut().enumerate() {
            *slot = i;
        }
    }

    /// Outer passes until convergence on all rows or the pass cap.
    fn run(&mut self, rng: &mut Rng, observer: &mut impl FnMut(&Pass<'_, T>)) -> (Exit, usize) {
        let n = self.ws.alpha.len();
        let params = self.problem.params;
        let mut active = n;
        let mut thresholds = Thresholds::open();
        let mut passes = 0;
        while passes < params.max_passes() {
            rng.shuffle(&mut self.ws.order[..active]);
            let (pg_max, pg_min) = self.pass(&mut active, thresholds);
            passes += 1;
            observer(&self.report(passes, active, pg_max, pg_min));
            if pg_max - pg_min <= params.epsilon() {
                if active == n {
                    return (Exit::Converged, passes);
                }
                active = n;
                thresholds = Thresholds::open();
            } else if params.shrinking() {
                thresholds = next_thresholds(pg_max, pg_min);
            }
        }
        (Exit::Capped, passes)
    }

    /// One pass over `order[..active]`, shrinking it; returns `(max PG, min PG)`.
    fn pass(&mut self, active: &mut usize, thresholds: Thresholds<T>) -> (T, T) {
        let infinity = T::from_f64(f64::INFINITY);
        let (mut pg_max, mut pg_min) = (-infinity, infinity);
        let mut s = 0;
        while s < *active {
            let i = self.ws.order[s];
            match self.visit(i, thresholds) {
                Some(pg) => {
                    pg_max = pg_max.max_of(pg);
                    pg_min = if pg < pg_min { pg } else { pg_min };
                    s += 1;
                }
                None => {
                    *active -= 1;
                    self.ws.order.swap(s, *active);
                }
            }
        }
        (pg_max, pg_min)
    }

    /// Coordinate step on `αᵢ`; `None` when `i` is shrunk, else its projected gradient.
    /// `i` comes from `order`, a permutation of `0..n`, so it indexes every slice of `n`.
    fn visit(&mut self, i: usize, thresholds: Thresholds<T>) -> Option<T> {
        let (y, Coordinate { upper, diagonal }) = self.problem.row(i);
        let alpha = self.ws.alpha[i];
        let g = y * self.margin(i) - T::ONE + diagonal * alpha;
        let pg = projected_gradient(alpha, upper, g, thresholds)?;
        if pg.abs() > step_floor() {
            let new_alpha = minimiser(alpha, g, self.ws.q_diagonal[i], upper);
            self.ws.alpha[i] = new_alpha;
            self.add_row(i, (new_alpha - alpha) * y);
        }
        Some(pg)
    }

    /// `wᵀx̂ᵢ = wᵀxᵢ + w_bias·B`.
    fn margin(&self, i: usize) -> T {
        margin(&self.rows.row(i), self.ws.w, self.problem.params.bias())
    }

    /// `w ← w + a·x̂ᵢ`.
    fn add_row(&mut self, i: usize, a: T) {
        add_scaled(&self.rows.row(i), a, self.ws.w, self.problem.params.bias());
    }

    fn report(&self, number: usize, active: usize, pg_max: T, pg_min: T) -> Pass<'_, T> {
        Pass { number, active, pg_max, pg_min, problem: self.problem, alpha: self.ws.alpha, w: self.ws.w }
    }
}

/// `wᵀx̂ = wᵀx + w_b·B` for `w = [w₁ … w_d, w_b]`, the decision value of a row.
pub(crate) fn margin<T: Real>(row: &Row<'_, T>, w: &[T], bias: T) -> T {
    match w.split_last() {
        Some((&w_bias, w)) => row.dot(w) + w_bias * bias,
        None => T::ZERO,
    }
}

/// `w ← w + a·x̂` for `w = [w₁ … w_d, w_b]` and `x̂ = [x, B]`.
pub(crate) fn add_scaled<T: Real>(row: &Row<'_, T>, a: T, w: &mut [T], bias: T) {
    if let Some((w_bias, w)) = w.split_last_mut() {
        row.axpy(a, w);
        *w_bias += a * bias;
    }
}

/// Checks a training set before anything changes: O(nnz).
///
/// # Errors
/// As [`check_rows`]; `CapacityExceeded` for more than `capacity` rows;
/// `DimensionMismatch` unless there is one label per row; `InvalidLabel { row }` at the
/// first label `label_ok` rejects; `NonFinite` when some `‖xᵢ‖² + B²` overflows.
pub(crate) fn check_problem<T: Real, R: Rows<T> + ?Sized>(
    rows: &R,
    labels: &[i32],
    dim: usize,
    capacity: usize,
    bias: T,
    label_ok: impl Fn(i32) -> bool,
) -> Result<(), Error> {
    check_rows(rows, dim)?;
    check_capacity(rows.len(), capacity)?;
    check_len(rows.len(), labels.len())?;
    if let Some(row) = labels.iter().position(|&label| !label_ok(label)) {
        return Err(Error::InvalidLabel { row });
    }
    let q_finite = |i| (rows.row(i).squared_norm() + bias * bias).is_finite();
    if (0..rows.len()).all(q_finite) { Ok(()) } else { Err(Error::NonFinite) }
}

/// Checks row weights for `n` rows under `params`: one per row, each finite and positive,
/// and so its products with `C₊` and `C₋`.
///
/// # Errors
/// `DimensionMismatch` unless there are `n` weights; `InvalidParam { name: "row_weights" }`
/// otherwise.
pub(crate) fn check_row_weights<T: Real>(row_weights: &[T], n: usize, params: &ValidParams<T>) -> Result<(), Error> {
    check_len(n, row_weights.len())?;
    let positive = |x: T| x > T::ZERO && x.is_finite();
    let fits = |&s: &T| positive(s) && positive(s * params.c_pos()) && positive(s * params.c_neg());
    if row_weights.iter().all(fits) { Ok(()) } else { Err(Error::InvalidParam { name: "row_weights" }) }
}

/// The projected gradient of `αᵢ ∈ [0, upper]` with gradient `g`, or `None` when shrinking
/// removes the coordinate (at a bound, pushed outward harder than any free one last pass).
pub(crate) fn projected_gradient<T: Real>(alpha: T, upper: T, g: T, thresholds: Thresholds<T>) -> Option<T> {
    if alpha == T::ZERO {
        if g > thresholds.pg_max_old { None } else { Some(if g < T::ZERO { g } else { T::ZERO }) }
    } else if alpha == upper {
        if g < thresholds.pg_min_old { None } else { Some(g.max_of(T::ZERO)) }
    } else {
        Some(g)
    }
}

/// LIBLINEAR's update of `M̄`, `m̄`: a non-positive max (or non-negative min) cannot tell a
/// bound coordinate to leave, so it opens that side.
fn next_thresholds<T: Real>(pg_max: T, pg_min: T) -> Thresholds<T> {
    let open = Thresholds::open();
    Thresholds {
        pg_max_old: if pg_max <= T::ZERO { open.pg_max_old } else { pg_max },
        pg_min_old: if pg_min >= T::ZERO { open.pg_min_old } else { pg_min },
    }
}

/// LIBLINEAR's `10⁻¹²`: a coordinate whose `|PG|` is not above it is left alone.
pub(crate) fn step_floor<T: Real>() -> T {
    T::from_f64(1e-12)
}

/// The minimiser of `f(α + δeᵢ)` over the box, `min(max(αᵢ − G/Q̄ᵢᵢ, 0), U)` (the
/// one-variable problem of Hsieh et al. Sect. 2, solved in closed form).
pub(crate) fn minimiser<T: Real>(alpha: T, g: T, q_diagonal: T, upper: T) -> T {
    if q_diagonal > T::ZERO {
        clamp(alpha - g / q_diagonal, upper)
    } else {
        // Q̄ᵢᵢ = 0 only for the hinge loss with xᵢ = 0 and B = 0: then G = −1 and f falls
        // linearly in αᵢ, so its minimum on the box is the upper bound C.
        upper
    }
}

/// `min(max(x, 0), upper)`.
fn clamp<T: Real>(x: T, upper: T) -> T {
    let x = x.max_of(T::ZERO);
    if x < upper { x } else { upper }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dcd::{DenseRows, Loss, Params};

    #[test]
    fn projected_gradient_cases() {
        let open = Thresholds::<f64>::open();
        assert_eq!(projected_gradient(0.0, 1.0, -2.0, open), Some(-2.0));
        assert_eq!(projected_gradient(0.0, 1.0, 2.0, open), Some(0.0));
        assert_eq!(projected_gradient(1.0, 1.0, 2.0, open), Some(2.0));
        assert_eq!(projected_gradient(1.0, 1.0, -2.0, open), Some(0.0));
        assert_eq!(projected_gradient(0.5, 1.0, -2.0, open), Some(-2.0));
        let tight = next_thresholds(1.0, -1.0);
        assert_eq!(projected_gradient(0.0, 1.0, 1.5, tight), None);
        assert_eq!(projected_gradient(1.0, 1.0, -1.5, tight), None);
        assert_eq!(projected_gradient(0.5, 1.0, 9.0, tight), Some(9.0));
        let opened = next_thresholds(-1.0, 1.0);
        assert_eq!(projected_gradient(0.0, 1.0, 1e300, opened), Some(0.0));
        assert_eq!(clamp(2.0, f64::INFINITY), 2.0);
        assert_eq!((clamp(-2.0, 1.0), clamp(2.0, 1.0)), (0.0, 1.0));
    }

    #[test]
    fn two_points_by_hand() {
        // x = ±1 with y = ±1, no bias, hinge, C = 1: Q = [[1, 1], [1, 1]], the optimum
        // has α₁ + α₂ = 1, w = 1 and f = ½ − 1 = −½.
        let x = [1.0, -1.0];
        let rows = DenseRows::new(&x, 1).unwrap();
        let labels = [1, -1];
        let params = Params::new().loss(Loss::Hinge).epsilon(1e-9).check().unwrap();
        let problem = Problem::new(&labels, 1, params);
        let (mut w, mut alpha, mut q, mut order) = ([9.0; 2], [9.0; 2], [0.0; 2], [0; 2]);
        let ws = Workspace { w: &mut w, alpha: &mut alpha, q_diagonal: &mut q, order: &mut order };
        let mut passes = 0;
        let outcome = solve(&rows, &problem, ws, &mut Rng::seed_from_u64(1), &mut |p| {
            passes = p.number();
        });
        assert_eq!(outcome.exit, Exit::Converged);
        assert_eq!(outcome.passes, passes);
        assert!((w[0] - 1.0).abs() < 1e-12 && w[1] == 0.0);
        assert!((alpha[0] + alpha[1] - 1.0).abs() < 1e-12);
        assert!((outcome.objective + 0.5).abs() < 1e-12);
        assert_eq!(q, [1.0, 1.0]);
    }
}
