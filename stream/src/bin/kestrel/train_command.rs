//! `kestrel train`: read a data set, fit the learner with the library's policy
//! ([`kestrel_stream::batch::fit`], which resolves the `auto` settings), write the model
//! file and say what was chosen. [`Prepared`] and [`fit()`] are shared with `kestrel tune`,
//! which trains its candidates with this very code.

use std::collections::HashMap;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kestrel_core::Real;
use kestrel_stream::batch::fit::{self, FitError, Searched};
use kestrel_stream::batch::krr::Task;
use kestrel_stream::batch::relevance::{self, Relevance};
use kestrel_stream::batch::scaling::{self, Compared, Skipped, Verdict};
use kestrel_stream::batch::{TrainError, check_budget};
use kestrel_stream::dataset::{BadRows, Dataset, HostScaler};
use kestrel_stream::model::{self, scalar_name};
use kestrel_stream::source::{Categorical, LabelColumn, ReadError, ReadErrorKind, number_formatting, one_hot};
use kestrel_stream::{class_names, file, labels, shell};
use serde_json::{Value, json};

use crate::Usage;
use crate::args::{ScalarArg, ScaleArg, TrainArgs, TrainLearner, TrainSettings};
use crate::commands::{
    SkipTeller, bad_rows_skipped, chosen_learner, distinct_labels, many_classes_note, many_labels_note, normal_number,
    read_dataset, spinner, tell_ignored, unscaled_note,
};
use indicatif::ProgressBar;

pub fn run(args: &TrainArgs) -> Result<()> {
    match args.settings.scalar {
        ScalarArg::F64 => train_in::<f64>(args),
        ScalarArg::F32 => train_in::<f32>(args),
    }
}

/// How `learner` reads a CSV label column: a classifier's may hold class names, a
/// regressor's target is a number; without `--learner`, names or numbers as the column
/// holds, and the learner is chosen from them ([`chosen_learner`]).
fn labels_for(learner: Option<TrainLearner>) -> LabelColumn {
    match learner.map(|learner| learner.fit().task()) {
        Some(Task::Regression) => LabelColumn::Numbers,
        Some(Task::Classification) | None => LabelColumn::Detect,
    }
}

/// The rows of `data` (read from `input`) labelled `normal`, a number or a class name, for
/// the novelty detector to learn from (`--normal-label`); how many are left out is told.
///
/// # Errors
/// A label that is not finite; no row of that label.
fn normal_rows<T: Real>(data: Dataset<T>, normal: &str, input: &str) -> Result<Dataset<T>> {
    // In a column of names every label is a name, numbers too.
    let names = data.class_names().names();
    let label = match names.is_empty() {
        true => normal_number(normal)?,
        false => names.iter().position(|name| name == normal).map(|k| k as f64),
    };
    let labels = data.labels();
    let kept = data.subset(|i| labels.get(i).copied() == label);
    if kept.is_empty() {
        let held: Vec<f64> = distinct_labels(labels).into_iter().filter(|label| !label.is_nan()).collect();
        let shown: Vec<String> =
            held.iter().take(8).map(|&label| class_names::shown(Some(data.class_names()), label)).collect();
        let held = match held.len() {
            0 => "and the rows have no labels".to_string(),
            n if n > shown.len() => format!("its labels: {}, … ({n} in all)", shown.join(", ")),
            _ => format!("its labels: {}", shown.join(", ")),
        };
        bail!("{input}: no row is labelled {normal} (--normal-label), {held}");
    }
    let left_out = data.len() - kept.len();
    tell!(
        "kestrel: the novelty detector learns from the {} rows labelled {normal}; {left_out} other rows left out",
        kept.len()
    );
    Ok(kept)
}

/// Whether reading a class column stopped, or skipped a row, at a name among its numbers.
fn names_among_numbers<T: Real>(read: &Result<Dataset<T>>, bad: &BadRows) -> bool {
    let stopped = read.as_ref().err().and_then(|error| error.downcast_ref::<ReadError>());
    stopped.into_iter().chain(bad.first()).any(|error| matches!(error.kind, ReadErrorKind::NameAmongNumbers(_)))
}

