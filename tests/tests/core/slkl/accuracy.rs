//! Issue 3 item 5: on the sinc task (seed 001 Sect. 5.1, `seeds/INDEX.md`) with the
//! paper's kernel `exp(−‖x − x'‖²/(2σ²))`, `σ² = 1` (γ = 0.5), `λ = 1`, `ν = 0.01`,
//! `M = 1000`, over 20 seeds: SLKL's test MSE is at most 1.10 × the MSE of dense kernel
//! ridge regression on all `n = 1000` points with `λ = 1` (nalgebra, same run), and
//! `m0 ≤ 200`.
//!
//! Compared with KRR in the same run, not with Table 2: under the stated protocol (clean
//! test targets, 10 dB measured SNR) MSEs are about ten times smaller than the table's
//! (see issue 3). Both models centre the targets by their training mean.

use kestrel_core::Real;
use kestrel_core::slkl::{Candidates, ColumnMode, Dims, ExitReason, Params};
use kestrel_tests::{krr_predictions, mse, sinc_task};

use super::learner;

const SEEDS: u64 = 20;

/// `(SLKL test MSE, KRR test MSE, m0, steps)` for one seed.
fn one_seed<T: Real>(seed: u64, mode: ColumnMode) -> (f64, f64, usize, u64) {
    let task = sinc_task::<T>(seed, 1000, 1000);
    let dims = Dims::new(1000, 2, 1000, 300).columns(mode);
    let params = Params::new().nu(T::from_f64(0.01)).seed(seed).check().unwrap();
    let mut slkl = learner(&task, dims, params, Candidates::Random);
    let summary = slkl.run().unwrap();
    assert_eq!(summary.reason, ExitReason::Converged, "seed {seed}");
    let predictions: Vec<f64> = task.x_test.chunks(2).map(|p| slkl.predict(p).unwrap().to_f64()).collect();
    let krr = krr_predictions(&params.kernel(), &task.x, &task.y, 2, 1.0, &task.x_test);
    (mse(&predictions, &task.y_test), mse(&krr, &task.y_test), slkl.active_len(), slkl.stats().steps)
}

fn accuracy<T: Real>(seeds: u64, mode: ColumnMode) {
    let (mut slkl_sum, mut krr_sum, mut worst_ratio, mut max_m0) = (0.0, 0.0, 0.0f64, 0);
    // Seeds are independent: two threads halve the wall time of this, the longest test.
    let results: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                scope.spawn(move || {
                    (0..seeds).filter(|s| s % 2 == w).map(|s| (s, one_seed::<T>(s, mode))).collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = workers.into_iter().flat_map(|h| h.join().expect("worker")).collect();
        all.sort_by_key(|&(s, _)| s);
        all
    });
    for (seed, (slkl, krr, m0, steps)) in results {
        eprintln!("seed {seed}: SLKL {slkl:.5} (m0 {m0}, {steps} steps), KRR {krr:.5}");
        slkl_sum += slkl;
        krr_sum += krr;
        worst_ratio = worst_ratio.max(slkl / krr);
        max_m0 = max_m0.max(m0);
        assert!(m0 <= 200, "seed {seed}: m0 = {m0}");
    }
    let ratio = slkl_sum / krr_sum;
    eprintln!(
        "{}: mean test MSE SLKL {:.5}, KRR {:.5}, ratio {ratio:.3} (worst seed {worst_ratio:.3}), max m0 {max_m0}",
        core::any::type_name::<T>(),
        slkl_sum / seeds as f64,
        krr_sum / seeds as f64
    );
    assert!(ratio <= 1.10, "mean MSE ratio {ratio:.3}");
}

#[test]
fn sinc_test_mse_within_10_percent_of_dense_krr_over_20_seeds() {
    accuracy::<f64>(SEEDS, ColumnMode::Precomputed);
}

#[test]
fn sinc_accuracy_in_f32_on_the_fly() {
    accuracy::<f32>(3, ColumnMode::OnTheFly);
}
