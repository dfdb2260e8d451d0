//! The C ABI (kestrel-ffi) as C firmware calls it, on arbitrary bytes: model files,
//! inputs with NaN and ±∞, configurations, handles of the wrong kind.
//!
//! The input is tried three ways. (1) As a model file: `kestrel_model_work_bytes`, then
//! `kestrel_model_open` into work memory of that size (and one byte less, which must be
//! refused), then `kestrel_model_describe`, and predictions and decision values of rows
//! read from the input's tail as f32 (any bits: NaN, ±∞, subnormals), with the right
//! dimension and a wrong one.
//! (2) As `kind, scalar, payload…` wrapped in a valid envelope with a correct CRC-32 (as
//! `model_decode` does), so the payload decoders are reached through the ABI. (3) As a
//! learner session: the first 8 bytes configure a windowed SLKL regressor, a linear SVM, a
//! multi-class SVM (1…5 classes: fewer than 3 refused) or a novelty detector (window 1…16,
//! 1…4 features, 1…8 centres, kernel, γ, ν, C, loss, memory, steps; the detector's
//! quantile, δ, warm-up and span), the rest is a stream of
//! samples (f32 bits) given to `learn`, `predict` (`score`) and the scaler; then
//! `save` (asking the length first), and the saved bytes opened with `kestrel_model_open`;
//! then `checkpoint` and `resume` into new memory, whose checkpoint must be the same bytes,
//! and `resume` of the input itself, raw and framed as a checkpoint with a valid CRC-32
//! (so the header's decoding and the core's checks of a state are reached), and
//! `checkpoint::describe` of each, and `import::model_of` (a checkpoint made a model file).
//!
//! Checks: no panic (a panic aborts the process: libFuzzer reports it) and no crash; every
//! call returns a defined status; a model that opens needs the bytes `work_bytes` said; a
//! rejected `learn` leaves the learner's state and predictions unchanged; a detector's
//! verdict is finite and flags only once it has a threshold; what a learner saves opens as
//! a model of its dimension; what it checkpoints resumes; a checkpoint that resumes is
//! described, and a learner's makes a model that opens.

#![no_main]

mod common;

use core::ffi::c_void;
use core::ptr;

use kestrel_ffi::model::{
    Model, ModelInfo, kestrel_model_decision, kestrel_model_describe, kestrel_model_label, kestrel_model_open,
    kestrel_model_predict, kestrel_model_probabilities, kestrel_model_work_bytes,
};
use kestrel_ffi::multiclass::{self, Multiclass, MulticlassConfig};
use kestrel_ffi::novelty::{self, DetectorState, Novelty, NoveltyConfig, NoveltyVerdict};
use kestrel_ffi::scaler::{Scaler, kestrel_scaler_create, kestrel_scaler_observe, kestrel_scaler_transform};
use kestrel_ffi::slkl::{self, Slkl, SlklConfig};
use kestrel_ffi::svm::{self, Svm, SvmConfig};
use kestrel_ffi::{LearnerState, Sizes, Status};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    open_and_predict(data, floats(data));
    if let [kind, scalar, payload @ ..] = data {
        open_and_predict(&common::model_envelope(kind % 4, scalar % 3, kind & 0x80 != 0, payload), floats(payload));
    }
    if data.len() >= 8 {
        let (config, samples) = data.split_at(8);
        let samples = floats(samples);
        match config[0] % 4 {
            0 => learn_slkl(config, &samples, data),
            1 => learn_svm(config, &samples, data),
            2 => learn_multiclass(config, &samples, data),
            _ => learn_novelty(config, &samples, data),
        }
    }
});

/// Work memory, aligned to KESTREL_ALIGN (8), of at least `bytes`.
fn work(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8).max(1)]
}

/// The input's bytes as f32 bit patterns (4 at a time).
fn floats(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect()
}

