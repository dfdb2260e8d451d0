//! Kernel projections of a whole data set ([`kestrel_core::kpca`]): kernel PCA, exact on
//! all `n` rows or reduced through `m` centres drawn uniformly from the rows (seed 003
//! §4.1); KSIR and the kernel Fisher discriminant on the reduced kernel ([`Method`]);
//! reduced KCCA of two views of the same rows ([`fit_kcca`], seed 003 §4.3, the same `m`
//! rows as centres in both views); and the projection of rows through a fitted model.
//!
//! **Slices** of the supervised methods: one per distinct label (classes), or, with
//! `slices: Some(J)`, `J` slices of equal size (within one row) of the rows sorted by their
//! response (seed 003 §4.2, regression). Without `centres`, every row is a centre.
//!
//! **Scaling**: a model fitted on standardised rows carries its scaler's statistics in the
//! envelope (as every standardising model does, [`kestrel_core::model`]); [`from_bytes`]
//! reads them and [`Applied::project`] standardises each row before projecting it, so a
//! model takes rows in the units it was fitted on.
//!
//! Memory: exact needs the `n × n` centred kernel matrix and, past 200 rows, `O(n·k)` for
//! its leading eigenpairs by Lanczos (up to 200 rows its whole decomposition, `2n² + 2n`
//! scalars in all: [`KernelProjection::exact_work_len`]), so it is refused beyond
//! [`MAX_EXACT_ROWS`]; reduced needs `O(m²)` work whatever `n`
//! ([`KernelProjection::reduced_work_len`]). Both are checked against the budget before
//! anything is allocated, and every buffer is allocated fallibly.

use std::path::Path;

use kestrel_core::kpca::{Criterion, KernelProjection, View};
use kestrel_core::model::{Envelope, ScalarKind};
use kestrel_core::reduced_set::select_random;
use kestrel_core::{Kernel, Real, Rng};

use super::centres::centre_rows;
use super::{TrainError, check_budget};
use crate::dataset::HostScaler;
use crate::file;
use crate::limits::{MAX_FILE_BYTES, zeroed};
use crate::model::{ModelFileError, scaler_for, storage_for};

/// The most rows exact kernel PCA takes (its work is `n²` scalars: 3.2 GB in f64 here).
pub const MAX_EXACT_ROWS: usize = 20_000;

/// Which projection.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Kernel PCA (unsupervised).
    Kpca,
    /// KSIR (`Sir`) or the kernel Fisher discriminant (`Fisher`).
    Discriminant {
        /// Against the total or the within-slice covariance.
        criterion: Criterion,
        /// Slices of the sorted response; `None`: one per distinct label.
        slices: Option<usize>,
        /// The regulariser's weight `μ`.
        mu: f64,
    },
}

/// What to fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KpcaSettings {
    /// The projection.
    pub method: Method,
    /// Components `k`.
    pub components: usize,
    /// Centres `m` of reduced KPCA; `None` (or `m ≥ n`) for exact KPCA on every row.
    pub centres: Option<usize>,
    /// Seed of the centres' draw.
    pub seed: u64,
}

impl KpcaSettings {
    /// The centres of a fit on `n` rows, `None` for exact (KPCA on every row).
    fn reduced(&self, n: usize) -> Option<usize> {
        match self.method {
            Method::Kpca => self.centres.filter(|&m| m < n),
            Method::Discriminant { .. } => Some(self.centres.unwrap_or(n).min(n)),
        }
    }

    /// Bytes a fit on `n` rows of `dim` features holds besides the rows: work, model and
    /// (reduced) the centres.
    pub fn bytes<T>(&self, n: usize, dim: usize) -> usize {
        let (m, work) = match self.reduced(n) {
            Some(m) => {
                let work = KernelProjection::discriminant_work_len(m, n).saturating_add(m.saturating_mul(dim + 1));
                (m, work.saturating_add(n.saturating_mul(2)))
            }
            None => (n, KernelProjection::exact_work_len(n, self.components)),
        };
        work.saturating_add(KernelProjection::scalars_len(dim, m, self.components)).saturating_mul(size_of::<T>())
    }
}

