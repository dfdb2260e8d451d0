//! Centre renewal: the reduced-kernel learner's centres follow the stream.
//!
//! The warm-up chooses the centres `Ã` (`m` of them) among its samples; a stream that
//! moves later reaches places they do not span. A learned sample `x` with features
//! `z = L⁻¹K(x, Ã)` lies at distance
//!
//! ```text
//! r(x) = √(k(x, x) − ‖z‖²)
//! ```
//!
//! from the span of `φ(Ã)` in feature space (the pivot the Cholesky factor would take if
//! `x` joined: the selector's test). Centre `j`'s usefulness is
//!
//! ```text
//! sⱼ = √k(ãⱼ, ãⱼ) · Σ_c |u_cj|,   u_c = L⁻ᵀw_c,
//! ```
//!
//! since SVM `c` decides by `w_cᵀz(x) + b = u_cᵀK(x, Ã) + b` and `|k(x, ãⱼ)| ≤
//! √(k(x, x)k(ãⱼ, ãⱼ))`: centre `j`'s share of the decision values is at most that, over
//! all SVMs. When `r(x) ≥ δ`, the SVMs get `x`'s class wrong, and the least useful centre
//! is barely used — `min sⱼ` below a tenth of the mean `sⱼ` — `x` replaces it. Renewing
//! then takes four steps:
//!
//! 1. `Ã' = Ã` with row `j` replaced by `x`, factored afresh, `K(Ã', Ã') = L'L'ᵀ` (its
//!    pivots stay away from 0: `x` is at least `δ` from the span of every other centre);
//! 2. the window's rows `z'ᵢ = L'⁻¹K(xᵢ, Ã')` from its samples `xᵢ` as they were learned,
//!    which the learner keeps for this;
//! 3. each SVM's memory of the samples that left the window, the function
//!    `m_zᵀz(x) + m_b·B = (L⁻ᵀm_z)ᵀK(x, Ã) + m_b·B`, re-expressed on the new centres with
//!    the departing centre's coefficient dropped: `u = L⁻ᵀm_z`, `uⱼ ← 0`, `m'_z = L'ᵀu`;
//! 4. every SVM takes the new rows and memory (`OnlineSvm::replace_features`): each
//!    sample keeps its `α`, the warm start of the problem on the new features.
//!
//! Nothing changes when a step fails (a factor that is not positive definite, a value
//! that overflows): the learner keeps its centres. The gate keeps a stream that the
//! centres serve from churning them: a renewal follows a mistake the centres could not
//! avoid, and takes a centre the SVMs have stopped using — as when the stream has left
//! its region. Measured on the benchmark streams (BENCHMARKS.md), the tenth keeps the
//! accuracy of fixed centres on streams whose inputs stay put (Phishing, Bananas, a
//! concept change) and renews a few centres per thousand arrivals there; without the
//! usefulness test Phishing renewed 116 times in 1,250 arrivals and lost 0.7 point.
//!
//! Cost: O(m) per arrival for `r(x)` (`z` is computed anyway) and O(k·m) for the
//! mistake test over `k` SVMs; per renewal O(k·m²) for the coefficients, O(m³/3 + m²·d)
//! for the factor, O(N(m·d + m²)) for the rows and O(k·N·m) for the SVMs. Memory: the
//! window's samples, `N·d` scalars, and spare buffers for the new centres, factor and
//! rows, `m·d + m(m+1)/2 + 2m + N·m`, plus `2m` (one coefficient vector and the usefulness),
//! allocated when learning starts, and the memories of `k` SVMs, `k(m + 1)`, gathered at
//! a renewal ([`Renewal::scalars_len`]).

use std::collections::VecDeque;

use kestrel_core::cholesky::Cholesky;
use kestrel_core::linalg::{Triangle, dot, packed_len, solve_lower_transposed};
use kestrel_core::{Error, Kernel, Real};

use super::{Frozen, nystrom_features};
use crate::limits::{AllocError, reserve, zeroed};

/// A centre is replaced only when its usefulness is below this share of the centres'
/// mean (module doc; chosen by measurement, see BENCHMARKS.md).
const UNUSED_SHARE: f64 = 0.1;

/// The samples of the window and the spare buffers a renewal computes in.
pub(super) struct Renewal<T> {
    /// The window's samples as they were learned, oldest first, `N × d` at most.
    pub(super) inputs: VecDeque<T>,
    /// Renewals so far.
    pub(super) count: u64,
    centres: Vec<T>,
    factor: Vec<T>,
    rows: Vec<T>,
    coefficients: Vec<T>,
    usefulness: Vec<T>,
}

