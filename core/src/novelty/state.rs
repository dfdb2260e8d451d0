//! Saving and restoring a [`Detector`]: a checkpoint of a stream's novelty detector.
//!
//! A detector is three buffers — the centre of mass's scalars (centres, `K̃`, `g`, norms),
//! its counts `a`, the window's ring of centre indices — and a few small fields:
//! [`DetectorState`] gathers those for serde, [`Detector::storage`] lends the buffers.
//! [`Detector::from_state_in`] rebuilds the detector in any storage holding the saved
//! buffers after checking that state and buffers agree (so a corrupted checkpoint is an
//! error, never a panic later), and it continues bit for bit as the saved one would have.
//!
//! Cost: checking a state is `O(m·d + m² + N)` — every stored value and ring entry is
//! looked at once (the counts are checked against the ring by counting the ring down in
//! the counts' own buffer, then up again); no memory besides the buffers handed in.

use serde::{Deserialize, Serialize};

use super::mass::REFRESH;
use super::{CentreOfMass, Detector, DetectorParams, RecentQuantile};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// The small fields of a [`Detector`], everything but its buffers and configuration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DetectorState<T> {
    centres: usize,
    points: u64,
    constant: T,
    changes: u32,
    head: usize,
    filled: usize,
    threshold: RecentQuantile<T>,
}

impl<T: Real, S: Storage<T>, C: AsRef<[u32]> + AsMut<[u32]>, R: AsRef<[u32]> + AsMut<[u32]>> Detector<T, S, C, R> {
    /// The small fields to save beside [`storage`](Self::storage).
    pub fn state(&self) -> DetectorState<T> {
        let mass = &self.mass;
        DetectorState {
            centres: mass.m,
            points: mass.n,
            constant: mass.constant,
            changes: mass.changes,
            head: self.head,
            filled: self.filled,
            threshold: self.threshold,
        }
    }

    /// The buffers: the centre of mass's scalars ([`CentreOfMass::scalars_len`]), its
    /// counts (one per centre it can hold) and the window's ring.
    pub fn storage(&self) -> (&[T], &[u32], &[u32]) {
        let scalars = CentreOfMass::scalars_len(self.mass.capacity, self.mass.dim);
        let values = self.mass.scalars.as_ref().get(..scalars).unwrap_or_default();
        (values, self.mass.counts.as_ref(), self.ring.as_ref())
    }

    /// The detector [`state`](Self::state) and [`storage`](Self::storage) describe, in
    /// `scalars`, `counts` and `ring` (which hold the saved buffers), with the
    /// configuration of the saved one (`dim`, `kernel`, `normalised`, `params`).
    ///
    /// # Errors
    /// As [`CentreOfMass::new_in`] and [`Detector::new_in`] for the configuration;
    /// `InvalidParam` naming the first inconsistent field — `centres` (more than the
    /// counts hold), `counts` (a count past the centres, or counts that are not the ring's),
    /// `changes`, `head`, `filled`, `ring` (an entry past the centres), `norms`,
    /// `quantile` (another `q` or span, or an estimator `observe` cannot reach); `NonFinite` for
    /// NaN/∞ in a centre, `K̃`, `g` or the constant.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::{Kernel, novelty::{CentreOfMass, Detector, DetectorParams}};
    /// let (m, d, window, kernel) = (4, 1, 8, Kernel::rbf(1.0)?);
    /// let mass = CentreOfMass::new_in(vec![0.0; CentreOfMass::scalars_len(m, d)], vec![0u32; m], d, kernel, false)?;
    /// let mut a = Detector::new_in(mass, vec![0u32; window], DetectorParams::new())?;
    /// for x in [0.0, 0.5, 0.1, 2.0] {
    ///     a.learn(&[x])?;
    /// }
    /// let (scalars, counts, ring) = a.storage();
    /// let mut b = Detector::from_state_in(scalars.to_vec(), counts.to_vec(), ring.to_vec(), d, kernel, false,
    ///     DetectorParams::new(), a.state())?;
    /// assert_eq!(a.learn(&[0.3])?, b.learn(&[0.3])?);
    /// assert_eq!(a.storage(), b.storage());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments, reason = "three buffers and the saved detector's configuration")]
    pub fn from_state_in(
        scalars: S,
        mut counts: C,
        mut ring: R,
        dim: usize,
        kernel: Kernel<T>,
        normalised: bool,
        params: DetectorParams<T>,
        state: DetectorState<T>,
    ) -> Result<Self, Error> {
        let (threshold, delta2) = super::detector::checked(params)?;
        let invalid = |name| Err(Error::InvalidParam { name });
        let same = state.threshold.q() == threshold.q() && state.threshold.span() == threshold.span();
        if !state.threshold.is_consistent() || !same {
            return invalid("quantile");
        }
        if dim == 0 {
            return invalid("dim");
        }
        let capacity = counts.as_ref().len();
        if capacity == 0 {
            return invalid("capacity");
        }
        check_capacity(CentreOfMass::scalars_len(capacity, dim), scalars.as_ref().len())?;
        if state.centres > capacity {
            return invalid("centres");
        }
        if state.changes >= REFRESH {
            return invalid("changes");
        }
        check_finite(&[state.constant])?;
        check_values(scalars.as_ref(), capacity, dim, state.centres, normalised)?;
        check_window(counts.as_mut(), ring.as_mut(), &state)?;
        let mass = CentreOfMass {
            scalars,
            counts,
            dim,
            capacity,
            m: state.centres,
            kernel,
            normalised,
            n: state.points,
            constant: state.constant,
            changes: state.changes,
        };
        let (head, filled, threshold, warmup) = (state.head, state.filled, state.threshold, params.warmup);
        Ok(Detector { mass, ring, head, filled, threshold, delta2, warmup })
    }

