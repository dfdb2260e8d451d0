//! Evaluation of NPKL-BCD (seed 004, issue 8 item 6).
//!
//! 1. The paper's protocol (Sect. IV-A) on iris, wine and digits from `../shared/data`
//!    (train + test, standardised by the train statistics, i.e. the whole data set, as the
//!    paper clusters whole data sets): `⌊0.6n⌋` must-link and `⌊0.6n⌋` cannot-link pairs
//!    drawn from the labels, `r` the largest integer with `r(r+1)/2 ≤ m`, a 5-NN graph,
//!    `ε = 10⁻⁵`, at most 1000 sweeps, then k-means with 20 k-means++ restarts (best
//!    inertia kept) on the columns of `V` (kernel k-means on `K = VᵀV`), and the RAND
//!    index against the labels. Beside it, on the same data and seeds: plain k-means on the
//!    features, and RBF kernel k-means (`exp(−‖x−x'‖²/d)`, scikit-learn's `gamma="scale"`
//!    on standardised data) as k-means on pivoted incomplete Cholesky features `G`
//!    (`K ≈ GGᵀ` to a trace residual of 10⁻⁶, so this is kernel k-means up to that
//!    residual). Mean ± standard deviation over the seeds.
//! 2. Per-sweep time on synthetic data (three 2-D Gaussian blobs), n = 10³, 10⁴, 10⁵,
//!    k = 5, m = 1000 pairs (r = 44) as in the paper's Sect. IV-D: graph built by the exact
//!    sorted-projection search (timed separately), then 5 sweeps timed per loss, once in
//!    the paper's random visiting order and once in index order over points renumbered
//!    along a Z-order curve (which shows that the jump at 10⁵ is cache misses).
//!
//! Run: `cargo run --release -p kestrel-tests --example npkl_eval` (options:
//! `--seeds N` (5), `--delta D` (0.1), `--gamma G` (1), `--no-scaling`, `--no-protocol`,
//! `--data DIR`).

use std::time::Instant;

use kestrel_core::cholesky::IncompleteCholesky;
use kestrel_core::cluster::{KMeans, KMeansParams, rand_index_table};
use kestrel_core::npkl::{Constraints, GraphParams, Laplacian, Loss, Npkl, NpklParams, rank_for_pairs};
use kestrel_core::{Kernel, Rng};

const LOSSES: [(Loss, &str); 4] =
    [(Loss::Hinge, "hinge"), (Loss::SquaredHinge, "squared hinge"), (Loss::Square, "square"), (Loss::Linear, "linear")];

struct Options {
    seeds: u64,
    delta: f64,
    gamma: f64,
    scaling: bool,
    protocol: bool,
    data: String,
}

fn options() -> Options {
    let mut o = Options {
        seeds: 5,
        delta: 0.1,
        gamma: 1.0,
        scaling: true,
        protocol: true,
        data: concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data").to_string(),
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().expect("option needs a value").clone();
        match a.as_str() {
            "--seeds" => o.seeds = value().parse().expect("--seeds N"),
            "--delta" => o.delta = value().parse().expect("--delta D"),
            "--gamma" => o.gamma = value().parse().expect("--gamma G"),
            "--data" => o.data = value(),
            "--no-scaling" => o.scaling = false,
            "--no-protocol" => o.protocol = false,
            other => panic!("unknown option {other}"),
        }
    }
    o
}

struct Data {
    points: Vec<f64>,
    dim: usize,
    labels: Vec<u32>,
    classes: usize,
}

impl Data {
    fn n(&self) -> usize {
        self.labels.len()
    }
}

/// train.csv then test.csv of a data set: header, features, label last.
fn load(dir: &str, name: &str) -> Data {
    let mut data = Data { points: Vec::new(), dim: 0, labels: Vec::new(), classes: 0 };
    for part in ["train", "test"] {
        let path = format!("{dir}/{name}/{part}.csv");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let fields: Vec<f64> = line.split(',').map(|f| f.trim().parse().expect("a number")).collect();
            let (label, features) = fields.split_last().expect("a label");
            data.dim = features.len();
            data.points.extend_from_slice(features);
            data.labels.push(*label as u32);
        }
    }
    data.classes = data.labels.iter().max().map_or(0, |&m| m as usize + 1);
    data
}

fn rand(data: &Data, assignments: &[u32]) -> f64 {
    let mut table = vec![0u64; data.classes * assignments.iter().max().map_or(1, |&m| m as usize + 1)];
    rand_index_table(&data.labels, assignments, &mut table).expect("labels")
}