fn open_and_predict(bytes: &[u8], rows: Vec<f32>) {
    // SAFETY (all calls below): every pointer is null or points to live memory of the
    // length passed with it; work buffers are Vec<u64>, so aligned to 8.
    let needed = unsafe { kestrel_model_work_bytes(bytes.as_ptr(), bytes.len()) };
    // Refuse sizes a device could not have, before allocating them.
    let mut memory = work(needed.min(1 << 24));
    let mut model: *mut Model = ptr::null_mut();
    let capacity = memory.len() * 8;
    let status = unsafe {
        kestrel_model_open(bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast::<c_void>(), capacity, &mut model)
    };
    if needed == 0 || needed > capacity {
        assert_ne!(status, Status::Ok, "work_bytes said {needed}");
        assert!(model.is_null());
        return;
    }
    if status != Status::Ok {
        // work_bytes checks the envelope; the payload is decoded by open.
        assert!(
            matches!(status, Status::ModelCorrupted | Status::ModelUnsupported | Status::ModelForeign),
            "{status:?}"
        );
        return;
    }
    let short = unsafe {
        kestrel_model_open(bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast::<c_void>(), needed - 1, &mut model)
    };
    assert_eq!(short, Status::BufferTooSmall);
    // The failed open cleared the header: open again.
    let status = unsafe {
        kestrel_model_open(bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast::<c_void>(), capacity, &mut model)
    };
    assert_eq!(status, Status::Ok);
    let mut info = ModelInfo::default();
    assert_eq!(unsafe { kestrel_model_describe(model, &mut info) }, Status::Ok);
    assert!((1..=3).contains(&info.kind));
    if info.dim == 0 || info.dim > 1 << 16 {
        return;
    }
    for row in rows.chunks(info.dim).take(16).chain([&[][..]]) {
        let mut y = f32::NAN;
        let status = unsafe { kestrel_model_predict(model, row.as_ptr(), row.len(), &mut y) };
        if row.len() != info.dim {
            assert_eq!(status, Status::DimensionMismatch);
        } else if status == Status::Ok {
            assert!(!y.is_nan());
        } else {
            assert!(matches!(status, Status::NonFinite), "{status:?}");
        }
        // A classifier's decision values: as many as it has outputs, its labels as many as
        // its classes; the others have none.
        let mut values = vec![f32::NAN; info.outputs.min(64)];
        let status =
            unsafe { kestrel_model_decision(model, row.as_ptr(), row.len(), values.as_mut_ptr(), values.len()) };
        match status {
            Status::Ok => assert!(info.outputs <= 64 && values.iter().all(|v| v.is_finite())),
            Status::InvalidParam => assert_eq!(info.outputs, 0),
            other => assert!(
                matches!(other, Status::DimensionMismatch | Status::NonFinite | Status::BufferTooSmall),
                "{other:?}"
            ),
        }
        // Class probabilities: one per class, a distribution, for a model that has them.
        let mut p = vec![f32::NAN; info.classes.min(64)];
        let status = unsafe { kestrel_model_probabilities(model, row.as_ptr(), row.len(), p.as_mut_ptr(), p.len()) };
        match status {
            Status::Ok => {
                assert!(info.probabilities && p.iter().all(|p| (0.0..=1.0).contains(p)), "{p:?}");
                assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{p:?}");
            }
            Status::InvalidParam => assert!(!info.probabilities),
            other => assert!(
                matches!(other, Status::DimensionMismatch | Status::NonFinite | Status::BufferTooSmall),
                "{other:?}"
            ),
        }
        let mut label = f32::NAN;
        let status = unsafe { kestrel_model_label(model, info.classes, &mut label) };
        assert_eq!((status, label.is_nan()), (Status::InvalidParam, true));
    }
}

