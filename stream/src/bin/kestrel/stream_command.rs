//! `kestrel stream`: prequential learning with rolling metrics, checkpoints and signals.
//!
//! Records from a pipe or a serial port are read on a thread of their own ([`Records`]),
//! so the loop notices SIGINT/SIGTERM between waits even while the input is silent. The loop
//! counts the input rows it consumes (records read, bad ones included): a checkpoint holds
//! that count with the learner's state and the metrics, and `--resume` reads the input
//! again from its start, skips as many rows, and continues where the checkpoint was — so
//! the final model is the one an uninterrupted run gives.
//!
//! `--output` writes one line per input row (a sample's prediction, a detector's score and
//! flag; `NaN` for a bad row skipped), flushed at each checkpoint, which records the bytes
//! written: a resume cuts the file back to them, so every row's line is there once. To a
//! broker (`--output mqtt://…`) it publishes one JSON message per sample, and a checkpoint
//! is written only once the broker has acknowledged every message before it: a resume
//! publishes again those after it (at least once). `--metrics-topic` publishes the rolling
//! metrics, retained, at each report and the summary at the end.
//!
//! A run ends at the end of its input, after `--max-rows` input rows (counted from the
//! stream's start: a resumed run's include the checkpoint's), or when no row came for
//! `--idle-timeout` (from the start too) — each an ordinary end.
//!
//! From an MQTT broker (`--input mqtt://…`) nothing is read again on a resume: the broker
//! sends again the messages that were not acknowledged, and a message is acknowledged only
//! once its rows are consumed and — with `--checkpoint` — covered by a written checkpoint
//! (the loop writes one early when acknowledgements wait, since a broker sends only so
//! many unacknowledged messages). The checkpoint's `rows` still counts the input rows
//! consumed; a row with a sequence number (JSON `"seq"`, or `--seq-column`) no larger than the checkpoint's
//! last is not learned again, nor counted. A lost connection is made again (the broker
//! sends again what was not acknowledged); one that cannot be (the credentials refused)
//! ends the run (exit code 1) without a checkpoint, since the broker will send again what
//! the last one does not cover.
//!
//! Nothing learned is lost on the way out: at the end of the input, on SIGINT/SIGTERM
//! (exit code 130/143) and before stopping on a bad row (exit code 1) the checkpoint and
//! the model are written when `--checkpoint` and `--out` are set.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressStyle};
use kestrel_core::Real;
use kestrel_stream::checkpoint::{Checkpoint, RunConfig};
use kestrel_stream::class_names::ClassNames;
use kestrel_stream::history::History;
use kestrel_stream::mqtt::{self, Broker, LabelPlace, MqttSink, MqttSource, SeqPlace};
use kestrel_stream::online::{ClassProbabilities, OnlineLearner, Prequential};
use kestrel_stream::score::ClassRecall;
use kestrel_stream::source::NO_LABEL;
use kestrel_stream::source::{LabelColumn, Next, ReadError, ReadErrorKind, Record, Records};
use kestrel_stream::{file, model, shell};
use serde_json::{Value, json};

use crate::Usage;
use crate::args::{Learner, OnErrorArg, PayloadArg, ScalarArg, StreamArgs};
use crate::commands::SkipTeller;
use crate::signals::{self, Signals};
use crate::{commands, report, stream_setup};

/// The longest the loop waits for a record before it looks for a signal again.
const POLL: Duration = Duration::from_millis(100);
/// Messages consumed but not acknowledged after which a run with `--checkpoint` writes one
/// to acknowledge them: below the 20 unacknowledged messages Mosquitto sends by default.
const ACK_BATCH: usize = 16;
/// How long an MQTT broker has to accept the connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a checkpoint waits for an MQTT `--output` broker to acknowledge the
/// predictions it covers.
const FLUSH_WAIT: Duration = Duration::from_secs(10);

/// `kestrel stream`.
pub fn run(args: &StreamArgs) -> Result<()> {
    match args.scalar {
        ScalarArg::F64 => run_in::<f64>(args),
        ScalarArg::F32 => run_in::<f32>(args),
    }
}

/// The learner and the run's counters: what a checkpoint holds.
struct Session<'a> {
    args: &'a StreamArgs,
    config: RunConfig,
    learner: Box<dyn OnlineLearner>,
    /// The class names seen (read again from the input on a resume, as the rows skipped).
    names: ClassNames,
    /// Input rows consumed, bad ones included.
    rows: u64,
    seen: u64,
    skipped: u64,
    /// Tells this run's bad rows.
    teller: SkipTeller,
    /// The number of features the learner takes.
    dim: usize,
    /// The names a CSV header (or a broker's JSON rows) gave the learner's features
    /// (empty when it did not name them all), for the model file.
    feature_names: Vec<String>,
    metrics: Prequential,
    output: Option<RowOutput>,
    /// `--output` to a broker: a message per sample.
    predictions: Option<MqttSink>,
    /// `--metrics-topic`.
    metrics_sink: Option<MqttSink>,
    /// The largest sequence number among the rows consumed.
    last_seq: Option<u64>,
    /// The series of `--report`, and when the last row was learned.
    history: History,
    /// A classifier's class probabilities, learned from the samples so far, and those it
    /// gave the row last taken (of the classes it had before it).
    probabilities: ClassProbabilities,
    row_probabilities: Vec<f64>,
    clock: Instant,
    /// When this run started learning, and the samples seen before (a checkpoint's).
    started: (Instant, u64),
}

/// The per-row `--output`: a line per sample learned, and the bytes written so far.
struct RowOutput {
    writer: BufWriter<File>,
    bytes: u64,
}

