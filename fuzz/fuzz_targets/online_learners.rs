//! `kestrel stream`'s online learners on arbitrary rows, saved and resumed in mid-stream.
//!
//! The first [`FLAGS`] bytes choose the learner and its settings as `kestrel stream`'s
//! flags would (`online::build::build`, the path of the CLI and the Python package): svm,
//! slkl, rsvm or novelty, f64 or f32, window 1…16, centres 1…8, 1…32 steps per sample, the
//! RBF, linear or polynomial kernel, γ, C, ν, δ, the loss, scaling, renewal, memory,
//! classes 2…5, the seed; raced widths and costs when γ or C is left unset. The rest is
//! rows of 1…4 features: each a label byte (a class of 0…5, or a target) and the
//! features as f64 bit patterns, non-finite ones replaced by a finite value of any
//! magnitude (the readers never yield NaN or ±∞; huge and subnormal values they do).
//!
//! Each row goes through `test_then_train`; at a row the flags choose, the learner's state
//! is saved (`save_state`), a second learner is built from the same settings and restores
//! it, and both learn the rest of the rows.
//!
//! Checks: no panic; a state the learner saved restores into a fresh learner of its
//! settings (`kestrel stream --resume` of its checkpoint would otherwise fail), which
//! saves the same bytes; both then give the same predictions, errors and final state, bit
//! for bit; a rejected row leaves the state unchanged; a model the learner gives loads.

#![no_main]

use kestrel_core::dcd::Loss;
use kestrel_stream::batch::fit::{KernelChoice, Setting};
use kestrel_stream::model;
use kestrel_stream::online::Learn;
use kestrel_stream::online::OnlineLearner;
use kestrel_stream::online::build::{self, StreamLearner, StreamSettings};
use kestrel_stream::source::Record;
use libfuzzer_sys::fuzz_target;

/// Bytes of flags before the rows.
const FLAGS: usize = 12;

/// The most rows one input drives: enough for every warm-up and window here.
const MAX_ROWS: usize = 256;

fuzz_target!(|data: &[u8]| {
    let Some((flags, rows)) = data.split_first_chunk::<FLAGS>() else { return };
    let (settings, f32, dim, save_at) = settings(flags);
    let rows = records(rows, dim);
    let Some(mut learner) = learner(&settings, f32, dim) else { return };
    let mut resumed: Option<Box<dyn OnlineLearner + Send + Sync>> = None;
    for (i, record) in rows.iter().enumerate() {
        if i == save_at {
            resumed = Some(resume(learner.as_ref(), &settings, f32, dim));
        }
        let outcome = step(learner.as_mut(), record);
        if let Some(twin) = resumed.as_mut() {
            let twin_outcome = step(twin.as_mut(), record);
            assert_eq!(bits(&twin_outcome), bits(&outcome), "row {i}: the resumed learner differs");
        }
    }
    if let Some(mut twin) = resumed {
        assert!(twin.save_state().unwrap() == learner.save_state().unwrap(), "the final states differ");
        assert_eq!(twin.encode().ok(), learner.encode().ok(), "the final models differ");
    }
    if let Ok(bytes) = learner.encode() {
        let loaded = model::load(&bytes).expect("a learner's model loads");
        assert_eq!(loaded.info().dim, dim);
    }
});

/// The learner of `settings` in `f32` or `f64`, or `None` for settings `build` refuses.
fn learner(settings: &StreamSettings, f32: bool, dim: usize) -> Option<Box<dyn OnlineLearner + Send + Sync>> {
    let built = if f32 { build::build::<f32>(settings, dim) } else { build::build::<f64>(settings, dim) };
    built.ok()
}

/// A fresh learner of the same settings that restored `learner`'s saved state.
fn resume(
    learner: &(dyn OnlineLearner + Send + Sync),
    settings: &StreamSettings,
    f32: bool,
    dim: usize,
) -> Box<dyn OnlineLearner + Send + Sync> {
    let saved = learner.save_state().expect("a state encodes");
    let mut fresh = self::learner(settings, f32, dim).expect("the settings built once");
    if let Err(e) = fresh.restore_state(&saved) {
        panic!("a state the learner saved does not restore: {e}");
    }
    assert!(fresh.save_state().unwrap() == saved, "the restored learner saves other bytes");
    fresh
}

