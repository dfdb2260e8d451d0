//! The parameters and results of Algorithm 1, and the learned representation.

use crate::{Error, Real};

use super::Loss;
#[cfg(doc)]
use super::Npkl;

/// Parameters of Algorithm 1, unchecked: [`NpklParams::new`], the setters, then
/// [`check`](NpklParams::check).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NpklParams<T> {
    rank: usize,
    loss: Loss,
    gamma: T,
    tolerance: T,
    max_sweeps: usize,
    bound: T,
    random_order: bool,
}

impl<T: Real> NpklParams<T> {
    /// Rank `r` and loss, with `γ = 1`, `ε = 10⁻⁵`, at most 1000 sweeps and `b = 1` (the
    /// paper's settings, Sect. IV-A; it does not state `γ`).
    pub fn new(rank: usize, loss: Loss) -> Self {
        NpklParams {
            rank,
            loss,
            gamma: T::ONE,
            tolerance: T::from_f64(1e-5),
            max_sweeps: 1000,
            bound: T::ONE,
            random_order: true,
        }
    }

    /// The trade-off `γ > 0` of eq. (3).
    pub fn gamma(mut self, gamma: T) -> Self {
        self.gamma = gamma;
        self
    }

    /// The relative change `ε ≥ 0` below which a run stops (step 14).
    pub fn tolerance(mut self, tolerance: T) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The most sweeps one [`Npkl::run`] makes (`itermax`, ≥ 1).
    pub fn max_sweeps(mut self, max_sweeps: usize) -> Self {
        self.max_sweeps = max_sweeps;
        self
    }

    /// The norm bound `b > 0` of the linear loss (31).
    pub fn bound(mut self, bound: T) -> Self {
        self.bound = bound;
        self
    }

