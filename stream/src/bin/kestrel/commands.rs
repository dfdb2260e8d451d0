//! `kestrel predict` and `eval`, and the input and the terminal output the commands
//! share.

use std::collections::HashSet;
use std::io::{self, BufWriter, IsTerminal, Write};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kestrel_core::Real;
use kestrel_stream::class_names::{self, ClassNames};
use kestrel_stream::dataset::{self, BadRows, Dataset, HostScaler, OnError};
use kestrel_stream::detection::Detections;
use kestrel_stream::file::OutputFile;
use kestrel_stream::model::{self, Predictor};
use kestrel_stream::score::{ClassRecall, LogLoss, Tally};
use kestrel_stream::shell;
use kestrel_stream::source::{self, Categorical, Format, LabelColumn, Record, RecordReader};
use serde_json::{Map, Value, json};

use crate::Usage;
use crate::args::{
    CategoricalArgs, ColumnArgs, DetectionArgs, EvalArgs, FormatArg, InputArgs, KernelArgs, Learner, OnErrorArg,
    PredictArgs, TrainLearner, output_path,
};
use crate::report::Report;
use crate::report::eval::EvalFigures;
use crate::stream_setup::value_name;

/// Opens `kestrel stream`'s input the flags name: a CSV label column read as `labels`
/// says, a row whose label is missing read with the label `NaN` (to predict, not learn),
/// the CSV columns `categorical` one-hot encoded (`kestrel stream --categorical`) and the
/// columns `kept` kept as text in each record (`--keep-column`).
pub fn open_stream(
    input: &InputArgs,
    labels: LabelColumn,
    (categorical, kept): (&[Categorical], &[String]),
) -> Result<Box<dyn RecordReader + Send>> {
    let read = options_with(input, labels, (None, categorical));
    let options = source::Options { unlabelled_rows: true, keep_columns: kept.to_vec(), ..read };
    open(&input.input, &options)
}

/// Opens the input at `path` as `options` say, telling what its header calls for
/// ([`RecordReader::header_note`]).
pub fn open(path: &str, options: &source::Options) -> Result<Box<dyn RecordReader + Send>> {
    let reader = source::open(path, options)?;
    if let Some(note) = reader.header_note() {
        tell!("kestrel: note: {}: {note}", reader.name());
    }
    Ok(reader)
}

/// The reader options the flags give.
fn options(input: &InputArgs, labels: LabelColumn) -> source::Options {
    let format = match input.format {
        FormatArg::Auto => Format::Auto,
        FormatArg::Csv => Format::Csv,
        FormatArg::Libsvm => Format::LibSvm,
    };
    source::Options { format, max_line_bytes: input.max_line_bytes, labels, ..column_options(&input.columns) }
}

/// [`options`], with the rows' weights read from the CSV column `weight_column` and the
/// CSV columns `categorical` one-hot encoded.
fn options_with(
    input: &InputArgs,
    labels: LabelColumn,
    (weight_column, categorical): (Option<&str>, &[Categorical]),
) -> source::Options {
    let weight_column = weight_column.map(str::to_string);
    source::Options { weight_column, categorical: categorical.to_vec(), ..options(input, labels) }
}

/// What to say when the features' scales differ so widely that a few of them set every
/// distance: the participation ratio of their variances `vⱼ`, `(Σvⱼ)²/Σvⱼ²` (the number
/// of features of equal variance that would spread as much), is under 40 % of the features
/// that vary, or under 1.1 where that is more (two features: one with over 20 times the
/// other's variance).
/// Measured on the shared data's raw files: wine 1.0 of 13 features (proline's
/// variance is 10⁵), breast cancer 1.7 of 30, where `--scale` raises rsvm's test accuracy
/// from 80.0 to 97.8 % and from 93.7 to 95.8 %; digits' pixels 39 of 60, iris 2.0 of 4 and
/// heart 8.3 of 13, where it does not help, get no note.
pub fn unscaled_note<T: Real>(data: &Dataset<T>) -> Option<String> {
    let variances: Vec<f64> = data.feature_variances()?.into_iter().filter(|&v| v > 0.0).collect();
    let (sum, squares) = variances.iter().fold((0.0, 0.0), |(sum, squares), v| (sum + v, squares + v * v));
    let effective = sum * sum / squares;
    let varying = variances.len();
    (varying >= 2 && effective < (0.4 * varying as f64).max(1.1)).then(|| {
        let (low, high) = variances.iter().fold((f64::MAX, 0.0_f64), |(low, high), &v| (low.min(v), high.max(v)));
        format!(
            "the features' scales differ widely (variances from {low:.3e} to {high:.3e}): about {effective:.1} of \
             the {varying} features that vary set the distances; --scale standardises them"
        )
    })
}

/// Distinct labels above which a numeric label column is taken for a target to regress,
/// when they are also more than a fifth of the rows or are not the class codes `0 … k−1`
/// or `1 … k`.
const MANY_LABELS: usize = 20;

