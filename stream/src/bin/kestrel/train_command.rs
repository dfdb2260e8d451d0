//! `kestrel train`: read a data set, resolve the `auto` settings, fit the learner, write
//! the model file and say what was chosen. [`Prepared`] and [`fit`] are shared with
//! `kestrel tune`, which trains its candidates with this very code.
//!
//! `auto` (the default of the kernel learners' `--gamma`, rsvm's `--c` and `--delta`,
//! krr/lssvm's `--lambda`) costs a few fits of the reduced problem: the width by
//! kernel-target alignment on a sample ([`gamma::by_alignment`]), then for rsvm, krr and
//! lssvm the best of the five octaves around it by exact leave-one-out
//! ([`widths_by_loo`]); the ridge, `C` and the reduced set by the exact leave-one-out of
//! kernel ridge regression on the features the fit computes anyway
//! ([`kestrel_stream::batch::krr`]).

use std::time::Instant;

use anyhow::{Context, Result, bail};
use kestrel_core::scaler::Scaler;
use kestrel_core::{Kernel, Real, dcd, slkl};
use kestrel_stream::batch::gamma;
use kestrel_stream::batch::krr::{self, KrrConfig, KrrModel, Ridge, Task};
use kestrel_stream::batch::linear;
use kestrel_stream::batch::rsvm::{self, RsvmConfig, Selection, Tune};
use kestrel_stream::batch::slkl::{self as slkl_train, SlklConfig};
use kestrel_stream::batch::tune::{best_width, octaves, widths_by_loo};
use kestrel_stream::dataset::Dataset;
use kestrel_stream::file;
use kestrel_stream::model::{self, scalar_name};
use kestrel_stream::source::LabelColumn;
use serde_json::{Value, json};

use crate::args::{KernelArg, ScalarArg, SelectArg, Setting, TrainArgs, TrainLearner, TrainSettings};
use crate::commands::{on_error, open};

/// The IRSVM threshold (δ/√n) unless `--delta` gives one: small, so the selection runs to
/// the `--centers` cap (and, for rsvm under `--delta auto`, leave-one-out chooses the
/// prefix). Classification: 5·10⁻⁴. Regression in f64: 10⁻⁷ — a fit at a small ridge
/// uses what a coarser threshold leaves out (on make_friedman1, 5·10⁻⁴ stopped at 55
/// centres and quadrupled the test error), while the same small threshold let
/// leave-one-out pick over-fitted classifiers (Phishing 91.4 → 88.5 %, moons 94.1 →
/// 92.0 %). f32 keeps 5·10⁻⁴, where the whitening `L⁻¹` stays well above its rounding.
fn small_delta<T: Real>(task: Task) -> f64 {
    if T::BYTES == 4 || task == Task::Classification { 5e-4 } else { 1e-7 }
}
/// The most centres of rsvm, krr and lssvm unless `--centers` says.
const DEFAULT_CENTERS: usize = 256;

/// SLKL's ν, in units of the target variance, unless `--nu` says.
const DEFAULT_NU: f64 = 0.1;

/// `kestrel train`.
pub fn run(args: &TrainArgs) -> Result<()> {
    match args.settings.scalar {
        ScalarArg::F64 => train_in::<f64>(args),
        ScalarArg::F32 => train_in::<f32>(args),
    }
}

/// What `learner` predicts: a class or a real target.
pub fn task_of(learner: TrainLearner) -> Task {
    match learner {
        TrainLearner::Slkl | TrainLearner::Krr => Task::Regression,
        TrainLearner::Svm | TrainLearner::Rsvm | TrainLearner::Lssvm => Task::Classification,
    }
}

/// How `learner` reads a CSV label column: a classifier's may hold class names, a
/// regressor's target is a number.
fn labels_for(learner: TrainLearner) -> LabelColumn {
    match task_of(learner) {
        Task::Regression => LabelColumn::Numbers,
        Task::Classification => LabelColumn::Detect,
    }
}

