//! [`NoveltyModel`]: a novelty detector as stored and used to score — the centres, their
//! weights `w_j = a_j/n`, the constant `c = aᵀK̃a/n²` and the threshold, frozen from a
//! [`CentreOfMass`] (and a [`Detector`](super::Detector)'s threshold):
//!
//! ```text
//! d²(x) = k̂(x, x) − 2 Σ_j w_j k̂(x, x̃_j) + c,      anomaly ⇔ d²(x) > threshold.
//! ```
//!
//! Payload (postcard): `((dim: u32, centres m: u32, normalised: bool, kernel, threshold:
//! Option<T>, c: T), centres: [T; m·d], weights: [T; m])`; decoding recomputes the
//! centres' norms `√k(x̃_j, x̃_j)` for a normalised kernel.
//!
//! **Memory**: [`NoveltyModel::scalars_len`]`(d, m) = m·d + 2m` scalars (centres, weights,
//! norms). A score costs `m` kernel evaluations, `O(m·d)`.

use serde::de::DeserializeSeed;

use super::CentreOfMass;
use super::mass::{for_each_similarity, self_terms};
use crate::kernel::KernelKind;
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed, u32_field};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// The payload's shape: `(dim, centres, normalised, kernel, threshold, c)`.
type Shape<T> = (u32, u32, bool, KernelKind<T>, Option<T>, T);

/// The payload: the shape, the centres and the weights.
type Payload<'a, T> = (Shape<T>, &'a [T], &'a [T]);

/// A frozen novelty detector in storage `S`.
#[derive(Clone, Debug, PartialEq)]
pub struct NoveltyModel<T, S> {
    storage: S,
    kernel: Kernel<T>,
    dim: usize,
    centres: usize,
    normalised: bool,
    threshold: Option<T>,
    constant: T,
}

impl NoveltyModel<(), ()> {
    /// Scalars for `centres` centres of `dim` features.
    pub const fn scalars_len(dim: usize, centres: usize) -> usize {
        centres.saturating_mul(dim).saturating_add(centres.saturating_mul(2))
    }

    /// Scalars the model in `envelope` needs, from its payload's shape alone: what a caller
    /// sizes storage by before decoding (the norms, `m` scalars, are not in the payload).
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a novelty model of scalar `T`, or whose shape
    /// claims more centres than the payload holds.
    pub fn scalars_in<T: Real>(envelope: &Envelope<'_>) -> Result<usize, Error> {
        let corrupt = Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::Novelty, ScalarKind::of::<T>())?;
        let ((dim, centres, ..), _) = postcard::take_from_bytes::<Shape<T>>(envelope.payload).map_err(|_| corrupt)?;
        let (dim, centres) = (dim as usize, centres as usize);
        // The payload holds the m·d + m centres and weights, `T::BYTES` bytes each.
        if centres.saturating_mul(dim.saturating_add(1)) > envelope.payload.len() / T::BYTES {
            return Err(corrupt);
        }
        Ok(NoveltyModel::scalars_len(dim, centres))
    }
}

impl<T: Real, S: Storage<T>> NoveltyModel<T, S> {
    /// The model of `mass` (at least one point) with `threshold`, into `storage`.
    ///
    /// # Errors
    /// `InvalidParam { name: "empty" }` for a set with no point; `InvalidParam { name:
    /// "threshold" }` for a threshold that is not finite; `CapacityExceeded` when
    /// `storage` is too short.
    pub fn from_mass_in<MS: Storage<T>, MC: AsRef<[u32]> + AsMut<[u32]>>(
        mass: &CentreOfMass<T, MS, MC>,
        threshold: Option<T>,
        mut storage: S,
    ) -> Result<Self, Error> {
        if mass.is_empty() {
            return Err(Error::InvalidParam { name: "empty" });
        }
        if threshold.is_some_and(|t| !t.is_finite()) {
            return Err(Error::InvalidParam { name: "threshold" });
        }
        let (dim, centres) = (mass.dim(), mass.centres_len());
        check_capacity(NoveltyModel::scalars_len(dim, centres), storage.as_ref().len())?;
        #[allow(clippy::cast_precision_loss, reason = "n < 2⁵³ in any stream")]
        let n = T::from_f64(mass.len() as f64);
        let (centre_values, weights, norms) = split_mut(storage.as_mut(), dim, centres)
            .ok_or(Error::CapacityExceeded { needed: NoveltyModel::scalars_len(dim, centres), capacity: 0 })?;
        centre_values.copy_from_slice(mass.centres());
        for (w, &a) in weights.iter_mut().zip(mass.counts()) {
            *w = T::from_f64(f64::from(a)) / n;
        }
        norms.copy_from_slice(mass.norms());
        let constant = mass.constant() / (n * n);
        Ok(NoveltyModel {
            storage,
            kernel: *mass.kernel(),
            dim,
            centres,
            normalised: mass.normalised(),
            threshold,
            constant,
        })
    }

