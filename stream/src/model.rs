//! Model files: the bytes of a trained model, and a model loaded from a file whatever its
//! kind and scalar, behind one interface to predict and describe it.
//!
//! The bytes are the core's envelope ([`kestrel_core::model`]): magic, format version,
//! kind, scalar, postcard payload, CRC-32. Loading parses (and checksums) the envelope once
//! and decodes the payload into storage sized by it; a file is read whole, up to
//! [`MAX_FILE_BYTES`].
//!
//! # Examples
//! ```
//! use kestrel_core::dcd::LinearModel;
//! use kestrel_stream::model;
//! # let dir = std::env::temp_dir().join(format!("kestrel-doc-model-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! // w = (1, −1), no bias: the sign of x₀ − x₁.
//! let mut svm = LinearModel::new_in(vec![0.0f64; LinearModel::scalars_len(2, 1)], 2, 1, 0.0)?;
//! svm.weights_mut(0).unwrap().copy_from_slice(&[1.0, -1.0, 0.0]);
//! let path = dir.join("svm.kestrel");
//! kestrel_stream::file::write_atomic(&path, &model::to_bytes(&svm)?)?;
//!
//! let mut loaded = model::read_file(&path)?;
//! let record = kestrel_stream::source::Record { indices: vec![0, 1], values: vec![2.0, 0.5], ..Default::default() };
//! assert_eq!((loaded.predict(&record)?, loaded.info().kind), (1.0, "linear-svm"));
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use kestrel_core::calibration::{self, Sigmoid};
use kestrel_core::dcd::{LinearModel, Row};
use kestrel_core::device_checkpoint::{self, DeviceObject};
use kestrel_core::gp::Posterior;
use kestrel_core::kernel::KernelKind;
use kestrel_core::model::{Encode, Envelope, ModelKind, ScalarKind};
use kestrel_core::novelty::NoveltyModel;
use kestrel_core::reduced_set::{MapReduceModel, ReducedKernelModel};
use kestrel_core::scaler::{Scaler, ScalerSection};
use kestrel_core::slkl::Predictor as SlklModel;
use kestrel_core::{Error, Real};
use serde::Serialize;

use crate::class_names::ClassNames;
use crate::file::{self, FileError};
use crate::limits::{MAX_DIM, MAX_FILE_BYTES};
use crate::source::Record;

/// The model file bytes of `model`, in a buffer of exactly their length.
///
/// # Errors
/// Only if the encoder rejects the model, which it does not for a valid one.
pub fn to_bytes(model: &impl Encode) -> Result<Vec<u8>, Error> {
    let mut bytes = vec![0u8; model.encoded_len()];
    let len = model.encode(&mut bytes)?;
    bytes.truncate(len);
    Ok(bytes)
}

/// The model file bytes of a krr regressor with its posterior ([`kestrel_core::gp`]), in
/// a buffer of exactly their length.
///
/// # Errors
/// `DimensionMismatch` when `posterior` is not `model`'s.
pub fn with_posterior<T: Real>(
    model: &SlklModel<T, Vec<T>>,
    posterior: &Posterior<T, Vec<T>>,
) -> Result<Vec<u8>, Error> {
    let needed = posterior.encoded_len(model);
    if needed == usize::MAX {
        return Err(Error::InvalidParam { name: "posterior" });
    }
    let mut bytes = vec![0u8; needed];
    let len = posterior.encode(model, &mut bytes)?;
    bytes.truncate(len);
    Ok(bytes)
}

/// `bytes`, a model file written without a scaler, with `scaler` inserted
/// (`kestrel_core::model::add_scaler`).
///
/// # Errors
/// As `add_scaler`: `bytes` is not a model of scalar `T`, or has a scaler already.
pub fn with_scaler<T: Real>(bytes: Vec<u8>, scaler: ScalerSection<'_, T>) -> Result<Vec<u8>, Error> {
    with_section(bytes, kestrel_core::model::scaler_len(&scaler), |out, len| {
        kestrel_core::model::add_scaler(out, len, scaler)
    })
}

/// `bytes` with a section of `added` bytes inserted by `insert` (one of the core's
/// `add_*`, given the grown buffer and the model's length; it returns the new length).
fn with_section(
    mut bytes: Vec<u8>,
    added: usize,
    insert: impl FnOnce(&mut [u8], usize) -> Result<usize, Error>,
) -> Result<Vec<u8>, Error> {
    let len = bytes.len();
    bytes.resize(len.saturating_add(added), 0);
    let len = insert(&mut bytes, len)?;
    bytes.truncate(len);
    Ok(bytes)
}

