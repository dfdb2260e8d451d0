//! Predictive uncertainty of reduced kernel ridge regression: the posterior variance of
//! the Gaussian process on the same low-rank features (seed 000 §4.1.4).
//!
//! **Model.** The [`krr`](crate::krr) regressor `f(x) = b + wᵀz(x)` with Nyström features
//! `z(x) = L⁻¹k(x)`, `k(x) = K(Ã, x)`, `LLᵀ = K(Ã, Ã)` (seed 000 §3.4) is the posterior
//! mean of the Gaussian process with kernel `z(x)ᵀz(x')` (the Nyström kernel), noise
//! variance `σ² = λ` (the ridge) and an intercept `b` under a flat prior (seed 000 §4.1.4:
//! `w ~ N(0, I)`, `y = b + Zw + ε`, `ε ~ N(0, σ²I)`; the posterior mean solves
//! `(ZᵀZ + σ²I)w = Zᵀy`, eq. of §4.1.1 with `K = ZZᵀ`). The intercept absorbs the mean
//! feature `z̄`, so with the centred `Z_c = Z − 1z̄ᵀ` and `A = Z_cᵀZ_c + λI` the posterior
//! covariance of `(b', w)` in `f(x) = b' + wᵀ(z(x) − z̄)` is `λ·diag(1/n, A⁻¹)` (the
//! intercept column is orthogonal to `Z_c`), and
//!
//! `Var f(x) = λ·(1/n + (z(x) − z̄)ᵀ A⁻¹ (z(x) − z̄))`,
//!
//! the **latent** (noise-free) variance of the function, which [`Posterior::variance`]
//! returns. The predictive variance of a new reading `y(x)` adds the noise:
//! `Var f(x) + λ` ([`Posterior::noise`]). At a training row the latent variance is `λ·H_ii`,
//! `H_ii` the leverage of [`krr`](crate::krr)'s leave-one-out. Without the intercept it is
//! the brief's `σ²zᵀ(ZᵀZ + σ²I)⁻¹z`; it grows to `λ(1/n + z̄ᵀA⁻¹z̄)` far from the data
//! (where `z(x) → 0`) and shrinks to `λ/n` at the features' mean.
//!
//! **Storage.** With `Z_cᵀZ_c = VΛVᵀ` (the [`RidgePath`](crate::krr::RidgePath)'s
//! eigendecomposition), `A⁻¹ = V(Λ + λI)⁻¹Vᵀ`, so
//! `(z − z̄)ᵀA⁻¹(z − z̄) = ‖M(k(x) − k̄)‖²` with `M = (Λ + λI)^(−1/2)VᵀL⁻¹` and
//! `k̄ = Lz̄` (the mean kernel vector of the training rows): one `m × m` product per
//! prediction, no solve.
//!
//! **File.** A krr model file is an SLKL model file ([`Predictor::encode`]) whose payload
//! goes on after the centres with the posterior, postcard
//! `(n: u32, noise: T, means: [T; m], factor: [T; m²])` ([`Posterior::encode`]), when its
//! trainer asked for it (`kestrel train --learner krr --posterior`). Files without it
//! (krr's default, older ones, and models of other learners) decode as before, and
//! [`Posterior::from_envelope_in`] gives `None` for them; a decoder older than this
//! section rejects a file that has it (`ModelError::Payload`).
//!
//! **Memory**: [`Posterior::scalars_len`]`(m) = m² + 2m` scalars (`M`, `k̄` and the kernel
//! vector of the point predicted); a variance costs `m` kernel evaluations and O(m²).

use serde::de::DeserializeSeed;

use crate::error::check_len;
use crate::model::{self, Envelope, ModelError, ModelKind, ScalarKind, SkipSeed, SliceSeed, u32_field};
use crate::real::{check_finite, finite};
use crate::slkl::Predictor;
use crate::storage::{Storage, check_capacity};
use crate::{Error, Real};

