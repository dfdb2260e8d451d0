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

use super::falkon::{self, HessianRows, Problem, Regularisation};
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
/// `TooFewRows` for fewer than three rows in `sample` to choose the components on (two to
/// fit, one held out); as krr's cg solver.
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
    let whitened = krr::reduced_set(sample, config)?;
    let (components, held_out_mse) = match components {
        Some(components) => (components, Vec::new()),
        None => choose_components(sample, config, &whitened)?,
    };
    let krr::Whitened { set, factor } = whitened;
    let targets: Vec<T> = data.labels().iter().map(|&y| T::from_f64(y)).collect();
    let threads = super::mrrsvm::threads();
    let problem = Problem {
        data,
        targets: &targets,
        kernel: &config.kernel,
        centres: &set.centres,
        factor: &factor,
        hessian: HessianRows::All,
        dim,
        threads,
    };
    let solution = falkon::solve(&problem, Regularisation::Components(components)).map_err(no_direction)?;
    let outcome = solution.outcome;
    let model = krr::regressor(config, dim, solution.intercept, &set.centres, &factor, solution.weights)?;
    let cg = CgSummary {
        iterations: outcome.iterations,
        residual: outcome.residual.to_f64(),
        converged: outcome.exit == kestrel_core::linalg::Exit::Converged,
        subsample: sample.len(),
        passes: solution.passes,
        exact_hessian: false,
    };
    let summary = KplsSummary { centres: set.m, components, held_out_mse, cg, working_bytes };
    Ok((KrrModel::Regressor(model, None), summary))
}

/// The solver's error, a breakdown at its first step said in the data's terms.
fn no_direction(error: TrainError) -> TrainError {
    match error {
        TrainError::Core(Error::Breakdown { step: 0 }) => TrainError::NoDirection,
        other => other,
    }
}

/// The number of components of least held-out error, and every number's error (module
/// doc), on `sample` and its `whitened` reduced set.
fn choose_components<T: Real>(
    sample: &Dataset<T>,
    config: &KrrConfig<T>,
    whitened: &krr::Whitened<T>,
) -> Result<(usize, Vec<f64>), TrainError> {
    let (centres, factor, features) = (&whitened.set.centres, &whitened.factor, &whitened.set.features);
    let n = sample.len();
    let held = (n / 5).max(1);
    if n < held + 2 {
        let what = "choosing the components (two rows to fit, one held out; or give them)";
        return Err(TrainError::TooFewRows { n, min: held + 2, what });
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
        hessian: HessianRows::All,
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
    falkon::solve_observed(&problem, Regularisation::Components(tried), &mut score).map_err(no_direction)?;
    let best =
        errors.iter().enumerate().fold((0, f64::INFINITY), |best, (i, &e)| if e < best.1 { (i, e) } else { best });
    Ok((best.0 + 1, errors))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::centres::Selection;
    use crate::batch::class_weights::ClassWeights;
    use crate::batch::krr::Ridge;
    use crate::source::Record;
    use kestrel_core::Kernel;

    /// `n` sparse rows of `y = sin(x₀) + x₁`; only row 0 has a third feature.
    fn sparse(n: usize) -> Dataset<f64> {
        let mut data = Dataset::new();
        for i in 0..n {
            let x = [i as f64 / n as f64, (i % 3) as f64 / 3.0];
            let (mut indices, mut values) = (vec![0, 1], x.to_vec());
            if i == 0 {
                indices.push(2);
                values.push(1.0);
            }
            let label = x[0].sin() + x[1];
            data.push(&Record { label, indices, values, ..Record::default() }).unwrap();
        }
        data
    }

    fn config(task: Task, seed: u64) -> KrrConfig<f64> {
        KrrConfig {
            kernel: Kernel::rbf(1.0).unwrap(),
            centres: 8,
            selection: Selection::Random,
            ridge: Ridge::Auto,
            task,
            seed,
            budget: None,
            class_weights: ClassWeights::Unit,
            posterior: false,
        }
    }

    /// Choosing the components works whichever rows are held out — also when the held-out
    /// rows are the only ones with the last feature (a subset keeps its set's width); the
    /// number chosen has the least held-out error of those tried.
    #[test]
    fn components_are_chosen_whichever_rows_are_held_out() {
        let data = sparse(10);
        for seed in 0..20 {
            let (_, summary) = train(&data, &data, &config(Task::Regression, seed), None).unwrap();
            let least = summary.held_out_mse.iter().copied().fold(f64::INFINITY, f64::min);
            assert_eq!(summary.held_out_mse[summary.components - 1], least, "seed {seed}: {summary:?}");
        }
    }

    #[test]
    fn bad_settings_are_errors() {
        let data = sparse(10);
        let refused = |result: Result<_, TrainError>, name| {
            assert!(matches!(result, Err(TrainError::Core(Error::InvalidParam { name: n })) if n == name), "{name}");
        };
        refused(train(&data, &data, &config(Task::Classification, 1), Some(2)).map(|_| ()), "task");
        refused(train(&data, &data, &config(Task::Regression, 1), Some(0)).map(|_| ()), "components");
        let two = sparse(2);
        let short = train(&two, &two, &config(Task::Regression, 1), None).map(|_| ());
        assert!(matches!(short, Err(TrainError::TooFewRows { n: 2, min: 3, .. })), "{short:?}");
        assert!(short.unwrap_err().to_string().contains("needs at least 3 rows, the data have 2"));
    }

    /// A breakdown at the Krylov iteration's first step — no direction of the features
    /// goes with the targets, as when every row has the same features (4 such rows with
    /// labels 0, 1, 0, 1 broke down so from the command line) — is said in the data's
    /// terms; any other error passes as it is.
    #[test]
    fn a_first_step_breakdown_is_said_in_the_datas_terms() {
        assert_eq!(no_direction(TrainError::Core(Error::Breakdown { step: 0 })), TrainError::NoDirection);
        assert!(TrainError::NoDirection.to_string().contains("the features do not vary"));
        let later = || TrainError::Core(Error::Breakdown { step: 3 });
        assert_eq!(no_direction(later()), later());
        assert_eq!(no_direction(TrainError::Empty), TrainError::Empty);
    }
}
