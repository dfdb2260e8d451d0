//! The command-line contract of `kestrel` (flag names are fixed: scripts use them).
//!
//! Every flag that sizes memory is range-checked here, so an impossible value is a usage
//! error naming the flag (exit code 2) before anything is allocated. The ranges:
//!
//! | flag | range |
//! |---|---|
//! | `--dim` | 1 ..= 2²⁴ (`MAX_DIM`) |
//! | `--window` | 1 ..= 2²⁴ samples |
//! | `--centers`, `--max-active` | 1 ..= 2¹⁴ |
//! | `--steps-per-sample` | 1 ..= 2¹⁶ |
//! | `--classes` | 2 ..= 2¹⁶ (`MAX_CLASSES`) |
//! | `--max-line-bytes` | 16 B ..= 1 GiB |
//! | `--degree` | 1 ..= 32 |
//! | `--c`, `--gamma`, `--eps` | finite, > 0 |
//! | `--nu`, `--delta`, `--bias` | finite, ≥ 0 |
//! | `--quantile` | 0 < q < 1 |
//! | `--warmup` | 2 ..= 2²⁴ samples |
//! | `--max-rows` | ≥ 1 |
//! | `--idle-timeout` | 0 < s ≤ 3.2·10⁷ (a year) |
//!
//! Their products (a window of `--window` samples of `--dim` features) are checked when
//! the learner is built: against `--budget` when given, and by allocating fallibly.

use std::path::{Path, PathBuf};

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use kestrel_stream::batch::class_weights::ClassWeights;
use kestrel_stream::batch::{fit, krr};
pub use kestrel_stream::limits::MAX_CENTERS;
use kestrel_stream::limits::{DEFAULT_MAX_LINE_BYTES, MAX_CLASSES, MAX_DIM};
use kestrel_stream::online::build::StreamLearner;
use kestrel_stream::source::Categorical;

/// The longest window of a learner, in samples.
pub const MAX_WINDOW: usize = 1 << 24;
/// The largest cap on coordinate steps per arrival.
pub const MAX_STEPS: usize = 1 << 16;
pub use kestrel_stream::online::build::{DEFAULT_MEMORY, DEFAULT_QUANTILE, DEFAULT_STREAM_CLASSES, DEFAULT_WARMUP};

/// `--degree`'s default (the polynomial kernel's).
pub const DEFAULT_DEGREE: u32 = 3;

/// `--bias`'s default (the SVMs' constant feature, LIBLINEAR's `-B 1`).
pub const DEFAULT_BIAS: f64 = 1.0;

/// The flags of `(flag, given, the learners that take it)` given that `learner` does not
/// take.
pub fn not_taken<L: PartialEq>(flags: &[(&'static str, bool, &[L])], learner: &L) -> Vec<&'static str> {
    flags.iter().filter(|(_, given, takers)| *given && !takers.contains(learner)).map(|(flag, ..)| *flag).collect()
}

/// A file to write for a command whose standard output holds its summary: `-`, which
/// names standard output elsewhere, is refused rather than made a file of that name.
///
/// # Errors
/// `-`.
pub fn output_file(text: &str) -> Result<PathBuf, String> {
    match text {
        "-" => Err("standard output holds the command's summary: give a file".into()),
        _ => Ok(PathBuf::from(text)),
    }
}

/// The file `--output` names, `None` for standard output: not given, or `-`.
pub fn output_path(output: Option<&Path>) -> Option<&Path> {
    output.filter(|path| *path != Path::new("-"))
}

/// A count in `min ..= max`; clap's error names the flag and the range.
pub fn count(min: usize, max: usize) -> impl TypedValueParser<Value = usize> {
    let bound = |v: usize| u64::try_from(v).unwrap_or(u64::MAX);
    clap::value_parser!(u64).range(bound(min)..=bound(max)).try_map(usize::try_from)
}

/// A finite number above 0.
pub fn positive(text: &str) -> Result<f64, String> {
    number(text).and_then(|v| if v > 0.0 { Ok(v) } else { Err(format!("`{text}` is not above 0")) })
}

/// A `--class-weight`: `balanced`, or a class's weight.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassWeightArg {
    /// `n/(k·n_c)` for every class.
    Balanced,
    /// `LABEL=WEIGHT`.
    Class(String, f64),
}

/// `balanced`, or `LABEL=WEIGHT` with the weight a finite number above 0.
pub fn class_weight(text: &str) -> Result<ClassWeightArg, String> {
    if text.trim() == "balanced" {
        return Ok(ClassWeightArg::Balanced);
    }
    let (label, weight) =
        text.rsplit_once('=').ok_or_else(|| format!("`{text}` is not LABEL=WEIGHT, nor `balanced`"))?;
    let label = label.trim();
    if label.is_empty() {
        return Err(format!("`{text}` names no class"));
    }
    Ok(ClassWeightArg::Class(label.to_string(), positive(weight.trim())?))
}

/// Seconds above 0, at most a year.
pub fn timeout(text: &str) -> Result<f64, String> {
    positive(text).and_then(|v| if v <= 3.2e7 { Ok(v) } else { Err(format!("`{text}` seconds is more than a year")) })
}

/// A number strictly between 0 and 1.
pub fn quantile(text: &str) -> Result<f64, String> {
    number(text).and_then(|v| if v > 0.0 && v < 1.0 { Ok(v) } else { Err(format!("`{text}` is not between 0 and 1")) })
}

/// A finite number of at least 0.
pub fn non_negative(text: &str) -> Result<f64, String> {
    number(text).and_then(|v| if v >= 0.0 { Ok(v) } else { Err(format!("`{text}` is negative")) })
}

pub use kestrel_stream::batch::fit::Setting;

/// `auto` or a finite number above 0.
pub fn auto_positive(text: &str) -> Result<Setting, String> {
    if text.trim() == "auto" { Ok(Setting::Auto) } else { positive(text).map(Setting::Value) }
}

/// `auto` or a finite number of at least 0.
pub fn auto_non_negative(text: &str) -> Result<Setting, String> {
    if text.trim() == "auto" { Ok(Setting::Auto) } else { non_negative(text).map(Setting::Value) }
}

/// A finite number.
pub fn number(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("`{text}` is not a finite number")),
    }
}

