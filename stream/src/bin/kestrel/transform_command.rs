//! `kestrel transform`: a nonlinear projection of a data set's rows.
//!
//! `--method ksir` and `--method kfd` fit kernel sliced inverse regression and the kernel
//! Fisher discriminant on the reduced kernel (every row a centre unless `--centers`), the
//! classes as slices (or `--slices J` of a sorted response for ksir): at most one
//! component fewer than the slices. `--method kpca` fits kernel PCA ([`kestrel_stream::batch::kpca`]): exact on every row,
//! or reduced through `--centers M` rows drawn at random (seed 003 §4.1; the work is then
//! O(m²) whatever the number of rows), keeps `--components K` components, writes the
//! projected rows and, with `--model`, the projection as a model file (kind `kpca`; the
//! core projects with it on a device without heap). `--apply MODEL` projects rows through
//! a model written earlier instead of fitting.
//!
//! `--method kcca` fits reduced kernel canonical correlation analysis (seed 003 §4.3) of
//! two views of the same observations: `--input` is the first view and **`--input2`** the
//! second, a data set in the same formats with the same number of rows, row `i` of each the
//! same observation (its label column is read and ignored; the labels written are
//! `--input`'s). Both views use the same `--centers M` rows (every row by default), the
//! same kernel kind, `--gamma` if given (else `1/d` of each view's own `d`), and the
//! kernel-norm regulariser `--mu`. The output holds `--components K` canonical pairs:
//! header `u0,…,u{K−1},v0,…,v{K−1},label`, `u` the first view's variates and `v` the
//! second's; `--model` writes the first view's projection and `--model2` the second's,
//! each an ordinary projection model: `--apply` with either projects rows of its own view.
//!
//! The input is read whole (CSV with a header and the label last, or LibSVM; `-` for
//! standard input). **Output** (`--output PATH`, default standard output): CSV with a
//! header `pc0,…,pc{K−1},label`, one row per input row, the label carried over — a data set
//! `kestrel train` reads as it is. The kernel's default width is `1/d` for `d` features
//! (scikit-learn's `KernelPCA` default).
//!
//! **`--scale`** standardises each feature by its mean and standard deviation over the
//! rows before the fit (each view on its own for kcca), as `kestrel cluster --scale`
//! does; a model file then carries the statistics in its envelope, and `--apply` (or any
//! reader: [`kpca::Applied`]) standardises new rows with them. Without it, a note says
//! when the features' scales differ so widely that a few set every distance.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use kestrel_core::kpca::{Criterion, DEFAULT_MU, KernelProjection};
use kestrel_core::model::ScalarKind;
use kestrel_core::{Kernel, Real};
use kestrel_stream::batch::fit::{Setting, unit_variance_width};
use kestrel_stream::batch::kpca::{self, KccaSettings, KpcaSettings, Method};
use kestrel_stream::batch::spectral;
use kestrel_stream::class_names::{self, ClassNames};
use kestrel_stream::dataset::{Dataset, HostScaler};
use kestrel_stream::limits::MAX_DIM;
use kestrel_stream::source::{self, csv_field};
use kestrel_stream::{file, model};

use crate::Usage;
use crate::args::{CategoricalArgs, ColumnArgs, KernelArgs, MAX_CENTERS, ScalarArg, count, parse_bytes, positive};
use crate::commands::{
    category_options, check_columns, column_options, features_phrase, read_strict, read_strict_by_name, scaled_points,
};

/// The projection to fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum MethodArg {
    /// Kernel principal component analysis (exact, or reduced with --centers).
    Kpca,
    /// Kernel sliced inverse regression on the reduced kernel (slices: the classes, or
    /// --slices of the sorted response).
    Ksir,
    /// Kernel Fisher discriminant on the reduced kernel (slices: the classes).
    Kfd,
    /// Kernel canonical correlation analysis on the reduced kernel of two views (the
    /// second in --input2).
    Kcca,
    /// Laplacian eigenmap of the rows' kNN graph (--neighbors): coordinates of the
    /// training rows only, no model.
    Eigenmap,
    /// Locality preserving projection on the rows' kNN graph (--neighbors): a linear
    /// map, saved with --model and applied to new rows with --apply.
    Lpp,
}