/// What reading a class column of numbers and names as names did: every label a class
/// name, as a data frame's column of mixed values is one of strings.
fn names_note<T: Real>(input: &str, data: &Dataset<T>) -> String {
    let names = data.class_names().names();
    let words: Vec<_> = names
        .iter()
        .filter(|name| name.trim().parse::<f64>().is_err())
        .take(3)
        .map(|name| format!("`{name}`"))
        .collect();
    format!(
        "{input}: the class column holds names among its numbers ({}): every label is read as a class name, {} \
         classes (a name that marks a missing label is a class too: leave its rows out)",
        words.join(", "),
        names.len()
    )
}

fn train_in<T: Real>(args: &TrainArgs) -> Result<()> {
    let start = Instant::now();
    let prepared = Prepared::<T>::read(&args.settings, args.weight_column.as_deref())?;
    let read_seconds = start.elapsed().as_secs_f64() - prepared.preparation_seconds();
    let (data, learner) = (&prepared.data, prepared.learner.name());
    let fitting = spinner(format!("kestrel: fitting {learner} to {} rows of {} features", data.len(), data.dim()));
    let fitted = fit(&args.settings, prepared.learner, &prepared.data, prepared.searched.as_ref());
    fitting.finish_and_clear();
    let (bytes, mut summary) = fitted?;
    // Asked of the model as fitted (on the rows as prepared), before the file's sections.
    let given_up = if args.json { None } else { prepared.given_up_note(&bytes, &args.settings)? };
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
                ("read_seconds".to_string(), json!(read_seconds)),
                ("model_bytes".to_string(), json!(bytes.len())),
                ("scalar".to_string(), json!(scalar_name::<T>())),
            ]);
            if let Some(relevance) = &prepared.relevance {
                fields.insert("relevance".to_string(), relevance_json(relevance));
            }
            fields.insert("standardised".to_string(), json!(prepared.standardised()));
            if let Some(verdict) = &prepared.scaling {
                fields.insert("scaling".to_string(), scaling_json(verdict));
            }
            if let Some(why) = &prepared.learner_chosen {
                fields.insert("learner_chosen".to_string(), json!(why));
            }
        }
        say!("{summary}")?;
    } else {
        tell!(
            "kestrel: trained on {} rows of {} features in {seconds:.3} s (reading {read_seconds:.3} s; {skipped} \
             skipped); model {} ({} bytes)",
            data.len(),
            data.dim(),
            args.out.display(),
            bytes.len()
        );
        let chosen = chosen_settings(&summary);
        if !chosen.is_empty() {
            tell!("kestrel: chosen {chosen}");
        }
        if let Some(relevance) = &prepared.relevance {
            tell!("kestrel: {}", relevance_line(relevance));
        }
        if let Some(verdict) = prepared.scaling.as_ref().filter(|v| told(v)) {
            tell!("kestrel: {}", scaling_line(verdict, prepared.learner.fit().task()));
        }
        for note in &prepared.notes {
            tell!("kestrel: note: {note}");
        }
        let unconverged = unconverged(&summary, prepared.standardised());
        for warning in unconverged.iter().chain(&given_up) {
            tell!("kestrel: warning: {warning}");
        }
    }
    Ok(())
}

/// What to say when the solver stopped at its limit before its stopping rule held (the
/// summary's `converged` is false), as LIBLINEAR warns of its iteration limit, with what
/// speeds the learner's solver up.
fn unconverged(summary: &Value, scaled: bool) -> Option<String> {
    if summary.get("converged").and_then(Value::as_bool) != Some(false) {
        return None;
    }
    let iterations = summary.get("iterations").or_else(|| summary.get("final_passes"));
    let limit = iterations.map_or(String::new(), |n| format!(" ({n} iterations)"));
    let learner = summary.get("learner").and_then(Value::as_str);
    let hint = match learner {
        Some("svm") if !scaled => "; features of very different ranges slow the solver down: --scale standardises them",
        Some("svm" | "rsvm" | "mrrsvm") => "; a larger C converges more slowly (--c), a larger --eps stops sooner",
        _ => "",
    };
    Some(format!(
        "training stopped at its limit{limit} before the solver's stopping rule held: the model may be less \
         accurate than it could be{hint}"
    ))
}