/// How the label column of numbers reads as a regression target, if it does: a label that
/// is not a whole number; more than two distinct values that are also more than half the
/// rows (as classes, most would have a single row, which leave-one-out never predicts: the
/// small sets of counts and measurements); or more than [`MANY_LABELS`] distinct values that
/// are also more than a fifth of the rows or are not class codes. Class codes are every
/// whole number from 0 or from 1 up to the largest, as LibSVM's many-class sets number
/// their classes (letter's 26, sector's 105); ages, counts and readings are not (R's
/// `faithful` waiting times: 51 values from 43 to 96 in 272 rows; `quakes`' stations: 102
/// from 10 to 132 in 1,000 rows). `None` for class names and for rows without labels (`--label-column none`: every
/// label `NaN`).
pub fn numeric_target<T: Real>(data: &Dataset<T>) -> Option<String> {
    let labels = data.labels();
    if !data.class_names().is_empty() || labels.iter().all(|label| label.is_nan()) {
        return None;
    }
    let values = distinct_labels(labels);
    let (distinct, n) = (values.len(), data.len());
    let (first, last) = (values.first().copied().unwrap_or(0.0), values.last().copied().unwrap_or(0.0));
    let codes = (first == 0.0 || first == 1.0) && last == first + (distinct - 1) as f64;
    let most_rows = (distinct > 2 && distinct * 2 > n) || (distinct > MANY_LABELS && distinct * 5 > n);
    match labels.iter().find(|label| label.fract() != 0.0) {
        Some(fraction) => Some(format!("{distinct} distinct numbers in {n} rows, not all whole ({fraction})")),
        None if most_rows => Some(format!("{distinct} distinct numbers in {n} rows")),
        None if distinct > MANY_LABELS && !codes => {
            Some(format!("{distinct} distinct numbers in {n} rows from {first} to {last}, not class codes 0 or 1 to k"))
        }
        None => None,
    }
}

/// A note when a classifier is to learn from a label column that reads as a regression
/// target ([`numeric_target`]).
pub fn many_labels_note<T: Real>(data: &Dataset<T>) -> Option<String> {
    numeric_target(data).map(|target| {
        format!(
            "the label column holds {target}: a classifier takes each as a class; a numeric target is a \
             regressor's (--learner krr, slkl, ssvr or kpls)"
        )
    })
}

/// Classes beyond which [`many_classes_note`] tells of their cost.
const MANY_CLASSES: usize = 100;

/// A note, before a classifier's fit, when the label column holds more than
/// [`MANY_CLASSES`] classes: one-vs-rest fits a problem per class, so the fit takes about
/// that many times a binary one's (R's Bundesliga results with their `Date` last: 3,395
/// classes in 14,018 rows, minutes of work before anything is said).
pub fn many_classes_note<T: Real>(data: &Dataset<T>) -> Option<String> {
    let classes = distinct_labels(data.labels()).len();
    (classes > MANY_CLASSES).then(|| {
        format!(
            "the label column holds {classes} classes in {} rows: one-vs-rest fits a problem per class, {classes} \
             here (--label-column chooses another column)",
            data.len()
        )
    })
}

/// The learner `kestrel train` and `tune` take without `--learner`, and why: the novelty
/// detector for rows without labels, kernel ridge regression (krr) for a numeric target
/// ([`numeric_target`]), the reduced-kernel SVM (rsvm) for classes.
pub fn chosen_learner<T: Real>(data: &Dataset<T>) -> (TrainLearner, String) {
    if data.labels().iter().all(|label| label.is_nan()) {
        return (TrainLearner::Novelty, "the rows have no labels".into());
    }
    if let Some(target) = numeric_target(data) {
        return (TrainLearner::Krr, format!("the label column holds a numeric target, {target}"));
    }
    let classes = match distinct_labels(data.labels()).len() {
        1 => "1 class".to_string(),
        k => format!("{k} classes"),
    };
    (TrainLearner::Rsvm, format!("the label column holds {classes}"))
}

/// The distinct values `labels` holds, in increasing order.
pub fn distinct_labels(labels: &[f64]) -> Vec<f64> {
    let mut distinct = labels.to_vec();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    distinct
}

/// `"13 features"`, or `"13 features, standardised"` under `--scale`: the data line of a
/// summary and a report.
pub fn features_phrase(dim: usize, scaled: bool) -> String {
    if scaled { format!("{dim} features, standardised") } else { format!("{dim} features") }
}

/// The rows of `data` as a dense row-major matrix for the commands that cluster them:
/// standardised in place under `--scale` (the copy exists anyway, so only the scaler's
/// `3·d` scalars are added); without it, [`unscaled_note`] on standard error when the
/// features' scales differ widely.
pub fn points<T: Real>(data: &Dataset<T>, scale: bool) -> Result<Vec<T>> {
    Ok(scaled_points(data, scale)?.0)
}

/// [`points`], and under `--scale` the scaler that standardised them (for a model file to
/// keep).
pub fn scaled_points<T: Real>(data: &Dataset<T>, scale: bool) -> Result<(Vec<T>, Option<HostScaler<T>>)> {
    let mut points = data.dense(data.dim())?;
    let scaler = match scale {
        true => Some(dataset::standardize_rows(&mut points, data.dim(), data.indicators()).context("--scale")?),
        false => {
            if let Some(note) = unscaled_note(data) {
                tell!("kestrel: note: {note}");
            }
            None
        }
    };
    Ok((points, scaler))
}

/// The reader options of `--label-column` and `--skip-column`, the others at their
/// defaults (the commands that read a whole data set without the input's other flags).
pub fn column_options(columns: &ColumnArgs) -> source::Options {
    let (label_column, skip_columns) = (columns.label_column.clone(), columns.skip_columns.clone());
    source::Options { label_column, skip_columns, ..source::Options::default() }
}

