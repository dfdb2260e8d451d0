//! The `kestrel` command-line tool.
//!
//! Exit codes: 0 success, 1 runtime or data error, 2 usage error (clap's own).

mod demo;

use clap::{Parser, Subcommand};

/// Kernel learning under a fixed memory budget.
#[derive(Parser)]
#[command(name = "kestrel", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs the built-in demonstration: memory budgets and factorizations of a kernel
    /// matrix on a deterministic data set. Needs no arguments.
    Demo {
        /// Seed of the generated data set.
        #[arg(long, default_value_t = 7)]
        seed: u64,
    },
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo { seed } => demo::run(seed),
    };
    if let Err(error) = result {
        eprintln!("kestrel: error: {error:#}");
        std::process::exit(1);
    }
}
