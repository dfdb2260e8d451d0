//! Hyper-parameters of SLKL: `Params::new()`, by-value setters, `check()`.
//!
//! Only [`ValidParams`] reach a learner, so every learner can rely on `ν > 0`, `λ > 0` and
//! the other ranges below without checking them again.

use crate::{Error, Kernel, Real};

/// How a chosen coordinate `μ_m` moves, given `a = yᵀK_λ⁻¹c_m` and `b = c_mᵀK_λ⁻¹c_m`
/// (`K_λ = λI + K~(μ)`, eq. 20-21 of the SLKL paper).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StepRule {
    /// The exact minimiser of `F` along the coordinate (the default). By Sherman–Morrison
    /// the restriction of `F` to `μ_m = μ + t` is `φ(t) = −λa²t/(1 + tb) + νt + const`,
    /// convex on `1 + tb > 0`, so `μ_new = max(0, μ + (√(λa²/ν) − 1)/b)`. `F` never
    /// increases (the guarantee Theorem 1(a) states for the Newton step, which does not
    /// have it when a weight decreases).
    #[default]
    Exact,
    /// The projected Newton step of eq. (19) with the second derivative of eq. (21) for
    /// `p = 2`: `∂²F/∂μ_m² = 2λa²b`, so `μ_new = max(0, μ + (λa² − ν)/(2λa²b))`, and
    /// `μ_new = 0` when `a = 0`. Kept for comparison with the paper.
    Newton,
    /// Algorithm 2 exactly as printed, `h = λa²b`: twice the Newton step of eq. (19).
    /// Kept only to reproduce the paper's algorithm; it overshoots.
    NewtonAsPrinted,
}

/// SLKL hyper-parameters, unchecked. Build with [`Params::new`] and the setters, then
/// [`check`](Params::check).
///
/// # Examples
/// ```
/// use kestrel_core::Kernel;
/// use kestrel_core::slkl::{Params, StepRule};
/// let params = Params::new()
///     .nu(0.01)
///     .kernel(Kernel::gaussian_sigma(1.0)?)
///     .rule(StepRule::Exact)
///     .check()?;
/// assert_eq!(params.nu(), 0.01);
/// assert!(Params::<f64>::new().nu(0.0).check().is_err());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params<T> {
    kernel: Kernel<T>,
    nu: T,
    lambda: T,
    rule: StepRule,
    epsilon: T,
    lag: usize,
    max_steps: u64,
    shrinking: bool,
    drift_tolerance: T,
    drift_check_every: usize,
    seed: u64,
}

/// Hyper-parameters that passed [`Params::check`]; read-only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidParams<T>(Params<T>);

impl<T: Real> Default for Params<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The stopping rule's relative tolerance `ε` unless told ([`Params::epsilon`]).
pub const DEFAULT_EPSILON: f64 = 1e-4;

impl<T: Real> Params<T> {
    /// The paper's settings (Sect. 5): Gaussian kernel `exp(−‖x − x'‖²/(2σ²))` with
    /// `σ² = 1` (`γ = 0.5`), `ν = 0.01`, `λ = 1`, `ε = 10⁻⁴`, a stopping lag of `M` steps;
    /// plus the exact coordinate minimiser, shrinking on, at most 10⁶ steps per run, a
    /// drift check every 64 factor changes with tolerance `√ε_machine`, seed 0.
    pub fn new() -> Self {
        let half = T::from_f64(0.5);
        Params {
            kernel: Kernel::rbf(half).unwrap_or_else(|_| Kernel::linear()),
            nu: T::from_f64(0.01),
            lambda: T::ONE,
            rule: StepRule::Exact,
            epsilon: T::from_f64(DEFAULT_EPSILON),
            lag: 0,
            max_steps: 1_000_000,
            shrinking: true,
            drift_tolerance: T::EPSILON.sqrt(),
            drift_check_every: 64,
            seed: 0,
        }
    }

    /// The base kernel `k` whose rank-1 Nyström approximations are combined (eq. 1-3).
    pub fn kernel(mut self, kernel: Kernel<T>) -> Self {
        self.kernel = kernel;
        self
    }

    /// The ℓ₁ weight `ν > 0` of eq. (14): larger ν, sparser μ (fewer active columns).
    pub fn nu(mut self, nu: T) -> Self {
        self.nu = nu;
        self
    }

    /// The ridge `λ > 0` of eq. (14). By Prop. 3 only `λν` matters for the learned
    /// function (μ scales with λ), so the paper and the default keep `λ = 1`.
    pub fn lambda(mut self, lambda: T) -> Self {
        self.lambda = lambda;
        self
    }

    /// How a coordinate moves; see [`StepRule`].
    pub fn rule(mut self, rule: StepRule) -> Self {
        self.rule = rule;
        self
    }

    /// Relative tolerance `ε ≥ 0` of the stopping rule
    /// `F(μ^{k−lag}) − F(μ^k) ≤ ε·F(μ^{k−lag})`. (Algorithm 1 prints the difference with
    /// the opposite sign, which holds at once since F decreases.) `ε = 0` runs to the
    /// step cap unless F stops moving at all.
    pub fn epsilon(mut self, epsilon: T) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// The stopping rule's lag in steps; `0` (the default) means `M`, the number of
    /// candidates, as in the paper. At most `M` (checked when the learner is built).
    pub fn lag(mut self, lag: usize) -> Self {
        self.lag = lag;
        self
    }