/// Why a model file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// The file could not be read.
    #[error(transparent)]
    File(#[from] FileError),
    /// The bytes are not a valid model (truncated, corrupted, foreign, wrong kind).
    #[error("{path}: {error}")]
    Invalid {
        /// The model file.
        path: PathBuf,
        /// What the core's decoder found.
        error: Error,
    },
    /// The file is another Kestrel file than a model: a checkpoint of `kestrel stream` or
    /// of a device's learner ([`other_kestrel_file`] says what reads it).
    #[error("{}: {what}", path.display())]
    NotAModel {
        /// The file.
        path: PathBuf,
        /// What the file is, and what reads it.
        what: String,
    },
    /// The file holds a kernel projection, which predicts nothing.
    #[error("{}: a kernel PCA model projects rows and predicts nothing: use `kestrel transform --apply`", path.display())]
    Projection {
        /// The model file.
        path: PathBuf,
    },
}

/// Reads and loads the model file at `path`.
///
/// # Errors
/// [`ModelFileError`] when it cannot be read or is not a valid model.
pub fn read_file(path: &Path) -> Result<Box<dyn Predictor>, ModelFileError> {
    let bytes = file::read_bounded(path, MAX_FILE_BYTES)?;
    refuse_other_kestrel_files(path, &bytes)?;
    if Envelope::parse(&bytes).is_ok_and(|envelope| envelope.kind == ModelKind::KernelPca) {
        return Err(ModelFileError::Projection { path: path.to_path_buf() });
    }
    load(&bytes).map_err(|error| ModelFileError::Invalid { path: path.to_path_buf(), error })
}

/// [`describe`] of `bytes`, read from the model file at `path` (named in the errors).
///
/// # Errors
/// [`ModelFileError`] when they are not a valid model.
pub fn describe_read(path: &Path, bytes: &[u8]) -> Result<ModelInfo, ModelFileError> {
    refuse_other_kestrel_files(path, bytes)?;
    describe(bytes).map_err(|error| ModelFileError::Invalid { path: path.to_path_buf(), error })
}

/// [`ModelFileError::NotAModel`] when `bytes` start with the magic of another Kestrel
/// file, so that a checkpoint given for a model is named, not called foreign.
/// A file of text is named too: a data file given for the model (`--model data.csv`).
fn refuse_other_kestrel_files(path: &Path, bytes: &[u8]) -> Result<(), ModelFileError> {
    let text = || {
        is_text(bytes).then(|| {
            "text, not a model file (a data file? a model file is what `kestrel train --out` writes, and data is \
             given with --input)"
                .to_string()
        })
    };
    match other_kestrel_file(bytes).or_else(text) {
        Some(what) => Err(ModelFileError::NotAModel { path: path.to_path_buf(), what }),
        None => Ok(()),
    }
}

/// Whether `bytes` begin with text: their first 512 bytes are UTF-8 (a character cut at the
/// end allowed) without a control character but tabs and line ends, and there is one at
/// least. No model's header is: its magic is followed by the version's zero bytes.
fn is_text(bytes: &[u8]) -> bool {
    let head = bytes.get(..512).unwrap_or(bytes);
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        Err(error) => error.error_len().is_none(),
    };
    let control = head.iter().any(|&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r'));
    !head.is_empty() && utf8 && !control
}

/// What a file that starts with another Kestrel file's magic is, and what reads it: a
/// checkpoint of `kestrel stream` ("KSCK"), or of a learning object of the C ABI ("KSDC",
/// copied off a device); `None` for anything else.
pub fn other_kestrel_file(bytes: &[u8]) -> Option<String> {
    let magic = bytes.get(..4)?;
    if magic == crate::checkpoint::FORMAT.magic {
        return Some(
            "a `kestrel stream` checkpoint, not a model: `kestrel stream --checkpoint FILE --resume` continues its \
             run, and that run's --out writes the model"
                .into(),
        );
    }
    if magic != device_checkpoint::FORMAT.magic {
        return None;
    }
    let what = match bytes.get(6).copied().and_then(DeviceObject::from_tag) {
        Some(DeviceObject::Scaler) => "a checkpoint of a device's kestrel_scaler, not a model: `kestrel import \
             LEARNER.bin --scaler FILE --out MODEL` puts its statistics into the model of the learner it standardised; \
             `kestrel inspect` shows what it holds"
            .to_string(),
        Some(object) => {
            let name = object.c_name();
            format!(
                "a checkpoint of a device's {name}, not a model: `kestrel import FILE --out MODEL` makes it the model \
                 {name}_save would write; `kestrel inspect` shows what it holds"
            )
        }
        None => "a checkpoint of a device's learner (the C library's), not a model".to_string(),
    };
    Some(what)
}

