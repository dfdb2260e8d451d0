//! `kestrel npkl`: learn a kernel matrix from must-link / cannot-link pairs (NPKL by block
//! coordinate descent, seed 004) and cluster with it.
//!
//! The input is read whole (CSV with a header and the label last, or LibSVM; `-` for
//! standard input) into dense rows, and learned on by [`npkl::learn`] (the kNN graph, the
//! pairs, BCDKL, k-means with 20 restarts on the learned kernel). With labels, the RAND
//! index of the clustering is printed.
//!
//! **Labels.** Every row of the input formats carries a label; the labels count as present
//! unless they are all equal (a constant dummy column). They are used only to draw pairs
//! (`--constraints-from-labels`) and to score the clustering.
//!
//! **PAIRS file** (`--constraints`): one pair per line, `i j must` or `i j cannot`, where
//! `i` and `j` are 0-based row numbers of the input (data rows, the CSV header not
//! counted); fields separated by spaces, tabs or commas; `ml`/`cl` are accepted for
//! `must`/`cannot`; blank lines and text after `#` are ignored. A pair naming a row that
//! does not exist, a self-pair, a pair given twice, or a pair both must- and cannot-link is
//! an error naming its line.
//!
//! **Output** (`--output PATH`): CSV with a header, one row per input row:
//! `row,cluster,v0,…,v{r−1}` — the cluster assignment and the learned representation
//! `v_i` (so `K_ij = v_i·v_j`).
//!
//! Exit status as the rest of `kestrel`: 0 on success, 1 on a data or runtime error.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use kestrel_core::cluster::rand_index_table;
use kestrel_core::npkl::{Link, Loss, Pair, StopReason};

use kestrel_stream::batch::clusters::RESTARTS;
use kestrel_stream::batch::npkl::{self, NpklRun, NpklSettings, PairSource};
use kestrel_stream::batch::spectral;
use kestrel_stream::dataset::Dataset;
use kestrel_stream::file;
use kestrel_stream::labels::Labels;
use kestrel_stream::limits::{MAX_FILE_BYTES, zeroed};

use crate::args::{CategoricalArgs, ColumnArgs, count, non_negative};
use crate::commands::{category_options, features_phrase, points, read_strict};
use crate::report::Report;
use crate::report::chart::{Dots, Plot, pick};

/// The largest rank of the learned kernel.
const MAX_RANK: usize = 1 << 12;
/// The most neighbours or clusters.
const MAX_GROUPS: usize = 1 << 16;

/// The loss between the learned kernel and the pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LossArg {
    /// `max(1 − z, 0)`.
    Hinge,
    /// `max(1 − z, 0)²`.
    SquaredHinge,
    /// `(1 − z)²`.
    Square,
    /// `−z`, with `‖v_i‖ ≤ 1`.
    Linear,
}

impl LossArg {
    fn loss(self) -> Loss {
        match self {
            LossArg::Hinge => Loss::Hinge,
            LossArg::SquaredHinge => Loss::SquaredHinge,
            LossArg::Square => Loss::Square,
            LossArg::Linear => Loss::Linear,
        }
    }

    fn name(self) -> &'static str {
        match self {
            LossArg::Hinge => "hinge",
            LossArg::SquaredHinge => "squared-hinge",
            LossArg::Square => "square",
            LossArg::Linear => "linear",
        }
    }
}

