//! The learned regression function of eq. (16)-(17), stored as `m0` centres and weights.
//!
//! `f(x) = ȳ + Σ_p β_p k(x, s_p)` over the active centres `s_p`, with
//! `β_p = α~_p/(2λ)` in the paper's notation (eq. 16-17). The learner computes
//! `β_p = z_p/(λ√k(s_p, s_p))` where `z = H⁻¹Cᵀy` (see [`Slkl`](super::Slkl)); on the
//! training points `f − ȳ = K~(μ)(K~(μ) + λI)⁻¹(y − ȳ)`. The model has no intercept in the
//! paper; Kestrel centres the targets by their training (or window) mean `ȳ` and adds it
//! back here, so data with a non-zero mean need no preprocessing.
//!
//! Memory: `m0·(d + 1)` scalars ([`Predictor::scalars_len`]); a prediction costs `m0` kernel
//! evaluations, O(m0·d).

use serde::de::DeserializeSeed;

use crate::error::check_len;
use crate::kernel::KernelKind;
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed, u32_field};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

use super::columns::inverse_norm;
use super::layout::{Dims, Region};
use super::solver::Engine;

/// An SLKL model: `len` centres with their weights, the kernel and the target mean.
///
/// # Examples
/// ```
/// use kestrel_core::Kernel;
/// use kestrel_core::slkl::Predictor;
/// let kernel = Kernel::gaussian_sigma(1.0)?;
/// let centres = [0.0, 0.0, 1.0, 1.0]; // two centres in 2-D
/// let weights = [0.5, -0.25];
/// let model = Predictor::from_parts_in(
///     [0.0f64; Predictor::scalars_len(2, 2)], kernel, 2, 3.0, &centres, &weights)?;
/// let f = model.predict(&[0.0, 0.0])?;
/// assert!((f - (3.0 + 0.5 - 0.25 * (-1.0f64).exp())).abs() < 1e-12);
/// assert!(model.predict(&[0.0]).is_err());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Predictor<T, S> {
    storage: S,
    kernel: Kernel<T>,
    dim: usize,
    len: usize,
    mean: T,
}

impl Predictor<(), ()> {
    /// Scalars a predictor of up to `max_active` centres in `dim` dimensions needs:
    /// `max_active·(dim + 1)` (saturating).
    pub const fn scalars_len(max_active: usize, dim: usize) -> usize {
        max_active.saturating_mul(dim.saturating_add(1))
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(max_active: usize, dim: usize) -> usize {
        Self::scalars_len(max_active, dim).saturating_mul(core::mem::size_of::<T>())
    }
}

impl<T: Real, S: Storage<T>> Predictor<T, S> {
    /// A model from its parts: `centres` row-major (`len·dim`), `weights` (`len`).
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for `dim = 0`; `DimensionMismatch` when
    /// `centres.len() ≠ weights.len()·dim`; `CapacityExceeded` when `storage` is shorter
    /// than [`Predictor::scalars_len`]`(len, dim)`; `NonFinite` for NaN/∞ anywhere.
    pub fn from_parts_in(
        storage: S,
        kernel: Kernel<T>,
        dim: usize,
        mean: T,
        centres: &[T],
        weights: &[T],
    ) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        check_len(weights.len().saturating_mul(dim), centres.len())?;
        check_finite(centres)?;
        check_finite(weights)?;
        check_finite(&[mean])?;
        let len = weights.len();
        let mut parts = weights.iter().zip(centres.chunks_exact(dim));
        Self::build_in(storage, kernel, dim, mean, len, |p, centre| {
            let (&w, c) = parts.next().ok_or(Error::IndexOutOfRange { index: p, len })?;
            centre.copy_from_slice(c);
            Ok(w)
        })
    }