/// The relevance weights, their alignments and whether the model kept them, for the
/// terminal.
fn relevance_line(relevance: &Relevance) -> String {
    let aligned = &relevance.aligned;
    let weights: Vec<String> = aligned.weights.iter().map(|w| format!("{w:.3}")).collect();
    let verdict = if relevance.kept { "kept" } else { "not kept, the model only standardises" };
    let (alone, weighed) = relevance.loo;
    format!(
        "relevance weights {} (alignment {:.4}, one width {:.4}; {:.3} s); {verdict}: leave-one-out {weighed:.6} \
         against {alone:.6} unweighed",
        weights.join(" "),
        aligned.alignment,
        aligned.isotropic_alignment,
        relevance.seconds
    )
}

/// The relevance weights, their alignments and whether the model kept them, for `--json`.
pub fn relevance_json(relevance: &Relevance) -> Value {
    json!({
        "weights": relevance.aligned.weights,
        "alignment": relevance.aligned.alignment,
        "isotropic_alignment": relevance.aligned.isotropic_alignment,
        "kept": relevance.kept,
        "seconds": relevance.seconds,
        "loo": {"unweighed": relevance.loo.0, "weighed": relevance.loo.1},
    })
}

/// The training rows as the settings ask for them: read (bad rows skipped and reported
/// under `--on-error skip`), cut to `--window`, standardised as `--scale` says and weighed
/// under `--relevance`.
pub struct Prepared<T> {
    /// The rows to learn from.
    pub data: Dataset<T>,
    /// The learner: `--learner`'s, or the one chosen from the label column.
    pub learner: TrainLearner,
    /// Why the learner was chosen, when `--learner` was not given.
    pub learner_chosen: Option<String>,
    /// Rows skipped as bad.
    pub skipped: u64,
    /// The relevance weights `--relevance` chose.
    pub relevance: Option<Relevance>,
    /// What `--scale auto` decided (`None` under `--scale on` or `off`, or `--relevance`).
    pub scaling: Option<Verdict>,
    /// The width search `--scale auto` or `--relevance` scored the rows with, for their
    /// fit to take.
    pub searched: Option<Searched>,
    /// What the rows suggest to change: [`unscaled_note`] for rows neither standardised
    /// nor weighed (unless `--scale auto` compared them), [`many_labels_note`] for a
    /// classifier's labels.
    pub notes: Vec<String>,
    scaler: Option<HostScaler<T>>,
    /// The model has classes (the novelty detector's labels name none).
    classes: bool,
}

