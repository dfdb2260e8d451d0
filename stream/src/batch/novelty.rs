//! `kestrel train --learner novelty`: kernel novelty detection fitted to a whole data set,
//! all of whose rows are taken as normal (labels are not read).
//!
//! 1. **Kernel**: the width given, or (`auto`, the default) `γ = 1/(d·Var(X))` over every
//!    value of the data — scikit-learn's `gamma="scale"` for `OneClassSVM`, which puts a
//!    typical squared distance `2d·Var(X)` at `γ‖x − x'‖² ≈ 2` whatever the units.
//! 2. **Centres**: IRSVM's reduced set (seed 003 §3.1; or a random one), as the other
//!    kernel learners choose theirs.
//! 3. **Centre of mass**: every row joins the set at its nearest centre
//!    ([`CentreOfMass`], seed 002 eq. 61 over the reduced set).
//! 4. **Threshold**: the `q`-quantile of the training rows' own scores against it (the
//!    exact one, from the sorted scores: a row is flagged when it scores above the
//!    `⌈q·n⌉`-th smallest of them).
//!
//! Cost: the selection, then two passes of `n·m` kernel evaluations. Memory: the dense rows
//! `n·d`, the selection's buffers, the centre of mass `m·d + m² + 2m` and `n` scores.

use kestrel_core::kernel::KernelKind;
use kestrel_core::novelty::{CentreOfMass, NoveltyModel};
use kestrel_core::{Kernel, Real, Rng};

use super::centres::{self, Selection};
use super::fit::{DEFAULT_CENTERS, Field, FitError, FitSettings, Fitted, KernelChoice, Select, Setting, Summary};
use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::limits::zeroed;
use crate::model;

/// The IRSVM threshold `δ/√n` unless the settings give one.
const DELTA: f64 = 5e-4;

/// Fits the novelty detector of `settings` to `data` (module doc).
///
/// # Errors
/// [`FitError`] for an empty data set, settings out of range, a budget too small.
pub fn train<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    if data.is_empty() {
        return Err(TrainError::Empty.into());
    }
    if data.len() < 2 {
        let message =
            "novelty detection takes a row's distance to the others: it needs 2 rows or more, got n_samples = 1";
        return Err(FitError::Settings(message.into()));
    }
    // Rows of no feature are read as one feature of zeros, as the other learners read them.
    let (n, dim) = (data.len(), data.dim().max(1));
    let capacity = settings.centers.unwrap_or(DEFAULT_CENTERS).min(n);
    let selection = match settings.select {
        Select::Irsvm => Selection::Irsvm { rms: Setting::given(settings.delta).unwrap_or(DELTA) },
        Select::Random => Selection::Random,
    };
    let working = [
        data.dense_bytes(dim),
        centres::selection_bytes::<T>(n, dim, capacity, selection),
        CentreOfMass::bytes::<T>(capacity, dim),
        n.saturating_mul(size_of::<T>()),
    ];
    check_budget(data.bytes().saturating_add(working.into_iter().fold(0, usize::saturating_add)), settings.budget)?;
    let points = data.dense(dim)?;
    let (kernel, gamma) = kernel(settings, &points, dim)?;
    let mut rng = Rng::seed_from_u64(settings.seed);
    let reduced = centres::select(&points, dim, capacity, &kernel, selection, &mut rng)?;
    let normalised = !matches!(kernel.kind(), KernelKind::Rbf { .. } | KernelKind::Laplacian { .. });
    if normalised {
        check_directions(&kernel, &points, dim)?;
    }
    let scalars = zeroed(CentreOfMass::scalars_len(reduced.m, dim), "the centre of mass")?;
    let mut mass = CentreOfMass::new_in(scalars, zeroed(reduced.m, "the centres' counts")?, dim, kernel, normalised)
        .map_err(FitError::param("kernel parameters"))?;
    for centre in reduced.centres.chunks_exact(dim) {
        mass.add_centre(centre).map_err(TrainError::Core)?;
    }
    for x in points.chunks_exact(dim) {
        mass.enter(x).map_err(TrainError::Core)?;
    }
    let threshold = threshold(&mass, &points, dim, settings.quantile)?;
    let model =
        NoveltyModel::from_mass_in(&mass, Some(threshold), vec![T::ZERO; NoveltyModel::scalars_len(dim, reduced.m)])
            .map_err(TrainError::Core)?;
    let bytes = model::to_bytes(&model).map_err(TrainError::Core)?;
    let summary = Summary::from([
        ("learner", "novelty".into()),
        ("centers", reduced.m.into()),
        ("quantile", settings.quantile.into()),
        ("threshold", threshold.to_f64().into()),
        ("chosen", Field::Fields(gamma.map(|g| Summary::from([("gamma", g.into())])).unwrap_or_default())),
    ]);
    Ok(Fitted { bytes, summary })
}

