//! `kestrel tune`: compare a learner's settings on a data set, print the table, and write
//! the best model.
//!
//! The candidates are the widths of `--gamma-grid` (by default seven octaves around the
//! width of highest kernel-target alignment) and, for the setting the learner is most
//! sensitive to, the values of its grid (`--c-grid`, `--lambda-grid`, `--nu-grid`). Every
//! other flag means what it means to `kestrel train`. Two criteria:
//! - **exact leave-one-out** (rsvm, krr, lssvm): one reduced kernel ridge path per width
//!   scores every ridge — or every `C = 1/(2λ)` — at once
//!   ([`kestrel_stream::batch::tune::widths_by_loo`]), on every row up to 10,000 and past
//!   that on the uniform subsample `--gamma auto` compares its widths on
//!   ([`kestrel_stream::batch::fit::width_rows`]: ridges scaled to it by `n_s/n`, the one
//!   chosen scaled back), the best model then trained on every row;
//! - **k-fold cross-validation** (slkl, svm, or any learner under `--folds`): each candidate
//!   is trained `k` times by `kestrel train`'s own code and scored on the held-out fold.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result};
use kestrel_core::Real;
use kestrel_stream::batch::fit::width_rows;
use kestrel_stream::batch::gamma;
use kestrel_stream::batch::krr::Task;
use kestrel_stream::batch::tune::{Folds, WidthScore, extend_past_edges, octaves, widths_by_loo};
use kestrel_stream::dataset::Dataset;
use kestrel_stream::{file, labels, model, score, shell};
use serde_json::{Value, json};

use crate::Usage;
use crate::args::{ClassWeightArg, KernelArg, ScalarArg, Setting, TrainLearner, TrainSettings, TuneArgs};
use crate::commands::progress_bar;
use crate::report::Report;
use crate::report::chart::{Axes, Dots, Plot, bars, number, pick};
use crate::train_command::{Prepared, fit, relevance_json, scaling_json, scaling_line, told};

/// Folds of the cross-validation unless `--folds` says.
const DEFAULT_FOLDS: usize = 5;
/// The linear SVM's costs unless `--c-grid` says: LIBSVM `grid.py`'s 2⁻⁵, 2⁻³, …, 2¹⁵.
const SVM_C_GRID: [i32; 11] = [-5, -3, -1, 1, 3, 5, 7, 9, 11, 13, 15];

/// `kestrel tune`.
pub fn run(args: &TuneArgs) -> Result<()> {
    match args.settings.scalar {
        ScalarArg::F64 => tune_in::<f64>(args),
        ScalarArg::F32 => tune_in::<f32>(args),
    }
}

/// The learner's searched setting and its value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Searched {
    /// The SVM's cost (svm, rsvm).
    C(f64),
    /// The ridge (krr, lssvm).
    Lambda(f64),
    /// SLKL's ν, in units of the target variance.
    Nu(f64),
}

impl Searched {
    fn name(self) -> &'static str {
        match self {
            Searched::C(_) => "c",
            Searched::Lambda(_) => "lambda",
            Searched::Nu(_) => "nu",
        }
    }

    fn value(self) -> f64 {
        match self {
            Searched::C(v) | Searched::Lambda(v) | Searched::Nu(v) => v,
        }
    }

    /// Fixes the setting in `settings`.
    fn apply(self, settings: &mut TrainSettings) {
        match self {
            Searched::C(c) => settings.svm.c = Some(Setting::Value(c)),
            Searched::Lambda(lambda) => settings.lambda = Some(Setting::Value(lambda)),
            Searched::Nu(nu) => settings.nu = Some(Setting::Value(nu)),
        }
    }
}

/// One candidate: the settings it fixes, and its score.
struct Candidate {
    /// The width, for a kernel learner.
    gamma: Option<f64>,
    /// The learner's searched setting, `None` when each fit chose it itself (`auto`).
    value: Option<Searched>,
    /// Centres of the reduced set (leave-one-out only).
    centres: Option<usize>,
    /// Misclassified fraction (classification; of the rows' class weights under
    /// `--class-weight`) or mean squared error (regression): lower is better.
    loss: f64,
    seconds: f64,
}