    /// `Ok` when [`from_state_in`](Self::from_state_in) takes this detector's own
    /// [`state`](Self::state) and [`storage`](Self::storage) back: its stored values
    /// finite (the norms positive) and its threshold's estimators consistent, which a
    /// detector fed values near `T`'s range may no longer have; a caller checks before it
    /// replaces a good checkpoint with one that would not restore (the window's ring and
    /// counts a detector keeps consistent by construction). O(m·d + m²).
    ///
    /// # Errors
    /// As [`from_state_in`](Self::from_state_in) for the stored values.
    pub fn check_restorable(&self) -> Result<(), Error> {
        let mass = &self.mass;
        if !self.threshold.is_consistent() {
            return Err(Error::InvalidParam { name: "quantile" });
        }
        check_finite(&[mass.constant])?;
        check_values(mass.scalars.as_ref(), mass.capacity, mass.dim, mass.m, mass.normalised)
    }
}

/// The values in use among `scalars` (`capacity` centres of `dim` features, `m` taken):
/// the centres, `K̃`'s `m × m` block, `g` finite; the norms finite and positive.
fn check_values<T: Real>(scalars: &[T], capacity: usize, dim: usize, m: usize, normalised: bool) -> Result<(), Error> {
    let (centres, rest) = scalars.split_at(capacity * dim);
    let (gram, rest) = rest.split_at(capacity * capacity);
    let (g, norms) = rest.split_at(capacity);
    check_finite(centres.get(..m * dim).unwrap_or_default())?;
    for row in gram.chunks_exact(capacity).take(m) {
        check_finite(row.get(..m).unwrap_or_default())?;
    }
    check_finite(g.get(..m).unwrap_or_default())?;
    let norms = norms.get(..m).unwrap_or_default();
    let positive = norms.iter().all(|&v| v > T::ZERO && v.is_finite() && (normalised || v == T::ONE));
    if positive { Ok(()) } else { Err(Error::InvalidParam { name: "norms" }) }
}