impl RowOutput {
    /// Creates `path`, or on a resume cuts it back to the `bytes` the checkpoint had
    /// written (a file that is not a regular one, a pipe, is only appended to).
    fn open(path: &Path, resumed_at: Option<u64>) -> Result<Self> {
        let context = || format!("--output {}", path.display());
        let file = match resumed_at {
            None => File::create(path).with_context(context)?,
            Some(bytes) => {
                let file = OpenOptions::new().append(true).open(path).with_context(context)?;
                if file.metadata().with_context(context)?.is_file() {
                    file.set_len(bytes).with_context(context)?;
                }
                file
            }
        };
        Ok(RowOutput { writer: BufWriter::new(file), bytes: resumed_at.unwrap_or(0) })
    }

    fn line(&mut self, line: &str) -> Result<()> {
        writeln!(self.writer, "{line}")?;
        self.bytes = self.bytes.saturating_add(line.len() as u64 + 1);
        Ok(())
    }
}

impl Session<'_> {
    /// Loads `--checkpoint` into the session after checking it was written with the same
    /// flags; returns the rows to skip.
    fn resume(&mut self, path: &Path, saved: Checkpoint) -> Result<u64> {
        if let Some(difference) = saved.config.difference(&self.config) {
            bail!("cannot resume from {}: {difference}", path.display());
        }
        self.learner.restore_state(&saved.learner).with_context(|| format!("cannot resume from {}", path.display()))?;
        (self.rows, self.seen, self.skipped, self.metrics) = (saved.rows, saved.seen, saved.skipped, saved.metrics);
        (self.last_seq, self.history, self.probabilities) = (saved.last_seq, saved.history, saved.probabilities);
        if let (Some(output), None) = (&self.args.output, &self.predictions) {
            self.output = Some(RowOutput::open(output, Some(saved.output_bytes))?);
        }
        Ok(saved.rows)
    }

    /// Flushes `--output`, and writes the checkpoint when `--checkpoint` is set; false
    /// when an `--output` broker has not acknowledged every prediction within
    /// [`FLUSH_WAIT`] (no checkpoint then).
    fn checkpoint(&mut self) -> Result<bool> {
        if let Some(output) = &mut self.output {
            output.writer.flush().context("--output")?;
        }
        let Some(path) = &self.args.checkpoint else { return Ok(true) };
        if let Some(sink) = &mut self.predictions
            && !sink.flush(FLUSH_WAIT).map_err(anyhow::Error::msg)?
        {
            return Ok(false);
        }
        let checkpoint = Checkpoint {
            config: self.config.clone(),
            rows: self.rows,
            seen: self.seen,
            skipped: self.skipped,
            metrics: self.metrics.clone(),
            output_bytes: self.output.as_ref().map_or(0, |output| output.bytes),
            last_seq: self.last_seq,
            history: self.history.clone(),
            probabilities: self.probabilities.clone(),
            learner: self.learner.save_state()?,
        };
        checkpoint.write(path)?;
        Ok(true)
    }

    /// Scores the learner's prediction for `record` and writes its `--output` line.
    fn scored(&mut self, prediction: Option<f64>, record: &Record) -> Result<()> {
        let score = self.learner.last_score();
        if self.learner.is_detector() {
            self.metrics.record_detection(prediction, score, record.label);
        } else {
            self.metrics.record(prediction, record.label);
        }
        let now = Instant::now();
        let seconds = now.saturating_duration_since(self.clock).as_secs_f64();
        self.history.record(self.learner.as_ref(), prediction, record.label, seconds);
        self.clock = now;
        self.answered(prediction, record)
    }

    /// `record` taken with the learner's `prediction` for it, when it had `classes` classes
    /// before (a classifier's): its class probabilities found (and learned from, and scored
    /// by their log loss, if it was learned), its `--output` line written, and if it was
    /// learned (`learns`) scored and counted as seen.
    ///
    /// # Errors
    /// The write to `--output`.
    fn took(&mut self, prediction: Option<f64>, record: &Record, learns: bool, classes: usize) -> Result<()> {
        if self.learner.is_classifier() {
            let (learner, out) = (self.learner.as_ref(), &mut self.row_probabilities);
            match learns {
                true => self.metrics.record_probability(self.probabilities.score_and_learn(
                    learner,
                    classes,
                    record.label,
                    out,
                )),
                // A row only predicted needs them only to write them.
                false if self.args.probabilities => self.probabilities.probabilities(learner.decisions(), classes, out),
                false => {}
            }
        }
        match learns {
            true => self.scored(prediction, record)?,
            false => self.answered(prediction, record)?,
        }
        self.consumed(record);
        self.rows = self.rows.saturating_add(1);
        if learns {
            self.seen = self.seen.saturating_add(1);
        }
        Ok(())
    }

    /// Whether `record` is only predicted: its label is missing and the learner learns
    /// from labels (a detector learns from every row, its labels only scored).
    fn predicts_only(&self, record: &Record) -> bool {
        record.label.is_nan() && record.class_name.is_empty() && !self.learner.is_detector()
    }

    /// The rows only predicted (their labels missing): every row read but those learned
    /// and those skipped.
    fn unlabelled(&self) -> u64 {
        self.rows.saturating_sub(self.seen).saturating_sub(self.skipped)
    }

    /// Writes the learner's prediction for `record` to `--output` (a line, or a message).
    fn answered(&mut self, prediction: Option<f64>, record: &Record) -> Result<()> {
        let score = self.learner.last_score();
        // With --probabilities: the probability of the prediction.
        let probability = (self.args.probabilities && self.learner.is_classifier())
            .then(|| predicted_probability(&*self.learner, &self.row_probabilities, prediction));
        if self.predictions.is_some() {
            let row = self.rows.saturating_add(1);
            let by_class = probability.map(|p| (p, self.probabilities_by_class()));
            let message =
                prediction_message(self.learner.is_detector(), &self.names, (prediction, score), record, row, by_class);
            if let Some(sink) = &mut self.predictions {
                sink.publish_later(message);
            }
            return Ok(());
        }
        let Some(output) = &mut self.output else { return Ok(()) };
        let value = prediction.unwrap_or(f64::NAN);
        let kept = &record.kept;
        let line = match (self.learner.is_detector(), self.names.name(value), probability) {
            (true, ..) => format!("{kept}{},{value}", score.unwrap_or(f64::NAN)),
            (false, Some(class), None) => format!("{kept}{class}"),
            (false, Some(class), Some(p)) => format!("{kept}{class},{p}"),
            (false, None, None) => format!("{kept}{value}"),
            (false, None, Some(p)) => format!("{kept}{value},{p}"),
        };
        output.line(&line).context("--output")
    }

    /// The class probabilities of the row last taken, by class name (or label), for an
    /// `--output` broker's message.
    fn probabilities_by_class(&self) -> serde_json::Map<String, Value> {
        let labels = self.learner.class_labels().iter();
        let named = |label: f64| self.names.name(label).map_or_else(|| label.to_string(), str::to_string);
        labels.zip(&self.row_probabilities).map(|(&label, &p)| (named(label), json!(p))).collect()
    }

    /// Publishes the predictions held back: at once when no more rows are ready
    /// (`backlog` false), else once [`ACK_BATCH`] are held — a burst wakes the network
    /// thread once.
    fn send_predictions(&mut self, backlog: bool) -> Result<()> {
        match &mut self.predictions {
            Some(sink) if !backlog || sink.held() >= ACK_BATCH => sink.send_held().map_err(anyhow::Error::msg),
            _ => Ok(()),
        }
    }

    /// Writes the checkpoint, the model and the report (each when asked for): what was
    /// learned so far is kept whatever ends the run.
    fn save(&mut self) -> Result<()> {
        let checkpointed = self.checkpoint()?;
        if let Some(path) = &self.args.report {
            let rate = self.rate();
            report::history::run_page(&self.config, &self.summary(rate), &self.history, self.learner.as_ref())?
                .write(path)?;
        }
        if let Some(path) = &self.args.out {
            // A detector's model has no classes: its labels were only scored against.
            let classes = !self.names.is_empty() && self.learner.is_classifier();
            let named = |bytes| {
                let bytes = if classes { model::with_class_names(bytes, &self.names)? } else { bytes };
                match self.feature_names.is_empty() {
                    true => Ok(bytes),
                    false => model::with_feature_names(bytes, &self.feature_names),
                }
            };
            let file = self.probabilities.model_file(self.learner.as_mut());
            match file.and_then(|bytes| named(bytes).map_err(|e| e.to_string())) {
                Ok(bytes) => file::write_atomic(path, &bytes)?,
                Err(why) => tell!("kestrel: no model written to {}: {why}", path.display()),
            }
        }
        if !checkpointed {
            let (name, held) = self.predictions.as_ref().map_or(("", 0), |sink| (sink.name(), sink.held()));
            if held > 0 {
                bail!(
                    "{name}: {held} predictions not handed to the broker (stopped while it was away): no checkpoint written"
                );
            }
            bail!("{name} did not acknowledge every prediction within {FLUSH_WAIT:?}: no checkpoint written");
        }
        Ok(())
    }

    /// The record read, its class name (if any) given its label: a bad row for a name
    /// past the limits.
    fn name(&mut self, source_name: &str, record: &mut Record) -> Next {
        match self.names.resolve(record) {
            Ok(()) => Next::Record,
            Err(kind) => {
                Next::Bad(ReadError { source_name: source_name.to_string(), line: record.line, column: 1, kind })
            }
        }
    }

    /// Whether `record` carries a sequence number the rows consumed already had.
    fn seen_before(&self, record: &Record) -> bool {
        record.seq.is_some_and(|seq| self.last_seq.is_some_and(|last| seq <= last))
    }

    /// `record` is consumed: its sequence number, if any, is the last.
    fn consumed(&mut self, record: &Record) {
        if record.seq.is_some() {
            self.last_seq = record.seq.max(self.last_seq);
        }
    }

    /// A bad row under `--on-error skip`: counted, told (the first few: [`SkipTeller`]),
    /// consumed, and given its `--output` line, `NaN` (`NaN,NaN` for a detector), so that
    /// the file keeps a line per input row.
    ///
    /// # Errors
    /// The write to `--output`.
    fn skip(&mut self, progress: &ProgressBar, message: String) -> Result<()> {
        // Saturating: the counters may come from a checkpoint.
        self.skipped = self.skipped.saturating_add(1);
        self.rows = self.rows.saturating_add(1);
        if let Some(line) = self.teller.skipped(message) {
            progress.suspend(|| tell!("{line}"));
        }
        self.skipped_lines(1)
    }

    /// Writes `rows` skipped rows' `--output` lines: `NaN` (`NaN,NaN` for a detector, or a
    /// classifier's with `--probabilities`),
    /// after an empty field for each column kept.
    fn skipped_lines(&mut self, rows: u64) -> Result<()> {
        let two = self.learner.is_detector() || (self.args.probabilities && self.learner.is_classifier());
        let values = if two { "NaN,NaN" } else { "NaN" };
        let line = ",".repeat(self.args.keep_columns.len()) + values;
        let Some(output) = &mut self.output else { return Ok(()) };
        for _ in 0..rows {
            output.line(&line).context("--output")?;
        }
        Ok(())
    }

    /// Samples learned per second of this run.
    fn rate(&self) -> f64 {
        let (start, seen_before) = self.started;
        let seconds = start.elapsed().as_secs_f64();
        if seconds > 0.0 { self.seen.saturating_sub(seen_before) as f64 / seconds } else { 0.0 }
    }

    /// Publishes the summary on `--metrics-topic` (retained), then prints it.
    ///
    /// # Errors
    /// The write to standard output (its reader went away).
    fn publish_summary(&mut self) -> std::io::Result<()> {
        self.teller.tell_total();
        if self.learner.is_detector() {
            commands::tell_if_mostly_anomalies(&self.metrics.detections, &self.args.detection);
        }
        let summary = self.summary(self.rate()).to_string();
        if let Some(sink) = &mut self.metrics_sink {
            if let Err(e) = sink.publish(summary.clone().into_bytes(), true) {
                tell!("kestrel: {e}");
            }
            sink.close();
        }
        say!("{summary}")
    }

    /// Prints what the brokers published to have to tell.
    fn tell_notices(&self, progress: &ProgressBar) {
        for sink in [&self.predictions, &self.metrics_sink].into_iter().flatten() {
            while let Some(notice) = sink.notice() {
                progress.suspend(|| tell!("kestrel: {notice}"));
            }
        }
    }

    fn summary(&self, rate: f64) -> Value {
        let mut summary = self.scores(rate);
        // The rows predicted without a label to score or learn, when there were any.
        if let (unlabelled @ 1.., Some(fields)) = (self.unlabelled(), summary.as_object_mut()) {
            fields.insert("unlabelled".into(), json!(unlabelled));
        }
        // The work the stopping rule and the cap left (--eps, --steps-per-sample).
        if let (Some(steps), Some(fields)) = (self.history.steps.mean(), summary.as_object_mut()) {
            fields.insert("steps_per_sample".into(), json!(steps));
        }
        summary
    }

    /// The summary's scores, rows and rate.
    fn scores(&self, rate: f64) -> Value {
        let (n, skipped) = (self.metrics.n, self.skipped);
        if self.learner.is_detector() {
            let mut summary = commands::detection_summary(&self.metrics.detections, skipped);
            summary.insert("samples_per_sec".into(), json!(rate));
            return Value::Object(summary);
        }
        let mut summary = if self.learner.is_classifier() {
            // No row scored has no accuracy (JSON null), as it has no balanced accuracy.
            let mut summary = json!({
                "n": n,
                "accuracy": (n > 0).then(|| self.metrics.accuracy()),
                "log_loss": (n > 0).then(|| self.metrics.log_loss()),
            });
            if let Some(fields) = summary.as_object_mut() {
                fields.extend(commands::recall_fields(&self.metrics.classes, Some(&self.names)));
                fields.insert("skipped".into(), json!(skipped));
                fields.insert("samples_per_sec".into(), json!(rate));
            }
            summary
        } else {
            let mse = (n > 0).then(|| self.metrics.mse());
            let mut summary = json!({"n": n, "mse": mse, "skipped": skipped, "samples_per_sec": rate});
            // What a saved model would have scored, when the predictions were not always its.
            if let (Some(model_mse), Some(fields)) = (self.learner.model_mse(), summary.as_object_mut()) {
                fields.insert("model_mse".into(), json!(model_mse));
            }
            summary
        };
        // What the learner chose itself (rsvm's raced width, svm's raced cost, slkl's ν).
        let chosen: serde_json::Map<String, Value> =
            self.learner.chosen().into_iter().map(|(name, value)| (name.to_string(), json!(value))).collect();
        if let (false, Some(fields)) = (chosen.is_empty(), summary.as_object_mut()) {
            fields.insert("chosen".into(), Value::Object(chosen));
        }
        summary
    }
}