/// The flags that train a candidate: `base` with its width and searched setting fixed.
fn candidate_settings(base: &TrainSettings, gamma: Option<f64>, value: Option<Searched>) -> TrainSettings {
    let mut settings = base.clone();
    if let Some(gamma) = gamma {
        settings.kernel.gamma = Some(Setting::Value(gamma));
    }
    if let Some(value) = value {
        value.apply(&mut settings);
    }
    settings
}

/// The values to compare for the setting `--NAME`: the one given, the grid given, or none
/// (the caller's default).
///
/// # Errors
/// [`Usage`] when both the setting and its grid are given.
fn given_values(name: &str, fixed: Option<f64>, grid: &[f64]) -> Result<Vec<f64>> {
    match (fixed, grid.is_empty()) {
        (Some(_), false) => Err(Usage(format!("give --{name} or --{name}-grid, not both")).into()),
        (Some(value), true) => Ok(vec![value]),
        (None, _) => Ok(grid.to_vec()),
    }
}

fn tune_in<T: Real>(args: &TuneArgs) -> Result<()> {
    let novelty = "kestrel tune compares settings by their error on labels; the novelty detector learns without \
                   them (train it with kestrel train, score it with kestrel eval)";
    if args.settings.learner == Some(TrainLearner::Novelty) {
        return Err(Usage(novelty.into()).into());
    }
    let start = Instant::now();
    let prepared = Prepared::<T>::read(&args.settings, args.weight_column.as_deref())?;
    let (data, learner) = (&prepared.data, prepared.learner);
    if learner == TrainLearner::Novelty {
        return Err(Usage(novelty.into()).into());
    }
    let task = learner.fit().task();
    let gammas = widths(args, learner, data, task)?;
    let weights = LabelWeights::of(args, learner, data)?;
    let loo = args.folds.is_none() && matches!(learner, TrainLearner::Rsvm | TrainLearner::Krr | TrainLearner::Lssvm);
    let (candidates, scored_rows) = match loo {
        true => by_loo(args, learner, data, &gammas, (task, weights.as_ref()))?,
        false => (by_folds(args, learner, data, &gammas, (task, weights.as_ref()))?, data.len()),
    };
    let best = candidates
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| a.loss.total_cmp(&b.loss))
        .map(|(index, _)| index)
        .context("no candidate to compare")?;
    let model_bytes = match (&args.out, candidates.get(best)) {
        (Some(out), Some(best)) => {
            let settings = candidate_settings(&args.settings, best.gamma, best.value);
            let (bytes, _) = fit(&settings, learner, data, None).context("training the best candidate")?;
            let bytes = prepared.model_file(bytes)?;
            file::write_atomic(out, &bytes)?;
            Some(bytes.len())
        }
        _ => None,
    };
    let criterion = if loo { "leave-one-out".to_string() } else { format!("{}-fold", folds_of(args)) };
    let weighed = weights.is_some() || data.row_weights().is_some();
    let criterion = if weighed { format!("weighted {criterion}") } else { criterion };
    let seconds = start.elapsed().as_secs_f64();
    if let Some(path) = &args.report {
        let rows = (scored_rows, data.len());
        report(args, learner, &candidates, best, task, &criterion, rows)?.write(path)?;
    }
    if args.json {
        let rows: Vec<Value> = candidates.iter().map(|c| candidate_json(c, task)).collect();
        let mut summary = json!({
            "learner": learner.name(),
            "criterion": criterion,
            "n": data.len(),
            "scored_rows": scored_rows,
            "dim": data.dim(),
            "skipped": prepared.skipped,
            "candidates": rows,
            "best": candidates.get(best).map(|c| candidate_json(c, task)),
            "seconds": seconds,
            "model_bytes": model_bytes,
        });
        if let Value::Object(fields) = &mut summary {
            if let Some(relevance) = &prepared.relevance {
                fields.insert("relevance".to_string(), relevance_json(relevance));
            }
            fields.insert("standardised".to_string(), json!(prepared.standardised()));
            if let Some(verdict) = &prepared.scaling {
                fields.insert("scaling".to_string(), scaling_json(verdict));
            }
        }
        say!("{summary}")?;
    } else {
        print_table(&candidates, best, task, &criterion)?;
        if let Some(best) = candidates.get(best) {
            let preparation = prepared.preparation_flag(&args.settings);
            let mut column_flags = class_weight_flags(&args.settings);
            for categorical in &args.settings.categorical.categorical {
                column_flags.push_str(&format!(" --categorical {}", shell::word(&categorical.to_string())));
            }
            if let Some(column) = &args.weight_column {
                column_flags.push_str(&format!(" --weight-column {}", shell::word(column)));
            }
            say!("best: kestrel train --learner {}{preparation}{column_flags}{}", learner.name(), flags(best))?;
        }
        tell!("kestrel: {} candidates on {} rows in {seconds:.3} s", candidates.len(), data.len());
        if let Some(verdict) = prepared.scaling.as_ref().filter(|v| told(v)) {
            tell!("kestrel: {}", scaling_line(verdict, task));
        }
        for note in &prepared.notes {
            tell!("kestrel: note: {note}");
        }
        if let (Some(out), Some(bytes)) = (&args.out, model_bytes) {
            tell!("kestrel: best model {} ({bytes} bytes)", out.display());
        }
    }
    Ok(())
}