/// `Err(Undirected)` naming the first row with `k(x, x) ≤ 0`, which the normalised
/// kernel cannot divide by (the core refuses such a row without naming it). A `k(x, x)`
/// that overflows is the core's `NonFinite`.
fn check_directions<T: Real>(kernel: &Kernel<T>, points: &[T], dim: usize) -> Result<(), TrainError> {
    let name = if matches!(kernel.kind(), KernelKind::Linear) { "linear" } else { "polynomial" };
    let mut diagonals = points.chunks_exact(dim).map(|x| kernel.diagonal(x)).enumerate();
    match diagonals.find(|&(_, value)| value <= T::ZERO) {
        Some((row, value)) => Err(TrainError::Undirected { row: row + 1, value: value.to_f64(), kernel: name }),
        None => Ok(()),
    }
}

/// The kernel of the settings, and the width when `auto` chose it (module doc).
fn kernel<T: Real>(settings: &FitSettings, points: &[T], dim: usize) -> Result<(Kernel<T>, Option<f64>), FitError> {
    let spec = &settings.kernel;
    match (spec.gamma, spec.kind) {
        (Some(Setting::Value(gamma)), _) => {
            Ok((spec.build(gamma).map_err(FitError::param("kernel parameters"))?, None))
        }
        (_, KernelChoice::Linear) => Ok((Kernel::linear(), None)),
        (None | Some(Setting::Auto), _) => {
            let gamma = scale_width(points, dim);
            Ok((spec.build(gamma).map_err(FitError::param("--gamma auto"))?, Some(gamma)))
        }
    }
}

/// `1/(d·Var(X))` over every value of `points`; `1/d` for constant data.
fn scale_width<T: Real>(points: &[T], dim: usize) -> f64 {
    let count = points.len().max(1) as f64;
    let mean = points.iter().map(|v| v.to_f64()).sum::<f64>() / count;
    let variance = points.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / count;
    let variance = if variance > 0.0 && variance.is_finite() { variance } else { 1.0 };
    1.0 / (dim as f64 * variance)
}

