//! Saving and restoring a [`SlklWindow`]: a checkpoint of a stream.
//!
//! A window learner is its two buffers (factor, columns, caches, weights, centres, the
//! window's samples; active set, positions, pool) and a few dozen small fields: the
//! window's head and length, the lazily kept target mean, the engine's caches flags,
//! objective, counters, random generator, shrinking pool size, stopping-rule phase and
//! history ring. [`SlklWindowState`] gathers the small fields in a `Copy` value serde can
//! write; [`SlklWindow::storage`] lends the buffers. [`SlklWindow::from_state_in`]
//! rebuilds the learner in any storage holding the saved buffers, after checking that
//! state and buffers agree (so a corrupted checkpoint is an error, not a panic later),
//! and it continues bit for bit as the saved learner would have.
//!
//! Cost: checking a state is O(N·d + M·d + m0 + M) — every stored sample, centre and
//! index is looked at once; no memory besides the buffers handed in.

use serde::{Deserialize, Serialize};

use crate::linalg::packed_len;
use crate::real::check_finite;
use crate::storage::Storage;
use crate::{Error, Real, Rng};

use super::active_set::ActiveSet;
use super::layout::{Dims, NONE};
use super::learner::check_targets;
use super::outcome::Stats;
use super::params::ValidParams;
use super::schedule::Phase;
use super::solver::Engine;
use super::window::{SlklWindow, split};

/// The small fields of a [`SlklWindow`], everything but its buffers and parameters.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SlklWindowState<T> {
    dims: Dims,
    len: usize,
    head: usize,
    mean: T,
    mean_stale: bool,
    engine: EngineState<T>,
}

/// The engine's fields besides its parameters (which are configuration) and its column
/// geometry (which follows from [`Dims`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct EngineState<T> {
    set: ActiveSet,
    candidates: usize,
    objective: T,
    yy: T,
    reference: T,
    running: usize,
    stale: bool,
    stale_r: bool,
    stale_cty: bool,
    converged: bool,
    stats: Stats,
    rng: [u64; 4],
    pool_len: usize,
    phase: Phase<T>,
    lag: usize,
    hist_len: usize,
    hist_pos: usize,
}

impl<T> SlklWindowState<T> {
    /// The capacities of the saved learner (and so the buffer lengths it needs).
    pub fn dims(&self) -> Dims {
        self.dims
    }

    /// Samples in the window.
    pub fn samples(&self) -> usize {
        self.len
    }
}

impl<T: Real, S: Storage<T>, I: Storage<usize>> SlklWindow<T, S, I> {
    /// The small fields to save beside [`storage`](Self::storage).
    pub fn state(&self) -> SlklWindowState<T> {
        let e = &self.engine;
        let engine = EngineState {
            set: e.set,
            candidates: e.candidates,
            objective: e.objective,
            yy: e.yy,
            reference: e.reference,
            running: e.running,
            stale: e.stale,
            stale_r: e.stale_r,
            stale_cty: e.stale_cty,
            converged: e.schedule.converged,
            stats: e.stats,
            rng: e.schedule.rng.state(),
            pool_len: e.schedule.pool_len,
            phase: e.schedule.phase,
            lag: e.schedule.lag,
            hist_len: e.schedule.hist_len,
            hist_pos: e.schedule.hist_pos,
        };
        let (dims, len, head, mean, mean_stale) = (self.dims, self.len, self.head, self.mean, self.mean_stale);
        SlklWindowState { dims, len, head, mean, mean_stale, engine }
    }

    /// The buffers in use: [`SlklWindow::scalars_len`] scalars and
    /// [`SlklWindow::indices_len`] indices.
    pub fn storage(&self) -> (&[T], &[usize]) {
        let scalars = self.scalars.as_ref().get(..self.dims.window_scalars()).unwrap_or_default();
        (scalars, self.indices.as_ref().get(..self.dims.indices()).unwrap_or_default())
    }