/// The class weights of `--class-weight` by label, for the candidates' scores: a row
/// counts its class's weight ([`kestrel_stream::batch::class_weights`]) times its own
/// (`--weight-column`, [`row_weight`]).
struct LabelWeights(HashMap<u64, f64>);

impl LabelWeights {
    /// The weights the settings give the classes of `data`; `None` without
    /// `--class-weight`.
    fn of<T: Real>(args: &TuneArgs, learner: TrainLearner, data: &Dataset<T>) -> Result<Option<Self>> {
        let settings = args.settings.fit_settings(learner, data.class_names().names()).map_err(anyhow::Error::msg)?;
        if settings.learner.task() != Task::Classification {
            return Ok(None);
        }
        let pairs = settings.class_weights.by_label(data.labels()).context("--class-weight")?;
        Ok(pairs
            .map(|pairs| LabelWeights(pairs.into_iter().map(|(label, weight)| (labels::key(label), weight)).collect())))
    }

    /// The weight of a row labelled `label` (1 for a label the training rows lack).
    fn weight(&self, label: f64) -> f64 {
        self.0.get(&labels::key(label)).copied().unwrap_or(1.0)
    }
}

/// The weight row `i` of `data` counts in a score: its class's (`weights`) times its own
/// (`--weight-column`); 1 without either.
fn row_weight<T: Real>(data: &Dataset<T>, i: usize, weights: Option<&LabelWeights>) -> f64 {
    let class = match (weights, data.labels().get(i)) {
        (Some(weights), Some(&label)) => weights.weight(label),
        _ => 1.0,
    };
    class * data.row_weights().and_then(|own| own.get(i)).copied().unwrap_or(1.0)
}

/// The `--class-weight` flags as given, for the `best:` line (each a shell word).
fn class_weight_flags(settings: &TrainSettings) -> String {
    let words = settings.class_weight.iter().map(|arg| match arg {
        ClassWeightArg::Balanced => "balanced".to_string(),
        ClassWeightArg::Class(label, weight) => shell::word(&format!("{label}={weight}")).into_owned(),
    });
    words.map(|word| format!(" --class-weight {word}")).collect()
}

fn folds_of(args: &TuneArgs) -> usize {
    args.folds.unwrap_or(DEFAULT_FOLDS)
}