/// Learns a kernel from pairwise constraints (NPKL-BCD) and clusters with it.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("pairs").required(true).args(["constraints", "constraints_from_labels"])))]
pub struct NpklArgs {
    /// Data set: CSV with a header (label in the last column unless --label-column says)
    /// or LibSVM; `-` for stdin.
    #[arg(long, value_name = "DATA")]
    pub input: String,
    #[command(flatten)]
    pub columns: ColumnArgs,
    #[command(flatten)]
    pub categorical: CategoricalArgs,
    /// Pairs file: one `i j must|cannot` per line, 0-based row numbers of DATA.
    #[arg(long, value_name = "PAIRS")]
    pub constraints: Option<PathBuf>,
    /// Draw FRACTION·n must-link and FRACTION·n cannot-link pairs from the labels.
    #[arg(long, value_name = "FRACTION", value_parser = non_negative)]
    pub constraints_from_labels: Option<f64>,
    /// Rank r of K = VᵀV [default: the largest r with r(r+1)/2 ≤ number of pairs], at most 4096.
    #[arg(long, value_name = "R", value_parser = count(1, MAX_RANK))]
    pub rank: Option<usize>,
    /// Standardise every feature by its mean and standard deviation over the rows before
    /// clustering (readings in units of very different sizes).
    #[arg(long)]
    pub scale: bool,
    /// Nearest neighbours k of the graph [default: 5, or one less than the rows on fewer
    /// than 6].
    #[arg(long, value_name = "K", value_parser = count(1, MAX_GROUPS))]
    pub neighbors: Option<usize>,
    /// Loss between the kernel and the pairs (hinge by default, as `cluster --method npkl`:
    /// within 0.2 point of the best RAND index on iris, wine and digits, BENCHMARKS.md).
    #[arg(long, value_enum, default_value = "hinge")]
    pub loss: LossArg,
    /// Number of clusters for k-means on the learned kernel.
    #[arg(long, value_name = "C", value_parser = count(1, MAX_GROUPS))]
    pub clusters: usize,
    /// Seed of the pair draw, the initial V, the visiting orders and k-means.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Print a JSON summary on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Write `row,cluster,v0,…` (assignments and learned representation) as CSV here.
    #[arg(long, value_name = "PATH", value_parser = crate::args::output_file)]
    pub output: Option<PathBuf>,
    /// Write an HTML report here: the data on its first two principal components,
    /// coloured by cluster.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
}

/// Runs `kestrel npkl`.
///
/// # Errors
/// Unreadable input or pairs, invalid parameters, or any core error, with context.
pub fn run(args: &NpklArgs) -> Result<()> {
    let started = Instant::now();
    let data: Dataset<f64> = read_strict(&args.input, &category_options(&args.columns, &args.categorical))?;
    let (n, dim) = (data.len(), data.dim());
    let points = points(&data, args.scale)?;
    let classes = Classes::of(data.labels());
    let pairs_file;
    let source = match (&args.constraints, args.constraints_from_labels) {
        (Some(path), _) => {
            pairs_file = read_pairs(path, n)?;
            PairSource::Given(&pairs_file)
        }
        (None, Some(fraction)) => match &classes {
            Some(classes) => PairSource::FromClasses { classes: &classes.ids, fraction },
            None => bail!("--constraints-from-labels needs labels: every row of {} has the same label", args.input),
        },
        (None, None) => bail!("give --constraints PAIRS or --constraints-from-labels FRACTION"),
    };
    let settings = NpklSettings {
        rank: args.rank,
        neighbors: spectral::neighbors_for(args.neighbors, npkl::DEFAULT_NEIGHBORS, n),
        loss: args.loss.loss(),
        clusters: args.clusters,
        seed: args.seed,
    };
    let progress = std::io::stderr().is_terminal() && !args.json;
    let run = npkl::learn(points, dim, source, &settings, |report| {
        if progress && report.sweep % 10 == 0 {
            eprint!(
                "\rsweep {:>5}  objective {:>14.6}  change {:.2e}",
                report.sweep, report.objective, report.relative_change
            );
        }
    })
    .with_context(|| args.input.clone())?;
    if progress {
        eprint!("\r{:70}\r", "");
    }
    let rand =
        classes.as_ref().map(|classes| classes.rand_index(&run.clusters.assignments, args.clusters)).transpose()?;
    if let Some(path) = &args.output {
        write_output(path, &run.clusters.assignments, run.kernel.columns(), run.kernel.rank())?;
    }
    let total_seconds = started.elapsed().as_secs_f64();
    if let Some(path) = &args.report {
        let mut page = Report::new("kestrel npkl");
        page.fact("data", format!("{} ({n} rows, {})", args.input, features_phrase(dim, args.scale)));
        page.fact(
            "kernel",
            format!(
                "rank {}, loss {}, {} neighbours, seed {}",
                run.kernel.rank(),
                args.loss.name(),
                run.kernel.graph().k(),
                args.seed
            ),
        );
        page.fact(
            "final figures",
            format!(
                "{} clusters, inertia {:.6}, RAND index {}",
                args.clusters,
                run.clusters.inertia,
                rand.map_or("-".to_string(), |rand| format!("{:.2} %", 100.0 * rand))
            ),
        );
        clusters_figure(
            &mut page,
            run.kernel.points(),
            dim,
            &run.clusters.assignments,
            "k-means found on the learned kernel",
        )?;
        page.write(path)?;
    }
    if args.json {
        say!("{}", json_summary(args, &run, rand, total_seconds))?;
    } else {
        say!("{}", text_summary(args, &run, rand)?.trim_end())?;
    }
    Ok(())
}