/// Opens `--input`: a broker for an `mqtt://` URL (whose rows have `dim` features, or as
/// many as the first good row), else as every command does. Returns the records, the
/// input's name, and the number of features and their names when the input states them.
fn open_input(
    args: &StreamArgs,
    given: Option<Learner>,
    dim: Option<usize>,
) -> Result<(Records, String, Option<usize>, Vec<String>)> {
    let input = &args.input.input;
    let labels = given.map_or(LabelColumn::Detect, commands::labels_for);
    let categorical = &args.categorical.categorical;
    if let Some(learned) = categorical.iter().find(|c| c.categories.is_none()) {
        let column = shell::word(&learned.column);
        let message = format!(
            "--categorical {column}: a stream's features are fixed at its start, give the column's categories \
             (--categorical {column}=A,B,…)"
        );
        return Err(Usage(message).into());
    }
    let Some(broker) = broker(args, "--input", input)? else {
        let reader = commands::open_stream(&args.input, labels, (categorical, &args.keep_columns))?;
        let (name, dim, features) = (reader.name().to_string(), reader.dim_hint(), reader.feature_names());
        return Ok((Records::new(reader, input), name, dim, features.unwrap_or_default()));
    };
    if !args.keep_columns.is_empty() {
        let message = "--keep-column names columns of a CSV header, which a broker's rows do not have";
        return Err(Usage(message.into()).into());
    }
    let skipped = args.input.columns.skip_columns.clone();
    if !skipped.is_empty() && matches!(args.payload, PayloadArg::Csv | PayloadArg::Libsvm) {
        let message = "--skip-column names the fields of JSON rows: a broker's CSV and LibSVM rows have no names";
        return Err(Usage(message.into()).into());
    }
    let client_id = args.client_id.clone().ok_or(Usage(
        "MQTT input needs --client-id: the broker keeps the session (and what it must send again) under it".into(),
    ))?;
    let label = match args.input.columns.label_column.as_deref() {
        None => LabelPlace::Standard,
        Some(NO_LABEL) => LabelPlace::Unlabelled,
        Some(field) => LabelPlace::Field(field.to_string()),
    };
    let seq = match args.seq_column.as_deref() {
        None => SeqPlace::default(),
        Some(column) => match column.parse::<usize>() {
            Ok(0) => return Err(Usage("--seq-column: columns are numbered from 1".into()).into()),
            Ok(number) => SeqPlace::Column(number),
            Err(_) => SeqPlace::Field(column.to_string()),
        },
    };
    let payload = match args.payload {
        PayloadArg::Auto => mqtt::Payload::Auto,
        PayloadArg::Csv => mqtt::Payload::Csv,
        PayloadArg::Libsvm => mqtt::Payload::LibSvm,
        PayloadArg::Json => mqtt::Payload::Json,
    };
    let options = mqtt::Options {
        client_id,
        payload,
        dim,
        max_message_bytes: args.max_message_bytes,
        labels,
        // Without a learner given, a first JSON row without a label is the readings of a
        // detector; a missing label is a row to predict only once the learner learns labels.
        unlabelled_rows: given.is_some_and(|learner| learner != Learner::Novelty),
        label,
        seq,
        categorical: categorical.clone(),
        skipped,
        connect_timeout: CONNECT_TIMEOUT,
    };
    let source = MqttSource::connect(&broker, &options)?;
    let name = source.name().to_string();
    Ok((Records::Mqtt(source), name, dim, Vec::new()))
}

