//! [`LinearModel`]: a trained linear classifier as it is stored, shipped and used for
//! prediction — only the weights, no training state.
//!
//! `outputs` weight vectors `ŵ_c = [w_c, w_{c,b}]` of `d + 1` scalars: one for a binary
//! model (class = sign of `ŵᵀx̂`), `k` for one-vs-rest (class = argmax). `labels` maps a
//! class to the label the user gave: `[negative, positive]` for binary, `0..k` otherwise.
//!
//! Payload in the model file (postcard): `(dim: u32, outputs: u32, bias B: T,
//! weights: [T; outputs·(d+1)], labels: [T; classes])`, decoded straight into caller
//! storage.
//!
//! **Memory**: [`LinearModel::scalars_len`]`(d, outputs) = outputs·(d+1) + classes`
//! scalars. Prediction: O(outputs · nnz(x)).

use serde::de::DeserializeSeed;

use super::rows::Row;
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed, u32_field};
use crate::real::finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// A linear classifier's weights and label map in storage `S`.
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{LinearModel, Row};
/// let mut model = LinearModel::new_in(vec![0.0f32; LinearModel::scalars_len(2, 1)], 2, 1, 1.0)?;
/// model.weights_mut(0).unwrap().copy_from_slice(&[1.0, -1.0, 0.5]); // w = (1, −1), w_b = 0.5
/// model.labels_mut().copy_from_slice(&[0.0, 1.0]); // the user's labels were 0/1
/// assert_eq!(model.predict(Row::Dense(&[2.0, 1.0]))?, 1.0);
/// let mut buf = [0u8; 64];
/// let n = model.encode(&mut buf)?;
/// let copy = LinearModel::<f32, _>::decode_in(&buf[..n], [0.0f32; 5])?;
/// assert_eq!(copy.predict(Row::Dense(&[-2.0, 1.0]))?, 0.0);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LinearModel<T, S> {
    storage: S,
    dim: usize,
    outputs: usize,
    bias: T,
}

impl LinearModel<(), ()> {
    /// Scalars for `outputs` weight vectors of dimension `dim` and the label map.
    pub const fn scalars_len(dim: usize, outputs: usize) -> usize {
        outputs.saturating_mul(dim.saturating_add(1)).saturating_add(Self::classes(outputs))
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(dim: usize, outputs: usize) -> usize {
        Self::scalars_len(dim, outputs).saturating_mul(core::mem::size_of::<T>())
    }

    /// Classes a model with `outputs` weight vectors tells apart (2 for one output).
    pub const fn classes(outputs: usize) -> usize {
        if outputs == 1 { 2 } else { outputs }
    }
}

impl<T: Real, S: Storage<T>> LinearModel<T, S> {
    /// A zero model; fill it with [`weights_mut`](Self::weights_mut) and
    /// [`labels_mut`](Self::labels_mut) (labels default to −1/+1 or `0..k`).
    ///
    /// # Errors
    /// `InvalidParam` naming `dim` (0), `outputs` (0 or 2: two classes need one output)
    /// or `bias` (non-finite); `CapacityExceeded` when `storage` is too short.
    pub fn new_in(storage: S, dim: usize, outputs: usize, bias: T) -> Result<Self, Error> {
        check_shape(dim, outputs, bias)?;
        let len = LinearModel::scalars_len(dim, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let mut model = LinearModel { storage, dim, outputs, bias };
        let (weights, labels) = model.parts_mut();
        weights.fill(T::ZERO);
        fill_default_labels(labels, outputs);
        Ok(model)
    }

    /// The weights (`outputs·(d + 1)` scalars) and the labels, in the storage the
    /// constructor checked (empty only if that check was bypassed, which it cannot be).
    fn parts(&self) -> (&[T], &[T]) {
        let values = self.storage.as_ref().get(..LinearModel::scalars_len(self.dim, self.outputs));
        values.and_then(|v| v.split_at_checked(self.outputs * (self.dim + 1))).unwrap_or_default()
    }

    /// [`parts`](Self::parts), mutable.
    fn parts_mut(&mut self) -> (&mut [T], &mut [T]) {
        let (len, split) = (LinearModel::scalars_len(self.dim, self.outputs), self.outputs * (self.dim + 1));
        let values = self.storage.as_mut().get_mut(..len);
        values.and_then(|v| v.split_at_mut_checked(split)).unwrap_or_default()
    }

    /// `ŵ_c = [w_c, w_{c,b}]` (`d + 1` scalars), or `None` for `c ≥ outputs`.
    pub fn weights_mut(&mut self, c: usize) -> Option<&mut [T]> {
        let stride = self.dim + 1;
        self.parts_mut().0.chunks_exact_mut(stride).nth(c)
    }

    /// Sets output `c` to the weights `w` (`d` of them) and the bias weight `w_{c,b}`.
    ///
    /// # Errors
    /// `IndexOutOfRange` for `c ≥ outputs`; `DimensionMismatch` when `w.len() ≠ d`. The
    /// model is unchanged on error.
    pub fn set_weights(&mut self, c: usize, w: &[T], bias_weight: T) -> Result<(), Error> {
        if w.len() != self.dim {
            return Err(Error::DimensionMismatch { expected: self.dim, got: w.len() });
        }
        let outputs = self.outputs;
        let slot = self.weights_mut(c).and_then(<[T]>::split_last_mut);
        let (last, target) = slot.ok_or(Error::IndexOutOfRange { index: c, len: outputs })?;
        target.copy_from_slice(w);
        *last = bias_weight;
        Ok(())
    }

    /// The label of each class.
    pub fn labels_mut(&mut self) -> &mut [T] {
        self.parts_mut().1
    }

    /// The label of each class.
    pub fn labels(&self) -> &[T] {
        self.parts().1
    }

    /// Number of features `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of weight vectors (1 binary, `k` one-vs-rest).
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// The bias feature's value `B`.
    pub fn bias(&self) -> T {
        self.bias
    }

    /// Decision value of output `c`: `w_cᵀx + w_{c,b}·B`.
    ///
    /// # Errors
    /// As [`Row::check`]; `IndexOutOfRange` for `c ≥ outputs`.
    pub fn decision(&self, c: usize, row: Row<'_, T>) -> Result<T, Error> {
        row.check(self.dim)?;
        let out_of_range = Error::IndexOutOfRange { index: c, len: self.outputs };
        let w = self.parts().0.chunks_exact(self.dim + 1).nth(c).ok_or(out_of_range)?;
        let (&w_b, w) = w.split_last().ok_or(out_of_range)?;
        // Finite features can overflow the dot product: no decision then.
        finite(row.dot(w) + w_b * self.bias)
    }

    /// The predicted label: by the sign of the decision value for a binary model (0 counts
    /// as positive, as LIBLINEAR does), by the largest decision value otherwise.
    ///
    /// # Errors
    /// As [`Row::check`].
    pub fn predict(&self, row: Row<'_, T>) -> Result<T, Error> {
        let mut best = (0, self.decision(0, row)?);
        if self.outputs == 1 {
            best.0 = usize::from(best.1 >= T::ZERO);
        }
        for c in 1..self.outputs {
            let value = self.decision(c, row)?;
            if value > best.1 {
                best = (c, value);
            }
        }
        let labels = self.labels();
        labels.get(best.0).copied().ok_or(Error::IndexOutOfRange { index: best.0, len: labels.len() })
    }

    /// Writes the model file bytes into `out`; returns their length,
    /// [`encoded_len`](Self::encoded_len).
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        model::encode(ModelKind::LinearSvm, ScalarKind::of::<T>(), &self.payload()?, out)
    }

