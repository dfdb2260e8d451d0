//! The smooth SVM (SSVM) and smooth ε-insensitive regression (ε-SSVR) on given features,
//! by the Newton–Armijo method (seed 003 §2.1 and §2.3).
//!
//! **Problems.** Rows `z_i ∈ ℝᵐ` — on the reduced-kernel path `z(x) = K(x, Ã)` or the
//! Nyström features `L⁻¹K(Ã, x)` (eq. 10-13) — extended by the constant bias feature `B`
//! to `z̃_i = (z_i, B)`, and the variables `v = (u, b/B) ∈ ℝᵐ⁺¹` with fitted values
//! `f_i = z̃_iᵀv = z_iᵀu + b`. Both problems are
//!
//! `min_v  F(v) = ½‖v‖² + (C/2)·Σ_i ℓ(f_i, y_i)`,
//!
//! `B = 1` giving the paper's `½(‖u‖² + b²)`, and for SSVM optional class weights
//! ([`Params::class_weights`]): row `i`'s loss weighs `ω₊` when `y_i = +1`, `ω₋` when
//! `y_i = −1` (1 and 1 by default), the smooth form of the DCD solver's `C₊ = ω₊C`,
//! `C₋ = ω₋C` (LIBLINEAR's `-wi`):
//!
//! - **SSVM**, eq. (7)/(8)/(12): `ℓ = p(1 − y_i f_i, β)²`, `y_i = ±1`. Eq. (12) prints the
//!   loss sum over `i = 1..ℓ̃`; the sum runs over all `ℓ` training rows (the reduced set
//!   only shortens `u`), as in eq. (8).
//! - **ε-SSVR**, eq. (21)-(23): `ℓ = p(r_i − ε, β)² + p(−r_i − ε, β)²`, `r_i = f_i − y_i`,
//!   the smooth `|r|²_ε` (eq. 18-20).
//!
//! with the smooth plus function of eq. (6),
//! `p(x, β) = x + ln(1 + e^{−βx})/β = max(x, 0) + ln(1 + e^{−β|x|})/β` (the second form
//! cannot overflow), `p' = σ(βx) = 1/(1 + e^{−βx})`, `p'' = βσ(1 − σ)`. `p ≥ x₊` and
//! `p − x₊ ≤ ln 2/β`: as `β → ∞` SSVM is the squared-hinge SVM of eq. (5) and ε-SSVR the
//! squared ε-insensitive regression. `β` has the units of `1/f`.
//!
//! **Derivatives.** With `ℓ'_i`, `ℓ''_i` the derivatives of `ℓ` in `f_i` (for SSVM
//! `ℓ' = −2y·pσ`, `ℓ'' = 2(σ² + p·βσ(1 − σ))` at `1 − yf`, `y² = 1`; for ε-SSVR the sum
//! of the same two terms at `r − ε` and, with the sign of `ℓ'` flipped, at `−r − ε`):
//!
//! `∇F = v + (C/2)Σ_i ℓ'_i z̃_i`,   `∇²F = I + (C/2)Σ_i ℓ''_i z̃_i z̃_iᵀ ⪰ I`.
//!
//! `F` is strongly convex and infinitely differentiable, so it has one minimiser and the
//! Newton system is always positive definite.
//!
//! **Newton–Armijo** (Lee and Mangasarian 2001, the method seed 003 cites for eq. 7): from
//! `v⁰ = 0`,
//!
//! 1. direction `d = −(∇²F(v))⁻¹∇F(v)`: the `(m+1) × (m+1)` system factored by
//!    [`Cholesky`] (`∇²F ⪰ I`, so the factorization cannot fail on finite data);
//! 2. step `λ = max{1, ½, ¼, …}` with `F(v) − F(v + λd) ≥ −δλ∇F(v)ᵀd`, `δ = 10⁻⁴`
//!    (Armijo); the fitted values move by `λ·z̃ᵀd`, computed once per direction, so each
//!    trial step costs O(n);
//! 3. stop when `‖∇F(v)‖ ≤ tol·‖∇F(0)‖` ([`Exit::Converged`]), after
//!    [`Params::max_iterations`] ([`Exit::Capped`]), or when no step of at least `2⁻⁴⁰`
//!    decreases `F` — the gradient is then at the precision's rounding
//!    ([`Exit::Stalled`]; the iterate is usable).
//!
//! The iteration converges globally and, near the minimiser, quadratically: a few to a
//! few tens of iterations whatever `n`.
//!
//! **Cost**: O(n'·m²) per iteration to form `∇²F` from the `n' ≤ n` rows whose term is
//! above its rounding (a row far past the margin, where `ℓ''` has vanished, adds nothing
//! and is left out), O(m³/3) to factor it, O(n) per trial step. **Memory**:
//! [`SmoothSvm::scalars_len`]`(n, m) = 2n + 4(m+1) + (m+1)(m+2)/2 +`
//! [`Cholesky::scalars_len`]`(m+1)`: the fitted values and their slope
//! along `d`, the solution, the iterate, the gradient and the direction, the Hessian's
//! packed lower triangle and its factor.

use crate::cholesky::Cholesky;
use crate::error::check_len;
use crate::linalg::{ROWS_PER_PASS, axpy_many_prefix, dot_prefix, packed_len};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The loss: classification or regression.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Task<T> {
    /// SSVM (eq. 7): targets `±1`, the smoothed squared hinge `p(1 − yf, β)²`.
    Classification,
    /// ε-SSVR (eq. 22): real targets, `p(r − ε, β)² + p(−r − ε, β)²` with `r = f − y`.
    Regression {
        /// The tube's half-width `ε ≥ 0`, in the targets' units.
        epsilon: T,
    },
}