/// The widths to compare: none for a linear model, `--gamma`'s when fixed, the grid's, or
/// octaves around the alignment's choice.
fn widths<T: Real>(args: &TuneArgs, learner: TrainLearner, data: &Dataset<T>, task: Task) -> Result<Vec<Option<f64>>> {
    let settings = &args.settings;
    if learner == TrainLearner::Svm || settings.kernel.kernel == KernelArg::Linear {
        if !args.gamma_grid.is_empty() {
            return Err(Usage(
                "--gamma-grid needs a kernel learner with a width (not svm, not --kernel linear)".into(),
            )
            .into());
        }
        return Ok(vec![None]);
    }
    let mut gammas = given_values("gamma", Setting::given(settings.kernel.gamma), &args.gamma_grid)?;
    if gammas.is_empty() {
        let kind = settings.kernel.build::<T>(1.0).context("kernel parameters")?.kind();
        let choice = gamma::by_alignment(data, kind, task, settings.seed, settings.budget).context("--gamma auto")?;
        gammas = octaves(choice.gamma, -3, 3);
    }
    Ok(gammas.into_iter().map(Some).collect())
}

/// rsvm, krr, lssvm: one leave-one-out path per width, on the rows of [`width_rows`];
/// returns the candidates and the number of rows they were scored on.
fn by_loo<T: Real>(
    args: &TuneArgs,
    learner: TrainLearner,
    data: &Dataset<T>,
    gammas: &[Option<f64>],
    (task, weights): (Task, Option<&LabelWeights>),
) -> Result<(Vec<Candidate>, usize)> {
    let settings = &args.settings;
    let rsvm = learner == TrainLearner::Rsvm;
    let ridges = match rsvm {
        true => given_values("c", Setting::given(settings.svm.c), &args.c_grid)?,
        false => given_values("lambda", Setting::given(settings.lambda), &args.lambda_grid)?,
    };
    // The SVM's C is the least-squares SVM's ridge λ = 1/(2C) (see rsvm::Tune).
    let ridges: Vec<f64> = if rsvm { ridges.iter().map(|c| 1.0 / (2.0 * c)).collect() } else { ridges };
    let gammas: Vec<f64> = gammas.iter().flatten().copied().collect();
    let kernel = settings.kernel.build::<T>(gammas.first().copied().unwrap_or(1.0)).context("kernel parameters")?;
    let config = kestrel_stream::batch::fit::krr_config(
        &settings.fit_settings(learner, data.class_names().names()).map_err(anyhow::Error::msg)?,
        kernel,
        task,
    );
    let (rows, scaled) = width_rows(data, settings.seed, &ridges)?;
    if rows.len() < data.len() {
        tell!(
            "kestrel: the widths are compared by leave-one-out on {} of the {} rows (a uniform subsample, as \
             --gamma auto's); the best model is trained on every row",
            rows.len(),
            data.len()
        );
    }
    let bar = progress_bar(gammas.len() as u64, "widths");
    let mut scores = widths_by_loo(&rows, &config, &gammas, &scaled, |_| bar.inc(1))?;
    // Octaves around the alignment's width (no width given): on past an edge that wins,
    // as --gamma auto goes.
    if args.gamma_grid.is_empty() && Setting::given(settings.kernel.gamma).is_none() {
        extend_past_edges(&rows, &config, &scaled, &mut scores, |_| {
            bar.inc_length(1);
            bar.inc(1);
        })?;
        scores.sort_by(|a, b| a.gamma.total_cmp(&b.gamma));
    }
    bar.finish_and_clear();
    // The weight of the rows scored, against which the weighted errors count.
    let total_weight = (0..rows.len()).map(|i| row_weight(&rows, i, weights)).sum::<f64>().max(f64::MIN_POSITIVE);
    // A ridge chosen on the subsample, as it stands for every row: the grid's own value, or
    // the automatic path's scaled back (`λ·n/n_s`, the same weight per row; by the share
    // of the rows' own weights with --weight-column).
    let to_all = data.total_weight() / rows.total_weight().max(f64::MIN_POSITIVE);
    let ridge_for_all = |lambda: f64| {
        let given = scaled.iter().position(|&s| s == lambda).and_then(|index| ridges.get(index));
        given.copied().unwrap_or(lambda * to_all)
    };
    let candidates = scores.iter().map(|score| {
        let WidthScore { gamma, summary, seconds } = score;
        let lambda = ridge_for_all(summary.chosen.lambda);
        let value = if rsvm { Searched::C(1.0 / (2.0 * lambda)) } else { Searched::Lambda(lambda) };
        let loss = match task {
            Task::Classification => summary.chosen.weighted_errors / total_weight,
            Task::Regression => summary.chosen.mse,
        };
        Candidate { gamma: Some(*gamma), value: Some(value), centres: Some(summary.centres), loss, seconds: *seconds }
    });
    Ok((candidates.collect(), rows.len()))
}