fn kmeans(points: &[f64], dim: usize, clusters: usize, rng: &mut Rng) -> Vec<u32> {
    let n = points.len() / dim;
    let km = KMeans::fit_in(
        vec![0.0; KMeans::scalars_len(n, dim, clusters)],
        vec![0; KMeans::indices_len(n, clusters)],
        points,
        dim,
        KMeansParams::new(clusters).restarts(20).check().expect("k-means"),
        rng,
    )
    .expect("k-means");
    km.assignments().to_vec()
}

fn graph(points: &[f64], dim: usize, delta: f64) -> Laplacian<f64, Vec<f64>, Vec<u32>> {
    let (n, k) = (points.len() / dim, 5);
    Laplacian::build_in(
        vec![0.0; Laplacian::scalars_len(n, k)],
        vec![0; Laplacian::indices_len(n, k)],
        points,
        dim,
        GraphParams::new().neighbors(k).delta(delta).check().expect("graph"),
    )
    .expect("graph")
}

fn drawn(labels: &[u32], per_kind: usize, rng: &mut Rng) -> Constraints<Vec<u32>> {
    let n = labels.len();
    Constraints::from_labels_in(vec![0; Constraints::indices_len(n, 2 * per_kind)], labels, per_kind, per_kind, rng)
        .expect("pairs")
}

#[derive(Default, Clone)]
struct Stat {
    values: Vec<f64>,
}

impl Stat {
    fn push(&mut self, v: f64) {
        self.values.push(v);
    }
    fn mean(&self) -> f64 {
        self.values.iter().sum::<f64>() / self.values.len() as f64
    }
    fn std(&self) -> f64 {
        let m = self.mean();
        (self.values.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / self.values.len() as f64).sqrt()
    }
    fn show(&self) -> String {
        format!("{:.2} ± {:.2}", 100.0 * self.mean(), 100.0 * self.std())
    }
}

fn protocol(o: &Options) {
    println!("## RAND index (%), mean ± std over {} seeds (δ = {}, γ = {})\n", o.seeds, o.delta, o.gamma);
    println!(
        "| data | n | d | m | r | {} | k-means | RBF kernel k-means |",
        LOSSES.iter().map(|(_, name)| *name).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut timing = Vec::new();
    for name in ["iris", "wine", "digits"] {
        let data = load(&o.data, name);
        let (n, d, c) = (data.n(), data.dim, data.classes);
        let per_kind = (0.6 * n as f64) as usize;
        let r = rank_for_pairs(2 * per_kind);
        let mut stats = vec![Stat::default(); LOSSES.len() + 2];
        let mut sweeps = vec![Stat::default(); LOSSES.len()];
        let mut seconds = vec![Stat::default(); LOSSES.len()];
        let kernel = Kernel::rbf(1.0 / d as f64).expect("gamma");
        let max_rank = n.min(600);
        let mut values = vec![0.0; IncompleteCholesky::scalars_len(n, max_rank)];
        let mut pivots = vec![0; IncompleteCholesky::indices_len(max_rank)];
        let ich = IncompleteCholesky::from_kernel_in(
            &mut values[..],
            &mut pivots[..],
            &kernel,
            &data.points,
            d,
            max_rank,
            1e-6,
        )
        .expect("incomplete Cholesky");
        let rank = ich.rank();
        let features: Vec<f64> = (0..n).flat_map(|i| ich.row(i).expect("row").to_vec()).collect();
        for seed in 0..o.seeds {
            let mut rng = Rng::seed_from_u64(seed);
            let constraints = drawn(&data.labels, per_kind, &mut rng);
            let g = graph(&data.points, d, o.delta);
            for (l, &(loss, _)) in LOSSES.iter().enumerate() {
                let mut rng = Rng::seed_from_u64(1000 + seed);
                let start = Instant::now();
                let mut npkl = Npkl::new_in(
                    vec![0.0; Npkl::scalars_len(n, r, constraints.max_degree())],
                    vec![0; n],
                    g.view(),
                    constraints.view(),
                    NpklParams::new(r, loss).gamma(o.gamma).check().expect("solver"),
                    &mut rng,
                )
                .expect("solver");
                let outcome = npkl.run(&mut rng);
                seconds[l].push(start.elapsed().as_secs_f64());
                sweeps[l].push(outcome.sweeps as f64);
                stats[l].push(rand(&data, &kmeans(npkl.columns(), r, c, &mut rng)));
            }
            let mut rng = Rng::seed_from_u64(2000 + seed);
            stats[LOSSES.len()].push(rand(&data, &kmeans(&data.points, d, c, &mut rng)));
            stats[LOSSES.len() + 1].push(rand(&data, &kmeans(&features, rank, c, &mut rng)));
        }
        let cells: Vec<String> = stats.iter().map(Stat::show).collect();
        println!("| {name} | {n} | {d} | {} | {r} | {} |", 2 * per_kind, cells.join(" | "));
        timing.push((name, rank, sweeps, seconds));
    }
    println!("\nSweeps to ε = 10⁻⁵ (cap 1000) and seconds per BCDKL run (mean), rank of the RBF features:\n");
    println!("| data | {} | RBF rank |", LOSSES.iter().map(|(_, name)| *name).collect::<Vec<_>>().join(" | "));
    println!("|---|---|---|---|---|---|");
    for (name, rank, sweeps, seconds) in timing {
        let cells: Vec<String> =
            sweeps.iter().zip(&seconds).map(|(s, t)| format!("{:.0} sweeps, {:.3} s", s.mean(), t.mean())).collect();
        println!("| {name} | {} | {rank} |", cells.join(" | "));
    }
}

/// Three 2-D Gaussian blobs.
fn blobs(n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<u32>) {
    let centres = [(0.0, 0.0), (4.0, 0.0), (2.0, 3.5)];
    let mut points = Vec::with_capacity(2 * n);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let (x, y) = centres[i % 3];
        points.push(x + rng.normal::<f64>());
        points.push(y + rng.normal::<f64>());
        labels.push((i % 3) as u32);
    }
    (points, labels)
}