    /// A model of `len` centres whose `p`-th centre and weight `fill(p, centre)` writes
    /// and returns.
    ///
    /// # Errors
    /// `CapacityExceeded` when `storage` is too short; the first error of `fill`.
    pub(crate) fn build_in(
        mut storage: S,
        kernel: Kernel<T>,
        dim: usize,
        mean: T,
        len: usize,
        mut fill: impl FnMut(usize, &mut [T]) -> Result<T, Error>,
    ) -> Result<Self, Error> {
        let needed = Predictor::scalars_len(len, dim);
        let capacity = storage.as_ref().len();
        check_capacity(needed, capacity)?;
        let (weights, centres) =
            storage.as_mut().split_at_mut_checked(len).ok_or(Error::CapacityExceeded { needed, capacity })?;
        for (p, (w, c)) in weights.iter_mut().zip(centres.chunks_exact_mut(dim)).enumerate() {
            *w = fill(p, c)?;
        }
        Ok(Predictor { storage, kernel, dim, len, mean })
    }

    /// `f(x)`. O(m0·d).
    ///
    /// # Errors
    /// `DimensionMismatch` when `x.len() ≠ dim`; `NonFinite` for NaN/∞ in `x`.
    pub fn predict(&self, x: &[T]) -> Result<T, Error> {
        check_len(self.dim, x.len())?;
        check_finite(x)?;
        let f = self
            .weights()
            .iter()
            .zip(self.centres().chunks_exact(self.dim))
            .fold(T::ZERO, |acc, (&w, s)| acc + w * self.kernel.eval_prefix(x, s));
        // A finite x far from the centres can overflow a kernel value: no prediction then.
        finite(self.mean + f)
    }

    /// Number of centres `m0`.
    pub fn len(&self) -> usize {
        self.len
    }
    /// `true` without centres (the model predicts the mean).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Features per sample.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// The target mean `ȳ` added to every prediction.
    pub fn mean(&self) -> T {
        self.mean
    }
    /// The kernel.
    pub fn kernel(&self) -> Kernel<T> {
        self.kernel
    }
    /// The weights `β_p`.
    pub fn weights(&self) -> &[T] {
        self.storage.as_ref().get(..self.len).unwrap_or_default()
    }
    /// The centres, row-major.
    pub fn centres(&self) -> &[T] {
        self.storage.as_ref().get(self.len..self.len + self.len * self.dim).unwrap_or_default()
    }
    /// Gives the storage back.
    pub fn into_storage(self) -> S {
        self.storage
    }