/// Any learner: every candidate trained on `k − 1` folds and scored on the last, `k` times.
fn by_folds<T: Real>(
    args: &TuneArgs,
    learner: TrainLearner,
    data: &Dataset<T>,
    gammas: &[Option<f64>],
    (task, weights): (Task, Option<&LabelWeights>),
) -> Result<Vec<Candidate>> {
    let settings = &args.settings;
    let values = values(args, learner)?;
    let folds = Folds::new(data, folds_of(args), settings.seed).context("--folds")?;
    let total = gammas.len() * values.len() * folds.count();
    let bar = progress_bar(total as u64, "fits");
    let mut candidates = Vec::with_capacity(gammas.len() * values.len());
    for &gamma in gammas {
        for &value in &values {
            let start = Instant::now();
            // Scored by their predictions: class probabilities are fitted for the best alone.
            let candidate = TrainSettings { probabilities: false, ..candidate_settings(settings, gamma, value) };
            let mut losses = 0.0;
            for fold in 0..folds.count() {
                let (train, held_out) = folds.split(data, fold);
                let (bytes, _) =
                    fit(&candidate, learner, &train, None).with_context(|| format!("fold {}", fold + 1))?;
                let mut model = model::load(&bytes)?;
                let weighed = weights.is_some() || held_out.row_weights().is_some();
                losses += match (task, weighed) {
                    (_, true) => weighted_loss(model.as_mut(), &held_out, (task, weights))?,
                    (Task::Classification, false) => 1.0 - score::on_dataset(model.as_mut(), &held_out)?.accuracy(),
                    (Task::Regression, false) => score::on_dataset(model.as_mut(), &held_out)?.mse(),
                };
                bar.inc(1);
            }
            let loss = losses / folds.count() as f64;
            let seconds = start.elapsed().as_secs_f64();
            candidates.push(Candidate { gamma, value, centres: None, loss, seconds });
        }
    }
    bar.finish_and_clear();
    Ok(candidates)
}

/// `held_out`'s rows' weights ([`row_weight`]) shared out by the model's errors: the
/// misclassified share of a classifier's, the mean squared error of a regressor's.
fn weighted_loss<T: Real>(
    model: &mut dyn model::Predictor,
    held_out: &Dataset<T>,
    (task, weights): (Task, Option<&LabelWeights>),
) -> Result<f64> {
    let (mut lost, mut total) = (0.0, 0.0);
    let mut record = kestrel_stream::source::Record::default();
    for i in 0..held_out.len() {
        if held_out.record(i, &mut record) {
            let (weight, prediction) = (row_weight(held_out, i, weights), model.predict(&record)?);
            total += weight;
            lost += weight
                * match task {
                    Task::Classification => f64::from(u8::from(labels::key(prediction) != labels::key(record.label))),
                    Task::Regression => (prediction - record.label).powi(2),
                };
        }
    }
    Ok(if total > 0.0 { lost / total } else { 0.0 })
}

