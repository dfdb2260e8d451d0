//! [`ReducedKernelModel`]: a nonlinear classifier of fixed size,
//! `h_c(x) = Σ_j u_{c,j} k(x, x̃_j) + b_c` (seed 003, eq. 13), as stored and used to predict.
//!
//! Training (on the host or the device) solves a linear SVM on the reduced-kernel features
//! `z(x) = K(x, Ã)` — or on the Nyström features `L⁻¹z(x)` with `LLᵀ = K(Ã, Ã)`
//! (eq. 10-11) — and folds the whitening into the coefficients, `u = L⁻ᵀw`, so prediction
//! needs no factor and no scratch: `m` kernel evaluations, O(m·d).
//!
//! One output (`sign h`) for two classes, `k` outputs (argmax) for one-vs-rest; `labels`
//! maps classes to the user's labels as in [`LinearModel`](crate::dcd::LinearModel).
//!
//! Payload (postcard): `(dim: u32, centres m: u32, outputs: u32, kernel, centres: [T; m·d],
//! coefficients: [T; outputs·(m+1)], labels: [T; classes])`.
//!
//! **Memory**: [`ReducedKernelModel::storage_len`]`(d, m, outputs) = m·d + outputs·(m+1)
//! + classes` scalars.

use serde::de::DeserializeSeed;

use crate::dcd::LinearModel;
use crate::dcd::model::fill_default_labels;
use crate::error::check_len;
use crate::kernel::KernelKind;
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// Centres, kernel and coefficients of a reduced-kernel classifier in storage `S`.
///
/// # Examples
/// ```
/// use kestrel_core::reduced_set::ReducedKernelModel;
/// use kestrel_core::Kernel;
/// // Two centres on a line; positive near 1, negative near −1.
/// let len = ReducedKernelModel::storage_len(1, 2, 1);
/// let mut model = ReducedKernelModel::new_in(vec![0.0; len], Kernel::rbf(1.0)?, 1, 2, 1)?;
/// model.centres_mut().copy_from_slice(&[1.0, -1.0]);
/// model.coefficients_mut(0).unwrap().copy_from_slice(&[1.0, -1.0, 0.0]); // u₀, u₁, b
/// assert_eq!(model.predict(&[0.8])?, 1.0);
/// assert_eq!(model.predict(&[-2.0])?, -1.0);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ReducedKernelModel<T, S> {
    storage: S,
    kernel: Kernel<T>,
    dim: usize,
    centres: usize,
    outputs: usize,
}

impl ReducedKernelModel<(), ()> {
    /// Scalars for `centres` centres of dimension `dim` and `outputs` outputs.
    pub const fn storage_len(dim: usize, centres: usize, outputs: usize) -> usize {
        let coefficients = outputs.saturating_mul(centres.saturating_add(1));
        centres.saturating_mul(dim).saturating_add(coefficients).saturating_add(LinearModel::classes(outputs))
    }
}