impl Renewal<()> {
    /// Scalars a learner renewing `m` centres of `dim` features over a window of `window`
    /// samples with at most `classes` classes needs for it (saturating):
    /// `N·d + m·d + m(m+1)/2 + 2m + N·m + 2m + k(m + 1)` for `k` SVMs (the factor is built
    /// with the core's two rotation buffers of `m`).
    pub(super) fn scalars_len(window: usize, dim: usize, m: usize, classes: usize) -> usize {
        let (factor, memories) = (Cholesky::scalars_len(m), classes.max(1).saturating_mul(m.saturating_add(1)));
        [
            window.saturating_mul(dim),
            m.saturating_mul(dim),
            factor,
            window.saturating_mul(m),
            m.saturating_mul(2),
            memories,
        ]
        .into_iter()
        .fold(0, usize::saturating_add)
    }
}

impl<T: Real> Renewal<T> {
    /// The buffers for `m` centres of `dim` features and a window of `window` samples,
    /// allocated now.
    pub(super) fn new(window: usize, dim: usize, m: usize) -> Result<Self, AllocError> {
        let mut inputs = Vec::new();
        reserve(&mut inputs, window.saturating_mul(dim), "the window's samples")?;
        Ok(Renewal {
            // Keeps the capacity reserved: a window of samples, never more.
            inputs: VecDeque::from(inputs),
            count: 0,
            centres: zeroed(m.saturating_mul(dim), "the centre renewal")?,
            factor: zeroed(Cholesky::scalars_len(m), "the centre renewal")?,
            rows: zeroed(window.saturating_mul(m), "the centre renewal")?,
            coefficients: zeroed(m, "the centre renewal")?,
            usefulness: zeroed(m, "the centre renewal")?,
        })
    }

    /// Keeps the learned sample `x`, the oldest leaving once `window` are kept.
    pub(super) fn keep(&mut self, x: &[T], window: usize) {
        if self.inputs.len() >= window * x.len() {
            self.inputs.drain(..x.len());
        }
        self.inputs.extend(x.iter().copied());
    }
}

impl<T: Real> Frozen<T> {
    /// `true` when the learned sample `x`, whose features are loaded, should replace a
    /// centre: it is at least `delta` from the centres' span and the SVMs, having learned
    /// `classes` classes, predict another class than `class` (module doc).
    ///
    /// # Errors
    /// As `Ovr::predict`.
    pub(super) fn renewal_due(
        &self,
        kernel: &Kernel<T>,
        x: &[T],
        class: usize,
        delta: T,
        classes: usize,
    ) -> Result<bool, Error> {
        if self.renewal.is_none() {
            return Ok(false);
        }
        let residual = kernel.diagonal(x) - dot(&self.features, &self.features)?;
        // Nor does a residual that is not finite: a sample the features cannot place.
        if !residual.is_finite() || residual < delta * delta {
            return Ok(false);
        }
        Ok(self.ovr.predict(&self.features, classes, None)? != Some(class))
    }

    /// Replaces the least useful centre by the learned sample `x` (module doc) and loads
    /// `x`'s features on the new centres; returns `false`, changing nothing, when the new
    /// centres cannot be factored or a value overflows.
    ///
    /// # Errors
    /// [`AllocError`] as `CapacityExceeded` when the memories of the SVMs cannot be
    /// gathered; the learner is unchanged.
    pub(super) fn renew(&mut self, kernel: &Kernel<T>, x: &[T]) -> Result<bool, Error> {
        let Some(mut renewal) = self.renewal.take() else { return Ok(false) };
        let renewed = self.renew_with(&mut renewal, kernel, x);
        self.renewal = Some(renewal);
        renewed
    }

    fn renew_with(&mut self, renewal: &mut Renewal<T>, kernel: &Kernel<T>, x: &[T]) -> Result<bool, Error> {
        let m = self.features.len();
        let Some(j) = self.least_useful(renewal, kernel)? else { return Ok(false) };
        renewal.centres.copy_from_slice(&self.centres);
        if let Some(centre) = renewal.centres.chunks_exact_mut(x.len()).nth(j) {
            centre.copy_from_slice(x);
        }
        if factor_into(kernel, &renewal.centres, m, &mut renewal.factor).is_err() || !fill_rows(renewal, kernel, m) {
            return Ok(false);
        }
        let Some(memories) = self.renewed_memories(renewal, j)? else { return Ok(false) };
        let rows = renewal.rows.get(..self.ovr.len() * m).ok_or(Error::InvalidParam { name: "window" })?;
        self.ovr.replace_features(rows, &memories)?;
        self.centres.copy_from_slice(&renewal.centres);
        let packed = renewal.factor.get(..self.factor.len()).ok_or(Error::InvalidParam { name: "factor" })?;
        self.factor.copy_from_slice(packed);
        renewal.count += 1;
        self.fill_features(kernel, x)?;
        Ok(true)
    }

