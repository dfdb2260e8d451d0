//! Models trained on the host by `kestrel train --scalar f32`, embedded with
//! `include_bytes!`, decoded on the device by kestrel-core without std, predict bit for
//! bit what `kestrel predict` printed on the host for the same inputs.
//!
//! The files are in `models/` and `models/regenerate.sh` rebuilds them: `NAME.kestrel`
//! (the model file), `NAME.csv` (32 rows with a header, label last) and `NAME.expected`
//! (the host's predictions as f32 bit patterns). Inputs are read as the host's CSV reader
//! reads them — each field parsed as `f64` by core's parser, then converted to `f32` — so
//! the device sees the same bits. The SVM's, a second reduced-kernel SVM's and the novelty
//! detector's files carry the standardisation they learned with (that SVM's with relevance
//! weights), applied on the device as on the host. The reduced
//! kernel PCA projects each row onto its 3 components with the bits `kestrel transform
//! --apply` printed; the two projections of a reduced KCCA (`kestrel transform --method
//! kcca`, one per view) project each view's rows to the host's canonical variates, bit for
//! bit. Model decoding errors are checked too.

#![no_std]
#![no_main]

use kestrel_core::calibration;
use kestrel_core::dcd::{LinearModel, Row};
use kestrel_core::kpca::KernelProjection;
use kestrel_core::model::{Envelope, ModelError, ModelKind, ScalarKind};
use kestrel_core::novelty::NoveltyModel;
use kestrel_core::reduced_set::{MapReduceModel, ReducedKernelModel};
use kestrel_core::scaler::Scaler;
use kestrel_core::slkl::Predictor;
use kestrel_core::storage::Storage;
use kestrel_core::{Error, KernelKind};
use kestrel_firmware_demo::{Failure, Tests, ensure, entry};

const SLKL: &[u8] = include_bytes!("../models/slkl.kestrel");
const SLKL_INPUTS: &str = include_str!("../models/slkl.csv");
const SLKL_EXPECTED: &str = include_str!("../models/slkl.expected");
const SVM: &[u8] = include_bytes!("../models/svm.kestrel");
const SVM_INPUTS: &str = include_str!("../models/svm.csv");
const SVM_EXPECTED: &str = include_str!("../models/svm.expected");
const RSVM: &[u8] = include_bytes!("../models/rsvm.kestrel");
const RSVM_INPUTS: &str = include_str!("../models/rsvm.csv");
const RSVM_EXPECTED: &str = include_str!("../models/rsvm.expected");
const CALIBRATED: &[u8] = include_bytes!("../models/calibrated.kestrel");
const CALIBRATED_INPUTS: &str = include_str!("../models/calibrated.csv");
const CALIBRATED_EXPECTED: &str = include_str!("../models/calibrated.expected");
const CALIBRATED_PROBABILITIES: &str = include_str!("../models/calibrated.probabilities");
const MRRSVM: &[u8] = include_bytes!("../models/mrrsvm.kestrel");
const MRRSVM_INPUTS: &str = include_str!("../models/mrrsvm.csv");
const MRRSVM_EXPECTED: &str = include_str!("../models/mrrsvm.expected");
const WEIGHED: &[u8] = include_bytes!("../models/weighed.kestrel");
const WEIGHED_INPUTS: &str = include_str!("../models/weighed.csv");
const WEIGHED_EXPECTED: &str = include_str!("../models/weighed.expected");
const NOVELTY: &[u8] = include_bytes!("../models/novelty.kestrel");
const NOVELTY_INPUTS: &str = include_str!("../models/novelty.csv");
const NOVELTY_EXPECTED: &str = include_str!("../models/novelty.expected");
const KPCA: &[u8] = include_bytes!("../models/kpca.kestrel");
const KPCA_INPUTS: &str = include_str!("../models/kpca.csv");
const KPCA_EXPECTED: &str = include_str!("../models/kpca.expected");
const KCCA_U: &[u8] = include_bytes!("../models/kcca_u.kestrel");
const KCCA_U_INPUTS: &str = include_str!("../models/kcca_u.csv");
const KCCA_U_EXPECTED: &str = include_str!("../models/kcca_u.expected");
const KCCA_V: &[u8] = include_bytes!("../models/kcca_v.kestrel");
const KCCA_V_INPUTS: &str = include_str!("../models/kcca_v.csv");
const KCCA_V_EXPECTED: &str = include_str!("../models/kcca_v.expected");