    /// The most steps one call to `run` takes (≥ 1).
    pub fn max_steps(mut self, max_steps: u64) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Skip coordinates stuck at 0 (the paper's future work, Sect. 5.4). A coordinate at
    /// `μ = 0` whose `λa² ≤ ν` leaves the pool of coordinates drawn; once the stopping rule
    /// holds on the pool, a sweep over every candidate confirms optimality (or resumes).
    pub fn shrinking(mut self, shrinking: bool) -> Self {
        self.shrinking = shrinking;
        self
    }

    /// Relative error `> 0` between a column of the maintained factor's `LLᵀ` and the same
    /// column of `D⁻¹ + CᵀC/λ` computed afresh above which the factor is recomputed.
    pub fn drift_tolerance(mut self, tolerance: T) -> Self {
        self.drift_tolerance = tolerance;
        self
    }

    /// A drift check (one column, O(n·m0)) after every this many factor changes (≥ 1).
    pub fn drift_check_every(mut self, changes: usize) -> Self {
        self.drift_check_every = changes;
        self
    }

    /// Seed of the learner's random coordinate choice (and of random candidates).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Validates the ranges.
    ///
    /// # Errors
    /// `InvalidParam` naming `nu` or `lambda` (must be finite and > 0 with a finite
    /// reciprocal), `epsilon` (finite,
    /// ≥ 0), `max_steps` (≥ 1), `drift_tolerance` (finite, > 0) or `drift_check_every` (≥ 1).
    pub fn check(self) -> Result<ValidParams<T>, Error> {
        // Positive, finite, with a finite reciprocal (`1/λ` scales every update).
        let positive = |x: T| x > T::ZERO && x.is_finite() && (T::ONE / x).is_finite();
        if !positive(self.nu) {
            return Err(Error::InvalidParam { name: "nu" });
        }
        if !positive(self.lambda) {
            return Err(Error::InvalidParam { name: "lambda" });
        }
        if !(self.epsilon >= T::ZERO && self.epsilon.is_finite()) {
            return Err(Error::InvalidParam { name: "epsilon" });
        }
        if self.max_steps == 0 {
            return Err(Error::InvalidParam { name: "max_steps" });
        }
        if !positive(self.drift_tolerance) {
            return Err(Error::InvalidParam { name: "drift_tolerance" });
        }
        if self.drift_check_every == 0 {
            return Err(Error::InvalidParam { name: "drift_check_every" });
        }
        Ok(ValidParams(self))
    }
}

impl<T: Real> ValidParams<T> {
    /// The base kernel.
    pub fn kernel(&self) -> Kernel<T> {
        self.0.kernel
    }
    /// `ν`.
    pub fn nu(&self) -> T {
        self.0.nu
    }
    /// `λ`.
    pub fn lambda(&self) -> T {
        self.0.lambda
    }
    /// The step rule.
    pub fn rule(&self) -> StepRule {
        self.0.rule
    }
    /// `ε` of the stopping rule.
    pub fn epsilon(&self) -> T {
        self.0.epsilon
    }
    /// The stopping lag (`0` = the number of candidates).
    pub fn lag(&self) -> usize {
        self.0.lag
    }
    /// Step cap of one run.
    pub fn max_steps(&self) -> u64 {
        self.0.max_steps
    }
    /// Whether shrinking is on.
    pub fn shrinking(&self) -> bool {
        self.0.shrinking
    }
    /// Drift tolerance.
    pub fn drift_tolerance(&self) -> T {
        self.0.drift_tolerance
    }
    /// Factor changes between drift checks.
    pub fn drift_check_every(&self) -> usize {
        self.0.drift_check_every
    }
    /// Seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// The unchecked parameters back, to change one and check again.
    pub fn into_params(self) -> Params<T> {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                let ok = Params::<$t>::new().check().unwrap();
                assert_eq!(ok.lambda(), 1.0);
                assert_eq!(ok.rule(), StepRule::Exact);
                assert_eq!(ok.kernel(), Kernel::gaussian_sigma(1.0).unwrap());
                let bad = |p: Params<$t>| p.check().err();
                let named = |name| Some(Error::InvalidParam { name });
                assert_eq!(bad(Params::new().nu(-1.0)), named("nu"));
                assert_eq!(bad(Params::new().nu(<$t>::NAN)), named("nu"));
                assert_eq!(bad(Params::new().lambda(0.0)), named("lambda"));
                assert_eq!(bad(Params::new().epsilon(-1e-3)), named("epsilon"));
                assert_eq!(bad(Params::new().max_steps(0)), named("max_steps"));
                assert_eq!(bad(Params::new().drift_tolerance(0.0)), named("drift_tolerance"));
                assert_eq!(bad(Params::new().drift_check_every(0)), named("drift_check_every"));
                let p = ok.into_params().nu(0.5).check().unwrap();
                assert_eq!(p.nu(), 0.5);
            }
        )*};
    }

    gen_tests! {
        params_f32: f32,
        params_f64: f64,
    }
}
