//! [`MapReduceModel`]: the MapReduce RSVM's model (seed 003 §5, Algorithms 4-5): `P`
//! reduced-kernel models, one per part of the data, and a linear model on their decision
//! values.
//!
//! Prediction is Algorithm 5: encode `x` by the decision values of the part models,
//! `x_new = [h_1(x), …, h_P(x)]` (each part's `outputs` values, in part order: one for a
//! binary part, one per class for a one-vs-rest part), then predict with the final linear
//! model on `x_new`. Training (Algorithm 4) is the host's (`kestrel-stream`).
//!
//! Payload (postcard): `(dim: u32, parts P: u32, width: u32)`, then `P` byte strings, each
//! the payload of a [`ReducedKernelModel`] file, then one byte string, the payload of the
//! final [`LinearModel`] file over `width = Σ outputs_i` features. The envelope's checksum
//! covers them all, so the nested payloads carry no header of their own.
//!
//! **Memory**: the model borrows its bytes. Predicting decodes one part at a time into
//! caller scratch of [`MapReduceModel::scratch_len`] scalars: the encoded row (`width`)
//! and the largest part (or the final model), so a device holds one part, not `P`.

use crate::dcd::{LinearModel, Row};
use crate::error::check_len;
use crate::kernel::KernelKind;
use crate::model::{Envelope, ModelError, ModelKind, ScalarKind, u32_field};
use crate::storage::check_capacity;
use crate::{Error, Real};

use super::ReducedKernelModel;

/// Header of the payload: `(dim, parts, width)`.
type Shape = (u32, u32, u32);

/// An encoded row and the final model, both in a caller's scratch.
type Encoded<'s, T> = (&'s [T], LinearModel<T, &'s mut [T]>);

/// The parts and the final model of a MapReduce RSVM model file, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct MapReduceModel<'a, T> {
    dim: usize,
    parts: usize,
    width: usize,
    /// The `P` part payloads (postcard byte strings) followed by the final one.
    nested: &'a [u8],
    scratch: usize,
    outputs: usize,
    marker: core::marker::PhantomData<T>,
}

impl<'a, T: Real> MapReduceModel<'a, T> {
    /// Reads the model in an envelope already parsed (and so checked), checking every
    /// nested model's shape: `P ≥ 1` parts of dimension `dim`, their outputs summing to
    /// the final model's dimension, and no nested model claiming more scalars than its
    /// bytes hold (so [`scratch_len`](Self::scratch_len) is bounded by the payload).
    ///
    /// # Errors
    /// `Error::Model(WrongKind | WrongScalar)` for another model; `Error::Model(Payload)`
    /// for a payload that does not hold such models.
    pub fn from_envelope(envelope: &Envelope<'a>) -> Result<Self, Error> {
        envelope.expect(ModelKind::MapReduceRsvm, ScalarKind::of::<T>())?;
        let corrupt = Error::Model(ModelError::Payload);
        let ((dim, parts, width), nested) =
            postcard::take_from_bytes::<Shape>(envelope.payload).map_err(|_| corrupt)?;
        let (dim, parts, width) = (dim as usize, parts as usize, width as usize);
        if dim == 0 || parts == 0 || width == 0 {
            return Err(corrupt);
        }
        let mut model =
            MapReduceModel { dim, parts, width, nested, scratch: 0, outputs: 0, marker: Default::default() };
        let (mut largest, mut outputs_sum, mut rest) = (0usize, 0usize, nested);
        for _ in 0..parts {
            let (part, after) = postcard::take_from_bytes::<&[u8]>(rest).map_err(|_| corrupt)?;
            let ((part_dim, centres, outputs, _), _) =
                postcard::take_from_bytes::<(u32, u32, u32, KernelKind<T>)>(part).map_err(|_| corrupt)?;
            let (centres, outputs) = (centres as usize, outputs as usize);
            let scalars = ReducedKernelModel::scalars_len(dim, centres, outputs);
            // Each scalar takes T::BYTES bytes: a part cannot hold more than its bytes do.
            let held = scalars.saturating_mul(T::BYTES) <= part.len();
            if part_dim as usize != dim || centres == 0 || outputs == 0 || outputs == 2 || !held {
                return Err(corrupt);
            }
            largest = largest.max(scalars);
            outputs_sum = outputs_sum.saturating_add(outputs);
            rest = after;
        }
        let (last, trailing) = postcard::take_from_bytes::<&[u8]>(rest).map_err(|_| corrupt)?;
        let ((final_dim, outputs), _) = postcard::take_from_bytes::<(u32, u32)>(last).map_err(|_| corrupt)?;
        let outputs = outputs as usize;
        let scalars = LinearModel::scalars_len(width, outputs);
        let held = scalars.saturating_mul(T::BYTES) <= last.len();
        let shaped = final_dim as usize == width && outputs_sum == width && outputs != 0 && outputs != 2;
        if !shaped || !held || !trailing.is_empty() {
            return Err(corrupt);
        }
        largest = largest.max(scalars);
        model.scratch = largest.saturating_add(width);
        model.outputs = outputs;
        Ok(model)
    }

