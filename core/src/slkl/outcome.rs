//! What a step or a run reports: the case of eq. (24)-(27) a step fell in, why a run
//! stopped, and counters (wasted steps, shrinking, refactorizations).

/// What one coordinate step did: the paper's four cases (eq. 24-27) and three outcomes
/// of Kestrel's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `μ` was 0 and stays 0 (eq. 24): `λa² ≤ ν`.
    StayZero,
    /// `μ` changed and stays positive (eq. 25).
    Change,
    /// `μ` went to 0: the column left the active set (eq. 26).
    Leave,
    /// `μ` became positive: the column entered (eq. 27).
    Enter,
    /// The new weight equals the old one to rounding; nothing was updated.
    Unchanged,
    /// The column should enter but `m0` is at `max_active`; it stays at 0.
    AtCapacity,
    /// The update was numerically singular even after a fresh factorization; the weight
    /// kept its value.
    IllConditioned,
}

/// One step's report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step<T> {
    /// Candidate index `m` drawn.
    pub candidate: usize,
    /// What happened to `μ_m`.
    pub case: Case,
    /// `F(μ)` after the step.
    pub objective: T,
    /// `m0` after the step.
    pub active: usize,
}

/// Why [`run`](super::Slkl::run) returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitReason {
    /// The stopping rule held (after a confirming sweep when shrinking).
    Converged,
    /// `max_steps` steps were taken first.
    StepCap,
}

/// The outcome of a run: non-convergence is an outcome, not an error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary<T> {
    /// Why the run stopped.
    pub reason: ExitReason,
    /// Steps taken in this run.
    pub steps: u64,
    /// `F(μ)` at the end.
    pub objective: T,
    /// `m0` at the end.
    pub active: usize,
}

/// Counters since construction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    /// Coordinate steps taken.
    pub steps: u64,
    /// Steps whose coordinate stayed at 0: the paper's wasted iterations.
    pub stay_zero: u64,
    /// Steps that changed a positive weight.
    pub change: u64,
    /// Steps after which a column left.
    pub leave: u64,
    /// Steps after which a column entered.
    pub enter: u64,
    /// Steps with no change to rounding.
    pub unchanged: u64,
    /// Entries refused because `m0` was at capacity.
    pub at_capacity: u64,
    /// Numerically singular updates skipped.
    pub ill_conditioned: u64,
    /// Coordinates removed from the pool by shrinking.
    pub shrunk: u64,
    /// Confirming sweeps over all candidates.
    pub sweeps: u64,
    /// Candidate columns computed on the fly (`n` kernel evaluations each).
    pub column_evaluations: u64,
    /// Full refactorizations of `D⁻¹ + CᵀC/λ`.
    pub refactorizations: u64,
    /// Drift checks of the maintained factor.
    pub drift_checks: u64,
}

impl Stats {
    /// Counts one step that ended in `case`.
    pub(crate) fn record(&mut self, case: Case) {
        self.steps += 1;
        match case {
            Case::StayZero => self.stay_zero += 1,
            Case::Change => self.change += 1,
            Case::Leave => self.leave += 1,
            Case::Enter => self.enter += 1,
            Case::Unchanged => self.unchanged += 1,
            Case::AtCapacity => self.at_capacity += 1,
            Case::IllConditioned => self.ill_conditioned += 1,
        }
    }
}