    /// The centre `j` of least usefulness `√k(ãⱼ, ãⱼ) Σ_c |u_cj|`, `u_c = L⁻ᵀw_c`, when
    /// that is below [`UNUSED_SHARE`] of the centres' mean; `None` when every centre is in
    /// use.
    fn least_useful(&self, renewal: &mut Renewal<T>, kernel: &Kernel<T>) -> Result<Option<usize>, Error> {
        let m = self.features.len();
        renewal.usefulness.fill(T::ZERO);
        for c in 0..self.ovr.outputs() {
            let (w, _) = self.ovr.weights(c).ok_or(Error::InvalidParam { name: "class" })?;
            renewal.coefficients.copy_from_slice(w);
            solve_lower_transposed(&self.factor, m, Triangle::Packed, &mut renewal.coefficients)?;
            for (total, u) in renewal.usefulness.iter_mut().zip(&renewal.coefficients) {
                *total += u.abs();
            }
        }
        let dim = self.centres.len() / m;
        let scaled =
            self.centres.chunks_exact(dim).zip(&renewal.usefulness).map(|(c, &u)| u * kernel.diagonal(c).sqrt());
        let mut least = (0, T::MAX);
        let mut total = T::ZERO;
        for (j, value) in scaled.enumerate() {
            total += value;
            if value < least.1 {
                least = (j, value);
            }
        }
        let mean = total / T::from_f64(m as f64);
        Ok((least.1 < T::from_f64(UNUSED_SHARE) * mean).then_some(least.0))
    }

    /// The SVMs' memories on the new centres (step 3), `None` when one overflows; empty
    /// without memory.
    fn renewed_memories(&self, renewal: &mut Renewal<T>, j: usize) -> Result<Option<Vec<T>>, Error> {
        let m = self.features.len();
        let mut memories = Vec::new();
        if self.ovr.shape().decay.is_none() {
            return Ok(Some(memories));
        }
        reserve(&mut memories, self.ovr.outputs().saturating_mul(m + 1), "the memories of the SVMs")?;
        for c in 0..self.ovr.outputs() {
            let memory = self.ovr.memory(c).ok_or(Error::InvalidParam { name: "memory" })?;
            let (m_z, m_b) = memory.split_at_checked(m).ok_or(Error::InvalidParam { name: "memory" })?;
            renewal.coefficients.copy_from_slice(m_z);
            solve_lower_transposed(&self.factor, m, Triangle::Packed, &mut renewal.coefficients)?;
            if let Some(leaving) = renewal.coefficients.get_mut(j) {
                *leaving = T::ZERO;
            }
            memories.extend((0..m).map(|i| transposed_times(&renewal.factor, m, i, &renewal.coefficients)));
            memories.extend_from_slice(m_b);
        }
        Ok(memories.iter().all(|v| v.is_finite()).then_some(memories))
    }
}

/// The packed factor of `K(C, C)` for the `m` rows of `centres`, written to `factor`.
fn factor_into<T: Real>(kernel: &Kernel<T>, centres: &[T], m: usize, factor: &mut [T]) -> Result<(), Error> {
    let dim = centres.len() / m;
    let row = |i: usize| centres.get(i * dim..(i + 1) * dim).unwrap_or(&[]);
    // Rows of `dim` each: `eval` cannot fail, and a NaN would be refused as non-finite.
    let entry = |i, j| kernel.eval(row(i), row(j)).unwrap_or(T::from_f64(f64::NAN));
    Cholesky::factor_in(factor, m, m, entry).map(|_| ())
}

/// The window's rows on the new centres and factor (step 2), `false` when one is not
/// finite.
fn fill_rows<T: Real>(renewal: &mut Renewal<T>, kernel: &Kernel<T>, m: usize) -> bool {
    let dim = renewal.centres.len() / m;
    let inputs = renewal.inputs.make_contiguous();
    for (x, row) in inputs.chunks_exact(dim).zip(renewal.rows.chunks_exact_mut(m)) {
        let filled = nystrom_features(kernel, &renewal.centres, &renewal.factor, x, row).is_ok();
        if !filled || !row.iter().all(|v| v.is_finite()) {
            return false;
        }
    }
    true
}