fn stop_name(run: &NpklRun) -> &'static str {
    match run.outcome.reason {
        StopReason::Converged => "converged",
        StopReason::SweepCap => "sweep_cap",
    }
}

fn json_summary(args: &NpklArgs, run: &NpklRun, rand: Option<f64>, total_seconds: f64) -> serde_json::Value {
    let (kernel, outcome) = (&run.kernel, &run.outcome);
    let mut summary = serde_json::json!({
        "input": args.input,
        "n": kernel.points().len() / kernel.dim(),
        "dim": kernel.dim(),
        "scaled": args.scale,
        "neighbors": kernel.graph().k(),
        "sigma": kernel.graph().sigma(),
        "pairs": run.pairs.total,
        "must_link": run.pairs.must,
        "cannot_link": run.pairs.total - run.pairs.must,
        "rank": kernel.rank(),
        "loss": args.loss.name(),
        "seed": args.seed,
        "stop": stop_name(run),
        "sweeps": outcome.sweeps,
        "initial_objective": outcome.initial_objective,
        "objective": outcome.objective,
        "objective_per_sweep": run.objectives,
        "relative_change": outcome.relative_change,
        "clusters": args.clusters,
        "restarts": RESTARTS,
        "inertia": run.clusters.inertia,
        "seconds": { "graph": run.seconds.graph, "learn": run.seconds.learn, "cluster": run.seconds.cluster,
                     "total": total_seconds },
        "bytes": run.bytes.iter().map(|&(name, b)| (name.to_string(), serde_json::Value::from(b))).collect::<serde_json::Map<_, _>>(),
    });
    if let serde_json::Value::Object(fields) = &mut summary {
        if let Some(rand) = rand {
            fields.insert("rand".to_string(), serde_json::Value::from(rand));
        }
        if let Some(path) = &args.output {
            fields.insert("output".to_string(), serde_json::Value::from(path.display().to_string()));
        }
    }
    summary
}

fn text_summary(args: &NpklArgs, run: &NpklRun, rand: Option<f64>) -> Result<String> {
    let (kernel, outcome, seconds) = (&run.kernel, &run.outcome, &run.seconds);
    let (n, dim, k) = (kernel.points().len() / kernel.dim(), kernel.dim(), kernel.graph().k());
    let mut text = String::new();
    writeln!(text, "data: {} — {n} rows, {}", args.input, features_phrase(dim, args.scale))?;
    writeln!(
        text,
        "pairs: {} ({} must-link, {} cannot-link) on {} points",
        run.pairs.total,
        run.pairs.must,
        run.pairs.total - run.pairs.must,
        run.pairs.constrained_points
    )?;
    writeln!(
        text,
        "graph: {k}-NN, {} entries, σ = {:.4} ({:.3} s)",
        kernel.graph().nnz(),
        kernel.graph().sigma(),
        seconds.graph
    )?;
    writeln!(
        text,
        "BCDKL: loss {}, rank {}, {} after {} sweeps, objective {:.6} → {:.6} ({:.3} s)",
        args.loss.name(),
        kernel.rank(),
        stop_name(run),
        outcome.sweeps,
        outcome.initial_objective,
        outcome.objective,
        seconds.learn
    )?;
    writeln!(
        text,
        "k-means: {} clusters, {RESTARTS} restarts, inertia {:.6} ({:.3} s)",
        args.clusters, run.clusters.inertia, seconds.cluster
    )?;
    let memory: Vec<String> = run.bytes.iter().map(|(name, b)| format!("{name} {b}")).collect();
    writeln!(text, "memory (bytes, f64): {}", memory.join(", "))?;
    if let Some(rand) = rand {
        writeln!(text, "RAND index: {:.2} %", 100.0 * rand)?;
    }
    if let Some(path) = &args.output {
        writeln!(text, "wrote {}", path.display())?;
    }
    Ok(text)
}

