//! The schedule of the coordinate steps: uniform random draws (Algorithm 1), shrinking of
//! coordinates stuck at 0, confirming sweeps, and the stopping rule
//! `F(μ^{k−lag}) − F(μ^k) ≤ ε·F(μ^{k−lag})` kept over a ring of past objective values.
//!
//! **Shrinking** (Sect. 5.4's future work, after Hsieh et al. 2008): a coordinate that
//! stays at 0 leaves the pool drawn from (a swap with the pool's last entry, O(1)). When
//! the stopping rule holds on the pool, a sweep over all `M` candidates in index order
//! follows; it ends the run when `F` fell by at most `ε·F` over the sweep, otherwise the
//! pool is restored and the run resumes. Without shrinking the pool is all candidates and
//! the draws are the paper's.
//!
//! [`Schedule`] holds this state; the engine owns one, asks it for the next coordinate
//! ([`Schedule::next`]) and reports each step's outcome ([`Schedule::after_step`]). The
//! schedule sees only the pool, the history ring and the objective, never the solver.

use crate::{Real, Rng};

use super::outcome::{Case, Stats};
use super::params::ValidParams;

/// Where the schedule is: drawing from the pool, or sweeping all candidates.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Phase<T> {
    /// Uniform draws from the pool.
    Normal,
    /// The confirming sweep: next candidate, `F` when it started.
    Verify { cursor: usize, start: T },
}

/// The draws, the shrinking pool and the stopping rule's state.
#[derive(Clone, Debug)]
pub(crate) struct Schedule<T> {
    /// Live candidates `M'` (the pool's full size).
    candidates: usize,
    /// Whether coordinates stuck at 0 leave the pool.
    shrinking: bool,
    /// `ε` of the stopping rule.
    epsilon: T,
    /// Steps between the objective values the rule compares.
    pub lag: usize,
    pub rng: Rng,
    /// The pool drawn from is `pool[..pool_len]`.
    pub pool_len: usize,
    pub phase: Phase<T>,
    /// Values in the history ring, and where the next one goes.
    pub hist_len: usize,
    pub hist_pos: usize,
    /// The stopping rule held (or the confirming sweep ended the run).
    pub converged: bool,
}

impl<T: Real> Schedule<T> {
    /// A full pool over `candidates` coordinates, rule over `lag` steps, generator seeded
    /// from `params`.
    pub fn new(candidates: usize, lag: usize, params: &ValidParams<T>) -> Self {
        Schedule {
            candidates,
            shrinking: params.shrinking(),
            epsilon: params.epsilon(),
            lag,
            rng: Rng::seed_from_u64(params.seed()),
            pool_len: candidates,
            phase: Phase::Normal,
            hist_len: 0,
            hist_pos: 0,
            converged: false,
        }
    }

    /// The coordinate of the next step and, for a draw, its slot in the pool: a uniform
    /// draw from `pool[..pool_len]`, or the next one of a confirming sweep (which starts,
    /// at objective `objective`, when the pool is empty).
    pub fn next(&mut self, pool: &[usize], objective: T, stats: &mut Stats) -> (usize, Option<usize>) {
        if let Phase::Normal = self.phase
            && self.pool_len == 0
        {
            self.start_sweep(objective, stats);
        }
        match self.phase {
            Phase::Normal => {
                let slot = self.rng.below(self.pool_len);
                #[allow(clippy::indexing_slicing, reason = "slot < pool_len ≤ M = pool.len(), by Dims")]
                let j = pool[slot];
                (j, Some(slot))
            }
            Phase::Verify { cursor, .. } => (cursor, None),
        }
    }

    /// After a step on the coordinate [`next`](Self::next) gave (from `slot`) ended in
    /// `case` at objective `objective`: shrinks the pool, keeps the history ring, and
    /// applies the stopping rule or moves the confirming sweep on.
    pub fn after_step(
        &mut self,
        slot: Option<usize>,
        case: Case,
        objective: T,
        pool: &mut [usize],
        history: &mut [T],
        stats: &mut Stats,
    ) {
        match (self.phase, slot) {
            (Phase::Normal, Some(slot)) => {
                if self.shrinking && case == Case::StayZero {
                    pool.swap(slot, self.pool_len - 1);
                    self.pool_len -= 1;
                    stats.shrunk += 1;
                }
                if let Some(old) = self.push_history(history, objective)
                    && old - objective <= self.epsilon * old
                {
                    if self.pool_len < self.candidates {
                        self.start_sweep(objective, stats);
                    } else {
                        self.converged = true;
                    }
                }
            }
            (Phase::Verify { cursor, start }, _) => {
                if cursor + 1 < self.candidates {
                    self.phase = Phase::Verify { cursor: cursor + 1, start };
                } else {
                    self.converged = start - objective <= self.epsilon * start;
                    self.phase = Phase::Normal;
                    self.reset_history();
                }
            }
            (Phase::Normal, None) => {}
        }
    }

    fn start_sweep(&mut self, objective: T, stats: &mut Stats) {
        self.pool_len = self.candidates;
        stats.sweeps += 1;
        self.phase = Phase::Verify { cursor: 0, start: objective };
    }

    /// Appends `F` to the ring; returns `F` of `lag` steps ago once there is one.
    fn push_history(&mut self, history: &mut [T], objective: T) -> Option<T> {
        let size = self.lag + 1;
        // The ring is `history[..lag + 1]`, within its `M + 1` scalars since `lag ≤ M`.
        if let Some(slot) = history.get_mut(self.hist_pos) {
            *slot = objective;
        }
        self.hist_pos = (self.hist_pos + 1) % size;
        self.hist_len = (self.hist_len + 1).min(size);
        if self.hist_len == size { history.get(self.hist_pos).copied() } else { None }
    }

    /// Empties the ring: the rule compares values of steps taken from now on (the current
    /// `F` may be stale after an arrival).
    fn reset_history(&mut self) {
        self.hist_len = 0;
        self.hist_pos = 0;
    }

    /// Back to a full pool, a fresh stopping history and not converged (after the
    /// samples or the weights changed from outside).
    pub fn reset(&mut self) {
        self.pool_len = self.candidates;
        self.phase = Phase::Normal;
        self.converged = false;
        self.reset_history();
    }
}