/// The learner `kestrel stream` takes without `--learner`, from the first good row, and
/// why: the novelty detector for a row without a label; rsvm for a class name, or a whole
/// number from −1 to `classes` (`--classes`), as class codes run; slkl for any other number
/// (a target). A stream cannot see its labels ahead as `kestrel train` does: a target of
/// small whole numbers is read as classes, and the class past `--classes` names slkl.
fn learner_for_first_row(record: &Record, classes: usize) -> (Learner, String) {
    let label = record.label;
    if !record.class_name.is_empty() {
        (Learner::Rsvm, format!("the first row's label is a class name (`{}`)", record.class_name))
    } else if label.is_nan() {
        (Learner::Novelty, "the rows have no labels".into())
    } else if label.fract() == 0.0 && (-1.0..=classes as f64).contains(&label) {
        (
            Learner::Rsvm,
            format!("the first row's label {label} is a whole number from -1 to --classes {classes}, read as a class"),
        )
    } else {
        (
            Learner::Slkl,
            format!(
                "the first row's label {label} is not a class code from -1 to --classes {classes}: a target to regress"
            ),
        )
    }
}

/// Waits for the first good row and leaves it in `record`: for a broker's rows whose number
/// of features nothing stated (no `--dim`, no checkpoint), which it states, and for a run
/// without `--learner`, which it chooses. Returns the number of features the input knows
/// by then (a broker's row states it); the bad rows before that row are skipped (counted
/// by `skipped`) — or the run ends at the first, as `--on-error` says. A row whose label is
/// missing is a bad row here when it would choose the learner (`given` none, a file's label
/// column), as it says nothing of the labels.
fn first_row(
    (input, name): (&mut Records, &str),
    record: &mut Record,
    signals: &Signals,
    (args, given): (&StreamArgs, Option<Learner>),
    skipped: &mut SkipTeller,
) -> Result<Option<usize>> {
    // Choosing the learner from a row of a label column (not a broker's).
    let choosing =
        given.is_none() && !input.redelivers() && args.input.columns.label_column.as_deref() != Some(NO_LABEL);
    let started = Instant::now();
    let idle_timeout = args.idle_timeout.map(Duration::from_secs_f64);
    loop {
        if let Some(signal) = signals.received() {
            input.close();
            tell!("kestrel: stopped by {} before the first row", signals::name(signal));
            std::process::exit(128 + signal);
        }
        // The row that chooses the learner must say what its labels are: one whose label is
        // missing, in a column of them, chooses nothing (a broker's JSON row without a label
        // is the readings of a detector).
        let next = match input.next(record, POLL) {
            Next::Record if choosing && record.label.is_nan() && record.class_name.is_empty() => {
                let kind = ReadErrorKind::Malformed(
                    "the row's label is missing, and the first labelled row chooses the learner (or --learner)".into(),
                );
                Next::Bad(ReadError { source_name: name.to_string(), line: record.line, column: 1, kind })
            }
            next => next,
        };
        match next {
            Next::Record => return Ok(input.dim()),
            Next::Bad(e) if args.input.on_error == OnErrorArg::Skip => {
                if let Some(line) = skipped.skipped(e) {
                    tell!("{line}");
                }
            }
            Next::Bad(e) => {
                input.close();
                return Err(e.into());
            }
            Next::Waiting if idle_timeout.is_some_and(|idle| started.elapsed() >= idle) => {
                input.close();
                bail!(
                    "no row within --idle-timeout to tell the number of features or the learner (or give --dim and --learner): no model written"
                )
            }
            Next::Waiting => {}
            Next::Notice(message) => tell!("kestrel: {message}"),
            Next::End => bail!("the input ended before its first row"),
            Next::Lost(message) => {
                input.close();
                bail!(message)
            }
        }
    }
}

