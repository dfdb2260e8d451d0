//! `kestrel stream`: prequential learning with rolling metrics, checkpoints and signals.
//!
//! Records from a pipe or a serial port are read on a thread of their own ([`Records`]),
//! so the loop notices SIGINT/SIGTERM between waits even while the input is silent. The loop
//! counts the input rows it consumes (records read, bad ones included): a checkpoint holds
//! that count with the learner's state and the metrics, and `--resume` reads the input
//! again from its start, skips as many rows, and continues where the checkpoint was — so
//! the final model is the one an uninterrupted run gives.
//!
//! `--output` writes one line per sample learned (its prediction; a detector's score and
//! flag), flushed at each checkpoint, which records the bytes written: a resume cuts the
//! file back to them, so every sample's line is there once.
//!
//! A run ends at the end of its input, after `--max-rows` input rows (counted from the
//! stream's start: a resumed run's include the checkpoint's), or when no row came for
//! `--idle-timeout` (from the start too) — each an ordinary end.
//!
//! Nothing learned is lost on the way out: at the end of the input, on SIGINT/SIGTERM
//! (exit code 130/143) and before stopping on a bad row (exit code 1) the checkpoint and
//! the model are written when `--checkpoint` and `--out` are set.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kestrel_core::Real;
use kestrel_stream::checkpoint::{Checkpoint, RunConfig};
use kestrel_stream::class_names::ClassNames;
use kestrel_stream::online::{OnlineLearner, Prequential};
use kestrel_stream::source::{Next, ReadError, Record, Records};
use kestrel_stream::{file, model};
use serde_json::{Value, json};

use crate::Usage;
use crate::args::{OnErrorArg, ScalarArg, StreamArgs};
use crate::signals::{self, Signals};
use crate::{commands, stream_setup};