/// Kernel learning under a fixed memory budget: train, predict, evaluate and stream.
#[derive(Parser)]
#[command(
    name = "kestrel",
    version,
    about = "Kernel learning under a memory budget known in advance: kernel SVMs and regression, novelty \
             detection, projections and clustering, on a data set, a stream or a microcontroller. Start with \
             `kestrel demo`."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Trains a model on a data set and writes the model file.
    Train(TrainArgs),
    /// Compares a learner's settings on a data set (leave-one-out or k-fold
    /// cross-validation), prints the table, and can write the best model.
    Tune(TuneArgs),
    /// Prequential (test-then-train) learning from a file, a pipe or a serial port.
    Stream(StreamArgs),
    /// Writes one prediction per input row (`NaN` for a bad row `--on-error skip` skips).
    Predict(PredictArgs),
    /// Scores a model on a labelled data set.
    Eval(EvalArgs),
    /// Describes a model file, or a `kestrel stream` checkpoint.
    Inspect(InspectArgs),
    /// Writes a model file in a form firmware compiles in: `--format c`, a C header and
    /// source holding its bytes.
    Export(crate::export_command::ExportArgs),
    /// Makes a checkpoint a device's C library wrote the model file its learner would save
    /// (`--scaler`: with the device scaler's statistics), for predict, eval and Python.
    Import(crate::import_command::ImportArgs),
    /// Bytes a configuration needs, or the largest one that fits a budget.
    Budget(BudgetArgs),
    /// Learns a kernel from must-link / cannot-link pairs (NPKL-BCD) and clusters with it.
    Npkl(crate::npkl_command::NpklArgs),
    /// Clusters a data set's rows: spectral clustering on the kNN graph, k-means, or
    /// k-means on NPKL's learned kernel.
    Cluster(crate::cluster_command::ClusterArgs),
    /// Projects a data set's rows (kernel PCA, exact or reduced; KSIR; kernel Fisher
    /// discriminant; reduced kernel CCA of two views; Laplacian eigenmap; locality
    /// preserving projection), writing the projected rows and the projection as a model
    /// file.
    Transform(crate::transform_command::TransformArgs),
    /// Runs the built-in demonstration on a deterministic data set. Needs no arguments.
    Demo {
        /// Seed of the generated data set.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Write an HTML report of the two learners' runs here.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
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
    /// Kernel novelty detection: the distance to the centre of mass of normal samples in
    /// feature space, flagged beyond a quantile of normal scores.
    Novelty,
}

impl Learner {
    /// The library's windowed learner of this name.
    pub fn stream(self) -> StreamLearner {
        match self {
            Learner::Svm => StreamLearner::Svm,
            Learner::Slkl => StreamLearner::Slkl,
            Learner::Rsvm => StreamLearner::Rsvm,
            Learner::Novelty => StreamLearner::Novelty,
        }
    }
}

/// Which samples the novelty detector learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LearnArg {
    /// The samples it does not flag.
    Unflagged,
    /// Every sample.
    All,
}

/// The learners `kestrel train` fits to a whole data set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TrainLearner {
    /// Stochastic low-rank kernel learning (regression).
    Slkl,
    /// Linear SVM by dual coordinate descent.
    Svm,
    /// Reduced-kernel SVM.
    Rsvm,
    /// Nyström kernel ridge regression, the ridge by exact leave-one-out.
    Krr,
    /// Least-squares SVM (kernel ridge on ±1 targets, one-vs-rest), the ridge by
    /// leave-one-out error.
    Lssvm,
    /// MapReduce RSVM: a reduced-kernel SVM per part of the data (--partitions), a linear
    /// SVM on their decision values.
    Mrrsvm,
    /// Kernel novelty detection: the distance to the training rows' centre of mass in
    /// feature space, flagged beyond the --quantile of the training rows' scores.
    Novelty,
    /// Smooth ε-insensitive support vector regression on the reduced kernel (ε-SSVR) by
    /// Newton–Armijo; --c (default auto: 1/λ of krr's leave-one-out ridge), --epsilon.
    Ssvr,
    /// Kernel partial least squares on krr's Nyström features by conjugate gradients (one
    /// pass over the rows per component, O(m²) memory); --components (default auto).
    Kpls,
}

impl TrainLearner {
    /// The learner's name on the command line.
    pub fn name(self) -> String {
        self.to_possible_value().map(|value| value.get_name().to_string()).unwrap_or_default()
    }