impl<T: Real> Prepared<T> {
    /// Reads `settings.input`, each row weighed by the CSV column `weight_column` when given,
    /// and chooses the learner from the label column when `--learner` is not given (said on
    /// standard error).
    pub fn read(settings: &TrainSettings, weight_column: Option<&str>) -> Result<Self> {
        if let (Some(learner), Some(_)) = (settings.learner, &settings.normal_label)
            && learner != TrainLearner::Novelty
        {
            let name = learner.name();
            bail!(Usage(format!(
                "--normal-label trains the novelty detector on the rows of that label; --learner {name} learns from every row"
            )));
        }
        let mut bad = BadRows::new();
        let labels = labels_for(settings.learner);
        let categorical = settings.categorical.categorical.as_slice();
        let columns = (weight_column, categorical);
        let mut read = read_dataset(&settings.input, labels, columns, &mut bad);
        if labels == LabelColumn::Detect && names_among_numbers(&read, &bad) {
            bad = BadRows::new();
            let named = read_dataset(&settings.input, LabelColumn::Names, columns, &mut bad)?;
            tell!("kestrel: note: {}", names_note(&settings.input.input, &named));
            read = Ok(named);
        }
        let mut data: Dataset<T> = read?;
        SkipTeller::default().tell_read(&bad);
        for note in identifier_notes(&data, categorical).into_iter().chain(formatted_labels_note(&data)) {
            tell!("kestrel: note: {note}");
        }
        let skipped = bad.count();
        if data.is_empty() {
            bail!("{}: no rows to train on{}", settings.input.input, bad_rows_skipped(skipped));
        }
        if let Some(normal) = settings.normal_label.as_deref() {
            data = normal_rows(data, normal, &settings.input.input)?;
        }
        if let Some(window) = settings.window {
            data = data.last(window);
        }
        let (learner, learner_chosen) = match (settings.learner, settings.normal_label.as_deref()) {
            (Some(learner), _) => (learner, None),
            (None, Some(normal)) => {
                let why = format!("--normal-label {normal}");
                tell!("kestrel: learner novelty: {why}");
                (TrainLearner::Novelty, Some(why))
            }
            (None, None) => {
                let (learner, why) = chosen_learner(&data);
                let another = if learner == TrainLearner::Novelty { "" } else { " (--learner chooses another)" };
                tell!("kestrel: learner {}: {why}{another}", learner.name());
                (learner, Some(why))
            }
        };
        tell_ignored(&learner.name(), &settings.ignored_flags(learner), &settings.kernel);
        if learner == TrainLearner::Novelty
            && settings.normal_label.is_none()
            && data.labels().iter().any(|label| !label.is_nan())
        {
            tell!(
                "kestrel: note: the novelty detector learns from every row: the label column is not read \
                 (--normal-label LABEL learns from the rows of that label alone; --label-column none makes every \
                 column a feature)"
            );
        }
        if learner.fit().task() == Task::Classification
            && learner != TrainLearner::Novelty
            && let Some(note) = many_classes_note(&data)
        {
            tell!("kestrel: note: {note}");
        }
        let preparing = match (settings.relevance, settings.scale) {
            (true, _) => spinner("kestrel: --relevance: weighing the features".into()),
            (false, ScaleArg::Auto) => {
                spinner("kestrel: --scale auto: the features as they come or standardised".into())
            }
            (false, _) => ProgressBar::hidden(),
        };
        let scaled = Scaled::new(data, settings, learner);
        preparing.finish_and_clear();
        let Scaled { data, scaler, relevance, scaling, searched } = scaled?;
        let classes = learner != TrainLearner::Novelty;
        // A comparison's verdict stands for the note's rule of thumb.
        let compared = matches!(scaling, Some(Verdict::Compared(_)));
        let unscaled = if scaler.is_none() && !compared { unscaled_note(&data) } else { None };
        let classifier = learner.fit().task() == Task::Classification && classes;
        let labels = if classifier { many_labels_note(&data) } else { None };
        let notes = unscaled.into_iter().chain(labels).collect();
        Ok(Prepared { data, learner, learner_chosen, skipped, relevance, scaling, searched, notes, scaler, classes })
    }

    /// Seconds the choices of `--relevance` and `--scale auto` took (the rest of
    /// [`Prepared::read`] is reading).
    pub fn preparation_seconds(&self) -> f64 {
        let scaling = match &self.scaling {
            Some(Verdict::Compared(compared)) => compared.seconds,
            _ => 0.0,
        };
        self.relevance.as_ref().map_or(0.0, |r| r.seconds) + scaling
    }

    /// Whether the model standardises its inputs (`--scale`, `--relevance`, or `auto`'s
    /// choice).
    pub fn standardised(&self) -> bool {
        self.scaler.is_some()
    }

