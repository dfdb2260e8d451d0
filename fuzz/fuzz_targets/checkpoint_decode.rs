//! The checkpoint decoder of `kestrel stream --resume` on arbitrary bytes, and the online
//! learners' `restore_state` on what it decodes.
//!
//! The input is tried as a whole checkpoint file (`Checkpoint::from_bytes`: length, magic,
//! version, checksum) and, after its first byte `mode`, as a payload: with bit 7 of `mode`
//! clear, wrapped in a valid frame (header and CRC-32) so that the postcard decoder is
//! reached; with it set, as a learner state directly. A decoded checkpoint must re-encode
//! to the same bytes after one round, and its `learner` bytes go to `restore_state` of each
//! online learner (`WindowSvm`, `WindowSlkl`, `WindowRsvm`, `WindowNovelty`; f32 and f64;
//! window 8, 2 features, 4 centres, 2 steps per sample, 3 classes at most, a novelty
//! warm-up of 4 — the flags the seeds were written with), each
//! first fed `mode & 31` samples of a fixed stream so that a restore replaces a learner
//! that is warming up or learning; with bit 6 of `mode` set, the learners standardise
//! their features (`kestrel stream`'s default), with it clear they do not (`--no-scale`).
//!
//! Checks: no panic, no allocation over the rss limit; a rejected restore leaves the
//! learner's `save_state()` bytes unchanged; an accepted one round-trips (`save_state` →
//! restore into a fresh learner → the same bytes), and the two copies then stay equal
//! through the same predict/learn calls; a rejected `learn` changes nothing; a model the
//! restored learner encodes loads with `model::load`.

#![no_main]

use kestrel_core::{Kernel, Real, dcd, slkl};
use kestrel_stream::checkpoint::Checkpoint;
use kestrel_stream::model;
use kestrel_stream::online::{
    Learn, NoveltySettings, OnlineLearner, RsvmSettings, WindowNovelty, WindowRsvm, WindowSlkl, WindowSvm,
};
use kestrel_stream::source::Record;
use libfuzzer_sys::fuzz_target;

mod common;

/// The configuration of every learner (`kestrel stream --window 8 --centers 4
/// --steps-per-sample 2 --classes 3` with the other flags at their defaults — a memory of
/// 2000 arrivals, renewed centres — on 2 features).
const WINDOW: usize = 8;
const DIM: usize = 2;
const CENTRES: usize = 4;
const STEPS: usize = 2;
const CLASSES: usize = 3;
/// The novelty detector's warm-up (`--warmup 4`).
const WARMUP: usize = 4;

fuzz_target!(|data: &[u8]| {
    let mode = data.first().copied().unwrap_or(0);
    if let Ok(checkpoint) = Checkpoint::from_bytes(data) {
        check_checkpoint(&checkpoint, mode);
    }
    let Some((&mode, payload)) = data.split_first() else { return };
    if mode & 0x80 == 0 {
        if let Ok(checkpoint) = Checkpoint::from_bytes(&common::checkpoint_frame(payload)) {
            check_checkpoint(&checkpoint, mode);
        }
    } else {
        restore_everywhere(payload, mode);
    }
});

fn check_checkpoint(checkpoint: &Checkpoint, mode: u8) {
    let bytes = checkpoint.to_bytes().expect("a decoded checkpoint encodes");
    let again = Checkpoint::from_bytes(&bytes).expect("an encoded checkpoint decodes");
    assert_eq!(again.to_bytes().expect("encodes"), bytes, "checkpoint encode/decode is not a fixed point");
    assert_eq!(checkpoint.config.difference(&checkpoint.config), None);
    let _ = (checkpoint.metrics.accuracy(), checkpoint.metrics.mse());
    restore_everywhere(&checkpoint.learner, mode);
}

fn restore_everywhere(state: &[u8], mode: u8) {
    let (fed, scale) = (usize::from(mode & 31), mode & 0x40 != 0);
    restores(state, fed, || Box::new(window_svm::<f32>(scale)));
    restores(state, fed, || Box::new(window_svm::<f64>(scale)));
    restores(state, fed, || Box::new(window_slkl::<f32>(scale)));
    restores(state, fed, || Box::new(window_slkl::<f64>(scale)));
    restores(state, fed, || Box::new(window_rsvm::<f32>(scale)));
    restores(state, fed, || Box::new(window_rsvm::<f64>(scale)));
    restores(state, fed, || Box::new(window_novelty::<f32>(scale)));
    restores(state, fed, || Box::new(window_novelty::<f64>(scale)));
}

/// The decay of `kestrel stream --memory 2000`, its default.
fn decay<T: Real>() -> T {
    T::ONE - T::ONE / T::from_f64(2000.0)
}