/// The values of the learner's searched setting under cross-validation: its grid, the
/// learner's default grid, or `auto` alone (`None`: each fit chooses).
fn values(args: &TuneArgs, learner: TrainLearner) -> Result<Vec<Option<Searched>>> {
    let settings = &args.settings;
    let make: fn(f64) -> Searched = match learner {
        TrainLearner::Svm | TrainLearner::Rsvm | TrainLearner::Mrrsvm | TrainLearner::Ssvr => Searched::C,
        TrainLearner::Krr | TrainLearner::Lssvm => Searched::Lambda,
        TrainLearner::Slkl => Searched::Nu,
        // Refused by `tune_in`: nothing to search.
        TrainLearner::Novelty => return Ok(vec![None]),
        // The widths by cross-validation, each fit choosing its components.
        TrainLearner::Kpls => return Ok(vec![None]),
    };
    let (grid, fixed, default) = match learner {
        TrainLearner::Svm => (&args.c_grid, Setting::given(settings.svm.c), SVM_C_GRID.map(|k| 2f64.powi(k)).to_vec()),
        TrainLearner::Rsvm | TrainLearner::Mrrsvm | TrainLearner::Ssvr => {
            (&args.c_grid, Setting::given(settings.svm.c), Vec::new())
        }
        TrainLearner::Krr | TrainLearner::Lssvm => (&args.lambda_grid, Setting::given(settings.lambda), Vec::new()),
        TrainLearner::Slkl | TrainLearner::Novelty | TrainLearner::Kpls => {
            (&args.nu_grid, Setting::given(settings.nu), kestrel_stream::batch::fit::NU_GRID.to_vec())
        }
    };
    let mut values = given_values(make(0.0).name(), fixed, grid)?;
    if values.is_empty() {
        values = default;
    }
    if values.is_empty() {
        return Ok(vec![None]);
    }
    Ok(values.into_iter().map(|v| Some(make(v))).collect())
}

fn score_name(task: Task, criterion: &str) -> String {
    match task {
        Task::Classification => format!("{criterion} accuracy %"),
        Task::Regression => format!("{criterion} MSE"),
    }
}

/// The score a candidate's loss stands for: accuracy (a fraction) or mean squared error.
fn score_of(loss: f64, task: Task) -> f64 {
    match task {
        Task::Classification => 1.0 - loss,
        Task::Regression => loss,
    }
}

/// The candidates' table on standard output, the best one starred; the width and the
/// centres only where a candidate has them (not the linear SVM's).
fn print_table(candidates: &[Candidate], best: usize, task: Task, criterion: &str) -> std::io::Result<()> {
    let value_name = candidates.iter().find_map(|c| c.value.map(Searched::name)).unwrap_or("");
    let widths = candidates.iter().any(|c| c.gamma.is_some());
    let centred = candidates.iter().any(|c| c.centres.is_some());
    let row = |star: &str, gamma: String, value: String, centres: String, score: String, seconds: String| {
        let mut line = format!("{star:>1}");
        if widths {
            line.push_str(&format!(" {gamma:>12}"));
        }
        line.push_str(&format!(" {value:>12}"));
        if centred {
            line.push_str(&format!(" {centres:>8}"));
        }
        line + &format!(" {score:>22} {seconds:>9}")
    };
    let score = score_name(task, criterion);
    say!("{}", row("", "gamma".into(), value_name.into(), "centers".into(), score, "seconds".into()))?;
    for (index, c) in candidates.iter().enumerate() {
        let number = |v: Option<f64>| v.map_or("auto".to_string(), |v| format!("{v:.5e}"));
        say!(
            "{}",
            row(
                if index == best { "*" } else { "" },
                c.gamma.map_or("-".to_string(), |g| format!("{g:.5e}")),
                if value_name.is_empty() { "-".to_string() } else { number(c.value.map(Searched::value)) },
                c.centres.map_or("-".to_string(), |m| m.to_string()),
                format!("{:.4}", shown_score(c, task)),
                format!("{:.3}", c.seconds),
            )
        )?;
    }
    Ok(())
}

/// The `kestrel train` flags that reproduce a candidate.
fn flags(c: &Candidate) -> String {
    let mut flags = String::new();
    if let Some(gamma) = c.gamma {
        flags.push_str(&format!(" --gamma {gamma}"));
    }
    if let Some(value) = c.value {
        flags.push_str(&format!(" --{} {}", value.name(), value.value()));
    }
    flags
}

/// The score a candidate is drawn at: accuracy in % or mean squared error.
fn shown_score(c: &Candidate, task: Task) -> f64 {
    match task {
        Task::Classification => 100.0 * score_of(c.loss, task),
        Task::Regression => score_of(c.loss, task),
    }
}