/// Unchecked settings; [`Params::check`] validates them.
///
/// # Examples
/// ```
/// use kestrel_core::ssvm::{Params, Task};
/// let params = Params::new().task(Task::Regression { epsilon: 0.1 }).c(10.0).beta(5.0).check()?;
/// assert_eq!(params.c(), 10.0);
/// assert!(Params::new().beta(0.0f64).check().is_err());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params<T> {
    task: Task<T>,
    c: T,
    weight_pos: T,
    weight_neg: T,
    beta: T,
    bias: T,
    tolerance: T,
    max_iterations: usize,
}

/// Settings [`Params::check`] accepted; the only form [`SmoothSvm`] takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidParams<T>(Params<T>);

impl<T: Real> Default for Params<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> Params<T> {
    /// Classification, `C = 1`, `β = 10`, bias feature `B = 1` (the paper's `b`),
    /// tolerance `√ε_machine` on the relative gradient norm, 100 iterations.
    pub fn new() -> Self {
        Params {
            task: Task::Classification,
            c: T::ONE,
            weight_pos: T::ONE,
            weight_neg: T::ONE,
            beta: T::from_f64(10.0),
            bias: T::ONE,
            tolerance: T::EPSILON.sqrt(),
            max_iterations: 100,
        }
    }

    /// The loss.
    pub fn task(mut self, task: Task<T>) -> Self {
        self.task = task;
        self
    }

    /// The weight `C > 0` of the losses in eq. (7) and (22).
    pub fn c(mut self, c: T) -> Self {
        self.c = c;
        self
    }

    /// Weights `ω₊, ω₋ > 0` of the rows labelled `+1` and `−1` (classification; the
    /// loss of row `i` counts `ω_{y_i}` times).
    pub fn class_weights(mut self, positive: T, negative: T) -> Self {
        self.weight_pos = positive;
        self.weight_neg = negative;
        self
    }

    /// The smoothing `β > 0` of eq. (6), in units of `1/f`.
    pub fn beta(mut self, beta: T) -> Self {
        self.beta = beta;
        self
    }

    /// The bias feature `B ≥ 0`: `b = B·v_{m}`, penalised as `½(b/B)²`; 0 fits no bias.
    pub fn bias(mut self, bias: T) -> Self {
        self.bias = bias;
        self
    }

    /// Stop when `‖∇F(v)‖ ≤ tolerance·‖∇F(0)‖` (`0 < tolerance < 1`).
    pub fn tolerance(mut self, tolerance: T) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The most Newton iterations (at least 1).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Validates the settings.
    ///
    /// # Errors
    /// `InvalidParam` naming `c`, `beta` or `tolerance` unless finite and positive
    /// (tolerance below 1), `class_weights` unless both are finite and positive, `bias`
    /// or `epsilon` unless finite and non-negative, `max_iterations` when 0.
    pub fn check(self) -> Result<ValidParams<T>, Error> {
        let positive = |x: T| x.is_finite() && x > T::ZERO;
        let non_negative = |x: T| x.is_finite() && x >= T::ZERO;
        let epsilon = match self.task {
            Task::Classification => T::ZERO,
            Task::Regression { epsilon } => epsilon,
        };
        let checks = [
            (positive(self.c), "c"),
            (positive(self.weight_pos) && positive(self.weight_neg), "class_weights"),
            (positive(self.beta), "beta"),
            (positive(self.tolerance) && self.tolerance < T::ONE, "tolerance"),
            (non_negative(self.bias), "bias"),
            (non_negative(epsilon), "epsilon"),
            (self.max_iterations > 0, "max_iterations"),
        ];
        match checks.iter().find(|(ok, _)| !ok) {
            Some(&(_, name)) => Err(Error::InvalidParam { name }),
            None => Ok(ValidParams(self)),
        }
    }
}

impl<T: Real> ValidParams<T> {
    /// `C`.
    pub fn c(&self) -> T {
        self.0.c
    }

    /// The bias feature `B`.
    pub fn bias(&self) -> T {
        self.0.bias
    }

    /// The loss.
    pub fn task(&self) -> Task<T> {
        self.0.task
    }

    /// The same settings with another `C`.
    ///
    /// # Errors
    /// `InvalidParam { name: "c" }` unless `c` is finite and positive.
    pub fn with_c(self, c: T) -> Result<Self, Error> {
        self.0.c(c).check()
    }

    /// The same settings with another loss.
    ///
    /// # Errors
    /// `InvalidParam { name: "epsilon" }` for a negative or non-finite tube.
    pub fn with_task(self, task: Task<T>) -> Result<Self, Error> {
        self.0.task(task).check()
    }
}

/// Why the iteration stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// `‖∇F‖ ≤ tolerance·‖∇F(0)‖`.
    Converged,
    /// The iteration cap came first.
    Capped,
    /// No Armijo step decreased `F`: the gradient is at the rounding of the precision.
    Stalled,
}

/// The result of [`SmoothSvm::train`]: not an error even when capped or stalled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome<T> {
    /// Why it stopped.
    pub exit: Exit,
    /// Newton iterations (directions computed).
    pub iterations: usize,
    /// `F(v)` at the solution.
    pub objective: T,
    /// `‖∇F(v)‖` at the solution.
    pub gradient_norm: T,
}

/// A smooth SVM/SVR solver of `n` rows and `m` features in storage `S`; the solution is
/// kept until the next [`train`](Self::train).
///
/// # Examples
/// ```
/// use kestrel_core::ssvm::{Params, SmoothSvm, Exit};
/// // One feature; positive above 0.
/// let z = [-2.0f64, -1.0, 1.0, 2.0];
/// let y = [-1.0, -1.0, 1.0, 1.0];
/// let params = Params::new().c(10.0).check()?;
/// let mut svm = SmoothSvm::new_in(vec![0.0; SmoothSvm::scalars_len(4, 1)], 4, 1, params)?;
/// let outcome = svm.train(&z, &y)?;
/// assert_eq!(outcome.exit, Exit::Converged);
/// assert!(svm.weights()[0] > 0.5 && svm.bias().abs() < 1e-9);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SmoothSvm<T, S> {
    storage: S,
    n: usize,
    m: usize,
    params: ValidParams<T>,
}