/// The broker `url` names, when it is an MQTT URL (given to `flag`), over TLS with
/// `--ca-file`.
fn broker(args: &StreamArgs, flag: &str, url: &str) -> Result<Option<Broker>, Usage> {
    if !(url.starts_with("mqtt://") || url.starts_with("mqtts://")) {
        return Ok(None);
    }
    let mut broker = Broker::parse(url).map_err(|e| Usage(format!("{flag}: {e}")))?;
    if broker.tls {
        broker.ca_file.clone_from(&args.ca_file);
    }
    Ok(Some(broker))
}

/// The brokers `--output` and `--metrics-topic` publish to: connected, each under a client
/// id of its own (`--client-id` or the process's, with `-output` or `-metrics`).
fn open_sinks(args: &StreamArgs) -> Result<(Option<MqttSink>, Option<MqttSink>)> {
    let output = args.output.as_ref().map(|path| path.to_string_lossy().into_owned());
    let output = match &output {
        Some(url) => broker(args, "--output", url)?,
        None => None,
    };
    let input = broker(args, "--input", &args.input.input)?;
    let metrics = match args.metrics_topic.as_deref() {
        None => None,
        Some(url) if url.starts_with("mqtt://") || url.starts_with("mqtts://") => broker(args, "--metrics-topic", url)?,
        Some(topic) => {
            let on = output.as_ref().or(input.as_ref()).ok_or(Usage(
                "--metrics-topic names a topic of the --output or --input broker: neither is one (or give a whole mqtt:// URL)"
                    .into(),
            ))?;
            Some(Broker { topic: topic.to_string(), ..on.clone() })
        }
    };
    let id = args.client_id.clone().unwrap_or_else(|| format!("kestrel-{}", std::process::id()));
    let connect = |broker: Option<Broker>, suffix: &str| -> Result<Option<MqttSink>> {
        let Some(broker) = broker else { return Ok(None) };
        Ok(Some(MqttSink::connect(&broker, &format!("{id}-{suffix}"), CONNECT_TIMEOUT)?))
    };
    Ok((connect(output, "output")?, connect(metrics, "metrics")?))
}