impl<T: Real, S: Storage<T>> ReducedKernelModel<T, S> {
    /// A zero model; fill it through [`centres_mut`](Self::centres_mut),
    /// [`coefficients_mut`](Self::coefficients_mut) and [`labels_mut`](Self::labels_mut)
    /// (labels default to −1/+1 or `0..k`).
    ///
    /// # Errors
    /// `InvalidParam` naming `dim` or `centres` (0) or `outputs` (0 or 2);
    /// `CapacityExceeded` when `storage` is too short.
    pub fn new_in(
        mut storage: S,
        kernel: Kernel<T>,
        dim: usize,
        centres: usize,
        outputs: usize,
    ) -> Result<Self, Error> {
        check_shape(dim, centres, outputs)?;
        let len = ReducedKernelModel::storage_len(dim, centres, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let values = &mut storage.as_mut()[..len];
        let labels_start = len - LinearModel::classes(outputs);
        values[..labels_start].fill(T::ZERO);
        fill_default_labels(&mut values[labels_start..], outputs);
        Ok(ReducedKernelModel { storage, kernel, dim, centres, outputs })
    }

    /// The centres, row-major `m × d`.
    pub fn centres_mut(&mut self) -> &mut [T] {
        let len = self.centres * self.dim;
        &mut self.storage.as_mut()[..len]
    }

    /// The centres, row-major `m × d`.
    pub fn centres(&self) -> &[T] {
        &self.storage.as_ref()[..self.centres * self.dim]
    }

    /// `[u_{c,0} … u_{c,m−1}, b_c]` of output `c`, or `None` for `c ≥ outputs`.
    pub fn coefficients_mut(&mut self, c: usize) -> Option<&mut [T]> {
        let (start, stride) = (self.centres * self.dim, self.centres + 1);
        (c < self.outputs).then(|| &mut self.storage.as_mut()[start + c * stride..start + (c + 1) * stride])
    }

    /// The label of each class.
    pub fn labels_mut(&mut self) -> &mut [T] {
        let start = self.labels_start();
        &mut self.storage.as_mut()[start..start + LinearModel::classes(self.outputs)]
    }

    /// The label of each class.
    pub fn labels(&self) -> &[T] {
        let start = self.labels_start();
        &self.storage.as_ref()[start..start + LinearModel::classes(self.outputs)]
    }

    fn labels_start(&self) -> usize {
        self.centres * self.dim + self.outputs * (self.centres + 1)
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel<T> {
        &self.kernel
    }

    /// Number of features `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of centres `m = |Ã|`.
    pub fn centres_len(&self) -> usize {
        self.centres
    }

    /// Number of outputs (1 binary, `k` one-vs-rest).
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Writes every output's decision value `h_c(x)` into `out` (`outputs` values).
    ///
    /// # Errors
    /// `DimensionMismatch` for `x` or `out` of the wrong length; `NonFinite` for NaN/∞.
    pub fn decision_values(&self, x: &[T], out: &mut [T]) -> Result<(), Error> {
        check_len(self.dim, x.len())?;
        check_len(self.outputs, out.len())?;
        check_finite(x)?;
        let start = self.centres * self.dim;
        let coefficients = &self.storage.as_ref()[start..start + self.outputs * (self.centres + 1)];
        for (o, u) in out.iter_mut().zip(coefficients.chunks_exact(self.centres + 1)) {
            *o = u[self.centres];
        }
        for (j, centre) in self.centres().chunks_exact(self.dim).enumerate() {
            let k = self.kernel.eval_prefix(x, centre);
            for (o, u) in out.iter_mut().zip(coefficients.chunks_exact(self.centres + 1)) {
                *o += u[j] * k;
            }
        }
        Ok(())
    }

    /// The predicted label (sign for one output, 0 counting as positive; argmax otherwise).
    ///
    /// # Errors
    /// As [`decision_values`](Self::decision_values).
    pub fn predict(&self, x: &[T]) -> Result<T, Error> {
        const MAX_INLINE: usize = 16;
        let mut best = (0usize, T::ZERO);
        if self.outputs <= MAX_INLINE {
            let mut values = [T::ZERO; MAX_INLINE];
            self.decision_values(x, &mut values[..self.outputs])?;
            best = argmax(&values[..self.outputs]);
        } else {
            // More outputs than fit on the stack: one pass per output, no scratch.
            check_len(self.dim, x.len())?;
            check_finite(x)?;
            for c in 0..self.outputs {
                let value = self.output_value(c, x);
                if c == 0 || value > best.1 {
                    best = (c, value);
                }
            }
        }
        let class = if self.outputs == 1 { usize::from(best.1 >= T::ZERO) } else { best.0 };
        Ok(self.labels()[class])
    }

    fn output_value(&self, c: usize, x: &[T]) -> T {
        let start = self.centres * self.dim + c * (self.centres + 1);
        let u = &self.storage.as_ref()[start..start + self.centres + 1];
        self.centres()
            .chunks_exact(self.dim)
            .zip(u)
            .fold(u[self.centres], |acc, (centre, &uj)| acc + uj * self.kernel.eval_prefix(x, centre))
    }

    /// Writes the model file bytes into `out`; returns their length.
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        let values = &self.storage.as_ref()[..ReducedKernelModel::storage_len(self.dim, self.centres, self.outputs)];
        let (centres, rest) = values.split_at(self.centres * self.dim);
        let (coefficients, labels) = rest.split_at(self.outputs * (self.centres + 1));
        let shape = (self.dim as u32, self.centres as u32, self.outputs as u32, self.kernel.kind());
        let payload = (shape, centres, coefficients, labels);
        model::encode(ModelKind::ReducedSvm, ScalarKind::of::<T>(), &payload, out)
    }

    /// Decodes model file bytes into `storage`.
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a valid reduced-kernel model of scalar `T`;
    /// `CapacityExceeded` when `storage` is too short for it.
    pub fn decode_in(bytes: &[u8], mut storage: S) -> Result<Self, Error> {
        let corrupt = |_| Error::Model(ModelError::Payload);
        let envelope = Envelope::parse(bytes)?;
        envelope.expect(ModelKind::ReducedSvm, ScalarKind::of::<T>())?;
        let ((dim, centres, outputs, kind), rest) =
            postcard::take_from_bytes::<(u32, u32, u32, KernelKind<T>)>(envelope.payload).map_err(corrupt)?;
        let (dim, centres, outputs) = (dim as usize, centres as usize, outputs as usize);
        let kernel = Kernel::new(kind).map_err(|_| Error::Model(ModelError::Payload))?;
        check_shape(dim, centres, outputs).map_err(|_| Error::Model(ModelError::Payload))?;
        let len = ReducedKernelModel::storage_len(dim, centres, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let (centre_values, rest_values) = storage.as_mut()[..len].split_at_mut(centres * dim);
        let (coefficients, labels) = rest_values.split_at_mut(outputs * (centres + 1));
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let mut complete = true;
        for part in [centre_values, coefficients, labels] {
            let expected = part.len();
            complete &= SliceSeed(part).deserialize(&mut deserializer).map_err(corrupt)? == expected;
        }
        if !complete || !deserializer.finalize().map_err(corrupt)?.is_empty() {
            return Err(Error::Model(ModelError::Payload));
        }
        Ok(ReducedKernelModel { storage, kernel, dim, centres, outputs })
    }
}

fn check_shape(dim: usize, centres: usize, outputs: usize) -> Result<(), Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    if centres == 0 {
        return Err(Error::InvalidParam { name: "centres" });
    }
    if outputs == 0 || outputs == 2 {
        return Err(Error::InvalidParam { name: "outputs" });
    }
    Ok(())
}

/// Index and value of the largest entry (the first of equals); `(0, 0)` when empty.
fn argmax<T: Real>(values: &[T]) -> (usize, T) {
    values
        .iter()
        .enumerate()
        .fold((0, values.first().copied().unwrap_or(T::ZERO)), |best, (i, &v)| if v > best.1 { (i, v) } else { best })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn storage_len_counts_every_part() {
        assert_eq!(ReducedKernelModel::storage_len(2, 3, 1), 6 + 4 + 2);
        assert_eq!(ReducedKernelModel::storage_len(2, 3, 3), 6 + 12 + 3);
    }

    #[test]
    fn one_vs_rest_round_trip_and_errors() {
        let len = ReducedKernelModel::storage_len(2, 3, 3);
        let mut m = ReducedKernelModel::new_in(vec![0.0; len], Kernel::rbf(2.0).unwrap(), 2, 3, 3).unwrap();
        m.centres_mut().copy_from_slice(&[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
        for c in 0..3 {
            let u = m.coefficients_mut(c).unwrap();
            u[c] = 1.0;
            u[3] = -0.1;
        }
        assert_eq!(m.predict(&[0.9, 0.1]), Ok(1.0));
        assert_eq!(m.predict(&[0.0, 1.2]), Ok(2.0));
        let mut values = [0.0; 3];
        m.decision_values(&[0.0, 0.0], &mut values).unwrap();
        assert!((values[0] - 0.9).abs() < 1e-12 && (values[1] - ((-2.0f64).exp() - 0.1)).abs() < 1e-12);
        let mut buf = [0u8; 512];
        let n = m.encode(&mut buf).unwrap();
        let copy = ReducedKernelModel::<f64, _>::decode_in(&buf[..n], vec![0.0; len]).unwrap();
        assert_eq!(copy, m);
        let short = ReducedKernelModel::<f64, _>::decode_in(&buf[..n], vec![0.0; len - 1]);
        assert_eq!(short.err(), Some(Error::CapacityExceeded { needed: len, capacity: len - 1 }));
        assert_eq!(m.predict(&[f64::NAN, 0.0]), Err(Error::NonFinite));
        assert_eq!(m.predict(&[0.0]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        let bad = ReducedKernelModel::new_in(vec![0.0; len], Kernel::rbf(2.0).unwrap(), 2, 3, 2);
        assert_eq!(bad.err(), Some(Error::InvalidParam { name: "outputs" }));
    }
}