fn learn_slkl(config: &[u8], samples: &[f32], data: &[u8]) {
    let dim = usize::from(config[2] % 4) + 1;
    let centres = usize::from(config[3] % 8) + 1;
    let mut cfg: SlklConfig =
        slkl::kestrel_slkl_default_config(u32::from(config[1] % 16) + 1, dim as u32, centres as u32);
    cfg.max_active = u32::from(config[4]) % (centres as u32) + 1;
    cfg.kernel.kind = u32::from(config[5] % 5); // 0 is invalid
    cfg.kernel.gamma = 2f32.powi(i32::from(config[6] % 16) - 8);
    cfg.nu = 2f32.powi(i32::from(config[7] % 16) - 12);
    cfg.steps_per_sample = u32::from(config[0] >> 4) + 1;
    let needed = unsafe { slkl::kestrel_slkl_work_bytes(&cfg) };
    let mut memory = work(needed);
    let centre_values: Vec<f32> = samples.iter().copied().cycle().take(centres * dim).collect();
    let mut learner: *mut Slkl = ptr::null_mut();
    let status = unsafe {
        slkl::kestrel_slkl_create(
            &cfg,
            centre_values.as_ptr(),
            centre_values.len(),
            memory.as_mut_ptr().cast(),
            needed,
            &mut learner,
        )
    };
    if needed == 0 || centre_values.len() != centres * dim {
        assert_ne!(status, Status::Ok);
        return;
    }
    if status != Status::Ok {
        assert!(matches!(status, Status::NonFinite | Status::InvalidParam), "{status:?}");
        return;
    }
    let scaler = scaler_for(dim);
    for sample in samples.chunks_exact(dim + 1).take(64) {
        let (x, y) = (&sample[..dim], sample[dim]);
        let before = slkl_snapshot(learner, x);
        let status = unsafe { slkl::kestrel_slkl_learn(learner, x.as_ptr(), dim, y) };
        if status != Status::Ok {
            assert!(matches!(status, Status::NonFinite | Status::Numerical), "{status:?}");
            if status == Status::NonFinite && !(x.iter().all(|v| v.is_finite()) && y.is_finite()) {
                assert_eq!(slkl_snapshot(learner, x), before, "a refused sample changed the learner");
            }
        }
        unsafe { kestrel_scaler_observe(scaler.1, x.as_ptr(), dim) };
    }
    let saved = save(|out, len, written| unsafe { slkl::kestrel_slkl_save(learner, scaler.1, out, len, written) });
    reopen(&saved, dim, true);
    let checkpoint = |learner: *mut Slkl| {
        save(|out, len, written| unsafe { slkl::kestrel_slkl_checkpoint(learner, out, len, written) })
    };
    let resume = |bytes: &[u8], memory: &mut [u64], out: &mut *mut Slkl| unsafe {
        slkl::kestrel_slkl_resume(&cfg, bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast(), needed, out)
    };
    resumes_to_the_same_bytes(checkpoint(learner), needed, resume, checkpoint, data);
}

/// A learner's checkpoint (unless refused as numerically broken) resumes into new memory
/// of `needed` bytes, and the resumed learner's checkpoint is the same bytes; the fuzzer's own bytes, raw and in a valid
/// frame of each kind, resume or are refused, never crash. `checkpoint::describe` (what
/// `kestrel inspect` reads a device checkpoint with) reads every checkpoint that resumes.
fn resumes_to_the_same_bytes<L>(
    saved: Vec<u8>,
    needed: usize,
    resume: impl Fn(&[u8], &mut [u64], &mut *mut L) -> Status,
    checkpoint: impl Fn(*mut L) -> Vec<u8>,
    data: &[u8],
) {
    // Empty: refused as numerically broken (NUMERICAL), which `save` allows.
    if !saved.is_empty() {
        let mut memory = work(needed);
        let mut resumed: *mut L = ptr::null_mut();
        assert!(kestrel_ffi::checkpoint::describe(&saved).is_ok(), "a checkpoint is described");
        imports(&saved, true);
        assert_eq!(resume(&saved, &mut memory, &mut resumed), Status::Ok);
        assert_eq!(checkpoint(resumed), saved, "a resumed learner writes the checkpoint it was resumed from");
    }
    for bytes in (1..=5).map(|kind| checkpoint_frame(kind, data)).chain([data.to_vec()]) {
        let mut memory = work(needed);
        let mut other: *mut L = ptr::null_mut();
        let described = kestrel_ffi::checkpoint::describe(&bytes);
        let resumed = resume(&bytes, &mut memory, &mut other) == Status::Ok;
        if resumed {
            assert!(described.is_ok(), "a checkpoint that resumes is described");
            checkpoint(other);
        }
        imports(&bytes, resumed);
    }
}