/// The class of each row, when the labels are classes: more than one distinct value, and
/// no more than a classifier takes.
pub(crate) struct Classes {
    labels: Labels,
    /// The class of each row.
    pub ids: Vec<usize>,
}

impl Classes {
    /// The classes of `labels`, or `None` when they are not classes.
    pub(crate) fn of(labels: &[f64]) -> Option<Classes> {
        let classes = Labels::of(labels).ok().filter(|classes| classes.len() > 1)?;
        let ids = labels.iter().map(|&l| classes.find(l).unwrap_or(0)).collect();
        Some(Classes { labels: classes, ids })
    }

    /// The RAND index of `assignments` (into `clusters` clusters) against the classes.
    pub(crate) fn rand_index(&self, assignments: &[u32], clusters: usize) -> Result<f64> {
        let mut table = zeroed(self.labels.len() * clusters, "the RAND index")?;
        let truth: Vec<u32> = self.ids.iter().map(|&c| u32::try_from(c).unwrap_or(u32::MAX)).collect();
        Ok(rand_index_table(&truth, assignments, &mut table)?)
    }
}

/// The rows of `points` (`dim` features each) on their first two principal components,
/// a dot per row coloured by the cluster `found` (`"k-means found on …"`) put it in.
pub(crate) fn clusters_figure(
    page: &mut Report,
    points: &[f64],
    dim: usize,
    assignments: &[u32],
    found: &str,
) -> Result<()> {
    let projected = principal_plane(points, dim)?;
    let clusters = assignments.iter().max().map_or(0, |&c| c as usize + 1);
    let mut plot =
        Plot::new("first principal component (standardised units)", "second principal component (standardised units)");
    for cluster in 0..clusters {
        let members = projected.iter().zip(assignments).filter(|&(_, &c)| c as usize == cluster).map(|(&p, _)| p);
        plot.dots.push(Dots { name: format!("cluster {cluster}"), points: members.collect(), colour: pick(cluster) });
    }
    let caption = format!(
        "Each row on the plane of the data's two directions of largest variance (principal components of the \
         input features), coloured by the cluster {found}."
    );
    page.figure("Clusters on the data's principal plane", &caption, plot.svg()?);
    Ok(())
}

/// The coordinates of each row of `points` on the two leading eigenvectors of the
/// features' covariance (the second 0 for one feature): `O(n·d² + d³)`.
fn principal_plane(points: &[f64], dim: usize) -> Result<Vec<(f64, f64)>> {
    let n = (points.len() / dim.max(1)).max(1) as f64;
    let mut mean = vec![0.0; dim];
    for row in points.chunks_exact(dim) {
        mean.iter_mut().zip(row).for_each(|(m, x)| *m += x / n);
    }
    let mut covariance = zeroed(dim * dim, "the covariance")?;
    for row in points.chunks_exact(dim) {
        for (i, xi) in row.iter().zip(&mean).map(|(x, m)| x - m).enumerate() {
            let line = covariance.get_mut(i * dim..(i + 1) * dim).unwrap_or_default();
            line.iter_mut().zip(row.iter().zip(&mean)).for_each(|(c, (x, m))| *c += xi * (x - m) / n);
        }
    }
    let (mut values, mut vectors) = (zeroed(dim, "eigenvalues")?, zeroed(dim * dim, "eigenvectors")?);
    kestrel_core::linalg::symmetric_eigen(&mut covariance, dim, &mut values, &mut vectors)?;
    let component = |row: &[f64], k: usize| -> f64 {
        row.iter()
            .zip(&mean)
            .enumerate()
            .map(|(i, (x, m))| (x - m) * vectors.get(i * dim + k).copied().unwrap_or(0.0))
            .sum()
    };
    Ok(points.chunks_exact(dim).map(|row| (component(row, 0), if dim > 1 { component(row, 1) } else { 0.0 })).collect())
}