/// A setting the report draws the score against: its name, and a candidate's value.
type SettingAxis<'a> = (&'a str, fn(&Candidate) -> Option<f64>);

/// The `--report` page: the score against each searched setting (every candidate a dot,
/// the best at each value a line, the choice marked) and the seconds per candidate;
/// `(scored, n)` the rows the candidates were scored on and the data set's.
fn report(
    args: &TuneArgs,
    learner: TrainLearner,
    candidates: &[Candidate],
    best: usize,
    task: Task,
    criterion: &str,
    (scored, n): (usize, usize),
) -> Result<Report> {
    let learner = learner.name();
    let mut page = Report::new("kestrel tune");
    page.fact("data", &args.settings.input.input).fact("learner", &learner).fact("criterion", criterion);
    if scored < n {
        page.fact(
            "rows scored",
            format!("{scored} of {n} (a uniform subsample; the best model is trained on every row)"),
        );
    }
    let chosen = candidates.get(best);
    if let Some(c) = chosen {
        page.fact("chosen", format!("kestrel train --learner {learner}{}", flags(c)));
        page.fact(
            "final figures",
            format!(
                "{} {}, {} candidates",
                score_name(task, criterion),
                number(shown_score(c, task)),
                candidates.len()
            ),
        );
    }
    let score_axis = score_name(task, criterion);
    let settings: [SettingAxis; 2] = [
        ("gamma", |c| c.gamma),
        (candidates.iter().find_map(|c| c.value.map(Searched::name)).unwrap_or(""), |c| c.value.map(Searched::value)),
    ];
    for (name, value_of) in settings {
        let at = |c: &Candidate| value_of(c).filter(|v| *v > 0.0).map(|v| (v.log10(), shown_score(c, task)));
        let dots: Vec<(f64, f64)> = candidates.iter().filter_map(at).collect();
        if dots.is_empty() {
            continue;
        }
        let mut profile: Vec<(f64, f64)> = Vec::new();
        for &(x, y) in &dots {
            let better = |old: f64| if task == Task::Classification { y > old } else { y < old };
            match profile.iter_mut().find(|(px, _)| *px == x) {
                Some(point) if better(point.1) => point.1 = y,
                Some(_) => {}
                None => profile.push((x, y)),
            }
        }
        profile.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut plot = Plot::new(&format!("log₁₀ {name}"), &score_axis).line("best at each value", profile, 0, false);
        plot.dots.push(Dots { name: "candidates".into(), points: dots, colour: pick(5) });
        plot.marks = chosen.and_then(at).map(|(x, _)| (format!("chosen {name}"), vec![x]));
        let caption = format!(
            "The {criterion} score of every candidate against its {name} (log scale); the line joins the best at each value, red marks the choice."
        );
        page.figure(&format!("Score against {name}"), &caption, plot.svg()?);
    }
    let names: Vec<String> = candidates.iter().map(|c| flags(c).trim().replace("--", "")).collect();
    let seconds: Vec<f64> = candidates.iter().map(|c| c.seconds).collect();
    let axes = Axes { x: "candidate".into(), y: "seconds per candidate (s)".into() };
    let caption = "Wall-clock seconds each candidate took to score (all its folds), the chosen one in orange.";
    page.figure("Time per candidate", caption, bars(&axes, &names, &seconds, Some(best))?);
    Ok(page)
}

fn candidate_json(c: &Candidate, task: Task) -> Value {
    let mut fields = serde_json::Map::new();
    fields.insert("gamma".into(), json!(c.gamma));
    if let Some(value) = c.value {
        fields.insert(value.name().into(), json!(value.value()));
    }
    fields.insert("centers".into(), json!(c.centres));
    let score = match task {
        Task::Classification => "accuracy",
        Task::Regression => "mse",
    };
    fields.insert(score.into(), json!(score_of(c.loss, task)));
    fields.insert("seconds".into(), json!(c.seconds));
    Value::Object(fields)
}