/// Fits the projection of `settings` on `points` (row-major, `dim` columns) with their
/// `labels` (read by the supervised methods only).
///
/// # Errors
/// `OverBudget` beyond `budget`; `TooManyRows` for exact KPCA beyond [`MAX_EXACT_ROWS`]; the core's
/// errors (too many components for the data's rank or slices, non-finite values, …).
pub fn fit<T: Real>(
    points: &[T],
    labels: &[f64],
    dim: usize,
    kernel: Kernel<T>,
    settings: &KpcaSettings,
    budget: Option<usize>,
) -> Result<KernelProjection<T, Vec<T>>, TrainError> {
    let n = check_rows(points.len() / dim.max(1))?;
    let needed = settings.bytes::<T>(n, dim);
    check_budget(needed, budget)?;
    let k = settings.components;
    match settings.reduced(n) {
        None => {
            if n > MAX_EXACT_ROWS {
                return Err(TrainError::TooManyRows { n, max: MAX_EXACT_ROWS });
            }
            check_components(k, n - 1, || format!("at most {} for {n} rows (kernel PCA centres them)", n - 1))?;
            let mut work = zeroed(KernelProjection::exact_work_len(n, k), "the kernel matrix")?;
            let storage = zeroed(KernelProjection::scalars_len(dim, n, k), "the model")?;
            KernelProjection::fit_exact_in(storage, &mut work, kernel, points, dim, k)
                .map_err(|e| rank_short(e, k, format!("the centred kernel matrix of these {n} rows")))
        }
        Some(m) => {
            check_components(k, m, || format!("at most {m}, the centres"))?;
            let mut chosen = zeroed(m, "the centres")?;
            select_random(n, &mut Rng::seed_from_u64(settings.seed), &mut chosen)?;
            let centres = centre_rows(points, dim, &chosen)?;
            let storage = zeroed(KernelProjection::scalars_len(dim, m, k), "the model")?;
            match settings.method {
                Method::Kpca => {
                    let mut work = zeroed(KernelProjection::reduced_work_len(m), "the covariance")?;
                    KernelProjection::fit_reduced_in(storage, &mut work, kernel, points, &centres, dim, k)
                        .map_err(|e| rank_short(e, k, format!("the kernel of these {m} centres")))
                }
                Method::Discriminant { criterion, slices, mu } => {
                    let slices = slice_of_rows(labels, slices)?;
                    let j = slices.iter().max().map_or(0, |&s| s + 1);
                    if j < 2 {
                        return Err(TrainError::SingleClass(labels.first().copied().unwrap_or(0.0)));
                    }
                    check_components(k, j - 1, || format!("at most {} for {j} slices (one fewer)", j - 1))?;
                    let mut work = zeroed(KernelProjection::discriminant_work_len(m, j), "the covariances")?;
                    let (rows, mu) = (points, T::from_f64(mu));
                    let fitted = KernelProjection::fit_discriminant_in(
                        storage, &mut work, kernel, rows, &slices, &centres, dim, k, criterion, mu,
                    )?;
                    Ok(fitted)
                }
            }
        }
    }
}

/// A fitted projection on the heap.
pub type Projection<T> = KernelProjection<T, Vec<T>>;

/// What reduced KCCA fits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KccaSettings {
    /// Canonical pairs `k`.
    pub components: usize,
    /// Centres `m`, the same rows of both views; `None` (or `m ≥ n`): every row.
    pub centres: Option<usize>,
    /// Seed of the centres' draw.
    pub seed: u64,
    /// The regulariser's weight `μ`.
    pub mu: f64,
}

