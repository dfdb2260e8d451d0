//! `kestrel cluster`: clusters of a data set's rows.
//!
//! - `--method spectral` (default): spectral clustering (seed 000 §5.2,
//!   [`kestrel_stream::batch::spectral`]) on the kNN graph of `--neighbors` neighbours —
//!   the graph NPKL learns on — by Lanczos, then k-means with 20 restarts on the
//!   normalised eigenvector rows. Finds clusters of any shape that the graph connects.
//! - `--method kmeans`: k-means (k-means++, 20 restarts) on the rows themselves.
//! - `--method npkl`: NPKL's kernel learned from pairs, then k-means on it: `kestrel npkl`
//!   run with this command's `--input`, `--clusters`, `--neighbors`, `--seed`, `--output`,
//!   `--json` and `--report`, and its own `--constraints` or `--constraints-from-labels`,
//!   `--loss` (default hinge) and `--rank` (see `kestrel npkl --help`).
//!
//! The input is read whole (CSV with a header and the label last, or LibSVM; `-` for
//! standard input). Standardise features of different units first: every method measures
//! plain Euclidean distance. When the labels are classes (more than one value), the RAND
//! index of the clusters against them is printed.
//!
//! **Output** (`--output PATH`): CSV `row,cluster`, one line per input row (for npkl,
//! `kestrel npkl`'s `row,cluster,v0,…`). `--json` prints the summary as JSON; `--report`
//! writes an HTML page with the rows on their principal plane, coloured by cluster.
//!
//! Exit status as the rest of `kestrel`: 0 on success, 1 on a data or runtime error, 2 on
//! a flag out of range or a flag of another method.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kestrel_core::{Real, Rng};
use kestrel_stream::batch::clusters::{self, Clusters, RESTARTS};
use kestrel_stream::batch::spectral;
use kestrel_stream::dataset::Dataset;
use kestrel_stream::file;

use crate::Usage;
use crate::args::{CategoricalArgs, ColumnArgs, MAX_CENTERS, ScalarArg, count, non_negative, parse_bytes};
use crate::commands::{category_options, features_phrase, points, read_strict};
use crate::npkl_command::{self, Classes, LossArg, NpklArgs, clusters_figure};
use crate::report::Report;

/// How to cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClusterMethod {
    /// Spectral clustering on the kNN graph (eigenvectors by Lanczos, then k-means).
    Spectral,
    /// k-means on the rows.
    Kmeans,
    /// k-means on NPKL's kernel learned from pairs (--constraints or
    /// --constraints-from-labels).
    Npkl,
}