/// The longest the loop waits for a record before it looks for a signal again.
const POLL: Duration = Duration::from_millis(100);

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
    metrics: Prequential,
    output: Option<RowOutput>,
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
    fn resume(&mut self, path: &Path) -> Result<u64> {
        let saved = Checkpoint::read(path).context("cannot resume")?;
        if let Some(difference) = saved.config.difference(&self.config) {
            bail!("cannot resume from {}: {difference}", path.display());
        }
        self.learner.restore_state(&saved.learner).with_context(|| format!("cannot resume from {}", path.display()))?;
        (self.rows, self.seen, self.skipped, self.metrics) = (saved.rows, saved.seen, saved.skipped, saved.metrics);
        if let Some(output) = &self.args.output {
            self.output = Some(RowOutput::open(output, Some(saved.output_bytes))?);
        }
        Ok(saved.rows)
    }

    /// Flushes `--output`, and writes the checkpoint when `--checkpoint` is set.
    fn checkpoint(&mut self) -> Result<()> {
        if let Some(output) = &mut self.output {
            output.writer.flush().context("--output")?;
        }
        let Some(path) = &self.args.checkpoint else { return Ok(()) };
        let checkpoint = Checkpoint {
            config: self.config.clone(),
            rows: self.rows,
            seen: self.seen,
            skipped: self.skipped,
            metrics: self.metrics.clone(),
            output_bytes: self.output.as_ref().map_or(0, |output| output.bytes),
            learner: self.learner.save_state()?,
        };
        Ok(checkpoint.write(path)?)
    }

    /// Scores the learner's prediction for `record` and writes its `--output` line.
    fn scored(&mut self, prediction: Option<f64>, record: &Record) -> Result<()> {
        let score = self.learner.last_score();
        if self.learner.is_detector() {
            self.metrics.record_detection(prediction, score, record.label);
        } else {
            self.metrics.record(prediction, record.label);
        }
        let Some(output) = &mut self.output else { return Ok(()) };
        let value = prediction.unwrap_or(f64::NAN);
        let line = match (self.learner.is_detector(), self.names.name(value)) {
            (true, _) => format!("{},{value}", score.unwrap_or(f64::NAN)),
            (false, Some(class)) => class.to_string(),
            (false, None) => value.to_string(),
        };
        output.line(&line).context("--output")
    }

    /// Writes the checkpoint and the model (each when asked for): what was learned so far
    /// is kept whatever ends the run.
    fn save(&mut self) -> Result<()> {
        self.checkpoint()?;
        if let Some(path) = &self.args.out {
            // A detector's model has no classes: its labels were only scored against.
            let classes = !self.names.is_empty() && self.learner.is_classifier();
            let named = |bytes| match classes {
                false => Ok(bytes),
                true => model::with_class_names(bytes, &self.names),
            };
            match self.learner.encode().and_then(named) {
                Ok(bytes) => file::write_atomic(path, &bytes)?,
                Err(e) => eprintln!("kestrel: no model written to {}: {e}", path.display()),
            }
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

    /// A bad row under `--on-error skip`: counted, reported, consumed.
    fn skip(&mut self, progress: &ProgressBar, message: String) {
        // Saturating: the counters may come from a checkpoint.
        self.skipped = self.skipped.saturating_add(1);
        self.rows = self.rows.saturating_add(1);
        progress.suspend(|| eprintln!("kestrel: skipped {message}"));
    }

    fn summary(&self, rate: f64) -> Value {
        let (n, skipped) = (self.metrics.n, self.skipped);
        if self.learner.is_detector() {
            let mut summary = commands::detection_summary(&self.metrics.detections, skipped);
            summary.insert("samples_per_sec".into(), json!(rate));
            return Value::Object(summary);
        }
        if self.learner.is_classifier() {
            json!({"n": n, "accuracy": self.metrics.accuracy(), "skipped": skipped, "samples_per_sec": rate})
        } else {
            json!({"n": n, "mse": self.metrics.mse(), "skipped": skipped, "samples_per_sec": rate})
        }
    }
}

fn run_in<T: Real>(args: &StreamArgs) -> Result<()> {
    let signals = Signals::install().context("cannot install the SIGINT/SIGTERM handlers")?;
    let reader = commands::open(&args.input, commands::labels_for(args.learner))?;
    let name = reader.name().to_string();
    let dim =
        args.dim.or(reader.dim_hint()).ok_or(Usage("LibSVM input needs --dim (a CSV header states it)".into()))?;
    let learner = stream_setup::learner::<T>(args, dim)?;
    let config = stream_setup::run_config(args, dim)?;
    let names = ClassNames::new();
    let metrics = Prequential::default();
    let mut session = Session { args, config, learner, names, rows: 0, seen: 0, skipped: 0, metrics, output: None };
    let resume_rows = match (&args.checkpoint, args.resume) {
        (Some(path), true) => session.resume(path)?,
        _ => 0,
    };
    if let (Some(path), None) = (&args.output, &session.output) {
        session.output = Some(RowOutput::open(path, None)?);
    }
    let mut input = Records::new(reader, &args.input.input);
    let progress = progress_bar();
    progress.set_position(session.seen);
    let (mut record, mut to_skip) = (Record::default(), resume_rows);
    let (start, seen_at_start) = (Instant::now(), session.seen);
    let rate = |session: &Session| {
        let seconds = start.elapsed().as_secs_f64();
        if seconds > 0.0 { (session.seen - seen_at_start) as f64 / seconds } else { 0.0 }
    };
    let skip_bad = args.input.on_error == OnErrorArg::Skip;
    let idle_timeout = args.idle_timeout.map(Duration::from_secs_f64);
    let mut last_row = Instant::now();
    loop {
        if args.max_rows.is_some_and(|max| session.rows >= max) {
            break;
        }
        if let Some(signal) = signals.received() {
            progress.finish_and_clear();
            session.save()?;
            println!("{}", session.summary(rate(&session)));
            eprintln!("kestrel: stopped by {} after {} input rows", signals::name(signal), session.rows);
            std::process::exit(128 + signal);
        }
        let next = match input.next(&mut record, POLL) {
            Next::Record => session.name(&name, &mut record),
            other => other,
        };
        if next != Next::Waiting {
            last_row = Instant::now();
        }
        if to_skip > 0 && next != Next::Waiting {
            if next == Next::End {
                let read = resume_rows - to_skip;
                bail!("{name} ended after {read} rows, but the checkpoint had consumed {resume_rows}");
            }
            to_skip -= 1;
            continue;
        }
        match next {
            Next::Waiting if idle_timeout.is_some_and(|idle| last_row.elapsed() >= idle) => {
                eprintln!("kestrel: no row for {:?} (--idle-timeout): ending", last_row.elapsed());
                break;
            }
            Next::Waiting => continue,
            Next::End => break,
            Next::Bad(e) if skip_bad => session.skip(&progress, e.to_string()),
            Next::Bad(e) => {
                session.save()?;
                return Err(e.into());
            }
            Next::Record => match session.learner.test_then_train(&record) {
                Ok(prediction) => {
                    session.scored(prediction, &record)?;
                    session.rows = session.rows.saturating_add(1);
                    session.seen = session.seen.saturating_add(1);
                    progress.inc(1);
                    report(&mut session, &progress);
                }
                Err(e) if skip_bad => session.skip(&progress, rejected(&name, &record, e, args.classes)),
                Err(e) => {
                    session.save()?;
                    bail!(rejected(&name, &record, e, args.classes));
                }
            },
        }
        if args.checkpoint_every > 0 && session.rows.is_multiple_of(args.checkpoint_every) {
            session.checkpoint()?;
        }
    }
    progress.finish_and_clear();
    session.save()?;
    println!("{}", session.summary(rate(&session)));
    Ok(())
}

/// Why the learner rejected `record`, naming its line.
fn rejected(name: &str, record: &Record, error: kestrel_core::Error, classes: usize) -> String {
    match error {
        kestrel_core::Error::InvalidLabel { .. } if record.label.is_nan() => format!(
            "{name}:{}: the row has no label (--label-column none); this learner learns from labels",
            record.line
        ),
        kestrel_core::Error::InvalidLabel { .. } => format!(
            "{name}:{}: label {} cannot be learned: it would be a class past --classes {classes}, or the \
             scalar does not hold it exactly",
            record.line, record.label
        ),
        other => format!("{name}:{}: {other}", record.line),
    }
}

/// Rolling metrics every `--report-every` samples: JSON lines on stdout with `--json`,
/// else on stderr.
fn report(session: &mut Session, progress: &ProgressBar) {
    let (every, seen) = (session.args.report_every as u64, session.seen);
    if every == 0 || seen % every != 0 {
        return;
    }
    let (accuracy, mse) = session.metrics.take_period();
    let metrics = &session.metrics;
    let line = if session.learner.is_detector() {
        let detections = &metrics.detections;
        json!({"n": seen, "flagged": detections.flagged, "auc": detections.auc()})
    } else if session.learner.is_classifier() {
        json!({"n": seen, "rolling_accuracy": accuracy, "accuracy": metrics.accuracy()})
    } else {
        json!({"n": seen, "rolling_mse": mse, "mse": metrics.mse()})
    };
    progress.suspend(|| if session.args.json { println!("{line}") } else { eprintln!("kestrel: {line}") });
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
