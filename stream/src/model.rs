//! A model loaded from a file, whatever its kind and scalar: one interface to predict
//! and describe it.

use kestrel_core::dcd::{LinearModel, Row};
use kestrel_core::kernel::KernelKind;
use kestrel_core::model::{Envelope, ModelKind, ScalarKind};
use kestrel_core::reduced_set::ReducedKernelModel;
use kestrel_core::slkl::Predictor as SlklModel;
use kestrel_core::{Error, Real};
use serde::Serialize;

use crate::source::Record;

/// What `kestrel inspect` shows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ModelInfo {
    /// `linear-svm`, `slkl` or `rsvm`.
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
    /// `classifier` or `regressor`.
    pub task: &'static str,
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
}

/// Decodes model file bytes into a predictor of the right kind and scalar.
///
/// # Errors
/// `Error::Model` for bytes that are not a model this build reads.
pub fn load(bytes: &[u8]) -> Result<Box<dyn Predictor>, Error> {
    let envelope = Envelope::parse(bytes)?;
    Ok(match (envelope.kind, envelope.scalar) {
        (ModelKind::LinearSvm, ScalarKind::F32) => Box::new(Linear::<f32>::decode(bytes, envelope.payload.len())?),
        (ModelKind::LinearSvm, ScalarKind::F64) => Box::new(Linear::<f64>::decode(bytes, envelope.payload.len())?),
        (ModelKind::ReducedSvm, ScalarKind::F32) => Box::new(Reduced::<f32>::decode(bytes, envelope.payload.len())?),
        (ModelKind::ReducedSvm, ScalarKind::F64) => Box::new(Reduced::<f64>::decode(bytes, envelope.payload.len())?),
        (ModelKind::Slkl, ScalarKind::F32) => Box::new(Regressor::<f32>::decode(bytes, envelope.payload.len())?),
        (ModelKind::Slkl, ScalarKind::F64) => Box::new(Regressor::<f64>::decode(bytes, envelope.payload.len())?),
        _ => return Err(Error::Model(kestrel_core::model::ModelError::WrongKind)),
    })
}

/// Storage for a model whose payload has `payload_len` bytes: postcard writes each scalar
/// in `T::BYTES` bytes, so the payload bounds the scalars it can hold.
fn storage_for<T: Real>(payload_len: usize) -> Vec<T> {
    vec![T::ZERO; payload_len / T::BYTES + 1]
}

/// The name of a scalar type.
pub fn scalar_name<T: Real>() -> &'static str {
    if T::BYTES == 4 { "f32" } else { "f64" }
}

/// A linear SVM with a buffer for the record's values in its scalar.
struct Linear<T> {
    model: LinearModel<T, Vec<T>>,
    values: Vec<T>,
    bytes: usize,
}

impl<T: Real> Linear<T> {
    fn decode(bytes: &[u8], payload_len: usize) -> Result<Self, Error> {
        let model = LinearModel::decode_in(bytes, storage_for(payload_len))?;
        Ok(Linear { model, values: Vec::new(), bytes: bytes.len() })
    }
}

impl<T: Real> Predictor for Linear<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        self.values.clear();
        self.values.extend(record.values.iter().map(|&v| T::from_f64(v)));
        let row = Row::Sparse { indices: &record.indices, values: &self.values };
        Ok(self.model.predict(row)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            kind: "linear-svm",
            scalar: scalar_name::<T>(),
            dim: self.model.dim(),
            centers: 0,
            bytes: self.bytes,
            crc_ok: true,
            kernel: "linear".into(),
            task: "classifier",
        }
    }

    fn is_classifier(&self) -> bool {
        true
    }
}

/// The most features a kernel model may declare. Its payload bounds its centres, but a model
/// without centres could claim any dimension, and prediction needs a dense row of it.
pub const MAX_DIM: usize = 1 << 24;

/// A dense row for a model of `dim` features.
///
/// # Errors
/// `CapacityExceeded` beyond [`MAX_DIM`] (a corrupted or hostile file), before allocating.
fn dense_buffer<T: Real>(dim: usize) -> Result<Vec<T>, Error> {
    if dim > MAX_DIM {
        return Err(Error::CapacityExceeded { needed: dim, capacity: MAX_DIM });
    }
    Ok(vec![T::ZERO; dim])
}

/// An SLKL regressor with a dense buffer for the record's features.
struct Regressor<T> {
    model: SlklModel<T, Vec<T>>,
    dense: Vec<T>,
    bytes: usize,
}

impl<T: Real> Regressor<T> {
    fn decode(bytes: &[u8], payload_len: usize) -> Result<Self, Error> {
        let model = SlklModel::decode_in(bytes, storage_for(payload_len))?;
        Ok(Regressor { dense: dense_buffer(model.dim())?, model, bytes: bytes.len() })
    }
}

impl<T: Real> Predictor for Regressor<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        record.write_dense(&mut self.dense)?;
        Ok(self.model.predict(&self.dense)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            kind: "slkl",
            scalar: scalar_name::<T>(),
            dim: self.model.dim(),
            centers: self.model.len(),
            bytes: self.bytes,
            crc_ok: true,
            kernel: kernel_name(self.model.kernel().kind()),
            task: "regressor",
        }
    }

    fn is_classifier(&self) -> bool {
        false
    }
}

/// A reduced-kernel SVM with a dense buffer for the record's features.
struct Reduced<T> {
    model: ReducedKernelModel<T, Vec<T>>,
    dense: Vec<T>,
    bytes: usize,
}

impl<T: Real> Reduced<T> {
    fn decode(bytes: &[u8], payload_len: usize) -> Result<Self, Error> {
        let model = ReducedKernelModel::decode_in(bytes, storage_for(payload_len))?;
        Ok(Reduced { dense: dense_buffer(model.dim())?, model, bytes: bytes.len() })
    }
}

impl<T: Real> Predictor for Reduced<T> {
    fn predict(&mut self, record: &Record) -> Result<f64, Error> {
        self.dense.fill(T::ZERO);
        for (&j, &v) in record.indices.iter().zip(&record.values) {
            let dim = self.dense.len();
            *self.dense.get_mut(j as usize).ok_or(Error::IndexOutOfRange { index: j as usize, len: dim })? =
                T::from_f64(v);
        }
        Ok(self.model.predict(&self.dense)?.to_f64())
    }

    fn info(&self) -> ModelInfo {
        ModelInfo {
            kind: "rsvm",
            scalar: scalar_name::<T>(),
            dim: self.model.dim(),
            centers: self.model.centres_len(),
            bytes: self.bytes,
            crc_ok: true,
            kernel: kernel_name(self.model.kernel().kind()),
            task: "classifier",
        }
    }

    fn is_classifier(&self) -> bool {
        true
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