/// [`column_options`] with the CSV columns `categorical` one-hot encoded (`cluster`,
/// `npkl`: the features a row's categories give join its distances).
pub fn category_options(columns: &ColumnArgs, categorical: &CategoricalArgs) -> source::Options {
    source::Options { categorical: categorical.categorical.clone(), ..column_options(columns) }
}

/// Every row of the input the flags name, each weighed by the CSV column `weight_column`
/// when given (`train --weight-column`), the CSV columns `categorical` one-hot encoded
/// (`train --categorical`), bad rows as `--on-error` says (counted in `bad`):
/// [`read_path`].
pub fn read_dataset<T: Real>(
    input: &InputArgs,
    labels: LabelColumn,
    (weight_column, categorical): (Option<&str>, &[Categorical]),
    bad: &mut BadRows,
) -> Result<Dataset<T>> {
    read_path(&input.input, &options_with(input, labels, (weight_column, categorical)), on_error(input), bad)
}

/// Every row of the data set at `path` read as `options` says, bad rows per `on_error`
/// (counted in `bad`): a LibSVM file of [`source::split::PARALLEL_READ_BYTES`] or more is
/// read in parts on every core ([`Dataset::read_parts`]), anything else by one reader.
pub fn read_path<T: Real>(
    path: &str,
    options: &source::Options,
    on_error: OnError,
    bad: &mut BadRows,
) -> Result<Dataset<T>> {
    let threads = kestrel_stream::batch::mrrsvm::threads();
    let parts =
        source::split::libsvm_file_parts(path, options, threads).with_context(|| format!("cannot read {path}"))?;
    if let Some(parts) = parts {
        return Ok(Dataset::read_parts(parts, on_error, bad)?);
    }
    // The error names the file already.
    let mut reader = open(path, options)?;
    Ok(Dataset::read(reader.as_mut(), on_error, bad)?)
}

/// Every row of the data set at `path`, its columns as `options` say; a bad row is the
/// error ([`read_path`] for the commands without `--on-error`: transform, cluster, npkl).
pub fn read_strict<T: Real>(path: &str, options: &source::Options) -> Result<Dataset<T>> {
    read_path(path, options, OnError::Stop, &mut BadRows::new())
}

/// `" (1 bad row skipped)"`, `" (3 bad rows skipped)"`, or nothing for none: the end of
/// the error that no row was left to train on or to score.
pub fn bad_rows_skipped(skipped: u64) -> String {
    match skipped {
        0 => String::new(),
        1 => " (1 bad row skipped)".into(),
        n => format!(" ({n} bad rows skipped)"),
    }
}

/// Every row of the data set at `path`, its columns as `options` say and its features
/// read by the names `features` (a model's, [`read_by_name`]: in any order, its columns of
/// categories one-hot encoded as the model's); a bad row is the error (`transform --apply`).
pub fn read_strict_by_name<T: Real>(path: &str, options: &source::Options, features: &[String]) -> Result<Dataset<T>> {
    let mut reader = open(path, options)?;
    read_by_name(reader.as_mut(), features)?;
    Ok(Dataset::read(reader.as_mut(), OnError::Stop, &mut BadRows::new())?)
}

/// Bad rows skipped under `--on-error skip`, told as they come: each of the first
/// [`BadRows::KEPT`] in full, then their number at every power of ten, so that an input
/// of bad rows neither floods the terminal nor goes unseen.
#[derive(Debug, Default)]
pub struct SkipTeller {
    count: u64,
}

impl SkipTeller {
    /// Counts one bad row; the line to tell of it, if any.
    pub fn skipped(&mut self, row: impl std::fmt::Display) -> Option<String> {
        self.count = self.count.saturating_add(1);
        let kept = BadRows::KEPT as u64;
        if self.count <= kept {
            Some(format!("kestrel: skipped {row}"))
        } else if self.count.checked_ilog10().is_some_and(|e| 10u64.pow(e) == self.count) {
            Some(format!("kestrel: {} bad rows skipped so far (each of the first {kept} told)", self.count))
        } else {
            None
        }
    }

    /// Tells the bad rows a read counted ([`BadRows`]): its kept rows, then their number
    /// when there were more.
    pub fn tell_read(&mut self, bad: &BadRows) {
        for row in bad.first() {
            if let Some(line) = self.skipped(row) {
                tell!("{line}");
            }
        }
        self.count = bad.count();
        self.tell_total();
    }

    /// Tells the number of bad rows skipped when some went untold.
    pub fn tell_total(&self) {
        if self.count > BadRows::KEPT as u64 {
            tell!("kestrel: skipped {} bad rows in all (each of the first {} told)", self.count, BadRows::KEPT);
        }
    }

    /// Bad rows counted.
    pub fn count(&self) -> u64 {
        self.count
    }
}

/// How `learner` reads a CSV label column: a classifier's may hold class names, a
/// regressor's target is a number.
pub fn labels_for(learner: Learner) -> LabelColumn {
    match learner {
        Learner::Slkl => LabelColumn::Numbers,
        Learner::Svm | Learner::Rsvm | Learner::Novelty => LabelColumn::Detect,
    }
}

pub fn on_error(input: &InputArgs) -> OnError {
    match input.on_error {
        OnErrorArg::Skip => OnError::Skip,
        OnErrorArg::Stop => OnError::Stop,
    }
}