    /// The library's learner.
    pub fn fit(self) -> fit::Learner {
        match self {
            TrainLearner::Slkl => fit::Learner::Slkl,
            TrainLearner::Svm => fit::Learner::Svm,
            TrainLearner::Rsvm => fit::Learner::Rsvm,
            TrainLearner::Krr => fit::Learner::Krr,
            TrainLearner::Lssvm => fit::Learner::Lssvm,
            TrainLearner::Mrrsvm => fit::Learner::Mrrsvm,
            TrainLearner::Novelty => fit::Learner::Novelty,
            TrainLearner::Ssvr => fit::Learner::Ssvr,
            TrainLearner::Kpls => fit::Learner::Kpls,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Auto,
    Csv,
    Libsvm,
}

/// The rows in an MQTT message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PayloadArg {
    /// Told row by row: `{` starts JSON, else as a file's first line is told.
    Auto,
    /// CSV rows, the label last, no header.
    Csv,
    /// LibSVM rows.
    Libsvm,
    /// JSON objects {"x": [..], "y": .., "seq": ..}.
    Json,
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

/// The solver of rsvm's linear problem, or of krr's ridge problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SolverArg {
    /// rsvm: dual coordinate descent (LIBLINEAR's), hinge or squared hinge.
    Dcd,
    /// rsvm: the smooth SVM by Newton–Armijo: the squared hinge, smoothed.
    Ssvm,
    /// krr: the exact eigendecomposition path (memory O(n·m)).
    Exact,
    /// krr: Falkon — conjugate gradients preconditioned by the Cholesky factors of the
    /// centres' kernel and of the Hessian estimated on a subsample,
    /// streaming over the rows (memory O(m²)).
    Cg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SelectArg {
    Irsvm,
    Random,
}

/// When `kestrel train` standardises the features (`--scale`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    /// When the leave-one-out error is lower standardised; always for svm and novelty.
    Auto,
    /// Always.
    On,
    /// Never: the features as they come.
    Off,
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

/// The kernel of the kernel learners and projections.
#[derive(Args, Clone)]
pub struct KernelArgs {
    /// Kernel (every learner but svm, which is linear).
    #[arg(long, value_enum, default_value_t = KernelArg::Rbf)]
    pub kernel: KernelArg,
    /// Kernel width: RBF is exp(−gamma‖x−x'‖²); polynomial (gamma⟨x,x'⟩ + coef0)^degree.
    /// Default: `train` auto, the width of highest centred kernel-target alignment on a
    /// sample (searched around the median heuristic; polynomial: the median heuristic's
    /// 1/median‖x−x'‖², whose alignment does not choose), then for rsvm, krr and lssvm the
    /// best of its octaves by leave-one-out; `stream` 1/d for d features
    /// (features of unit variance, as the stream's standardisation makes them, are then
    /// at a typical squared distance of 2d: scikit-learn's `gamma="scale"`), except rsvm's
    /// RBF width, raced: 1/d, 1/(4d) and 4/d learn side by side through the first window,
    /// and the one that predicted best goes on alone.
    #[arg(long, value_parser = auto_positive)]
    pub gamma: Option<Setting>,
    /// Polynomial degree.
    #[arg(long, default_value_t = DEFAULT_DEGREE, value_parser = clap::value_parser!(u32).range(1..=32))]
    pub degree: u32,
    /// Polynomial offset.
    #[arg(long, default_value_t = 0.0, value_parser = number)]
    pub coef0: f64,
}

impl KernelArgs {
    /// `true` when a kernel flag is given (a value other than the default).
    pub fn given(&self) -> bool {
        self.gamma.is_some() || self.kernel != KernelArg::Rbf || self.polynomial_given()
    }

    /// `--degree/--coef0` when they are given with a kernel other than the polynomial,
    /// which takes no part of them.
    pub fn ignored_by_kernel(&self) -> Option<&'static str> {
        (self.kernel != KernelArg::Poly && self.polynomial_given()).then_some("--degree/--coef0")
    }

    fn polynomial_given(&self) -> bool {
        self.degree != DEFAULT_DEGREE || self.coef0 != 0.0
    }

    /// The library's kernel settings these flags describe.
    pub fn settings(&self) -> fit::KernelSettings {
        let kind = match self.kernel {
            KernelArg::Rbf => fit::KernelChoice::Rbf,
            KernelArg::Poly => fit::KernelChoice::Poly,
            KernelArg::Linear => fit::KernelChoice::Linear,
        };
        fit::KernelSettings { kind, gamma: self.gamma, degree: self.degree, coef0: self.coef0 }
    }

    /// The kernel these flags describe with width `gamma` (`--gamma` resolved by the caller).
    ///
    /// # Errors
    /// `InvalidParam` naming the parameter out of range.
    pub fn build<T: kestrel_core::Real>(&self, gamma: f64) -> Result<kestrel_core::Kernel<T>, kestrel_core::Error> {
        self.settings().build(gamma)
    }
}

/// The linear SVM's flags (svm, and rsvm on its kernel features).
#[derive(Args, Clone)]
pub struct SvmArgs {
    /// SVM cost C (svm, rsvm). Default 1, except `train --learner rsvm`: auto, chosen by
    /// the leave-one-out error of the least-squares SVM on the same features; and `stream
    /// --learner svm`: raced, 1, 0.1 and 0.01 learn side by side through the first window,
    /// and the one that predicted best goes on alone.
    #[arg(long, value_parser = auto_positive)]
    pub c: Option<Setting>,
    /// SVM loss (svm, rsvm; LIBLINEAR -s 3 is hinge, -s 1 squared hinge).
    #[arg(long, value_enum, default_value_t = LossArg::SquaredHinge)]
    pub loss: LossArg,
    /// Value of the constant bias feature (LIBLINEAR -B; svm, rsvm); 0 disables it.
    #[arg(long, default_value_t = DEFAULT_BIAS, value_parser = non_negative)]
    pub bias: f64,
}

impl SvmArgs {
    /// The library's linear SVM settings these flags describe.
    pub fn settings(&self) -> fit::SvmSettings {
        let loss = match self.loss {
            LossArg::Hinge => kestrel_core::dcd::Loss::Hinge,
            LossArg::SquaredHinge => kestrel_core::dcd::Loss::SquaredHinge,
        };
        fit::SvmSettings { c: self.c, loss, bias: self.bias }
    }
}

/// Where the data comes from and how to read it.
#[derive(Args, Clone)]
pub struct InputArgs {
    /// Data file, `-` for standard input, or `serial:DEVICE[@BAUD]`; for `kestrel stream`
    /// also `mqtt://[USER[:PASS]@]HOST[:PORT]/TOPIC` (a topic filter, + and # allowed).
    /// CSV fields are separated by commas, tabs or semicolons (with semicolons a number may
    /// have a decimal comma, `21,5`).
    #[arg(long)]
    pub input: String,
    /// Input format (auto: by extension, else by the first line).
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// What to do with a bad row: stop with exit code 1, or skip it and count it (the first
    /// ten are told in full, then their number at every power of ten and in all).
    #[arg(long, value_enum, default_value_t = OnErrorArg::Stop)]
    pub on_error: OnErrorArg,
    /// The longest input line (bytes, or with KiB / MiB); a longer line is a bad row.
    #[arg(long, default_value_t = DEFAULT_MAX_LINE_BYTES, value_parser = bytes_in(16, 1 << 30))]
    pub max_line_bytes: usize,
}

/// CSV columns of categories, one-hot encoded (`train`, `tune`, `stream`, `cluster`, `npkl`).
#[derive(Args, Clone, Debug, Default)]
pub struct CategoricalArgs {
    /// A CSV column of categories (`idle`, `heating`; numbers are names here too), one-hot
    /// encoded: each category becomes a feature named `NAME=category`, 1 on its rows and 0
    /// elsewhere. `NAME` learns the categories from the rows (train, tune); `NAME=A,B,…`
    /// gives them, and a row of another is a bad row — as `kestrel stream` needs them,
    /// whose features are fixed at its start (there also a field of a broker's JSON rows). Repeat the flag for several. The model keeps
    /// the names: `predict` and `eval` read the column as categories again, and a category
    /// the model did not learn as none of them (all zeros).
    #[arg(long, value_name = "NAME[=A,B,…]")]
    pub categorical: Vec<Categorical>,
}

/// Which columns of a CSV are the label and the features.
#[derive(Args, Clone, Debug, Default)]
pub struct ColumnArgs {
    /// CSV column holding the label or target (default: the last). `none`: the rows have
    /// no label, every column is a feature (unlabelled readings for the novelty detector,
    /// `predict`, `transform` or `cluster`; a column named `none` is still taken). MQTT
    /// JSON rows: the field holding the label (default `y`).
    #[arg(long)]
    pub label_column: Option<String>,
    /// A CSV column to leave out, by its header name (a timestamp, an identifier): it is
    /// neither read nor checked. Repeat the flag for several; give `predict` and `eval`
    /// the same as `train`. MQTT JSON rows: a field to leave out.
    #[arg(long = "skip-column", value_name = "NAME")]
    pub skip_columns: Vec<String>,
}

#[derive(Args)]
pub struct TrainArgs {
    #[command(flatten)]
    pub settings: TrainSettings,
    /// A CSV column holding each row's weight (not a feature): the row's error costs that
    /// many times as much, as if the row were there that often (scikit-learn's
    /// `sample_weight`); a row of weight 0 is left out. svm, rsvm, lssvm, ssvr, mrrsvm and krr (its
    /// exact solver) take them, and `auto` chooses by the leave-one-out error weighed alike
    /// (the reduced set, the alignment and `--scale` count each row once); give `predict`
    /// and `eval` `--skip-column NAME`.
    #[arg(long, value_name = "NAME")]
    pub weight_column: Option<String>,
    /// Where to write the model file (`--model` names it too, as `eval` and `predict` read
    /// it).
    #[arg(long, visible_alias = "model")]
    pub out: PathBuf,
    /// Print a JSON summary on standard output.
    #[arg(long)]
    pub json: bool,
}

/// What `kestrel train` learns from and how: shared by `kestrel tune`, which trains with
/// the same flags (a number fixes a setting, leaving it out lets `auto` choose it).
#[derive(Args, Clone)]
pub struct TrainSettings {
    /// The learner. Default: chosen from the label column (and said on standard error):
    /// the novelty detector for rows without labels (`--label-column none`), krr for a
    /// numeric target (a label that is not a whole number, or distinct labels that are more
    /// than half the rows, or more than 20 that are also more than a fifth of them or are not
    /// the codes 0 or 1 to k), rsvm for classes (names, or the few whole numbers left).
    #[arg(long, value_enum)]
    pub learner: Option<TrainLearner>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub categorical: CategoricalArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// SLKL's sparsity parameter, in units of the target variance: ν = nu·Var(y)
    /// [default: 0.1]. `auto`: the best of 0.001, 0.01, 0.1 and 1 by 3-fold
    /// cross-validation (about eight fits' work).
    #[arg(long, value_parser = auto_non_negative)]
    pub nu: Option<Setting>,
    /// Candidate centres (slkl, default 256) or the most centres (rsvm, krr, lssvm;
    /// default 256).
    #[arg(long, value_parser = count(1, MAX_CENTERS))]
    pub centers: Option<usize>,
    /// Most active centres m0 (slkl; default: as many as candidates).
    #[arg(long, value_parser = count(1, MAX_CENTERS))]
    pub max_active: Option<usize>,
    /// Train on the last N rows only.
    #[arg(long, value_parser = count(1, usize::MAX))]
    pub window: Option<usize>,
    #[command(flatten)]
    pub svm: SvmArgs,
    /// Weight of a class's cost, as LABEL=WEIGHT with LABEL a label value or class name
    /// (svm, rsvm, lssvm; LIBLINEAR -wi; repeat for more classes, a class not named weighs
    /// 1), or `balanced`: each class n/(k·n_c) for k classes of n_c rows (scikit-learn's),
    /// so that a rare class weighs as much as a frequent one. With rsvm and lssvm, `auto`
    /// chooses its settings by the weighted leave-one-out error.
    #[arg(long, value_name = "LABEL=WEIGHT|balanced", value_parser = class_weight)]
    pub class_weight: Vec<ClassWeightArg>,
    /// Stopping tolerance (LIBLINEAR -e for the SVMs, relative decrease for SLKL, relative
    /// residual of krr --solver cg).
    #[arg(long, value_parser = positive)]
    pub eps: Option<f64>,
    /// Reduced-set selection (rsvm).
    #[arg(long, value_enum, default_value_t = SelectArg::Irsvm)]
    pub select: SelectArg,
    /// IRSVM threshold on the distance of a candidate's kernel column to the span of the
    /// centres' (rsvm, krr, lssvm), as a root-mean-square residual per training point in
    /// units of the kernel's mean k(x, x) (1 for rbf and laplacian): δ/(√n·mean k(x, x)).
    /// Default auto: IRSVM selects up to --centers at a small threshold (5e-4; krr in
    /// f64 1e-7) and rsvm keeps the smallest prefix whose leave-one-out error has stopped
    /// improving.
    #[arg(long, value_parser = auto_non_negative)]
    pub delta: Option<Setting>,
    /// The ridge λ of kernel ridge regression (krr, lssvm): default auto, the best of a
    /// path of half-decades by exact leave-one-out.
    #[arg(long, value_parser = auto_positive)]
    pub lambda: Option<Setting>,
    /// Parts of the data, each learned by its own reduced-kernel SVM (mrrsvm; default 4,
    /// rows assigned by a seeded hash of their contents).
    #[arg(long, value_name = "P", value_parser = count(1, kestrel_stream::batch::mrrsvm::MAX_PARTITIONS))]
    pub partitions: Option<usize>,
    /// The quantile of the training rows' scores beyond which a row is flagged (novelty).
    #[arg(long, default_value_t = DEFAULT_QUANTILE, value_parser = quantile)]
    pub quantile: f64,
    /// The label of the normal rows, a number or a class name: the novelty detector learns
    /// from these rows alone, and the others are left out (train on what is normal; `kestrel
    /// eval --normal-label` with the same label scores its flags on all of them). Implies
    /// `--learner novelty`.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub normal_label: Option<String>,
    /// Train the reduced-kernel SVM on the raw features K(x, Ã) instead of the Nyström
    /// features L⁻¹K(x, Ã) (rsvm, ssvr).
    #[arg(long)]
    pub raw_features: bool,
    /// The solver. rsvm: dcd, or ssvm, the smooth SVM by Newton–Armijo (squared hinge only;
    /// the same C); by default dcd, and for the squared hinge ssvm on each problem (one per
    /// class past two classes) dcd has not solved within 8 passes per centre (the
    /// summary's `solver` names the one whose model it is, dcd+ssvm for both, and
    /// `newton_problems` counts ssvm's). krr: exact (the eigendecomposition path, leave-one-out λ on
    /// every row) or cg (Falkon: conjugate gradients to --eps, default 1e-7 in f64 and 1e-4
    /// in f32, with the centres, gamma auto and lambda auto chosen by the exact path on a
    /// uniform subsample of 10 000 rows, λ scaled to all n rows as λ·n/10 000). Default for
    /// krr: cg when n·centers > 2^25 (e.g. more than 131 072 rows at 256 centres), else exact.
    #[arg(long, value_enum)]
    pub solver: Option<SolverArg>,
    /// Half-width of the ε-insensitive tube, in the target's units (ssvr; LIBSVM -p)
    /// [default: 0.1].
    #[arg(long, value_parser = non_negative)]
    pub epsilon: Option<f64>,
    /// Components R of kernel PLS (kpls). Default auto: the number, up to 64, whose fit on
    /// four fifths of (a subsample of at most 10 000) rows has the least squared error on
    /// the other fifth.
    #[arg(long, value_name = "R", value_parser = count(1, MAX_CENTERS))]
    pub components: Option<usize>,
    /// Standardise every feature by its mean and standard deviation over the training
    /// rows before learning; the model file carries them and `predict` (and the device)
    /// applies them to every input. `auto` (the default) standardises when that lowers the
    /// leave-one-out error `--gamma auto` ends with (one more search: the fit takes the kept
    /// copy's), and always for the linear SVM and the novelty detector, which have no such
    /// score; sparse rows and rows already standardised are taken as they come. `--scale`
    /// alone is `on`.
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        num_args = 0..=1,
        default_value_t = ScaleArg::Auto,
        default_missing_value = "on"
    )]
    pub scale: ScaleArg,
    /// Weigh the standardised features by their relevance (implies --scale; the Gaussian
    /// kernel only): one width per feature, chosen by kernel-target alignment on a sample
    /// of up to 300 rows (at most 4096 features), so features that do not bear on the target are all but ignored. The
    /// weights are kept when the leave-one-out error at the automatic width is lower with
    /// them (else the model only standardises), stored with the scaler and applied by
    /// `predict` and the device.
    #[arg(long)]
    pub relevance: bool,
    /// Keep the posterior of the Gaussian process on the centres in the model (krr, exact
    /// solver; seed 000 §4.1.4), so that `kestrel predict --std` gives each prediction's
    /// standard deviation: m² more scalars in the file (512 KiB at 256 centres in f64,
    /// where the predictor alone takes m·(d + 1)).
    #[arg(long)]
    pub posterior: bool,
    /// Give the classifier class probabilities (svm, rsvm, lssvm, mrrsvm), as LIBSVM's `-b
    /// 1`: Platt's sigmoid of each decision value, fitted to values held out by 5-fold
    /// cross-validation (five more fits, at the settings `auto` chose), kept in the model
    /// (16 bytes per decision value) for `predict --probabilities`, `eval`'s log loss and the device.
    /// Under `--budget` the folds count: the set copied once more in two parts, and 16 bytes
    /// a row and decision value, beside each fold's fit.
    #[arg(long)]
    pub probabilities: bool,
    /// Scalar type of the computation and the model.
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Memory budget for training — the data set, its copies and the solver — in bytes or
    /// with KiB / MiB, checked before training.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<usize>,
}