/// What `kestrel inspect` shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelInfo {
    /// `linear-svm`, `slkl`, `rsvm`, `mrrsvm`, `novelty` or `kernel-projection`.
    pub kind: &'static str,
    /// `f32` or `f64`.
    pub scalar: &'static str,
    /// Number of features.
    pub dim: usize,
    /// Centres the model stores (0 for a linear model).
    pub centers: usize,
    /// Size of the model file.
    pub bytes: usize,
    /// The checksum matched (a model that loads always has `true`).
    pub crc_ok: bool,
    /// The kernel, `linear` for a linear model.
    pub kernel: String,
    /// `classifier`, `regressor`, `detector` or `projection`.
    pub task: &'static str,
    /// The model standardises its inputs (its file carries the scaler's statistics).
    pub scaled: bool,
    /// The relevance weights its scaler multiplies the standardised features by (`kestrel
    /// train --relevance`); empty when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub relevance: Vec<f64>,
    /// The names of the classes, name `k` that of label `k` (empty when not named).
    pub class_names: Vec<String>,
    /// The names of the features in the model's order, as the header of its training rows
    /// gave them (empty when not named).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub feature_names: Vec<String>,
    /// A projection's output coordinates (`None` for the models that predict).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub components: Option<usize>,
    /// Bytes the predictive posterior of a kernel ridge regression by the exact solver takes
    /// in memory once loaded, for `predict --std` (`m² + 2m` scalars for `m` centres; `None`
    /// without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub posterior_bytes: Option<usize>,
    /// The classifier gives class probabilities (`predict --probabilities`): its file
    /// carries their sigmoids.
    pub probabilities: bool,
}

impl ModelInfo {
    /// The model in one phrase, as `kestrel inspect` and the header `kestrel export` writes
    /// give it: `rsvm classifier (f32), 2 features, 14 centres, kernel rbf(gamma=0.27), 215
    /// bytes` (`N features (standardised)` for a model that standardises its inputs; no
    /// centres and no kernel for a linear model: `linear-svm classifier (f32), 3 features,
    /// 60 bytes`; `…, with class probabilities, …` for a classifier whose file carries them).
    pub fn summary(&self) -> String {
        let ModelInfo { kind, task, scalar, dim, centers, ref kernel, bytes, .. } = *self;
        let standardised = if self.scaled { " (standardised)" } else { "" };
        // A linear model has neither centres nor a kernel to name.
        let kernel = if centers == 0 { String::new() } else { format!(", {centers} centres, kernel {kernel}") };
        let calibrated = if self.probabilities { ", with class probabilities" } else { "" };
        format!("{kind} {task} ({scalar}), {dim} features{standardised}{kernel}{calibrated}, {bytes} bytes")
    }

    /// The description of a model of scalar `T` — `kind`, `task`, `bytes` long, with its
    /// `scaler` or none — with no classes named and no components; its dimension, centres
    /// and kernel are the caller's to set (0, 0 and empty here).
    fn of<T: Real>(
        kind: &'static str,
        task: &'static str,
        bytes: usize,
        scaler: Option<&Scaler<T, Vec<T>>>,
    ) -> ModelInfo {
        let scalar = scalar_name::<T>();
        let scaled = scaler.is_some();
        let relevance = scaler.map(|s| s.section().weights.iter().map(|w| w.to_f64()).collect()).unwrap_or_default();
        let (dim, centers, kernel, crc_ok, class_names) = (0, 0, String::new(), true, Vec::new());
        ModelInfo {
            kind,
            scalar,
            dim,
            centers,
            bytes,
            crc_ok,
            kernel,
            task,
            scaled,
            relevance,
            class_names,
            feature_names: Vec::new(),
            components: None,
            posterior_bytes: None,
            probabilities: false,
        }
    }
}

/// What `kestrel inspect` shows of the model file `bytes`: any model [`load`] reads, or a
/// kernel projection (`kestrel transform --model`, which predicts nothing and so does not
/// load as a [`Predictor`]).
///
/// # Errors
/// As [`load`], or the core's when a projection's bytes are not valid.
pub fn describe(bytes: &[u8]) -> Result<ModelInfo, Error> {
    let envelope = Envelope::parse(bytes)?;
    if envelope.kind != ModelKind::KernelPca {
        return Ok(load(bytes)?.info());
    }
    match envelope.scalar {
        ScalarKind::F64 => projection_info::<f64>(bytes),
        ScalarKind::F32 => projection_info::<f32>(bytes),
    }
}

/// [`describe`] of a kernel projection of scalar `T`.
fn projection_info<T: Real>(bytes: &[u8]) -> Result<ModelInfo, Error> {
    let crate::batch::kpca::Applied { model: projection, scaler, features } =
        crate::batch::kpca::from_bytes::<T>(bytes)?;
    Ok(ModelInfo {
        feature_names: features,
        dim: projection.dim(),
        centers: projection.centres().len() / projection.dim().max(1),
        kernel: kernel_name(projection.kernel().kind()),
        components: Some(projection.components()),
        ..ModelInfo::of::<T>("kernel-projection", "projection", bytes.len(), scaler.as_ref())
    })
}