#[derive(clap::Args)]
pub struct TransformArgs {
    /// Data set: CSV with a header (label in the last column unless --label-column says)
    /// or LibSVM; `-` for stdin.
    #[arg(long, value_name = "DATA")]
    pub input: String,
    #[command(flatten)]
    pub columns: ColumnArgs,
    #[command(flatten)]
    pub categorical: CategoricalArgs,
    /// The projection.
    #[arg(long, value_enum, default_value_t = MethodArg::Kpca)]
    pub method: MethodArg,
    /// kcca: the second view, a data set with the same rows as --input in the same order
    /// (its label column, as --label-column says, is ignored; --skip-column is --input's).
    #[arg(long, value_name = "DATA", required_if_eq("method", "kcca"), conflicts_with = "apply")]
    pub input2: Option<String>,
    /// Components K to keep [default: 2, a plane to look at; ksir and kfd: at most J − 1
    /// for J slices, all they have].
    #[arg(long, value_name = "K", value_parser = count(1, MAX_DIM))]
    pub components: Option<usize>,
    /// Centres M of the reduced kernel, drawn at random from the rows [default: every
    /// row; for kpca, exact KPCA].
    #[arg(long = "centers", visible_alias = "centres", value_name = "M", value_parser = count(1, MAX_CENTERS))]
    pub centres: Option<usize>,
    /// ksir: J slices of the rows sorted by their response (regression) [default: one
    /// slice per distinct label].
    #[arg(long, value_name = "J", value_parser = count(2, MAX_CENTERS))]
    pub slices: Option<usize>,
    /// eigenmap, lpp: nearest neighbours k of the graph [default: 10, or one less than the
    /// rows on fewer than 11].
    #[arg(long, value_name = "K", value_parser = count(1, MAX_CENTERS))]
    pub neighbors: Option<usize>,
    /// ksir, kfd, kcca: weight μ of the kernel-norm regulariser μ·(tr D/tr K)·K added to
    /// the denominator covariance D (kcca: to each view's covariance).
    #[arg(long, default_value_t = DEFAULT_MU, value_parser = positive)]
    pub mu: f64,
    #[command(flatten)]
    pub kernel: KernelArgs,
    /// Write the fitted projection here (a model file).
    #[arg(long, value_name = "MODEL", conflicts_with = "apply")]
    pub model: Option<PathBuf>,
    /// kcca: write the second view's fitted projection here (a model file).
    #[arg(long, value_name = "MODEL", requires = "input2")]
    pub model2: Option<PathBuf>,
    /// Standardise each feature (mean 0, variance 1 over the rows) before fitting: for
    /// readings in units of very different sizes (a note says when). The model file keeps
    /// the statistics, and `--apply` standardises new rows with them.
    #[arg(long, conflicts_with = "apply")]
    pub scale: bool,
    /// Project through this model file instead of fitting (rows in the units of the rows
    /// it was fitted on: a model fitted under --scale standardises them).
    #[arg(long, value_name = "MODEL", conflicts_with_all = ["method", "components", "centres", "slices", "neighbors", "mu"])]
    pub apply: Option<PathBuf>,
    /// Write the projected rows here (CSV) instead of standard output (`-`: standard
    /// output).
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
    let applied = args.apply.as_deref().map(kpca::read_file).transpose()?;
    let scalar = match &applied {
        Some(model) => model.scalar,
        None if args.scalar == ScalarArg::F32 => ScalarKind::F32,
        None => ScalarKind::F64,
    };
    match scalar {
        ScalarKind::F64 => transform_in::<f64>(args, applied.as_ref()),
        ScalarKind::F32 => transform_in::<f32>(args, applied.as_ref()),
    }
}