/// The window's ring against the counts: `filled` slots in use (all of them once full,
/// else the first `filled`, the head at the next), each naming a centre below `m`, the
/// counts of those names being exactly `counts` (none past `m`), and `n = filled`.
fn check_window<T>(counts: &mut [u32], ring: &mut [u32], state: &DetectorState<T>) -> Result<(), Error> {
    let invalid = |name| Err(Error::InvalidParam { name });
    let window = ring.len();
    if window == 0 {
        return invalid("window");
    }
    if state.filled > window || u64::try_from(state.filled).ok() != Some(state.points) {
        return invalid("filled");
    }
    if state.head >= window || (state.filled < window && state.head != state.filled) {
        return invalid("head");
    }
    let used = ring.get(..state.filled).unwrap_or_default();
    if used.iter().any(|&j| j as usize >= state.centres) {
        return invalid("ring");
    }
    // Count the ring down in the counts: all of them reach 0 exactly when they are the
    // ring's; then count it up again.
    let mut matched = true;
    for &j in used {
        match counts.get_mut(j as usize) {
            Some(count) if *count > 0 => *count -= 1,
            _ => matched = false,
        }
    }
    matched &= counts.iter().all(|&count| count == 0);
    if !matched {
        return invalid("counts");
    }
    for &j in used {
        if let Some(count) = counts.get_mut(j as usize) {
            *count += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Rng;

    type Vecs<T> = Detector<T, Vec<T>, Vec<u32>, Vec<u32>>;

    const DIM: usize = 3;

    fn kernel<T: Real>() -> Kernel<T> {
        Kernel::rbf(T::from_f64(0.5)).unwrap()
    }

    fn params<T: Real>() -> DetectorParams<T> {
        DetectorParams { quantile: 0.9, delta: T::from_f64(0.4), warmup: 8, span: 100 }
    }

    fn detector<T: Real>(m: usize, window: usize) -> Vecs<T> {
        let mass =
            CentreOfMass::new_in(vec![T::ZERO; CentreOfMass::scalars_len(m, DIM)], vec![0; m], DIM, kernel(), false);
        Detector::new_in(mass.unwrap(), vec![0; window], params()).unwrap()
    }

    fn restored<T: Real>(a: &Vecs<T>, state: DetectorState<T>) -> Result<Vecs<T>, Error> {
        let (scalars, counts, ring) = a.storage();
        Detector::from_state_in(scalars.to_vec(), counts.to_vec(), ring.to_vec(), DIM, kernel(), false, params(), state)
    }

    fn points<T: Real>(n: usize, seed: u64) -> Vec<Vec<T>> {
        let mut rng = Rng::seed_from_u64(seed);
        (0..n).map(|_| (0..DIM).map(|_| T::from_f64(rng.normal::<f64>())).collect()).collect()
    }

    /// Saved at every stage (empty, filling, full and past a refresh of `A` and `g`), a
    /// detector restored from its state continues bit for bit.
    fn restored_detectors_continue<T: Real>() {
        let stream = points::<T>(1400, 3);
        for split in [0, 5, 40, 1100] {
            let mut a = detector::<T>(12, 30);
            for x in &stream[..split] {
                a.learn(x).unwrap();
            }
            let mut b = restored(&a, a.state()).unwrap();
            for x in &stream[split..split + 200] {
                assert_eq!(a.learn(x).unwrap(), b.learn(x).unwrap());
                assert_eq!(a.score(x).unwrap(), b.score(x).unwrap());
            }
            assert_eq!((a.storage(), a.state()), (b.storage(), b.state()), "split {split}");
        }
    }

    /// Inconsistent states and buffers are refused, naming what is wrong.
    fn inconsistent_states_are_refused<T: Real>() {
        let mut a = detector::<T>(6, 10);
        for x in &points::<T>(25, 4) {
            a.learn(x).unwrap();
        }
        let state = a.state();
        let mut live = a.clone();
        assert_eq!(live.check_restorable(), Ok(()));
        live.mass.constant = T::from_f64(f64::INFINITY);
        assert_eq!(live.check_restorable(), Err(Error::NonFinite));
        let refused = |state: DetectorState<T>| restored(&a, state).err();
        let name = |name| Some(Error::InvalidParam { name });
        assert_eq!(refused(DetectorState { centres: 7, ..state }), name("centres"));
        assert_eq!(refused(DetectorState { centres: 0, ..state }), name("ring"));
        assert_eq!(refused(DetectorState { changes: REFRESH, ..state }), name("changes"));
        assert_eq!(refused(DetectorState { head: 10, ..state }), name("head"));
        assert_eq!(refused(DetectorState { filled: 9, points: 9, ..state }), name("head"));
        assert_eq!(refused(DetectorState { points: 11, ..state }), name("filled"));
        assert_eq!(refused(DetectorState { constant: T::from_f64(f64::NAN), ..state }), Some(Error::NonFinite));
        let (scalars, counts, ring) = a.storage();
        let with = |scalars: Vec<T>, counts: Vec<u32>, ring: Vec<u32>| {
            Detector::from_state_in(scalars, counts, ring, DIM, kernel(), false, params(), state).err()
        };
        let mut moved = counts.to_vec();
        let j = moved.iter().position(|&c| c > 0).unwrap();
        moved[j] -= 1;
        let next = (j + 1) % moved.len();
        moved[next] += 1;
        assert_eq!(with(scalars.to_vec(), moved, ring.to_vec()), name("counts"));
        let mut past = ring.to_vec();
        past[0] = 6;
        assert_eq!(with(scalars.to_vec(), counts.to_vec(), past), name("ring"));
        let mut nan = scalars.to_vec();
        nan[0] = T::from_f64(f64::NAN);
        assert_eq!(with(nan, counts.to_vec(), ring.to_vec()), Some(Error::NonFinite));
        let short = scalars[..scalars.len() - 1].to_vec();
        assert!(matches!(with(short, counts.to_vec(), ring.to_vec()), Some(Error::CapacityExceeded { .. })));
        let other = DetectorParams { quantile: 0.5, ..params() };
        let (scalars, counts, ring) = (scalars.to_vec(), counts.to_vec(), ring.to_vec());
        let e =
            Detector::from_state_in(scalars.clone(), counts.clone(), ring.clone(), DIM, kernel(), false, other, state);
        assert_eq!(e.err(), name("quantile"));
        let other = DetectorParams { span: 50, ..params() };
        let e = Detector::from_state_in(scalars, counts, ring, DIM, kernel(), false, other, state).err();
        assert_eq!(e, name("quantile"));
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn restored_detectors_continue() {
                    super::restored_detectors_continue::<$scalar>();
                }
                #[test]
                fn inconsistent_states_are_refused() {
                    super::inconsistent_states_are_refused::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