/// Reads a PAIRS file (at most `MAX_FILE_BYTES`), checking every line against `n` rows.
fn read_pairs(path: &Path, n: usize) -> Result<Vec<Pair>> {
    let bytes = file::read_bounded(path, MAX_FILE_BYTES).with_context(|| format!("cannot read {}", path.display()))?;
    let text = String::from_utf8(bytes).with_context(|| format!("{}: not UTF-8 text", path.display()))?;
    parse_pairs(&text, n).with_context(|| format!("{}", path.display()))
}

fn parse_pairs(text: &str, n: usize) -> Result<Vec<Pair>> {
    let mut pairs = Vec::new();
    let mut seen: HashMap<(usize, usize), (usize, Link)> = HashMap::new();
    for (number, line) in text.lines().enumerate().map(|(l, s)| (l + 1, s)) {
        let content = line.split('#').next().unwrap_or("");
        let fields: Vec<&str> =
            content.split(|c: char| c.is_whitespace() || c == ',').filter(|f| !f.is_empty()).collect();
        if fields.is_empty() {
            continue;
        }
        let [i, j, kind] = fields[..] else {
            bail!("line {number}: expected `i j must|cannot`, found {} fields", fields.len());
        };
        let index = |s: &str| -> Result<usize> {
            let v: usize = s.parse().with_context(|| format!("line {number}: `{s}` is not a row number"))?;
            if v >= n {
                bail!("line {number}: row {v} does not exist (the input has {n} rows, numbered from 0)");
            }
            Ok(v)
        };
        let (i, j) = (index(i)?, index(j)?);
        let link = match kind.to_ascii_lowercase().as_str() {
            "must" | "ml" => Link::Must,
            "cannot" | "cl" => Link::Cannot,
            other => bail!("line {number}: `{other}` is neither `must` nor `cannot`"),
        };
        if i == j {
            bail!("line {number}: a point cannot be paired with itself ({i})");
        }
        if let Some(&(first, previous)) = seen.get(&(i.min(j), i.max(j))) {
            if previous == link {
                bail!("line {number}: the pair ({i}, {j}) was already given on line {first}");
            }
            bail!("line {number}: the pair ({i}, {j}) is both must-link and cannot-link (see line {first})");
        }
        seen.insert((i.min(j), i.max(j)), (number, link));
        pairs.push(Pair::new(i, j, link));
    }
    Ok(pairs)
}

fn write_output(path: &Path, assignments: &[u32], columns: &[f64], rank: usize) -> Result<()> {
    let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let header: Vec<String> = (0..rank).map(|a| format!("v{a}")).collect();
    writeln!(out, "row,cluster,{}", header.join(","))?;
    for (i, (&c, v)) in assignments.iter().zip(columns.chunks_exact(rank)).enumerate() {
        let values: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
        writeln!(out, "{i},{c},{}", values.join(","))?;
    }
    out.flush().with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_file_format_and_errors() {
        let text = "# comment\n0 1 must\n\n2,3,cannot  # trailing\n4\t0\tML\n";
        let pairs = parse_pairs(text, 5).unwrap();
        assert_eq!(pairs, [Pair::new(0, 1, Link::Must), Pair::new(2, 3, Link::Cannot), Pair::new(4, 0, Link::Must)]);
        let error = |text: &str| format!("{:#}", parse_pairs(text, 5).unwrap_err());
        assert_eq!(error("0 5 must\n"), "line 1: row 5 does not exist (the input has 5 rows, numbered from 0)");
        assert_eq!(
            error("0 1 must\n1 0 cannot\n"),
            "line 2: the pair (1, 0) is both must-link and cannot-link (see line 1)"
        );
        assert_eq!(error("0 1 must\n\n1 0 must\n"), "line 3: the pair (1, 0) was already given on line 1");
        assert_eq!(error("2 2 cannot\n"), "line 1: a point cannot be paired with itself (2)");
        assert_eq!(error("0 1 maybe\n"), "line 1: `maybe` is neither `must` nor `cannot`");
        assert_eq!(error("0 1\n"), "line 1: expected `i j must|cannot`, found 2 fields");
        assert!(error("x 1 must\n").starts_with("line 1: `x` is not a row number"));
    }
}