impl KccaSettings {
    /// Bytes a fit on `n` rows of `dims.0` and `dims.1` features holds besides the rows:
    /// work, the two models, the centres and their indices.
    pub fn bytes<T>(&self, n: usize, dims: (usize, usize)) -> usize {
        let m = self.centres.unwrap_or(n).min(n);
        let k = self.components;
        let models =
            KernelProjection::scalars_len(dims.0, m, k).saturating_add(KernelProjection::scalars_len(dims.1, m, k));
        let centres = m.saturating_mul(dims.0.saturating_add(dims.1).saturating_add(1));
        let scalars = KernelProjection::kcca_work_len(m, m).saturating_add(models).saturating_add(centres);
        scalars.saturating_mul(size_of::<T>())
    }
}

/// Fits reduced KCCA on the two views `first` and `second` (row-major, `dims.0` and
/// `dims.1` columns, row `i` of each the same observation) with their `kernels`: the
/// projections of the first view and of the second.
///
/// # Errors
/// `OverBudget` beyond `budget`; `Empty` without rows; the core's errors (views of
/// different lengths, too many components, non-finite values, …).
pub fn fit_kcca<T: Real>(
    first: &[T],
    second: &[T],
    dims: (usize, usize),
    kernels: (Kernel<T>, Kernel<T>),
    settings: &KccaSettings,
    budget: Option<usize>,
) -> Result<(Projection<T>, Projection<T>), TrainError> {
    let n = check_rows(first.len() / dims.0.max(1))?;
    let n2 = second.len() / dims.1.max(1);
    if n2 != n {
        return Err(kestrel_core::Error::DimensionMismatch { expected: n, got: n2 }.into());
    }
    check_budget(settings.bytes::<T>(n, dims), budget)?;
    let (m, k) = (settings.centres.unwrap_or(n).min(n), settings.components);
    check_components(k, m, || format!("at most {m}, the centres"))?;
    let mut chosen = zeroed(m, "the centres")?;
    select_random(n, &mut Rng::seed_from_u64(settings.seed), &mut chosen)?;
    let (centres, centres2) = (centre_rows(first, dims.0, &chosen)?, centre_rows(second, dims.1, &chosen)?);
    let view = View { rows: first, centres: &centres, dim: dims.0, kernel: kernels.0 };
    let view2 = View { rows: second, centres: &centres2, dim: dims.1, kernel: kernels.1 };
    let mut work = zeroed(KernelProjection::kcca_work_len(m, m), "the covariances")?;
    let storage = zeroed(KernelProjection::scalars_len(dims.0, m, k), "the model")?;
    let storage2 = zeroed(KernelProjection::scalars_len(dims.1, m, k), "the model")?;
    let mu = T::from_f64(settings.mu);
    KernelProjection::fit_kcca_in(storage, storage2, &mut work, &view, &view2, k, mu)
        .map_err(|e| rank_short(e, k, format!("the two views' kernels on these {m} centres")))
}

/// `n`, unless fewer than the 2 rows every projection needs (the core's `rows` error,
/// said with the count).
fn check_rows(n: usize) -> Result<usize, TrainError> {
    match n {
        0 => Err(TrainError::Empty),
        1 => Err(TrainError::TooFewRows { n, min: 2, what: "a projection" }),
        n => Ok(n),
    }
}

/// `Ok` unless `asked` components exceed `most`; the error says `limit()`.
fn check_components(asked: usize, most: usize, limit: impl Fn() -> String) -> Result<(), TrainError> {
    if asked > most { Err(TrainError::Components { asked, limit: limit() }) } else { Ok(()) }
}

