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

use crate::{Error, Real};

use super::columns::Data;
use super::layout::{Indices, Parts};
use super::outcome::{Case, ExitReason, Step, Summary};
use super::solver::Engine;

/// Where the schedule is: drawing from the pool, or sweeping all candidates.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum Phase<T> {
    /// Uniform draws from the pool.
    Normal,
    /// The confirming sweep: next candidate, `F` when it started.
    Verify { cursor: usize, start: T },
}

impl<T: Real> Engine<T> {
    /// One step of Algorithm 1 on a coordinate drawn from the pool (or the next one of a
    /// confirming sweep), with the stopping rule's bookkeeping.
    pub fn step(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
    ) -> Result<Step<T>, Error> {
        if self.stale {
            self.refresh(parts, idx, data)?;
        }
        if let Phase::Normal = self.phase {
            if self.pool_len == 0 {
                self.start_sweep();
            }
        }
        let (j, slot) = match self.phase {
            Phase::Normal => {
                let slot = self.rng.below(self.pool_len);
                (idx.pool[slot], Some(slot))
            }
            Phase::Verify { cursor, .. } => (cursor, None),
        };
        let case = self.coordinate_step(parts, idx, data, j)?;
        self.record(case);
        match (self.phase, slot) {
            (Phase::Normal, Some(slot)) => {
                if self.params.shrinking() && case == Case::StayZero {
                    idx.pool.swap(slot, self.pool_len - 1);
                    self.pool_len -= 1;
                    self.stats.shrunk += 1;
                }
                if let Some(old) = self.push_history(parts.history) {
                    if old - self.objective <= self.params.epsilon() * old {
                        if self.pool_len < self.candidates {
                            self.start_sweep();
                        } else {
                            self.converged = true;
                        }
                    }
                }
            }
            (Phase::Verify { cursor, start }, _) => {
                if cursor + 1 < self.candidates {
                    self.phase = Phase::Verify { cursor: cursor + 1, start };
                } else {
                    self.converged = start - self.objective <= self.params.epsilon() * start;
                    self.phase = Phase::Normal;
                    self.reset_history();
                }
            }
            (Phase::Normal, None) => {}
        }
        Ok(Step { candidate: j, case, objective: self.objective, active: self.set.len })
    }

    fn start_sweep(&mut self) {
        self.pool_len = self.candidates;
        self.stats.sweeps += 1;
        self.phase = Phase::Verify { cursor: 0, start: self.objective };
    }

    fn record(&mut self, case: Case) {
        let s = &mut self.stats;
        s.steps += 1;
        match case {
            Case::StayZero => s.stay_zero += 1,
            Case::Change => s.change += 1,
            Case::Leave => s.leave += 1,
            Case::Enter => s.enter += 1,
            Case::Unchanged => s.unchanged += 1,
            Case::AtCapacity => s.at_capacity += 1,
            Case::IllConditioned => s.ill_conditioned += 1,
        }
    }

    /// Appends `F` to the ring; returns `F` of `lag` steps ago once there is one.
    fn push_history(&mut self, history: &mut [T]) -> Option<T> {
        let size = self.lag + 1;
        history[self.hist_pos] = self.objective;
        self.hist_pos = (self.hist_pos + 1) % size;
        self.hist_len = (self.hist_len + 1).min(size);
        (self.hist_len == size).then(|| history[self.hist_pos])
    }

    /// Empties the ring: the rule compares values of steps taken from now on (the current
    /// `F` may be stale after an arrival).
    fn reset_history(&mut self) {
        self.hist_len = 0;
        self.hist_pos = 0;
    }

    /// Back to a full pool, a fresh stopping history and not converged (after the
    /// samples or the weights changed from outside).
    pub fn reset_schedule(&mut self) {
        self.pool_len = self.candidates;
        self.phase = Phase::Normal;
        self.converged = false;
        self.reset_history();
    }

    /// Steps until the stopping rule holds or `max_steps` steps were taken.
    pub fn run(
        &mut self,
        parts: &mut Parts<'_, T>,
        idx: &mut Indices<'_>,
        data: &Data<'_, T>,
    ) -> Result<Summary<T>, Error> {
        let mut steps = 0;
        while !self.converged && steps < self.params.max_steps() {
            self.step(parts, idx, data)?;
            steps += 1;
        }
        Ok(Summary {
            reason: if self.converged { ExitReason::Converged } else { ExitReason::StepCap },
            steps,
            objective: self.objective,
            active: self.set.len,
        })
    }
}