    /// Features of an input row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of parts `P`.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// Features of the encoded row `x_new`: the parts' outputs, summed.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Outputs of the final linear model (1 for two classes, `k` one-vs-rest).
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Scalars of scratch [`predict_in`](Self::predict_in) and
    /// [`decision_values_in`](Self::decision_values_in) take.
    pub fn scratch_len(&self) -> usize {
        self.scratch
    }

    /// The envelopes of the `P` part models, in order, then that of the final model.
    pub fn models(&self) -> impl Iterator<Item = (ModelKind, Envelope<'a>)> + use<'a, T> {
        let (mut rest, total) = (self.nested, self.parts + 1);
        (0..total).map_while(move |i| {
            let (payload, after) = postcard::take_from_bytes::<&[u8]>(rest).ok()?;
            rest = after;
            let kind = if i < total - 1 { ModelKind::ReducedSvm } else { ModelKind::LinearSvm };
            let envelope = Envelope {
                kind,
                scalar: ScalarKind::of::<T>(),
                scaler: &[],
                class_names: &[],
                feature_names: &[],
                calibration: &[],
                payload,
            };
            Some((kind, envelope))
        })
    }

    /// The final model's decision values of `x` into `out` (`outputs` values): Algorithm 5's
    /// encoding, then the linear model.
    ///
    /// # Errors
    /// `DimensionMismatch` for `x` of another length than `dim` or `out` of another than
    /// `outputs`; `NonFinite` for NaN/∞ in `x` (or a decision that overflows);
    /// `CapacityExceeded` when `scratch` is shorter than
    /// [`scratch_len`](Self::scratch_len); `Error::Model(Payload)` for a nested model that
    /// does not decode.
    pub fn decision_values_in(&self, x: &[T], scratch: &mut [T], out: &mut [T]) -> Result<(), Error> {
        check_len(self.outputs, out.len())?;
        let (row, final_model) = self.encode_with_final(x, scratch)?;
        for (c, value) in out.iter_mut().enumerate() {
            *value = final_model.decision(c, Row::Dense(row))?;
        }
        Ok(())
    }

    /// The predicted label of `x` (the final model's: sign for one output, argmax otherwise).
    ///
    /// # Errors
    /// As [`decision_values_in`](Self::decision_values_in).
    pub fn predict_in(&self, x: &[T], scratch: &mut [T]) -> Result<T, Error> {
        let (row, final_model) = self.encode_with_final(x, scratch)?;
        final_model.predict(Row::Dense(row))
    }

    /// `x_new` of `x` (Algorithm 5's encoding) and the final model, both in `scratch`.
    fn encode_with_final<'s>(&self, x: &[T], scratch: &'s mut [T]) -> Result<Encoded<'s, T>, Error> {
        check_len(self.dim, x.len())?;
        check_capacity(self.scratch, scratch.len())?;
        let corrupt = Error::Model(ModelError::Payload);
        let (row, models) = scratch.split_at_mut(self.width);
        // One walk over the nested models: the parts fill x_new, one at a time in `models`;
        // the last is the final model.
        let (mut filled, mut last) = (0, None);
        for (kind, envelope) in self.models() {
            if kind == ModelKind::LinearSvm {
                last = Some(envelope);
                break;
            }
            let part = ReducedKernelModel::from_envelope_in(&envelope, &mut *models)?;
            part.decision_values(x, row.get_mut(filled..filled + part.outputs()).ok_or(corrupt)?)?;
            filled += part.outputs();
        }
        let final_model = LinearModel::from_envelope_in(&last.ok_or(corrupt)?, models)?;
        Ok((row, final_model))
    }
}