/// Most features of an input file.
const MAX_DIM: usize = 30;
/// Rows each input file holds.
const ROWS: usize = 32;
/// Storage for the SLKL model: up to 32 centres of 10 features.
const SLKL_LEN: usize = Predictor::scalars_len(32, 10);
/// Scratch of the MapReduce RSVM: one part of up to 16 centres of 2 features, and the row
/// of the 4 parts' decision values.
const MRRSVM_SCRATCH: usize = ReducedKernelModel::scalars_len(2, 16, 1) + 4;

#[entry]
fn main() -> ! {
    let mut tests = Tests::default();
    tests.run("slkl_predictions_bit_identical_to_host", check_slkl);
    tests.run("linear_svm_predictions_bit_identical_to_host", check_svm);
    tests.run("reduced_svm_predictions_bit_identical_to_host", check_rsvm);
    tests.run("class_probabilities_match_the_host", check_calibrated);
    tests.run("mapreduce_rsvm_predictions_bit_identical_to_host", check_mrrsvm);
    tests.run("relevance_weighed_rsvm_predictions_bit_identical_to_host", check_weighed);
    tests.run("novelty_scores_and_flags_bit_identical_to_host", check_novelty);
    tests.run("kernel_pca_projections_bit_identical_to_host", check_kpca);
    tests.run("kcca_variates_of_both_views_bit_identical_to_host", check_kcca);
    tests.run("envelopes_name_kind_and_scalar", envelopes);
    tests.run("decoded_slkl_model_encodes_to_the_same_model_bytes", reencode);
    tests.run("corrupted_truncated_and_foreign_bytes_are_errors", decoding_errors);
    tests.finish()
}

/// Runs `predict` on every row of `inputs` and compares the bits with `expected`.
fn compare(inputs: &str, expected: &str, mut predict: impl FnMut(&[f32]) -> Result<f32, Error>) -> Result<(), Failure> {
    let mut rows = inputs.lines().skip(1).filter(|l| !l.trim().is_empty());
    let mut expected = expected.lines().filter(|l| !l.trim().is_empty());
    let mut count = 0;
    loop {
        match (rows.next(), expected.next()) {
            (None, None) => break,
            (Some(row), Some(line)) => {
                let (x, dim) = features(row)?;
                let got = predict(&x[..dim])?;
                ensure(got.to_bits() == expected_bits(line)?, "prediction has the host's bits")?;
                count += 1;
            }
            _ => return Err(Failure::Check("as many expected predictions as input rows")),
        }
    }
    ensure(count == ROWS, "all 32 rows compared")
}

/// The features of an input row (label last), as the host reads them; and how many.
fn features(row: &str) -> Result<([f32; MAX_DIM], usize), Failure> {
    let mut x = [0.0f32; MAX_DIM];
    let fields = row.split(',').count();
    ensure(fields >= 2 && fields - 1 <= MAX_DIM, "input row has 1 to 30 features and a label")?;
    for (xi, field) in x.iter_mut().zip(row.split(',').take(fields - 1)) {
        let value: f64 = field.trim().parse().map_err(|_| Failure::Check("input is not a number"))?;
        *xi = value as f32; // as the host: T::from_f64
    }
    Ok((x, fields - 1))
}

/// The bit pattern an expected line starts with.
fn expected_bits(line: &str) -> Result<u32, Failure> {
    let hex = line.split_whitespace().next().unwrap_or("").trim_start_matches("0x");
    u32::from_str_radix(hex, 16).map_err(|_| Failure::Check("expected bits are not hex"))
}

fn check_slkl() -> Result<(), Failure> {
    let model = Predictor::decode_in(SLKL, [0.0f32; SLKL_LEN])?;
    ensure(model.dim() == 10 && !model.is_empty() && model.len() <= 32, "10 features, 1 to 32 centres")?;
    ensure(matches!(model.kernel().kind(), KernelKind::Rbf { .. }), "RBF kernel")?;
    compare(SLKL_INPUTS, SLKL_EXPECTED, |x| model.predict(x))
}