    /// The learner [`state`](Self::state) and [`storage`](Self::storage) describe, working
    /// in `scalars` and `indices` (which hold the saved buffers), with `params` (those of
    /// the saved learner: they are configuration, not state).
    ///
    /// # Errors
    /// As [`Dims`]' checks in [`new_in`](Self::new_in) for zero capacities and short
    /// buffers; `InvalidParam` naming the first inconsistent field — `len`, `head`,
    /// `candidates`, `lag`, `max_active`, `active` (an active set that is not a bijection
    /// between factor positions and candidates), `mu` (a weight that is not positive
    /// exactly on the active set), `pool`, `history`, `phase`, `running` (more arrivals
    /// in the running sums than the window holds), or `state` (the random
    /// generator's); `NotPositiveDefinite` for a factor whose diagonal is not positive;
    /// `NonFinite` for NaN/∞ in a sample, a centre or a cached value (the objective and
    /// a sweep's starting objective excepted: a learner can reach an infinite one).
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::slkl::{Dims, Params, SlklWindow};
    /// let dims = Dims::new(8, 1, 4, 4);
    /// let params = Params::new().check()?;
    /// let centres = [0.0, 1.0, 2.0, 3.0];
    /// let mut a = SlklWindow::new_in(vec![0.0; SlklWindow::scalars_len(dims)], vec![0; SlklWindow::indices_len(dims)],
    ///     dims, params, &centres)?;
    /// a.push(&[0.5], 1.0)?;
    /// let (scalars, indices) = a.storage();
    /// let mut b = SlklWindow::from_state_in(scalars.to_vec(), indices.to_vec(), params, a.state())?;
    /// for learner in [&mut a, &mut b] {
    ///     learner.push(&[1.5], 2.0)?;
    ///     learner.step()?;
    /// }
    /// assert_eq!(a.storage(), b.storage());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn from_state_in(
        mut scalars: S,
        mut indices: I,
        params: ValidParams<T>,
        state: SlklWindowState<T>,
    ) -> Result<Self, Error> {
        let mut engine = check_saved(&state, params, scalars.as_mut(), indices.as_mut())?;
        let SlklWindowState { dims, len, head, mean, mean_stale, engine: saved } = state;
        engine.set = saved.set;
        engine.objective = saved.objective;
        engine.yy = saved.yy;
        engine.reference = saved.reference;
        engine.running = saved.running;
        engine.stale = saved.stale;
        engine.stale_r = saved.stale_r;
        engine.stale_cty = saved.stale_cty;
        engine.schedule.converged = saved.converged;
        engine.stats = saved.stats;
        engine.schedule.pool_len = saved.pool_len;
        engine.schedule.phase = saved.phase;
        engine.schedule.hist_len = saved.hist_len;
        engine.schedule.hist_pos = saved.hist_pos;
        Ok(SlklWindow { scalars, indices, dims, engine, len, head, mean, mean_stale })
    }

    /// `Ok` when [`from_state_in`](Self::from_state_in) takes this learner's own
    /// [`state`](Self::state) and [`storage`](Self::storage) back — not so after its
    /// numerics broke down at extreme scales (a factor no longer positive definite, a
    /// cached sum that overflowed), which a caller checks before it replaces a good
    /// checkpoint with one that would not restore. O(N·d + M·d + m0 + M).
    ///
    /// # Errors
    /// As [`from_state_in`](Self::from_state_in).
    pub fn check_restorable(&mut self) -> Result<(), Error> {
        let (state, params) = (self.state(), self.engine.params);
        check_saved(&state, params, self.scalars.as_mut(), self.indices.as_mut()).map(|_| ())
    }
}