/// Writes a MapReduce RSVM model file into `out` from the payloads of its part models'
/// files and of the final model's file (each [`Envelope::payload`] of a file the model's
/// `encode` wrote); returns its length.
///
/// # Errors
/// `InvalidParam { name: "parts" }` for no parts; `InvalidParam` for sizes beyond `u32`;
/// `CapacityExceeded` when `out` is too small.
pub fn encode<T: Real>(
    dim: usize,
    width: usize,
    parts: &[&[u8]],
    final_model: &[u8],
    out: &mut [u8],
) -> Result<usize, Error> {
    if parts.is_empty() {
        return Err(Error::InvalidParam { name: "parts" });
    }
    let shape = (u32_field(dim, "dim")?, u32_field(parts.len(), "parts")?, u32_field(width, "width")?);
    crate::model::encode(ModelKind::MapReduceRsvm, ScalarKind::of::<T>(), &(shape, Nested(parts), final_model), out)
}

/// Bytes [`encode`] writes for these payloads.
///
/// # Errors
/// As [`encode`], for the sizes.
pub fn encoded_len(dim: usize, width: usize, parts: &[&[u8]], final_model: &[u8]) -> Result<usize, Error> {
    let shape = (u32_field(dim, "dim")?, u32_field(parts.len(), "parts")?, u32_field(width, "width")?);
    crate::model::encoded_len(&(shape, Nested(parts), final_model))
}