/// Ends the run: writes the checkpoint and the model, acknowledges what they cover, and
/// lets a broker go.
fn finish(session: &mut Session, input: &mut Records, consumed: u64) -> Result<()> {
    // A row's prediction goes out before its message is acknowledged.
    session.send_predictions(false)?;
    // A broker's JSON rows name their features as they come: the model keeps the names.
    if let Some(names) = input.feature_names().filter(|names| names.len() == session.dim) {
        session.feature_names = names;
    }
    let saved = session.save();
    // What happened to a broker while the last predictions were flushed (the loop that
    // tells it has ended).
    session.tell_notices(&ProgressBar::hidden());
    if saved.is_ok() {
        input.commit(consumed);
    }
    input.close();
    if let Some(sink) = &mut session.predictions {
        sink.close();
    }
    saved
}

fn run_in<T: Real>(args: &StreamArgs) -> Result<()> {
    let signals = Signals::install().context("cannot install the SIGINT/SIGTERM handlers")?;
    let urls = [Some(args.input.input.clone()), args.output.as_ref().map(|o| o.to_string_lossy().into_owned())];
    let tls = urls.iter().chain([&args.metrics_topic]).flatten().any(|url| url.starts_with("mqtts://"));
    if let (Some(path), false) = (&args.ca_file, tls) {
        return Err(Usage(format!("--ca-file {}: no mqtts:// broker to check with it", path.display())).into());
    }
    let saved = match (&args.checkpoint, args.resume) {
        (Some(path), true) => Some((path, Checkpoint::read(path).context("cannot resume")?)),
        _ => None,
    };
    let saved_flag = |flag: &str| saved.as_ref().and_then(|(_, saved)| saved.config.value(flag));
    // The learner given, or the one a resumed checkpoint names, or (below) the one the first
    // row chooses; `--normal-label` scores a detector.
    let normal = args.detection.normal_label.is_some();
    let given = args.learner.or(saved_flag("--learner").and_then(|v| Learner::from_str(v, true).ok()));
    let given = given.or(normal.then_some(Learner::Novelty));
    // Refused before any input is opened (a broker's, which may wait for a first row).
    if normal && given != Some(Learner::Novelty) {
        bail!(Usage("--normal-label scores a novelty detector (--learner novelty)".into()));
    }
    let (detections, names) = commands::detections_for(&args.detection)?;
    let stated_dim = args.dim.or(saved_flag("--dim").and_then(|dim| dim.parse().ok()));
    if let Some(learner) = given.filter(|&learner| learner != Learner::Novelty)
        && args.input.columns.label_column.as_deref() == Some(NO_LABEL)
    {
        let name = stream_setup::value_name(&learner);
        bail!(Usage(format!("--learner {name} learns from labels: --label-column none gives the rows none")));
    }
    let (mut input, name, dim_hint, feature_names) = open_input(args, given, stated_dim)?;
    // The first good row, read to learn the number of features (a broker's) or to choose the
    // learner, and the bad rows before it; it is then learned as the first.
    let (mut record, mut first, mut teller) = (Record::default(), None, SkipTeller::default());
    let known_dim = stated_dim.or(dim_hint);
    if known_dim.is_none() && !input.redelivers() {
        bail!(Usage(
            "LibSVM input needs --dim, the number of features (the largest index the rows use; a CSV header states \
             it): a stream's model is sized before its rows are read"
                .into()
        ));
    }
    let dim = match (known_dim, given) {
        (Some(dim), Some(_)) => dim,
        (known, _) => {
            let dim = first_row((&mut input, &name), &mut record, &signals, (args, given), &mut teller)?;
            first = Some(teller.count());
            known.or(dim).context("a row came but no number of features")?
        }
    };
    let learner_kind = match given {
        Some(learner) => learner,
        None => {
            let (learner, why) = learner_for_first_row(&record, args.classes);
            tell!("kestrel: learner {}: {why} (--learner chooses another)", stream_setup::value_name(&learner));
            learner
        }
    };
    let ignored = stream_setup::ignored_flags(args, learner_kind);
    commands::tell_ignored(&stream_setup::value_name(&learner_kind), &ignored, &args.kernel);
    let learner = stream_setup::learner::<T>(args, learner_kind, dim)?;
    let config = stream_setup::run_config(args, learner_kind, dim, &feature_names)?;
    // A classifier's classes are counted as its learner meets them, as many as it takes.
    let classes = ClassRecall::growing(if learner.is_classifier() { args.classes } else { 0 });
    let metrics = Prequential { detections, classes, ..Prequential::default() };
    let (mut predictions, mut metrics_sink) = open_sinks(args)?;
    // A signal ends a wait for a broker that is away.
    for sink in [&mut predictions, &mut metrics_sink].into_iter().flatten() {
        sink.interrupt_when(signals.flag());
    }
    let (history, clock) = (History::default(), Instant::now());
    let mut session = Session {
        args,
        config,
        learner,
        names,
        rows: 0,
        seen: 0,
        skipped: 0,
        teller,
        dim,
        // Only names of every feature the learner takes.
        feature_names: if feature_names.len() == dim { feature_names } else { Vec::new() },
        metrics,
        output: None,
        predictions,
        metrics_sink,
        last_seq: None,
        history,
        probabilities: ClassProbabilities::default(),
        row_probabilities: Vec::new(),
        clock,
        started: (Instant::now(), 0),
    };
    let resume_rows = match saved {
        Some((path, saved)) => session.resume(path, saved)?,
        None => 0,
    };
    if let (Some(path), None, None) = (&args.output, &session.output, &session.predictions) {
        session.output = Some(RowOutput::open(path, None)?);
    }
    let progress = progress_bar();
    progress.set_position(session.seen);
    // A broker sends again what was not acknowledged: nothing to skip.
    let resume_rows = if input.redelivers() { 0 } else { resume_rows };
    let mut to_skip = resume_rows;
    session.started = (Instant::now(), session.seen);
    let skip_bad = args.input.on_error == OnErrorArg::Skip;
    let idle_timeout = args.idle_timeout.map(Duration::from_secs_f64);
    let has_checkpoint = args.checkpoint.is_some();
    // Rows this run handed out and consumed (those not learned again included): what a
    // broker's acknowledgements count.
    let mut consumed = first.unwrap_or(0);
    if let Some(skipped) = first {
        (session.rows, session.skipped) = (skipped, skipped);
        // The bad rows before the first good one keep their `--output` lines too.
        session.skipped_lines(skipped)?;
    }
    let mut last_row = Instant::now();
    loop {
        if args.max_rows.is_some_and(|max| session.rows >= max) {
            break;
        }
        if let Some(signal) = signals.received() {
            progress.finish_and_clear();
            // What could not be saved is told; the exit code is still the signal's.
            if let Err(e) = finish(&mut session, &mut input, consumed) {
                tell!("kestrel: error: {e:#}");
            }
            // A reader of standard output that went away has nothing left to read.
            let _ = session.publish_summary();
            tell!("kestrel: stopped by {} after {} input rows", signals::name(signal), session.rows);
            std::process::exit(128 + signal);
        }
        let next = match first.take().map_or_else(|| input.next(&mut record, POLL), |_| Next::Record) {
            Next::Record => session.name(&name, &mut record),
            other => other,
        };
        session.tell_notices(&progress);
        let waiting = matches!(next, Next::Waiting | Next::Notice(_));
        // The clock is read for --idle-timeout only (a read per row costs ~2 % of a
        // detector's stream).
        if !waiting && idle_timeout.is_some() {
            last_row = Instant::now();
        }
        if to_skip > 0 && !waiting {
            if next == Next::End {
                let read = resume_rows - to_skip;
                bail!("{name} ended after {read} rows, but the checkpoint had consumed {resume_rows}");
            }
            to_skip -= 1;
            continue;
        }
        match next {
            Next::Waiting if idle_timeout.is_some_and(|idle| last_row.elapsed() >= idle) => {
                tell!("kestrel: no row for {:?} (--idle-timeout): ending", last_row.elapsed());
                break;
            }
            Next::Waiting => {}
            Next::Notice(message) => progress.suspend(|| tell!("kestrel: {message}")),
            Next::End => break,
            Next::Lost(message) => {
                progress.finish_and_clear();
                // Without a checkpoint every row learned was acknowledged: keep the model.
                if !has_checkpoint {
                    session.save()?;
                }
                input.close();
                bail!("{message} (after {} input rows)", session.rows);
            }
            Next::Record if session.seen_before(&record) => {
                consumed += 1;
                let seq = record.seq.unwrap_or_default();
                progress.suspend(|| tell!("kestrel: {name}: row seq {seq} was learned before: not again"));
            }
            Next::Bad(e) if skip_bad => {
                session.skip(&progress, e.to_string())?;
                consumed += 1;
            }
            Next::Bad(e) => {
                finish(&mut session, &mut input, consumed)?;
                return Err(e.into());
            }
            Next::Record => {
                // A row whose label is missing is predicted; the others are learned too.
                let learns = !session.predicts_only(&record);
                let classes = session.learner.class_labels().len();
                let answer = match learns {
                    true => session.learner.test_then_train(&record),
                    false => session.learner.predict(&record),
                };
                match answer {
                    Ok(prediction) => {
                        session.took(prediction, &record, learns, classes)?;
                        consumed += 1;
                        if learns {
                            progress.inc(1);
                            if let Err(e) = report(&mut session, &progress) {
                                finish(&mut session, &mut input, consumed)?;
                                return Err(e.into());
                            }
                        }
                    }
                    Err(e) if skip_bad => {
                        session.consumed(&record);
                        session.skip(&progress, rejected(&name, &record, e, args.classes, true))?;
                        consumed += 1;
                    }
                    Err(e) => {
                        finish(&mut session, &mut input, consumed)?;
                        bail!(rejected(&name, &record, e, args.classes, false));
                    }
                }
            }
        }
        // With more rows ready, predictions and acknowledgements go out in bursts.
        let backlog = input.backlog();
        session.send_predictions(backlog)?;
        let every = args.checkpoint_every;
        let periodic = !waiting && every > 0 && session.rows.is_multiple_of(every);
        let unacked = input.unacked(consumed);
        if periodic || (has_checkpoint && (unacked >= ACK_BATCH || (waiting && unacked > 0))) {
            if session.checkpoint()? {
                input.commit(consumed);
            } else {
                progress.suspend(|| tell!("kestrel: checkpoint put off: --output's broker has not acknowledged"));
            }
        } else if !has_checkpoint && (!backlog || unacked >= ACK_BATCH) {
            // At once when no more rows are ready: a broker sends only so many
            // unacknowledged messages, and a batch of them would wait for the last
            // (measured: 0.25 ms median latency at 1000 messages/s acknowledging each,
            // 28 ms by 16). With rows ready, the rows ahead are learned first anyway. A
            // row's prediction goes out before its message is acknowledged.
            session.send_predictions(false)?;
            input.commit(consumed);
        }
    }
    progress.finish_and_clear();
    finish(&mut session, &mut input, consumed)?;
    session.publish_summary()?;
    // As `train` stops on a file of bad rows: a run that learned nothing but bad rows
    // is an error for the script that ran it, after the summary has said so.
    if session.seen == 0 && session.skipped > 0 {
        bail!("{name}: no row was learned{}", commands::bad_rows_skipped(session.skipped));
    }
    if session.seen == 0 && session.unlabelled() > 0 {
        bail!("{name}: no row was learned: the {} rows read had no label", session.unlabelled());
    }
    Ok(())
}