/// Every check of [`SlklWindow::from_state_in`] of `state` over the buffers; the fresh
/// engine of its configuration with the saved random generator, to restore the other
/// saved fields into.
fn check_saved<T: Real>(
    state: &SlklWindowState<T>,
    params: ValidParams<T>,
    scalars: &mut [T],
    indices: &mut [usize],
) -> Result<Engine<T>, Error> {
    let SlklWindowState { dims, len, head, mean, engine: ref saved, .. } = *state;
    dims.check(scalars.len(), dims.window_scalars(), indices.len())?;
    let invalid = |name| Err(Error::InvalidParam { name });
    if len > dims.rows() {
        return invalid("len");
    }
    // A window that is not full has never evicted: its oldest sample is in slot 0.
    if head >= dims.rows() || (len < dims.rows() && head != 0) {
        return invalid("head");
    }
    if saved.candidates == 0 || saved.candidates > dims.candidates() {
        return invalid("candidates");
    }
    let mut engine = Engine::new(&dims, params, saved.candidates)?;
    check_engine(saved, &engine)?;
    // The objective is not checked: sums that overflowed (features near `T`'s range
    // under a linear kernel) give a learner an infinite objective, which it carries on
    // with (its stopping rule then waits for the cap), and a checkpoint restores what the
    // learner held. It is a number the rule compares, never an index.
    check_finite(&[mean, saved.yy, saved.reference])?;
    if saved.running > dims.rows() {
        return invalid("running");
    }
    engine.schedule.rng = Rng::from_state(saved.rng)?;
    check_buffers(&dims, scalars, indices, saved, len)?;
    Ok(engine)
}

/// The saved engine's small fields against a fresh engine of the same configuration.
fn check_engine<T: Real>(saved: &EngineState<T>, fresh: &Engine<T>) -> Result<(), Error> {
    let invalid = |name| Err(Error::InvalidParam { name });
    if saved.lag != fresh.schedule.lag {
        return invalid("lag");
    }
    if saved.set.capacity != fresh.set.capacity {
        return invalid("max_active");
    }
    if saved.set.len > saved.set.capacity {
        return invalid("active");
    }
    if saved.pool_len > saved.candidates {
        return invalid("pool");
    }
    let ring = saved.lag + 1;
    if saved.hist_len > ring || saved.hist_pos >= ring {
        return invalid("history");
    }
    match saved.phase {
        Phase::Normal => Ok(()),
        Phase::Verify { cursor, .. } if cursor < saved.candidates => Ok(()),
        Phase::Verify { .. } => invalid("phase"),
    }
}