/// The core's error of a fit, its `components` error (fewer directions of positive
/// variance than asked for, after the counts were checked) said of `matrix`.
fn rank_short(error: kestrel_core::Error, asked: usize, matrix: String) -> TrainError {
    match error {
        kestrel_core::Error::InvalidParam { name: "components" } => TrainError::Components {
            asked,
            limit: format!("{matrix} has fewer directions of positive variance: ask for fewer"),
        },
        // Lanczos's Krylov space closed before `asked` pairs: from a generic start its
        // dimension is the number of distinct eigenvalues.
        kestrel_core::Error::Breakdown { .. } => TrainError::Components {
            asked,
            limit: format!(
                "{matrix} has fewer distinct eigenvalues: its variance is shared evenly by many \
                 directions, which no component can single out (is the kernel's width far from the data's scale?)"
            ),
        },
        error => error.into(),
    }
}

/// Each row's slice: the rank of its label among the distinct labels, or (`Some(J)`) its
/// `J`-quantile among the sorted labels.
///
/// # Errors
/// An allocation failure.
pub fn slice_of_rows(labels: &[f64], slices: Option<usize>) -> Result<Vec<usize>, TrainError> {
    let n = labels.len();
    let mut order: Vec<usize> = zeroed(n, "the slices")?;
    order.iter_mut().enumerate().for_each(|(i, o)| *o = i);
    order.sort_by(|&a, &b| labels.get(a).unwrap_or(&0.0).total_cmp(labels.get(b).unwrap_or(&0.0)));
    let mut out = zeroed(n, "the slices")?;
    let mut slice = 0usize;
    for (rank, (&i, previous)) in order.iter().zip(std::iter::once(None).chain(order.iter().map(Some))).enumerate() {
        slice = match slices {
            Some(j) => rank * j.max(1) / n.max(1),
            None => {
                let changed = previous.is_some_and(|&p| labels.get(p) != labels.get(i));
                slice + usize::from(changed)
            }
        };
        if let Some(o) = out.get_mut(i) {
            *o = slice;
        }
    }
    Ok(out)
}

/// The projections of `points` (row-major, the model's dimension), row-major `n × k`.
///
/// # Errors
/// The core's, for a row of the wrong length or with NaN/∞; an allocation failure.
pub fn project<T: Real>(model: &KernelProjection<T, Vec<T>>, points: &[T]) -> Result<Vec<T>, TrainError> {
    let (dim, k) = (model.dim(), model.components());
    let mut out = zeroed(points.len() / dim * k, "the projections")?;
    for (x, y) in points.chunks_exact(dim).zip(out.chunks_exact_mut(k)) {
        model.project(x, y)?;
    }
    Ok(out)
}

/// A projection model file read once: its bytes (for [`from_bytes`] at the scalar it
/// states) and that scalar.
pub struct ModelFile {
    /// Where it was read from.
    pub path: std::path::PathBuf,
    /// Its contents.
    pub bytes: Vec<u8>,
    /// The scalar its envelope states.
    pub scalar: ScalarKind,
}

/// Reads the model file at `path` and its envelope's scalar.
///
/// # Errors
/// [`ModelFileError`] when it cannot be read or its envelope is not valid.
pub fn read_file(path: &Path) -> Result<ModelFile, ModelFileError> {
    let bytes = file::read_bounded(path, MAX_FILE_BYTES)?;
    let scalar =
        Envelope::parse(&bytes).map_err(|error| ModelFileError::Invalid { path: path.to_path_buf(), error })?.scalar;
    Ok(ModelFile { path: path.to_path_buf(), bytes, scalar })
}

impl ModelFile {
    /// The kernel projection it holds, of scalar `T`, with its scaler if it has one.
    ///
    /// # Errors
    /// [`ModelFileError::Invalid`] naming the file when it is not a kernel projection model
    /// of scalar `T`.
    pub fn projection<T: Real>(&self) -> Result<Applied<T>, ModelFileError> {
        from_bytes(&self.bytes).map_err(|error| ModelFileError::Invalid { path: self.path.clone(), error })
    }
}

/// A projection as a model file holds it: the model, and the scaler of a model fitted on
/// standardised rows.
pub struct Applied<T> {
    /// The projection.
    pub model: Projection<T>,
    /// The standardisation the rows take first, if the model was fitted on standardised rows.
    pub scaler: Option<HostScaler<T>>,
    /// The names of its features, when the rows it was fitted on named them (empty
    /// otherwise): rows are read by them, `NAME=category` ones from a column of categories.
    pub features: Vec<String>,
}