/// One row through `test_then_train`: the prediction, or the error; a rejected row leaves
/// the learner's state as it was.
fn step(learner: &mut (dyn OnlineLearner + Send + Sync), record: &Record) -> Result<Option<f64>, String> {
    let before = learner.save_state().unwrap();
    let outcome = learner.test_then_train(record).map_err(|e| e.to_string());
    if outcome.is_err() {
        assert!(learner.save_state().unwrap() == before, "a rejected row changed the state");
    }
    outcome
}

/// An outcome with its prediction as bits (NaN equal to NaN).
fn bits(outcome: &Result<Option<f64>, String>) -> Result<Option<u64>, String> {
    outcome.clone().map(|p| p.map(f64::to_bits))
}

/// The settings, the scalar (f32?), the features per row and the row at which the state
/// is saved, from the flag bytes.
fn settings(f: &[u8; FLAGS]) -> (StreamSettings, bool, usize, usize) {
    let learner =
        [StreamLearner::Svm, StreamLearner::Slkl, StreamLearner::Rsvm, StreamLearner::Novelty][usize::from(f[0] % 4)];
    let mut s = StreamSettings::new(learner);
    s.window = 1 + usize::from(f[1] % 16);
    s.centers = 1 + usize::from(f[2] % 8);
    s.steps_per_sample = 1 + usize::from(f[3] % 32);
    s.kernel.kind = [KernelChoice::Rbf, KernelChoice::Linear, KernelChoice::Poly][usize::from(f[4] % 3)];
    // γ from 2⁻⁸ to 2⁷, or unset (raced for rsvm's RBF kernel, 1/d otherwise).
    s.kernel.gamma = (f[5] & 0x80 == 0).then(|| Setting::Value(2f64.powi(i32::from(f[5] % 16) - 8)));
    s.kernel.degree = 1 + u32::from(f[4] / 3 % 3);
    s.kernel.coef0 = f64::from(f[4] / 9 % 2);
    s.svm.c = (f[6] & 0x80 == 0).then(|| Setting::Value(2f64.powi(i32::from(f[6] % 16) - 8)));
    s.svm.loss = if f[6] & 0x40 == 0 { Loss::SquaredHinge } else { Loss::Hinge };
    // ν from 2⁻¹¹ to 1, or unset (raced for slkl).
    s.nu = (f[7] & 0x40 == 0).then(|| 2f64.powi(-i32::from(f[7] % 12)));
    s.delta = [0.01, 0.1, 0.3, 0.9][usize::from(f[7] / 16 % 4)];
    s.scale = f[8] & 1 == 0;
    s.renew = f[8] & 2 == 0;
    s.memory = [0, 4, 2000][usize::from(f[8] / 4 % 3)];
    s.learn = if f[8] & 0x80 == 0 { Learn::Unflagged } else { Learn::All };
    s.warmup = 1 + usize::from(f[9] % 32);
    s.classes = 2 + usize::from(f[9] / 32 % 4);
    s.seed = u64::from(f[10]);
    let f32 = f[10] & 1 == 1;
    let dim = 1 + usize::from(f[11] % 4);
    let save_at = usize::from(f[11] / 4) * 4;
    (s, f32, dim, save_at)
}

/// Rows of `dim` features: a label byte, then `dim` values as f64 bits, a non-finite one
/// replaced by its bits' finite reading as a mantissa times a power of two.
fn records(bytes: &[u8], dim: usize) -> Vec<Record> {
    let width = 1 + 8 * dim;
    bytes
        .chunks_exact(width)
        .take(MAX_ROWS)
        .enumerate()
        .map(|(i, row)| {
            let (label, values) = row.split_first().unwrap();
            let values: Vec<f64> =
                values.chunks_exact(8).map(|b| finite(u64::from_le_bytes(b.try_into().unwrap()))).collect();
            // A class 0…5 mostly; every eighth byte a target with a fraction.
            let label = if label & 7 == 7 { f64::from(*label) / 8.0 - 10.0 } else { f64::from(label % 6) };
            let indices = (0..dim as u32).collect();
            Record { label, indices, values, line: i as u64 + 1, ..Record::default() }
        })
        .collect()
}

/// `bits` as an f64, or for NaN and ±∞ the mantissa bits with a small exponent.
fn finite(bits: u64) -> f64 {
    let value = f64::from_bits(bits);
    if value.is_finite() { value } else { f64::from_bits(bits & 0x800f_ffff_ffff_ffff | 0x3ff0_0000_0000_0000) }
}
