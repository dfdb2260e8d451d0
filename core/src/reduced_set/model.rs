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
//! **Memory**: [`ReducedKernelModel::scalars_len`]`(d, m, outputs) = m·d + outputs·(m+1)
//! + classes` scalars.

use serde::de::DeserializeSeed;

use crate::dcd::LinearModel;
use crate::dcd::model::fill_default_labels;
use crate::error::check_len;
use crate::kernel::KernelKind;
use crate::linalg::{Triangle, check_triangle, solve_lower_transposed};
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SliceSeed, u32_field};
use crate::real::{check_finite, finite};
use crate::storage::{Storage, check_capacity};
use crate::{Error, Kernel, Real};

/// Centres, kernel and coefficients of a reduced-kernel classifier in storage `S`.
///
/// # Examples
/// ```
/// use kestrel_core::reduced_set::ReducedKernelModel;
/// use kestrel_core::Kernel;
/// // Two centres on a line; positive near 1, negative near −1.
/// let len = ReducedKernelModel::scalars_len(1, 2, 1);
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
    pub const fn scalars_len(dim: usize, centres: usize, outputs: usize) -> usize {
        let coefficients = outputs.saturating_mul(centres.saturating_add(1));
        centres.saturating_mul(dim).saturating_add(coefficients).saturating_add(LinearModel::classes(outputs))
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(dim: usize, centres: usize, outputs: usize) -> usize {
        Self::scalars_len(dim, centres, outputs).saturating_mul(core::mem::size_of::<T>())
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
    pub fn new_in(storage: S, kernel: Kernel<T>, dim: usize, centres: usize, outputs: usize) -> Result<Self, Error> {
        check_shape(dim, centres, outputs)?;
        let len = ReducedKernelModel::scalars_len(dim, centres, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let mut model = ReducedKernelModel { storage, kernel, dim, centres, outputs };
        let (centre_values, coefficients, labels) = model.parts_mut();
        centre_values.fill(T::ZERO);
        coefficients.fill(T::ZERO);
        fill_default_labels(labels, outputs);
        Ok(model)
    }

    /// The centres (`m·d`), the coefficients (`outputs·(m + 1)`) and the labels, in the
    /// storage the constructor checked (empty only if that check was bypassed, which it
    /// cannot be).
    fn parts(&self) -> (&[T], &[T], &[T]) {
        let len = ReducedKernelModel::scalars_len(self.dim, self.centres, self.outputs);
        let values = self.storage.as_ref().get(..len).unwrap_or_default();
        let (centres, rest) = values.split_at_checked(self.centres * self.dim).unwrap_or_default();
        let (coefficients, labels) = rest.split_at_checked(self.outputs * (self.centres + 1)).unwrap_or_default();
        (centres, coefficients, labels)
    }

    /// [`parts`](Self::parts), mutable.
    fn parts_mut(&mut self) -> (&mut [T], &mut [T], &mut [T]) {
        split_mut(self.storage.as_mut(), self.dim, self.centres, self.outputs).unwrap_or_default()
    }

    /// The centres, row-major `m × d`.
    pub fn centres_mut(&mut self) -> &mut [T] {
        self.parts_mut().0
    }

    /// The centres, row-major `m × d`.
    pub fn centres(&self) -> &[T] {
        self.parts().0
    }

    /// `[u_{c,0} … u_{c,m−1}, b_c]` of output `c`, or `None` for `c ≥ outputs`.
    pub fn coefficients_mut(&mut self, c: usize) -> Option<&mut [T]> {
        let stride = self.centres + 1;
        self.parts_mut().1.chunks_exact_mut(stride).nth(c)
    }

    /// Sets output `c`'s coefficients `[u_c, b_c]` from a linear model `(w, w_b)` trained on
    /// the features of the centres: `u = L⁻ᵀw` and `b_c = w_b·B`.
    ///
    /// With `whitening = Some(L)`, the packed lower factor of `K(Ã, Ã) = LLᵀ`
    /// ([`Triangle::Packed`], `m(m+1)/2` scalars), `w` was trained on the whitened Nyström
    /// features `L⁻¹z(x)`, `z(x) = K(x, Ã)` (seed 003, eq. 10-11); since
    /// `wᵀL⁻¹z = (L⁻ᵀw)ᵀz`, the model on the raw kernel values needs `u = L⁻ᵀw`, one
    /// back substitution solved in place in the coefficient slot. With `None`, `w` was
    /// trained on `z` itself and `u = w`. Either way `h_c(x) = uᵀz(x) + w_b·B` (eq. 13) is the
    /// linear model's decision value, and prediction needs no factor.
    ///
    /// Cost: O(m²) with whitening, O(m) without; no scratch.
    ///
    /// # Errors
    /// `IndexOutOfRange` for `output ≥ outputs`; `DimensionMismatch` unless
    /// `weights.len() = m`; `CapacityExceeded` for a factor shorter than `m(m+1)/2`;
    /// `Singular` for a zero or non-finite diagonal in it. The model is unchanged then.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::reduced_set::ReducedKernelModel;
    /// use kestrel_core::Kernel;
    /// let len = ReducedKernelModel::scalars_len(1, 2, 1);
    /// let mut model = ReducedKernelModel::new_in(vec![0.0; len], Kernel::rbf(1.0)?, 1, 2, 1)?;
    /// // L = [[2, 0], [1, 1]] packed; w = (4, 1), w_b = 0.5, B = 2.
    /// model.set_coefficients(0, &[4.0, 1.0], 0.5, 2.0, Some(&[2.0, 1.0, 1.0]))?;
    /// // Lᵀu = w: u₁ = 1, 2u₀ + u₁ = 4 → u₀ = 1.5.
    /// assert_eq!(model.coefficients_mut(0).unwrap(), &[1.5, 1.0, 1.0]);
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn set_coefficients(
        &mut self,
        output: usize,
        weights: &[T],
        bias_weight: T,
        bias: T,
        whitening: Option<&[T]>,
    ) -> Result<(), Error> {
        let m = self.centres;
        let outputs = self.outputs;
        check_len(m, weights.len())?;
        if let Some(l) = whitening {
            check_triangle(l, m, Triangle::Packed, weights)?;
        }
        let out_of_range = Error::IndexOutOfRange { index: output, len: outputs };
        let slot = self.coefficients_mut(output).ok_or(out_of_range)?;
        let (b, u) = slot.split_last_mut().ok_or(out_of_range)?;
        u.copy_from_slice(weights);
        if let Some(l) = whitening {
            solve_lower_transposed(l, m, Triangle::Packed, u)?;
        }
        *b = bias_weight * bias;
        Ok(())
    }

    /// The label of each class.
    pub fn labels_mut(&mut self) -> &mut [T] {
        self.parts_mut().2
    }

    /// The label of each class.
    pub fn labels(&self) -> &[T] {
        self.parts().2
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
        let (centres, coefficients, _) = self.parts();
        for (o, u) in out.iter_mut().zip(coefficients.chunks_exact(self.centres + 1)) {
            *o = u.last().copied().unwrap_or(T::ZERO);
        }
        for (j, centre) in centres.chunks_exact(self.dim).enumerate() {
            let k = self.kernel.eval_prefix(x, centre);
            for (o, u) in out.iter_mut().zip(coefficients.chunks_exact(self.centres + 1)) {
                if let Some(&u_j) = u.get(j) {
                    *o += u_j * k;
                }
            }
        }
        // A finite x far from the centres can overflow a kernel value: no decision then.
        check_finite(out)
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
            let values = values.get_mut(..self.outputs).unwrap_or_default();
            self.decision_values(x, values)?;
            best = argmax(values);
        } else {
            // More outputs than fit on the stack: one pass per output, no scratch.
            check_len(self.dim, x.len())?;
            check_finite(x)?;
            let (centres, coefficients, _) = self.parts();
            for (c, u) in coefficients.chunks_exact(self.centres + 1).enumerate() {
                let Some((&b, u)) = u.split_last() else { continue };
                let value = centres
                    .chunks_exact(self.dim)
                    .zip(u)
                    .fold(b, |acc, (centre, &uj)| acc + uj * self.kernel.eval_prefix(x, centre));
                let value = finite(value)?;
                if c == 0 || value > best.1 {
                    best = (c, value);
                }
            }
        }
        let class = if self.outputs == 1 { usize::from(best.1 >= T::ZERO) } else { best.0 };
        let labels = self.labels();
        labels.get(class).copied().ok_or(Error::IndexOutOfRange { index: class, len: labels.len() })
    }

    /// Writes the model file bytes into `out`; returns their length,
    /// [`encoded_len`](Self::encoded_len).
    ///
    /// # Errors
    /// `CapacityExceeded` when `out` is too small.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, Error> {
        model::encode(ModelKind::ReducedSvm, ScalarKind::of::<T>(), &self.payload()?, out)
    }

    /// Bytes [`encode`](Self::encode) writes: header, payload and trailer (`usize::MAX` for
    /// a model whose shape does not fit the file's `u32` fields, which cannot be encoded).
    pub fn encoded_len(&self) -> usize {
        self.payload().and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    /// The payload: `((dim, centres, outputs, kernel), centres, coefficients, labels)`.
    fn payload(&self) -> Result<Payload<'_, T>, Error> {
        let (centres, coefficients, labels) = self.parts();
        let shape = (
            u32_field(self.dim, "dim")?,
            u32_field(self.centres, "centres")?,
            u32_field(self.outputs, "outputs")?,
            self.kernel.kind(),
        );
        Ok((shape, centres, coefficients, labels))
    }

    /// Decodes model file bytes into `storage`.
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a valid reduced-kernel model of scalar `T`;
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
        envelope.expect(ModelKind::ReducedSvm, ScalarKind::of::<T>())?;
        let ((dim, centres, outputs, kind), rest) =
            postcard::take_from_bytes::<(u32, u32, u32, KernelKind<T>)>(envelope.payload).map_err(corrupt)?;
        let (dim, centres, outputs) = (dim as usize, centres as usize, outputs as usize);
        let kernel = Kernel::new(kind).map_err(|_| Error::Model(ModelError::Payload))?;
        check_shape(dim, centres, outputs).map_err(|_| Error::Model(ModelError::Payload))?;
        let len = ReducedKernelModel::scalars_len(dim, centres, outputs);
        check_capacity(len, storage.as_ref().len())?;
        let (centre_values, coefficients, labels) =
            split_mut(storage.as_mut(), dim, centres, outputs).ok_or(Error::Model(ModelError::Payload))?;
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

/// `values` split into centres (`m·d`), coefficients (`outputs·(m + 1)`) and labels, or
/// `None` when it is shorter than [`ReducedKernelModel::scalars_len`].
fn split_mut<T>(
    values: &mut [T],
    dim: usize,
    centres: usize,
    outputs: usize,
) -> Option<(&mut [T], &mut [T], &mut [T])> {
    let values = values.get_mut(..ReducedKernelModel::scalars_len(dim, centres, outputs))?;
    let (centre_values, rest) = values.split_at_mut_checked(centres.checked_mul(dim)?)?;
    let (coefficients, labels) = rest.split_at_mut_checked(outputs.checked_mul(centres.checked_add(1)?)?)?;
    Some((centre_values, coefficients, labels))
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

/// The model file payload, in the order postcard writes it.
type Payload<'a, T> = ((u32, u32, u32, KernelKind<T>), &'a [T], &'a [T], &'a [T]);

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn scalars_len_counts_every_part() {
        assert_eq!(ReducedKernelModel::scalars_len(2, 3, 1), 6 + 4 + 2);
        assert_eq!(ReducedKernelModel::scalars_len(2, 3, 3), 6 + 12 + 3);
    }

    macro_rules! gen_tests {
        ($($encoded_len:ident, $whitening:ident: $t:ty,)*) => {$(
            #[test]
            fn $encoded_len() {
                let kernel = Kernel::<$t>::rbf(0.5).unwrap();
                for outputs in [1, 3] {
                    let len = ReducedKernelModel::scalars_len(2, 3, outputs);
                    let mut m = ReducedKernelModel::new_in(vec![0.0; len], kernel, 2, 3, outputs).unwrap();
                    m.centres_mut().copy_from_slice(&[0.5, -1.0, 2.0, 0.0, 1e-3, 7.0]);
                    let n = m.encoded_len();
                    let mut exact = vec![0u8; n];
                    assert_eq!(m.encode(&mut exact), Ok(n));
                    assert!(m.encode(&mut exact[..n - 1]).is_err());
                    let copy = ReducedKernelModel::<$t, _>::decode_in(&exact, vec![0.0; len]).unwrap();
                    assert_eq!(copy, m);
                }
            }

            /// `set_coefficients` against the unfolded computation: the linear model on
            /// the whitened features `L⁻¹K(x, Ã)` and the folded model on `K(x, Ã)` agree.
            #[test]
            fn $whitening() {
                let kernel = Kernel::<$t>::rbf(0.7).unwrap();
                let (dim, m) = (2, 4);
                let centres: [$t; 8] = [0.0, 0.0, 1.0, 0.2, -0.5, 1.0, 0.3, -0.8];
                // L with L·Lᵀ = K(Ã, Ã), packed.
                let centre = |i: usize| &centres[i * dim..(i + 1) * dim];
                let chol = crate::Cholesky::factor_in(vec![0.0; crate::Cholesky::scalars_len(m)], m, m, |i, j| {
                    kernel.eval(centre(i), centre(j)).unwrap()
                })
                .unwrap();
                let l = chol.packed().to_vec();
                let (w, w_b, bias): ([$t; 4], $t, $t) = ([0.8, -1.5, 0.25, 2.0], -0.3, 1.5);
                let len = ReducedKernelModel::scalars_len(dim, m, 3);
                let mut model = ReducedKernelModel::new_in(vec![0.0; len], kernel, dim, m, 3).unwrap();
                model.centres_mut().copy_from_slice(&centres);
                model.set_coefficients(1, &w, w_b, bias, Some(&l)).unwrap();
                model.set_coefficients(2, &w, w_b, bias, None).unwrap();
                let tolerance = 64.0 * <$t>::EPSILON;
                for x in [[0.1, 0.1], [1.0, -1.0], [-0.4, 0.9]] {
                    let mut z: std::vec::Vec<$t> =
                        centres.chunks_exact(dim).map(|c| kernel.eval(&x, c).unwrap()).collect();
                    let raw = crate::linalg::dot(&w, &z).unwrap() + w_b * bias;
                    crate::linalg::solve_lower(&l, m, Triangle::Packed, &mut z).unwrap();
                    let whitened = crate::linalg::dot(&w, &z).unwrap() + w_b * bias;
                    let mut h = [0.0; 3];
                    model.decision_values(&x, &mut h).unwrap();
                    assert_eq!(h[0], 0.0);
                    assert!((h[1] - whitened).abs() <= tolerance * (1.0 + whitened.abs()), "{} vs {whitened}", h[1]);
                    assert!((h[2] - raw).abs() <= tolerance * (1.0 + raw.abs()), "{} vs {raw}", h[2]);
                }
                let before = model.clone();
                let singular = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
                assert_eq!(model.set_coefficients(0, &w, w_b, bias, Some(&singular)), Err(Error::Singular { pivot: 1 }));
                assert_eq!(model.set_coefficients(0, &w, w_b, bias, Some(&l[..9])), Err(Error::CapacityExceeded { needed: 10, capacity: 9 }));
                assert_eq!(model.set_coefficients(0, &w[..3], w_b, bias, None), Err(Error::DimensionMismatch { expected: 4, got: 3 }));
                assert_eq!(model.set_coefficients(3, &w, w_b, bias, None), Err(Error::IndexOutOfRange { index: 3, len: 3 }));
                assert_eq!(model, before);
            }
        )*};
    }

    gen_tests! {
        encoded_len_is_exact_f32, whitening_fold_f32: f32,
        encoded_len_is_exact_f64, whitening_fold_f64: f64,
    }

    #[test]
    fn one_vs_rest_round_trip_and_errors() {
        let len = ReducedKernelModel::scalars_len(2, 3, 3);
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