/// The buffers against the saved fields: samples and centres finite, the active set a
/// bijection with positive weights exactly on it, its factor's diagonal positive, the pool
/// within the live candidates.
fn check_buffers<T: Real>(
    dims: &Dims,
    scalars: &mut [T],
    indices: &mut [usize],
    saved: &EngineState<T>,
    len: usize,
) -> Result<(), Error> {
    let invalid = |name| Err(Error::InvalidParam { name });
    let (m0, candidates, d) = (saved.set.len, saved.candidates, dims.dim());
    let (parts, idx, xs, ys) = split(dims, scalars, indices);
    // Slots fill in order and stay filled, so the live ones are the first `len`. The
    // lengths were checked against `dims` before; a short part is an invalid state anyway.
    fn prefix<'a, T>(values: &'a [T], n: usize, name: &'static str) -> Result<&'a [T], Error> {
        values.get(..n).ok_or(Error::InvalidParam { name })
    }
    check_finite(prefix(xs, len.saturating_mul(d), "len")?)?;
    check_targets(prefix(ys, len, "len")?, dims.rows())?;
    check_finite(prefix(parts.centres, candidates.saturating_mul(d), "candidates")?)?;
    check_finite(prefix(parts.cty, m0, "active")?)?;
    check_finite(prefix(parts.col_sums, m0, "active")?)?;
    let active = idx.active.get(..m0).ok_or(Error::InvalidParam { name: "active" })?;
    for (p, &j) in active.iter().enumerate() {
        if j >= candidates || idx.position.get(j) != Some(&p) {
            return invalid("active");
        }
    }
    for (j, &p) in idx.position.iter().enumerate() {
        let consistent = p == NONE || active.get(p) == Some(&j);
        if !consistent {
            return invalid("active");
        }
        let mu = *parts.mu.get(j).ok_or(Error::InvalidParam { name: "mu" })?;
        check_finite(&[mu])?;
        if (p != NONE) != (mu > T::ZERO) || mu < T::ZERO {
            return invalid("mu");
        }
    }
    let pool = idx.pool.get(..candidates).ok_or(Error::InvalidParam { name: "pool" })?;
    if pool.iter().any(|&j| j >= candidates) {
        return invalid("pool");
    }
    for i in 0..m0 {
        let diagonal = parts.factor.get(packed_len(i) + i).copied().ok_or(Error::NotPositiveDefinite { pivot: i })?;
        if !(diagonal > T::ZERO && diagonal.is_finite()) {
            return Err(Error::NotPositiveDefinite { pivot: i });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Kernel;
    use crate::slkl::Params;

    type VecWindow<T> = SlklWindow<T, Vec<T>, Vec<usize>>;

    fn params<T: Real>() -> ValidParams<T> {
        Params::new().kernel(Kernel::rbf(T::from_f64(2.0)).unwrap()).nu(T::from_f64(1e-3)).seed(5).check().unwrap()
    }

    /// A window of 12 over 6 centres on [−2, 2], fed `n` samples of sin(2x) with two
    /// steps each.
    fn fed<T: Real>(dims: Dims, n: usize) -> VecWindow<T> {
        let centres: Vec<T> = (0..6).map(|i| T::from_f64(-2.0 + 0.8 * i as f64)).collect();
        let mut w =
            SlklWindow::new_in(vec![T::ZERO; dims.window_scalars()], vec![0; dims.indices()], dims, params(), &centres)
                .unwrap();
        for t in 0..n {
            feed(&mut w, t);
        }
        w
    }

    fn feed<T: Real>(w: &mut VecWindow<T>, t: usize) {
        let x = T::from_f64(-2.0 + 4.0 * ((t * 7) % 23) as f64 / 23.0);
        w.push(&[x], T::from_f64((2.0 * x.to_f64()).sin())).unwrap();
        w.step().unwrap();
        w.step().unwrap();
    }

    fn bits<T: Real>(w: &VecWindow<T>) -> (Vec<u64>, Vec<usize>) {
        let (scalars, indices) = w.storage();
        (scalars.iter().map(|v| v.to_f64().to_bits()).collect(), indices.to_vec())
    }

    /// Saved at any point — window filling or full, caches stale or fresh, in the middle
    /// of a confirming sweep — a restored learner continues with the original's bits.
    fn restored_window_continues_bit_for_bit<T: Real>() {
        for dims in [Dims::new(12, 1, 6, 4), Dims::new(12, 1, 6, 6).precomputed()] {
            for n in [0, 5, 12, 31] {
                let mut w = fed::<T>(dims, n);
                let state = w.state();
                let mut bytes = [0u8; 512];
                let encoded = postcard::to_slice(&state, &mut bytes).unwrap();
                assert_eq!(postcard::from_bytes::<SlklWindowState<T>>(encoded).unwrap(), state);
                assert_eq!((state.dims(), state.samples()), (dims, n.min(12)));
                let (scalars, indices) = w.storage();
                let mut copy = SlklWindow::from_state_in(scalars.to_vec(), indices.to_vec(), params(), state).unwrap();
                for t in n..n + 40 {
                    feed(&mut w, t);
                    feed(&mut copy, t);
                }
                assert_eq!(bits(&w), bits(&copy));
                assert_eq!(w.state(), copy.state());
                assert_eq!(w.predict(&[T::from_f64(0.3)]).unwrap(), copy.predict(&[T::from_f64(0.3)]).unwrap());
            }
        }
    }

    /// Inconsistent states and buffers are errors, never panics.
    fn inconsistent_states_are_rejected<T: Real>() {
        let dims = Dims::new(12, 1, 6, 4);
        let w = fed::<T>(dims, 20);
        assert!(w.active_len() > 0, "the test needs an active set");
        let state = w.state();
        let (scalars, indices) = w.storage();
        let (scalars, indices) = (scalars.to_vec(), indices.to_vec());
        let restore = |s: Vec<T>, i: Vec<usize>, state| SlklWindow::from_state_in(s, i, params(), state).err();
        let with = |f: &dyn Fn(&mut SlklWindowState<T>)| {
            let mut s = state;
            f(&mut s);
            s
        };
        let name = |name| Some(Error::InvalidParam { name });
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.len = 13)), name("len"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.head = 12)), name("head"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.candidates = 7)), name("candidates"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.lag = 2)), name("lag"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.set.len = 5)), name("active"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.pool_len = 7)), name("pool"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.hist_pos = 7)), name("history"));
        let sweep = with(&|s| s.engine.phase = Phase::Verify { cursor: 6, start: T::ONE });
        assert_eq!(restore(scalars.clone(), indices.clone(), sweep), name("phase"));
        assert_eq!(restore(scalars.clone(), indices.clone(), with(&|s| s.engine.rng = [0; 4])), name("state"));
        let nan = with(&|s| s.mean = T::from_f64(f64::NAN));
        assert_eq!(restore(scalars.clone(), indices.clone(), nan), Some(Error::NonFinite));
        // An objective that overflowed is a state a learner reaches, and restores.
        let overflowed = with(&|s| {
            s.engine.objective = T::from_f64(f64::INFINITY);
            s.engine.phase = Phase::Verify { cursor: 2, start: T::from_f64(f64::INFINITY) };
        });
        assert!(restore(scalars.clone(), indices.clone(), overflowed).is_none());
        let short = scalars[..10].to_vec();
        assert!(matches!(restore(short, indices.clone(), state), Some(Error::CapacityExceeded { .. })));
        // Buffers: an active index out of range, a weight off the active set, a broken
        // factor, a pool entry past the candidates, a NaN sample.
        let mut bad = indices.clone();
        bad[0] = 6;
        assert_eq!(restore(scalars.clone(), bad, state), name("active"));
        let mu = dims.region(crate::slkl::layout::Region::Mu).start;
        let inactive = (0..6).find(|&j| !w.active().contains(&j)).unwrap();
        let mut bad = scalars.clone();
        bad[mu + inactive] = T::ONE;
        assert_eq!(restore(bad, indices.clone(), state), name("mu"));
        let mut bad = scalars.clone();
        bad[0] = -T::ONE;
        assert_eq!(restore(bad, indices.clone(), state), Some(Error::NotPositiveDefinite { pivot: 0 }));
        let mut bad = indices.clone();
        bad[4 + 6] = 9;
        assert_eq!(restore(scalars.clone(), bad, state), name("pool"));
        let mut bad = scalars.clone();
        bad[dims.batch_scalars()] = T::from_f64(f64::INFINITY);
        assert_eq!(restore(bad, indices.clone(), state), Some(Error::NonFinite));
        assert!(restore(scalars, indices, state).is_none());
        // The live learner answers the same checks of its own state, and is not changed.
        let mut live = fed::<T>(dims, 20);
        assert_eq!(live.check_restorable(), Ok(()));
        live.scalars[0] = -T::ONE;
        assert_eq!(live.check_restorable(), Err(Error::NotPositiveDefinite { pivot: 0 }));
        assert_eq!(live.scalars[0], -T::ONE);
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn restored_window_continues_bit_for_bit() {
                    super::restored_window_continues_bit_for_bit::<$scalar>();
                }
                #[test]
                fn inconsistent_states_are_rejected() {
                    super::inconsistent_states_are_rejected::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