/// The regions of a solver's storage (`k = m + 1` variables).
struct Parts<'a, T> {
    solution: &'a mut [T],
    iterate: &'a mut [T],
    gradient: &'a mut [T],
    direction: &'a mut [T],
    hessian: &'a mut [T],
    factor: &'a mut [T],
    fitted: &'a mut [T],
    slope: &'a mut [T],
}

/// The Armijo constant `δ`.
const ARMIJO: f64 = 1e-4;

/// Halvings of the step before the search gives up (`λ ≥ 2⁻⁴⁰`).
const MAX_HALVINGS: usize = 40;

impl SmoothSvm<(), ()> {
    /// Scalars a solver of `n` rows and `m` features needs (saturating).
    pub const fn scalars_len(n: usize, m: usize) -> usize {
        let k = m.saturating_add(1);
        n.saturating_mul(2)
            .saturating_add(k.saturating_mul(4))
            .saturating_add(packed_len(k))
            .saturating_add(Cholesky::scalars_len(k))
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(n: usize, m: usize) -> usize {
        Self::scalars_len(n, m).saturating_mul(core::mem::size_of::<T>())
    }
}

impl<T: Real, S: Storage<T>> SmoothSvm<T, S> {
    /// A solver with the zero solution.
    ///
    /// # Errors
    /// `InvalidParam` naming `n` or `m` (0); `CapacityExceeded` when `storage` is short.
    pub fn new_in(mut storage: S, n: usize, m: usize, params: ValidParams<T>) -> Result<Self, Error> {
        match (n, m) {
            (0, _) => return Err(Error::InvalidParam { name: "n" }),
            (_, 0) => return Err(Error::InvalidParam { name: "m" }),
            _ => {}
        }
        check_capacity(SmoothSvm::scalars_len(n, m), storage.as_ref().len())?;
        storage.as_mut().fill(T::ZERO);
        Ok(SmoothSvm { storage, n, m, params })
    }

    /// Solves the problem of the settings for `features` (row-major `n × m`) and `targets`
    /// (`n`; `±1` for classification) from `v = 0`.
    ///
    /// # Errors
    /// `DimensionMismatch` for slices of the wrong length; `NonFinite` for NaN/∞ in them or
    /// an overflow on the way; `InvalidLabel { row }` for a classification target other
    /// than `±1`. The previous solution is kept then.
    pub fn train(&mut self, features: &[T], targets: &[T]) -> Result<Outcome<T>, Error> {
        self.train_rows(features, targets, None)
    }

    /// [`train`](Self::train) with row `i`'s loss weighed by `row_weights[i]` in eq. (7)
    /// and (22) (scikit-learn's `sample_weight`; a row of weight 2 counts as two copies of
    /// it), on top of the class weights.
    ///
    /// # Errors
    /// As [`train`](Self::train); `DimensionMismatch` unless there is one weight per row,
    /// `InvalidParam { name: "row_weights" }` unless each is finite and positive. The
    /// previous solution is kept then.
    pub fn train_weighted(&mut self, features: &[T], targets: &[T], row_weights: &[T]) -> Result<Outcome<T>, Error> {
        check_len(self.n, row_weights.len())?;
        if !row_weights.iter().all(|&w| w > T::ZERO && w.is_finite()) {
            return Err(Error::InvalidParam { name: "row_weights" });
        }
        self.train_rows(features, targets, Some(row_weights))
    }

    fn train_rows(&mut self, features: &[T], targets: &[T], row_weights: Option<&[T]>) -> Result<Outcome<T>, Error> {
        let (n, m) = (self.n, self.m);
        check_len(n.saturating_mul(m), features.len())?;
        check_len(n, targets.len())?;
        check_finite(features)?;
        check_finite(targets)?;
        if self.params.task() == Task::Classification
            && let Some(row) = targets.iter().position(|&y| y != T::ONE && y != -T::ONE)
        {
            return Err(Error::InvalidLabel { row });
        }
        let params = self.params;
        let parts = self.parts().ok_or(Error::InvalidParam { name: "n" })?;
        let problem = Problem { features, targets, row_weights, m, params };
        let outcome = problem.solve(parts)?;
        let parts = self.parts().ok_or(Error::InvalidParam { name: "n" })?;
        parts.solution.copy_from_slice(parts.iterate);
        Ok(outcome)
    }

    /// The weights `u` (`m` values) of the solution.
    pub fn weights(&self) -> &[T] {
        self.storage.as_ref().get(..self.m).unwrap_or_default()
    }

    /// The bias `b = B·v_m` of the solution (0 when `B = 0`).
    pub fn bias(&self) -> T {
        self.bias_weight() * self.params.bias()
    }

    /// The solution's last variable `v_m`: the weight of the bias feature.
    pub fn bias_weight(&self) -> T {
        self.storage.as_ref().get(self.m).copied().unwrap_or(T::ZERO)
    }

    /// The settings.
    pub fn params(&self) -> ValidParams<T> {
        self.params
    }

    /// Trains the next problem with other settings (another `C`, other class weights) in
    /// the same storage, which they do not size.
    pub fn set_params(&mut self, params: ValidParams<T>) {
        self.params = params;
    }

    fn parts(&mut self) -> Option<Parts<'_, T>> {
        let (n, k) = (self.n, self.m + 1);
        let (solution, rest) = self.storage.as_mut().split_at_mut_checked(k)?;
        let (iterate, rest) = rest.split_at_mut_checked(k)?;
        let (gradient, rest) = rest.split_at_mut_checked(k)?;
        let (direction, rest) = rest.split_at_mut_checked(k)?;
        let (hessian, rest) = rest.split_at_mut_checked(packed_len(k))?;
        let (factor, rest) = rest.split_at_mut_checked(Cholesky::scalars_len(k))?;
        let (fitted, rest) = rest.split_at_mut_checked(n)?;
        let (slope, _) = rest.split_at_mut_checked(n)?;
        Some(Parts { solution, iterate, gradient, direction, hessian, factor, fitted, slope })
    }
}