/// A model ready to predict.
pub trait Predictor {
    /// The prediction for `record`'s features: a label or a regression value.
    ///
    /// # Errors
    /// A feature index past the model's dimension or a non-finite value.
    fn predict(&mut self, record: &Record) -> Result<f64, Error>;
    /// The description of the model.
    fn info(&self) -> ModelInfo;
    /// `true` for a classifier, `false` for a regressor.
    fn is_classifier(&self) -> bool;
    /// The names of the classes, for a model of named classes.
    fn class_names(&self) -> Option<&ClassNames> {
        None
    }
    /// The names of the features in the model's order (empty when not named): rows whose
    /// header names them are read by these names.
    fn feature_names(&self) -> &[String] {
        &[]
    }
    /// A classifier's decision value for each of its outputs (one output for two classes:
    /// its label is `labels()[1]` when the value is ≥ 0, `labels()[0]` otherwise; one per
    /// class beyond, the largest wins), `None` for a regressor.
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    fn decision_values(&mut self, _record: &Record) -> Result<Option<Vec<f64>>, Error> {
        Ok(None)
    }
    /// A classifier's labels in the order of its outputs (empty for a regressor).
    fn labels(&self) -> Vec<f64> {
        Vec::new()
    }
    /// A novelty detector's score `d²(x)` of `record` and its flag (1 for an anomaly: the
    /// detector's prediction), from one pass over its centres; `None` for the other models.
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    fn novelty(&mut self, _record: &Record) -> Result<Option<(f64, f64)>, Error> {
        Ok(None)
    }
    /// A novelty detector's score `d²(x)` of `record` (also for a model without a
    /// threshold yet), `None` for the other models.
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    fn novelty_score(&mut self, _record: &Record) -> Result<Option<f64>, Error> {
        Ok(None)
    }
    /// A classifier's probability of each of its classes (in the order of
    /// [`labels`](Self::labels)), from the sigmoids its file carries (`kestrel train
    /// --probabilities`); `None` for a model without them.
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    fn probabilities(&mut self, _record: &Record) -> Result<Option<Vec<f64>>, Error> {
        Ok(None)
    }
    /// A krr regressor's prediction and its predictive standard deviation
    /// `√(Var f(x) + λ)` (the latent variance of [`kestrel_core::gp`] plus the noise `λ`:
    /// the spread of a new reading), `None` for a model without a posterior (other
    /// learners, krr models of the cg solver or from before the posterior was stored).
    ///
    /// # Errors
    /// As [`predict`](Self::predict).
    fn predict_with_std(&mut self, _record: &Record) -> Result<Option<(f64, f64)>, Error> {
        Ok(None)
    }
}

/// A model with what its file's sections add: the names of its classes (the labels `0, 1,
/// …` stand for them) and of its features, and the sigmoids of its class probabilities.
struct WithSections {
    model: Box<dyn Predictor>,
    classes: Option<ClassNames>,
    features: Vec<String>,
    /// One sigmoid per decision value ([`kestrel_core::calibration`]), empty without
    /// class probabilities.
    calibration: Vec<Sigmoid>,
}

impl Predictor for WithSections {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        self.model.predict(record)
    }

    fn info(&self) -> ModelInfo {
        let class_names = self.classes.as_ref().map(|names| names.names().to_vec()).unwrap_or_default();
        let probabilities = !self.calibration.is_empty();
        ModelInfo { class_names, feature_names: self.features.clone(), probabilities, ..self.model.info() }
    }

    fn is_classifier(&self) -> bool {
        self.model.is_classifier()
    }

    fn class_names(&self) -> Option<&ClassNames> {
        self.classes.as_ref()
    }

    fn feature_names(&self) -> &[String] {
        &self.features
    }

    fn decision_values(&mut self, record: &Record) -> Result<Option<Vec<f64>>, Error> {
        self.model.decision_values(record)
    }

    fn labels(&self) -> Vec<f64> {
        self.model.labels()
    }

    fn novelty(&mut self, record: &Record) -> Result<Option<(f64, f64)>, Error> {
        self.model.novelty(record)
    }

    fn novelty_score(&mut self, record: &Record) -> Result<Option<f64>, Error> {
        self.model.novelty_score(record)
    }

    fn predict_with_std(&mut self, record: &Record) -> Result<Option<(f64, f64)>, Error> {
        self.model.predict_with_std(record)
    }

    fn probabilities(&mut self, record: &Record) -> Result<Option<Vec<f64>>, Error> {
        if self.calibration.is_empty() {
            return Ok(None);
        }
        let Some(mut values) = self.model.decision_values(record)? else { return Ok(None) };
        // Two classes: one decision value, two probabilities.
        if values.len() == 1 {
            values.push(0.0);
        }
        calibration::probabilities(self.calibration.iter().copied(), &mut values)?;
        Ok(Some(values))
    }
}