/// `import::model_of` (what `kestrel import` runs) of a checkpoint: any bytes are a status
/// or a model that opens, and ask for no more work than four bytes of theirs and 4 KiB
/// allow (a multi-class learner's records besides); a learner's checkpoint that resumes makes a model (unless its save refuses, as
/// a detector's before its first reading does), a scaler's none.
fn imports(bytes: &[u8], resumes: bool) {
    use kestrel_ffi::checkpoint::Described;
    use kestrel_ffi::import;
    // Without a scaler every refusal is about the learner's checkpoint: its status.
    let work_words = |bytes: &[u8]| import::work_words(bytes, None).map_err(|refused| refused.status);
    let model_of = |bytes: &[u8], memory: &mut [u64], out: Option<&mut [u8]>| {
        import::model_of(bytes, None, memory, out).map_err(|refused| refused.status)
    };
    // A detector that has learned nothing has no model to save (INVALID_PARAM).
    let (dim, may_have_no_model, records) = match kestrel_ffi::checkpoint::describe(bytes) {
        Ok(Described::Svm { config, .. }) => (config.dim, false, 0),
        Ok(Described::Multiclass { config, .. }) => (config.svm.dim, false, config.records_bytes()),
        Ok(Described::Slkl { config, .. }) => (config.dim, false, 0),
        Ok(Described::Novelty { config, .. }) => (config.dim, true, 0),
        Ok(Described::Scaler { .. }) => {
            assert_eq!(work_words(bytes), Err(Status::ModelForeign));
            return;
        }
        Err(status) => {
            assert_eq!(work_words(bytes), Err(status));
            return;
        }
    };
    let words = match work_words(bytes) {
        Ok(words) => words,
        Err(status) => return assert!(!resumes, "a checkpoint that resumes asks for its work: {status:?}"),
    };
    assert!(words * 8 <= bytes.len() * 4 + 4096 + records, "{words} words for {} bytes", bytes.len());
    let mut memory = vec![0u64; words];
    match model_of(bytes, &mut memory, None) {
        Ok(len) => {
            let mut model = vec![0u8; len];
            assert_eq!(model_of(bytes, &mut memory, Some(&mut model)), Ok(len));
            reopen(&model, dim as usize, false);
        }
        Err(status) => {
            // What `save` allows a learner besides: a state its numerics broke.
            let save_refused = matches!(status, Status::NonFinite | Status::Numerical)
                || (may_have_no_model && status == Status::InvalidParam);
            assert!(!resumes || save_refused, "a learner's checkpoint that resumes makes a model: {status:?}");
        }
    }
}

/// `payload` framed as a checkpoint of the object `kind`, with a valid CRC-32.
fn checkpoint_frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![0u8; kestrel_core::frame::framed_len(payload.len())];
    kestrel_core::frame::payload_mut(&mut bytes).copy_from_slice(payload);
    kestrel_core::device_checkpoint::FORMAT
        .seal([kind, 0], payload.len(), &mut bytes)
        .expect("a buffer of the frame's length");
    bytes
}

/// The learner's state and its prediction of `x` (bits), to compare before and after.
fn slkl_snapshot(learner: *mut Slkl, x: &[f32]) -> (u64, usize, usize, Option<u32>) {
    let mut state = empty_state();
    assert_eq!(unsafe { slkl::kestrel_slkl_state(learner, &mut state) }, Status::Ok);
    let mut y = 0.0f32;
    let predicted = unsafe { slkl::kestrel_slkl_predict(learner, x.as_ptr(), x.len(), &mut y) };
    (state.samples_seen, state.window_len, state.active_centres, (predicted == Status::Ok).then(|| y.to_bits()))
}