/// The data and settings of one solve.
struct Problem<'a, T> {
    features: &'a [T],
    targets: &'a [T],
    /// Each row's weight (`None`: 1).
    row_weights: Option<&'a [T]>,
    m: usize,
    params: ValidParams<T>,
}

impl<T: Real> Problem<'_, T> {
    /// Newton–Armijo from `v = 0` in `parts.iterate` (see the module doc).
    fn solve(&self, parts: Parts<'_, T>) -> Result<Outcome<T>, Error> {
        let Parts { iterate, gradient, direction, hessian, factor, fitted, slope, .. } = parts;
        iterate.fill(T::ZERO);
        fitted.fill(T::ZERO);
        let mut objective = self.trial_objective(iterate, direction, fitted, slope, T::ZERO)?;
        self.gradient(iterate, fitted, gradient);
        let mut norm = finite(dot_prefix(gradient, gradient).sqrt())?;
        let goal = self.params.0.tolerance * norm;
        let k = iterate.len();
        for iteration in 0..self.params.0.max_iterations {
            if norm <= goal {
                return Ok(Outcome { exit: Exit::Converged, iterations: iteration, objective, gradient_norm: norm });
            }
            self.hessian(fitted, hessian);
            let chol = Cholesky::factor_in(&mut *factor, k, k, |i, j| {
                hessian.get(packed_len(i) + j).copied().unwrap_or(T::ZERO)
            })?;
            for (d, &g) in direction.iter_mut().zip(&*gradient) {
                *d = -g;
            }
            chol.solve_in_place(direction)?;
            for (s, z) in slope.iter_mut().zip(self.features.chunks_exact(self.m)) {
                *s = self.row_dot(z, direction);
            }
            let decrease = dot_prefix(gradient, direction);
            let Some((step, value)) = self.armijo(iterate, direction, fitted, slope, objective, decrease)? else {
                return Ok(Outcome { exit: Exit::Stalled, iterations: iteration + 1, objective, gradient_norm: norm });
            };
            for (v, &d) in iterate.iter_mut().zip(&*direction) {
                *v += step * d;
            }
            for (f, &s) in fitted.iter_mut().zip(&*slope) {
                *f += step * s;
            }
            objective = value;
            self.gradient(iterate, fitted, gradient);
            norm = finite(dot_prefix(gradient, gradient).sqrt())?;
        }
        let exit = if norm <= goal { Exit::Converged } else { Exit::Capped };
        Ok(Outcome { exit, iterations: self.params.0.max_iterations, objective, gradient_norm: norm })
    }

    /// The first of `λ = 1, ½, ¼, …` with `F(v + λd) ≤ F(v) + δλ∇Fᵀd` and its objective;
    /// `None` when none of [`MAX_HALVINGS`] steps does, or `F` does not decrease at all.
    fn armijo(
        &self,
        iterate: &[T],
        direction: &[T],
        fitted: &[T],
        slope: &[T],
        objective: T,
        decrease: T,
    ) -> Result<Option<(T, T)>, Error> {
        let (half, delta) = (T::from_f64(0.5), T::from_f64(ARMIJO));
        let mut step = T::ONE;
        for _ in 0..=MAX_HALVINGS {
            let value = self.trial_objective(iterate, direction, fitted, slope, step)?;
            if value <= objective + delta * step * decrease && value < objective {
                return Ok(Some((step, value)));
            }
            step *= half;
        }
        Ok(None)
    }

    /// `F(v + λd)`, the fitted values moving by `λ·slope`. O(n + m).
    fn trial_objective(&self, v: &[T], d: &[T], fitted: &[T], slope: &[T], step: T) -> Result<T, Error> {
        let half = T::from_f64(0.5);
        let norm = v.iter().zip(d).fold(T::ZERO, |acc, (&v, &d)| {
            let x = v + step * d;
            acc + x * x
        });
        let losses = fitted
            .iter()
            .zip(slope)
            .zip(self.targets)
            .enumerate()
            .fold(T::ZERO, |acc, (i, ((&f, &s), &y))| acc + self.row_loss(i, f + step * s, y).0);
        finite(half * norm + half * self.params.c() * losses)
    }

    /// `∇F = v + (C/2)Σ ℓ'_i z̃_i` into `gradient`.
    fn gradient(&self, v: &[T], fitted: &[T], gradient: &mut [T]) {
        let half_c = T::from_f64(0.5) * self.params.c();
        let bias = self.params.bias();
        gradient.copy_from_slice(v);
        let rows = self.features.chunks_exact(self.m).zip(fitted).zip(self.targets);
        for (i, ((z, &f), &y)) in rows.enumerate() {
            let scale = half_c * self.row_loss(i, f, y).1;
            for (g, &z) in gradient.iter_mut().zip(z) {
                *g += scale * z;
            }
            if let Some(g) = gradient.get_mut(self.m) {
                *g += scale * bias;
            }
        }
    }

    /// The lower triangle of `∇²F = I + (C/2)Σ ℓ''_i z̃_i z̃_iᵀ`, packed, into `hessian`.
    ///
    /// A row whose term is below the rounding of the unit diagonal, `(C/2)ℓ''_i‖z̃_i‖² ≤
    /// ε/n` (a row far on the right side of the margin, where `ℓ''` vanishes), is left out:
    /// all of them together move `∇²F` by at most `ε` in norm. The other rows are added
    /// [`ROWS_PER_PASS`] at a time: each entry is loaded once, takes the rows' terms one
    /// after another in row order, and is stored once — the same sums, in the same order,
    /// as adding the rows one by one, with a quarter of the passes over the triangle.
    fn hessian(&self, fitted: &[T], hessian: &mut [T]) {
        let half_c = T::from_f64(0.5) * self.params.c();
        let bias = self.params.bias();
        hessian.fill(T::ZERO);
        #[allow(clippy::cast_precision_loss, reason = "a count of rows, as a scale")]
        let negligible = T::EPSILON / T::from_f64(fitted.len() as f64);
        let weights =
            fitted.iter().zip(self.targets).enumerate().map(|(i, (&f, &y))| half_c * self.row_loss(i, f, y).2);
        // `‖z̃‖² ≥ B²` and the weight is not negative: a row whose weight alone clears the
        // bound is kept without its norm, which only the rows near it need.
        let kept = |z: &[T], weight: T| {
            weight * bias * bias > negligible || weight * (dot_prefix(z, z) + bias * bias) > negligible
        };
        let mut rows = self.features.chunks_exact(self.m).zip(weights).filter(|&(z, weight)| kept(z, weight));
        loop {
            let block: [_; ROWS_PER_PASS] = core::array::from_fn(|_| rows.next());
            if block.iter().all(Option::is_some) {
                self.add_rows(hessian, block.map(|row| row.unwrap_or((&[], T::ZERO))));
                continue;
            }
            block.into_iter().flatten().for_each(|row| self.add_rows(hessian, [row]));
            break;
        }
        for a in 0..=self.m {
            if let Some(h) = hessian.get_mut(packed_len(a + 1) - 1) {
                *h += T::ONE;
            }
        }
    }

    /// Adds `Σ_r weight_r·z̃_r z̃_rᵀ` for the rows `(z_r, weight_r)` to the packed lower
    /// triangle `hessian`, each entry's terms in the rows' order. Row `a < m` of the
    /// triangle takes `weight·z_a·z_j` for `j ≤ a`; the bias row `a = m` takes `weight·B·z_j`
    /// and, last, `weight·B·B`.
    fn add_rows<const R: usize>(&self, hessian: &mut [T], rows: [(&[T], T); R]) {
        let (m, bias) = (self.m, self.params.bias());
        let mut start = 0;
        for a in 0..=m {
            let Some(row) = hessian.get_mut(start..=start + a) else { return };
            let scaled = rows.map(|(z, weight)| weight * z.get(a).copied().unwrap_or(bias));
            let (features, bias_entry) = row.split_at_mut(if a < m { a + 1 } else { m });
            axpy_many_prefix(scaled, rows.map(|(z, _)| z), features);
            if let Some(h) = bias_entry.first_mut() {
                *h = scaled.iter().fold(*h, |sum, &s| sum + s * bias);
            }
            start += a + 1;
        }
    }

    /// `z̃ᵀx` with `z̃ = (z, B)`.
    fn row_dot(&self, z: &[T], x: &[T]) -> T {
        dot_prefix(z, x) + self.params.bias() * x.get(self.m).copied().unwrap_or(T::ZERO)
    }

    /// [`loss`](Self::loss) of row `i`, weighed by the row's weight.
    fn row_loss(&self, i: usize, f: T, y: T) -> (T, T, T) {
        let (value, d1, d2) = self.loss(f, y);
        match self.row_weights.and_then(|weights| weights.get(i)) {
            Some(&w) => (w * value, w * d1, w * d2),
            None => (value, d1, d2),
        }
    }

    /// `(ℓ, ℓ', ℓ'')` of fitted value `f` and target `y`, derivatives in `f`.
    fn loss(&self, f: T, y: T) -> (T, T, T) {
        let beta = self.params.0.beta;
        match self.params.task() {
            Task::Classification => {
                let (p2, d1, d2) = squared_plus(T::ONE - y * f, beta);
                let weight = if y > T::ZERO { self.params.0.weight_pos } else { self.params.0.weight_neg };
                (weight * p2, -y * weight * d1, weight * d2)
            }
            Task::Regression { epsilon } => {
                let r = f - y;
                let (above, d1_above, d2_above) = squared_plus(r - epsilon, beta);
                let (below, d1_below, d2_below) = squared_plus(-r - epsilon, beta);
                (above + below, d1_above - d1_below, d2_above + d2_below)
            }
        }
    }
}

