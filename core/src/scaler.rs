//! Online standardisation of features: Welford's running mean and variance per feature,
//! and the map `x ↦ (x − μ)/σ` a learner applies before it sees a sample.
//!
//! Sensor streams come in raw units (pressure in pascals beside a flag in 0/1); kernels
//! and margins compare features on one scale, so each feature is centred and divided by
//! its standard deviation as known so far. After `n` samples, per feature (Welford 1962;
//! the form of Knuth, TAOCP vol. 2, §4.2.2):
//!
//! ```text
//! δ = x − μₙ₋₁        μₙ = μₙ₋₁ + δ/n        M₂,ₙ = M₂,ₙ₋₁ + δ·(x − μₙ)
//! σₙ = √(M₂,ₙ / n)    (the population deviation)
//! ```
//!
//! Both updates add a small correction to a running value, so no sum of squares can
//! cancel: sound in `f32`. A feature whose deviation is not resolvable in `T` —
//! `σ ≤ 16ε·|μ|`, a constant feature, or `1/σ` not finite — is only centred (its scale
//! is 1), so `transform` never divides by zero. An update that would leave a statistic
//! non-finite (a value near `T::MAX`) is refused with [`Error::NonFinite`] and changes
//! nothing.
//!
//! A scaler may also carry a **relevance weight** `wⱼ ≥ 0` per feature (1 unless set,
//! [`Scaler::set_weights`]): the map is then `x ↦ w·(x − μ)/σ`, and an isotropic kernel
//! on the weighted features is the kernel with one width per feature, `γ·wⱼ²` (automatic
//! relevance determination): a feature of weight 0 is ignored. `kestrel train
//! --relevance` chooses the weights by kernel-target alignment.
//!
//! Features can be **left as they come** ([`Scaler::leave`]): their `μ` and `M₂` are held
//! at 0, as an unseen feature's, so the map is `x ↦ w·x`. Indicator columns (a category
//! one-hot encoded) are left so, as scikit-learn's `OneHotEncoder` beside a
//! `StandardScaler` leaves them: standardised, a category of share `p` would take the value
//! `√((1 − p)/p)` (3 at `p` = 0.1, 10 at 0.01), and a column of many rare categories would
//! set every distance; centred, their zeros would no longer be zeros. A model file stores
//! the zeros, and a decoded scaler leaves such features alike.
//!
//! The scales `wⱼ/σⱼ` are kept beside the statistics, recomputed by [`Scaler::observe`],
//! so [`Scaler::transform`] costs one subtraction and one product per feature. A model
//! file stores `(n, μ, M₂)` and the weights unless they are all 1 ([`Scaler::section`],
//! inserted by [`crate::model::add_scaler`]), and a decoded scaler recomputes the scales
//! by the same function: a saved model scales exactly as the learner did.
//!
//! Memory: [`Scaler::scalars_len`]`(d) = 4d` scalars (`μ`, `M₂`, `w`, `w/σ`) and a count.
//! Cost: O(d) per observation (one square root per feature), O(d) per transform.
//!
//! # Examples
//! ```
//! use kestrel_core::scaler::Scaler;
//! let mut scaler = Scaler::new_in([0.0f32; Scaler::scalars_len(2)], 2)?;
//! for x in [[1000.0, 0.0], [1002.0, 1.0], [998.0, 0.0], [1000.0, 1.0]] {
//!     scaler.observe(&x)?;
//! }
//! let mut x = [1001.0f32, 1.0];
//! scaler.transform(&mut x)?;
//! // μ = (1000, 0.5), σ = (√2, 0.5): one unit above the first mean is 1/√2 deviations.
//! assert!((x[0] - 0.70710677).abs() < 1e-6 && (x[1] - 1.0).abs() < 1e-6);
//! # Ok::<(), kestrel_core::Error>(())
//! ```

use serde::de::DeserializeSeed;
use serde::ser::{Serialize, SerializeTuple, Serializer};

use crate::model::{Envelope, ModelError, SliceSeed};
use crate::real::check_finite;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// Running per-feature mean and deviation over caller storage, and the standardisation
/// they define.
#[derive(Debug)]
pub struct Scaler<T, S> {
    storage: S,
    dim: usize,
    count: u64,
    _scalar: core::marker::PhantomData<T>,
}