    /// Bytes [`encode`](Self::encode) writes: header, payload and trailer (`usize::MAX` for
    /// a model whose shape does not fit the file's `u32` fields, which cannot be encoded).
    pub fn encoded_len(&self) -> usize {
        self.payload().and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    /// The payload: `(dim, outputs, bias, weights, labels)`.
    fn payload(&self) -> Result<Payload<'_, T>, Error> {
        let (weights, labels) = self.parts();
        Ok((u32_field(self.dim, "dim")?, u32_field(self.outputs, "outputs")?, self.bias, weights, labels))
    }

    /// Decodes model file bytes into `storage`.
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a valid linear model of scalar `T`;
    /// `CapacityExceeded` when `storage` is too short for it.
    pub fn decode_in(bytes: &[u8], storage: S) -> Result<Self, Error> {
        Self::from_envelope_in(&Envelope::parse(bytes)?, storage)
    }

    /// Decodes the payload of an envelope already parsed (and so checked) into `storage`:
    /// a loader that dispatches on the envelope's kind parses it once.
    ///
    /// # Errors
    /// As [`decode_in`](Self::decode_in), for everything after the envelope.
    pub fn from_envelope_in(envelope: &Envelope<'_>, mut storage: S) -> Result<Self, Error> {
        let corrupt = |_| Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::LinearSvm, ScalarKind::of::<T>())?;
        // A postcard tuple is its fields back to back: read the shape, then the sequences.
        let ((dim, outputs, bias), rest) =
            postcard::take_from_bytes::<(u32, u32, T)>(envelope.payload).map_err(corrupt)?;
        let (dim, outputs) = (dim as usize, outputs as usize);
        check_shape(dim, outputs, bias).map_err(|_| Error::Model(ModelError::Payload))?;
        let len = LinearModel::scalars_len(dim, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let values = storage.as_mut().get_mut(..len);
        let (weights, labels) = values
            .and_then(|v| v.split_at_mut_checked(outputs * (dim + 1)))
            .ok_or(Error::Model(ModelError::Payload))?;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let weights_read = SliceSeed(&mut *weights).deserialize(&mut deserializer).map_err(corrupt)?;
        let labels_read = SliceSeed(&mut *labels).deserialize(&mut deserializer).map_err(corrupt)?;
        let trailing = deserializer.finalize().map_err(corrupt)?;
        if weights_read != weights.len() || labels_read != labels.len() || !trailing.is_empty() {
            return Err(Error::Model(ModelError::Payload));
        }
        Ok(LinearModel { storage, dim, outputs, bias })
    }
}

/// The labels a classifier with `outputs` outputs reports before it is told the user's:
/// −1/+1 for one output, `0..k` for `k`.
pub(crate) fn fill_default_labels<T: Real>(labels: &mut [T], outputs: usize) {
    for (c, label) in labels.iter_mut().enumerate() {
        *label = if outputs == 1 { T::from_f64(2.0 * c as f64 - 1.0) } else { T::from_f64(c as f64) };
    }
}

fn check_shape<T: Real>(dim: usize, outputs: usize, bias: T) -> Result<(), Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    if outputs == 0 || outputs == 2 {
        return Err(Error::InvalidParam { name: "outputs" });
    }
    if !bias.is_finite() {
        return Err(Error::InvalidParam { name: "bias" });
    }
    Ok(())
}