/// The SVM was trained on raw features by `train --scale`: its file carries the scaler,
/// which the device applies to each input before the model, as `kestrel predict` does.
fn check_svm() -> Result<(), Failure> {
    let model = LinearModel::decode_in(SVM, [0.0f32; LinearModel::scalars_len(30, 1)])?;
    ensure(model.dim() == 30 && model.outputs() == 1, "binary model of 30 features")?;
    let envelope = Envelope::parse(SVM)?;
    let scaler = Scaler::from_envelope_in(&envelope, [0.0f32; Scaler::scalars_len(30)])?;
    let scaler = scaler.ok_or(Failure::Check("the model carries a scaler"))?;
    ensure(scaler.dim() == 30 && scaler.count() == 426, "30 features, 426 training rows")?;
    compare(SVM_INPUTS, SVM_EXPECTED, |x| {
        let mut row = [0.0f32; 30];
        row.copy_from_slice(x);
        scaler.transform(&mut row)?;
        model.predict(Row::Dense(&row))
    })
}

fn check_rsvm() -> Result<(), Failure> {
    let model = ReducedKernelModel::decode_in(RSVM, [0.0f32; ReducedKernelModel::scalars_len(2, 16, 1)])?;
    ensure(model.dim() == 2 && model.centres_len() <= 16 && model.outputs() == 1, "binary, 2 features")?;
    compare(RSVM_INPUTS, RSVM_EXPECTED, |x| model.predict(x))
}

/// A reduced-kernel SVM trained with class probabilities (`train --probabilities`): its
/// predictions have the host's bits, and the probabilities of its sigmoids, computed in
/// f32 on the decision value's buffer, are the host's (f64 sigmoids of the same f32
/// decision values) to 1e-5, and a distribution.
fn check_calibrated() -> Result<(), Failure> {
    let model = ReducedKernelModel::decode_in(CALIBRATED, [0.0f32; ReducedKernelModel::scalars_len(2, 16, 1)])?;
    ensure(model.dim() == 2 && model.outputs() == 1, "binary, 2 features")?;
    let envelope = Envelope::parse(CALIBRATED)?;
    ensure(envelope.calibration_count() == 1, "one sigmoid for two classes")?;
    compare(CALIBRATED_INPUTS, CALIBRATED_EXPECTED, |x| model.predict(x))?;
    let rows = CALIBRATED_INPUTS.lines().skip(1).filter(|l| !l.trim().is_empty());
    for (row, line) in rows.zip(CALIBRATED_PROBABILITIES.lines()) {
        let (x, dim) = features(row)?;
        let mut values = [0.0f32; 2];
        model.decision_values(&x[..dim], &mut values[..1])?;
        calibration::probabilities(envelope.calibration_iter(), &mut values)?;
        let mut host = line.split(',').map(|p| p.trim().parse::<f64>());
        for value in values {
            let expected = host.next().and_then(Result::ok).ok_or(Failure::Check("two host probabilities a row"))?;
            ensure((f64::from(value) - expected).abs() < 1e-5, "a probability is the host's")?;
        }
        ensure((values[0] + values[1] - 1.0).abs() < 1e-6, "the probabilities sum to 1")?;
    }
    Ok(())
}

/// Four parts' reduced-kernel SVMs and the linear SVM on their decision values, each part
/// decoded in turn into one scratch (Algorithm 5 of seed 003).
fn check_mrrsvm() -> Result<(), Failure> {
    let envelope = Envelope::parse(MRRSVM)?;
    let model = MapReduceModel::<f32>::from_envelope(&envelope)?;
    ensure(model.dim() == 2 && model.parts() == 4 && model.width() == 4, "4 binary parts of 2 features")?;
    ensure(model.scratch_len() <= MRRSVM_SCRATCH, "one part of at most 16 centres at a time")?;
    let mut scratch = [0.0f32; MRRSVM_SCRATCH];
    compare(MRRSVM_INPUTS, MRRSVM_EXPECTED, |x| model.predict_in(x, &mut scratch))
}