/// A scaler's statistics as a model file or a checkpoint stores them: the count, then
/// `μ` and `M₂`, then the relevance weights when any is not 1 (postcard: a varint and two
/// or three sequences of `d` scalars; a section without weights is the format from before
/// the weights).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScalerSection<'a, T> {
    /// Samples observed.
    pub count: u64,
    /// Running means `μ`.
    pub mean: &'a [T],
    /// Running sums of squared deviations `M₂`.
    pub m2: &'a [T],
    /// Relevance weights `w`; empty when every weight is 1.
    pub weights: &'a [T],
}

impl<T: Serialize> Serialize for ScalerSection<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let weighted = !self.weights.is_empty();
        let mut tuple = serializer.serialize_tuple(3 + usize::from(weighted))?;
        tuple.serialize_element(&self.count)?;
        tuple.serialize_element(self.mean)?;
        tuple.serialize_element(self.m2)?;
        if weighted {
            tuple.serialize_element(self.weights)?;
        }
        tuple.end()
    }
}

impl<T, S: Clone> Clone for Scaler<T, S> {
    fn clone(&self) -> Self {
        Scaler { storage: self.storage.clone(), dim: self.dim, count: self.count, _scalar: core::marker::PhantomData }
    }

    /// Copies `source` into this scaler's storage: no allocation for a `Vec` of the same
    /// length (a learner keeps an undo copy this way).
    fn clone_from(&mut self, source: &Self) {
        self.storage.clone_from(&source.storage);
        (self.dim, self.count) = (source.dim, source.count);
    }
}

impl Scaler<(), ()> {
    /// Scalars of storage a scaler of `dim` features needs: `4·dim` (saturating).
    pub const fn scalars_len(dim: usize) -> usize {
        dim.saturating_mul(4)
    }

    /// The number of features `d` of the scaler section `envelope` carries, read from the
    /// section's header without decoding it, so a caller can size the storage of
    /// [`Scaler::from_envelope_in`] exactly; `None` without a scaler.
    ///
    /// # Errors
    /// `Error::Model(Payload)` when the section's header does not decode.
    pub fn envelope_dim(envelope: &Envelope<'_>) -> Result<Option<usize>, Error> {
        if envelope.scaler.is_empty() {
            return Ok(None);
        }
        let corrupt = |_| Error::Model(ModelError::Payload);
        let (_count, rest) = postcard::take_from_bytes::<u64>(envelope.scaler).map_err(corrupt)?;
        let (dim, _) = postcard::take_from_bytes::<usize>(rest).map_err(corrupt)?;
        Ok(Some(dim))
    }
}

impl<T: Real, S: Storage<T>> Scaler<T, S> {
    /// A scaler of `dim` features that has observed nothing (it centres nothing and
    /// scales by 1 until it has).
    ///
    /// # Errors
    /// `InvalidParam { name: "dim" }` for 0; `CapacityExceeded` when `storage` holds fewer
    /// than [`Scaler::scalars_len`]`(dim)` scalars.
    pub fn new_in(mut storage: S, dim: usize) -> Result<Self, Error> {
        if dim == 0 {
            return Err(Error::InvalidParam { name: "dim" });
        }
        let len = Scaler::scalars_len(dim);
        check_capacity(len, storage.as_ref().len())?;
        let values = storage.as_mut().get_mut(..len).unwrap_or_default();
        let (stats, weights_and_scales) = values.split_at_mut(2 * dim);
        stats.fill(T::ZERO);
        weights_and_scales.fill(T::ONE);
        Ok(Scaler { storage, dim, count: 0, _scalar: core::marker::PhantomData })
    }

    /// The scaler whose statistics are `section` (from [`section`](Self::section)), in
    /// `storage`; its scales are recomputed, so it transforms exactly as the saved one.
    ///
    /// # Errors
    /// `DimensionMismatch` unless `μ` and `M₂` both have `dim` values (and the weights
    /// `dim` or none); `NonFinite` for a non-finite statistic or weight;
    /// `InvalidParam { name: "m2" }` for a negative `M₂`, `"weights"` for a negative weight,
    /// or `"count"` for statistics with no sample; as [`new_in`](Self::new_in).
    pub fn from_section_in(storage: S, dim: usize, section: ScalerSection<'_, T>) -> Result<Self, Error> {
        check_section(dim, section)?;
        let mut scaler = Scaler::new_in(storage, dim)?;
        scaler.count = section.count;
        let (mean, m2, weights, _) = scaler.parts_mut();
        mean.copy_from_slice(section.mean);
        m2.copy_from_slice(section.m2);
        if !section.weights.is_empty() {
            weights.copy_from_slice(section.weights);
        }
        scaler.refresh_scales();
        Ok(scaler)
    }

