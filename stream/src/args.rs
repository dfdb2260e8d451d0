//! The command-line contract of `kestrel` (flag names are fixed: scripts use them).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Kernel learning under a fixed memory budget: train, predict, evaluate and stream.
#[derive(Parser)]
#[command(name = "kestrel", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Trains a model on a data set and writes the model file.
    Train(TrainArgs),
    /// Prequential (test-then-train) learning from a file, a pipe or a serial port.
    Stream(StreamArgs),
    /// Writes one prediction per input row.
    Predict(PredictArgs),
    /// Scores a model on a labelled data set.
    Eval(EvalArgs),
    /// Describes a model file.
    Inspect(InspectArgs),
    /// Bytes a configuration needs, or the largest one that fits a budget.
    Budget(BudgetArgs),
    /// Learns a kernel from must-link / cannot-link pairs (NPKL-BCD) and clusters with it.
    Npkl(crate::npkl_command::NpklArgs),
    /// Runs the built-in demonstration on a deterministic data set. Needs no arguments.
    Demo {
        /// Seed of the generated data set.
        #[arg(long, default_value_t = 7)]
        seed: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Learner {
    /// Stochastic low-rank kernel learning (regression).
    Slkl,
    /// Linear SVM by dual coordinate descent.
    Svm,
    /// Reduced-kernel SVM.
    Rsvm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Auto,
    Csv,
    Libsvm,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    Rbf,
    Poly,
    Linear,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LossArg {
    Hinge,
    SquaredHinge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SelectArg {
    Irsvm,
    Random,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScalarArg {
    F64,
    F32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TargetArg {
    Host,
    CortexM,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OnErrorArg {
    Skip,
    Stop,
}

/// The kernel of the kernel learners (slkl, rsvm).
#[derive(Args, Clone)]
pub struct KernelArgs {
    /// Kernel (slkl, rsvm).
    #[arg(long, value_enum, default_value_t = KernelArg::Rbf)]
    pub kernel: KernelArg,
    /// Kernel width: RBF is exp(−gamma‖x−x'‖²); polynomial (gamma⟨x,x'⟩ + coef0)^degree.
    #[arg(long, default_value_t = 0.5)]
    pub gamma: f64,
    /// Polynomial degree.
    #[arg(long, default_value_t = 3)]
    pub degree: u32,
    /// Polynomial offset.
    #[arg(long, default_value_t = 0.0)]
    pub coef0: f64,
}

impl KernelArgs {
    /// The kernel these flags describe.
    ///
    /// # Errors
    /// `InvalidParam` naming the parameter out of range.
    pub fn build<T: kestrel_core::Real>(&self) -> Result<kestrel_core::Kernel<T>, kestrel_core::Error> {
        let gamma = T::from_f64(self.gamma);
        match self.kernel {
            KernelArg::Rbf => kestrel_core::Kernel::rbf(gamma),
            KernelArg::Poly => kestrel_core::Kernel::polynomial(self.degree, gamma, T::from_f64(self.coef0)),
            KernelArg::Linear => Ok(kestrel_core::Kernel::linear()),
        }
    }
}

/// Where the data comes from and how to read it.
#[derive(Args, Clone)]
pub struct InputArgs {
    /// Data file, `-` for standard input, or `serial:DEVICE[@BAUD]`.
    #[arg(long)]
    pub input: String,
    /// Input format (auto: by extension, else by the first line).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// CSV column holding the label or target (default: the last).
    #[arg(long)]
    pub label_column: Option<String>,
    /// What to do with a bad row: stop with exit code 1, or skip it and count it.
    #[arg(long, value_enum, default_value_t = OnErrorArg::Stop)]
    pub on_error: OnErrorArg,
}

#[derive(Args)]
pub struct TrainArgs {
    /// The learner.
    #[arg(long, value_enum)]
    pub learner: Learner,
    #[command(flatten)]
    pub input: InputArgs,
    /// Where to write the model file.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// SLKL's sparsity parameter, in units of the target variance: ν = nu·Var(y).
    #[arg(long, default_value_t = 0.1)]
    pub nu: f64,
    /// Candidate centres (slkl, default 256) or the most centres (rsvm, default 64).
    #[arg(long)]
    pub centers: Option<usize>,
    /// Most active centres m0 (slkl; default: as many as candidates).
    #[arg(long)]
    pub max_active: Option<usize>,
    /// Train on the last N rows only.
    #[arg(long)]
    pub window: Option<usize>,
    /// SVM cost C.
    #[arg(long, default_value_t = 1.0)]
    pub c: f64,
    /// SVM loss (LIBLINEAR -s 3 is hinge, -s 1 squared hinge).
    #[arg(long, value_enum, default_value_t = LossArg::SquaredHinge)]
    pub loss: LossArg,
    /// Value of the constant bias feature (LIBLINEAR -B); 0 disables it.
    #[arg(long, default_value_t = 1.0)]
    pub bias: f64,
    /// Stopping tolerance (LIBLINEAR -e for the SVMs, relative decrease for SLKL).
    #[arg(long)]
    pub eps: Option<f64>,
    /// Reduced-set selection (rsvm).
    #[arg(long, value_enum, default_value_t = SelectArg::Irsvm)]
    pub select: SelectArg,
    /// IRSVM threshold on the distance of a candidate's kernel column to the span of the
    /// centres' (rsvm), as a root-mean-square residual per training point: δ/√n
    /// (default 0.005).
    #[arg(long)]
    pub delta: Option<f64>,
    /// Train the reduced-kernel SVM on the raw features K(x, Ã) instead of the Nyström
    /// features L⁻¹K(x, Ã) (rsvm).
    #[arg(long)]
    pub raw_features: bool,
    /// Scalar type of the computation and the model.
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Memory budget for the learner: a number of bytes, or with KiB / MiB.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<usize>,
    /// Print a JSON summary on standard output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct StreamArgs {
    /// The learner (windowed).
    #[arg(long, value_enum)]
    pub learner: Learner,
    #[command(flatten)]
    pub input: InputArgs,
    /// Number of features (required for LibSVM input; a CSV header states it).
    #[arg(long)]
    pub dim: Option<usize>,
    /// Samples the learner keeps.
    #[arg(long, default_value_t = 256)]
    pub window: usize,
    /// Centres: M samples spread over the first window of the stream (slkl), or the most
    /// centres the streaming selection keeps during the warm-up (rsvm).
    #[arg(long, default_value_t = 32)]
    pub centers: usize,
    /// Coordinate steps after each arrival.
    #[arg(long, default_value_t = 5)]
    pub steps_per_sample: usize,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// SLKL's ν (absolute: a stream's target variance is not known in advance).
    #[arg(long, default_value_t = 0.01)]
    pub nu: f64,
    /// SVM cost C (svm, rsvm).
    #[arg(long, default_value_t = 1.0)]
    pub c: f64,
    /// SVM loss (svm, rsvm).
    #[arg(long, value_enum, default_value_t = LossArg::SquaredHinge)]
    pub loss: LossArg,
    /// SVM bias feature value (svm, rsvm).
    #[arg(long, default_value_t = 1.0)]
    pub bias: f64,
    /// Centre selection threshold (rsvm): during the warm-up (the first --window samples)
    /// a sample becomes a centre when the feature-space distance of φ(x) to the span of
    /// the centres is at least δ; for RBF that is the sine of the angle, in (0, 1].
    #[arg(long, default_value_t = 0.3)]
    pub delta: f64,
    /// Scalar type.
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Checkpoint file: the learner's state, the metrics and the input rows consumed,
    /// written atomically every --checkpoint-every rows, at the end of the input, on
    /// SIGINT/SIGTERM and before stopping on a bad row.
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// Input rows (skipped ones included) between checkpoints; 0 writes only the final one.
    #[arg(long, default_value_t = 10_000, requires = "checkpoint")]
    pub checkpoint_every: u64,
    /// Continue from --checkpoint: the same flags are required; the input is read again
    /// from its start and the rows the checkpoint consumed are skipped. Exact for a file;
    /// for standard input or a serial port the producer must send the stream again from
    /// its start (or the rows it skips are lost).
    #[arg(long, requires = "checkpoint")]
    pub resume: bool,
    /// Print rolling metrics every K samples.
    #[arg(long, default_value_t = 1000)]
    pub report_every: usize,
    /// Write the final model here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// JSON lines: one per report, then the summary.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct PredictArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write predictions here instead of standard output.
    #[arg(long)]
    pub output: Option<PathBuf>,
}

#[derive(Args)]
pub struct EvalArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct InspectArgs {
    /// The model file.
    pub model: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The learners' memory in their streaming (windowed) form, as `kestrel stream` and the
/// firmware run them: a window of N samples (svm: one windowed SVM per one-vs-rest class).
#[derive(Args)]
pub struct BudgetArgs {
    /// The learner.
    #[arg(long, value_enum)]
    pub learner: Learner,
    /// Number of features.
    #[arg(long)]
    pub dim: usize,
    /// Rows held for training (the window).
    #[arg(long, default_value_t = 1000)]
    pub window: usize,
    /// Centres (candidates for slkl).
    #[arg(long, default_value_t = 256)]
    pub centers: usize,
    /// Classes (svm, rsvm): 2 is one weight vector, more is one-vs-rest.
    #[arg(long, default_value_t = 2)]
    pub classes: usize,
    /// Scalar type.
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Where the learner runs: the width of its index type (8 bytes on a 64-bit host,
    /// 4 on a Cortex-M).
    #[arg(long, value_enum, default_value_t = TargetArg::Host)]
    pub target: TargetArg,
    /// Instead of the bytes, print the largest window that fits this many bytes.
    #[arg(long, value_parser = parse_bytes)]
    pub fit: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `4096`, `64KiB`, `1.5MiB` (also `KB`/`MB` as 1000s, `K`/`M` as 1024s).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a size (e.g. 4096, 64KiB, 2MiB)"))?;
    let scale = match unit.trim() {
        "" | "B" => 1.0,
        "KiB" | "K" | "k" => 1024.0,
        "MiB" | "M" => 1024.0 * 1024.0,
        "GiB" | "G" => 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        other => return Err(format!("unknown unit `{other}` (use B, KiB, MiB, GiB)")),
    };
    Ok((number * scale) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("64KiB"), Ok(65536));
        assert_eq!(parse_bytes("1.5MiB"), Ok(1_572_864));
        assert_eq!(parse_bytes("2MB"), Ok(2_000_000));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