/// A reduced-kernel SVM trained on raw features by `train --relevance`: the scaler its
/// file carries standardises each input and weighs each feature (a Gaussian width per
/// feature), on the device as on the host.
fn check_weighed() -> Result<(), Failure> {
    let storage = [0.0f32; ReducedKernelModel::scalars_len(30, 16, 1)];
    let model = ReducedKernelModel::decode_in(WEIGHED, storage)?;
    ensure(model.dim() == 30 && model.centres_len() <= 16 && model.outputs() == 1, "binary, 30 features")?;
    let envelope = Envelope::parse(WEIGHED)?;
    let scaler = Scaler::from_envelope_in(&envelope, [0.0f32; Scaler::scalars_len(30)])?;
    let scaler = scaler.ok_or(Failure::Check("the model carries a scaler"))?;
    ensure(scaler.weights().iter().any(|&w| w != 1.0), "the scaler carries relevance weights")?;
    compare(WEIGHED_INPUTS, WEIGHED_EXPECTED, |x| {
        let mut row = [0.0f32; 30];
        row.copy_from_slice(x);
        scaler.transform(&mut row)?;
        model.predict(&row)
    })
}

/// A detector learned by `kestrel stream` on raw readings: standardised by the scaler its
/// file carries, it scores each row with the host's bits and flags it as the host did
/// (the flag ends each expected line, after the score).
fn check_novelty() -> Result<(), Failure> {
    let model = NoveltyModel::decode_in(NOVELTY, [0.0f32; NoveltyModel::scalars_len(30, 32)])?;
    ensure(model.dim() == 30 && model.centres_len() <= 32, "30 features, at most 32 centres")?;
    ensure(model.threshold().is_some(), "past the warm-up: a threshold")?;
    let envelope = Envelope::parse(NOVELTY)?;
    let scaler = Scaler::from_envelope_in(&envelope, [0.0f32; Scaler::scalars_len(30)])?;
    let scaler = scaler.ok_or(Failure::Check("the model carries a scaler"))?;
    let standardised = |x: &[f32]| -> Result<[f32; 30], Error> {
        let mut row = [0.0f32; 30];
        row.copy_from_slice(x);
        scaler.transform(&mut row)?;
        Ok(row)
    };
    compare(NOVELTY_INPUTS, NOVELTY_EXPECTED, |x| model.score(&standardised(x)?))?;
    let mut flagged = 0;
    for (row, line) in NOVELTY_INPUTS.lines().skip(1).zip(NOVELTY_EXPECTED.lines()) {
        let (x, dim) = features(row)?;
        let flag = model.predict(&standardised(&x[..dim])?)?;
        ensure(line.trim_end().ends_with(if flag == 1.0 { ",1" } else { ",0" }), "the host's flag")?;
        flagged += usize::from(flag == 1.0);
    }
    ensure(flagged > 0 && flagged < ROWS, "both verdicts among the rows")
}

/// A reduced kernel PCA fitted by `kestrel transform`: each row's 3 projections (the
/// expected line's first three bit patterns) as the host computed them.
fn check_kpca() -> Result<(), Failure> {
    const COMPONENTS: usize = 3;
    let envelope = Envelope::parse(KPCA)?;
    let storage = [0.0f32; KernelProjection::scalars_len(10, 16, COMPONENTS)];
    let model = KernelProjection::from_envelope_in(&envelope, storage)?;
    ensure(model.dim() == 10 && model.components() == COMPONENTS, "10 features, 3 components")?;
    ensure(model.centres().len() == 16 * 10, "16 centres")?;
    compare_projections::<_, COMPONENTS>(&model, KPCA_INPUTS, KPCA_EXPECTED)
}

/// Reduced KCCA's two projections (one per view of wine, 16 centres, 2 pairs), decoded
/// into fixed-size arrays: each row's two canonical variates by `KernelProjection::project`
/// have the host's bits; both models carry the same canonical correlations.
fn check_kcca() -> Result<(), Failure> {
    const LEN: usize = KernelProjection::scalars_len(7, 16, 2);
    let decode = |bytes| KernelProjection::from_envelope_in(&Envelope::parse(bytes)?, [0.0f32; LEN]);
    let (u, v) = (decode(KCCA_U)?, decode(KCCA_V)?);
    ensure((u.dim(), v.dim(), u.components(), v.components()) == (6, 7, 2, 2), "6 and 7 features, 2 pairs")?;
    ensure(u.eigenvalues() == v.eigenvalues() && u.eigenvalues()[0] < 1.0, "one set of correlations below 1")?;
    compare_projections::<_, 2>(&u, KCCA_U_INPUTS, KCCA_U_EXPECTED)?;
    compare_projections::<_, 2>(&v, KCCA_V_INPUTS, KCCA_V_EXPECTED)
}