/// Renumbers the points along a Z-order (Morton) curve, so that graph neighbours are close
/// in memory.
fn morton_order(points: &mut [f64], labels: &mut [u32]) {
    let n = labels.len();
    let (mut lo, mut hi) = ([f64::MAX; 2], [f64::MIN; 2]);
    for p in points.chunks_exact(2) {
        for a in 0..2 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let spread = |x: u32| (0..16).fold(0u64, |acc, b| acc | (u64::from((x >> b) & 1) << (2 * b)));
    let key = |p: &[f64]| {
        let q = |a: usize| ((p[a] - lo[a]) / (hi[a] - lo[a]) * 65535.0) as u32;
        spread(q(0)) | (spread(q(1)) << 1)
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| key(&points[2 * i..2 * i + 2]));
    let (old_points, old_labels) = (points.to_vec(), labels.to_vec());
    for (new, &old) in order.iter().enumerate() {
        points[2 * new..2 * new + 2].copy_from_slice(&old_points[2 * old..2 * old + 2]);
        labels[new] = old_labels[old];
    }
}

fn scaling(o: &Options) {
    println!("\n## Per-sweep time, synthetic 2-D blobs, k = 5, m = 1000 pairs (r = 44), f64\n");
    println!(
        "Visiting order: random per sweep (Algorithm 1) with the points numbered as generated, or index \
         order (`NpklParams::random_order(false)`) with the points numbered along a Z-order curve, so that \
         graph neighbours are close in memory.\n"
    );
    println!("| n | visiting order | nnz(L) | graph build (s) | loss | per sweep (ms) | ns per r·nnz |");
    println!("|---|---|---|---|---|---|---|");
    for (n, random) in [1_000usize, 10_000, 100_000].into_iter().flat_map(|n| [(n, true), (n, false)]) {
        let mut rng = Rng::seed_from_u64(n as u64);
        let (mut points, mut labels) = blobs(n, &mut rng);
        if !random {
            morton_order(&mut points, &mut labels);
        }
        let layout = if random { "random" } else { "index, Z-order" };
        let start = Instant::now();
        let g = graph(&points, 2, o.delta);
        let build = start.elapsed().as_secs_f64();
        let constraints = drawn(&labels, 500, &mut rng);
        let r = rank_for_pairs(1000);
        for (loss, name) in LOSSES {
            let mut npkl = Npkl::new_in(
                vec![0.0; Npkl::scalars_len(n, r, constraints.max_degree())],
                vec![0; n],
                g.view(),
                constraints.view(),
                NpklParams::new(r, loss).gamma(o.gamma).random_order(random).check().expect("solver"),
                &mut rng,
            )
            .expect("solver");
            npkl.sweep(&mut rng); // warm-up
            let sweeps = 5;
            let start = Instant::now();
            for _ in 0..sweeps {
                npkl.sweep(&mut rng);
            }
            let per_sweep = start.elapsed().as_secs_f64() / sweeps as f64;
            let per_unit = per_sweep * 1e9 / (r * g.nnz()) as f64;
            println!("| {n} | {layout} | {} | {build:.3} | {name} | {:.2} | {per_unit:.2} |", g.nnz(), per_sweep * 1e3);
        }
    }
}

fn main() {
    let o = options();
    if o.protocol {
        protocol(&o);
    }
    if o.scaling {
        scaling(&o);
    }
}
