//! `kestrel stream`: prequential learning with rolling metrics.

use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};
use kestrel_core::{Kernel, Real, dcd, slkl};
use kestrel_stream::model_file;
use kestrel_stream::online::{OnlineLearner, Prequential, WindowSlkl, WindowSvm};
use kestrel_stream::source::{self, Format, Record};
use serde_json::json;

use crate::args::{FormatArg, KernelArg, Learner, LossArg, OnErrorArg, ScalarArg, StreamArgs};

/// `kestrel stream`.
pub fn run(args: &StreamArgs) -> Result<()> {
    match args.scalar {
        ScalarArg::F64 => run_in::<f64>(args),
        ScalarArg::F32 => run_in::<f32>(args),
    }
}

fn learner<T: Real>(args: &StreamArgs, dim: usize) -> Result<Box<dyn OnlineLearner>> {
    Ok(match args.learner {
        Learner::Svm => {
            let loss = match args.loss {
                LossArg::Hinge => dcd::Loss::Hinge,
                LossArg::SquaredHinge => dcd::Loss::SquaredHinge,
            };
            let params = dcd::Params::new().loss(loss).c(T::from_f64(args.c)).bias(T::from_f64(args.bias)).check()?;
            Box::new(WindowSvm::<T>::new(args.window, dim, params, args.steps_per_sample, args.seed)?)
        }
        Learner::Slkl => {
            let gamma = T::from_f64(args.gamma);
            let kernel = match args.kernel {
                KernelArg::Rbf => Kernel::rbf(gamma)?,
                KernelArg::Poly => Kernel::polynomial(args.degree, gamma, T::from_f64(args.coef0))?,
                KernelArg::Linear => Kernel::linear(),
            };
            let params = slkl::Params::new().kernel(kernel).nu(T::from_f64(args.nu)).seed(args.seed).check()?;
            Box::new(WindowSlkl::<T>::new(args.window, dim, args.centers, params, args.steps_per_sample))
        }
        Learner::Rsvm => bail!("`kestrel stream --learner rsvm` is not available yet: use `train --learner rsvm`"),
    })
}

fn run_in<T: Real>(args: &StreamArgs) -> Result<()> {
    let format = match args.input.format {
        FormatArg::Auto => Format::Auto,
        FormatArg::Csv => Format::Csv,
        FormatArg::Libsvm => Format::LibSvm,
    };
    let mut reader = source::open(&args.input.input, format, args.input.label_column.as_deref())?;
    let dim = args.dim.or(reader.dim_hint()).context("LibSVM input needs --dim (a CSV header states it)")?;
    let mut learner = learner::<T>(args, dim)?;
    let progress = progress_bar();
    let mut metrics = Prequential::default();
    let (mut record, mut skipped, mut seen) = (Record::default(), 0usize, 0usize);
    let start = Instant::now();
    loop {
        match reader.next_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) if args.input.on_error == OnErrorArg::Skip => {
                skipped += 1;
                progress.suspend(|| eprintln!("kestrel: skipped {e}"));
                continue;
            }
            Err(e) => {
                save(args, learner.as_mut())?;
                return Err(e.into());
            }
        }
        let name = reader.name().to_string();
        let outcome = learner.predict(&record).and_then(|p| learner.learn(&record).map(|()| p));
        match outcome {
            Ok(prediction) => {
                if let Some(p) = prediction {
                    metrics.record(p, record.label);
                }
            }
            Err(e) if args.input.on_error == OnErrorArg::Skip => {
                skipped += 1;
                progress.suspend(|| eprintln!("kestrel: skipped {name}:{}: {e}", record.line));
                continue;
            }
            Err(e) => {
                save(args, learner.as_mut())?;
                bail!("{name}:{}: {e}", record.line);
            }
        }
        seen += 1;
        progress.inc(1);
        if args.report_every > 0 && seen % args.report_every == 0 {
            let (accuracy, mse) = metrics.take_period();
            let line = if learner.is_classifier() {
                json!({"n": seen, "rolling_accuracy": accuracy, "accuracy": metrics.accuracy()})
            } else {
                json!({"n": seen, "rolling_mse": mse, "mse": metrics.mse()})
            };
            progress.suspend(|| if args.json { println!("{line}") } else { eprintln!("kestrel: {line}") });
        }
    }
    progress.finish_and_clear();
    save(args, learner.as_mut())?;
    let seconds = start.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 { seen as f64 / seconds } else { 0.0 };
    let summary = if learner.is_classifier() {
        json!({"n": metrics.n, "accuracy": metrics.accuracy(), "skipped": skipped, "samples_per_sec": rate})
    } else {
        json!({"n": metrics.n, "mse": metrics.mse(), "skipped": skipped, "samples_per_sec": rate})
    };
    println!("{summary}");
    Ok(())
}

/// Writes the current model when `--out` is set (also on the way out of a failed run, so
/// nothing learned is lost).
fn save(args: &StreamArgs, learner: &mut dyn OnlineLearner) -> Result<()> {
    if let Some(path) = &args.out {
        match learner.encode() {
            Ok(bytes) => model_file::write_atomic(path, &bytes)?,
            Err(e) => eprintln!("kestrel: no model written to {}: {e}", path.display()),
        }
    }
    Ok(())
}

/// A spinner with a count on stderr, only when stderr is a terminal.
pub fn progress_bar() -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_style(
        ProgressStyle::with_template("{spinner} {pos} samples, {per_sec}").unwrap_or(ProgressStyle::default_spinner()),
    );
    bar
}