/// Why the learner rejected `record`, naming its line; `classes` is `--classes`, and
/// `skipping` whether `--on-error skip` leaves the row out (no need to suggest it then).
fn rejected(name: &str, record: &Record, error: kestrel_core::Error, classes: usize, skipping: bool) -> String {
    match error {
        kestrel_core::Error::InvalidLabel { .. } => format!(
            "{name}:{}: label {} cannot be learned: it would be a class past --classes {classes} (a numeric \
             target is a regressor's: --learner slkl), or the scalar does not hold it exactly",
            record.line, record.label
        ),
        // Only the detector's normalised kernel refuses a row by this name.
        kestrel_core::Error::InvalidParam { name: "x" } => format!(
            "{name}:{}: the row's kernel value with itself is 0 or less (a row of zeros under a linear or \
             polynomial kernel), so the normalised kernel gives it no direction: use --kernel rbf{}",
            record.line,
            if skipping { "" } else { ", or --on-error skip to leave such rows out" }
        ),
        other => format!("{name}:{}: {other}", record.line),
    }
}

/// One row's message on an `--output` topic; the keys in alphabetical order, as they
/// always were. serde_json writes a NaN prediction, probability or score as `null`.
#[derive(serde::Serialize)]
struct PredictionMessage<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    flag: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    label: Option<Label<'a>>,
    prediction: Label<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probabilities: Option<serde_json::Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    probability: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<f64>,
    seq: u64,
}