fn learn_svm(config: &[u8], samples: &[f32], data: &[u8]) {
    let dim = usize::from(config[2] % 4) + 1;
    let mut cfg: SvmConfig = svm::kestrel_svm_default_config(u32::from(config[1] % 16) + 1, dim as u32);
    cfg.c = 2f32.powi(i32::from(config[3] % 16) - 8);
    cfg.loss = u32::from(config[4] % 3); // 0 is invalid
    cfg.memory = u32::from(config[5] % 4) * 10;
    cfg.bias = f32::from(config[6] % 3) - 0.5; // −0.5 is invalid
    cfg.steps_per_sample = u32::from(config[7] % 8) + 1;
    cfg.epsilon = [1.0, 0.1, 3.0, 0.0][usize::from(config[3] >> 4) % 4]; // 0 is invalid
    let needed = unsafe { svm::kestrel_svm_work_bytes(&cfg) };
    let mut memory = work(needed);
    let mut learner: *mut Svm = ptr::null_mut();
    let status = unsafe { svm::kestrel_svm_create(&cfg, memory.as_mut_ptr().cast(), needed, &mut learner) };
    if needed == 0 {
        assert_ne!(status, Status::Ok);
        return;
    }
    assert_eq!(status, Status::Ok);
    let scaler = scaler_for(dim);
    let mut scaled = vec![0.0f32; dim];
    for sample in samples.chunks_exact(dim + 1).take(64) {
        let (x, label) = (&sample[..dim], sample[dim].to_bits() as i32 % 3);
        unsafe { kestrel_scaler_observe(scaler.1, x.as_ptr(), dim) };
        if unsafe { kestrel_scaler_transform(scaler.1, x.as_ptr(), dim, scaled.as_mut_ptr()) } != Status::Ok {
            continue;
        }
        let mut before = empty_state();
        unsafe { svm::kestrel_svm_state(learner, &mut before) };
        let status = unsafe { svm::kestrel_svm_learn(learner, scaled.as_ptr(), dim, label) };
        let mut after = empty_state();
        unsafe { svm::kestrel_svm_state(learner, &mut after) };
        if status == Status::Ok {
            assert!(label == 1 || label == -1);
            assert_eq!(after.samples_seen, before.samples_seen + 1);
        } else {
            assert_eq!(after, before, "{status:?}");
        }
        let mut predicted = 0i32;
        if unsafe { svm::kestrel_svm_predict(learner, x.as_ptr(), dim, &mut predicted) } == Status::Ok {
            assert!(predicted == 1 || predicted == -1);
        }
        let mut probability = f32::NAN;
        if unsafe { svm::kestrel_svm_probability(learner, x.as_ptr(), dim, &mut probability) } == Status::Ok {
            assert!((0.0..=1.0).contains(&probability), "{probability}");
        }
    }
    // Handles of the wrong kind are refused.
    let mut state = empty_state();
    assert_eq!(unsafe { slkl::kestrel_slkl_state(learner.cast(), &mut state) }, Status::WrongObject);
    let saved = save(|out, len, written| unsafe { svm::kestrel_svm_save(learner, scaler.1, out, len, written) });
    reopen(&saved, dim, true);
    let checkpoint = |learner: *mut Svm| {
        save(|out, len, written| unsafe { svm::kestrel_svm_checkpoint(learner, out, len, written) })
    };
    let resume = |bytes: &[u8], memory: &mut [u64], out: &mut *mut Svm| unsafe {
        svm::kestrel_svm_resume(&cfg, bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast(), needed, out)
    };
    resumes_to_the_same_bytes(checkpoint(learner), needed, resume, checkpoint, data);
    let scaler_checkpoint = |scaler: *mut Scaler| {
        save(|out, len, written| unsafe { kestrel_ffi::scaler::kestrel_scaler_checkpoint(scaler, out, len, written) })
    };
    let scaler_needed = kestrel_ffi::scaler::kestrel_scaler_work_bytes(dim);
    let scaler_resume = |bytes: &[u8], memory: &mut [u64], out: &mut *mut Scaler| unsafe {
        let memory_ptr = memory.as_mut_ptr().cast();
        kestrel_ffi::scaler::kestrel_scaler_resume(dim, bytes.as_ptr(), bytes.len(), memory_ptr, scaler_needed, out)
    };
    resumes_to_the_same_bytes(scaler_checkpoint(scaler.1), scaler_needed, scaler_resume, scaler_checkpoint, data);
}