    /// The flag that prepares the rows as these were: for a command that trains with
    /// settings `auto` may not compare under (`tune`'s best model).
    pub fn preparation_flag(&self, settings: &TrainSettings) -> &'static str {
        match (settings.relevance, self.standardised(), settings.scale, &self.scaling) {
            (true, ..) => " --relevance",
            (false, true, ..) => " --scale",
            (false, false, ScaleArg::Off, _) | (false, false, _, Some(Verdict::Compared(_))) => " --scale off",
            _ => "",
        }
    }

    /// A warning when the classifier `bytes` (a model [`fit()`] on these rows) predicts
    /// none of a class's own rows as that class ([`Prepared::given_up`]), naming the flag
    /// that helps.
    ///
    /// # Errors
    /// As [`Prepared::given_up`].
    pub fn given_up_note(&self, bytes: &[u8], settings: &TrainSettings) -> Result<Option<String>> {
        let missed = self.given_up(bytes)?;
        if missed.is_empty() {
            return Ok(None);
        }
        let names = Some(self.data.class_names());
        let shown: Vec<String> = missed
            .iter()
            .take(SHOWN_CLASSES)
            .map(|&(label, count)| format!("`{}` ({})", class_names::shown(names, label), rows_phrase(count)))
            .collect();
        let shown = match missed.len() > SHOWN_CLASSES {
            true => format!("{} classes as their class, among them {}", missed.len(), shown.join(", ")),
            false => format!("{} as their class", shown.join(", ")),
        };
        let weighable = matches!(self.learner, TrainLearner::Svm | TrainLearner::Rsvm | TrainLearner::Lssvm);
        let hint = match (weighable, settings.class_weight.is_empty()) {
            (true, true) => ": a rare class? --class-weight balanced weighs every class as much in all",
            _ => "",
        };
        Ok(Some(format!("the model predicts none of the training rows of {shown}{hint}")))
    }

    /// The classes (label, rows) none of whose rows the classifier `bytes` predicts as
    /// them: a rare class given up for the frequent ones, as the leave-one-out error
    /// chooses under `auto` (fewest errors: all frequent). A class's rows are predicted
    /// until one is right, so the cost is that of the rows of the classes given up (and a
    /// few more). Empty for a model without classes.
    ///
    /// # Errors
    /// The model's own, for a row it cannot take (none: it was fitted on them).
    fn given_up(&self, bytes: &[u8]) -> Result<Vec<(f64, usize)>> {
        let mut model = model::load(bytes)?;
        if !self.classes || !model.is_classifier() {
            return Ok(Vec::new());
        }
        // Each class's rows, and whether one of them was predicted as it.
        let mut classes = HashMap::<u64, (f64, usize, bool)>::new();
        let mut record = kestrel_stream::source::Record::default();
        for (i, &label) in self.data.labels().iter().enumerate() {
            let (_, rows, found) = classes.entry(labels::key(label)).or_insert((label, 0, false));
            *rows += 1;
            if !*found && self.data.record(i, &mut record) {
                *found = labels::key(model.predict(&record)?) == labels::key(label);
            }
        }
        let mut missed: Vec<(f64, usize)> =
            classes.into_values().filter(|&(_, _, found)| !found).map(|(label, rows, _)| (label, rows)).collect();
        missed.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(missed)
    }

    /// The model file of `bytes` (a model [`fit()`] on these rows): with the scaler's
    /// statistics, the class names when the rows had them (and the model has classes), and
    /// the features' names when a header gave them (predicting reads rows by them).
    pub fn model_file(&self, mut bytes: Vec<u8>) -> Result<Vec<u8>> {
        if let Some(scaler) = &self.scaler {
            bytes = model::with_scaler(bytes, scaler.section())?;
        }
        if self.classes && !self.data.class_names().is_empty() {
            bytes = model::with_class_names(bytes, self.data.class_names())?;
        }
        let features = self.data.feature_names();
        if !features.is_empty() && features.len() == self.data.dim() {
            bytes = model::with_feature_names(bytes, features)?;
        }
        Ok(bytes)
    }
}

/// The rows as `--scale` and `--relevance` prepare them, and what decided it.
struct Scaled<T> {
    data: Dataset<T>,
    scaler: Option<HostScaler<T>>,
    relevance: Option<Relevance>,
    scaling: Option<Verdict>,
    searched: Option<Searched>,
}

