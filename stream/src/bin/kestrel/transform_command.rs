//! `kestrel transform`: a nonlinear projection of a data set's rows.
//!
//! `--method ksir` and `--method kfd` fit kernel sliced inverse regression and the kernel
//! Fisher discriminant on the reduced kernel (every row a centre unless `--centres`), the
//! classes as slices (or `--slices J` of a sorted response for ksir): at most one
//! component fewer than the slices. `--method kpca` fits kernel PCA ([`kestrel_stream::batch::kpca`]): exact on every row,
//! or reduced through `--centres M` rows drawn at random (seed 003 §4.1; the work is then
//! O(m²) whatever the number of rows), keeps `--components K` components, writes the
//! projected rows and, with `--model`, the projection as a model file (kind `kpca`; the
//! core projects with it on a device without heap). `--apply MODEL` projects rows through
//! a model written earlier instead of fitting.
//!
//! The input is read whole (CSV with a header and the label last, or LibSVM; `-` for
//! standard input). **Output** (`--output PATH`, default standard output): CSV with a
//! header `pc0,…,pc{K−1},label`, one row per input row, the label carried over — a data set
//! `kestrel train` reads as it is. The kernel's default width is `1/d` for `d` features
//! (scikit-learn's `KernelPCA` default).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use kestrel_core::Real;
use kestrel_core::kpca::{Criterion, DEFAULT_MU, KernelProjection};
use kestrel_core::model::ScalarKind;
use kestrel_stream::batch::fit::Setting;
use kestrel_stream::batch::kpca::{self, KpcaSettings, Method};
use kestrel_stream::dataset::{Dataset, OnError};
use kestrel_stream::file;
use kestrel_stream::limits::MAX_DIM;
use kestrel_stream::source;

use crate::args::{KernelArgs, MAX_CENTERS, ScalarArg, count, parse_bytes, positive};

/// The projection to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    /// Kernel principal component analysis (exact, or reduced with --centres).
    Kpca,
    /// Kernel sliced inverse regression on the reduced kernel (slices: the classes, or
    /// --slices of the sorted response).
    Ksir,
    /// Kernel Fisher discriminant on the reduced kernel (slices: the classes).
    Kfd,
}

#[derive(clap::Args)]
pub struct TransformArgs {
    /// Data set: CSV with a header (label in the last column) or LibSVM; `-` for stdin.
    #[arg(long, value_name = "DATA")]
    pub input: String,
    /// The projection.
    #[arg(long, value_enum, default_value_t = MethodArg::Kpca)]
    pub method: MethodArg,
    /// Components K to keep.
    #[arg(long, value_name = "K", value_parser = count(1, MAX_DIM), required_unless_present = "apply")]
    pub components: Option<usize>,
    /// Centres M of the reduced kernel, drawn at random from the rows [default: every
    /// row; for kpca, exact KPCA].
    #[arg(long, value_name = "M", value_parser = count(1, MAX_CENTERS))]
    pub centres: Option<usize>,
    /// ksir: J slices of the rows sorted by their response (regression) [default: one
    /// slice per distinct label].
    #[arg(long, value_name = "J", value_parser = count(2, MAX_CENTERS))]
    pub slices: Option<usize>,
    /// ksir, kfd: weight μ of the kernel-norm regulariser μ·(tr D/tr K)·K added to the
    /// denominator covariance D.
    #[arg(long, default_value_t = DEFAULT_MU, value_parser = positive)]
    pub mu: f64,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Write the fitted projection here (a model file).
    #[arg(long, value_name = "MODEL", conflicts_with = "apply")]
    pub model: Option<PathBuf>,
    /// Project through this model file instead of fitting.
    #[arg(long, value_name = "MODEL", conflicts_with_all = ["components", "centres", "slices"])]
    pub apply: Option<PathBuf>,
    /// Write the projected rows here (CSV) instead of standard output.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// Memory budget of the fit, in bytes or with KiB / MiB.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<usize>,
    /// Scalar type of a fit (a model given to --apply states its own).
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Seed of the centres' draw.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

pub fn run(args: &TransformArgs) -> Result<()> {
    // A model file states its scalar; `--scalar` chooses the one of a fit.
    let scalar = match &args.apply {
        Some(path) => kpca::scalar_of_file(path)?,
        None if args.scalar == ScalarArg::F32 => ScalarKind::F32,
        None => ScalarKind::F64,
    };
    match scalar {
        ScalarKind::F64 => transform_in::<f64>(args),
        ScalarKind::F32 => transform_in::<f32>(args),
    }
}

fn transform_in<T: Real>(args: &TransformArgs) -> Result<()> {
    let mut reader = source::open(&args.input, &source::Options::default())
        .with_context(|| format!("cannot open {}", args.input))?;
    let data: Dataset<T> = Dataset::read(reader.as_mut(), OnError::Stop, |_| {})?;
    let (model, points) = match &args.apply {
        Some(path) => {
            let model = kpca::read_file::<T>(path)?;
            let points = data.dense(model.dim())?;
            (model, points)
        }
        None => {
            let points = data.dense(data.dim())?;
            (fit(args, &points, data.labels(), data.dim())?, points)
        }
    };
    let projected = kpca::project(&model, &points)?;
    let table = csv(&projected, model.components(), data.labels());
    match &args.output {
        Some(path) => file::write_output(path, table.as_bytes())?,
        None => std::io::stdout().lock().write_all(table.as_bytes())?,
    }
    eprintln!(
        "kestrel: projected {} rows of {} features on {} components (eigenvalues {})",
        data.len(),
        model.dim(),
        model.components(),
        model.eigenvalues().iter().map(|v| format!("{:.4}", v.to_f64())).collect::<Vec<_>>().join(", ")
    );
    Ok(())
}

/// Fits the projection of `args` on `points` (row-major, `dim` columns), writing the
/// model file under `--model`.
fn fit<T: Real>(args: &TransformArgs, points: &[T], labels: &[f64], dim: usize) -> Result<KernelProjection<T, Vec<T>>> {
    let gamma = match args.kernel.gamma {
        Some(Setting::Value(gamma)) => gamma,
        _ => 1.0 / dim.max(1) as f64,
    };
    let kernel = args.kernel.build::<T>(gamma).context("--gamma")?;
    let discriminant = |criterion| Method::Discriminant { criterion, slices: args.slices, mu: args.mu };
    let method = match args.method {
        MethodArg::Kpca => Method::Kpca,
        MethodArg::Ksir => discriminant(Criterion::Sir),
        MethodArg::Kfd => discriminant(Criterion::Fisher),
    };
    let components = args.components.unwrap_or(1);
    let settings = KpcaSettings { method, components, centres: args.centres, seed: args.seed };
    let model = kpca::fit(points, labels, dim, kernel, &settings, args.budget)?;
    if let Some(path) = &args.model {
        let mut bytes = vec![0u8; model.encoded_len()];
        model.encode(&mut bytes)?;
        file::write_atomic(path, &bytes)?;
    }
    Ok(model)
}

/// The projected rows as CSV, `pc0,…,label`, each number the shortest decimal that reads
/// back to the same `f64`.
fn csv<T: Real>(projected: &[T], components: usize, labels: &[f64]) -> String {
    let mut out = (0..components).map(|c| format!("pc{c},")).collect::<String>() + "label\n";
    for (row, label) in projected.chunks_exact(components).zip(labels) {
        for value in row {
            let _ = write!(out, "{},", value.to_f64());
        }
        let _ = writeln!(out, "{label}");
    }
    out
}