    /// The scaler whose statistics `storage` already holds, in the order of its own
    /// storage: `μ`, `M₂` and the weights, `d` scalars each (a checkpoint read straight
    /// into the buffer, where a [`ScalerSection`]'s slices would need a second copy), of
    /// `count` samples; its scales are recomputed.
    ///
    /// # Errors
    /// As [`from_section_in`](Self::from_section_in) for the statistics, and
    /// `CapacityExceeded` when `storage` holds fewer than [`Scaler::scalars_len`]`(dim)`
    /// scalars.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::scaler::Scaler;
    /// let mut a = Scaler::new_in([0.0f32; Scaler::scalars_len(2)], 2)?;
    /// a.observe(&[1.0, 10.0])?;
    /// a.observe(&[3.0, 30.0])?;
    /// // μ, M₂ and the weights (all 1) where a checkpoint's reader would put them.
    /// let mut storage = [1.0f32; Scaler::scalars_len(2)];
    /// storage[..2].copy_from_slice(a.section().mean);
    /// storage[2..4].copy_from_slice(a.section().m2);
    /// let b = Scaler::from_statistics_in(storage, 2, a.count())?;
    /// let (mut x, mut y) = ([2.0, 0.0], [2.0, 0.0]);
    /// a.transform(&mut x)?;
    /// b.transform(&mut y)?;
    /// assert_eq!(x, y);
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn from_statistics_in(storage: S, dim: usize, count: u64) -> Result<Self, Error> {
        let len = Scaler::scalars_len(dim);
        check_capacity(len, storage.as_ref().len())?;
        let stats = storage.as_ref().get(..3 * dim).unwrap_or_default();
        let (mean, rest) = stats.split_at(dim.min(stats.len()));
        let (m2, weights) = rest.split_at(dim.min(rest.len()));
        check_section(dim, ScalerSection { count, mean, m2, weights })?;
        let mut scaler = Scaler { storage, dim, count, _scalar: core::marker::PhantomData };
        scaler.refresh_scales();
        Ok(scaler)
    }

    /// The scaler a model file carries (see [`crate::model`]), decoded into `storage`;
    /// `None` when the model takes its inputs as they come.
    ///
    /// # Errors
    /// `Error::Model(Payload)` for a section that does not decode or holds impossible
    /// statistics; `CapacityExceeded` when `storage` holds fewer than
    /// [`Scaler::scalars_len`]`(d)` scalars.
    pub fn from_envelope_in(envelope: &Envelope<'_>, mut storage: S) -> Result<Option<Self>, Error> {
        if envelope.scaler.is_empty() {
            return Ok(None);
        }
        let corrupt = |_| Error::Model(ModelError::Payload);
        let (count, rest) = postcard::take_from_bytes::<u64>(envelope.scaler).map_err(corrupt)?;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let capacity = storage.as_ref().len();
        let quarter = storage.as_mut().get_mut(..capacity / 4).unwrap_or_default();
        let dim = SliceSeed(quarter)
            .deserialize(&mut deserializer)
            .map_err(|_| Error::CapacityExceeded { needed: Scaler::scalars_len(capacity / 4 + 1), capacity })?;
        let m2 = storage.as_mut().get_mut(dim..2 * dim).unwrap_or_default();
        let m2_read = SliceSeed(m2).deserialize(&mut deserializer).map_err(corrupt)?;
        let weights = storage.as_mut().get_mut(2 * dim..3 * dim).unwrap_or_default();
        weights.fill(T::ONE);
        let trailing = deserializer.finalize().map_err(corrupt)?;
        let weights_read = if trailing.is_empty() {
            dim
        } else {
            let mut deserializer = postcard::Deserializer::from_bytes(trailing);
            let read = SliceSeed(weights).deserialize(&mut deserializer).map_err(corrupt)?;
            if !deserializer.finalize().map_err(corrupt)?.is_empty() {
                return Err(Error::Model(ModelError::Payload));
            }
            read
        };
        if m2_read != dim || weights_read != dim {
            return Err(Error::Model(ModelError::Payload));
        }
        let stats = storage.as_ref().get(..3 * dim).unwrap_or_default();
        let (mean, rest) = stats.split_at(dim);
        let (m2, weights) = rest.split_at(dim);
        let section = ScalerSection { count, mean, m2, weights };
        check_section(dim, section).map_err(|_| Error::Model(ModelError::Payload))?;
        let mut scaler = Scaler { storage, dim, count, _scalar: core::marker::PhantomData };
        scaler.refresh_scales();
        Ok(Some(scaler))
    }