    /// Features of a point.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Centres.
    pub fn centres_len(&self) -> usize {
        self.centres
    }

    /// The threshold, `None` when the detector had none yet.
    pub fn threshold(&self) -> Option<T> {
        self.threshold
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel<T> {
        &self.kernel
    }

    /// `(centres, weights, norms)`.
    fn parts(&self) -> (&[T], &[T], &[T]) {
        let values = self.storage.as_ref();
        let (centres, rest) = values.split_at(self.centres * self.dim);
        let (weights, rest) = rest.split_at(self.centres);
        (centres, weights, rest.get(..self.centres).unwrap_or_default())
    }

    /// `d²(x)`, the squared distance of `φ̂(x)` to the centre of mass.
    ///
    /// # Errors
    /// `DimensionMismatch` for a wrong length; `NonFinite` for NaN/∞ (or an overflow);
    /// `InvalidParam { name: "x" }` for `k(x, x) = 0` under a normalised kernel.
    pub fn score(&self, x: &[T]) -> Result<T, Error> {
        let (self_term, norm) = self_terms(&self.kernel, self.normalised, self.dim, x)?;
        let (centres, weights, norms) = self.parts();
        let mut cross = T::ZERO;
        for_each_similarity(&self.kernel, x, norm, centres, norms, |j, k| {
            cross += weights.get(j).copied().unwrap_or(T::ZERO) * k;
        });
        finite(self_term - (cross + cross) + self.constant)
    }

    /// 1 for an anomaly (`d²(x) >` the threshold), 0 otherwise.
    ///
    /// # Errors
    /// As [`score`](Self::score); `InvalidParam { name: "threshold" }` for a model
    /// without a threshold.
    pub fn predict(&self, x: &[T]) -> Result<T, Error> {
        self.threshold.ok_or(Error::InvalidParam { name: "threshold" })?;
        self.flag(self.score(x)?)
    }

    /// The verdict on a score [`score`](Self::score) gave: 1 beyond the threshold, 0
    /// otherwise — for a caller that wants both without scoring twice.
    ///
    /// # Errors
    /// `InvalidParam { name: "threshold" }` for a model without a threshold.
    pub fn flag(&self, distance2: T) -> Result<T, Error> {
        let threshold = self.threshold.ok_or(Error::InvalidParam { name: "threshold" })?;
        Ok(if distance2 > threshold { T::ONE } else { T::ZERO })
    }

    /// Writes the model file bytes into `out`; returns their length.
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        model::encode(ModelKind::Novelty, ScalarKind::of::<T>(), &self.payload()?, out)
    }

    /// Bytes [`encode`](Self::encode) writes (`usize::MAX` for a shape beyond `u32`).
    pub fn encoded_len(&self) -> usize {
        self.payload().and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    fn payload(&self) -> Result<Payload<'_, T>, Error> {
        let (centres, weights, _) = self.parts();
        let shape = (
            u32_field(self.dim, "dim")?,
            u32_field(self.centres, "centres")?,
            self.normalised,
            self.kernel.kind(),
            self.threshold,
            self.constant,
        );
        Ok((shape, centres, weights))
    }