/// `Ok` when the rows of `input` read as a projection of `dim` features takes them: a CSV
/// stating fewer feature columns (unless read `by_name`, the model's names, which the
/// reading checked), or a row with a nonzero feature past `dim`, is refused (the dense
/// rows would fill the one with zeros and drop the other). Zero columns past `dim` are
/// read, as `predict` reads them.
fn check_width<T: Real>(data: &Dataset<T>, dim: usize, input: &str, by_name: bool) -> Result<()> {
    if !by_name {
        check_columns(input, data.stated_dim(), dim, "the projection", "")?;
    }
    let (_, indices, values) = data.csr();
    let beyond = indices.iter().zip(values).find(|&(&j, &v)| j as usize >= dim && v != T::ZERO);
    if let Some((&j, _)) = beyond {
        bail!("{input}: a row has a value for feature {}, the projection takes {dim} features", u64::from(j) + 1);
    }
    Ok(())
}

/// Says on the terminal that a CSV's last column was taken as the label, which the method
/// does not use, when `--label-column` did not say so: unlabelled rows lose a feature
/// there unless read with `--label-column none`.
fn note_unused_labels<T: Real>(args: &TransformArgs, data: &Dataset<T>) {
    let unsupervised = !matches!(args.method, MethodArg::Ksir | MethodArg::Kfd) || args.apply.is_some();
    if unsupervised && args.columns.label_column.is_none() && data.stated_dim().is_some() {
        let features = match data.dim() {
            1 => "1 feature".to_string(),
            n => format!("{n} features"),
        };
        tell!(
            "kestrel: note: the last column of {} is read as a label, not a feature ({features} left); \
             --label-column none reads every column as a feature",
            args.input
        );
    }
}

/// Fits or, with `applied` (the `--apply` file), applies a projection at scalar `T`.
fn transform_in<T: Real>(args: &TransformArgs, applied: Option<&kpca::ModelFile>) -> Result<()> {
    let applied = applied.map(kpca::ModelFile::projection::<T>).transpose()?;
    // A fit one-hot encodes the columns `--categorical` names; a model applied reads the
    // rows' columns by the names it keeps (its columns of categories among them).
    let data: Dataset<T> = match &applied {
        Some(_) if !args.categorical.categorical.is_empty() => {
            let message =
                "--categorical is a fit's: --apply reads the model's columns of categories by the names it keeps";
            return Err(Usage(message.into()).into());
        }
        Some(applied) => read_strict_by_name(&args.input, &column_options(&args.columns), &applied.features)?,
        None => read_strict(&args.input, &category_options(&args.columns, &args.categorical))?,
    };
    note_unused_labels(args, &data);
    match (&args.input2, args.method == MethodArg::Kcca) {
        (Some(input2), true) => return kcca(args, &data, input2),
        (Some(_), false) => bail!("--input2 is the second view of --method kcca"),
        (None, _) => {}
    }
    if args.method == MethodArg::Eigenmap && applied.is_none() {
        return eigenmap(args, &data);
    }
    let (model, projected, scaled) = match applied {
        Some(applied) => {
            // Rows in the units the model was fitted on: it standardises them if it did.
            let by_name = !applied.features.is_empty() && !data.feature_names().is_empty();
            check_width(&data, applied.model.dim(), &args.input, by_name)?;
            let projected = applied.project(&data.dense(applied.model.dim())?)?;
            (applied.model, projected, applied.scaler.is_some())
        }
        None => {
            let (points, scaler) = scaled_points(&data, args.scale)?;
            let model = fit(args, &points, (data.labels(), data.feature_names()), data.dim(), scaler.as_ref())?;
            let projected = kpca::project(&model, &points)?;
            (model, projected, scaler.is_some())
        }
    };
    write_table(args, &csv(&[("pc", &projected)], model.components(), (data.labels(), data.class_names())))?;
    tell!(
        "kestrel: projected {} rows of {} on {} components (eigenvalues {})",
        data.len(),
        features_phrase(model.dim(), scaled),
        model.components(),
        list(model.eigenvalues())
    );
    Ok(())
}