    /// Features per sample.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Samples observed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The running means `μ`.
    pub fn mean(&self) -> &[T] {
        self.storage.as_ref().get(..self.dim).unwrap_or_default()
    }

    /// The relevance weights `w` (all 1 unless [`set_weights`](Self::set_weights) set them).
    pub fn weights(&self) -> &[T] {
        self.storage.as_ref().get(2 * self.dim..3 * self.dim).unwrap_or_default()
    }

    /// The factors `w/σ` the transform multiplies by (`w` where `σ` is not resolvable).
    pub fn scales(&self) -> &[T] {
        self.storage.as_ref().get(3 * self.dim..4 * self.dim).unwrap_or_default()
    }

    /// Sets the relevance weights: from now on the transform is `x ↦ w·(x − μ)/σ`.
    ///
    /// # Errors
    /// `DimensionMismatch` unless `weights` has `d` values; `NonFinite` for a non-finite
    /// weight; `InvalidParam { name: "weights" }` for a negative one. The scaler is
    /// unchanged on error.
    pub fn set_weights(&mut self, weights: &[T]) -> Result<(), Error> {
        check_weights(self.dim, weights)?;
        self.parts_mut().2.copy_from_slice(weights);
        self.refresh_scales();
        Ok(())
    }

    /// Leaves the features `features` as they come: their `μ` and `M₂` are set to 0, and
    /// the transform is `xⱼ ↦ wⱼ·xⱼ` for them (module doc). [`observe`](Self::observe)
    /// moves the statistics again: call this after the last observation, or after each.
    /// O(|features|).
    ///
    /// # Errors
    /// `DimensionMismatch` when `features` reaches past `d`. The scaler is unchanged on
    /// error.
    pub fn leave(&mut self, features: core::ops::Range<usize>) -> Result<(), Error> {
        if features.end > self.dim {
            return Err(Error::DimensionMismatch { expected: self.dim, got: features.end });
        }
        let (mean, m2, _, _) = self.parts_mut();
        for statistics in [mean, m2] {
            statistics.get_mut(features.clone()).unwrap_or_default().fill(T::ZERO);
        }
        self.refresh_scales();
        Ok(())
    }