/// The posterior of the low-rank Gaussian process of a reduced kernel ridge model, in
/// storage `S`: what [`predict_with_variance`](Self::predict_with_variance) needs besides
/// the model.
///
/// # Examples
/// ```
/// use kestrel_core::krr::RidgePath;
/// use kestrel_core::gp::Posterior;
/// // One feature z (L = 1): the variance is λ(1/n + (z − z̄)²/(Σ(z_i − z̄)² + λ)).
/// let z = [0.0f64, 1.0, 2.0, 3.0, 4.0];
/// let y = [1.0, 3.0, 5.0, 7.0, 9.0];
/// let mut path = RidgePath::fit_in(vec![0.0; RidgePath::scalars_len(5, 1, 1)], &z, &y, 5, 1, 1)?;
/// let mut gp = path.posterior_in(0.5, &[1.0], vec![0.0; Posterior::scalars_len(1)])?;
/// let variance = gp.variance(&[4.0])?;
/// assert!((variance - 0.5 * (0.2 + 4.0 / 10.5)).abs() < 1e-12);
/// assert!(gp.variance(&[2.0])? < variance);
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Posterior<T, S> {
    storage: S,
    m: usize,
    n: usize,
    noise: T,
}

impl Posterior<(), ()> {
    /// Scalars the posterior of `m` centres needs: `m² + 2m` (saturating).
    pub const fn scalars_len(m: usize) -> usize {
        m.saturating_mul(m.saturating_add(2))
    }

    /// Bytes of [`scalars_len`](Self::scalars_len) scalars of type `T`.
    pub const fn bytes<T>(m: usize) -> usize {
        Self::scalars_len(m).saturating_mul(core::mem::size_of::<T>())
    }
}

impl<T: Real, S: Storage<T>> Posterior<T, S> {
    /// A posterior of `m` centres from `n` training rows, noise `λ`, whose `M` and `k̄`
    /// `fill(M, k̄)` writes (row-major `m × m`, then `m`).
    ///
    /// # Errors
    /// `InvalidParam` naming `m` or `n` (0) or `noise` (not finite and positive);
    /// `CapacityExceeded` when `storage` is short; the first error of `fill`; `NonFinite`
    /// when it wrote NaN/∞.
    pub(crate) fn build_in(
        mut storage: S,
        m: usize,
        n: usize,
        noise: T,
        fill: impl FnOnce(&mut [T], &mut [T]) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        if m == 0 {
            return Err(Error::InvalidParam { name: "m" });
        }
        if n == 0 {
            return Err(Error::InvalidParam { name: "n" });
        }
        if !(noise.is_finite() && noise > T::ZERO) {
            return Err(Error::InvalidParam { name: "noise" });
        }
        let needed = Posterior::scalars_len(m);
        check_capacity(needed, storage.as_ref().len())?;
        let short = Error::CapacityExceeded { needed, capacity: storage.as_ref().len() };
        let (rows, rest) = storage.as_mut().split_at_mut_checked(m * m).ok_or(short)?;
        let means = rest.get_mut(..m).ok_or(short)?;
        fill(rows, means)?;
        check_finite(rows)?;
        check_finite(means)?;
        Ok(Posterior { storage, m, n, noise })
    }

    /// Centres `m`.
    pub fn len(&self) -> usize {
        self.m
    }

    /// `false`: a posterior has one centre at least.
    pub fn is_empty(&self) -> bool {
        self.m == 0
    }

    /// The noise variance `σ² = λ`: the predictive variance of a reading is
    /// [`variance`](Self::variance)` + noise`.
    pub fn noise(&self) -> T {
        self.noise
    }

    /// Training rows `n`.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// `M = (Λ + λI)^(−1/2)VᵀL⁻¹`, row-major `m × m`.
    pub fn factor(&self) -> &[T] {
        self.storage.as_ref().get(..self.m * self.m).unwrap_or_default()
    }

    /// `k̄ = Lz̄`, the mean kernel vector of the training rows.
    pub fn means(&self) -> &[T] {
        let m = self.m;
        self.storage.as_ref().get(m * m..m * m + m).unwrap_or_default()
    }

    /// The latent variance `Var f(x) = λ(1/n + ‖M(k − k̄)‖²)` of the point whose kernel
    /// vector `K(Ã, x)` is `k` (`m` values; the features themselves when `L = I`). O(m²).
    ///
    /// # Errors
    /// `DimensionMismatch` for `k`; `NonFinite` for NaN/∞ in it or an overflow.
    pub fn variance(&self, k: &[T]) -> Result<T, Error> {
        check_len(self.m, k.len())?;
        check_finite(k)?;
        let quadratic = self.factor().chunks_exact(self.m).fold(T::ZERO, |acc, row| {
            let r = row.iter().zip(k).zip(self.means()).fold(T::ZERO, |s, ((&a, &k), &mean)| s + a * (k - mean));
            acc + r * r
        });
        finite(self.noise * (T::ONE / T::from_f64(self.n as f64) + quadratic))
    }