/// `model` with what the sections of `envelope` add, if any: names of its classes and
/// features, the sigmoids of its class probabilities.
///
/// # Errors
/// `Error::Model(Payload)` for class names or a calibration on a model that is not a
/// classifier, feature names of another number than its features, or a calibration of
/// another number than its decision values.
fn with_sections(model: Box<dyn Predictor>, envelope: &Envelope<'_>) -> Result<Box<dyn Predictor>, Error> {
    let (classes, features) = (envelope.class_count(), envelope.feature_count());
    let sigmoids = envelope.calibration_count();
    if classes == 0 && features == 0 && sigmoids == 0 {
        return Ok(model);
    }
    let corrupt = Error::Model(kestrel_core::model::ModelError::Payload);
    let classifier = model.is_classifier();
    if (classes > 0 && !classifier) || (features > 0 && features != model.info().dim) {
        return Err(corrupt);
    }
    // A classifier has one decision value for two labels, one per label beyond.
    let outputs = match model.labels().len() {
        2 => 1,
        labels => labels,
    };
    if sigmoids > 0 && (!classifier || sigmoids != outputs) {
        return Err(corrupt);
    }
    let class_names = envelope.class_name_iter().map(str::to_string);
    let classes = (classes > 0).then(|| ClassNames::from_names(class_names));
    let features = envelope.feature_name_iter().map(str::to_string).collect();
    let calibration = envelope.calibration_iter().collect();
    Ok(Box::new(WithSections { model, classes, features, calibration }))
}

/// `bytes`, a classifier's model file without class probabilities, with the sigmoids that
/// give them inserted, one per decision value (`kestrel_core::model::add_calibration`).
///
/// # Errors
/// As `add_calibration`: `bytes` is not a model, has a calibration already, or `sigmoids`
/// is empty or not finite.
pub fn with_calibration(bytes: Vec<u8>, sigmoids: &[Sigmoid]) -> Result<Vec<u8>, Error> {
    with_section(bytes, kestrel_core::model::calibration_len(sigmoids), |out, len| {
        kestrel_core::model::add_calibration(out, len, sigmoids)
    })
}

/// `bytes`, a classifier's model file without class names, with `names` inserted
/// (`kestrel_core::model::add_class_names`).
///
/// # Errors
/// As `add_class_names`: `bytes` is not a model, or has names already.
pub fn with_class_names(bytes: Vec<u8>, names: &ClassNames) -> Result<Vec<u8>, Error> {
    let names: Vec<&str> = names.names().iter().map(String::as_str).collect();
    with_section(bytes, kestrel_core::model::names_len(&names), |out, len| {
        kestrel_core::model::add_class_names(out, len, &names)
    })
}

/// `bytes`, a model file without feature names, with `names` inserted, those of its
/// features in order (`kestrel_core::model::add_feature_names`).
///
/// # Errors
/// `DimensionMismatch` for another number of names than the model's features; as
/// `add_feature_names`: `bytes` is not a model, or has feature names already.
pub fn with_feature_names(bytes: Vec<u8>, names: &[String]) -> Result<Vec<u8>, Error> {
    let dim = describe(&bytes)?.dim;
    if names.len() != dim {
        return Err(Error::DimensionMismatch { expected: dim, got: names.len() });
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    with_section(bytes, kestrel_core::model::names_len(&names), |out, len| {
        kestrel_core::model::add_feature_names(out, len, &names)
    })
}

/// Decodes model file bytes into a predictor of the right kind and scalar.
///
/// # Errors
/// `Error::Model` for bytes that are not a model this build reads.
pub fn load(bytes: &[u8]) -> Result<Box<dyn Predictor>, Error> {
    let envelope = Envelope::parse(bytes)?;
    let size = bytes.len();
    let model: Box<dyn Predictor> = match (envelope.kind, envelope.scalar) {
        (ModelKind::LinearSvm, ScalarKind::F32) => Box::new(Linear::<f32>::decode(&envelope, size)?),
        (ModelKind::LinearSvm, ScalarKind::F64) => Box::new(Linear::<f64>::decode(&envelope, size)?),
        (ModelKind::ReducedSvm, ScalarKind::F32) => Box::new(Reduced::<f32>::decode(&envelope, size)?),
        (ModelKind::ReducedSvm, ScalarKind::F64) => Box::new(Reduced::<f64>::decode(&envelope, size)?),
        (ModelKind::Slkl, ScalarKind::F32) => Box::new(Regressor::<f32>::decode(&envelope, size)?),
        (ModelKind::Slkl, ScalarKind::F64) => Box::new(Regressor::<f64>::decode(&envelope, size)?),
        (ModelKind::MapReduceRsvm, ScalarKind::F32) => Box::new(MapReduce::<f32>::decode(&envelope, size)?),
        (ModelKind::MapReduceRsvm, ScalarKind::F64) => Box::new(MapReduce::<f64>::decode(&envelope, size)?),
        (ModelKind::Novelty, ScalarKind::F32) => Box::new(Novelty::<f32>::decode(&envelope, size)?),
        (ModelKind::Novelty, ScalarKind::F64) => Box::new(Novelty::<f64>::decode(&envelope, size)?),
        _ => return Err(Error::Model(kestrel_core::model::ModelError::WrongKind)),
    };
    with_sections(model, &envelope)
}

/// Storage for the model in `envelope`: postcard writes each scalar in `T::BYTES` bytes,
/// so the payload bounds the scalars it can hold.
pub(crate) fn storage_for<T: Real>(envelope: &Envelope<'_>) -> Vec<T> {
    vec![T::ZERO; envelope.payload.len() / T::BYTES + 1]
}

/// The name of a scalar type.
pub fn scalar_name<T: Real>() -> &'static str {
    if T::BYTES == 4 { "f32" } else { "f64" }
}