fn learn_multiclass(config: &[u8], samples: &[f32], data: &[u8]) {
    let dim = usize::from(config[2] % 4) + 1;
    let classes = u32::from(config[5] % 5) + 1; // fewer than 3 are refused
    let mut cfg: MulticlassConfig =
        multiclass::kestrel_multiclass_default_config(u32::from(config[1] % 16) + 1, dim as u32, classes);
    cfg.svm.c = 2f32.powi(i32::from(config[3] % 16) - 8);
    cfg.svm.loss = u32::from(config[4] % 3); // 0 is invalid
    cfg.svm.memory = u32::from(config[5] / 5 % 4) * 10;
    cfg.svm.steps_per_sample = u32::from(config[7] % 8) + 1;
    cfg.svm.seed = u64::from(config[6]);
    let needed = unsafe { multiclass::kestrel_multiclass_work_bytes(&cfg) };
    let mut memory = work(needed);
    let mut learner: *mut Multiclass = ptr::null_mut();
    let status =
        unsafe { multiclass::kestrel_multiclass_create(&cfg, memory.as_mut_ptr().cast(), needed, &mut learner) };
    if needed == 0 {
        assert_ne!(status, Status::Ok);
        return;
    }
    assert_eq!(status, Status::Ok);
    let checkpoint = |learner: *mut Multiclass| {
        save(|out, len, written| unsafe { multiclass::kestrel_multiclass_checkpoint(learner, out, len, written) })
    };
    for sample in samples.chunks_exact(dim + 1).take(64) {
        let (x, class) = (&sample[..dim], sample[dim].to_bits() as i32 % 6 - 1);
        let before = checkpoint(learner);
        let status = unsafe { multiclass::kestrel_multiclass_learn(learner, x.as_ptr(), dim, class) };
        if status == Status::Ok {
            assert!((0..classes as i32).contains(&class));
        } else if !before.is_empty() {
            assert_eq!(checkpoint(learner), before, "{status:?}");
        }
        let mut predicted = -1i32;
        if unsafe { multiclass::kestrel_multiclass_predict(learner, x.as_ptr(), dim, &mut predicted) } == Status::Ok {
            assert!((0..classes as i32).contains(&predicted));
        }
        let mut p = vec![f32::NAN; classes as usize];
        let given =
            unsafe { multiclass::kestrel_multiclass_probabilities(learner, x.as_ptr(), dim, p.as_mut_ptr(), p.len()) };
        if given == Status::Ok {
            assert!(p.iter().all(|p| (0.0..=1.0).contains(p)), "{p:?}");
        }
    }
    let mut state = empty_state();
    assert_eq!(unsafe { svm::kestrel_svm_state(learner.cast(), &mut state) }, Status::WrongObject);
    let saved = save(|out, len, written| unsafe {
        multiclass::kestrel_multiclass_save(learner, ptr::null(), out, len, written)
    });
    reopen(&saved, dim, false);
    let resume = |bytes: &[u8], memory: &mut [u64], out: &mut *mut Multiclass| unsafe {
        multiclass::kestrel_multiclass_resume(
            &cfg,
            bytes.as_ptr(),
            bytes.len(),
            memory.as_mut_ptr().cast(),
            needed,
            out,
        )
    };
    resumes_to_the_same_bytes(checkpoint(learner), needed, resume, checkpoint, data);
}

fn learn_novelty(config: &[u8], samples: &[f32], data: &[u8]) {
    let dim = usize::from(config[2] % 4) + 1;
    let mut cfg: NoveltyConfig = novelty::kestrel_novelty_default_config(
        u32::from(config[1] % 16) + 1,
        dim as u32,
        u32::from(config[3] % 8) + 1,
    );
    cfg.kernel.kind = u32::from(config[4] % 5); // 0 is invalid
    cfg.kernel.gamma = 2f32.powi(i32::from(config[5] % 16) - 8);
    cfg.quantile = [0.0, 0.5, 0.9, 0.99][usize::from(config[6] % 4)]; // 0 is invalid
    cfg.delta = [0.0, 0.1, 0.3, 1.0][usize::from(config[6] / 4 % 4)];
    cfg.warmup = u32::from(config[7] % 16) + 1; // 1 is invalid
    cfg.span = u32::from(config[7] / 16) + 1;
    let needed = unsafe { novelty::kestrel_novelty_work_bytes(&cfg) };
    let mut memory = work(needed);
    let mut detector: *mut Novelty = ptr::null_mut();
    let status = unsafe { novelty::kestrel_novelty_create(&cfg, memory.as_mut_ptr().cast(), needed, &mut detector) };
    if needed == 0 || status != Status::Ok {
        assert_ne!(status, Status::Ok);
        // A quantile of 0, a warm-up of 1, the kernel kind 0: refused at creation.
        assert!(needed == 0 || status == Status::InvalidParam, "{status:?}");
        return;
    }
    let scaler = scaler_for(dim);
    for x in samples.chunks_exact(dim).take(64) {
        let before = detector_snapshot(detector, x);
        let mut verdict = NoveltyVerdict::default();
        let status = unsafe { novelty::kestrel_novelty_learn(detector, x.as_ptr(), dim, &mut verdict) };
        if status == Status::Ok {
            assert!(verdict.distance2.is_finite() && (verdict.scored || verdict.distance2 == 0.0), "{verdict:?}");
            assert!(!verdict.anomaly || verdict.has_threshold);
        } else {
            assert!(matches!(status, Status::NonFinite | Status::InvalidParam), "{status:?}");
            assert_eq!(detector_snapshot(detector, x), before, "a refused sample changed the detector");
        }
        unsafe { kestrel_scaler_observe(scaler.1, x.as_ptr(), dim) };
    }
    // Before its first sample a detector has no model to save (INVALID_PARAM).
    if detector_snapshot(detector, &[]).0.samples_seen > 0 {
        let saved =
            save(|out, len, written| unsafe { novelty::kestrel_novelty_save(detector, scaler.1, out, len, written) });
        reopen(&saved, dim, true);
    }
    let checkpoint = |detector: *mut Novelty| {
        save(|out, len, written| unsafe { novelty::kestrel_novelty_checkpoint(detector, out, len, written) })
    };
    let resume = |bytes: &[u8], memory: &mut [u64], out: &mut *mut Novelty| unsafe {
        novelty::kestrel_novelty_resume(&cfg, bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast(), needed, out)
    };
    resumes_to_the_same_bytes(checkpoint(detector), needed, resume, checkpoint, data);
}