/// How rows for `model` have their labels read: a classifier of named classes gives each
/// name the model's label for it (a label past the model's for a name it does not know); a
/// detector reads them as a stream does (numbers, or names numbered in order of
/// appearance after `detector_names`); other models read numbers.
fn labels_of(model: &dyn Predictor, detector_names: ClassNames) -> (Option<ClassNames>, LabelColumn) {
    match model.class_names() {
        Some(names) => (Some(names.clone()), LabelColumn::Names),
        None if model.info().task == "detector" => (Some(detector_names), LabelColumn::Detect),
        None => (None, LabelColumn::Numbers),
    }
}

/// What a novelty detector's run scores its flags with (`--normal-label`) and the class
/// names its labels start from: a normal label that is not a number is a class name,
/// given the label 0 before any row is read.
///
/// # Errors
/// A normal label that is not finite.
pub fn detections_for(args: &DetectionArgs) -> Result<(Detections, ClassNames)> {
    let Some(label) = args.normal_label.as_deref() else { return Ok((Detections::default(), ClassNames::new())) };
    Ok(match normal_number(label)? {
        Some(number) => (Detections::new(number), ClassNames::new()),
        None => (Detections::default(), ClassNames::from_names([label.to_string()])),
    })
}

/// The number `--normal-label` gives, `None` for a class name.
///
/// # Errors
/// A number that is not finite.
pub fn normal_number(label: &str) -> Result<Option<f64>> {
    match label.trim().parse::<f64>() {
        Ok(number) if number.is_finite() => Ok(Some(number)),
        Ok(_) => bail!(Usage(format!("--normal-label {label}: a label is a finite number or a class name"))),
        Err(_) => Ok(None),
    }
}

/// Tells of the flags `ignored` (given, but the learner `name` takes no part of them), and
/// of the polynomial's flags given with another kernel.
pub fn tell_ignored(name: &str, ignored: &[&str], kernel: &KernelArgs) {
    if !ignored.is_empty() {
        tell!("kestrel: warning: --learner {name} takes no {}: ignored", ignored.join(", "));
    }
    let kernel_taken = !ignored.contains(&"--kernel/--gamma");
    if let Some(flags) = kernel.ignored_by_kernel().filter(|_| kernel_taken) {
        tell!("kestrel: warning: --kernel {} takes no {flags}: ignored", value_name(&kernel.kernel));
    }
}

/// Warns when most labelled rows counted as anomalies ([`Detections::mostly_anomalies`]):
/// the labels likely mark normal rows otherwise.
pub fn tell_if_mostly_anomalies(detections: &Detections, args: &DetectionArgs) {
    if detections.mostly_anomalies() {
        let normal = args.normal_label.as_deref().unwrap_or("0");
        tell!(
            "kestrel: warning: {} of {} labelled rows count as anomalies (every label but {normal}); if normal rows \
             carry another label, give it with --normal-label (1 for scikit-learn's and LIBSVM's one-class labels)",
            detections.anomalies,
            detections.labelled
        );
    }
}

/// The model's classes for a message: their names, or their labels.
fn class_list(model: &dyn Predictor) -> String {
    let labels = model.labels();
    let shown = labels.iter().take(8).map(|&label| class_names::shown(model.class_names(), label));
    let more = if labels.len() > 8 { format!(", … {} in all", labels.len()) } else { String::new() };
    shown.collect::<Vec<_>>().join(", ") + &more
}

/// `Ok` unless the input `name` states its number of feature columns (a CSV header) and
/// states fewer than the `dim` features `what` takes: its rows would be read with the
/// missing features as zeros. `hint` ends the message.
pub fn check_columns(name: &str, stated: Option<usize>, dim: usize, what: &str, hint: &str) -> Result<()> {
    match stated {
        Some(columns) if columns < dim => bail!("{name}: {columns} feature columns, {what} takes {dim} features{hint}"),
        _ => Ok(()),
    }
}

/// Makes `reader` give the features in the order of `features` (a model's names for
/// them), read by name, when both name them and the input's columns do not start with
/// them in that order: rows are never read with one column taken for another.
///
/// # Errors
/// The input's header lacks one of the model's features or has a feature column the
/// model does not know.
fn read_by_name(reader: &mut dyn RecordReader, features: &[String]) -> Result<()> {
    // Columns past the model's, after its own in its order, are read as before: zero, or
    // named as past its features.
    let Some(columns) = reader.feature_names() else { return Ok(()) };
    if features.is_empty() || columns.starts_with(features) {
        return Ok(());
    }
    reader.order_features_as(features)?;
    // The columns that are features by their own names, in the model's order but for
    // columns of categories, read silently.
    let (of_model, of_rows): (HashSet<&str>, HashSet<&str>) =
        (features.iter().map(String::as_str).collect(), columns.iter().map(String::as_str).collect());
    let in_rows = columns.iter().filter(|c| of_model.contains(c.as_str()));
    if !in_rows.eq(features.iter().filter(|f| of_rows.contains(f.as_str()))) {
        let name = reader.name();
        tell!("kestrel: note: {name} lists the model's features in another order: they are read by their names");
    }
    Ok(())
}

