//! [`Sweep`]: passes over a sliding window that run across arrivals, and LIBLINEAR's
//! stopping rule applied to them.
//!
//! LIBLINEAR stops its dual coordinate descent when the spread of the projected gradients
//! seen during one pass over the data, `max PG − min PG`, is at most `ε` (Hsieh et al.
//! 2008, Sect. 3 and Algorithm 3; `ε = 0.1` by default). Here the data is a window that
//! changes by one sample per arrival, and the rule is applied to it after every arrival.
//! An arrival either [`perturb`](Sweep::perturb)s a converged window — adds a bound on how
//! far the arrival moved the projected gradients to the last pass's spread, and the window
//! stays converged while the sum is within `ε` (the bound is derived in the module
//! [`online`](super::online)) — or [`restart`](Sweep::restart)s the pass. A pass visits
//! the window's slots in a random order (`start + i·stride mod n` with `stride` coprime to
//! `n`: a permutation held in three integers, no memory per slot), pass after pass, until
//! one whole pass spreads by at most `ε` — or the caller's cap on steps ends it first, and
//! the window stays unconverged until a later arrival's passes complete. The spread is
//! taken over the projected gradients and 0 (their value at the optimum).
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

impl Sweep<()> {
    /// Machine words a [`Sweep`] holds (its pass's slots, start, stride and visits), for a
    /// caller counting the memory of many.
    pub const INDICES: usize = 4;
    /// Scalars a [`Sweep`] holds (the spreads of its pass and of the last).
    pub const SCALARS: usize = 3;
}

impl<T: Real> Sweep<T> {
    /// No pass yet: not converged.
    pub fn new() -> Self {
        Sweep { slots: 0, start: 0, stride: 1, visited: 0, pg_max: T::ZERO, pg_min: T::ZERO, last_spread: T::MAX }
    }

    /// Takes steps of the passes over `filled ≥ 1` slots — `step(slot)` takes one and
    /// returns its projected gradient — until `budget` steps are taken or, with
    /// `stop = Some(ε)`, until the stopping rule holds for `ε`; returns the steps taken.
    /// A pass ends with its last slot, and a step after it starts a new one. The slot
    /// advances by the stride, one remainder per run of a pass rather than per step.
    pub fn run(
        &mut self,
        filled: usize,
        budget: usize,
        stop: Option<T>,
        rng: &mut Rng,
        mut step: impl FnMut(usize) -> T,
    ) -> usize {
        let mut taken = 0;
        while taken < budget && !stop.is_some_and(|epsilon| self.converged(epsilon)) {
            if self.visited >= self.slots {
                self.start_pass(filled, rng);
            }
            let end = self.slots.min(self.visited + (budget - taken));
            taken += end - self.visited;
            let mut slot = (self.start + self.visited * self.stride) % self.slots;
            while self.visited < end {
                let pg = step(slot);
                self.pg_max = self.pg_max.max_of(pg);
                self.pg_min = if pg < self.pg_min { pg } else { self.pg_min };
                self.visited += 1;
                slot += self.stride;
                if slot >= self.slots {
                    slot -= self.slots;
                }
            }
            if self.visited == self.slots {
                self.last_spread = self.pg_max - self.pg_min;
            }
        }
        taken
    }

    /// The window changed: the next step starts a new pass, and the window is not
    /// converged until a pass completes.
    pub fn restart(&mut self) {
        self.visited = self.slots;
        self.last_spread = T::MAX;
    }

    /// The window changed outside a pass in a way that moved each projected gradient by at
    /// most `bound / 2`: the spread of the last completed pass grows by `bound` (a bound on
    /// the spread the window has now), and the next step starts a new pass. Once the
    /// bound passes `epsilon` the window needs a complete pass to converge again, as after
    /// [`restart`](Self::restart).
    pub fn perturb(&mut self, bound: T) {
        self.visited = self.slots;
        let spread = self.last_spread + bound;
        self.last_spread = if spread < T::MAX { spread } else { T::MAX };
    }

    /// The stopping rule: the last completed pass, started after the last
    /// [`restart`](Self::restart), spread by at most `epsilon`, plus what
    /// [`perturb`](Self::perturb) added since.
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
            for budget in [n, 1, n - 1, 2 * n, n] {
                let (mut order, mut steps) = (vec![], 0);
                // Continue the pass under way (if any) and one more whole pass after it.
                let rest = sweep.slots - sweep.visited;
                steps += sweep.run(n, rest + n, None, &mut rng, |slot| {
                    order.push(slot);
                    0.0
                });
                assert_eq!(steps, rest + n);
                let mut seen = vec![0; n];
                order[rest..].iter().for_each(|&slot| seen[slot] += 1);
                assert!(seen.iter().all(|&c| c == 1), "n = {n}: {seen:?}");
                assert!(sweep.is_valid(n));
                assert_eq!(sweep.run(n, budget, None, &mut rng, |_| 0.0), budget);
            }
        }
    }

    #[test]
    fn converged_needs_a_complete_pass_after_the_restart() {
        let mut rng = Rng::seed_from_u64(1);
        let mut sweep = Sweep::<f64>::new();
        assert!(!sweep.converged(0.1));
        let pass = |sweep: &mut Sweep<f64>, rng: &mut Rng, pgs: [f64; 3]| {
            let mut pgs = pgs.into_iter();
            for _ in 0..3 {
                assert!(!sweep.converged(0.1), "converged before the pass completed");
                sweep.run(3, 1, Some(0.1), rng, |_| pgs.next().unwrap());
            }
        };
        pass(&mut sweep, &mut rng, [0.05, -0.02, 0.0]);
        assert!((sweep.last_spread() - 0.07).abs() < 1e-15);
        assert!(sweep.converged(0.1));
        assert_eq!(sweep.run(3, 5, Some(0.1), &mut rng, |_| 1.0), 0, "converged: no step");
        sweep.restart();
        pass(&mut sweep, &mut rng, [0.5, 0.0, 0.0]);
        assert!(!sweep.converged(0.1), "the pass spreads by 0.5");
        pass(&mut sweep, &mut rng, [0.01, 0.0, 0.0]);
        assert!(sweep.converged(0.1));
        sweep.restart();
        let mut pgs = [0.3, 0.0, 0.0, 0.02, 0.0, 0.0, 5.0].into_iter();
        assert_eq!(sweep.run(3, 100, Some(0.1), &mut rng, |_| pgs.next().unwrap()), 6, "two passes");
    }

    #[test]
    fn perturbations_add_to_the_spread_until_a_pass_is_needed() {
        let mut rng = Rng::seed_from_u64(2);
        let mut sweep = Sweep::<f64>::new();
        sweep.perturb(0.01);
        assert!(!sweep.converged(0.1), "no pass yet: a perturbation does not converge it");
        let mut pgs = [0.02, -0.03, 0.0].into_iter();
        sweep.run(3, 3, None, &mut rng, |_| pgs.next().unwrap());
        sweep.run(3, 1, None, &mut rng, |_| 0.0); // a pass under way …
        sweep.perturb(0.04);
        assert!((sweep.last_spread() - 0.09).abs() < 1e-15 && sweep.converged(0.1));
        assert_eq!(sweep.visited, sweep.slots, "… is abandoned: the next step starts a new one");
        sweep.perturb(0.02);
        assert!(!sweep.converged(0.1), "0.11 > ε");
        sweep.perturb(f64::MAX);
        assert_eq!(sweep.last_spread(), f64::MAX);
        assert!(sweep.is_valid(3));
    }
}