/// `--method eigenmap`: the coordinates of `data`'s rows.
fn eigenmap<T: Real>(args: &TransformArgs, data: &Dataset<T>) -> Result<()> {
    if args.model.is_some() {
        let message = "--method eigenmap places the training rows only and has no model: --method lpp fits a projection of new rows";
        return Err(Usage(message.into()).into());
    }
    let points = scaled_points(data, args.scale)?.0;
    let components = components(args, data.labels())?;
    let neighbors = spectral::neighbors_for(args.neighbors, spectral::DEFAULT_NEIGHBORS, data.len());
    let embedding = spectral::eigenmap(&points, data.dim(), neighbors, components, args.budget)?;
    write_table(args, &csv(&[("y", &embedding.coordinates)], components, (data.labels(), data.class_names())))?;
    tell!(
        "kestrel: embedded {} rows of {} in {components} coordinates on the {}-NN graph (σ = {:.4}; eigenvalues {}; {} Lanczos steps, residual {:.1e}; {:.2} s graph, {:.2} s eigenmap)",
        data.len(),
        features_phrase(data.dim(), args.scale),
        neighbors,
        embedding.sigma.to_f64(),
        list(&embedding.eigenvalues),
        embedding.lanczos.steps,
        embedding.lanczos.residual.to_f64(),
        embedding.seconds.graph,
        embedding.seconds.solve,
    );
    Ok(())
}

/// `--method kcca`: fits the two views `data` and `input2`, writes both views' variates
/// and models.
fn kcca<T: Real>(args: &TransformArgs, data: &Dataset<T>, input2: &str) -> Result<()> {
    let label_column = args.columns.label_column.clone();
    let second: Dataset<T> = read_strict(input2, &source::Options { label_column, ..source::Options::default() })?;
    if second.len() != data.len() {
        bail!(
            "--input2 {input2} has {} rows, --input {} has {}: the two views must be the same rows",
            second.len(),
            args.input,
            data.len()
        );
    }
    let ((points, scaler), (points2, scaler2)) =
        (scaled_points(data, args.scale)?, scaled_points(&second, args.scale)?);
    let dims = (data.dim(), second.dim());
    let kernels = (kernel(args, dims.0)?, kernel(args, dims.1)?);
    let components = components(args, data.labels())?;
    let settings = KccaSettings { components, centres: args.centres, seed: args.seed, mu: args.mu };
    let (u, v) = kpca::fit_kcca(&points, &points2, dims, kernels, &settings, args.budget)?;
    let views =
        [(&args.model, &u, &scaler, data.feature_names()), (&args.model2, &v, &scaler2, second.feature_names())];
    for (path, model, scaler, names) in views {
        if let Some(path) = path {
            write_model(path, model, scaler.as_ref(), names)?;
        }
    }
    let (projected, projected2) = (kpca::project(&u, &points)?, kpca::project(&v, &points2)?);
    write_table(args, &csv(&[("u", &projected), ("v", &projected2)], components, (data.labels(), data.class_names())))?;
    tell!(
        "kestrel: projected {} rows of {} and {} on {components} canonical pairs (correlations {})",
        data.len(),
        dims.0,
        features_phrase(dims.1, args.scale),
        list(u.eigenvalues())
    );
    Ok(())
}

/// The kernel of `args` for `dim` features: `--gamma`, or `1/dim`.
fn kernel<T: Real>(args: &TransformArgs, dim: usize) -> Result<Kernel<T>> {
    let gamma = match args.kernel.gamma {
        Some(Setting::Value(gamma)) => gamma,
        _ => unit_variance_width(dim),
    };
    args.kernel.build::<T>(gamma).context("--gamma")
}

/// Writes `table` to `--output` or standard output.
fn write_table(args: &TransformArgs, table: &str) -> Result<()> {
    match crate::args::output_path(args.output.as_deref()) {
        Some(path) => file::write_output(path, table.as_bytes())?,
        None => std::io::stdout().lock().write_all(table.as_bytes())?,
    }
    Ok(())
}

/// Writes `model`'s file to `path`, with the statistics of `scaler` when the model was
/// fitted on standardised rows, and the `names` of its features when a CSV header gave
/// them (`--apply` then reads rows by them, a column of categories among them).
fn write_model<T: Real>(
    path: &Path,
    model: &KernelProjection<T, Vec<T>>,
    scaler: Option<&HostScaler<T>>,
    names: &[String],
) -> Result<()> {
    let mut bytes = vec![0u8; model.encoded_len()];
    model.encode(&mut bytes)?;
    if let Some(scaler) = scaler {
        bytes = model::with_scaler(bytes, scaler.section())?;
    }
    if !names.is_empty() {
        bytes = model::with_feature_names(bytes, names)?;
    }
    Ok(file::write_atomic(path, &bytes)?)
}