fn train_in<T: Real>(args: &TrainArgs) -> Result<()> {
    let start = Instant::now();
    let prepared = Prepared::<T>::read(&args.settings)?;
    let (bytes, mut summary) = fit(&args.settings, &prepared.data)?;
    let bytes = prepared.model_file(bytes)?;
    file::write_atomic(&args.out, &bytes)?;
    let (data, skipped) = (&prepared.data, prepared.skipped);
    let seconds = start.elapsed().as_secs_f64();
    if args.json {
        if let Value::Object(fields) = &mut summary {
            fields.extend([
                ("n".to_string(), json!(data.len())),
                ("dim".to_string(), json!(data.dim())),
                ("skipped".to_string(), json!(skipped)),
                ("seconds".to_string(), json!(seconds)),
                ("model_bytes".to_string(), json!(bytes.len())),
                ("scalar".to_string(), json!(scalar_name::<T>())),
            ]);
        }
        println!("{summary}");
    } else {
        eprintln!(
            "kestrel: trained on {} rows of {} features in {seconds:.3} s ({skipped} skipped); model {} ({} bytes)",
            data.len(),
            data.dim(),
            args.out.display(),
            bytes.len()
        );
        let chosen = chosen_settings(&summary);
        if !chosen.is_empty() {
            eprintln!("kestrel: chosen {chosen}");
        }
    }
    Ok(())
}

/// The training rows as the settings ask for them: read (bad rows skipped and reported
/// under `--on-error skip`), cut to `--window`, standardised under `--scale`.
pub struct Prepared<T> {
    /// The rows to learn from.
    pub data: Dataset<T>,
    /// Rows skipped as bad.
    pub skipped: usize,
    scaler: Option<Scaler<T, Vec<T>>>,
}

impl<T: Real> Prepared<T> {
    /// Reads `settings.input`.
    pub fn read(settings: &TrainSettings) -> Result<Self> {
        let mut reader = open(&settings.input, labels_for(settings.learner))?;
        let mut skipped = 0usize;
        let mut data: Dataset<T> = Dataset::read(reader.as_mut(), on_error(&settings.input), |e| {
            skipped += 1;
            eprintln!("kestrel: skipped {e}");
        })?;
        if let Some(window) = settings.window {
            data = data.last(window);
        }
        let scaler = match settings.scale {
            true => {
                let (scaled, scaler) = data.standardized().context("--scale")?;
                data = scaled;
                Some(scaler)
            }
            false => None,
        };
        Ok(Prepared { data, skipped, scaler })
    }

    /// The model file of `bytes` (a model [`fit`] on these rows): with the scaler's
    /// statistics and the class names when the rows had them.
    pub fn model_file(&self, mut bytes: Vec<u8>) -> Result<Vec<u8>> {
        if let Some(scaler) = &self.scaler {
            bytes = model::with_scaler(bytes, scaler.section())?;
        }
        if !self.data.class_names().is_empty() {
            bytes = model::with_class_names(bytes, self.data.class_names())?;
        }
        Ok(bytes)
    }
}

/// Fits the learner of `settings` on `data`: the model's bytes (without scaler or class
/// names, see [`Prepared::model_file`]) and the summary, with what `auto` chose under
/// `chosen`.
pub fn fit<T: Real>(settings: &TrainSettings, data: &Dataset<T>) -> Result<(Vec<u8>, Value)> {
    match settings.learner {
        TrainLearner::Svm => train_svm(settings, data),
        TrainLearner::Rsvm => train_rsvm(settings, data),
        TrainLearner::Slkl => train_slkl(settings, data),
        TrainLearner::Krr => train_krr(settings, data, Task::Regression),
        TrainLearner::Lssvm => train_krr(settings, data, Task::Classification),
    }
}

/// The settings `auto` chose, as `name = value` pairs for the terminal.
fn chosen_settings(summary: &Value) -> String {
    let Some(chosen) = summary.get("chosen").and_then(Value::as_object) else { return String::new() };
    chosen.iter().map(|(name, value)| format!("{name} = {value}")).collect::<Vec<_>>().join(", ")
}

/// What `auto` chose, as `(setting, value)` pairs for a summary's `chosen` object.
type Chosen = Vec<(String, Value)>;

/// Where `--gamma auto` looks after the alignment, for the learners with a leave-one-out
/// criterion: `γ*·2^k` for `k` in this range, `γ*` the alignment's width.
const LOO_OCTAVES: (i32, i32) = (-2, 2);