/// The detector's state and its score of `x` (bits), to compare before and after.
fn detector_snapshot(detector: *mut Novelty, x: &[f32]) -> (DetectorState, Option<u32>) {
    let mut state = DetectorState::default();
    assert_eq!(unsafe { novelty::kestrel_novelty_state(detector, &mut state) }, Status::Ok);
    let mut verdict = NoveltyVerdict::default();
    let scored = unsafe { novelty::kestrel_novelty_score(detector, x.as_ptr(), x.len(), &mut verdict) };
    (state, (scored == Status::Ok).then(|| verdict.distance2.to_bits()))
}

/// A scaler of `dim` features in its own memory (kept alive by the returned Vec).
fn scaler_for(dim: usize) -> (Vec<u64>, *mut Scaler) {
    let mut memory = work(kestrel_ffi::scaler::kestrel_scaler_work_bytes(dim));
    let mut scaler: *mut Scaler = ptr::null_mut();
    let len = memory.len() * 8;
    assert_eq!(unsafe { kestrel_scaler_create(dim, memory.as_mut_ptr().cast(), len, &mut scaler) }, Status::Ok);
    (memory, scaler)
}

/// A learner's model bytes: the length asked for first, then written.
fn save(mut call: impl FnMut(*mut u8, usize, *mut usize) -> Status) -> Vec<u8> {
    let mut len = 0usize;
    let asked = call(ptr::null_mut(), 0, &mut len);
    if asked != Status::BufferTooSmall {
        assert!(matches!(asked, Status::NonFinite | Status::Numerical), "{asked:?}");
        return Vec::new();
    }
    let mut bytes = vec![0u8; len];
    let mut written = 0usize;
    assert_eq!(call(bytes.as_mut_ptr(), len, &mut written), Status::Ok);
    assert_eq!(written, len);
    bytes
}

/// What a learner saved opens as a model of its dimension, standardised when `scaled`.
fn reopen(bytes: &[u8], dim: usize, scaled: bool) {
    if bytes.is_empty() {
        return;
    }
    let needed = unsafe { kestrel_model_work_bytes(bytes.as_ptr(), bytes.len()) };
    assert!(needed > 0, "a saved model must open");
    let mut memory = work(needed);
    let mut model: *mut Model = ptr::null_mut();
    assert_eq!(
        unsafe { kestrel_model_open(bytes.as_ptr(), bytes.len(), memory.as_mut_ptr().cast(), needed, &mut model) },
        Status::Ok
    );
    let mut info = ModelInfo::default();
    assert_eq!(unsafe { kestrel_model_describe(model, &mut info) }, Status::Ok);
    assert!(info.dim == dim && info.scaled == scaled);
}

fn empty_state() -> LearnerState {
    LearnerState {
        samples_seen: 0,
        window_len: 0,
        active_centres: 0,
        target_mean: 0.0,
        converged: false,
        last_steps: 0,
    }
}