impl<T: Real> Scaled<T> {
    /// `data` standardised under `--scale`, as `--scale auto` decides, or weighed under
    /// `--relevance`.
    fn new(data: Dataset<T>, settings: &TrainSettings, learner: TrainLearner) -> Result<Self> {
        let fit_settings = || settings.fit_settings(learner, data.class_names().names()).map_err(anyhow::Error::msg);
        let as_given = |data| Scaled { data, scaler: None, relevance: None, scaling: None, searched: None };
        Ok(match (settings.relevance, settings.scale) {
            (true, ScaleArg::Off) => {
                bail!(Usage("--relevance weighs the standardised features: it does not go with --scale off".into()))
            }
            (true, _) => {
                let fit_settings = fit_settings()?;
                relevance::check_applies(fit_settings.learner, fit_settings.kernel.kind)
                    .map_err(|e| Usage(format!("--{e}")))?;
                let weighed = relevance::weighed_if_better(&data, &fit_settings).context("--relevance")?;
                let (relevance, searched) = (Some(weighed.relevance), weighed.searched);
                Scaled { scaler: Some(weighed.scaler), relevance, searched, ..as_given(weighed.rows) }
            }
            (false, ScaleArg::On) => {
                let (scaled, scaler) = standardized_within(&data, settings, learner)?;
                Scaled { scaler: Some(scaler), ..as_given(scaled) }
            }
            (false, ScaleArg::Auto) => {
                let decided = scaling::standardized_if_better(&data, &fit_settings()?).context("--scale auto")?;
                let (scaling, searched) = (Some(decided.verdict), decided.searched);
                match decided.standardised {
                    Some((scaled, scaler)) => Scaled { scaler: Some(scaler), scaling, searched, ..as_given(scaled) },
                    None => Scaled { scaling, searched, ..as_given(data) },
                }
            }
            (false, ScaleArg::Off) => as_given(data),
        })
    }
}

/// `data` standardised under `--scale` (on): the rows and their standardised copy are held
/// at once, and the copy alone then goes on to the fit, whose bytes count here too so that
/// one error names the budget of both.
fn standardized_within<T: Real>(
    data: &Dataset<T>,
    settings: &TrainSettings,
    learner: TrainLearner,
) -> Result<(Dataset<T>, HostScaler<T>)> {
    let copy = data.standardized_bytes();
    let copies = data.bytes().saturating_add(copy);
    if settings.budget.is_some() {
        let fit_settings = settings.fit_settings(learner, data.class_names().names()).map_err(anyhow::Error::msg)?;
        let fitting = fit::needed_bytes(&fit_settings, data, copy)?.unwrap_or(0);
        check_budget(copies.max(fitting), settings.budget).context("--scale")?;
    }
    data.standardized().context("--scale")
}

/// What `--scale auto` decided, for the terminal (when [`told`]): the two leave-one-out
/// scores, or why it did not compare.
pub fn scaling_line(verdict: &Verdict, task: Task) -> String {
    match verdict {
        Verdict::Compared(Compared { loo: (raw, scaled), standardised, seconds }) => {
            let (chosen, other, what, against) = match standardised {
                true => (scaled, raw, "standardised the features", "as they come"),
                false => (raw, scaled, "took the features as they come", "standardised"),
            };
            let scores = match task {
                Task::Classification => format!("errors {chosen} against {other}"),
                Task::Regression => format!("mean squared error {chosen:.4e} against {other:.4e}"),
            };
            format!("--scale auto {what}: leave-one-out {scores} {against} ({seconds:.3} s)")
        }
        Verdict::ByRule => {
            "--scale auto standardised the features, as it does for the linear SVM and the novelty detector (--scale \
             off keeps them as they come)"
                .into()
        }
        Verdict::Skipped(skipped) => format!("--scale auto took the features as they come: {}", skipped.reason()),
    }
}

/// Whether the terminal hears of `verdict`: all but rows standardised already and too few
/// to compare.
pub fn told(verdict: &Verdict) -> bool {
    !matches!(verdict, Verdict::Skipped(Skipped::Standard | Skipped::TooFewRows))
}

/// What `--scale auto` decided, for `--json`.
pub fn scaling_json(verdict: &Verdict) -> Value {
    match verdict {
        Verdict::Compared(Compared { loo: (raw, scaled), standardised, seconds }) => json!({
            "standardised": standardised,
            "loo": {"as_given": raw, "standardised": scaled},
            "seconds": seconds,
        }),
        Verdict::ByRule => json!({"standardised": true, "by_rule": true}),
        Verdict::Skipped(skipped) => json!({"standardised": false, "not_compared": skipped.reason()}),
    }
}

