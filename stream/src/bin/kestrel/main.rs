//! The `kestrel` command-line tool.
//!
//! Exit codes: 0 success (also when the reader of standard output went away, as `kestrel
//! predict | head` does), 1 runtime or data error, 2 usage error: a flag out of its range
//! (clap's own) or a configuration the learner refuses ([`Usage`]).

// Nothing from input may panic: no unwrap/expect/panic/unreachable, no unchecked indexing
// or truncating casts outside tests (a provably safe site says why it is allowed).
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::indexing_slicing,
        clippy::cast_possible_truncation
    )
)]

/// `println!` that hands a failed write back for `?` instead of panicking on it: standard
/// output may be a pipe whose reader went away (`kestrel train --json | head -c 80`), a run
/// [`reader_went_away`] then ends quietly.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `eprintln!` that never panics: a diagnostic that cannot be written (standard error's
/// reader went away, as in `kestrel train … 2>&1 | head -1`) is dropped, and the work goes
/// on.
macro_rules! tell {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod args;
mod budget_command;
mod cluster_command;
mod commands;
mod demo;
mod device_checkpoint;
mod export_command;
mod import_command;
mod inspect_command;
mod npkl_command;
mod report;
mod signals;
mod stream_command;
mod stream_setup;
mod train_command;
mod transform_command;
mod tune_command;

use args::{Cli, Command};
use clap::Parser;

/// A configuration refused before any work: reported like clap's usage errors, exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Usage(String);

fn main() {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Train(args) => train_command::run(args),
        Command::Tune(args) => tune_command::run(args),
        Command::Stream(args) => stream_command::run(args),
        Command::Predict(args) => commands::predict(args),
        Command::Eval(args) => commands::eval(args),
        Command::Inspect(args) => inspect_command::inspect(args),
        Command::Export(args) => export_command::run(args),
        Command::Import(args) => import_command::run(args),
        Command::Budget(args) => budget_command::budget(args),
        Command::Npkl(args) => npkl_command::run(args),
        Command::Cluster(args) => cluster_command::run(args),
        Command::Transform(args) => transform_command::run(args),
        Command::Demo { seed, report } => demo::run(*seed, report.as_deref()),
    };
    if let Err(error) = result {
        if reader_went_away(&error) {
            return;
        }
        tell!("kestrel: error: {error:#}");
        let usage = error.downcast_ref::<Usage>().is_some();
        std::process::exit(if usage { 2 } else { 1 });
    }
}

/// `true` when the error is a write to a pipe whose reader has gone (`kestrel predict |
/// head`): the reader has what it wanted, and the run ends quietly, as a Unix tool does.
fn reader_went_away(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