/// The `q`-quantile of the rows' scores: the `⌈q·n⌉`-th smallest.
fn threshold<T: Real>(
    mass: &CentreOfMass<T, Vec<T>, Vec<u32>>,
    points: &[T],
    dim: usize,
    q: f64,
) -> Result<T, FitError> {
    if !(q > 0.0 && q < 1.0) {
        return Err(FitError::Settings(format!("--quantile {q} is not between 0 and 1")));
    }
    let mut scores = zeroed(points.len() / dim, "the scores")?;
    for (score, x) in scores.iter_mut().zip(points.chunks_exact(dim)) {
        *score = mass.score(x).map_err(TrainError::Core)?;
    }
    scores.sort_by(|a, b| a.to_f64().total_cmp(&b.to_f64()));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 < q·n < n, rounded up")]
    let rank = ((q * scores.len() as f64).ceil() as usize).clamp(1, scores.len());
    scores.get(rank - 1).copied().ok_or(FitError::Train(TrainError::Empty))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::fit::{KernelSettings, Learner, fit};
    use crate::source::Record;

    fn data(points: &[[f64; 2]]) -> Dataset<f64> {
        let mut data = Dataset::new();
        for (i, p) in points.iter().enumerate() {
            let record = Record { indices: vec![0, 1], values: p.to_vec(), line: i as u64 + 1, ..Record::default() };
            data.push(&record).unwrap();
        }
        data
    }

    /// Rows of no feature (LibSVM lines of a label alone) train a detector of one feature,
    /// as the other learners read them; a given width once divided by their zero width
    /// (found by the fit_policy fuzz target).
    #[test]
    fn rows_of_no_feature_train_one_of_zeros() {
        let mut rows = Dataset::<f64>::new();
        for line in 1..=3 {
            rows.push(&Record { line, ..Record::default() }).unwrap();
        }
        assert_eq!(rows.dim(), 0);
        let given = KernelSettings { gamma: Some(Setting::Value(0.5)), ..KernelSettings::default() };
        let settings = FitSettings { kernel: given, ..FitSettings::new(Learner::Novelty) };
        let fitted = fit(&settings, &rows).unwrap();
        let mut model = model::load(&fitted.bytes).unwrap();
        assert_eq!(model.info().dim, 1);
        assert!(model.predict(&Record::default()).unwrap().is_finite());
    }

    /// A Gaussian cloud of 400 points: the model flags about `1 − q` of them, flags far
    /// points, scores as the exact eq. (61) with every point does to within the reduced
    /// set's error, and chose the scale width.
    #[test]
    fn fits_a_cloud_and_flags_beyond_its_quantile() {
        let mut rng = Rng::seed_from_u64(3);
        let points: Vec<[f64; 2]> =
            (0..400).map(|_| [rng.normal::<f64>() * 2.0 + 5.0, rng.normal::<f64>() * 2.0]).collect();
        let settings = FitSettings { quantile: 0.9, ..FitSettings::new(Learner::Novelty) };
        let fitted = fit(&settings, &data(&points)).unwrap();
        let mut model = model::load(&fitted.bytes).unwrap();
        let record = |p: &[f64; 2]| Record { indices: vec![0, 1], values: p.to_vec(), ..Record::default() };
        let flagged = points.iter().filter(|p| model.predict(&record(p)).unwrap() == 1.0).count();
        assert!((30..=50).contains(&flagged), "{flagged} of 400 flagged at q = 0.9");
        assert_eq!(model.predict(&record(&[20.0, 10.0])).unwrap(), 1.0);
        let values: Vec<f64> = points.iter().flatten().copied().collect();
        let gamma = scale_width(&values, 2);
        assert_eq!(fitted.summary.get("chosen"), Some(&Field::Fields(Summary::from([("gamma", gamma.into())]))));
        // Eq. (61) with all 400 points.
        let k = |a: &[f64; 2], b: &[f64; 2]| (-gamma * ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2))).exp();
        let total: f64 = points.iter().flat_map(|a| points.iter().map(move |b| k(a, b))).sum();
        for x in [[5.0, 0.0], [8.0, 3.0], [0.0, -4.0]] {
            let exact = 1.0 - 2.0 * points.iter().map(|p| k(&x, p)).sum::<f64>() / 400.0 + total / 160_000.0;
            let ours = model.novelty_score(&record(&x)).unwrap().unwrap();
            assert!((ours - exact).abs() < 0.02 * exact.max(0.1), "{x:?}: {ours} vs {exact}");
        }
    }

    #[test]
    fn bad_settings_and_data() {
        let settings = FitSettings { quantile: 1.0, ..FitSettings::new(Learner::Novelty) };
        let e = fit(&settings, &data(&[[0.0, 1.0], [1.0, 0.0]])).unwrap_err();
        assert_eq!(e.to_string(), "--quantile 1 is not between 0 and 1");
        let e = fit(&FitSettings::new(Learner::Novelty), &Dataset::<f64>::new()).unwrap_err();
        assert_eq!(e.to_string(), "the training set has no rows");
        let e = fit(&FitSettings::new(Learner::Novelty), &data(&[[0.0, 1.0]])).unwrap_err();
        assert!(e.to_string().ends_with("got n_samples = 1"), "{e}");
        let small = FitSettings { budget: Some(100), ..FitSettings::new(Learner::Novelty) };
        let e = fit(&small, &data(&[[0.0, 1.0], [1.0, 0.0]])).unwrap_err();
        assert!(e.to_string().contains("over the budget of 100"), "{e}");
    }

    /// Under a normalised kernel a row of zeros has no direction: the error names its row
    /// (the core's own error would not); the rbf kernel takes the same rows.
    #[test]
    fn a_row_of_zeros_under_a_normalised_kernel_is_named() {
        let rows = data(&[[1.0, 2.0], [2.0, 1.0], [0.0, 0.0], [1.0, 1.0]]);
        let linear = KernelSettings { kind: KernelChoice::Linear, ..KernelSettings::default() };
        let settings = FitSettings { kernel: linear, ..FitSettings::new(Learner::Novelty) };
        let e = fit(&settings, &rows).unwrap_err().to_string();
        assert!(e.starts_with("row 3: its kernel value with itself is 0, so the normalised linear kernel"), "{e}");
        let poly = KernelSettings { kind: KernelChoice::Poly, gamma: Some(Setting::Value(1.0)), ..linear };
        let e = fit(&FitSettings { kernel: poly, ..settings }, &rows).unwrap_err().to_string();
        assert!(e.starts_with("row 3: its kernel value with itself is 0, so the normalised polynomial"), "{e}");
        assert!(fit(&FitSettings::new(Learner::Novelty), &rows).is_ok());
    }
}