    /// The statistics to save: what [`from_section_in`](Self::from_section_in) reads
    /// (the weights empty when they are all 1).
    pub fn section(&self) -> ScalerSection<'_, T> {
        let stats = self.storage.as_ref().get(..3 * self.dim).unwrap_or_default();
        let (mean, rest) = stats.split_at(self.dim.min(stats.len()));
        let (m2, weights) = rest.split_at(self.dim.min(rest.len()));
        let weights = if weights.iter().all(|&w| w == T::ONE) { &[] } else { weights };
        ScalerSection { count: self.count, mean, m2, weights }
    }

    /// Adds `x` to the statistics (Welford's update) and recomputes the scales.
    ///
    /// # Errors
    /// `DimensionMismatch` for `x.len() ≠ d`; `NonFinite` for a non-finite value, or one
    /// whose update would overflow `T`. The scaler is unchanged on error.
    pub fn observe(&mut self, x: &[T]) -> Result<(), Error> {
        self.check_row(x)?;
        let count = self.count.saturating_add(1);
        let n = T::from_f64(count as f64);
        let (mean, m2, _, _) = self.parts_mut();
        // First every update is computed and checked, then applied: nothing changes on error.
        let finite = |((&mu, &m), &xi)| {
            let (mu, m) = welford(mu, m, xi, n);
            mu.is_finite() && m.is_finite()
        };
        if !mean.iter().zip(m2.iter()).zip(x).all(finite) {
            return Err(Error::NonFinite);
        }
        for ((mu, m), &xi) in mean.iter_mut().zip(m2.iter_mut()).zip(x) {
            (*mu, *m) = welford(*mu, *m, xi, n);
        }
        self.count = count;
        self.refresh_scales();
        Ok(())
    }

    /// Standardises `x` in place: `xⱼ ← (xⱼ − μⱼ)·(wⱼ/σⱼ)`.
    ///
    /// # Errors
    /// `DimensionMismatch` for `x.len() ≠ d`; `NonFinite` for a non-finite value (`x` is
    /// unchanged then).
    pub fn transform(&self, x: &mut [T]) -> Result<(), Error> {
        self.check_row(x)?;
        for ((xi, &mu), &scale) in x.iter_mut().zip(self.mean()).zip(self.scales()) {
            *xi = (*xi - mu) * scale;
        }
        Ok(())
    }

    fn check_row(&self, x: &[T]) -> Result<(), Error> {
        if x.len() != self.dim {
            return Err(Error::DimensionMismatch { expected: self.dim, got: x.len() });
        }
        check_finite(x)
    }

    /// `(μ, M₂, w, w/σ)`.
    fn parts_mut(&mut self) -> (&mut [T], &mut [T], &mut [T], &mut [T]) {
        let d = self.dim;
        let values = self.storage.as_mut().get_mut(..4 * d).unwrap_or_default();
        let (mean, rest) = values.split_at_mut(d.min(values.len()));
        let (m2, rest) = rest.split_at_mut(d.min(rest.len()));
        let (weights, scales) = rest.split_at_mut(d.min(rest.len()));
        (mean, m2, weights, scales)
    }

    /// `wⱼ/σⱼ` from the statistics, or `wⱼ` where `σⱼ` is not resolvable.
    fn refresh_scales(&mut self) {
        let n = T::from_f64(self.count.max(1) as f64);
        let (mean, m2, weights, scales) = self.parts_mut();
        for (((scale, &mu), &m), &w) in scales.iter_mut().zip(mean.iter()).zip(m2.iter()).zip(weights.iter()) {
            let sd = (m / n).sqrt();
            let inverse = T::ONE / sd;
            let resolvable = sd > T::from_f64(16.0) * T::EPSILON * mu.abs() && inverse.is_finite();
            *scale = if resolvable { w * inverse } else { w };
        }
    }
}

/// `Ok` when `section` holds statistics of `dim` features a scaler can have reached:
/// finite, `M₂ ≥ 0`, nothing but zeros before the first sample, and no weights or `dim`
/// valid ones.
fn check_section<T: Real>(dim: usize, section: ScalerSection<'_, T>) -> Result<(), Error> {
    if dim == 0 {
        return Err(Error::InvalidParam { name: "dim" });
    }
    for values in [section.mean, section.m2] {
        if values.len() != dim {
            return Err(Error::DimensionMismatch { expected: dim, got: values.len() });
        }
        check_finite(values)?;
    }
    if section.m2.iter().any(|&m| m < T::ZERO) {
        return Err(Error::InvalidParam { name: "m2" });
    }
    let empty = section.mean.iter().chain(section.m2).all(|&v| v == T::ZERO);
    if section.count == 0 && !empty {
        return Err(Error::InvalidParam { name: "count" });
    }
    if section.weights.is_empty() { Ok(()) } else { check_weights(dim, section.weights) }
}

/// `Ok` when `weights` are `dim` finite values `≥ 0`.
fn check_weights<T: Real>(dim: usize, weights: &[T]) -> Result<(), Error> {
    if weights.len() != dim {
        return Err(Error::DimensionMismatch { expected: dim, got: weights.len() });
    }
    check_finite(weights)?;
    if weights.iter().any(|&w| w < T::ZERO) {
        return Err(Error::InvalidParam { name: "weights" });
    }
    Ok(())
}