/// What to tell, before the fit, of each column of `categorical` whose categories are more
/// than half the rows' number (and more than [`MANY_CATEGORIES`]): most rows then have a
/// category of their own, a feature each, as an identifier or a time stamp would; the
/// kernels' cost grows with the features.
fn identifier_notes<T: Real>(data: &Dataset<T>, categorical: &[Categorical]) -> Vec<String> {
    let mut notes = Vec::new();
    for Categorical { column, .. } in categorical {
        let prefix = format!("{column}{}", one_hot::SEPARATOR);
        let categories = data.feature_names().iter().filter(|name| name.starts_with(&prefix)).count();
        if categories > MANY_CATEGORIES && categories * 2 > data.len() {
            let word = shell::word(column);
            notes.push(format!(
                "column `{column}` holds {categories} categories in {} rows, a feature each: an identifier or a \
                 time stamp is better left out (--skip-column {word})",
                data.len()
            ));
        }
    }
    notes
}

/// What to tell when every class name is a number a spreadsheet formatted (`274,067`,
/// `$12`, [`number_formatting`]): a target of numbers, read as that many classes.
fn formatted_labels_note<T: Real>(data: &Dataset<T>) -> Option<String> {
    let names = data.class_names().names();
    let first = names.first()?;
    let what = number_formatting(first).filter(|_| names.iter().all(|name| number_formatting(name).is_some()))?;
    Some(format!(
        "the labels are read as {} class names, and `{first}` is a number written with {what}: a target of numbers \
         is written as digits alone, as a spreadsheet exports its cells of the General format",
        names.len()
    ))
}

/// The categories of a column beyond which [`identifier_notes`] may tell of it.
const MANY_CATEGORIES: usize = 100;

/// `"1 row"`, `"3 rows"`.
fn rows_phrase(count: usize) -> String {
    if count == 1 { "1 row".into() } else { format!("{count} rows") }
}

/// The classes [`Prepared::given_up_note`] names; the others are counted.
const SHOWN_CLASSES: usize = 5;

/// Fits `learner` with `settings` on `data` ([`fit::fit`]), taking the width search
/// `searched` ran on these rows instead of searching again ([`Prepared::searched`]): the
/// model's bytes (without scaler or class names, see [`Prepared::model_file`]) and the
/// summary as JSON, with what `auto` chose under `chosen`. Flags that do not go together
/// are a [`Usage`] error (exit 2).
pub fn fit<T: Real>(
    settings: &TrainSettings,
    learner: TrainLearner,
    data: &Dataset<T>,
    searched: Option<&Searched>,
) -> Result<(Vec<u8>, Value)> {
    let mut fit_settings = settings.fit_settings(learner, data.class_names().names()).map_err(anyhow::Error::msg)?;
    fit_settings.searched = searched.cloned();
    let fitted = fit::fit(&fit_settings, data).map_err(|error| match error {
        FitError::Conflict(message) => anyhow::Error::from(Usage(message)),
        // The rows are finite (read so): what overflowed is the fit's arithmetic on them.
        FitError::Train(TrainError::Core(kestrel_core::Error::NonFinite)) => {
            let largest = data.csr().2.iter().map(|v| v.to_f64().abs()).fold(0.0, f64::max);
            anyhow::anyhow!(
                "the {} fit met a value too large for {} arithmetic (the features reach {largest:e}): rescale them",
                learner.name(),
                scalar_name::<T>()
            )
        }
        error => error.into(),
    })?;
    Ok((fitted.bytes, serde_json::to_value(&fitted.summary)?))
}

/// The settings `auto` chose, as `name = value` pairs for the terminal.
fn chosen_settings(summary: &Value) -> String {
    let Some(chosen) = summary.get("chosen").and_then(Value::as_object) else { return String::new() };
    chosen.iter().map(|(name, value)| format!("{name} = {value}")).collect::<Vec<_>>().join(", ")
}