/// The scaler a model file carries, if any, checked against the model's dimension.
///
/// # Errors
/// `Error::Model(Payload)` for a scaler of another dimension, or as
/// `Scaler::from_envelope_in`.
pub(crate) fn scaler_for<T: Real>(envelope: &Envelope<'_>, dim: usize) -> Result<Option<Scaler<T, Vec<T>>>, Error> {
    let storage = vec![T::ZERO; Scaler::scalars_len(envelope.scaler.len() / T::BYTES)];
    let scaler = Scaler::from_envelope_in(envelope, storage)?;
    if scaler.as_ref().is_some_and(|s| s.dim() != dim) {
        return Err(Error::Model(kestrel_core::model::ModelError::Payload));
    }
    Ok(scaler)
}

/// `record` as the dense row a model of `dense.len()` features reads: standardised when
/// the model has a scaler.
fn dense_row<'a, T: Real>(
    record: &Record,
    scaler: Option<&Scaler<T, Vec<T>>>,
    dense: &'a mut [T],
) -> Result<&'a [T], Error> {
    record.write_dense(dense)?;
    if let Some(scaler) = scaler {
        scaler.transform(dense)?;
    }
    Ok(dense)
}

/// A linear SVM with a buffer for the record's values in its scalar (a sparse row), or,
/// for a model that standardises, a dense row.
struct Linear<T> {
    model: LinearModel<T, Vec<T>>,
    scaler: Option<Scaler<T, Vec<T>>>,
    values: Vec<T>,
    bytes: usize,
}

impl<T: Real> Linear<T> {
    fn decode(envelope: &Envelope<'_>, bytes: usize) -> Result<Self, Error> {
        let model = LinearModel::from_envelope_in(envelope, storage_for(envelope))?;
        let scaler = scaler_for(envelope, model.dim())?;
        // The scaler's storage bounds the dimension: its dense row is no larger.
        let values = if scaler.is_some() { vec![T::ZERO; model.dim()] } else { Vec::new() };
        Ok(Linear { model, scaler, values, bytes })
    }
}

/// `record` as a linear model of `dim` features reads it: standardised into the dense row
/// `values` when the model has a scaler, else its values in `T` (into `values`) beside its
/// indices, zeros stated past `dim` left out as [`Record::write_dense`] leaves them.
///
/// # Errors
/// `IndexOutOfRange` for a nonzero value past `dim`.
fn linear_row<'a, T: Real>(
    scaler: Option<&Scaler<T, Vec<T>>>,
    values: &'a mut Vec<T>,
    record: &'a Record,
    dim: usize,
) -> Result<Row<'a, T>, Error> {
    if scaler.is_some() {
        return Ok(Row::Dense(dense_row(record, scaler, values)?));
    }
    let within = record.within(dim)?;
    values.clear();
    values.extend(record.values.iter().take(within).map(|&v| T::from_f64(v)));
    Ok(Row::Sparse { indices: record.indices.get(..within).unwrap_or_default(), values })
}

impl<T: Real> Predictor for Linear<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        let row = linear_row(self.scaler.as_ref(), &mut self.values, record, self.model.dim())?;
        Ok(self.model.predict(row)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            dim: self.model.dim(),
            kernel: "linear".into(),
            ..ModelInfo::of::<T>("linear-svm", "classifier", self.bytes, self.scaler.as_ref())
        }
    }

    fn is_classifier(&self) -> bool {
        true
    }

    fn decision_values(&mut self, record: &Record) -> Result<Option<Vec<f64>>, Error> {
        let row = linear_row(self.scaler.as_ref(), &mut self.values, record, self.model.dim())?;
        let decisions = (0..self.model.outputs()).map(|c| self.model.decision(c, row).map(Real::to_f64));
        Ok(Some(decisions.collect::<Result<_, _>>()?))
    }

    fn labels(&self) -> Vec<f64> {
        self.model.labels().iter().map(|l| l.to_f64()).collect()
    }
}

/// How a kernel model reads a record: as a dense row, standardised when the model file
/// carries a scaler.
struct DenseInput<T> {
    scaler: Option<Scaler<T, Vec<T>>>,
    dense: Vec<T>,
}

impl<T: Real> DenseInput<T> {
    /// The input of a model of `dim` features in `envelope`.
    ///
    /// # Errors
    /// As [`scaler_for`] and [`dense_buffer`].
    fn new(envelope: &Envelope<'_>, dim: usize) -> Result<Self, Error> {
        Ok(DenseInput { scaler: scaler_for(envelope, dim)?, dense: dense_buffer(dim)? })
    }

    /// `record` as the model reads it ([`dense_row`]).
    fn row(&mut self, record: &Record) -> Result<&[T], Error> {
        dense_row(record, self.scaler.as_ref(), &mut self.dense)
    }