/// Byte strings back to back, without a count (the shape holds it).
struct Nested<'a>(&'a [&'a [u8]]);

impl serde::Serialize for Nested<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut tuple = serializer.serialize_tuple(self.0.len())?;
        for part in self.0 {
            tuple.serialize_element(part)?;
        }
        tuple.end()
    }
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Kernel;

    /// A part model on the line: `h(x) = u₀k(x, c₀) + u₁k(x, c₁) + b` per output.
    fn part<T: Real>(centres: [f64; 2], outputs: usize, shift: f64) -> ReducedKernelModel<T, Vec<T>> {
        let len = ReducedKernelModel::scalars_len(1, 2, outputs);
        let mut model =
            ReducedKernelModel::new_in(vec![T::ZERO; len], Kernel::rbf(T::from_f64(0.5)).unwrap(), 1, 2, outputs)
                .unwrap();
        model.centres_mut().copy_from_slice(&centres.map(T::from_f64));
        for c in 0..outputs {
            let u = [1.0 + c as f64, -1.0 + shift, 0.1 * c as f64 - shift].map(T::from_f64);
            model.coefficients_mut(c).unwrap().copy_from_slice(&u);
        }
        model
    }

    fn payload(file: &[u8]) -> &[u8] {
        Envelope::parse(file).unwrap().payload
    }

    /// Two parts (one binary, one with three outputs) and a three-class final model:
    /// predictions are the final model's on the parts' decision values.
    fn predicts_by_algorithm_5<T: Real>() {
        let parts = [part::<T>([-1.0, 1.0], 1, 0.2), part::<T>([0.0, 2.0], 3, -0.3)];
        let mut final_model = LinearModel::new_in(vec![T::ZERO; LinearModel::scalars_len(4, 3)], 4, 3, T::ONE).unwrap();
        for c in 0..3 {
            let w = [1.0 - c as f64, 0.5 * c as f64, -0.25, 0.75 - 0.5 * c as f64].map(T::from_f64);
            final_model.set_weights(c, &w, T::from_f64(0.1 * c as f64)).unwrap();
        }
        final_model.labels_mut().copy_from_slice(&[7.0, 8.0, 9.0].map(T::from_f64));
        let files: Vec<Vec<u8>> = parts
            .iter()
            .map(|p| {
                let mut out = vec![0u8; p.encoded_len()];
                p.encode(&mut out).unwrap();
                out
            })
            .collect();
        let mut final_file = vec![0u8; final_model.encoded_len()];
        final_model.encode(&mut final_file).unwrap();
        let part_payloads: Vec<&[u8]> = files.iter().map(|f| payload(f)).collect();
        let len = encoded_len(1, 4, &part_payloads, payload(&final_file)).unwrap();
        let mut file = vec![0u8; len];
        assert_eq!(encode::<T>(1, 4, &part_payloads, payload(&final_file), &mut file), Ok(len));
        let envelope = Envelope::parse(&file).unwrap();
        let model = MapReduceModel::<T>::from_envelope(&envelope).unwrap();
        assert_eq!((model.dim(), model.parts(), model.width(), model.outputs()), (1, 2, 4, 3));
        let mut scratch = vec![T::ZERO; model.scratch_len()];
        for x in [-2.0, -0.5, 0.0, 0.7, 1.9, 3.0] {
            let x = [T::from_f64(x)];
            let mut row = [T::ZERO; 4];
            parts[0].decision_values(&x, &mut row[..1]).unwrap();
            parts[1].decision_values(&x, &mut row[1..]).unwrap();
            assert_eq!(model.predict_in(&x, &mut scratch), final_model.predict(Row::Dense(&row)));
            let mut values = [T::ZERO; 3];
            model.decision_values_in(&x, &mut scratch, &mut values).unwrap();
            for (c, v) in values.iter().enumerate() {
                assert_eq!(Ok(*v), final_model.decision(c, Row::Dense(&row)));
            }
        }
        // Bad input and short scratch are errors.
        let short = model.scratch_len() - 1;
        assert!(matches!(model.predict_in(&[T::ONE], &mut scratch[..short]), Err(Error::CapacityExceeded { .. })));
        assert_eq!(
            model.predict_in(&[T::ONE, T::ONE], &mut scratch),
            Err(Error::DimensionMismatch { expected: 1, got: 2 })
        );
        assert_eq!(model.predict_in(&[T::from_f64(f64::NAN)], &mut scratch), Err(Error::NonFinite));
        // A final model over another width, or no parts, is not such a model.
        let mut wrong = vec![0u8; len];
        let n = encode::<T>(1, 3, &part_payloads, payload(&final_file), &mut wrong).unwrap();
        let corrupt = Some(Error::Model(ModelError::Payload));
        assert_eq!(MapReduceModel::<T>::from_envelope(&Envelope::parse(&wrong[..n]).unwrap()).err(), corrupt);
        let n = encode::<T>(1, 1, &part_payloads[..1], payload(&final_file), &mut wrong).unwrap();
        assert_eq!(MapReduceModel::<T>::from_envelope(&Envelope::parse(&wrong[..n]).unwrap()).err(), corrupt);
        assert_eq!(
            encode::<T>(1, 4, &[], payload(&final_file), &mut wrong),
            Err(Error::InvalidParam { name: "parts" })
        );
    }

    /// Every truncation of the payload is an error, never a panic.
    fn truncated_payloads_are_errors<T: Real>() {
        let p = part::<T>([-1.0, 1.0], 1, 0.0);
        let mut part_file = vec![0u8; p.encoded_len()];
        p.encode(&mut part_file).unwrap();
        let mut final_model = LinearModel::new_in(vec![T::ZERO; LinearModel::scalars_len(1, 1)], 1, 1, T::ONE).unwrap();
        final_model.set_weights(0, &[T::ONE], T::ZERO).unwrap();
        let mut final_file = vec![0u8; final_model.encoded_len()];
        final_model.encode(&mut final_file).unwrap();
        let parts = [payload(&part_file)];
        let mut file = vec![0u8; 512];
        let n = encode::<T>(1, 1, &parts, payload(&final_file), &mut file).unwrap();
        let whole = Envelope::parse(&file[..n]).unwrap();
        for cut in 0..whole.payload.len() {
            let envelope = Envelope { payload: &whole.payload[..cut], ..whole };
            assert_eq!(
                MapReduceModel::<T>::from_envelope(&envelope).err(),
                Some(Error::Model(ModelError::Payload)),
                "{cut}"
            );
        }
        assert!(MapReduceModel::<T>::from_envelope(&whole).is_ok());
        // A part that claims a million centres in a few bytes is refused before anyone
        // sizes a scratch by it.
        let kind = Kernel::<T>::rbf(T::ONE).unwrap().kind();
        let mut claim = [0u8; 64];
        let claim = postcard::to_slice(&(1u32, 1_000_000u32, 1u32, kind), &mut claim).unwrap();
        let n = encode::<T>(1, 1, &[&claim[..]], payload(&final_file), &mut file).unwrap();
        let envelope = Envelope::parse(&file[..n]).unwrap();
        assert_eq!(MapReduceModel::<T>::from_envelope(&envelope).err(), Some(Error::Model(ModelError::Payload)));
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn predicts_by_algorithm_5() {
                    super::predicts_by_algorithm_5::<$scalar>();
                }
                #[test]
                fn truncated_payloads_are_errors() {
                    super::truncated_payloads_are_errors::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