impl TrainSettings {
    /// The `--class-weight` flags as the library's class weights.
    fn class_weights(&self, class_names: &[String]) -> Result<ClassWeights, String> {
        if self.class_weight.contains(&ClassWeightArg::Balanced) {
            return match self.class_weight.len() {
                1 => Ok(ClassWeights::Balanced),
                _ => Err("--class-weight balanced weighs every class: give no other --class-weight".into()),
            };
        }
        let pairs = self.class_weight.iter().filter_map(|arg| match arg {
            ClassWeightArg::Class(label, weight) => Some((label, *weight)),
            ClassWeightArg::Balanced => None,
        });
        let pairs = pairs.map(|(label, weight)| {
            let named = class_names.iter().position(|name| name == label);
            #[allow(clippy::cast_precision_loss, reason = "at most 2¹⁶ class names")]
            let value = named.map(|k| k as f64).or_else(|| label.parse().ok());
            value.map(|value| (value, weight)).ok_or_else(|| format!("--class-weight {label}: no class has that name"))
        });
        Ok(ClassWeights::Given(pairs.collect::<Result<_, _>>()?))
    }

    /// The flags given (a value other than the default) that `learner` takes no part of:
    /// training tells of them, so that a flag that changed nothing is not taken for one
    /// that did (`--nu` of an SVM, `--c` of kernel ridge). Flags that do not go together
    /// with the learner at all (`--components`, `--posterior`, class weights) are refused
    /// by the fit instead.
    pub fn ignored_flags(&self, learner: TrainLearner) -> Vec<&'static str> {
        use TrainLearner::{Kpls, Krr, Lssvm, Mrrsvm, Novelty, Rsvm, Slkl, Ssvr, Svm};
        let selection = self.select != SelectArg::Irsvm || self.delta.is_some();
        let flags: [(&str, bool, &[TrainLearner]); 14] = [
            ("--kernel/--gamma", self.kernel.given(), &[Slkl, Rsvm, Krr, Lssvm, Mrrsvm, Novelty, Ssvr, Kpls]),
            ("--centers", self.centers.is_some(), &[Slkl, Rsvm, Krr, Lssvm, Mrrsvm, Novelty, Ssvr, Kpls]),
            ("--select/--delta", selection, &[Rsvm, Krr, Lssvm, Mrrsvm, Novelty, Ssvr, Kpls]),
            ("--c", self.svm.c.is_some(), &[Svm, Rsvm, Mrrsvm, Ssvr]),
            ("--loss", self.svm.loss != LossArg::SquaredHinge, &[Svm, Rsvm, Mrrsvm]),
            ("--bias", self.svm.bias != DEFAULT_BIAS, &[Svm, Rsvm, Mrrsvm]),
            ("--eps", self.eps.is_some(), &[Svm, Rsvm, Mrrsvm, Slkl, Krr]),
            ("--lambda", self.lambda.is_some(), &[Krr, Lssvm, Kpls, Ssvr]),
            ("--nu", self.nu.is_some(), &[Slkl]),
            ("--max-active", self.max_active.is_some(), &[Slkl]),
            ("--partitions", self.partitions.is_some(), &[Mrrsvm]),
            ("--quantile", self.quantile != DEFAULT_QUANTILE, &[Novelty]),
            ("--epsilon", self.epsilon.is_some(), &[Ssvr]),
            ("--raw-features", self.raw_features, &[Rsvm, Mrrsvm, Ssvr]),
        ];
        not_taken(&flags, &learner)
    }

    /// The library's fit settings these flags describe for `learner` (`--learner`'s, or
    /// the one chosen from the labels), for rows whose class `k` is named `class_names[k]`
    /// (if they are named).
    ///
    /// # Errors
    /// A `--class-weight` naming a class that is neither a number nor one of `class_names`;
    /// `balanced` beside another `--class-weight`.
    pub fn fit_settings(&self, learner: TrainLearner, class_names: &[String]) -> Result<fit::FitSettings, String> {
        let class_weights = self.class_weights(class_names)?;
        Ok(fit::FitSettings {
            learner: learner.fit(),
            kernel: self.kernel.settings(),
            svm: self.svm.settings(),
            class_weights,
            nu: self.nu,
            centers: self.centers,
            max_active: self.max_active,
            eps: self.eps,
            select: match self.select {
                SelectArg::Irsvm => fit::Select::Irsvm,
                SelectArg::Random => fit::Select::Random,
            },
            delta: self.delta,
            partitions: self.partitions,
            quantile: self.quantile,
            lambda: self.lambda,
            raw_features: self.raw_features,
            solver: match self.solver {
                Some(SolverArg::Dcd) => kestrel_stream::batch::rsvm::Solver::Dcd,
                Some(SolverArg::Ssvm) => kestrel_stream::batch::rsvm::Solver::Ssvm,
                Some(SolverArg::Exact | SolverArg::Cg) if learner != TrainLearner::Krr => {
                    return Err("--solver exact and cg are krr's".into());
                }
                // krr's solvers leave rsvm's at its default.
                None | Some(SolverArg::Exact | SolverArg::Cg) => kestrel_stream::batch::rsvm::Solver::default(),
            },
            krr_solver: match self.solver {
                None => krr::Solver::Auto,
                Some(SolverArg::Exact) => krr::Solver::Exact,
                Some(SolverArg::Cg) => krr::Solver::Cg,
                Some(SolverArg::Dcd | SolverArg::Ssvm) if learner == TrainLearner::Krr => {
                    return Err("--solver dcd and ssvm are rsvm's; krr takes exact or cg".into());
                }
                Some(SolverArg::Dcd | SolverArg::Ssvm) => krr::Solver::Auto,
            },
            epsilon: self.epsilon,
            components: self.components,
            seed: self.seed,
            budget: self.budget,
            posterior: self.posterior,
            probabilities: self.probabilities,
            searched: None,
        })
    }
}