/// `(p², (p²)', (p²)'')` of the smooth plus function `p(x, β)` of eq. (6), in the form
/// that cannot overflow: `p = max(x, 0) + ln(1 + e^{−β|x|})/β`, `σ = p'` computed from
/// `e^{−β|x|} ≤ 1`, `p'' = βσ(1 − σ)`.
fn squared_plus<T: Real>(x: T, beta: T) -> (T, T, T) {
    let e = (-beta * x.abs()).exp();
    let p = x.max_of(T::ZERO) + (T::ONE + e).ln() / beta;
    let sigma = if x >= T::ZERO { T::ONE / (T::ONE + e) } else { e / (T::ONE + e) };
    let two = T::ONE + T::ONE;
    let second = beta * sigma * (T::ONE - sigma);
    (p * p, two * p * sigma, two * (sigma * sigma + p * second))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;
    use crate::dcd::{DenseRows, LinearSvm, Loss};
    use nalgebra::{DMatrix, DVector};
    use std::vec;
    use std::vec::Vec;

    fn cast<T: Real>(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from_f64(x)).collect()
    }

    /// `n × m` features and a nonlinear target; labels `±1` by its sign.
    fn problem(n: usize, m: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut rng = Rng::seed_from_u64(seed);
        let z: Vec<f64> = (0..n * m).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let y: Vec<f64> =
            z.chunks_exact(m).map(|z| 2.0 + z[0] + (3.0 * z[1]).sin() + 0.1 * rng.normal::<f64>()).collect();
        let labels = z.chunks_exact(m).map(|z| if z[0] + z[1] * z[1] > 0.3 { 1.0 } else { -1.0 }).collect();
        (z, y, labels)
    }

    fn solve<T: Real>(z: &[f64], y: &[f64], m: usize, params: ValidParams<T>) -> (SmoothSvm<T, Vec<T>>, Outcome<T>) {
        let n = y.len();
        let mut svm = SmoothSvm::new_in(vec![T::ZERO; SmoothSvm::scalars_len(n, m)], n, m, params).unwrap();
        let outcome = svm.train(&cast::<T>(z), &cast::<T>(y)).unwrap();
        (svm, outcome)
    }

    /// `∇F` at `(u, v_m)` recomputed in f64 from eq. (6)-(7)/(21)-(22) by central
    /// differences of `F` — no derivative formula of the solver's.
    fn numeric_gradient(z: &[f64], y: &[f64], v: &[f64], task: Task<f64>, c: f64, beta: f64) -> Vec<f64> {
        let m = v.len() - 1;
        let p = |x: f64| x + (1.0 + (-beta * x).exp()).ln() / beta;
        let f = |v: &[f64]| {
            let losses: f64 = z
                .chunks_exact(m)
                .zip(y)
                .map(|(z, &y)| {
                    let fit = z.iter().zip(v).map(|(a, b)| a * b).sum::<f64>() + v[m];
                    match task {
                        Task::Classification => p(1.0 - y * fit).powi(2),
                        Task::Regression { epsilon } => p(fit - y - epsilon).powi(2) + p(y - fit - epsilon).powi(2),
                    }
                })
                .sum();
            0.5 * v.iter().map(|x| x * x).sum::<f64>() + 0.5 * c * losses
        };
        (0..=m)
            .map(|k| {
                let h = 1e-6;
                let (mut plus, mut minus) = (v.to_vec(), v.to_vec());
                plus[k] += h;
                minus[k] -= h;
                (f(&plus) - f(&minus)) / (2.0 * h)
            })
            .collect()
    }

    /// `∇²F` as the module doc writes it, summed row by row in row order into a dense
    /// `(m+1) × (m+1)` matrix, every row kept.
    fn hessian_row_by_row<T: Real>(problem: &Problem<'_, T>, fitted: &[T]) -> Vec<Vec<T>> {
        let (m, bias, half_c) = (problem.m, problem.params.bias(), T::from_f64(0.5) * problem.params.c());
        let mut h = vec![vec![T::ZERO; m + 1]; m + 1];
        for ((z, &f), &y) in problem.features.chunks_exact(m).zip(fitted).zip(problem.targets) {
            let weight = half_c * problem.loss(f, y).2;
            let extended: Vec<T> = z.iter().copied().chain([bias]).collect();
            for a in 0..=m {
                for j in 0..=a {
                    h[a][j] += weight * extended[a] * extended[j];
                }
            }
        }
        (0..=m).for_each(|a| h[a][a] += T::ONE);
        h
    }

    /// The Hessian's blocks of rows and their remainder give the row-by-row sums bit for
    /// bit; rows far past the margin, left out, move it by less than `ε`.
    fn hessian_matches_row_by_row<T: Real>() {
        let m = 5;
        for n in 1..=11 {
            let (z, _, labels) = problem(n, m, 7 + n as u64);
            let (z, labels) = (cast::<T>(&z), cast::<T>(&labels));
            let params =
                Params::new().c(T::from_f64(10.0)).beta(T::from_f64(5.0)).bias(T::from_f64(0.5)).check().unwrap();
            let problem = Problem { features: &z, targets: &labels, row_weights: None, m, params };
            // Rows on the margin's wrong side or near it, every term well above ε/n.
            let mut rng = Rng::seed_from_u64(n as u64);
            let fitted: Vec<T> = labels.iter().map(|&y| y * T::from_f64(rng.uniform_in(-1.0, 1.2))).collect();
            let mut packed = vec![T::ZERO; packed_len(m + 1)];
            problem.hessian(&fitted, &mut packed);
            let reference = hessian_row_by_row(&problem, &fitted);
            for a in 0..=m {
                for j in 0..=a {
                    assert_eq!(packed[packed_len(a) + j].to_f64(), reference[a][j].to_f64(), "n = {n}, ({a}, {j})");
                }
            }
            // A third of the rows 40 margins past it, whose terms underflow ε/n and are
            // left out; a third 1.5 past it, whose terms (about 1e-5) are small but count.
            let far: Vec<T> = fitted
                .iter()
                .zip(&labels)
                .enumerate()
                .map(|(i, (&f, &y))| match i % 3 {
                    0 => y * T::from_f64(40.0),
                    1 => y * T::from_f64(2.5),
                    _ => f,
                })
                .collect();
            problem.hessian(&far, &mut packed);
            let reference = hessian_row_by_row(&problem, &far);
            for a in 0..=m {
                for j in 0..=a {
                    let gap = (packed[packed_len(a) + j] - reference[a][j]).abs();
                    assert!(gap <= T::EPSILON, "n = {n}, ({a}, {j}): {gap:?}");
                }
            }
        }
    }

    #[test]
    fn hessian_blocks_sum_as_row_by_row_f64() {
        hessian_matches_row_by_row::<f64>();
    }

    #[test]
    fn hessian_blocks_sum_as_row_by_row_f32() {
        hessian_matches_row_by_row::<f32>();
    }

    fn stationary<T: Real>(task: Task<f64>, tol: f64) {
        let (n, m, c, beta) = (150, 6, 10.0, 5.0);
        let (z, y, labels) = problem(n, m, 3);
        let targets = if task == Task::Classification { &labels } else { &y };
        let task_t = match task {
            Task::Classification => Task::Classification,
            Task::Regression { epsilon } => Task::Regression { epsilon: T::from_f64(epsilon) },
        };
        let params = Params::new().task(task_t).c(T::from_f64(c)).beta(T::from_f64(beta)).check().unwrap();
        let (svm, outcome) = solve::<T>(&z, targets, m, params);
        assert_ne!(outcome.exit, Exit::Capped);
        assert!(outcome.iterations < 30, "{} iterations", outcome.iterations);
        let mut v: Vec<f64> = svm.weights().iter().map(|x| x.to_f64()).collect();
        v.push(svm.bias_weight().to_f64());
        let gradient = numeric_gradient(&z, targets, &v, task, c, beta);
        let scale = numeric_gradient(&z, targets, &vec![0.0; m + 1], task, c, beta);
        let (g, g0) = (gradient.iter().map(|g| g * g).sum::<f64>().sqrt(), scale.iter().map(|g| g * g).sum::<f64>());
        assert!(g <= tol * g0.sqrt(), "‖∇F‖ = {g} vs ‖∇F(0)‖ = {}", g0.sqrt());
    }

    #[test]
    fn ssvm_solution_is_stationary_f64() {
        stationary::<f64>(Task::Classification, 1e-6);
    }

    #[test]
    fn ssvm_solution_is_stationary_f32() {
        stationary::<f32>(Task::Classification, 1e-3);
    }

    #[test]
    fn ssvr_solution_is_stationary_f64() {
        stationary::<f64>(Task::Regression { epsilon: 0.2 }, 1e-6);
    }

    #[test]
    fn ssvr_solution_is_stationary_f32() {
        stationary::<f32>(Task::Regression { epsilon: 0.2 }, 1e-3);
    }

    /// With `ε = 0` and a steep `β`, `p(r)² + p(−r)² → r²`: ε-SSVR is the ridge
    /// regression `(I + C·Z̃ᵀZ̃)v = C·Z̃ᵀy`, solved densely by nalgebra.
    fn ridge_limit<T: Real>(tol: f64) {
        let (n, m, c) = (120, 5, 3.0);
        let (z, y, _) = problem(n, m, 8);
        let x = DMatrix::from_fn(n, m + 1, |i, j| if j == m { 1.0 } else { z[i * m + j] });
        let normal = DMatrix::identity(m + 1, m + 1) + c * x.transpose() * &x;
        let exact = normal.cholesky().unwrap().solve(&(c * x.transpose() * DVector::from_column_slice(&y)));
        let task = Task::Regression { epsilon: T::ZERO };
        let params = Params::new().task(task).c(T::from_f64(c)).beta(T::from_f64(1e5)).check().unwrap();
        let (svm, _) = solve::<T>(&z, &y, m, params);
        let scale = exact.amax();
        for (k, &u) in svm.weights().iter().enumerate() {
            assert!((u.to_f64() - exact[k]).abs() <= tol * scale, "u_{k}: {} vs {}", u.to_f64(), exact[k]);
        }
        assert!((svm.bias().to_f64() - exact[m]).abs() <= tol * scale);
    }

    #[test]
    fn ssvr_without_tube_is_ridge_regression_f64() {
        ridge_limit::<f64>(1e-4);
    }

    #[test]
    fn ssvr_without_tube_is_ridge_regression_f32() {
        ridge_limit::<f32>(1e-3);
    }

    /// As `β → ∞` SSVM solves eq. (5): the squared-hinge SVM with bias feature 1 and cost
    /// `C/2`, which dual coordinate descent solves too.
    #[test]
    fn ssvm_tends_to_the_squared_hinge_svm() {
        let (n, m, c) = (200, 4, 4.0);
        let (z, _, labels) = problem(n, m, 5);
        let params = Params::new().c(c).beta(1e4).check().unwrap();
        let (svm, outcome) = solve::<f64>(&z, &labels, m, params);
        assert_ne!(outcome.exit, Exit::Capped);
        let dcd = crate::dcd::Params::new().loss(Loss::SquaredHinge).c(c / 2.0).bias(1.0).epsilon(1e-10);
        let mut linear = LinearSvm::new_in(
            vec![0.0; LinearSvm::scalars_len(n, m)],
            vec![0; LinearSvm::indices_len(n)],
            n,
            m,
            dcd.check().unwrap(),
        )
        .unwrap();
        let classes: Vec<i32> = labels.iter().map(|&y| y as i32).collect();
        linear.train(&DenseRows::new(&z, m).unwrap(), &classes, &mut Rng::seed_from_u64(1)).unwrap();
        for (a, b) in svm.weights().iter().zip(linear.weights()) {
            assert!((a - b).abs() < 1e-3, "{a} vs {b}");
        }
        assert!((svm.bias_weight() - linear.bias_weight()).abs() < 1e-3);
    }

    /// With class weights, as `β → ∞` SSVM solves the squared-hinge SVM whose costs are
    /// weighted alike, `C₊ = ω₊C/2`, `C₋ = ω₋C/2`, as DCD does; unit weights change no bit.
    #[test]
    fn class_weights_weigh_the_costs_as_dcd_does() {
        let (n, m, c, (positive, negative)) = (200, 4, 4.0, (5.0, 0.5));
        let (z, _, labels) = problem(n, m, 6);
        let weighted = Params::new().c(c).beta(1e4).class_weights(positive, negative).check().unwrap();
        let (svm, outcome) = solve::<f64>(&z, &labels, m, weighted);
        assert_ne!(outcome.exit, Exit::Capped);
        let dcd = crate::dcd::Params::new()
            .loss(Loss::SquaredHinge)
            .c(c / 2.0)
            .bias(1.0)
            .epsilon(1e-10)
            .max_passes(100_000)
            .check()
            .unwrap()
            .weighted(positive, negative)
            .unwrap();
        let mut linear =
            LinearSvm::new_in(vec![0.0; LinearSvm::scalars_len(n, m)], vec![0; LinearSvm::indices_len(n)], n, m, dcd)
                .unwrap();
        let classes: Vec<i32> = labels.iter().map(|&y| y as i32).collect();
        let dcd_outcome = linear.train(&DenseRows::new(&z, m).unwrap(), &classes, &mut Rng::seed_from_u64(1)).unwrap();
        assert_eq!(dcd_outcome.exit, crate::dcd::Exit::Converged, "{dcd_outcome:?}");
        for (a, b) in svm.weights().iter().zip(linear.weights()) {
            assert!((a - b).abs() < 1e-3, "{a} vs {b}");
        }
        assert!((svm.bias_weight() - linear.bias_weight()).abs() < 1e-3);
        let plain = Params::new().c(c).beta(5.0).check().unwrap();
        let unit = Params::new().c(c).beta(5.0).class_weights(1.0, 1.0).check().unwrap();
        let bits = |p| solve::<f64>(&z, &labels, m, p).0.weights().iter().map(|w| w.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(plain), bits(unit));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = Params::new().class_weights(bad, 1.0).check().err();
            assert_eq!(e, Some(Error::InvalidParam { name: "class_weights" }));
            assert_eq!(Params::new().class_weights(1.0, bad).check().err(), e);
        }
    }

    /// Row weights: an integer weight `k` solves the problem in which the row appears `k`
    /// times (classification and regression, with class weights too), unit weights change
    /// no bit, and bad weights are refused with the solution kept.
    #[test]
    fn row_weights_count_as_copies_of_the_rows() {
        let (n, m) = (60, 3);
        let (z, targets, labels) = problem(n, m, 9);
        let counts: Vec<usize> = (0..n).map(|i| 1 + i % 3).collect();
        let weights: Vec<f64> = counts.iter().map(|&k| k as f64).collect();
        let repeat = |values: &[f64], width: usize| -> Vec<f64> {
            let rows = values.chunks_exact(width).zip(&counts);
            rows.flat_map(|(row, &k)| std::iter::repeat_n(row, k).flatten().copied()).collect()
        };
        let classify = Params::new().c(2.0).beta(5.0).class_weights(2.0, 0.5).check().unwrap();
        let regress = Params::new().task(Task::Regression { epsilon: 0.1 }).c(2.0).beta(5.0).check().unwrap();
        for (params, y) in [(classify, &labels), (regress, &targets)] {
            let (copies, repeated) = (repeat(&z, m), repeat(y, 1));
            let mut weighted = SmoothSvm::new_in(vec![0.0; SmoothSvm::scalars_len(n, m)], n, m, params).unwrap();
            assert_eq!(weighted.train_weighted(&z, y, &weights).unwrap().exit, Exit::Converged);
            let (reference, outcome) = solve::<f64>(&copies, &repeated, m, params);
            assert_eq!(outcome.exit, Exit::Converged);
            let pairs = weighted.weights().iter().zip(reference.weights());
            for (a, b) in pairs.chain([(&weighted.bias_weight(), &reference.bias_weight())]) {
                assert!((a - b).abs() <= 1e-8 * (1.0 + b.abs()), "{a} vs {b}");
            }
            let mut unit = SmoothSvm::new_in(vec![0.0; SmoothSvm::scalars_len(n, m)], n, m, params).unwrap();
            unit.train_weighted(&z, y, &vec![1.0; n]).unwrap();
            assert_eq!(unit.weights(), solve::<f64>(&z, y, m, params).0.weights());
            let before = weighted.weights().to_vec();
            for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
                let mut w = weights.clone();
                w[5] = bad;
                assert_eq!(weighted.train_weighted(&z, y, &w), Err(Error::InvalidParam { name: "row_weights" }));
            }
            assert!(matches!(weighted.train_weighted(&z, y, &weights[1..]), Err(Error::DimensionMismatch { .. })));
            assert_eq!(weighted.weights(), &before[..]);
        }
    }

    #[test]
    fn bad_input_is_an_error_and_keeps_the_solution() {
        let params = Params::new().check().unwrap();
        let mut svm = SmoothSvm::new_in(vec![0.0; SmoothSvm::scalars_len(3, 1)], 3, 1, params).unwrap();
        svm.train(&[-1.0, 0.5, 2.0], &[-1.0, 1.0, 1.0]).unwrap();
        let before = (svm.weights().to_vec(), svm.bias());
        assert_eq!(svm.train(&[-1.0, 0.5, 2.0], &[-1.0, 0.5, 1.0]), Err(Error::InvalidLabel { row: 1 }));
        assert_eq!(svm.train(&[-1.0, f64::NAN, 2.0], &[-1.0, 1.0, 1.0]), Err(Error::NonFinite));
        assert!(matches!(svm.train(&[-1.0, 0.5], &[-1.0, 1.0, 1.0]), Err(Error::DimensionMismatch { .. })));
        assert_eq!((svm.weights().to_vec(), svm.bias()), before);
        let short = SmoothSvm::new_in(vec![0.0; 3], 3, 1, params).err();
        assert!(matches!(short, Some(Error::CapacityExceeded { .. })));
        assert_eq!(SmoothSvm::new_in(vec![0.0; 99], 0, 1, params).err(), Some(Error::InvalidParam { name: "n" }));
        for (bad, name) in [
            (Params::new().c(0.0), "c"),
            (Params::new().beta(f64::NAN), "beta"),
            (Params::new().tolerance(1.0), "tolerance"),
            (Params::new().bias(-1.0), "bias"),
            (Params::new().task(Task::Regression { epsilon: -0.1 }), "epsilon"),
            (Params::new().max_iterations(0), "max_iterations"),
        ] {
            assert_eq!(bad.check(), Err(Error::InvalidParam { name }));
        }
    }

    #[test]
    fn smooth_plus_is_stable_and_bounds_the_plus_function() {
        for beta in [0.5f64, 5.0, 1e4] {
            for x in [-1e6, -3.0, -1e-3, 0.0, 1e-3, 3.0, 1e6] {
                let (p2, d1, d2) = squared_plus(x, beta);
                assert!(p2.is_finite() && d1.is_finite() && d2.is_finite());
                let p = p2.sqrt();
                assert!(p >= x.max(0.0) - 1e-9 && p - x.max(0.0) <= 2f64.ln() / beta + 1e-9, "β {beta}, x {x}");
            }
        }
    }
}