    /// Decodes model file bytes into `storage`.
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a novelty model of scalar `T`;
    /// `CapacityExceeded` when `storage` is too short.
    pub fn decode_in(bytes: &[u8], storage: S) -> Result<Self, Error> {
        Self::from_envelope_in(&Envelope::parse(bytes)?, storage)
    }

    /// Decodes the payload of an envelope already parsed into `storage`.
    ///
    /// # Errors
    /// As [`decode_in`](Self::decode_in), for everything after the envelope.
    pub fn from_envelope_in(envelope: &Envelope<'_>, mut storage: S) -> Result<Self, Error> {
        let corrupt = Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::Novelty, ScalarKind::of::<T>())?;
        let ((dim, centres, normalised, kind, threshold, constant), rest) =
            postcard::take_from_bytes::<Shape<T>>(envelope.payload).map_err(|_| corrupt)?;
        let (dim, centres) = (dim as usize, centres as usize);
        let kernel = Kernel::new(kind).map_err(|_| corrupt)?;
        let threshold_ok = threshold.is_none_or(|t| t.is_finite());
        if dim == 0 || centres == 0 || !threshold_ok || !constant.is_finite() {
            return Err(corrupt);
        }
        check_capacity(NoveltyModel::scalars_len(dim, centres), storage.as_ref().len())?;
        let (centre_values, weights, norms) = split_mut(storage.as_mut(), dim, centres).ok_or(corrupt)?;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let mut complete = true;
        for part in [&mut *centre_values, &mut *weights] {
            let expected = part.len();
            complete &= SliceSeed(part).deserialize(&mut deserializer).map_err(|_| corrupt)? == expected;
        }
        if !complete || !deserializer.finalize().map_err(|_| corrupt)?.is_empty() {
            return Err(corrupt);
        }
        check_finite(centre_values).and(check_finite(weights)).map_err(|_| corrupt)?;
        for (norm, centre) in norms.iter_mut().zip(centre_values.chunks_exact(dim)) {
            let diagonal = kernel.diagonal(centre);
            *norm = if normalised { diagonal.sqrt() } else { T::ONE };
            if !(norm.is_finite() && *norm > T::ZERO) {
                return Err(corrupt);
            }
        }
        Ok(NoveltyModel { storage, kernel, dim, centres, normalised, threshold, constant })
    }
}