#[derive(Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub settings: TrainSettings,
    /// A CSV column holding each row's weight, as `kestrel train --weight-column`: the
    /// candidates are fitted with it and scored by the errors it weighs.
    #[arg(long, value_name = "NAME")]
    pub weight_column: Option<String>,
    /// Kernel widths to compare, comma-separated. Default: seven octaves around the width of
    /// highest kernel-target alignment, γ*·2⁻³ … γ*·2³.
    #[arg(long, value_delimiter = ',', value_parser = positive)]
    pub gamma_grid: Vec<f64>,
    /// SVM costs to compare (svm, rsvm). Default: svm 2⁻⁵, 2⁻³, …, 2¹⁵; rsvm every
    /// C = 1/(2λ) of the leave-one-out ridge path.
    #[arg(long, value_delimiter = ',', value_parser = positive)]
    pub c_grid: Vec<f64>,
    /// Ridges to compare (krr, lssvm). Default: the leave-one-out path's half-decades.
    #[arg(long, value_delimiter = ',', value_parser = positive)]
    pub lambda_grid: Vec<f64>,
    /// SLKL ν values to compare, in units of the target variance. Default: 0.001, 0.01,
    /// 0.1, 1.
    #[arg(long, value_delimiter = ',', value_parser = non_negative)]
    pub nu_grid: Vec<f64>,
    /// Score by k-fold cross-validation: the criterion of slkl and svm (default 5 folds),
    /// and of rsvm, krr and lssvm instead of their exact leave-one-out.
    #[arg(long, value_parser = count(2, 100))]
    pub folds: Option<usize>,
    /// Train the best candidate on every row and write its model file here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the candidates and the choice as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Write an HTML report here: the score against each setting, the choice marked, and
    /// the time per candidate.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