impl<T: Real> Applied<T> {
    /// The projections of `points` (row-major, in the units of the rows the model was
    /// fitted on), standardised first when the model has a scaler; row-major `n × k`.
    ///
    /// # Errors
    /// As [`project`]; the scaler's, for NaN/∞.
    pub fn project(&self, points: &[T]) -> Result<Vec<T>, TrainError> {
        let Some(scaler) = &self.scaler else { return project(&self.model, points) };
        let mut scaled = zeroed(points.len(), "the standardised rows")?;
        scaled.copy_from_slice(points);
        for row in scaled.chunks_exact_mut(self.model.dim()) {
            scaler.transform(row)?;
        }
        project(&self.model, &scaled)
    }
}

/// The kernel projection model in `bytes` (a model file's contents), of scalar `T`, with
/// its scaler if it has one.
///
/// # Errors
/// The core's, when the bytes are not a kernel projection model of scalar `T` (or its
/// scaler is not of the model's dimension).
pub fn from_bytes<T: Real>(bytes: &[u8]) -> Result<Applied<T>, kestrel_core::Error> {
    let envelope = Envelope::parse(bytes)?;
    let model = KernelProjection::from_envelope_in(&envelope, storage_for::<T>(&envelope))?;
    let scaler = scaler_for(&envelope, model.dim())?;
    let features: Vec<String> = envelope.feature_name_iter().map(str::to_string).collect();
    if !features.is_empty() && features.len() != model.dim() {
        return Err(kestrel_core::Error::Model(kestrel_core::model::ModelError::Payload));
    }
    Ok(Applied { model, scaler, features })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_full_reduced_fits_agree_and_budgets_are_checked() {
        let points: Vec<f64> = (0..40).map(|i| ((i * 7 % 11) as f64 / 5.0).sin()).collect();
        let kernel = Kernel::rbf(0.5).unwrap();
        let exact = KpcaSettings { method: Method::Kpca, components: 2, centres: None, seed: 1 };
        let model = fit(&points, &[], 2, kernel, &exact, None).unwrap();
        let same = fit(&points, &[], 2, kernel, &KpcaSettings { centres: Some(20), ..exact }, None).unwrap();
        assert_eq!(model, same, "m ≥ n is exact");
        let reduced = fit(&points, &[], 2, kernel, &KpcaSettings { centres: Some(8), ..exact }, None).unwrap();
        assert_eq!((reduced.centres().len(), project(&reduced, &points).unwrap().len()), (16, 40));
        let needed = exact.bytes::<f64>(20, 2);
        let over = fit(&points, &[], 2, kernel, &exact, Some(needed - 1));
        assert_eq!(over, Err(TrainError::OverBudget { needed, budget: needed - 1 }));
    }

    /// Past 200 rows exact KPCA runs Lanczos; rows all far apart for the kernel's width
    /// make `K_C` the centring matrix, of two distinct eigenvalues: three components are
    /// a clear error (up to 200 rows the whole decomposition returns three of its equal ones).
    #[test]
    fn a_kernel_matrix_of_equal_variances_is_a_clear_error() {
        let points: Vec<f64> = (0..600).map(|i| i as f64).collect();
        let kernel = Kernel::rbf(1e6).unwrap();
        let exact = KpcaSettings { method: Method::Kpca, components: 3, centres: None, seed: 1 };
        let error = fit(&points, &[], 2, kernel, &exact, None).unwrap_err();
        assert!(error.to_string().contains("fewer distinct eigenvalues"), "{error}");
        assert!(fit(&points[..300], &[], 2, kernel, &exact, None).is_ok());
    }

    #[test]
    fn kcca_projects_both_views_and_checks_its_budget() {
        let first: Vec<f64> = (0..60).map(|i| ((i * 7 % 11) as f64 / 5.0).sin()).collect();
        let second: Vec<f64> = first.chunks_exact(2).map(|x| x[0] * x[0] - x[1]).collect();
        let kernels = (Kernel::rbf(0.5).unwrap(), Kernel::rbf(1.0).unwrap());
        let settings = KccaSettings { components: 2, centres: Some(12), seed: 3, mu: 1e-3 };
        let (u, v) = fit_kcca(&first, &second, (2, 1), kernels, &settings, None).unwrap();
        assert_eq!((u.dim(), v.dim(), u.centres().len(), v.centres().len()), (2, 1, 24, 12));
        assert_eq!((project(&u, &first).unwrap().len(), project(&v, &second).unwrap().len()), (60, 60));
        let needed = settings.bytes::<f64>(30, (2, 1));
        let over = fit_kcca(&first, &second, (2, 1), kernels, &settings, Some(needed - 1));
        assert_eq!(over, Err(TrainError::OverBudget { needed, budget: needed - 1 }));
        let short = fit_kcca(&first, &second[..29], (2, 1), kernels, &settings, None);
        assert!(matches!(short, Err(TrainError::Core(kestrel_core::Error::DimensionMismatch { .. }))));
    }

    /// Too few rows, more components than the rows, centres or slices allow, or than the
    /// kernel has directions of variance: each an error that says which, with the counts.
    #[test]
    fn impossible_fits_say_what_bounds_them() {
        let points: Vec<f64> = (0..40).map(|i| ((i * 7 % 11) as f64 / 5.0).sin()).collect();
        let kernel = Kernel::rbf(0.5).unwrap();
        let settings = |components, centres| KpcaSettings { method: Method::Kpca, components, centres, seed: 1 };
        let limit = |result: Result<Projection<f64>, TrainError>| match result {
            Err(TrainError::Components { asked, limit }) => (asked, limit),
            other => panic!("{other:?}"),
        };
        let one = fit(&points[..2], &[], 2, kernel, &settings(1, None), None);
        assert_eq!(one, Err(TrainError::TooFewRows { n: 1, min: 2, what: "a projection" }));
        assert_eq!(
            limit(fit(&points, &[], 2, kernel, &settings(20, None), None)),
            (20, "at most 19 for 20 rows (kernel PCA centres them)".into())
        );
        assert_eq!(
            limit(fit(&points, &[], 2, kernel, &settings(9, Some(8)), None)),
            (9, "at most 8, the centres".into())
        );
        let discriminant = KpcaSettings {
            method: Method::Discriminant { criterion: Criterion::Sir, slices: None, mu: 1e-3 },
            ..settings(3, Some(8))
        };
        let labels: Vec<f64> = (0..20).map(|i| f64::from(i % 3)).collect();
        assert_eq!(
            limit(fit(&points, &labels, 2, kernel, &discriminant, None)),
            (3, "at most 2 for 3 slices (one fewer)".into())
        );
        // Three equal rows: their centred kernel matrix is 0.
        let equal = [0.5, -0.25, 0.5, -0.25, 0.5, -0.25];
        let (asked, why) = limit(fit(&equal, &[], 2, kernel, &settings(1, None), None));
        assert!(asked == 1 && why.contains("fewer directions of positive variance"), "{why}");
    }

    #[test]
    fn slices_are_classes_or_quantiles_of_the_response() {
        let labels = [3.0, -1.0, 3.0, 7.0, -1.0, 0.5];
        assert_eq!(slice_of_rows(&labels, None).unwrap(), [2, 0, 2, 3, 0, 1]);
        assert_eq!(slice_of_rows(&labels, Some(2)).unwrap(), [1, 0, 1, 1, 0, 0]);
        assert_eq!(slice_of_rows(&labels, Some(3)).unwrap(), [1, 0, 2, 2, 0, 1]);
    }
}