    fn dim(&self) -> usize {
        self.dense.len()
    }
}

/// A dense row for a kernel model of `dim` features. Its payload bounds its centres, but a
/// model without centres could claim any dimension, and prediction needs a dense row of it.
///
/// # Errors
/// `CapacityExceeded` beyond [`MAX_DIM`] (a corrupted or hostile file), before allocating.
fn dense_buffer<T: Real>(dim: usize) -> Result<Vec<T>, Error> {
    if dim > MAX_DIM {
        return Err(Error::CapacityExceeded { needed: dim, capacity: MAX_DIM });
    }
    Ok(vec![T::ZERO; dim])
}

/// An SLKL regressor and its input.
struct Regressor<T> {
    model: SlklModel<T, Vec<T>>,
    posterior: Option<Posterior<T, Vec<T>>>,
    input: DenseInput<T>,
    bytes: usize,
}

impl<T: Real> Regressor<T> {
    fn decode(envelope: &Envelope<'_>, bytes: usize) -> Result<Self, Error> {
        let model = SlklModel::from_envelope_in(envelope, storage_for(envelope))?;
        let input = DenseInput::new(envelope, model.dim())?;
        // A posterior of m centres holds m² scalars in the payload: no larger allocation
        // is made for a file that cannot hold one.
        let posterior = match Posterior::bytes::<T>(model.len()) <= envelope.payload.len() {
            true => Posterior::from_envelope_in(envelope, vec![T::ZERO; Posterior::scalars_len(model.len())])?,
            false => None,
        };
        Ok(Regressor { model, posterior, input, bytes })
    }
}

impl<T: Real> Predictor for Regressor<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        let row = self.input.row(record)?;
        Ok(self.model.predict(row)?.to_f64())
    }

    fn predict_with_std(&mut self, record: &Record) -> Result<Option<(f64, f64)>, Error> {
        let Some(posterior) = self.posterior.as_mut() else { return Ok(None) };
        let row = self.input.row(record)?;
        let (f, variance) = posterior.predict_with_variance(&self.model, row)?;
        Ok(Some((f.to_f64(), (variance + posterior.noise()).sqrt().to_f64())))
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            dim: self.model.dim(),
            centers: self.model.len(),
            kernel: kernel_name(self.model.kernel().kind()),
            posterior_bytes: self.posterior.as_ref().map(|_| Posterior::bytes::<T>(self.model.len())),
            ..ModelInfo::of::<T>("slkl", "regressor", self.bytes, self.input.scaler.as_ref())
        }
    }

    fn is_classifier(&self) -> bool {
        false
    }
}

/// A reduced-kernel SVM and its input.
struct Reduced<T> {
    model: ReducedKernelModel<T, Vec<T>>,
    input: DenseInput<T>,
    bytes: usize,
}

impl<T: Real> Reduced<T> {
    fn decode(envelope: &Envelope<'_>, bytes: usize) -> Result<Self, Error> {
        let model = ReducedKernelModel::from_envelope_in(envelope, storage_for(envelope))?;
        Ok(Reduced { input: DenseInput::new(envelope, model.dim())?, model, bytes })
    }
}

impl<T: Real> Predictor for Reduced<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        let row = self.input.row(record)?;
        Ok(self.model.predict(row)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            dim: self.model.dim(),
            centers: self.model.centres_len(),
            kernel: kernel_name(self.model.kernel().kind()),
            ..ModelInfo::of::<T>("rsvm", "classifier", self.bytes, self.input.scaler.as_ref())
        }
    }

    fn is_classifier(&self) -> bool {
        true
    }

    fn decision_values(&mut self, record: &Record) -> Result<Option<Vec<f64>>, Error> {
        let row = self.input.row(record)?;
        let mut values = vec![T::ZERO; self.model.outputs()];
        self.model.decision_values(row, &mut values)?;
        Ok(Some(values.into_iter().map(Real::to_f64).collect()))
    }

    fn labels(&self) -> Vec<f64> {
        self.model.labels().iter().map(|l| l.to_f64()).collect()
    }
}

/// A MapReduce RSVM: its payload, read again at each prediction by the core's
/// [`MapReduceModel`] (each part decoded into scratch in turn, as a device does), and its
/// input.
struct MapReduce<T> {
    payload: Vec<u8>,
    input: DenseInput<T>,
    scratch: Vec<T>,
    labels: Vec<f64>,
    outputs: usize,
    centres: usize,
    bytes: usize,
}