/// The kernel of the flags: `--gamma` resolved on `data` (`auto` unless a number is given),
/// and what `auto` chose, for the summary's `chosen` object. `auto` is the width of highest
/// kernel-target alignment; with `loo_ridges` (rsvm, krr, lssvm: the ridges their fit
/// will compare, its automatic path when empty) it is then the best of [`LOO_OCTAVES`]
/// around that width by the exact leave-one-out of the reduced kernel ridge
/// ([`widths_by_loo`]): alignment finds the scale, leave-one-out the octave.
fn kernel<T: Real>(
    args: &TrainSettings,
    data: &Dataset<T>,
    task: Task,
    loo_ridges: Option<&[f64]>,
) -> Result<(Kernel<T>, Chosen)> {
    let kind = args.kernel.build::<T>(1.0).context("kernel parameters")?.kind();
    match (args.kernel.gamma, args.kernel.kernel) {
        (Some(Setting::Value(gamma)), _) => Ok((args.kernel.build(gamma).context("kernel parameters")?, Vec::new())),
        (_, KernelArg::Linear) => Ok((Kernel::linear(), Vec::new())),
        (None | Some(Setting::Auto), _) => {
            let choice = gamma::by_alignment(data, kind, task, args.seed).context("--gamma auto")?;
            let aligned = gamma::with_gamma(kind, T::from_f64(choice.gamma)).context("--gamma auto")?;
            let mut fields = vec![("alignment".to_string(), json!(choice.alignment))];
            let Some(ridges) = loo_ridges else {
                fields.push(("gamma".to_string(), json!(choice.gamma)));
                return Ok((aligned, fields));
            };
            let widths = octaves(choice.gamma, LOO_OCTAVES.0, LOO_OCTAVES.1);
            let scores = widths_by_loo(data, &krr_config(args, aligned, task), &widths, ridges, |_| {})?;
            let gamma = best_width(&scores, task).map_or(choice.gamma, |best| best.gamma);
            fields.extend([("alignment_gamma".to_string(), json!(choice.gamma)), ("gamma".to_string(), json!(gamma))]);
            Ok((gamma::with_gamma(kind, T::from_f64(gamma)).context("--gamma auto")?, fields))
        }
    }
}

fn svm_params<T: Real>(args: &TrainSettings, c: f64) -> Result<dcd::ValidParams<T>> {
    args.svm.params(c, args.eps).context("SVM parameters")
}

fn train_rsvm<T: Real>(args: &TrainSettings, data: &Dataset<T>) -> Result<(Vec<u8>, Value)> {
    // The least-squares SVM's ridge behind C is λ = 1/(2C) (see rsvm::Tune).
    let ridges: Vec<f64> = Setting::given(args.svm.c).map(|c| 1.0 / (2.0 * c)).into_iter().collect();
    let loo_ridges = if args.raw_features { None } else { Some(&ridges[..]) };
    let (kernel, mut chosen) = kernel::<T>(args, data, Task::Classification, loo_ridges)?;
    let auto_c = matches!(args.svm.c, None | Some(Setting::Auto));
    let (rms, auto_delta) = match args.delta {
        Some(Setting::Value(rms)) => (rms, false),
        None | Some(Setting::Auto) => (small_delta::<T>(Task::Classification), args.select == SelectArg::Irsvm),
    };
    let tune = Tune { c: auto_c, centres: auto_delta };
    if tune != Tune::default() && args.raw_features {
        bail!("--raw-features takes --c and --delta as numbers: auto chooses them on the Nyström features");
    }
    let selection = match args.select {
        SelectArg::Irsvm => Selection::Irsvm { rms },
        SelectArg::Random => Selection::Random,
    };
    let config = RsvmConfig {
        kernel,
        centres: args.centers.unwrap_or(DEFAULT_CENTERS),
        selection,
        whiten: !args.raw_features,
        params: svm_params::<T>(args, Setting::given(args.svm.c).unwrap_or(1.0))?,
        seed: args.seed,
        budget: args.budget,
        tune,
    };
    let (model, summary) = rsvm::train(data, &config)?;
    let bytes = model::to_bytes(&model)?;
    if let Some(tuned) = summary.tuned {
        if tune.c {
            chosen.push(("c".to_string(), json!(tuned.c)));
        }
        if tune.centres {
            chosen.push(("centers".to_string(), json!(summary.centres)));
        }
        chosen.push(("loo_errors".to_string(), json!(tuned.ridge.errors)));
    }
    let summary = json!({
        "learner": "rsvm",
        "objective": summary.objective,
        "passes": summary.passes,
        "iterations": summary.passes,
        "converged": summary.converged,
        "centers": summary.centres,
        "working_bytes": summary.working_bytes,
        "chosen": chosen.into_iter().collect::<serde_json::Map<_, _>>(),
    });
    Ok((bytes, summary))
}

/// The reduced kernel ridge of the flags with `kernel`: `--centers`, the selection (IRSVM
/// at `--delta`, or at a small threshold under `auto`), `--lambda` (auto unless a number).
pub fn krr_config<T: Real>(args: &TrainSettings, kernel: Kernel<T>, task: Task) -> KrrConfig<T> {
    let ridge = match args.lambda {
        Some(Setting::Value(lambda)) => Ridge::Fixed(lambda),
        None | Some(Setting::Auto) => Ridge::Auto,
    };
    let selection = match args.select {
        SelectArg::Irsvm => Selection::Irsvm { rms: Setting::given(args.delta).unwrap_or(small_delta::<T>(task)) },
        SelectArg::Random => Selection::Random,
    };
    KrrConfig {
        kernel,
        centres: args.centers.unwrap_or(DEFAULT_CENTERS),
        selection,
        ridge,
        task,
        seed: args.seed,
        budget: args.budget,
    }
}