/// A class by its name, or a number.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Label<'a> {
    Name(&'a str),
    Number(f64),
}

/// The message for `record` (the stream's row number `row` unless it carries a
/// sequence number): the prediction (a class name when the classes have names), the
/// label when the row has one, a detector's score and flag, and with `--probabilities` a
/// classifier's probability of its prediction and of each class.
fn prediction_message(
    detector: bool,
    names: &ClassNames,
    (prediction, score): (Option<f64>, Option<f64>),
    record: &Record,
    row: u64,
    probabilities: Option<(f64, serde_json::Map<String, Value>)>,
) -> Vec<u8> {
    let value = prediction.unwrap_or(f64::NAN);
    let label = if !record.class_name.is_empty() {
        Some(Label::Name(&record.class_name))
    } else {
        record.label.is_finite().then_some(Label::Number(record.label))
    };
    let message = PredictionMessage {
        flag: detector.then_some(value == 1.0),
        label,
        prediction: match names.name(value) {
            Some(class) if !detector => Label::Name(class),
            _ => Label::Number(value),
        },
        score: detector.then(|| score.unwrap_or(f64::NAN)),
        seq: record.seq.unwrap_or(row),
        probability: probabilities.as_ref().map(|(p, _)| *p),
        probabilities: probabilities.map(|(_, by_class)| by_class),
    };
    // Serialising strings and numbers into a Vec cannot fail.
    serde_json::to_vec(&message).unwrap_or_default()
}

/// The probability a classifier gave its `prediction` of the row last taken, among the
/// `probabilities` of its classes (NaN without one: before any label).
fn predicted_probability(learner: &dyn OnlineLearner, probabilities: &[f64], prediction: Option<f64>) -> f64 {
    let at = prediction.and_then(|p| learner.class_labels().iter().position(|&label| label == p));
    at.and_then(|k| probabilities.get(k)).copied().unwrap_or(f64::NAN)
}

/// Rolling metrics every `--report-every` samples: JSON lines on stdout with `--json`,
/// else on stderr.
///
/// # Errors
/// The write to standard output (its reader went away: the stream ends, its model and
/// checkpoint saved, as when the input ends).
fn report(session: &mut Session, progress: &ProgressBar) -> std::io::Result<()> {
    let (every, seen) = (session.args.report_every as u64, session.seen);
    if every == 0 || seen % every != 0 {
        return Ok(());
    }
    let (accuracy, mse, log_loss) = session.metrics.take_period();
    let metrics = &session.metrics;
    let line = if session.learner.is_detector() {
        let detections = &metrics.detections;
        json!({"n": seen, "flagged": detections.flagged, "auc": detections.auc()})
    } else if session.learner.is_classifier() {
        json!({
            "n": seen,
            "rolling_accuracy": accuracy,
            "accuracy": metrics.accuracy(),
            "rolling_log_loss": log_loss,
            "log_loss": metrics.log_loss(),
        })
    } else {
        json!({"n": seen, "rolling_mse": mse, "mse": metrics.mse()})
    };
    if session.args.json {
        progress.suspend(|| say!("{line}"))?;
    } else {
        progress.suspend(|| tell!("kestrel: {line}"));
    }
    if let Some(sink) = &mut session.metrics_sink
        && let Err(e) = sink.publish(line.to_string().into_bytes(), true)
    {
        progress.suspend(|| tell!("kestrel: --metrics-topic: {e}"));
    }
    Ok(())
}

/// A spinner with a count on stderr, only when stderr is a terminal.
fn progress_bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos} samples, {per_sec}").unwrap_or(ProgressStyle::default_spinner()),
    );
    bar
}