    /// Whether each sweep visits the points in a fresh random order (step 5 of Algorithm 1,
    /// the default) or in index order (constrained points first either way).
    ///
    /// Index order is not the paper's, but it is deterministic without the generator and,
    /// when points are numbered so that graph neighbours are close (e.g. along a
    /// space-filling curve), cache-friendly: with `V` larger than the cache a random order
    /// costs a few cache misses per column (about 3× slower per sweep at `n = 10⁵`,
    /// `r = 44`, see the evaluation).
    pub fn random_order(mut self, random: bool) -> Self {
        self.random_order = random;
        self
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam` naming `rank` (0), `gamma`, `bound` (not finite and positive),
    /// `tolerance` (negative or not finite) or `max_sweeps` (0).
    pub fn check(self) -> Result<ValidNpklParams<T>, Error> {
        let positive = |x: T| x > T::ZERO && x.is_finite();
        if self.rank == 0 {
            return Err(Error::InvalidParam { name: "rank" });
        }
        if !positive(self.gamma) {
            return Err(Error::InvalidParam { name: "gamma" });
        }
        if !(self.tolerance >= T::ZERO && self.tolerance.is_finite()) {
            return Err(Error::InvalidParam { name: "tolerance" });
        }
        if self.max_sweeps == 0 {
            return Err(Error::InvalidParam { name: "max_sweeps" });
        }
        if !positive(self.bound) {
            return Err(Error::InvalidParam { name: "bound" });
        }
        Ok(ValidNpklParams(self))
    }
}

/// Parameters of Algorithm 1 that passed [`NpklParams::check`]; read-only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidNpklParams<T>(NpklParams<T>);

impl<T: Real> ValidNpklParams<T> {
    /// The rank `r ≥ 1`.
    pub fn rank(&self) -> usize {
        self.0.rank
    }

    /// The loss.
    pub fn loss(&self) -> Loss {
        self.0.loss
    }

    /// The trade-off `γ > 0` of eq. (3).
    pub fn gamma(&self) -> T {
        self.0.gamma
    }

    /// The relative change `ε ≥ 0` below which a run stops.
    pub fn tolerance(&self) -> T {
        self.0.tolerance
    }

    /// The most sweeps one run makes (≥ 1).
    pub fn max_sweeps(&self) -> usize {
        self.0.max_sweeps
    }

    /// The norm bound `b > 0` of the linear loss.
    pub fn bound(&self) -> T {
        self.0.bound
    }

    /// Whether each sweep visits the points in a fresh random order.
    pub fn random_order(&self) -> bool {
        self.0.random_order
    }

    /// The bound `‖v_i‖ ≤ b` every column keeps: the linear loss's `b`, `None` otherwise.
    pub(super) fn column_bound(&self) -> Option<T> {
        (self.0.loss == Loss::Linear).then_some(self.0.bound)
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// `‖V(t) − V(t−1)‖/‖V(t)‖ < ε`.
    Converged,
    /// The sweep cap was reached first.
    SweepCap,
}

/// What one sweep did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepReport<T> {
    /// Sweeps done so far by this solver (1 after the first).
    pub sweep: usize,
    /// Objective (3) after the sweep (tracked, see [`Npkl::tracked_objective`]).
    pub objective: T,
    /// `‖V(t) − V(t−1)‖_F / ‖V(t)‖_F`.
    pub relative_change: T,
    /// Columns whose candidate was not kept (it would have raised `φ_i`, or a
    /// factorisation failed).
    pub rejected: usize,
}

/// The result of [`Npkl::run`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome<T> {
    /// Why the run stopped.
    pub reason: StopReason,
    /// Sweeps made by this run.
    pub sweeps: usize,
    /// Objective (3) when the run started.
    pub initial_objective: T,
    /// Objective (3) at the end.
    pub objective: T,
    /// The last sweep's relative change.
    pub relative_change: T,
}

/// The result of one column update.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColumnUpdate<T> {
    /// `φ_i` of eq. (18) before.
    pub before: T,
    /// `φ_i` of the candidate (NaN when a factorisation failed).
    pub after: T,
    /// Whether the candidate replaced the column.
    pub accepted: bool,
}

/// The learned representation: the columns of `V`, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Embedding<'a, T> {
    columns: &'a [T],
    rank: usize,
    bound: Option<T>,
}

impl<'a, T: Real> Embedding<'a, T> {
    /// The columns `v_i` at `i·r` (`rank ≥ 1`), with the linear loss's bound if any.
    pub(super) fn new(columns: &'a [T], rank: usize, bound: Option<T>) -> Self {
        Embedding { columns, rank, bound }
    }

    /// Columns learned earlier by a solver with `params` (kept by the caller after the
    /// solver is gone): `v_i` at `i·r`, `r = params.rank()`.
    ///
    /// # Errors
    /// `DimensionMismatch` when `columns` is empty or not a multiple of `r` long;
    /// `NonFinite` for NaN/∞ entries.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::npkl::{Embedding, Loss, NpklParams};
    /// let params = NpklParams::new(2, Loss::Hinge).check()?;
    /// let embedding = Embedding::of_columns(&[1.0, 0.0, 0.5, 0.5, 0.0, 1.0], &params)?;
    /// assert_eq!((embedding.n(), embedding.column(1)), (3, Some(&[0.5, 0.5][..])));
    /// assert!(Embedding::of_columns(&[1.0, 0.0, 0.5], &params).is_err());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn of_columns(columns: &'a [T], params: &ValidNpklParams<T>) -> Result<Self, Error> {
        let rank = params.rank();
        let whole = columns.len() - columns.len() % rank;
        if whole == 0 || whole != columns.len() {
            return Err(Error::DimensionMismatch { expected: whole.max(rank), got: columns.len() });
        }
        crate::real::check_finite(columns)?;
        Ok(Embedding::new(columns, rank, params.column_bound()))
    }

    /// Column `v_i` (`r` scalars), or `None` for `i ≥ n`.
    pub fn column(&self, i: usize) -> Option<&'a [T]> {
        self.columns.get(i.checked_mul(self.rank)?..)?.get(..self.rank)
    }

    /// All columns, `v_i` at `i·r` (an `n × r` row-major matrix: `Vᵀ`).
    pub fn columns(&self) -> &'a [T] {
        self.columns
    }

    /// The rank `r`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of columns `n`.
    pub fn n(&self) -> usize {
        self.columns.len() / self.rank
    }

    /// The norm bound of the linear loss, `None` for the other losses.
    pub fn bound(&self) -> Option<T> {
        self.bound
    }
}