/// Reads every record of `input`, its labels read as `labels_of` says, handing each to
/// `each`; bad rows per the policy, told by a [`SkipTeller`] (under `--on-error skip`
/// each is handed to `each` as `None`, for an output that keeps a line per row). Returns
/// the rows skipped. A header that names the features in another order than the model's
/// `features`, or names columns of categories, is read by name ([`read_by_name`]), and
/// one that lacks a feature is refused, naming it. Otherwise an input that states its
/// number of features may not state fewer than the model's `dim`: its rows would be read
/// with the missing features as zeros. (More are read: a model learned from sparse rows
/// takes a CSV whose columns past its features are zero; a value that is not zero there
/// ends the reading, [`check_within_model`].) Rows that need no label
/// ([`LabelColumn::Ignored`]: `predict`) whose last column is one of the model's features
/// have none. The columns `kept` are kept as text in each record ([`Record::kept`]).
/// Returns the class names too, those given and the others the rows' labels brought.
fn for_each_record(
    (input, weight_column, kept): (&InputArgs, Option<&str>, &[String]),
    (dim, features): (usize, &[String]),
    (mut names, labels): (Option<ClassNames>, LabelColumn),
    mut each: impl FnMut(Option<&Record>) -> Result<()>,
) -> Result<(u64, Option<ClassNames>)> {
    let labelled = labels != LabelColumn::Ignored;
    let model_features = if labelled { Vec::new() } else { features.to_vec() };
    let keep_columns = kept.to_vec();
    let options = source::Options { model_features, keep_columns, ..options_with(input, labels, (weight_column, &[])) };
    let mut reader = open(&input.input, &options)?;
    let one_short = reader.dim_hint().is_some_and(|columns| columns + 1 == dim);
    let hint = match one_short && input.columns.label_column.is_none() {
        true => " (if the rows have no label column: --label-column none)",
        false => "",
    };
    // Rows whose columns and model whose features are named are matched by name (a
    // column of categories is one column for several features), others by position.
    if reader.feature_names().is_none() || features.is_empty() {
        check_columns(reader.name(), reader.dim_hint(), dim, "the model", hint)?;
    }
    read_by_name(reader.as_mut(), features)?;
    let columns = reader.feature_names().unwrap_or_default();
    let mut record = Record::default();
    let mut skipped = SkipTeller::default();
    loop {
        let next = reader.next_record(&mut record).and_then(|more| {
            let Some(names) = names.as_mut().filter(|_| more) else { return Ok(more) };
            let (name, line) = (reader.name().to_string(), record.line);
            let error = |kind| source::ReadError { source_name: name, line, column: 1, kind };
            names.resolve(&mut record).map_err(error).map(|()| true)
        });
        match next {
            Ok(true) => {
                check_within_model(&record, (dim, &columns), reader.name())?;
                each(Some(&record))?;
            }
            Ok(false) => {
                skipped.tell_total();
                if let Some(note) = reader.note() {
                    tell!("kestrel: note: {}: {note}", reader.name());
                }
                return Ok((skipped.count(), names));
            }
            Err(e) if input.on_error == OnErrorArg::Skip => {
                if let Some(line) = skipped.skipped(e) {
                    tell!("{line}");
                }
                each(None)?;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// `Ok` unless the record holds a nonzero value past the model's `dim` features (a wider
/// CSV, a LibSVM index beyond them); the error names the row and the first such feature, counted
/// from 1 — and its column, from the input's feature `columns` (a CSV header's), with the
/// flag that leaves it out. Not a bad row to skip: the input does not match the model.
fn check_within_model(record: &Record, (dim, columns): (usize, &[String]), name: &str) -> Result<()> {
    let Some(index) = record.first_past(dim) else { return Ok(()) };
    let (line, feature) = (record.line, index.saturating_add(1));
    match columns.get(index) {
        Some(column) => bail!(
            "{name}:{line}: a value in column `{column}` (feature {feature}), past the model's {dim} features: a \
             column that is not one of them can be left out: --skip-column {}",
            shell::word(column)
        ),
        None => bail!(
            "{name}:{line}: a value in feature {feature}, past the model's {dim} features (the input has more \
             features than the rows the model learned from)"
        ),
    }
}

/// `kestrel predict`.
pub fn predict(args: &PredictArgs) -> Result<()> {
    let mut model = model::read_file(&args.model)?;
    // A file is replaced only once every row is predicted: a bad input leaves it as it was.
    let mut file = output_path(args.output.as_deref()).map(OutputFile::create).transpose()?;
    let mut out: Box<dyn Write> = match file.as_mut() {
        Some(file) => Box::new(BufWriter::new(file)),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    let (name, dim) = (args.input.input.clone(), model.info().dim);
    let names = model.class_names().cloned();
    let features = model.feature_names().to_vec();
    let outputs = match (args.decision, args.probabilities) {
        (true, _) => decision_outputs(model.as_ref(), &args.model)?,
        (false, true) => probability_outputs(model.as_ref(), &args.model)?,
        (false, false) => 0,
    };
    // A bad row skipped keeps its line: `NaN` for each of its values.
    let values = 1 + outputs + usize::from(args.std || model.info().task == "detector");
    let skipped_line = ",".repeat(args.keep_columns.len()) + &vec!["NaN"; values].join(",");
    let reading = (&args.input, None, args.keep_columns.as_slice());
    for_each_record(reading, (dim, &features), (None, LabelColumn::Ignored), |record| {
        let Some(record) = record else {
            writeln!(out, "{skipped_line}")?;
            return Ok(());
        };
        write!(out, "{}", record.kept)?;
        let at = || format!("{name}:{}", record.line);
        if args.std {
            let Some((value, std)) = model.predict_with_std(record).with_context(at)? else {
                bail!(
                    "{} has no predictive variance: --std needs a krr regressor trained by the exact solver \
                     with --posterior (kestrel train --learner krr --posterior)",
                    args.model.display()
                );
            };
            writeln!(out, "{value},{std}")?;
            return Ok(());
        }
        if let Some((score, flag)) = model.novelty(record).with_context(at)? {
            writeln!(out, "{score},{flag}")?;
            return Ok(());
        }
        let value = model.predict(record).with_context(at)?;
        match names.as_ref().and_then(|names| names.name(value)) {
            Some(class) => write!(out, "{class}")?,
            None => write!(out, "{value}")?,
        }
        if args.decision {
            for decision in model.decision_values(record).with_context(at)?.unwrap_or_default() {
                write!(out, ",{decision}")?;
            }
        }
        if args.probabilities {
            for probability in model.probabilities(record).with_context(at)?.unwrap_or_default() {
                write!(out, ",{probability}")?;
            }
        }
        writeln!(out)?;
        Ok(())
    })?;
    out.flush()?;
    drop(out);
    if let Some(file) = file {
        file.finish()?;
    }
    Ok(())
}

/// The number of decision values `predict --decision` writes a row of `model` (read from
/// `path`): one for two classes, one a class beyond; the classes they belong to are told on
/// standard error.
///
/// # Errors
/// A usage error for a model that is not a classifier.
fn decision_outputs(model: &dyn Predictor, path: &std::path::Path) -> Result<usize> {
    let labels = model.labels();
    if !model.is_classifier() || model.info().task == "detector" || labels.len() < 2 {
        let what = if model.info().task == "detector" { "writes its scores and flags" } else { "has none" };
        bail!(Usage(format!("--decision writes a classifier's decision values: {} {what}", path.display())));
    }
    let shown = shown_classes(model);
    if let [negative, positive] = shown.as_slice() {
        tell!("kestrel: decision values: ≥ 0 for class {positive}, < 0 for class {negative}");
        return Ok(1);
    }
    tell!("kestrel: decision values of the classes, in order: {}", shown.join(", "));
    Ok(labels.len())
}

/// The number of class probabilities `predict --probabilities` writes a row of `model`
/// (read from `path`): one per class, the classes told on standard error.
///
/// # Errors
/// A usage error for a model that is not a classifier, or has no class probabilities.
fn probability_outputs(model: &dyn Predictor, path: &std::path::Path) -> Result<usize> {
    let info = model.info();
    if !model.is_classifier() || info.task == "detector" {
        let what = if info.task == "detector" { "writes its scores and flags" } else { "has no classes" };
        bail!(Usage(format!("--probabilities writes a classifier's class probabilities: {} {what}", path.display())));
    }
    if !info.probabilities {
        bail!(Usage(format!(
            "{} was trained without class probabilities: `kestrel train --probabilities` gives the model them",
            path.display()
        )));
    }
    let shown = shown_classes(model);
    tell!("kestrel: class probabilities, in order: {}", shown.join(", "));
    Ok(shown.len())
}

/// `model`'s classes in the order of its labels, as standard error names them.
fn shown_classes(model: &dyn Predictor) -> Vec<String> {
    model.labels().iter().map(|&label| class_names::shown(model.class_names(), label)).collect()
}

/// A name as a list separated by commas shows it: in backquotes when it holds a comma
/// itself (a category `idle, quiet`).
pub fn listed_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains(',') { format!("`{name}`").into() } else { name.into() }
}

/// `kestrel eval`.
pub fn eval(args: &EvalArgs) -> Result<()> {
    let mut model = model::read_file(&args.model)?;
    let classifier = model.is_classifier();
    let detector = model.info().task == "detector";
    if args.detection.normal_label.is_some() && !detector {
        bail!(Usage(format!(
            "--normal-label scores a novelty detector; {} is a {}",
            args.model.display(),
            model.info().task
        )));
    }
    if args.weight_column.is_some() && detector {
        bail!(Usage(format!(
            "--weight-column weighs a classifier's or a regressor's scores; {} is a detector",
            args.model.display()
        )));
    }
    let (mut detections, detector_names) = detections_for(&args.detection)?;
    let mut tally = Tally::default();
    // A classifier with class probabilities is scored by their log loss too.
    let mut log_loss = model.info().probabilities.then(LogLoss::default);
    let model_labels = model.labels();
    let mut recall = ClassRecall::new(&if classifier { model.labels() } else { Vec::new() });
    let mut foreign = ForeignLabels::new(model.labels());
    let mut figures = args.report.as_ref().map(|_| EvalFigures::new(model.labels()));
    let name = args.input.input.clone();
    let dim = model.info().dim;
    let features = model.feature_names().to_vec();
    let labels = labels_of(model.as_ref(), detector_names);
    let (skipped, names) =
        for_each_record((&args.input, args.weight_column.as_deref(), &[]), (dim, &features), labels, |record| {
            let Some(record) = record else { return Ok(()) };
            let at = || format!("{name}:{}", record.line);
            if let Some((score, flag)) = model.novelty(record).with_context(at)? {
                detections.add(Some(score), flag == 1.0, record.label);
                return Ok(());
            }
            // A row of weight 0 is left out, as `train` leaves it out; without the column each
            // weighs 1, which scores as counting the rows.
            let weight = record.weight.unwrap_or(1.0);
            if weight == 0.0 {
                return Ok(());
            }
            if classifier {
                foreign.met(record.label);
            }
            let prediction = model.predict(record).with_context(at)?;
            tally.add_weighted(prediction, record.label, weight);
            if let Some(log_loss) = log_loss.as_mut() {
                let probabilities = model.probabilities(record).with_context(at)?.unwrap_or_default();
                log_loss.add(&probabilities, &model_labels, record.label, weight);
                if let Some(figures) = figures.as_mut() {
                    figures.calibrated(record.label, &probabilities);
                }
            }
            recall.add_weighted(prediction, record.label, weight);
            match figures.as_mut() {
                Some(figures) if classifier => {
                    let decision = model.decision_values(record).with_context(at)?;
                    figures.classified(record.label, prediction, decision.as_deref());
                }
                Some(figures) => figures.regressed(record.label, prediction),
                None => {}
            }
            Ok(())
        })?;
    // Nothing scored is no score: an error for the script that ran it, as `train` stops on
    // a file of bad rows.
    if tally.n == 0 && detections.n == 0 {
        bail!("{name}: no row was scored{}", bad_rows_skipped(skipped));
    }
    if let (Some(path), Some(figures)) = (&args.report, &figures) {
        let mut report = Report::new("kestrel eval");
        let info = model.info();
        report.fact("data", &args.input.input).fact(
            "model",
            format!(
                "{} ({} {} {}, {} features, {} centres)",
                args.model.display(),
                info.kind,
                info.task,
                info.scalar,
                info.dim,
                info.centers
            ),
        );
        if let Some(column) = &args.weight_column {
            // The summary weighs the rows; the figures draw them, one mark or count each.
            report.fact(
                "row weights",
                format!("`{column}`: the scores of the summary weigh the rows, the figures count them"),
            );
        }
        if foreign.rows > 0 {
            let (rows, shown) = (foreign.rows, foreign.listed(names.as_ref()));
            report.fact("labels the model lacks", format!("{rows} rows ({shown}): classes the model never predicts"));
        }
        report.summary(&eval_summary(
            (&tally, &recall, names.as_ref()),
            (&detections, log_loss.as_ref()),
            skipped,
            (model.as_ref(), detector),
        ));
        figures.add_to(&mut report, &detections, names.as_ref())?;
        report.write(path)?;
    }
    let summary = eval_summary(
        (&tally, &recall, names.as_ref()),
        (&detections, log_loss.as_ref()),
        skipped,
        (model.as_ref(), detector),
    );
    if detector {
        tell_if_mostly_anomalies(&detections, &args.detection);
        match args.json {
            true => say!("{summary}")?,
            false => say!("{}", detection_text(&detections))?,
        }
        return Ok(());
    }
    let n = tally.n;
    if let Some(warning) = foreign.warning(n, model.as_ref(), names.as_ref()) {
        tell!("kestrel: warning: {warning}");
    }
    let weighed = args.weight_column.as_ref().map_or(String::new(), |column| format!(" (rows weighed by `{column}`)"));
    if args.json {
        let mut summary = summary;
        if let (Some(column), Value::Object(fields)) = (&args.weight_column, &mut summary) {
            fields.insert("weight_column".into(), json!(column));
        }
        say!("{summary}")?;
    } else if classifier {
        let balanced = recall.balanced_accuracy().map_or(String::new(), |b| format!("; balanced accuracy {b:.4}"));
        let log_loss = log_loss.and_then(|l| l.mean()).map_or(String::new(), |l| format!("; log loss {l:.4}"));
        say!("accuracy {:.4} on {n} rows ({} correct){balanced}{log_loss}{weighed}", tally.accuracy(), tally.correct)?;
    } else {
        let r2 = tally.r2().map_or(String::new(), |r2| format!(", r2 {r2:.4}"));
        say!("mse {:.6}, mae {:.6}{r2} on {n} rows{weighed}", tally.mse(), tally.mae())?;
    }
    Ok(())
}

/// What `kestrel eval` prints as JSON: a classifier's accuracy, balanced accuracy, each
/// class's recall (by name, for named classes) and, with class probabilities, their log
/// loss; a regressor's errors and R², a detector's counts.
fn eval_summary(
    (tally, recall, names): (&Tally, &ClassRecall, Option<&ClassNames>),
    (detections, log_loss): (&Detections, Option<&LogLoss>),
    skipped: u64,
    (model, detector): (&dyn Predictor, bool),
) -> Value {
    let n = tally.n;
    match (detector, model.is_classifier()) {
        (true, _) => Value::Object(detection_summary(detections, skipped)),
        (false, true) => {
            let mut summary = json!({"n": n, "accuracy": tally.accuracy()});
            if let Some(fields) = summary.as_object_mut() {
                fields.extend(recall_fields(recall, names));
                if let Some(log_loss) = log_loss {
                    fields.insert("log_loss".into(), json!(log_loss.mean()));
                }
                fields.insert("skipped".into(), json!(skipped));
            }
            summary
        }
        (false, false) => json!({"n": n, "mse": tally.mse(), "mae": tally.mae(), "r2": tally.r2(), "skipped": skipped}),
    }
}

/// The labels of an `eval` file that are none of the model's classes: a class each, which
/// the model never predicts (recall 0 in the balanced accuracy, as scikit-learn's
/// `balanced_accuracy_score` counts them), told in a warning. Memory: the model's labels
/// and [`SHOWN_FOREIGN`] others for the warning.
struct ForeignLabels {
    /// The model's classes, sorted.
    classes: Vec<f64>,
    /// The rows of the other labels.
    rows: usize,
    /// The first other labels met, as the warning shows them.
    shown: Vec<f64>,
}

/// The labels the warning of [`ForeignLabels`] names.
const SHOWN_FOREIGN: usize = 5;

impl ForeignLabels {
    fn new(mut classes: Vec<f64>) -> Self {
        classes.sort_by(f64::total_cmp);
        ForeignLabels { classes, rows: 0, shown: Vec::new() }
    }

    /// Counts a row scored of `label` when it is none of the classes.
    fn met(&mut self, label: f64) {
        if label.is_nan() || self.classes.binary_search_by(|class| class.total_cmp(&label)).is_ok() {
            return;
        }
        self.rows += 1;
        if self.shown.len() < SHOWN_FOREIGN && !self.shown.contains(&label) {
            self.shown.push(label);
        }
    }

    /// The labels shown, by their `names` (the reader's: the model's and the others met),
    /// `…` past [`SHOWN_FOREIGN`].
    fn listed(&self, names: Option<&ClassNames>) -> String {
        let mut listed: Vec<String> =
            self.shown.iter().map(|&label| format!("`{}`", class_names::shown(names, label))).collect();
        if self.shown.len() == SHOWN_FOREIGN {
            listed.push("…".into());
        }
        listed.join(", ")
    }

    /// What to tell of the other labels of `n` rows scored, if there were any; `names` as
    /// for [`ForeignLabels::listed`].
    fn warning(&self, n: usize, model: &dyn Predictor, names: Option<&ClassNames>) -> Option<String> {
        if self.rows == 0 {
            return None;
        }
        let (classes, listed) = (class_list(model), self.listed(names));
        let which = match self.rows == n {
            true => format!("no row's label is a class of the model ({classes}): the rows' labels are {listed}"),
            false => format!("{} rows' labels are not classes of the model ({classes}): {listed}", self.rows),
        };
        let shown = |label: f64| class_names::shown(names, label);
        let case = self.shown.iter().find_map(|&label| {
            let label = shown(label);
            let class = self
                .classes
                .iter()
                .map(|&class| shown(class))
                .find(|class| class.to_lowercase() == label.to_lowercase());
            class.map(|class| (label, class))
        });
        let case =
            case.map_or(String::new(), |(label, class)| format!(" (`{label}` differs from `{class}` in case alone)"));
        Some(format!(
            "{which}{case}; a row so labelled is predicted wrong, and its label counts as a class of recall 0 in the \
             balanced accuracy"
        ))
    }
}

/// A classifier's balanced accuracy and each class's recall (by name, for named classes),
/// the fields `eval` and `stream` give beside the accuracy.
pub fn recall_fields(recall: &ClassRecall, names: Option<&ClassNames>) -> Map<String, Value> {
    let recalls: Map<String, Value> =
        recall.recalls().map(|(label, r)| (class_names::shown(names, label), json!(r))).collect();
    let mut fields = Map::new();
    fields.insert("balanced_accuracy".into(), json!(recall.balanced_accuracy()));
    fields.insert("recall".into(), Value::Object(recalls));
    fields
}

/// A novelty detector's counts against the labels as JSON: rows, flagged and, with
/// labels, anomalies, precision, recall and AUC (`null` where undefined).
pub fn detection_summary(detections: &Detections, skipped: impl Into<Value>) -> Map<String, Value> {
    let mut summary = Map::new();
    summary.insert("n".into(), json!(detections.n));
    summary.insert("flagged".into(), json!(detections.flagged));
    summary.insert("skipped".into(), skipped.into());
    if detections.labelled > 0 {
        summary.insert("anomalies".into(), json!(detections.anomalies));
        summary.insert("precision".into(), json!(detections.precision()));
        summary.insert("recall".into(), json!(detections.recall()));
        summary.insert("auc".into(), json!(detections.auc()));
    }
    summary
}

/// The same for the terminal.
pub fn detection_text(detections: &Detections) -> String {
    let counts = format!("{} of {} rows flagged", detections.flagged, detections.n);
    if detections.labelled == 0 {
        return counts;
    }
    let rate = |value: Option<f64>| value.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    format!(
        "{counts}; {} anomalies: precision {}, recall {}, AUC {}",
        detections.anomalies,
        rate(detections.precision()),
        rate(detections.recall()),
        rate(detections.auc())
    )
}

/// A spinner on stderr saying `message` and the time since it started, ticking by itself
/// (for work whose steps are not counted: a fit and its searches), only when stderr is a
/// terminal; `finish_and_clear` takes it away.
pub fn spinner(message: String) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} ({elapsed})").unwrap_or(ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(std::time::Duration::from_millis(250));
    bar
}

/// A progress bar of `len` steps counted in `unit` on stderr, only when stderr is a
/// terminal (hidden otherwise, so pipes and logs stay clean).
pub fn progress_bar(len: u64, unit: &str) -> ProgressBar {
    if !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {unit}, {{per_sec}}, {{eta}} left");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or(ProgressStyle::default_bar()));
    bar
}
