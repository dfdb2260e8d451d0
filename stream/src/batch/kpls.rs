//! Kernel partial least squares (seed 000 §4.1.2) on the Nyström features of
//! [`super::krr`], by conjugate gradients ([`super::falkon`]).
//!
//! **Math.** Kernel PLS with `r` components minimises the same squared loss as least
//! squares, restricted to the Krylov space of `r` products (Krämer & Braun, reference 27
//! of the seed). On the whitened features `z(x) = L⁻¹K(Ã, x)` with the intercept free, that is
//! `min ‖ỹ − Z_c w‖²` over `w ∈ span{Z_cᵀỹ, (Z_cᵀZ_c)Z_cᵀỹ, …, (Z_cᵀZ_c)^{r−1}Z_cᵀỹ}`
//! (`Z_c` the centred features, `ỹ = y − ȳ`, `b = ȳ − z̄ᵀw`), and it is the `r`-th iterate
//! of CG on `Z_cᵀZ_c w = Z_cᵀỹ` from `w = 0` — the seed's `K²α = Ky` with `K ≈ Z_cZ_cᵀ`
//! and `w = Z_cᵀα`. The number of components is the regulariser: one is a scaled
//! projection on `Z_cᵀỹ`, and as `r` grows the fit tends to the unpenalised least squares
//! on the `m` features.
//!
//! **Choosing `r`** (when not given): the rows of a uniform subsample of at most
//! [`krr::CG_SUBSAMPLE`] are split at random, four fifths to fit and one fifth (at least
//! one row) held out; one CG solve of up to [`MAX_COMPONENTS`] steps on the four fifths
//! scores each iterate by its mean squared error on the held-out rows, and the `r` of least
//! error is kept.
//! The model is then solved with that `r` on every row. The centres and `γ` are chosen as
//! krr's cg solver chooses them (on the same subsample).
//!
//! **Cost and memory.** `r + 1` passes over the rows (`O(n·m·d)` kernel work each) for the
//! model, and `MAX_COMPONENTS + 1` over four fifths of the subsample to choose `r`;
//! `O(m²)` besides the subsample's features (`n_s·m`) and the data set, as krr's cg solver
//! ([`krr::cg_working_bytes`]).

use kestrel_core::{Error, Real, Rng};

use super::falkon::{self, Problem, Regularisation};
use super::krr::{self, CgSummary, KrrConfig, KrrModel, Task};
use super::{TrainError, check_budget};
use crate::dataset::Dataset;
use crate::limits::zeroed;

/// The most components [`train`] tries when choosing them.
pub const MAX_COMPONENTS: usize = 64;

/// What [`train`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct KplsSummary {
    /// Centres kept.
    pub centres: usize,
    /// Components of the model.
    pub components: usize,
    /// The held-out mean squared error of each number of components tried, from one
    /// (empty when the number was given).
    pub held_out_mse: Vec<f64>,
    /// How the final solve ended (its iterations are the components, unless the
    /// least-squares fit was reached first).
    pub cg: CgSummary,
    /// Bytes training held at most besides the data set.
    pub working_bytes: usize,
}

/// Kernel PLS on `data` with `components` (chosen on `sample` when `None`, see the module
/// doc), the centres chosen on `sample` (a subsample of `data`, [`krr::subsample`]).
///
/// # Errors
/// `InvalidParam { name: "task" }` for classification, `{ name: "components" }` for 0;
/// `InvalidParam { name: "n" }` for fewer than three rows in `sample` to choose the
/// components on (two to fit, one held out); as krr's cg solver.
pub fn train<T: Real>(
    data: &Dataset<T>,
    sample: &Dataset<T>,
    config: &KrrConfig<T>,
    components: Option<usize>,
) -> Result<(KrrModel<T>, KplsSummary), TrainError> {
    if config.task != Task::Regression {
        return Err(Error::InvalidParam { name: "task" }.into());
    }
    let working_bytes = krr::cg_working_bytes(data, sample, config);
    check_budget(data.bytes().saturating_add(working_bytes), config.budget)?;
    let dim = data.dim().max(1);
    let krr::Whitened { set, factor } = krr::reduced_set(sample, config)?;
    let (components, held_out_mse) = match components {
        Some(components) => (components, Vec::new()),
        None => choose_components(sample, config, &set.centres, &factor, &set.features)?,
    };
    let targets: Vec<T> = data.labels().iter().map(|&y| T::from_f64(y)).collect();
    let threads = super::mrrsvm::threads();
    let problem = Problem {
        data,
        targets: &targets,
        kernel: &config.kernel,
        centres: &set.centres,
        factor: &factor,
        sample,
        dim,
        threads,
    };
    let solution = falkon::solve(&problem, Regularisation::Components(components))?;
    let outcome = solution.outcome;
    let model = krr::regressor(config, dim, solution.intercept, &set.centres, &factor, solution.weights)?;
    let cg = CgSummary {
        iterations: outcome.iterations,
        residual: outcome.residual.to_f64(),
        converged: outcome.exit == kestrel_core::linalg::Exit::Converged,
        subsample: sample.len(),
    };
    let summary = KplsSummary { centres: set.m, components, held_out_mse, cg, working_bytes };
    Ok((KrrModel::Regressor(model, None), summary))
}

/// The number of components of least held-out error, and every number's error (module
/// doc): `features` are the whitened features of `sample`'s rows.
fn choose_components<T: Real>(
    sample: &Dataset<T>,
    config: &KrrConfig<T>,
    centres: &[T],
    factor: &kestrel_core::cholesky::Cholesky<T, Vec<T>>,
    features: &[T],
) -> Result<(usize, Vec<f64>), TrainError> {
    let n = sample.len();
    let held = (n / 5).max(1);
    if n < held + 2 {
        return Err(Error::InvalidParam { name: "n" }.into());
    }
    let mut order = zeroed(n, "the held-out split")?;
    for (i, slot) in order.iter_mut().enumerate() {
        *slot = i;
    }
    Rng::seed_from_u64(config.seed).shuffle(&mut order);
    let (held_out, fitted) = order.split_at(held);
    let mut fitted = fitted.to_vec();
    fitted.sort_unstable();
    let part = sample.rows_in(&fitted);
    let targets: Vec<T> = part.labels().iter().map(|&y| T::from_f64(y)).collect();
    let m = factor.dim();
    let problem = Problem {
        data: &part,
        targets: &targets,
        kernel: &config.kernel,
        centres,
        factor,
        sample: &part,
        dim: part.dim().max(1),
        threads: super::mrrsvm::threads(),
    };
    let mut errors = Vec::new();
    let mut score = |_: usize, w: &[T], b: T| {
        let mut sum = 0.0;
        for &i in held_out {
            let z = features.get(i * m..(i + 1) * m).ok_or(Error::IndexOutOfRange { index: i, len: n })?;
            let y = sample.labels().get(i).copied().unwrap_or(0.0);
            let residual = y - (b + kestrel_core::linalg::dot(z, w)?).to_f64();
            sum += residual * residual;
        }
        errors.push(sum / held_out.len() as f64);
        Ok(())
    };
    let tried = MAX_COMPONENTS.min(m);
    falkon::solve_observed(&problem, Regularisation::Components(tried), &mut score)?;
    let best =
        errors.iter().enumerate().fold((0, f64::INFINITY), |best, (i, &e)| if e < best.1 { (i, e) } else { best });
    Ok((best.0 + 1, errors))
}
