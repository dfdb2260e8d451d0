//! [`Sweep`]: passes over a sliding window that run across arrivals, and LIBLINEAR's
//! stopping rule applied to them.
//!
//! LIBLINEAR stops its dual coordinate descent when the spread of the projected gradients
//! seen during one pass over the data, `max PG − min PG`, is at most `ε` (Hsieh et al.
//! 2008, Sect. 3 and Algorithm 3; `ε = 0.1` by default). Here the data is a window that
//! changes by one sample per arrival, and the rule is applied to it after every arrival:
//! an arrival [`restart`](Sweep::restart)s the pass, which then visits the window's slots
//! in a random order (`start + i·stride mod n` with `stride` coprime to `n`: a permutation
//! held in three integers, no memory per slot), pass after pass, until one whole pass
//! spreads by at most `ε` — or the caller's cap on steps ends it first, and the window
//! stays unconverged until a later arrival's passes complete. The spread is taken over the
//! projected gradients and 0 (their value at the optimum). A converged arrival therefore
//! costs at least one pass, O(N·d).
//!
//! Cost: O(1) per step besides the step itself; memory: this `Copy` value.

use serde::{Deserialize, Serialize};

use crate::{Real, Rng};

/// A pass over `n` slots in the order `start + i·stride mod n`, with the projected
/// gradients' spread in it and in the pass before.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep<T> {
    /// Slots of the current pass (0 before the first).
    slots: usize,
    start: usize,
    stride: usize,
    /// Slots of the current pass visited.
    visited: usize,
    /// Largest and smallest projected gradient of the current pass, and 0 (the value every
    /// projected gradient has at the optimum, so that one step far from it counts).
    pg_max: T,
    pg_min: T,
    /// `max PG − min PG` of the last completed pass (`MAX` before one completes).
    last_spread: T,
}

impl<T: Real> Sweep<T> {
    /// No pass yet: not converged.
    pub fn new() -> Self {
        Sweep { slots: 0, start: 0, stride: 1, visited: 0, pg_max: T::ZERO, pg_min: T::ZERO, last_spread: T::MAX }
    }

    /// The slot to step next among `filled ≥ 1` slots, starting a new pass over them when
    /// the current one is complete.
    pub fn next_slot(&mut self, filled: usize, rng: &mut Rng) -> usize {
        if self.visited >= self.slots {
            self.start_pass(filled, rng);
        }
        let slot = (self.start + self.visited * self.stride) % self.slots;
        self.visited += 1;
        slot
    }

    /// Counts the projected gradient of the step on the slot [`next_slot`](Self::next_slot)
    /// gave; the pass ends with its last slot.
    pub fn record(&mut self, pg: T) {
        self.pg_max = self.pg_max.max_of(pg);
        self.pg_min = if pg < self.pg_min { pg } else { self.pg_min };
        if self.visited == self.slots {
            self.last_spread = self.pg_max - self.pg_min;
        }
    }

    /// The window changed: the next step starts a new pass, and the window is not
    /// converged until a pass completes.
    pub fn restart(&mut self) {
        self.visited = self.slots;
        self.last_spread = T::MAX;
    }

    /// The stopping rule: the last completed pass, started after the last
    /// [`restart`](Self::restart), spread by at most `epsilon`.
    pub fn converged(&self, epsilon: T) -> bool {
        self.last_spread <= epsilon
    }

    /// `max PG − min PG` of the last completed pass (`MAX` before one completes).
    pub fn last_spread(&self) -> T {
        self.last_spread
    }

    /// `true` when the fields describe a pass over at most `window` slots.
    pub(super) fn is_valid(&self, window: usize) -> bool {
        let pass = self.slots <= window
            && self.visited <= self.slots
            && (self.slots == 0 || (self.start < self.slots && self.stride >= 1 && self.stride <= self.slots));
        let spreads = self.pg_max >= T::ZERO && self.pg_min <= T::ZERO && self.last_spread >= T::ZERO;
        pass && spreads && (self.slots == 0 || gcd(self.stride, self.slots) == 1)
    }

    fn start_pass(&mut self, filled: usize, rng: &mut Rng) {
        self.slots = filled.max(1);
        self.start = rng.below(self.slots);
        let mut stride = 1 + rng.below(self.slots);
        while gcd(stride, self.slots) != 1 {
            stride = stride % self.slots + 1;
        }
        self.stride = stride;
        self.visited = 0;
        self.pg_max = T::ZERO;
        self.pg_min = T::ZERO;
    }
}

impl<T: Real> Default for Sweep<T> {
    fn default() -> Self {
        Self::new()
    }
}

fn gcd(mut a: usize, mut b: usize) -> usize {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use std::vec;

    use super::*;

    #[test]
    fn a_pass_visits_every_slot_once() {
        let mut rng = Rng::seed_from_u64(5);
        for n in [1, 2, 7, 12, 64, 97] {
            let mut sweep = Sweep::<f64>::new();
            for _ in 0..3 {
                let mut seen = vec![0; n];
                for _ in 0..n {
                    seen[sweep.next_slot(n, &mut rng)] += 1;
                    sweep.record(0.0);
                }
                assert!(seen.iter().all(|&c| c == 1), "n = {n}: {seen:?}");
                assert!(sweep.is_valid(n));
            }
        }
    }

    #[test]
    fn converged_needs_a_complete_pass_after_the_restart() {
        let mut rng = Rng::seed_from_u64(1);
        let mut sweep = Sweep::<f64>::new();
        assert!(!sweep.converged(0.1));
        let mut pass = |sweep: &mut Sweep<f64>, pgs: [f64; 3]| {
            for pg in pgs {
                assert!(!sweep.converged(0.1), "converged before the pass completed");
                sweep.next_slot(3, &mut rng);
                sweep.record(pg);
            }
        };
        pass(&mut sweep, [0.05, -0.02, 0.0]);
        assert!((sweep.last_spread() - 0.07).abs() < 1e-15);
        assert!(sweep.converged(0.1));
        sweep.restart();
        pass(&mut sweep, [0.5, 0.0, 0.0]);
        assert!(!sweep.converged(0.1), "the pass spreads by 0.5");
        pass(&mut sweep, [0.01, 0.0, 0.0]);
        assert!(sweep.converged(0.1));
    }
}