impl ClusterMethod {
    fn name(self) -> &'static str {
        match self {
            ClusterMethod::Spectral => "spectral",
            ClusterMethod::Kmeans => "kmeans",
            ClusterMethod::Npkl => "npkl",
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// Data set: CSV with a header (label in the last column unless --label-column says)
    /// or LibSVM; `-` for stdin.
    #[arg(long, value_name = "DATA")]
    pub input: String,
    #[command(flatten)]
    pub columns: ColumnArgs,
    #[command(flatten)]
    pub categorical: CategoricalArgs,
    /// Number of clusters C.
    #[arg(long, value_name = "C", value_parser = count(2, MAX_CENTERS))]
    pub clusters: usize,
    /// Standardise every feature by its mean and standard deviation over the rows before
    /// clustering (readings in units of very different sizes).
    #[arg(long)]
    pub scale: bool,
    /// How to cluster.
    #[arg(long, value_enum, default_value_t = ClusterMethod::Spectral)]
    pub method: ClusterMethod,
    /// spectral, npkl: nearest neighbours k of the graph [default: spectral 10, npkl 5, or
    /// one less than the rows when they are fewer].
    #[arg(long, value_name = "K", value_parser = count(1, MAX_CENTERS))]
    pub neighbors: Option<usize>,
    /// Seed of k-means (and, for npkl, of the pairs and the learner).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Scalar type of spectral and k-means (npkl runs in f64).
    #[arg(long, value_enum, default_value_t = ScalarArg::F64)]
    pub scalar: ScalarArg,
    /// Memory budget of spectral clustering, in bytes or with KiB / MiB.
    #[arg(long, value_parser = parse_bytes)]
    pub budget: Option<usize>,
    /// npkl: pairs file, one `i j must|cannot` per line (0-based rows of DATA).
    #[arg(long, value_name = "PAIRS")]
    pub constraints: Option<PathBuf>,
    /// npkl: draw FRACTION·n must-link and FRACTION·n cannot-link pairs from the labels.
    #[arg(long, value_name = "FRACTION", conflicts_with = "constraints", value_parser = non_negative)]
    pub constraints_from_labels: Option<f64>,
    /// npkl: loss between the kernel and the pairs [default: hinge].
    #[arg(long, value_enum)]
    pub loss: Option<LossArg>,
    /// npkl: rank r of the learned kernel [default: from the number of pairs].
    #[arg(long, value_name = "R", value_parser = count(1, 1 << 12))]
    pub rank: Option<usize>,
    /// Write `row,cluster` as CSV here.
    #[arg(long, value_name = "PATH", value_parser = crate::args::output_file)]
    pub output: Option<PathBuf>,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write an HTML report here: the rows on their first two principal components,
    /// coloured by cluster.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// Runs `kestrel cluster`.
///
/// # Errors
/// Unreadable input, settings that do not go together, or any error of the method.
pub fn run(args: &ClusterArgs) -> Result<()> {
    if args.method == ClusterMethod::Npkl {
        return npkl(args);
    }
    let npkl_only = [
        ("--constraints", args.constraints.is_some()),
        ("--constraints-from-labels", args.constraints_from_labels.is_some()),
        ("--loss", args.loss.is_some()),
        ("--rank", args.rank.is_some()),
    ];
    if let Some((flag, _)) = npkl_only.iter().find(|(_, given)| *given) {
        return Err(
            Usage(format!("{flag} is a setting of --method npkl, not of --method {}", args.method.name())).into()
        );
    }
    if args.budget.is_some() && args.method != ClusterMethod::Spectral {
        return Err(Usage("--budget is a setting of --method spectral".into()).into());
    }
    match args.scalar {
        ScalarArg::F64 => cluster_in::<f64>(args),
        ScalarArg::F32 => cluster_in::<f32>(args),
    }
}

/// `--method npkl`: `kestrel npkl` with this command's flags.
fn npkl(args: &ClusterArgs) -> Result<()> {
    if args.scalar == ScalarArg::F32 || args.budget.is_some() {
        return Err(Usage("--method npkl runs in f64 without a budget: drop --scalar f32 and --budget".into()).into());
    }
    npkl_command::run(&NpklArgs {
        input: args.input.clone(),
        columns: args.columns.clone(),
        categorical: args.categorical.clone(),
        constraints: args.constraints.clone(),
        constraints_from_labels: args.constraints_from_labels,
        rank: args.rank,
        neighbors: args.neighbors,
        loss: args.loss.unwrap_or(LossArg::Hinge),
        clusters: args.clusters,
        scale: args.scale,
        seed: args.seed,
        json: args.json,
        output: args.output.clone(),
        report: args.report.clone(),
    })
}

/// What spectral clustering adds to the summary: the graph's neighbours and `σ`, and how
/// Lanczos ended.
struct Spectral {
    neighbors: usize,
    sigma: f64,
    steps: usize,
    residual: f64,
}

/// A finished clustering, as the summaries and the report tell it.
struct Run {
    n: usize,
    dim: usize,
    clusters: Clusters,
    spectral: Option<Spectral>,
    rand: Option<f64>,
}

/// Spectral clustering or k-means at scalar `T`.
fn cluster_in<T: Real>(args: &ClusterArgs) -> Result<()> {
    let started = Instant::now();
    let data: Dataset<T> = read_strict(&args.input, &category_options(&args.columns, &args.categorical))?;
    let (n, dim) = (data.len(), data.dim());
    if args.clusters >= n {
        bail!("--clusters {} needs more rows than clusters ({} has {n})", args.clusters, args.input);
    }
    let points = points(&data, args.scale)?;
    let (clusters, spectral) = match args.method {
        ClusterMethod::Spectral => {
            let neighbors = spectral::neighbors_for(args.neighbors, spectral::DEFAULT_NEIGHBORS, n);
            let run = spectral::spectral_clusters(&points, dim, neighbors, args.clusters, args.seed, args.budget)
                .with_context(|| args.input.clone())?;
            let (steps, residual) = (run.lanczos.steps, run.lanczos.residual);
            let extra = Spectral { neighbors, sigma: run.sigma, steps, residual };
            (run.clusters, Some(extra))
        }
        _ => (clusters::kmeans(&points, dim, args.clusters, &mut Rng::seed_from_u64(args.seed))?, None),
    };
    let classes = Classes::of(data.labels());
    let rand = classes.as_ref().map(|c| c.rand_index(&clusters.assignments, args.clusters)).transpose()?;
    let run = Run { n, dim, clusters, spectral, rand };
    if let Some(path) = &args.output {
        let mut table = String::from("row,cluster\n");
        for (row, cluster) in run.clusters.assignments.iter().enumerate() {
            writeln!(table, "{row},{cluster}")?;
        }
        file::write_output(path, table.as_bytes())?;
    }
    if let Some(path) = &args.report {
        let wide: Vec<f64> = points.iter().map(|x| x.to_f64()).collect();
        run.report(args, &wide)?.write(path)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        say!("{}", run.json(args, seconds))?;
    } else {
        say!("{}", run.text(args, seconds)?.trim_end())?;
    }
    Ok(())
}

impl Run {
    /// The method and its settings, in one line.
    fn method_line(&self, args: &ClusterArgs) -> String {
        match &self.spectral {
            Some(s) => format!(
                "spectral clustering on the {}-NN graph (σ = {:.4}), {} Lanczos steps (residual {:.1e}), k-means with {RESTARTS} restarts, seed {}",
                s.neighbors, s.sigma, s.steps, s.residual, args.seed
            ),
            None => format!("k-means on the rows with {RESTARTS} restarts, seed {}", args.seed),
        }
    }

    /// The HTML report: the facts, and the rows `points` on their principal plane.
    fn report(&self, args: &ClusterArgs, points: &[f64]) -> Result<Report> {
        let mut page = Report::new("kestrel cluster");
        page.fact("data", format!("{} ({} rows, {})", args.input, self.n, features_phrase(self.dim, args.scale)));
        page.fact("method", self.method_line(args));
        let rand_text = self.rand.map_or("-".to_string(), |rand| format!("{:.2} %", 100.0 * rand));
        page.fact("final figures", format!("{} clusters, RAND index {rand_text}", args.clusters));
        let found = if self.spectral.is_some() { "spectral clustering found" } else { "k-means found on the rows" };
        clusters_figure(&mut page, points, self.dim, &self.clusters.assignments, found)?;
        Ok(page)
    }

    fn json(&self, args: &ClusterArgs, seconds: f64) -> serde_json::Value {
        let mut summary = serde_json::json!({
            "input": args.input,
            "n": self.n,
            "dim": self.dim,
            "scaled": args.scale,
            "method": args.method.name(),
            "clusters": args.clusters,
            "restarts": RESTARTS,
            "seed": args.seed,
            "inertia": self.clusters.inertia,
            "seconds": seconds,
        });
        if let serde_json::Value::Object(fields) = &mut summary {
            if let Some(s) = &self.spectral {
                fields.insert("neighbors".into(), s.neighbors.into());
                fields.insert("sigma".into(), s.sigma.into());
                fields.insert("lanczos_steps".into(), s.steps.into());
                fields.insert("lanczos_residual".into(), s.residual.into());
            }
            if let Some(rand) = self.rand {
                fields.insert("rand".into(), rand.into());
            }
            if let Some(path) = &args.output {
                fields.insert("output".into(), path.display().to_string().into());
            }
        }
        summary
    }

    fn text(&self, args: &ClusterArgs, seconds: f64) -> Result<String> {
        let mut text = String::new();
        writeln!(text, "data: {} — {} rows, {}", args.input, self.n, features_phrase(self.dim, args.scale))?;
        writeln!(text, "method: {}", self.method_line(args))?;
        writeln!(text, "clusters: {}, inertia {:.6} ({seconds:.3} s)", args.clusters, self.clusters.inertia)?;
        if let Some(rand) = self.rand {
            writeln!(text, "RAND index: {:.2} %", 100.0 * rand)?;
        }
        if let Some(path) = &args.output {
            writeln!(text, "wrote {}", path.display())?;
        }
        Ok(text)
    }
}