fn train_krr<T: Real>(args: &TrainSettings, data: &Dataset<T>, task: Task) -> Result<(Vec<u8>, Value)> {
    if matches!(args.delta, Some(Setting::Auto)) {
        bail!(
            "--delta auto is rsvm's; krr and lssvm take a threshold (default {}) and --centers",
            small_delta::<T>(task)
        );
    }
    let ridges: Vec<f64> = Setting::given(args.lambda).into_iter().collect();
    let (kernel, mut chosen) = kernel::<T>(args, data, task, Some(&ridges))?;
    let config = krr_config(args, kernel, task);
    let ridge = config.ridge;
    let (model, summary) = krr::train(data, &config)?;
    let bytes = match &model {
        KrrModel::Regressor(model) => model::to_bytes(model)?,
        KrrModel::Classifier(model) => model::to_bytes(model)?,
    };
    if ridge == Ridge::Auto {
        chosen.push(("lambda".to_string(), json!(summary.chosen.lambda)));
    }
    let path: Vec<Value> =
        summary.path.iter().map(|s| json!({"lambda": s.lambda, "loo_mse": s.mse, "loo_errors": s.errors})).collect();
    let learner = if task == Task::Regression { "krr" } else { "lssvm" };
    let summary = json!({
        "learner": learner,
        "centers": summary.centres,
        "lambda": summary.chosen.lambda,
        "loo_mse": summary.chosen.mse,
        "loo_errors": summary.chosen.errors,
        "path": path,
        "working_bytes": summary.working_bytes,
        "chosen": chosen.into_iter().collect::<serde_json::Map<_, _>>(),
    });
    Ok((bytes, summary))
}

fn train_slkl<T: Real>(args: &TrainSettings, data: &Dataset<T>) -> Result<(Vec<u8>, Value)> {
    // ν in units of the target variance: F(μ) scales with y², so this keeps --nu meaningful
    // whatever the units of the target (Prop. 3: only λν matters, λ = 1).
    let nu = args.nu.unwrap_or(DEFAULT_NU) * data.label_variance().max(f64::MIN_POSITIVE);
    let (kernel, chosen) = kernel::<T>(args, data, Task::Regression, None)?;
    let mut params = slkl::Params::new().kernel(kernel).nu(T::from_f64(nu)).seed(args.seed);
    if let Some(eps) = args.eps {
        params = params.epsilon(T::from_f64(eps));
    }
    let candidates = args.centers.unwrap_or(256);
    let config = SlklConfig {
        params: params.check().context("SLKL parameters")?,
        candidates,
        max_active: args.max_active.unwrap_or(candidates),
        budget: args.budget,
    };
    let (model, summary) = slkl_train::train(data, &config)?;
    let bytes = model::to_bytes(&model)?;
    let summary = json!({
        "learner": "slkl",
        "nu_effective": nu,
        "objective": summary.objective,
        "steps": summary.steps,
        "iterations": summary.steps,
        "converged": summary.converged,
        "centers": summary.centres,
        "working_bytes": summary.working_bytes,
        "precomputed_columns": summary.precomputed,
        "chosen": chosen.into_iter().collect::<serde_json::Map<_, _>>(),
    });
    Ok((bytes, summary))
}

fn train_svm<T: Real>(args: &TrainSettings, data: &Dataset<T>) -> Result<(Vec<u8>, Value)> {
    if matches!(args.svm.c, Some(Setting::Auto)) {
        bail!("--c auto is for the kernel learners (rsvm); the linear SVM takes a number (default 1)");
    }
    let c = Setting::given(args.svm.c).unwrap_or(1.0);
    let (model, summary) = linear::train(data, svm_params::<T>(args, c)?, args.seed, args.budget)?;
    let bytes = model::to_bytes(&model)?;
    let summary = json!({
        "learner": "svm",
        "objective": summary.objective,
        "passes": summary.passes,
        "iterations": summary.passes,
        "converged": summary.converged,
        "support_vectors": summary.support_vectors,
        "centers": 0,
        "classes": summary.classes,
        "solver_bytes": summary.solver_bytes,
    });
    Ok((bytes, summary))
}