/// `values` to four decimals, comma-separated.
fn list<T: Real>(values: &[T]) -> String {
    values.iter().map(|v| format!("{:.4}", v.to_f64())).collect::<Vec<_>>().join(", ")
}

/// Fits the projection of `args` on `points` (row-major, `dim` columns; standardised by
/// `scaler` under `--scale`), writing the model file under `--model`.
fn fit<T: Real>(
    args: &TransformArgs,
    points: &[T],
    (labels, names): (&[f64], &[String]),
    dim: usize,
    scaler: Option<&HostScaler<T>>,
) -> Result<KernelProjection<T, Vec<T>>> {
    let components = components(args, labels)?;
    let discriminant = |criterion| Method::Discriminant { criterion, slices: args.slices, mu: args.mu };
    let method = match args.method {
        MethodArg::Kpca => Method::Kpca,
        MethodArg::Ksir => discriminant(Criterion::Sir),
        MethodArg::Kfd => discriminant(Criterion::Fisher),
        MethodArg::Kcca => bail!("--method kcca needs its second view, --input2"),
        MethodArg::Eigenmap => bail!("--method eigenmap has no model"),
        MethodArg::Lpp => {
            let neighbors =
                spectral::neighbors_for(args.neighbors, spectral::DEFAULT_NEIGHBORS, points.len() / dim.max(1));
            return finish(args, spectral::lpp(points, dim, neighbors, components, args.budget)?, scaler, names);
        }
    };
    let settings = KpcaSettings { method, components, centres: args.centres, seed: args.seed };
    finish(args, kpca::fit(points, labels, dim, kernel(args, dim)?, &settings, args.budget)?, scaler, names)
}

/// `--components`, or its default: 2, and for ksir and kfd at most `J − 1` for the `J`
/// slices the fit makes of `labels` ([`kpca::slice_of_rows`]), the most they have.
fn components(args: &TransformArgs, labels: &[f64]) -> Result<usize> {
    Ok(match (args.components, args.method) {
        (Some(components), _) => components,
        (None, MethodArg::Ksir | MethodArg::Kfd) => {
            let slices = kpca::slice_of_rows(labels, args.slices)?.into_iter().max().map_or(0, |last| last + 1);
            slices.saturating_sub(1).clamp(1, 2)
        }
        (None, _) => 2,
    })
}

/// `model`, its file written under `--model` (with `scaler`'s statistics under `--scale`).
fn finish<T: Real>(
    args: &TransformArgs,
    model: KernelProjection<T, Vec<T>>,
    scaler: Option<&HostScaler<T>>,
    names: &[String],
) -> Result<KernelProjection<T, Vec<T>>> {
    if let Some(path) = &args.model {
        write_model(path, &model, scaler, names)?;
    }
    Ok(model)
}

/// The projected rows as CSV: for each block `(prefix, rows)` (row-major, `components`
/// columns) the columns `prefix0,…`, then the label (its class's name, when the classes
/// have `names`); each number the shortest decimal that reads back to the same `f64`.
fn csv<T: Real>(blocks: &[(&str, &[T])], components: usize, (labels, names): (&[f64], &ClassNames)) -> String {
    let mut out = String::new();
    for (prefix, _) in blocks {
        (0..components).for_each(|c| {
            let _ = write!(out, "{prefix}{c},");
        });
    }
    out.push_str("label\n");
    for (i, label) in labels.iter().enumerate() {
        for (_, rows) in blocks {
            for value in rows.get(i * components..(i + 1) * components).unwrap_or_default() {
                let _ = write!(out, "{},", value.to_f64());
            }
        }
        let _ = writeln!(out, "{}", csv_field(&class_names::shown(Some(names), *label)));
    }
    out
}