impl<T: Real> MapReduce<T> {
    fn decode(envelope: &Envelope<'_>, bytes: usize) -> Result<Self, Error> {
        let model = MapReduceModel::<T>::from_envelope(envelope)?;
        let mut centres = 0;
        let mut labels = Vec::new();
        for (kind, nested) in model.models() {
            if kind == ModelKind::ReducedSvm {
                centres += ReducedKernelModel::from_envelope_in(&nested, storage_for::<T>(&nested))?.centres_len();
            } else {
                let final_model = LinearModel::from_envelope_in(&nested, storage_for::<T>(&nested))?;
                labels = final_model.labels().iter().map(|l| l.to_f64()).collect();
            }
        }
        let input = DenseInput::new(envelope, model.dim())?;
        let (scratch, outputs) = (vec![T::ZERO; model.scratch_len()], model.outputs());
        Ok(MapReduce { payload: envelope.payload.to_vec(), input, scratch, labels, outputs, centres, bytes })
    }

    /// The model, from its payload (checked when the file was loaded).
    fn model(payload: &[u8]) -> Result<MapReduceModel<'_, T>, Error> {
        let scalar = ScalarKind::of::<T>();
        let envelope = Envelope {
            kind: ModelKind::MapReduceRsvm,
            scalar,
            scaler: &[],
            class_names: &[],
            feature_names: &[],
            calibration: &[],
            payload,
        };
        MapReduceModel::from_envelope(&envelope)
    }
}

impl<T: Real> Predictor for MapReduce<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        let row = self.input.row(record)?;
        Ok(Self::model(&self.payload)?.predict_in(row, &mut self.scratch)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        let parts = Self::model(&self.payload).map_or(0, |m| m.parts());
        ModelInfo {
            dim: self.input.dim(),
            centers: self.centres,
            kernel: format!("{parts} reduced-kernel SVMs, linear SVM on their decision values"),
            ..ModelInfo::of::<T>("mrrsvm", "classifier", self.bytes, self.input.scaler.as_ref())
        }
    }

    fn is_classifier(&self) -> bool {
        true
    }

    fn decision_values(&mut self, record: &Record) -> Result<Option<Vec<f64>>, Error> {
        let row = self.input.row(record)?;
        let mut values = vec![T::ZERO; self.outputs];
        Self::model(&self.payload)?.decision_values_in(row, &mut self.scratch, &mut values)?;
        Ok(Some(values.into_iter().map(Real::to_f64).collect()))
    }

    fn labels(&self) -> Vec<f64> {
        self.labels.clone()
    }
}

/// A novelty detector and its input.
struct Novelty<T> {
    model: NoveltyModel<T, Vec<T>>,
    input: DenseInput<T>,
    bytes: usize,
}

impl<T: Real> Novelty<T> {
    fn decode(envelope: &Envelope<'_>, bytes: usize) -> Result<Self, Error> {
        let storage = vec![T::ZERO; NoveltyModel::scalars_in::<T>(envelope)?];
        let model = NoveltyModel::from_envelope_in(envelope, storage)?;
        Ok(Novelty { input: DenseInput::new(envelope, model.dim())?, model, bytes })
    }
}

impl<T: Real> Predictor for Novelty<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        let row = self.input.row(record)?;
        Ok(self.model.predict(row)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            dim: self.model.dim(),
            centers: self.model.centres_len(),
            kernel: kernel_name(self.model.kernel().kind()),
            ..ModelInfo::of::<T>("novelty", "detector", self.bytes, self.input.scaler.as_ref())
        }
    }

    fn is_classifier(&self) -> bool {
        false
    }

    fn novelty_score(&mut self, record: &Record) -> Result<Option<f64>, Error> {
        let row = self.input.row(record)?;
        Ok(Some(self.model.score(row)?.to_f64()))
    }

    fn novelty(&mut self, record: &Record) -> Result<Option<(f64, f64)>, Error> {
        let row = self.input.row(record)?;
        let score = self.model.score(row)?;
        Ok(Some((score.to_f64(), self.model.flag(score)?.to_f64())))
    }
}

/// A kernel as text, e.g. `rbf(gamma=0.5)`.
pub fn kernel_name<T: Real>(kind: KernelKind<T>) -> String {
    match kind {
        KernelKind::Rbf { gamma } => format!("rbf(gamma={gamma})"),
        KernelKind::Laplacian { gamma } => format!("laplacian(gamma={gamma})"),
        KernelKind::Polynomial { degree, gamma, coef0 } => {
            format!("poly(degree={degree}, gamma={gamma}, coef0={coef0})")
        }
        KernelKind::Linear => "linear".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::Kernel;

    #[test]
    fn a_model_claiming_a_huge_dimension_is_refused_before_allocating() {
        // An SLKL model with no centres and dim = 2³² − 1 (found by fuzzing the decoder).
        let kind = Kernel::<f64>::rbf(0.5).unwrap().kind();
        let payload = ((u32::MAX, 0u32, 1.0f64, kind), &[] as &[f64], &[] as &[f64]);
        let mut bytes = [0u8; 128];
        let n = kestrel_core::model::encode(ModelKind::Slkl, ScalarKind::F64, &payload, &mut bytes).unwrap();
        let error = load(&bytes[..n]).err().unwrap();
        assert_eq!(error, Error::CapacityExceeded { needed: u32::MAX as usize, capacity: MAX_DIM });
    }
}