/// Welford's step for one feature: `(μ, M₂)` after `x`, the `n`-th sample.
fn welford<T: Real>(mean: T, m2: T, x: T, n: T) -> (T, T) {
    let delta = x - mean;
    let mean = mean + delta / n;
    (mean, m2 + delta * (x - mean))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use std::vec::Vec;

    fn scaler(dim: usize) -> Scaler<f64, Vec<f64>> {
        Scaler::new_in(vec![0.0; Scaler::scalars_len(dim)], dim).unwrap()
    }

    /// Two-pass mean and population deviation in f64.
    fn reference(rows: &[[f64; 2]]) -> ([f64; 2], [f64; 2]) {
        let n = rows.len() as f64;
        let mean: [f64; 2] = core::array::from_fn(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n);
        let sd = core::array::from_fn(|j| (rows.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / n).sqrt());
        (mean, sd)
    }

    #[test]
    fn matches_the_two_pass_statistics() {
        let mut rng = crate::Rng::seed_from_u64(3);
        let rows: Vec<[f64; 2]> =
            (0..500).map(|_| [1e4 + 3.0 * rng.normal::<f64>(), 0.01 * rng.uniform_in(-1.0, 1.0)]).collect();
        let mut s = scaler(2);
        for r in &rows {
            s.observe(r).unwrap();
        }
        let (mean, sd) = reference(&rows);
        for j in 0..2 {
            assert!((s.mean()[j] - mean[j]).abs() <= 1e-12 * mean[j].abs().max(1e-3), "{j}");
            assert!((s.scales()[j] * sd[j] - 1.0).abs() < 1e-12, "{j}");
        }
        assert_eq!(s.count(), 500);
    }

    /// In f32, raw units far from 0 with a small spread: a naive Σx² − n·μ² loses every
    /// digit (1e4² has 8 digits in a 24-bit mantissa); Welford keeps the deviation.
    #[test]
    fn f32_keeps_a_small_spread_around_a_large_mean() {
        let mut rng = crate::Rng::seed_from_u64(4);
        let rows: Vec<[f64; 2]> = (0..2000).map(|_| [1e4 + rng.normal::<f64>(), rng.normal::<f64>()]).collect();
        let mut s = Scaler::new_in([0.0f32; 8], 2).unwrap();
        for r in &rows {
            s.observe(&[r[0] as f32, r[1] as f32]).unwrap();
        }
        let (_, sd) = reference(&rows);
        for (j, (&scale, sd)) in s.scales().iter().zip(sd).enumerate() {
            let relative = (f64::from(scale) * sd - 1.0).abs();
            assert!(relative < 1e-3, "feature {j}: {relative}");
        }
    }

    #[test]
    fn constant_features_are_centred_not_divided() {
        let mut s = scaler(2);
        for x in [[5.0, 1.0], [5.0, 3.0]] {
            s.observe(&x).unwrap();
        }
        assert_eq!(s.scales(), &[1.0, 1.0]);
        let mut x = [5.0, 2.0];
        s.transform(&mut x).unwrap();
        assert_eq!(x, [0.0, 0.0]);
        let fresh = scaler(2);
        let mut y = [7.0, -1.0];
        fresh.transform(&mut y).unwrap();
        assert_eq!(y, [7.0, -1.0], "nothing observed: the identity");
    }

    /// An indicator left as it comes keeps its values, the other features standardised;
    /// the section keeps it so, and a range past `d` changes nothing.
    #[test]
    fn features_left_as_they_come_keep_their_values() {
        let mut s = scaler(2);
        for i in 0..10 {
            s.observe(&[f64::from(i), f64::from(u8::from(i == 0))]).unwrap();
        }
        let standardised = s.scales()[1];
        assert!((standardised - 1.0 / 0.09f64.sqrt()).abs() < 1e-12, "{standardised}");
        assert_eq!(s.leave(1..3), Err(Error::DimensionMismatch { expected: 2, got: 3 }));
        assert_eq!(s.scales()[1], standardised);
        let scale = s.scales()[0];
        s.leave(1..2).unwrap();
        assert_eq!((s.scales()[0], s.scales()[1], s.section().mean[1], s.section().m2[1]), (scale, 1.0, 0.0, 0.0));
        let mut x = [4.5, 1.0];
        s.transform(&mut x).unwrap();
        assert_eq!(x, [0.0, 1.0]);
        let section = s.section();
        let mut decoded = scaler(2);
        decoded = Scaler::from_section_in(core::mem::take(&mut decoded.storage), 2, section).unwrap();
        assert_eq!(decoded.scales(), s.scales());
    }

    #[test]
    fn bad_rows_change_nothing() {
        let mut s = Scaler::new_in([0.0f32; 8], 2).unwrap();
        s.observe(&[1.0, 2.0]).unwrap();
        let before = (s.count(), s.storage);
        assert_eq!(s.observe(&[1.0]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(s.observe(&[f32::NAN, 0.0]), Err(Error::NonFinite));
        // (MAX − 1)² overflows M₂.
        assert_eq!(s.observe(&[1.0, f32::MAX]), Err(Error::NonFinite));
        assert_eq!((s.count(), s.storage), before);
        let mut x = [f32::INFINITY, 0.0];
        assert_eq!(s.transform(&mut x), Err(Error::NonFinite));
        assert_eq!(x, [f32::INFINITY, 0.0]);
    }

    #[test]
    fn a_section_restores_the_same_transform() {
        let mut s = scaler(2);
        for x in [[1.0, -4.0], [2.5, 8.0], [-3.0, 1.0]] {
            s.observe(&x).unwrap();
        }
        let copy = Scaler::from_section_in(vec![9.0; 8], 2, s.section()).unwrap();
        assert_eq!(copy.storage, s.storage);
        assert_eq!(copy.count(), 3);
        let mut wrong = s.section();
        wrong.m2 = &[1.0, -1.0];
        assert_eq!(Scaler::from_section_in(vec![0.0; 8], 2, wrong).err(), Some(Error::InvalidParam { name: "m2" }));
        wrong.count = 0;
        wrong.m2 = &[1.0, 1.0];
        assert_eq!(Scaler::from_section_in(vec![0.0; 8], 2, wrong).err(), Some(Error::InvalidParam { name: "count" }));
        let short = Scaler::from_section_in(vec![0.0; 12], 3, s.section()).err();
        assert_eq!(short, Some(Error::DimensionMismatch { expected: 3, got: 2 }));
        assert_eq!(
            Scaler::<f64, _>::new_in(vec![0.0; 7], 2).err(),
            Some(Error::CapacityExceeded { needed: 8, capacity: 7 })
        );
        assert_eq!(Scaler::<f64, _>::new_in(vec![0.0; 5], 0).err(), Some(Error::InvalidParam { name: "dim" }));
    }

    #[test]
    fn statistics_in_the_storage_restore_the_same_transform() {
        let mut s = scaler(2);
        for x in [[1.0, -4.0], [2.5, 8.0], [-3.0, 1.0]] {
            s.observe(&x).unwrap();
        }
        s.set_weights(&[0.5, 2.0]).unwrap();
        let mut storage = vec![7.0; 8];
        storage[..6].copy_from_slice(&s.storage[..6]);
        let copy = Scaler::from_statistics_in(storage.clone(), 2, 3).unwrap();
        assert_eq!(copy.storage, s.storage);
        let refused = |storage: &[f64], count| Scaler::from_statistics_in(storage.to_vec(), 2, count).err();
        let mut bad = storage.clone();
        bad[2] = -1.0;
        assert_eq!(refused(&bad, 3), Some(Error::InvalidParam { name: "m2" }));
        bad[2] = f64::NAN;
        assert_eq!(refused(&bad, 3), Some(Error::NonFinite));
        bad = storage.clone();
        bad[4] = -0.5;
        assert_eq!(refused(&bad, 3), Some(Error::InvalidParam { name: "weights" }));
        assert_eq!(refused(&storage, 0), Some(Error::InvalidParam { name: "count" }));
        assert_eq!(refused(&storage[..7], 3), Some(Error::CapacityExceeded { needed: 8, capacity: 7 }));
        assert_eq!(Scaler::from_statistics_in(vec![0.0; 4], 0, 0).err(), Some(Error::InvalidParam { name: "dim" }));
    }

    #[test]
    fn weights_scale_the_standardised_features() {
        let mut s = scaler(2);
        for x in [[1.0, -4.0], [3.0, 8.0]] {
            s.observe(&x).unwrap();
        }
        let before = (s.count(), s.storage.clone());
        assert_eq!(s.set_weights(&[1.0]), Err(Error::DimensionMismatch { expected: 2, got: 1 }));
        assert_eq!(s.set_weights(&[1.0, -0.5]), Err(Error::InvalidParam { name: "weights" }));
        assert_eq!(s.set_weights(&[f64::NAN, 1.0]), Err(Error::NonFinite));
        assert_eq!((s.count(), &s.storage), (before.0, &before.1));
        s.set_weights(&[2.0, 0.0]).unwrap();
        // μ = (2, 2), σ = (1, 6).
        let mut x = [4.0, 100.0];
        s.transform(&mut x).unwrap();
        assert_eq!(x, [4.0, 0.0]);
        s.observe(&[2.0, 2.0]).unwrap();
        assert_eq!(s.weights(), &[2.0, 0.0], "observing keeps the weights");
        let unweighted =
            Scaler::from_section_in(vec![0.0; 8], 2, ScalerSection { weights: &[], ..s.section() }).unwrap();
        assert_eq!(s.scales()[0], 2.0 * unweighted.scales()[0]);
        assert_eq!(s.scales()[1], 0.0);
    }

    /// Weights travel in the model file after `M₂`; without weights the section has the
    /// bytes of the format from before them, `(count, μ, M₂)`.
    #[test]
    fn a_model_file_carries_the_weights() {
        use crate::model::{self, ModelKind, ScalarKind};
        let mut s = Scaler::new_in([0.0f32; 8], 2).unwrap();
        for x in [[1.0, 40.0], [3.0, 10.0]] {
            s.observe(&x).unwrap();
        }
        let mut plain = [0u8; 64];
        let (mean, m2) = (s.section().mean, s.section().m2);
        let expected = postcard::to_slice(&(2u64, mean, m2), &mut plain).unwrap();
        let mut unweighted = [0u8; 64];
        assert_eq!(postcard::to_slice(&s.section(), &mut unweighted).unwrap(), expected);
        s.set_weights(&[0.5, 3.0]).unwrap();
        let mut buf = [0u8; 128];
        let n = model::encode(ModelKind::Slkl, ScalarKind::F32, &(1u32, 2.0f32), &mut buf).unwrap();
        let n = model::add_scaler(&mut buf, n, s.section()).unwrap();
        let envelope = Envelope::parse(&buf[..n]).unwrap();
        let decoded = Scaler::from_envelope_in(&envelope, [0.0f32; 8]).unwrap().unwrap();
        assert_eq!((decoded.weights(), decoded.scales()), (s.weights(), s.scales()));
        for weights in [&[0.5f32, -3.0][..], &[0.5]] {
            let mut buf = [0u8; 128];
            let n = model::encode(ModelKind::Slkl, ScalarKind::F32, &(1u32, 2.0f32), &mut buf).unwrap();
            let n = model::add_scaler(&mut buf, n, ScalerSection { weights, ..s.section() }).unwrap();
            let envelope = Envelope::parse(&buf[..n]).unwrap();
            let e = Scaler::<f32, _>::from_envelope_in(&envelope, [0.0f32; 8]).err();
            assert_eq!(e, Some(Error::Model(ModelError::Payload)), "{weights:?}");
        }
    }

    /// A model file with a scaler gives it back; one without gives `None`; a section
    /// with impossible statistics or too little storage is an error.
    #[test]
    fn a_model_file_carries_the_scaler() {
        use crate::model::{self, ModelKind, ScalarKind};
        let mut s = Scaler::new_in([0.0f32; 8], 2).unwrap();
        for x in [[1.0, 40.0], [3.0, 10.0]] {
            s.observe(&x).unwrap();
        }
        let mut buf = [0u8; 128];
        let n = model::encode(ModelKind::Slkl, ScalarKind::F32, &(1u32, 2.0f32), &mut buf).unwrap();
        let bare = Envelope::parse(&buf[..n]).unwrap();
        assert!(Scaler::<f32, _>::from_envelope_in(&bare, [0.0f32; 8]).unwrap().is_none());
        let n = model::add_scaler(&mut buf, n, s.section()).unwrap();
        let envelope = Envelope::parse(&buf[..n]).unwrap();
        let decoded = Scaler::from_envelope_in(&envelope, [0.0f32; 9]).unwrap().unwrap();
        assert_eq!((decoded.dim(), decoded.count(), decoded.scales()), (2, 2, s.scales()));
        let small = Scaler::<f32, _>::from_envelope_in(&envelope, [0.0f32; 7]).err();
        assert_eq!(small, Some(Error::CapacityExceeded { needed: 8, capacity: 7 }));
        let mut buf = [0u8; 128];
        let n = model::encode(ModelKind::Slkl, ScalarKind::F32, &(1u32, 2.0f32), &mut buf).unwrap();
        let negative = ScalerSection { count: 2, mean: &[1.0f32], m2: &[-1.0], weights: &[] };
        let n = model::add_scaler(&mut buf, n, negative).unwrap();
        let envelope = Envelope::parse(&buf[..n]).unwrap();
        let e = Scaler::<f32, _>::from_envelope_in(&envelope, [0.0f32; 4]).err();
        assert_eq!(e, Some(Error::Model(ModelError::Payload)));
    }
}