    /// `(f(x), Var f(x))`: the prediction of `model` (the regressor this posterior was
    /// trained with: its centres are `Ã`) and its latent variance. O(m·d + m²), no heap:
    /// the kernel vector goes in the posterior's storage.
    ///
    /// # Errors
    /// `DimensionMismatch` when `model` has another number of centres or `x` another
    /// dimension; `NonFinite` for NaN/∞ in `x` or an overflow.
    pub fn predict_with_variance<P: Storage<T>>(&mut self, model: &Predictor<T, P>, x: &[T]) -> Result<(T, T), Error> {
        check_len(self.m, model.len())?;
        let prediction = model.predict(x)?;
        let (m, kernel, dim) = (self.m, model.kernel(), model.dim());
        let work = self.storage.as_mut().get_mut(m * m + m..m * m + 2 * m).unwrap_or_default();
        for (slot, centre) in work.iter_mut().zip(model.centres().chunks_exact(dim)) {
            *slot = kernel.eval(x, centre)?;
        }
        let this = &*self;
        let k = this.storage.as_ref().get(m * m + m..m * m + 2 * m).unwrap_or_default();
        Ok((prediction, this.variance(k)?))
    }
    /// Writes the model file of `model` (the regressor this posterior belongs to) with the
    /// posterior after its centres (see the module doc); returns its length.
    ///
    /// # Errors
    /// `DimensionMismatch` when `model` has another number of centres; `InvalidParam` for
    /// a size beyond the file's `u32`; `CapacityExceeded` when `out` is too small.
    pub fn encode<P: Storage<T>>(&self, model: &Predictor<T, P>, out: &mut [u8]) -> Result<usize, Error> {
        check_len(self.m, model.len())?;
        model::encode(ModelKind::Slkl, ScalarKind::of::<T>(), &(model.payload()?, self.section()?), out)
    }

    /// Bytes [`encode`](Self::encode) writes (`usize::MAX` when it cannot).
    pub fn encoded_len<P: Storage<T>>(&self, model: &Predictor<T, P>) -> usize {
        let payload = model.payload().and_then(|p| Ok((p, self.section()?)));
        payload.and_then(|payload| model::encoded_len(&payload)).unwrap_or(usize::MAX)
    }

    fn section(&self) -> Result<Section<'_, T>, Error> {
        Ok((u32_field(self.n, "n")?, self.noise, self.means(), self.factor()))
    }

    /// The posterior of a krr model file, decoded into `storage`; `None` when the file has
    /// none (an older krr model, or an SLKL model).
    ///
    /// # Errors
    /// `Error::Model` for bytes that are not a valid SLKL model of scalar `T`;
    /// `CapacityExceeded` when `storage` is shorter than [`Posterior::scalars_len`]`(m)`.
    pub fn from_envelope_in(envelope: &Envelope<'_>, mut storage: S) -> Result<Option<Self>, Error> {
        let corrupt = |_| Error::Model(ModelError::Payload);
        envelope.expect(ModelKind::Slkl, ScalarKind::of::<T>())?;
        let (header, rest) =
            postcard::take_from_bytes::<(u32, u32, T, crate::KernelKind<T>)>(envelope.payload).map_err(corrupt)?;
        let m = header.1 as usize;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        SkipSeed::<T>(core::marker::PhantomData).deserialize(&mut deserializer).map_err(corrupt)?;
        SkipSeed::<T>(core::marker::PhantomData).deserialize(&mut deserializer).map_err(corrupt)?;
        let section = deserializer.finalize().map_err(corrupt)?;
        if section.is_empty() {
            return Ok(None);
        }
        let ((n, noise), rest) = postcard::take_from_bytes::<(u32, T)>(section).map_err(corrupt)?;
        let needed = Posterior::scalars_len(m);
        check_capacity(needed, storage.as_ref().len())?;
        let mut deserializer = postcard::Deserializer::from_bytes(rest);
        let posterior = Posterior::build_in(storage.as_mut(), m, n as usize, noise, |rows, means| {
            let means_read = SliceSeed(&mut *means).deserialize(&mut deserializer).map_err(corrupt)?;
            let rows_read = SliceSeed(&mut *rows).deserialize(&mut deserializer).map_err(corrupt)?;
            let trailing = deserializer.finalize().map_err(corrupt)?;
            if means_read != m || rows_read != m * m || !trailing.is_empty() {
                return Err(Error::Model(ModelError::Payload));
            }
            Ok(())
        });
        match posterior {
            Ok(_) => Ok(Some(Posterior { storage, m, n: n as usize, noise })),
            Err(Error::InvalidParam { .. } | Error::NonFinite) => Err(Error::Model(ModelError::Payload)),
            Err(error) => Err(error),
        }
    }
}