    /// Writes the model file bytes into `out`; returns their length,
    /// [`encoded_len`](Self::encoded_len). Payload (postcard):
    /// `((dim: u32, m0: u32, mean: T, kernel), weights: [T; m0], centres: [T; m0·d])`.
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        model::encode(ModelKind::Slkl, ScalarKind::of::<T>(), &self.payload()?, out)
    }

    /// Bytes [`encode`](Self::encode) writes: header, payload and trailer (`usize::MAX` for
    /// a model whose shape does not fit the file's `u32` fields, which cannot be encoded).
    pub fn encoded_len(&self) -> usize {
        self.payload().and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    /// The payload: `((dim, m0, mean, kernel), weights, centres)`.
    pub(crate) fn payload(&self) -> Result<Payload<'_, T>, Error> {
        let shape = (u32_field(self.dim, "dim")?, u32_field(self.len, "len")?, self.mean, self.kernel.kind());
        Ok((shape, self.weights(), self.centres()))
    }

    /// Decodes model file bytes into `storage`.
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a valid SLKL model of scalar `T`;
    /// `CapacityExceeded` when `storage` is too short for it.
    pub fn decode_in(bytes: &[u8], storage: S) -> Result<Self, Error> {
        Self::from_envelope_in(&Envelope::parse(bytes)?, storage)
    }

    /// Decodes the payload of an envelope already parsed (and so checked) into `storage`:
    /// a loader that dispatches on the envelope's kind parses it once. A krr model's
    /// optional posterior after the centres ([`crate::gp`]) is checked and left for
    /// [`Posterior::from_envelope_in`](crate::gp::Posterior::from_envelope_in).
    ///
    /// # Errors
    /// As [`decode_in`](Self::decode_in), for everything after the envelope.
    pub fn from_envelope_in(envelope: &Envelope<'_>, mut storage: S) -> Result<Self, Error> {
        let corrupt = |_| Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::Slkl, ScalarKind::of::<T>())?;
        let ((dim, len, mean, kind), rest) =
            postcard::take_from_bytes::<(u32, u32, T, KernelKind<T>)>(envelope.payload).map_err(corrupt)?;
        let (dim, len) = (dim as usize, len as usize);
        let kernel = Kernel::new(kind).map_err(|_| Error::Model(ModelError::Payload))?;
        if dim == 0 || !mean.is_finite() {
            return Err(Error::Model(ModelError::Payload));
        }
        let needed = Predictor::scalars_len(len, dim);
        check_capacity(needed, storage.as_ref().len())?;
        let values = storage.as_mut().get_mut(..needed);
        let (weights, centres) =
            values.and_then(|v| v.split_at_mut_checked(len)).ok_or(Error::Model(ModelError::Payload))?;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let weights_read = SliceSeed(&mut *weights).deserialize(&mut deserializer).map_err(corrupt)?;
        let centres_read = SliceSeed(&mut *centres).deserialize(&mut deserializer).map_err(corrupt)?;
        let trailing = deserializer.finalize().map_err(corrupt)?;
        let section_ok = trailing.is_empty() || crate::gp::section_is_valid::<T>(trailing, len);
        if weights_read != len || centres_read != len * dim || !section_ok {
            return Err(Error::Model(ModelError::Payload));
        }
        Ok(Predictor { storage, kernel, dim, len, mean })
    }
}

/// The model of a learner's current state: `β_p = z_p/(λ√k(s_p, s_p))` (eq. 16-17).
pub(crate) fn from_engine<T: Real, P: Storage<T>>(
    storage: P,
    engine: &Engine<T>,
    dims: &Dims,
    buf: &[T],
    active: &[usize],
    mean: T,
) -> Result<Predictor<T, P>, Error> {
    let kernel = engine.params.kernel();
    let lambda = engine.params.lambda();
    let d = dims.dim();
    let region = |r| buf.get(dims.region(r)).unwrap_or_default();
    let (centres, z) = (region(Region::Centres), region(Region::Z));
    let missing = |index| Error::IndexOutOfRange { index, len: active.len() };
    Predictor::build_in(storage, kernel, d, mean, active.len(), |p, c| {
        let j = *active.get(p).ok_or(missing(p))?;
        let s = centres.chunks_exact(d).nth(j).ok_or(missing(j))?;
        c.copy_from_slice(s);
        Ok(*z.get(p).ok_or(missing(p))? / lambda * inverse_norm(&kernel, s))
    })
}