#[derive(Args)]
pub struct StreamArgs {
    /// The learner (windowed). Default: chosen from the first good row, and said on standard
    /// error: the novelty detector for rows without labels (`--label-column none`, or with
    /// `--normal-label`), rsvm for a class name or a whole number from -1 to `--classes`,
    /// slkl for any other number (a target of small whole numbers is slkl's: give it); on
    /// `--resume`, the checkpoint's.
    #[arg(long, value_enum)]
    pub learner: Option<Learner>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub detection: DetectionArgs,
    #[command(flatten)]
    pub categorical: CategoricalArgs,
    /// Number of features (required for LibSVM input; a CSV header states it, and so does
    /// a broker's first good CSV or JSON row).
    #[arg(long, value_parser = count(1, MAX_DIM))]
    pub dim: Option<usize>,
    /// Samples the learner keeps (novelty: the normal samples whose centre of mass rows are
    /// scored against). Default: 256; novelty 48.
    #[arg(long, value_parser = count(1, MAX_WINDOW))]
    pub window: Option<usize>,
    /// Centres: the stream's first M samples, the candidates (slkl: it learns from the M-th
    /// on, and renews candidates as the stream moves), the most centres the streaming
    /// selection keeps during the warm-up (rsvm), or the centres that represent the window
    /// (novelty). Default: 32; novelty 16.
    #[arg(long, value_parser = count(1, MAX_CENTERS))]
    pub centers: Option<usize>,
    /// The most coordinate steps after each arrival: the learner steps until its stopping
    /// rule holds on the window (svm, rsvm: a pass whose projected gradients spread by at
    /// most --eps, LIBLINEAR's rule; slkl: its relative-decrease rule) or this many.
    /// Default: 300; slkl 20.
    #[arg(long, value_parser = count(1, MAX_STEPS))]
    pub steps_per_sample: Option<usize>,
    /// The stopping tolerance of the steps after each arrival: svm and rsvm, the spread of
    /// the projected gradients over a pass of the window (LIBLINEAR -e, whose 0.1 solves a
    /// window more finely than a stream's predictions gain from); slkl, the relative
    /// decrease. Default: svm 1, rsvm 0.3, slkl 0.0001.
    #[arg(long, value_parser = positive)]
    pub eps: Option<f64>,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// SLKL's ν (absolute: a stream's target variance is not known in advance). Default:
    /// raced — learners of ν = 0.01, 1 and 100 side by side through the first window, the
    /// one of the lowest squared error going on alone (the summary's `chosen` says which)
    #[arg(long, value_parser = non_negative)]
    pub nu: Option<f64>,
    #[command(flatten)]
    pub svm: SvmArgs,
    /// Centre selection threshold. rsvm: during the warm-up (the first --window samples)
    /// a sample becomes a centre when the feature-space distance of φ(x) to the span of
    /// the centres is at least δ; for RBF that is the sine of the angle, in (0, 1].
    /// novelty: a sample learned becomes a centre, while centres are free, when its
    /// feature-space distance to every centre is at least δ. Default: rsvm 0.1, novelty 0.3.
    #[arg(long, value_parser = positive)]
    pub delta: Option<f64>,
    /// The quantile of normal samples' scores beyond which a sample is flagged (novelty).
    #[arg(long, default_value_t = DEFAULT_QUANTILE, value_parser = quantile)]
    pub quantile: f64,
    /// Samples taken as normal before any is flagged (novelty); with scaling, their
    /// statistics scale every sample.
    #[arg(long, default_value_t = DEFAULT_WARMUP, value_parser = count(2, MAX_WINDOW))]
    pub warmup: usize,
    /// Which samples the novelty detector learns as normal: those it does not flag (an
    /// anomaly does not join the window), or every one (the window follows any change).
    #[arg(long, value_enum, default_value_t = LearnArg::Unflagged)]
    pub learn: LearnArg,
    /// Take the features as they come. By default each feature is standardised online —
    /// centred by its running mean and divided by its running standard deviation
    /// (Welford) — and the model file carries the statistics, so that `predict` and the
    /// device scale alike.
    #[arg(long)]
    pub no_scale: bool,
    /// Keep the centres the warm-up chose. By default they follow a stream that moves:
    /// rsvm replaces its least useful centre, when barely used, by a sample at least δ
    /// from the centres' span that the SVMs get wrong; slkl replaces an unused candidate
    /// by a sample that no candidate is near.
    #[arg(long)]
    pub no_renew: bool,
    /// How long the SVMs (svm, rsvm) remember the samples that left the window, in
    /// arrivals: their share of the weights is kept and decays by 1 − 1/ARRIVALS per
    /// arrival, so the window's SVM is regularised toward what came before (0: a sample
    /// that leaves the window is forgotten).
    #[arg(long, default_value_t = DEFAULT_MEMORY, value_parser = count(0, MAX_WINDOW))]
    pub memory: usize,
    /// The most classes (svm, rsvm): two share one windowed SVM; a third makes the
    /// learner one-vs-rest over one window, each class adding its weights and a float a
    /// sample when it first appears (`--budget` counts them all).
    #[arg(long, default_value_t = DEFAULT_STREAM_CLASSES, value_parser = count(2, MAX_CLASSES))]
    pub classes: usize,
    /// Memory budget for the learner, warm-up buffers included (`kestrel budget` prints
    /// it), in bytes or with KiB / MiB: a larger configuration is refused at start-up.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<usize>,
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
    /// its start (or the rows it skips are lost). An MQTT broker is read on, nothing
    /// skipped: it sends again the messages the checkpoint does not cover.
    #[arg(long, requires = "checkpoint")]
    pub resume: bool,
    /// End the run after this many input rows (bad ones included), counted from the
    /// stream's start: a resumed run's include those its checkpoint consumed.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_rows: Option<u64>,
    /// End the run when no row has come for this many seconds (from the start too): for a
    /// pipe, a serial port or a broker that may fall silent.
    #[arg(long, value_name = "SECONDS", value_parser = timeout)]
    pub idle_timeout: Option<f64>,
    /// MQTT input: the client id the broker keeps the persistent session under (the
    /// subscription and the messages not yet acknowledged); a resumed run must use the same.
    #[arg(long, value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub client_id: Option<String>,
    /// MQTT input: the rows in a message, one or several separated by newlines.
    #[arg(long, value_enum, default_value_t = PayloadArg::Auto)]
    pub payload: PayloadArg,
    /// MQTT input: where a row's sequence number is (rows whose number a checkpoint
    /// covers are not learned again): a JSON field's name (default `seq`), or for CSV rows
    /// a column number (1-based, not a feature).
    #[arg(long, value_name = "FIELD|COLUMN", value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub seq_column: Option<String>,
    /// MQTT input: the largest message (bytes, or with KiB / MiB); a larger one is a bad row.
    #[arg(long, default_value_t = 1 << 20, value_parser = bytes_in(16, 1 << 28))]
    pub max_message_bytes: usize,
    /// Print rolling metrics every K samples.
    #[arg(long, default_value_t = 1000)]
    pub report_every: usize,
    /// Write the final model here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write one line per sample learned here, its prediction before learning it (a class
    /// name for named classes; `NaN` before the first label); novelty: `SCORE,FLAG`, the
    /// score `NaN` during the warm-up. A resumed run continues the file from its
    /// checkpoint. An `mqtt[s]://HOST[:PORT]/TOPIC` URL publishes one JSON message per
    /// sample instead (`{"seq", "prediction", "label", "score", "flag"}`, QoS 1; those
    /// after the last checkpoint again on a resume).
    #[arg(long, value_parser = output_file)]
    pub output: Option<PathBuf>,
    /// A CSV column to write before each row's --output line, as the input has it (a time
    /// stamp, an identifier), by its header name: `time,prediction`. Repeat the flag for
    /// several, written in that order. It is not a feature; a bad row keeps its line with
    /// its fields empty
    #[arg(long = "keep-column", value_name = "NAME", requires = "output")]
    pub keep_columns: Vec<String>,
    /// A classifier's (svm, rsvm) class probabilities with its predictions: each --output
    /// line is the prediction and the probability the learner gave it (`heating,0.93`), each
    /// message of an --output broker also has `probabilities` by class. They are Platt's
    /// sigmoids of its decision values, fitted online to each sample's values before it was
    /// learned; the summary's `log_loss` scores them with or without this flag
    #[arg(long)]
    pub probabilities: bool,
    /// Publish the rolling metrics (retained, every --report-every samples) on this topic:
    /// of the --output broker, else of the --input broker; or a whole mqtt:// or mqtts:// URL.
    #[arg(long, value_name = "TOPIC")]
    pub metrics_topic: Option<String>,
    /// The certificates (PEM) an mqtts:// broker's is checked against, instead of the
    /// system's roots.
    #[arg(long, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// JSON lines: one per report, then the summary.
    #[arg(long)]
    pub json: bool,
    /// Write an HTML report here at the end: the error over the rows against the running
    /// baseline, drift marks, rows per second, the learner's size (and a detector's scores).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

#[derive(Args)]
pub struct PredictArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Write predictions here instead of standard output (`-`: standard output).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Print `prediction,std` per row: the predictive standard deviation of a krr
    /// regressor (its Gaussian-process posterior, seed 000 §4.1.4, noise included).
    #[arg(long, conflicts_with_all = ["decision", "probabilities"])]
    pub std: bool,
    /// Print a classifier's decision values after each row's class, for ROC curves,
    /// thresholds or a ranking: `class,value` for two classes (≥ 0 the second of the
    /// classes standard error names), `class,v₁,…,v_k` for k classes (one-vs-rest, in that
    /// order; the largest wins).
    #[arg(long, conflicts_with = "probabilities")]
    pub decision: bool,
    /// Print a classifier's class probabilities after each row's class: `class,p₁,…,p_k`,
    /// one per class in the order standard error names (two for two classes), summing to
    /// 1. The model must have them (`kestrel train --probabilities`).
    #[arg(long)]
    pub probabilities: bool,
    /// A CSV column to write before each row's prediction, as the input has it (an
    /// identifier, a time stamp, the true label), by its header name: `id,prediction`.
    /// Repeat the flag for several, written in that order. It is not a feature unless the
    /// model names it; a bad row `--on-error skip` skips has its fields empty
    #[arg(long = "keep-column", value_name = "NAME")]
    pub keep_columns: Vec<String>,
}