/// The posterior's section of a model file: `(n, noise, means, factor)`.
type Section<'a, T> = (u32, T, &'a [T], &'a [T]);

/// `true` when `bytes` are exactly a posterior section of `m` centres.
pub(crate) fn section_is_valid<T: Real>(bytes: &[u8], m: usize) -> bool {
    let Ok(((_, noise), rest)) = postcard::take_from_bytes::<(u32, T)>(bytes) else { return false };
    let mut deserializer = postcard::Deserializer::from_bytes(rest);
    let mut count = || SkipSeed::<T>(core::marker::PhantomData).deserialize(&mut deserializer).ok();
    let (means, rows) = (count(), count());
    let done = deserializer.finalize().is_ok_and(<[u8]>::is_empty);
    noise.is_finite() && noise > T::ZERO && means == Some(m) && rows == Some(m.saturating_mul(m)) && done
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cholesky::Cholesky;
    use crate::krr::RidgePath;
    use crate::{Kernel, Rng};
    use nalgebra::{DMatrix, DVector};
    use std::vec;
    use std::vec::Vec;

    /// The exact posterior variance of `f(x*)` for the GP with kernel `ZZᵀ` (`Z` the
    /// uncentred `n × m` features), noise `λ` and a constant mean under a flat prior,
    /// computed densely on the `n × n` kernel (Rasmussen & Williams eq. 2.42):
    /// `k** − k*ᵀK_y⁻¹k* + R²/(1ᵀK_y⁻¹1)`, `R = 1 − 1ᵀK_y⁻¹k*`, `K_y = ZZᵀ + λI`.
    fn dense_variance(z: &[f64], n: usize, m: usize, lambda: f64, star: &[f64]) -> f64 {
        let zm = DMatrix::from_row_slice(n, m, z);
        let ky = &zm * zm.transpose() + DMatrix::identity(n, n) * lambda;
        let chol = ky.cholesky().unwrap();
        let k_star = &zm * DVector::from_column_slice(star);
        let ones = DVector::from_element(n, 1.0);
        let solved = chol.solve(&k_star);
        let solved_ones = chol.solve(&ones);
        let k_ss = star.iter().map(|x| x * x).sum::<f64>();
        let r = 1.0 - ones.dot(&solved);
        k_ss - k_star.dot(&solved) + r * r / ones.dot(&solved_ones)
    }

    fn features(n: usize, m: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = Rng::seed_from_u64(seed);
        let z: Vec<f64> = (0..n * m).map(|k| 0.5 + rng.uniform_in(-1.0, 1.0) / (1.0 + (k % m) as f64)).collect();
        let y = z.chunks_exact(m).map(|z| 2.0 + z[0].sin() - z[1] + 0.1 * rng.normal::<f64>()).collect();
        (z, y)
    }

    fn cast<T: Real>(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from_f64(x)).collect()
    }

    fn identity(m: usize) -> Vec<f64> {
        (0..m).flat_map(|i| (0..=i).map(move |j| if i == j { 1.0 } else { 0.0 })).collect()
    }

    /// The variance on the features against the dense GP at training rows, near the data
    /// and far from it, at several ridges, to `tol` relative.
    fn equals_dense_gp<T: Real>(tol: f64) {
        let (n, m) = (40, 6);
        let (z, y) = features(n, m, 3);
        let mut path =
            RidgePath::fit_in(vec![T::ZERO; RidgePath::scalars_len(n, m, 1)], &cast::<T>(&z), &cast::<T>(&y), n, m, 1)
                .unwrap();
        let mut rng = Rng::seed_from_u64(9);
        let mut points: Vec<Vec<f64>> = z.chunks_exact(m).take(5).map(<[f64]>::to_vec).collect();
        for scale in [0.0, 1.0, 3.0, 10.0] {
            points.push((0..m).map(|_| scale * rng.uniform_in(-1.0, 1.0)).collect());
        }
        for lambda in [1e-3, 0.1, 1.0, 10.0] {
            let gp = path.posterior_in(
                T::from_f64(lambda),
                &cast::<T>(&identity(m)),
                vec![T::ZERO; Posterior::scalars_len(m)],
            );
            let gp = gp.unwrap();
            for star in &points {
                let exact = dense_variance(&z, n, m, lambda, star);
                let got = gp.variance(&cast::<T>(star)).unwrap().to_f64();
                assert!((got - exact).abs() <= tol * exact, "λ = {lambda}: {got} vs {exact}");
            }
        }
    }

    #[test]
    fn variance_equals_the_dense_gp_f64() {
        equals_dense_gp::<f64>(1e-10);
    }

    #[test]
    fn variance_equals_the_dense_gp_f32() {
        equals_dense_gp::<f32>(5e-5);
    }

    /// Through the kernel: Nyström features of a Gaussian kernel on 3 centres, the model's
    /// prediction and its variance against the dense GP on `z = L⁻¹K(Ã, x)` (nalgebra's
    /// Cholesky), and the variance growing away from the data.
    #[test]
    fn predict_with_variance_through_the_kernel() {
        let (n, dim, m, lambda) = (30, 2, 3, 0.05);
        let kernel = Kernel::gaussian_sigma(0.8).unwrap();
        let mut rng = Rng::seed_from_u64(5);
        let x: Vec<f64> = (0..n * dim).map(|_| rng.uniform_in(-1.0, 1.0)).collect();
        let y: Vec<f64> = x.chunks_exact(dim).map(|p| (2.0 * p[0]).sin() + p[1]).collect();
        let centres: Vec<f64> = x[..m * dim].to_vec();
        let gram =
            DMatrix::from_fn(m, m, |i, j| kernel.eval(&centres[i * dim..][..dim], &centres[j * dim..][..dim]).unwrap());
        let l = gram.clone().cholesky().unwrap().l();
        let kvec = |p: &[f64]| DVector::from_fn(m, |j, _| kernel.eval(p, &centres[j * dim..][..dim]).unwrap());
        let nystrom = |p: &[f64]| l.solve_lower_triangular(&kvec(p)).unwrap();
        let z: Vec<f64> = x.chunks_exact(dim).flat_map(|p| nystrom(p).iter().copied().collect::<Vec<_>>()).collect();
        let factor = Cholesky::factor_in(vec![0.0; Cholesky::scalars_len(m)], m, m, |i, j| gram[(i, j)]).unwrap();
        let mut path = RidgePath::fit_in(vec![0.0; RidgePath::scalars_len(n, m, 1)], &z, &y, n, m, 1).unwrap();
        let mut w = vec![0.0; m];
        let b = path.weights(lambda, 0, &mut w).unwrap();
        let u = l.transpose().solve_upper_triangular(&DVector::from_column_slice(&w)).unwrap();
        let model =
            Predictor::from_parts_in(vec![0.0; Predictor::scalars_len(m, dim)], kernel, dim, b, &centres, u.as_slice())
                .unwrap();
        let mut gp = path.posterior_in(lambda, factor.packed(), vec![0.0; Posterior::scalars_len(m)]).unwrap();
        let mut previous = 0.0;
        for distance in [0.0, 0.5, 1.5, 2.5, 5.0] {
            let p = [distance, -distance];
            let (f, variance) = gp.predict_with_variance(&model, &p).unwrap();
            let zp = nystrom(&p);
            assert!((f - (b + zp.dot(&DVector::from_column_slice(&w)))).abs() < 1e-10);
            let exact = dense_variance(&z, n, m, lambda, zp.as_slice());
            assert!((variance - exact).abs() <= 1e-9 * exact, "{variance} vs {exact}");
            if distance > 1.0 {
                assert!(variance > previous, "at {distance}: {variance} ≤ {previous}");
            }
            previous = variance;
        }
        // Far from the data the variance exceeds that at every training row.
        for row in x.chunks_exact(dim) {
            assert!(gp.predict_with_variance(&model, row).unwrap().1 < previous);
        }
        assert!(gp.noise() == lambda);
    }

    #[test]
    fn bad_input_is_an_error() {
        let (n, m) = (10, 2);
        let (z, y) = features(n, m, 1);
        let mut path = RidgePath::fit_in(vec![0.0; RidgePath::scalars_len(n, m, 1)], &z, &y, n, m, 1).unwrap();
        let id = identity(m);
        let storage = || vec![0.0; Posterior::scalars_len(m)];
        for lambda in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(path.posterior_in(lambda, &id, storage()).err(), Some(Error::InvalidParam { name: "lambda" }));
        }
        assert!(matches!(path.posterior_in(1.0, &id[..2], storage()), Err(Error::DimensionMismatch { .. })));
        assert!(matches!(path.posterior_in(1.0, &id, vec![0.0; 3]), Err(Error::CapacityExceeded { .. })));
        assert!(matches!(path.posterior_in(1.0, &[1.0, 0.0, 0.0], storage()), Err(Error::Singular { .. })));
        let mut gp = path.posterior_in(1.0, &id, storage()).unwrap();
        assert!(matches!(gp.variance(&[1.0]), Err(Error::DimensionMismatch { .. })));
        assert_eq!(gp.variance(&[1.0, f64::NAN]), Err(Error::NonFinite));
        let kernel = Kernel::gaussian_sigma(1.0).unwrap();
        let three = Predictor::from_parts_in(vec![0.0; 6], kernel, 1, 0.0, &[0.0, 1.0, 2.0], &[1.0; 3]).unwrap();
        assert!(matches!(gp.predict_with_variance(&three, &[0.0]), Err(Error::DimensionMismatch { .. })));
        let two = Predictor::from_parts_in(vec![0.0; 4], kernel, 1, 0.0, &[0.0, 1.0], &[1.0; 2]).unwrap();
        assert_eq!(gp.predict_with_variance(&two, &[f64::INFINITY]), Err(Error::NonFinite));
        assert!(matches!(gp.predict_with_variance(&two, &[0.0, 1.0]), Err(Error::DimensionMismatch { .. })));
    }

    #[test]
    fn the_posterior_round_trips_through_the_model_file() {
        let (n, m) = (12, 2);
        let (z, y) = features(n, m, 6);
        let mut path = RidgePath::fit_in(vec![0.0; RidgePath::scalars_len(n, m, 1)], &z, &y, n, m, 1).unwrap();
        let kernel = Kernel::gaussian_sigma(1.0).unwrap();
        let model = Predictor::from_parts_in(vec![0.0; 4], kernel, 1, 0.5, &[0.0, 1.0], &[1.0, -1.0]).unwrap();
        let gp = path.posterior_in(0.3, &[1.0, 0.5, 2.0], vec![0.0; Posterior::scalars_len(m)]).unwrap();
        let mut bytes = vec![0u8; gp.encoded_len(&model)];
        assert_eq!(gp.encode(&model, &mut bytes), Ok(bytes.len()));
        let envelope = Envelope::parse(&bytes).unwrap();
        let back = Posterior::from_envelope_in(&envelope, vec![0.0; Posterior::scalars_len(m)]).unwrap().unwrap();
        assert_eq!((back.factor(), back.means(), back.rows(), back.noise()), (gp.factor(), gp.means(), n, 0.3));
        let decoded = Predictor::decode_in(&bytes, vec![0.0; 4]).unwrap();
        assert_eq!((decoded.weights(), decoded.centres()), (model.weights(), model.centres()));
        // A model file without the section (an older krr model) has no posterior.
        let mut old = vec![0u8; model.encoded_len()];
        model.encode(&mut old).unwrap();
        let envelope = Envelope::parse(&old).unwrap();
        assert!(Posterior::<f64, Vec<f64>>::from_envelope_in(&envelope, vec![0.0; 8]).unwrap().is_none());
        // Storage too short, and a section of the wrong size, are errors.
        let envelope = Envelope::parse(&bytes).unwrap();
        let short = Posterior::<f64, Vec<f64>>::from_envelope_in(&envelope, vec![0.0; 3]);
        assert!(matches!(short, Err(Error::CapacityExceeded { .. })));
        let one = Predictor::from_parts_in(vec![0.0; 2], kernel, 1, 0.5, &[0.0], &[1.0]).unwrap();
        assert!(matches!(gp.encode(&one, &mut bytes), Err(Error::DimensionMismatch { .. })));
        let mut wrong = vec![0u8; 256];
        let len = model::encode(
            ModelKind::Slkl,
            ScalarKind::F64,
            &(one.payload().unwrap(), gp.section().unwrap()),
            &mut wrong,
        )
        .unwrap();
        assert!(matches!(Predictor::decode_in(&wrong[..len], vec![0.0; 2]), Err(Error::Model(ModelError::Payload))));
        let envelope = Envelope::parse(&wrong[..len]).unwrap();
        let decoded = Posterior::<f64, Vec<f64>>::from_envelope_in(&envelope, vec![0.0; 8]);
        assert!(matches!(decoded, Err(Error::Model(ModelError::Payload))));
    }
}