fn window_svm<T: Real>(scale: bool) -> WindowSvm<T> {
    WindowSvm::new(WINDOW, DIM, svm_params(), STEPS, 1, scale, Some(decay()))
        .expect("a valid configuration")
        .with_classes(CLASSES)
}

fn window_slkl<T: Real>(scale: bool) -> WindowSlkl<T> {
    let kernel = Kernel::rbf(T::from_f64(0.5)).expect("gamma 0.5");
    let params = slkl::Params::new().kernel(kernel).nu(T::from_f64(0.01)).seed(1).check().expect("valid");
    WindowSlkl::new(WINDOW, DIM, CENTRES, params, STEPS, scale).expect("a valid configuration")
}

fn window_rsvm<T: Real>(scale: bool) -> WindowRsvm<T> {
    let settings = RsvmSettings {
        kernel: Kernel::rbf(T::from_f64(0.5)).expect("gamma 0.5"),
        centres: CENTRES,
        delta: T::from_f64(0.3),
        window: WINDOW,
        params: svm_params(),
        steps: STEPS,
        seed: 1,
        scale,
        memory: Some(decay()),
        renew: true,
    };
    WindowRsvm::new(settings, DIM).expect("a valid configuration").with_classes(CLASSES)
}

fn window_novelty<T: Real>(scale: bool) -> WindowNovelty<T> {
    let settings = NoveltySettings {
        kernel: Kernel::rbf(T::from_f64(0.5)).expect("gamma 0.5"),
        centres: CENTRES,
        window: WINDOW,
        quantile: 0.99,
        delta: T::from_f64(0.3),
        warmup: WARMUP,
        scale,
        learn: Learn::Unflagged,
    };
    WindowNovelty::new(settings, DIM).expect("a valid configuration")
}

fn svm_params<T: Real>() -> dcd::ValidParams<T> {
    dcd::Params::new().c(T::ONE).bias(T::ONE).check().expect("C = 1, B = 1")
}

/// Sample `i` of a fixed stream: 2 features, a label of three classes, the third from the
/// sixth sample on (which SLKL learns as a target).
fn sample(i: usize) -> Record {
    let t = i as f64;
    let x = [(0.9 * t).sin(), (1.7 * t + 0.3).cos()];
    let label = match (x[0] * x[1] > 0.0, x[0] > 0.0 || i < 6) {
        (true, _) => 1.0,
        (false, true) => -1.0,
        (false, false) => 2.0,
    };
    Record { label, indices: vec![0, 1], values: x.to_vec(), line: i as u64 + 1, ..Record::default() }
}

/// What the learners are fed after a restore: samples, and records each must refuse (an
/// index past the dimension, a NaN, a fourth class, which no classifier takes).
fn probes() -> [Record; 5] {
    let odd =
        |label, indices: Vec<u32>, values: Vec<f64>| Record { label, indices, values, line: 0, ..Record::default() };
    [
        sample(100),
        odd(1.0, vec![0, 7], vec![0.5, 1.0]),
        odd(-1.0, vec![1], vec![f64::NAN]),
        odd(2.5, vec![0], vec![0.5]),
        sample(101),
    ]
}

fn saved(learner: &dyn OnlineLearner) -> Vec<u8> {
    learner.save_state().expect("a learner's state encodes")
}

/// Restores `state` into a learner fed `fed` samples, then checks as described above.
fn restores(state: &[u8], fed: usize, new: impl Fn() -> Box<dyn OnlineLearner>) {
    let mut a = new();
    for i in 0..fed {
        let _ = a.learn(&sample(i));
    }
    let before = saved(a.as_ref());
    if a.restore_state(state).is_err() {
        assert_eq!(saved(a.as_ref()), before, "a rejected restore changed the learner");
        return;
    }
    let after = saved(a.as_ref());
    let mut b = new();
    b.restore_state(&after).expect("a saved state restores into a fresh learner");
    assert_eq!(saved(b.as_ref()), after, "save → restore → save differs");
    for record in &probes() {
        for learner in [&mut a, &mut b] {
            let _ = learner.predict(record);
            let before = saved(learner.as_ref());
            if learner.learn(record).is_err() {
                assert_eq!(saved(learner.as_ref()), before, "a rejected learn changed the learner");
            }
        }
        assert_eq!(saved(a.as_ref()), saved(b.as_ref()), "restored copies diverge");
    }
    if let Ok(bytes) = a.encode() {
        let mut model = model::load(&bytes).expect("the model a learner encodes loads");
        let _ = model.predict(&sample(102));
    }
}