/// Projects every row of `inputs` onto the `K` components of `model` and compares the bits
/// with the first `K` bit patterns of each `expected` line.
fn compare_projections<S: Storage<f32>, const K: usize>(
    model: &KernelProjection<f32, S>,
    inputs: &str,
    expected: &str,
) -> Result<(), Failure> {
    let mut count = 0;
    for (row, line) in inputs.lines().skip(1).zip(expected.lines()) {
        let (x, dim) = features(row)?;
        let mut projected = [0.0f32; K];
        model.project(&x[..dim], &mut projected)?;
        let mut fields = line.split_whitespace();
        for value in projected {
            let bits = fields.next().ok_or(Failure::Check("a bit pattern per component"))?;
            ensure(value.to_bits() == expected_bits(bits)?, "projection has the host's bits")?;
        }
        count += 1;
    }
    ensure(count == ROWS && expected.lines().count() == ROWS, "all 32 rows compared")
}

fn envelopes() -> Result<(), Failure> {
    let models = [
        (SLKL, ModelKind::Slkl),
        (SVM, ModelKind::LinearSvm),
        (RSVM, ModelKind::ReducedSvm),
        (MRRSVM, ModelKind::MapReduceRsvm),
        (NOVELTY, ModelKind::Novelty),
        (KPCA, ModelKind::KernelPca),
        (KCCA_U, ModelKind::KernelPca),
        (KCCA_V, ModelKind::KernelPca),
    ];
    for (bytes, kind) in models {
        let envelope = Envelope::parse(bytes)?;
        ensure(envelope.kind == kind && envelope.scalar == ScalarKind::F32, "kind and f32")?;
    }
    Ok(())
}

/// Decoding then encoding gives back the host's file byte for byte.
/// The committed file is of envelope version 3 (before the feature names section): its
/// model encodes to a version 4 file of the same kind, scalar and model bytes, whose
/// model encodes to the same bytes again.
fn reencode() -> Result<(), Failure> {
    let model = Predictor::decode_in(SLKL, [0.0f32; SLKL_LEN])?;
    let mut out = [0u8; 2048];
    let n = model.encode(&mut out)?;
    let (file, encoded) = (Envelope::parse(SLKL)?, Envelope::parse(&out[..n])?);
    ensure(file == Envelope { payload: file.payload, ..encoded }, "the same kind, scalar and (empty) sections")?;
    ensure(encoded.payload == file.payload, "the same model bytes")?;
    let again = Predictor::decode_in(&out[..n], [0.0f32; SLKL_LEN])?;
    let mut twice = [0u8; 2048];
    let m = again.encode(&mut twice)?;
    ensure(twice[..m] == out[..n], "the same bytes encoded again")
}

fn decoding_errors() -> Result<(), Failure> {
    let mut copy = [0u8; 2048];
    let len = SLKL.len();
    copy[..len].copy_from_slice(SLKL);
    copy[len / 2] ^= 0x10;
    let corrupted = Predictor::decode_in(&copy[..len], [0.0f32; SLKL_LEN]).err();
    ensure(matches!(corrupted, Some(Error::Model(ModelError::ChecksumMismatch { .. }))), "flipped bit: checksum")?;
    let truncated = Predictor::decode_in(&SLKL[..len - 1], [0.0f32; SLKL_LEN]).err();
    ensure(matches!(truncated, Some(Error::Model(ModelError::Truncated { .. }))), "one byte short: truncated")?;
    let foreign = LinearModel::decode_in(SLKL, [0.0f32; SLKL_LEN]).err();
    ensure(foreign == Some(Error::Model(ModelError::WrongKind)), "SLKL bytes as a linear model: wrong kind")?;
    let small = Predictor::decode_in(SLKL, [0.0f32; 8]).err();
    ensure(matches!(small, Some(Error::CapacityExceeded { .. })), "storage too small: capacity")?;
    let garbage = Predictor::decode_in(b"this is not a model at all", [0.0f32; SLKL_LEN]).err();
    ensure(garbage == Some(Error::Model(ModelError::BadMagic)), "garbage: bad magic")
}