#[derive(Args)]
pub struct EvalArgs {
    /// The model file.
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub detection: DetectionArgs,
    /// A CSV column holding each row's weight, as `kestrel train --weight-column` (not a
    /// feature): accuracy, balanced accuracy and each class's recall, or MSE, MAE and R²,
    /// share out the rows' weights (scikit-learn's `sample_weight`: a row of weight 2
    /// counts as two copies of it, one of weight 0 is left out); the report's figures
    /// count rows. Classifiers and regressors.
    #[arg(long, value_name = "NAME")]
    pub weight_column: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Write an HTML report here: the confusion matrix and ROC curve (classifier; with class
    /// probabilities, their reliability diagram too), the predicted against true values
    /// (regressor), the ROC curve (detector).
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// How a novelty detector's flags are scored against the rows' labels.
#[derive(Args, Clone, Debug, Default)]
pub struct DetectionArgs {
    /// The label of normal rows, a number or a class name; every other label is an anomaly
    /// (novelty detectors only). Default 0. scikit-learn's and LIBSVM's one-class labels
    /// mark normal rows 1 and outliers −1: give `--normal-label 1`.
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true)]
    pub normal_label: Option<String>,
}

#[derive(Args)]
pub struct InspectArgs {
    /// The model file; or a `kestrel stream` checkpoint, whose learner, progress, score so
    /// far and flags it shows; or a checkpoint a device's C library wrote, whose object,
    /// configuration and samples learned it shows.
    pub model: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The learners' memory in their streaming (windowed) form, as `kestrel stream` and the
/// firmware run them: a window of N samples (svm, rsvm: one windowed SVM per one-vs-rest class).
#[derive(Args)]
pub struct BudgetArgs {
    /// The learner. Without it, a line for each learner.
    #[arg(long, value_enum)]
    pub learner: Option<Learner>,
    /// Number of features.
    #[arg(long, value_parser = count(1, MAX_DIM))]
    pub dim: usize,
    /// Samples the learner keeps, as `kestrel stream --window`. Default: stream's, 256;
    /// novelty 48.
    #[arg(long, value_parser = count(1, MAX_WINDOW))]
    pub window: Option<usize>,
    /// Centres (candidates for slkl), as `kestrel stream --centers`. Default: stream's, 32;
    /// novelty 16.
    #[arg(long, value_parser = count(1, MAX_CENTERS))]
    pub centers: Option<usize>,
    /// The novelty detector's warm-up, as `kestrel stream --warmup`: its raw samples are
    /// held until it ends when the features are standardised.
    #[arg(long, default_value_t = DEFAULT_WARMUP, value_parser = count(2, MAX_WINDOW))]
    pub warmup: usize,
    /// The most classes (svm, rsvm), as `kestrel stream --classes`: two are one windowed
    /// SVM, more are one-vs-rest over one window, each class its weights and a float a
    /// sample.
    #[arg(long, default_value_t = DEFAULT_STREAM_CLASSES, value_parser = count(2, MAX_CLASSES))]
    pub classes: usize,
    /// Scalar type.
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Where the learner runs: the width of its index type (8 bytes on a 64-bit host,
    /// 4 on a Cortex-M).
    #[arg(long, value_enum, default_value_t = TargetArg::Host)]
    pub target: TargetArg,
    /// As `kestrel stream --memory`: above 0 the SVMs remember the samples that left the
    /// window, d + 1 scalars more per window.
    #[arg(long, default_value_t = DEFAULT_MEMORY, value_parser = count(0, MAX_WINDOW))]
    pub memory: usize,
    /// The learner takes its features as they come (`kestrel stream --no-scale`): no
    /// scaler's statistics.
    #[arg(long)]
    pub no_scale: bool,
    /// The centres stay as the warm-up chose them (`kestrel stream --no-renew`): no room
    /// for renewing them.
    #[arg(long)]
    pub no_renew: bool,
    /// Count one learner on the host, as `kestrel stream` runs when the setting it would
    /// race is given (rsvm: --gamma; svm: --c; slkl: --nu). A device always runs one.
    #[arg(long)]
    pub no_race: bool,
    /// Instead of the bytes, print the largest window that fits this many bytes.
    #[arg(long, value_parser = parse_bytes)]
    pub fit: Option<usize>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// A size (as [`parse_bytes`]) in `min ..= max` bytes.
fn bytes_in(min: usize, max: usize) -> impl Fn(&str) -> Result<usize, String> + Clone + Send + Sync + 'static {
    move |text| match parse_bytes(text)? {
        bytes if (min..=max).contains(&bytes) => Ok(bytes),
        _ => Err(format!("`{text}` is not between {min} and {max} bytes")),
    }
}

/// `4096`, `64KiB`, `1.5MiB` (also `KB`/`MB` as 1000s, `K`/`M` as 1024s).
pub fn parse_bytes(text: &str) -> Result<usize, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let not_a_size = || format!("`{text}` is not a size (e.g. 4096, 64KiB, 2MiB)");
    let number: f64 = number.parse().map_err(|_| not_a_size())?;
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
    let bytes = (number * scale).floor();
    // Beyond 2⁶³ bytes no machine has; refused rather than saturated.
    if bytes.is_nan() || bytes >= 2f64.powi(63) {
        return Err(not_a_size());
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 ≤ bytes < 2⁶³, an integer")]
    Ok(bytes as usize)
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
        assert!(parse_bytes("1e30").is_err() && parse_bytes("99999999999999999999GiB").is_err());
        assert_eq!(bytes_in(16, 64)("65"), Err("`65` is not between 16 and 64 bytes".into()));
        assert_eq!((positive("0"), non_negative("0")), (Err("`0` is not above 0".into()), Ok(0.0)));
        assert_eq!(number("nan"), Err("`nan` is not a finite number".into()));
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