/// The model file payload, in the order postcard writes it.
pub(crate) type Payload<'a, T> = ((u32, u32, T, KernelKind<T>), &'a [T], &'a [T]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip_and_corruption() {
        let kernel = Kernel::rbf(0.5).unwrap();
        let model =
            Predictor::from_parts_in([0.0f32; 6], kernel, 2, 1.5, &[0.0, 1.0, 2.0, -1.0], &[0.25, -0.5]).unwrap();
        let mut buf = [0u8; 128];
        let n = model.encode(&mut buf).unwrap();
        let copy = Predictor::<f32, _>::decode_in(&buf[..n], [0.0f32; 6]).unwrap();
        assert_eq!((copy.len(), copy.dim(), copy.mean()), (2, 2, 1.5));
        assert_eq!((copy.weights(), copy.centres()), (model.weights(), model.centres()));
        assert_eq!(copy.predict(&[0.5, 0.5]), model.predict(&[0.5, 0.5]));
        assert_eq!(
            Predictor::<f32, _>::decode_in(&buf[..n], [0.0f32; 5]).err(),
            Some(Error::CapacityExceeded { needed: 6, capacity: 5 })
        );
        assert!(matches!(Predictor::<f64, _>::decode_in(&buf[..n], [0.0f64; 6]), Err(Error::Model(_))));
        buf[n - 6] ^= 0x40;
        assert!(matches!(Predictor::<f32, _>::decode_in(&buf[..n], [0.0f32; 6]), Err(Error::Model(_))));
    }

    /// A finite point far from the centres overflows a polynomial kernel value: an error,
    /// not an infinite prediction (found by fuzzing `train` → `predict`).
    #[test]
    fn an_overflowing_kernel_value_is_no_prediction() {
        let kernel = Kernel::polynomial(2, 1.0, 0.5).unwrap();
        let model = Predictor::from_parts_in([0.0f64; 3], kernel, 2, 0.0, &[1.0, 1.0], &[0.25]).unwrap();
        assert!(model.predict(&[1.0, 2.0]).unwrap().is_finite());
        assert_eq!(model.predict(&[-1e308, 1.0]), Err(Error::NonFinite));
    }

    fn encodes_in_exactly_encoded_len<T: Real, S: Storage<T>>(m: &Predictor<T, S>) {
        let n = m.encoded_len();
        let mut exact = std::vec![0u8; n];
        assert_eq!(m.encode(&mut exact), Ok(n));
        assert!(matches!(m.encode(&mut exact[..n - 1]), Err(Error::CapacityExceeded { .. })));
        let copy = Predictor::<T, _>::decode_in(&exact, std::vec![T::ZERO; 6]).unwrap();
        assert_eq!((copy.weights(), copy.centres(), copy.mean()), (m.weights(), m.centres(), m.mean()));
    }

    macro_rules! gen_tests {
        ($($name:ident: $t:ty,)*) => {$(
            #[test]
            fn $name() {
                let kernel = Kernel::<$t>::linear();
                let model = Predictor::from_parts_in(
                    [0.0; 6], kernel, 2, 1.0, &[1.0, 0.0, 0.0, 1.0], &[2.0, 3.0]).unwrap();
                assert_eq!(model.predict(&[1.0, 1.0]), Ok(6.0));
                assert_eq!((model.len(), model.dim(), model.mean()), (2, 2, 1.0));
                assert_eq!(model.predict(&[<$t>::NAN, 1.0]), Err(Error::NonFinite));
                let short = Predictor::from_parts_in([0.0; 5], kernel, 2, 1.0, &[1.0, 0.0, 0.0, 1.0], &[2.0, 3.0]);
                assert_eq!(short.err(), Some(Error::CapacityExceeded { needed: 6, capacity: 5 }));
                let bad = Predictor::from_parts_in([0.0; 6], kernel, 2, 1.0, &[1.0, 0.0, 0.0], &[2.0, 3.0]);
                assert_eq!(bad.err(), Some(Error::DimensionMismatch { expected: 4, got: 3 }));
                let nan = Predictor::from_parts_in([0.0; 6], kernel, 2, <$t>::INFINITY, &[1.0, 0.0, 0.0, 1.0], &[2.0, 3.0]);
                assert_eq!(nan.err(), Some(Error::NonFinite));
                let empty = Predictor::from_parts_in([0.0; 0], kernel, 2, 4.0, &[], &[]).unwrap();
                assert!(empty.is_empty());
                assert_eq!(empty.predict(&[1.0, 1.0]), Ok(4.0));
                encodes_in_exactly_encoded_len(&model);
                encodes_in_exactly_encoded_len(&empty);
                encodes_in_exactly_encoded_len(&Predictor::from_parts_in(
                    [0.0; 6], Kernel::<$t>::rbf(0.25).unwrap(), 2, -1.0, &[1.0, 0.0, 0.0, 1.0], &[2.0, 3.0]).unwrap());
            }
        )*};
    }

    gen_tests! {
        predictor_f32: f32,
        predictor_f64: f64,
    }
}