/// `values` split into centres (`m·d`), weights (`m`) and norms (`m`).
fn split_mut<T>(values: &mut [T], dim: usize, centres: usize) -> Option<(&mut [T], &mut [T], &mut [T])> {
    let values = values.get_mut(..NoveltyModel::scalars_len(dim, centres))?;
    let (centre_values, rest) = values.split_at_mut_checked(centres.checked_mul(dim)?)?;
    let (weights, norms) = rest.split_at_mut_checked(centres)?;
    Some((centre_values, weights, norms))
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::Rng;

    fn mass<T: Real>(kernel: Kernel<T>, normalised: bool) -> CentreOfMass<T, Vec<T>, Vec<u32>> {
        let (m, dim) = (12, 3);
        let mut mass =
            CentreOfMass::new_in(vec![T::ZERO; CentreOfMass::scalars_len(m, dim)], vec![0; m], dim, kernel, normalised)
                .unwrap();
        let mut rng = Rng::seed_from_u64(9);
        let mut point = || (0..dim).map(|_| T::from_f64(rng.normal::<f64>() + 0.3)).collect::<Vec<T>>();
        for _ in 0..m {
            mass.add_centre(&point()).unwrap();
        }
        for _ in 0..200 {
            mass.enter(&point()).unwrap();
        }
        mass
    }

    /// The frozen model scores as the live set does (to rounding: weights a_j/n in place of
    /// counts), round-trips through its bytes to the same scores bit for bit, and flags by
    /// its threshold.
    fn scores_as_the_set_and_round_trips<T: Real>() {
        for (kernel, normalised) in [
            (Kernel::rbf(T::from_f64(0.4)).unwrap(), false),
            (Kernel::polynomial(2, T::from_f64(0.5), T::ONE).unwrap(), true),
        ] {
            let live = mass::<T>(kernel, normalised);
            let storage = vec![T::ZERO; NoveltyModel::scalars_len(3, 12)];
            let model = NoveltyModel::from_mass_in(&live, Some(T::from_f64(0.5)), storage).unwrap();
            let mut bytes = vec![0u8; model.encoded_len()];
            assert_eq!(model.encode(&mut bytes), Ok(bytes.len()));
            let decoded = NoveltyModel::decode_in(&bytes, vec![T::ZERO; NoveltyModel::scalars_len(3, 12)]).unwrap();
            let tolerance = if T::BYTES == 4 { 1e-4 } else { 1e-12 };
            for x in [[0.3, 0.2, 0.1], [3.0, -2.0, 1.0], [0.0, 1.0, -1.0]] {
                let x = x.map(T::from_f64);
                let (a, b) = (live.score(&x).unwrap().to_f64(), model.score(&x).unwrap().to_f64());
                assert!((a - b).abs() <= tolerance * (1.0 + a.abs()), "{a} vs {b}");
                assert_eq!(decoded.score(&x), model.score(&x), "decoded bits");
                let flag = if model.score(&x).unwrap() > T::from_f64(0.5) { T::ONE } else { T::ZERO };
                assert_eq!(decoded.predict(&x), Ok(flag));
            }
        }
    }

    fn bad_input_and_bytes<T: Real>() {
        let live = mass::<T>(Kernel::rbf(T::ONE).unwrap(), false);
        let len = NoveltyModel::scalars_len(3, 12);
        let no_threshold = NoveltyModel::from_mass_in(&live, None, vec![T::ZERO; len]).unwrap();
        assert_eq!(no_threshold.predict(&[T::ZERO; 3]), Err(Error::InvalidParam { name: "threshold" }));
        assert_eq!(no_threshold.score(&[T::ZERO; 2]), Err(Error::DimensionMismatch { expected: 3, got: 2 }));
        let nan = T::from_f64(f64::NAN);
        assert_eq!(no_threshold.score(&[nan, T::ZERO, T::ZERO]), Err(Error::NonFinite));
        assert!(NoveltyModel::from_mass_in(&live, Some(nan), vec![T::ZERO; len]).is_err());
        assert!(NoveltyModel::from_mass_in(&live, None, vec![T::ZERO; len - 1]).is_err());
        let mut bytes = vec![0u8; no_threshold.encoded_len()];
        no_threshold.encode(&mut bytes).unwrap();
        for cut in 0..bytes.len() {
            assert!(NoveltyModel::<T, _>::decode_in(&bytes[..cut], vec![T::ZERO; len]).is_err(), "{cut}");
        }
        let small = NoveltyModel::<T, _>::decode_in(&bytes, vec![T::ZERO; len - 1]).err();
        assert!(matches!(small, Some(Error::CapacityExceeded { .. })));
        let payload = Envelope::parse(&bytes).unwrap().payload;
        for cut in 0..payload.len() {
            let envelope = Envelope {
                kind: ModelKind::Novelty,
                scalar: ScalarKind::of::<T>(),
                scaler: &[],
                class_names: &[],
                feature_names: &[],
                calibration: &[],
                payload: &payload[..cut],
            };
            assert!(NoveltyModel::<T, _>::from_envelope_in(&envelope, vec![T::ZERO; len]).is_err(), "{cut}");
        }
    }

    macro_rules! gen_tests {
        ($($scalar:ident),*) => {$(
            mod $scalar {
                #[test]
                fn scores_as_the_set_and_round_trips() {
                    super::scores_as_the_set_and_round_trips::<$scalar>();
                }
                #[test]
                fn bad_input_and_bytes() {
                    super::bad_input_and_bytes::<$scalar>();
                }
            }
        )*};
    }

    gen_tests!(f32, f64);
}