/// `(Lᵀu)ᵢ = Σ_{k ≥ i} L_ki u_k` for the packed lower triangle `l` of order `m`.
fn transposed_times<T: Real>(l: &[T], m: usize, i: usize, u: &[T]) -> T {
    let column = (i..m).map(|k| l.get(packed_len(k) + i).copied().unwrap_or(T::from_f64(f64::NAN)));
    column.zip(u.iter().skip(i)).fold(T::ZERO, |acc, (lki, &uk)| acc + lki * uk)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{rsvm, xor};
    use super::super::{Phase, RsvmSettings, WindowRsvm};
    use super::*;
    use crate::online::OnlineLearner;
    use crate::online::tests::{prequential, record, restored_learner_continues};
    use crate::source::Record;

    /// XOR around `(4, 4)`, where no centre the warm-up on `[−1, 1]²` chose reaches (the
    /// RBF kernel of γ = 2 between the two regions is below e⁻³⁰).
    fn moved_xor(n: usize, seed: u64) -> Vec<Record> {
        xor(n, seed).iter().map(|r| record(&[r.values[0] + 4.0, r.values[1] + 4.0], r.label)).collect()
    }

    fn learner<T: Real>(renew: bool, memory: Option<T>) -> WindowRsvm<T> {
        let settings = rsvm::<T>().settings;
        WindowRsvm::new(RsvmSettings { renew, memory, ..settings }, 2).unwrap()
    }

    /// The window's rows are the features of its samples on the current centres,
    /// `L⁻¹K(xᵢ, Ã)` with `K(Ã, Ã) = LLᵀ`, as if computed afresh.
    fn rows_match_the_centres<T: Real>(learner: &WindowRsvm<T>) {
        let Phase::Learning(frozen) = &learner.phase else { panic!("learning") };
        let m = frozen.features.len();
        let mut gram = vec![0.0; m * m];
        let centres: Vec<&[T]> = frozen.centres.chunks_exact(2).collect();
        for (i, a) in centres.iter().enumerate() {
            for (j, b) in centres.iter().enumerate() {
                gram[i * m + j] = learner.settings.kernel.eval(a, b).unwrap().to_f64();
            }
        }
        let l = nalgebra::DMatrix::from_row_slice(m, m, &gram).cholesky().unwrap().l();
        let inputs: Vec<T> = frozen.renewal.as_ref().unwrap().inputs.iter().copied().collect();
        assert_eq!(inputs.len(), frozen.ovr.len() * 2);
        let tolerance = 1e5 * T::EPSILON.to_f64();
        for (k, x) in inputs.chunks_exact(2).enumerate() {
            let column: Vec<f64> =
                centres.iter().map(|c| learner.settings.kernel.eval(x, c).unwrap().to_f64()).collect();
            let expected = l.solve_lower_triangular(&nalgebra::DVector::from_vec(column)).unwrap();
            let (row, _, _) = frozen.ovr.sample(0, k).unwrap();
            for (ours, theirs) in row.iter().zip(expected.iter()) {
                assert!((ours.to_f64() - theirs).abs() <= tolerance, "sample {k}: {ours} vs {theirs}");
            }
        }
    }

    /// A stream that moves where no centre reaches: with renewal the learner recovers
    /// within a window, without it stays near chance; the rows, the checkpoint and the
    /// model follow the renewed centres.
    fn centres_follow_a_moving_stream<T: Real>(memory: Option<T>) {
        let mut records = xor(600, 1);
        records.extend(moved_xor(1200, 2));
        let (mut renewing, mut fixed) = (learner::<T>(true, memory), learner::<T>(false, memory));
        let centres = {
            prequential(&mut renewing, &records[..600], 0);
            renewing.centres()
        };
        let after = prequential(&mut renewing, &records[600..], 0);
        prequential(&mut fixed, &records[..600], 0);
        let (late, stuck) =
            (prequential(&mut renewing, &moved_xor(400, 3), 0), prequential(&mut fixed, &records[600..], 600));
        let count = match &renewing.phase {
            Phase::Learning(frozen) => frozen.renewal.as_ref().unwrap().count,
            Phase::Warmup(_) => panic!("learning"),
        };
        assert!(count > 0 && renewing.centres() == centres, "{count} renewals, {} centres", renewing.centres());
        assert!(late.accuracy() > 0.85 && stuck.accuracy() < 0.7, "{} vs {}", late.accuracy(), stuck.accuracy());
        assert!(after.accuracy() > stuck.accuracy(), "{} vs {}", after.accuracy(), stuck.accuracy());
        rows_match_the_centres(&renewing);
        let mut model = crate::model::load(&renewing.encode().unwrap()).unwrap();
        for r in moved_xor(200, 4) {
            assert_eq!(model.predict(&r).unwrap(), renewing.predict(&r).unwrap().unwrap());
        }
        // Saved after renewals, the learner continues bit for bit.
        let mut records = moved_xor(300, 5);
        records.extend(xor(600, 6));
        restored_learner_continues(&mut renewing, &mut learner::<T>(true, memory), &records, 200);
    }

    #[test]
    fn centres_follow_a_moving_stream_f64() {
        centres_follow_a_moving_stream::<f64>(None);
        centres_follow_a_moving_stream::<f64>(Some(0.995));
    }

    #[test]
    fn centres_follow_a_moving_stream_f32() {
        centres_follow_a_moving_stream::<f32>(Some(0.995));
    }
}