/// The model file payload, in the order postcard writes it.
type Payload<'a, T> = (u32, u32, T, &'a [T], &'a [T]);

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> LinearModel<f64, [f64; 12]> {
        let mut m = LinearModel::new_in([0.0; 12], 2, 3, 1.0).unwrap();
        m.weights_mut(0).unwrap().copy_from_slice(&[1.0, 0.0, 0.0]);
        m.weights_mut(1).unwrap().copy_from_slice(&[0.0, 1.0, 0.0]);
        m.weights_mut(2).unwrap().copy_from_slice(&[-1.0, -1.0, 0.5]);
        m
    }

    #[test]
    fn one_vs_rest_prediction_and_round_trip() {
        let m = model();
        assert_eq!(m.labels(), &[0.0, 1.0, 2.0]);
        assert_eq!(m.predict(Row::Dense(&[2.0, 1.0])), Ok(0.0));
        assert_eq!(m.predict(Row::Sparse { indices: &[1], values: &[3.0] }), Ok(1.0));
        assert_eq!(m.predict(Row::Dense(&[-1.0, -1.0])), Ok(2.0));
        let mut buf = [0u8; 200];
        let n = m.encode(&mut buf).unwrap();
        let copy = LinearModel::<f64, _>::decode_in(&buf[..n], [0.0; 12]).unwrap();
        assert_eq!(copy, m);
        let short = LinearModel::<f64, _>::decode_in(&buf[..n], [0.0; 11]);
        assert_eq!(short.err(), Some(Error::CapacityExceeded { needed: 12, capacity: 11 }));
        assert_eq!(
            LinearModel::<f32, _>::decode_in(&buf[..n], [0.0f32; 11]),
            Err(Error::Model(ModelError::WrongScalar))
        );
    }

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                for (dim, outputs) in [(1, 1), (3, 1), (2, 4), (130, 3)] {
                    let len = LinearModel::scalars_len(dim, outputs);
                    let mut m = LinearModel::<$t, _>::new_in(std::vec![0.0; len], dim, outputs, 0.5).unwrap();
                    for (i, w) in m.weights_mut(0).unwrap().iter_mut().enumerate() {
                        *w = i as $t * 0.37 - 1.0;
                    }
                    let n = m.encoded_len();
                    let mut exact = std::vec![0u8; n];
                    assert_eq!(m.encode(&mut exact), Ok(n));
                    assert!(matches!(m.encode(&mut exact[..n - 1]), Err(Error::CapacityExceeded { .. })));
                    assert_eq!(LinearModel::<$t, _>::decode_in(&exact, std::vec![0.0; len]), Ok(m));
                }
            }
        )*};
    }

    gen_tests! {
        encoded_len_is_exact_f32: f32,
        encoded_len_is_exact_f64: f64,
    }

    #[test]
    fn bad_shapes_and_rows_are_errors() {
        assert_eq!(LinearModel::new_in([0.0f32; 8], 2, 2, 1.0).err(), Some(Error::InvalidParam { name: "outputs" }));
        assert_eq!(LinearModel::new_in([0.0f32; 8], 0, 1, 1.0).err(), Some(Error::InvalidParam { name: "dim" }));
        assert!(matches!(LinearModel::new_in([0.0f32; 4], 2, 1, 1.0), Err(Error::CapacityExceeded { .. })));
        let m = model();
        assert_eq!(m.predict(Row::Dense(&[1.0])), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(m.predict(Row::Dense(&[f64::NAN, 1.0])), Err(Error::NonFinite));
        // Finite features whose decision value overflows: no prediction.
        assert_eq!(m.predict(Row::Dense(&[f64::MAX, f64::MAX])), Err(Error::NonFinite));
        assert_eq!(m.decision(3, Row::Dense(&[1.0, 1.0])), Err(Error::IndexOutOfRange { index: 3, len: 3 }));
    }
}
