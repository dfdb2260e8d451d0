//! `--report FILE.html` as a person sees it: the pages fetch nothing, their charts draw the
//! run's series at the right length and height with labelled axes, a resumed run's report
//! covers the whole stream, and Chromium renders a page without an error.

use std::path::Path;
use std::process::{Command, Output};

use kestrel_stream::checkpoint::Checkpoint;

use crate::scratch::Scratch;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");

fn kestrel(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_kestrel")).args(args).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn data(file: &str) -> String {
    format!("{DATA}/{file}")
}

/// The page at `path`, checked to fetch nothing.
fn page(path: &Path) -> String {
    let html = std::fs::read_to_string(path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for fetch in ["<script", "<link", "<img", "src=", "href=", "@import", "url("] {
        assert!(!html.contains(fetch), "{fetch} in {}", path.display());
    }
    html
}

/// The inline SVGs of a page.
fn svgs(html: &str) -> Vec<&str> {
    html.split("<svg").skip(1).map(|rest| rest.split("</svg>").next().unwrap()).collect()
}

/// The value of attribute `name` in the tag `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[start..].split('"').next()
}

/// A polyline of an SVG: its stroke colour, its width and its points.
type Polyline = (String, String, Vec<(f64, f64)>);

/// The polylines of an SVG.
fn polylines(svg: &str) -> Vec<Polyline> {
    svg.split("<polyline")
        .skip(1)
        .map(|tag| {
            let tag = tag.split("/>").next().unwrap();
            let points = attribute(tag, "points").unwrap().split_whitespace().map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            });
            (
                attribute(tag, "stroke").unwrap().to_string(),
                attribute(tag, "stroke-width").unwrap().to_string(),
                points.collect(),
            )
        })
        .collect()
}

/// The texts of an SVG with their anchor and position.
fn texts(svg: &str) -> Vec<(String, f64, f64, String)> {
    svg.split("<text")
        .skip(1)
        .map(|tag| {
            let (open, rest) = tag.split_once('>').unwrap();
            let text = rest.split("</text>").next().unwrap().trim().to_string();
            let number = |name| attribute(open, name).unwrap().parse().unwrap();
            (attribute(open, "text-anchor").unwrap().to_string(), number("x"), number("y"), text)
        })
        .collect()
}

/// The y axis of an SVG chart: the pixel-to-value map its lowest and highest tick labels give.
fn y_axis(svg: &str) -> impl Fn(f64) -> f64 {
    let mut ticks: Vec<(f64, f64)> = texts(svg)
        .into_iter()
        .filter(|(anchor, ..)| anchor == "end")
        .filter_map(|(_, _, y, text)| text.parse::<f64>().ok().map(|value| (y, value)))
        .collect();
    ticks.sort_by(|a, b| a.1.total_cmp(&b.1));
    let ((y0, v0), (y1, v1)) = (ticks[0], *ticks.last().unwrap());
    move |y| v0 + (y - y0) * (v1 - v0) / (y1 - y0)
}

/// The series drawn in colour `stroke` at width 2 (a result, not a reference).
fn series(lines: Vec<Polyline>, stroke: &str) -> Vec<(f64, f64)> {
    lines.into_iter().find(|(colour, width, _)| colour == stroke && width == "2").unwrap().2
}

const BLUE: &str = "#1F77B4";

#[test]
fn a_stream_report_draws_the_history_the_checkpoint_holds() {
    let dir = Scratch::new("report", "stream");
    let (report, checkpoint) = (dir.str("run.html"), dir.str("run.ckpt"));
    let input = data("phishing/train.csv");
    kestrel(&["stream", "--learner", "svm", "--input", &input, "--report", &report, "--checkpoint", &checkpoint]);
    let history = Checkpoint::read(&dir.path("run.ckpt")).unwrap().history;
    let html = page(&dir.path("run.html"));
    for fact in ["<th>command</th>", "--learner svm", "phishing/train.csv", "<th>final figures</th>", "accuracy"] {
        assert!(html.contains(fact), "{fact}");
    }
    let charts = svgs(&html);
    assert_eq!(charts.len(), 4, "error, throughput, size, work");
    let error = charts[0];
    let labels: Vec<String> = texts(error).into_iter().map(|t| t.3).collect();
    for label in ["row", "error rate (%)", "rolling (each bucket)", "baseline: majority label so far, rolling"] {
        assert!(labels.iter().any(|l| l == label), "{label}: {labels:?}");
    }
    // 937 rows: buckets of 4 rows, one point a bucket, at the height of its error rate.
    let buckets = history.loss.buckets();
    assert_eq!((history.loss.rows(), history.loss.width(), buckets.len()), (937, 4, 235));
    let rolling = series(polylines(error), BLUE);
    assert_eq!(rolling.len(), buckets.len());
    assert!(rolling.windows(2).all(|w| w[0].0 < w[1].0), "rows increase left to right");
    let value = y_axis(error);
    for (&(_, y), bucket) in rolling.iter().zip(buckets) {
        let drawn = value(y);
        assert!((0.0..=100.0).contains(&drawn));
        assert!((drawn - 100.0 * bucket.mean().unwrap()).abs() < 0.6, "{drawn} vs {bucket:?}");
    }
    let size = charts[2];
    assert!(texts(size).iter().any(|t| t.3 == "held by the learner (samples, centres)"));
    let window = series(polylines(size), BLUE);
    let fill = y_axis(size);
    assert!(window.iter().all(|&(_, y)| fill(y) <= 256.0 + 2.0), "the window holds at most 256 samples");
    assert!(fill(window.last().unwrap().1) > 250.0);
    assert!(texts(charts[1]).iter().any(|t| t.3 == "rows per second (rows/s)"));
    // The steps per sample: a bucket's mean at its height (within 6 steps, a pixel or two),
    // none past the cap of 300 for each of the three costs raced through the first window.
    let work = charts[3];
    assert!(texts(work).iter().any(|t| t.3 == "coordinate steps per sample"));
    let (mean, height) = (series(polylines(work), BLUE), y_axis(work));
    assert_eq!(mean.len(), history.steps.buckets().len());
    for (&(_, y), bucket) in mean.iter().zip(history.steps.buckets()) {
        let (drawn, steps) = (height(y), bucket.mean().unwrap());
        assert!(bucket.max <= 3.0 * 300.0 && (drawn - steps).abs() < 6.0, "{drawn} vs {bucket:?}");
    }
}

#[test]
fn a_resumed_run_reports_the_whole_stream() {
    let dir = Scratch::new("report", "resume");
    let input = data("phishing/train.csv");
    let (whole, part) = (dir.str("whole.ckpt"), dir.str("part.ckpt"));
    let run = |checkpoint: &str, extra: &[&str]| {
        let args =
            ["stream", "--learner", "svm", "--input", &input, "--checkpoint", checkpoint, "--checkpoint-every", "0"];
        kestrel(&[&args[..], extra].concat());
    };
    run(&whole, &[]);
    run(&part, &["--max-rows", "300"]);
    assert_eq!(Checkpoint::read(&dir.path("part.ckpt")).unwrap().history.loss.rows(), 300);
    run(&part, &["--resume", "--report", &dir.str("resumed.html")]);
    let (a, b) =
        (Checkpoint::read(&dir.path("whole.ckpt")).unwrap(), Checkpoint::read(&dir.path("part.ckpt")).unwrap());
    assert_eq!(b.history.loss, a.history.loss);
    assert_eq!(
        (b.history.baseline, b.history.window, b.history.centres, b.history.steps),
        (a.history.baseline, a.history.window, a.history.centres, a.history.steps)
    );
    assert_eq!(b.history.seconds.rows(), 937);
    let html = page(&dir.path("resumed.html"));
    assert_eq!(series(polylines(svgs(&html)[0]), BLUE).len(), 235);
}

#[test]
fn a_novelty_report_draws_the_score_its_threshold_and_the_flags() {
    let dir = Scratch::new("report", "novelty");
    let input = data("breast_cancer/train.csv");
    kestrel(&["stream", "--learner", "novelty", "--input", &input, "--warmup", "50", "--report", &dir.str("n.html")]);
    let html = page(&dir.path("n.html"));
    let score = svgs(&html).into_iter().find(|svg| svg.contains("score d²")).unwrap();
    let labels: Vec<String> = texts(score).into_iter().map(|t| t.3).collect();
    for label in
        ["score d² (squared feature-space distance)", "threshold", "score, min to max", "buckets with flagged rows"]
    {
        assert!(labels.iter().any(|l| l == label), "{label}: {labels:?}");
    }
    // 426 rows in buckets of 2: the warm-up's 50 have no score.
    assert_eq!(series(polylines(score), BLUE).len(), 213 - 25);
}

#[test]
fn eval_reports_a_confusion_matrix_and_roc_or_predicted_against_true() {
    let dir = Scratch::new("report", "eval");
    let model = dir.str("svm.kestrel");
    kestrel(&["train", "--learner", "svm", "--input", &data("breast_cancer/train.csv"), "--out", &model]);
    kestrel(&["eval", "--model", &model, "--input", &data("breast_cancer/test.csv"), "--report", &dir.str("c.html")]);
    let html = page(&dir.path("c.html"));
    assert!(html.contains("Confusion matrix") && html.contains("ROC curve") && html.contains("AUC 0.99"));
    let matrix = svgs(&html)[0];
    let cells: u64 = texts(matrix)
        .iter()
        .filter(|t| t.0 == "middle" && t.3.chars().all(|c| c.is_ascii_digit()))
        .map(|t| t.3.parse::<u64>().unwrap())
        .filter(|&count| count > 1)
        .sum();
    assert_eq!(cells, 143, "every test row in one cell");
    // Weighed rows: the summary weighs them, the matrix still counts them, and says so.
    let text = std::fs::read_to_string(data("breast_cancer/test.csv")).unwrap();
    let weighed: Vec<String> =
        text.lines().enumerate().map(|(i, line)| format!("{},{line}", if i == 0 { "w" } else { "2" })).collect();
    std::fs::write(dir.path("weighed.csv"), weighed.join("\n")).unwrap();
    let (weighed, report) = (dir.str("weighed.csv"), dir.str("w.html"));
    kestrel(&["eval", "--model", &model, "--input", &weighed, "--weight-column", "w", "--report", &report]);
    let html = page(&dir.path("w.html"));
    assert!(html.contains("the scores of the summary weigh the rows, the figures count them"), "{html}");
    // With class probabilities, a third figure: the reliability diagram of class 1.
    let calibrated = dir.str("calibrated.kestrel");
    kestrel(&[
        "train",
        "--learner",
        "svm",
        "--input",
        &data("breast_cancer/train.csv"),
        "--out",
        &calibrated,
        "--probabilities",
    ]);
    kestrel(&[
        "eval",
        "--model",
        &calibrated,
        "--input",
        &data("breast_cancer/test.csv"),
        "--report",
        &dir.str("p.html"),
    ]);
    let html = page(&dir.path("p.html"));
    let charts = svgs(&html);
    assert!(html.contains("Reliability diagram") && charts.len() == 3, "{html}");
    assert!(texts(charts[2]).iter().any(|t| t.3 == "share of class 1"), "{}", charts[2]);
    assert!(!page(&dir.path("c.html")).contains("Reliability diagram"), "none without probabilities");
    let regressor = dir.str("slkl.kestrel");
    kestrel(&[
        "train",
        "--learner",
        "slkl",
        "--input",
        &data("diabetes/train.csv"),
        "--out",
        &regressor,
        "--centers",
        "32",
    ]);
    kestrel(&["eval", "--model", &regressor, "--input", &data("diabetes/test.csv"), "--report", &dir.str("r.html")]);
    let html = page(&dir.path("r.html"));
    let charts = svgs(&html);
    assert_eq!(charts.len(), 2);
    for (chart, axis) in
        charts.iter().zip(["predicted value (target units)", "residual: predicted − true (target units)"])
    {
        assert!(texts(chart).iter().any(|t| t.3 == axis), "{axis}");
        // A dot per test row, and one in the legend.
        assert_eq!(chart.matches("<circle").count(), 111 + 1);
    }
}

#[test]
fn tune_npkl_and_cluster_reports() {
    let dir = Scratch::new("report", "tune");
    let input = data("breast_cancer/train.csv");
    let report = dir.str("tune.html");
    kestrel(&[
        "tune",
        "--learner",
        "svm",
        "--input",
        &input,
        "--c-grid",
        "0.01,1,100",
        "--folds",
        "2",
        "--report",
        &report,
    ]);
    let html = page(&dir.path("tune.html"));
    let charts = svgs(&html);
    assert_eq!(charts.len(), 2, "score against c, time per candidate");
    let labels: Vec<String> = texts(charts[0]).into_iter().map(|t| t.3).collect();
    for label in ["log₁₀ c", "2-fold accuracy %", "chosen c", "-2", "2"] {
        assert!(labels.iter().any(|l| l == label), "{label}: {labels:?}");
    }
    assert_eq!(charts[0].matches("<circle").count(), 3 + 1);
    assert!(texts(charts[1]).iter().any(|t| t.3 == "seconds per candidate (s)"));
    let iris = data("iris/train.csv");
    let args = ["npkl", "--input", &iris, "--constraints-from-labels", "0.3", "--loss", "hinge", "--clusters", "3"];
    kestrel(&[&args[..], &["--report", &dir.str("npkl.html")]].concat());
    let html = page(&dir.path("npkl.html"));
    let plane = svgs(&html)[0];
    assert_eq!(plane.matches("<circle").count(), 112 + 3, "a dot per row, one per cluster in the legend");
    assert!(texts(plane).iter().any(|t| t.3 == "first principal component (standardised units)"));
    let (report, out) = (dir.str("cluster.html"), dir.str("clusters.csv"));
    kestrel(&["cluster", "--input", &iris, "--clusters", "3", "--report", &report, "--output", &out]);
    let html = page(&dir.path("cluster.html"));
    let plane = svgs(&html)[0];
    assert_eq!(plane.matches("<circle").count(), 112 + 3, "a dot per row, one per cluster in the legend");
    // The RAND index the page states, counted here from the clusters written and the labels.
    let column = |text: &str, field: usize| -> Vec<String> {
        text.lines().skip(1).map(|line| line.split(',').nth(field).unwrap_or_default().to_string()).collect()
    };
    let clusters = column(&std::fs::read_to_string(&out).unwrap(), 1);
    let labels = column(&std::fs::read_to_string(&iris).unwrap(), 4);
    let n = labels.len();
    let agree = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| (labels[i] == labels[j]) == (clusters[i] == clusters[j]))
        .count();
    let rand = 100.0 * agree as f64 / (n * (n - 1) / 2) as f64;
    assert!(html.contains("spectral clustering on the 10-NN graph"), "{html}");
    assert!(html.contains(&format!("RAND index {rand:.2} %")), "{rand:.2}");
}

/// Chromium's screenshot of `page` (`None`, with the reason printed, when Chromium is not
/// installed and `KESTREL_REQUIRE_CHROMIUM` is unset), and what it logged.
fn screenshot(page: &Path, png: &Path, profile: &Path) -> Option<String> {
    let chromium =
        ["chromium", "chromium-browser"].into_iter().find(|name| Command::new(name).arg("--version").output().is_ok());
    let Some(chromium) = chromium else {
        assert!(
            std::env::var_os("KESTREL_REQUIRE_CHROMIUM").is_none(),
            "KESTREL_REQUIRE_CHROMIUM is set but Chromium is not installed"
        );
        eprintln!("skipped: Chromium is not installed (apt-get install chromium)");
        return None;
    };
    let output = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    Some(String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn chromium_renders_a_report_without_an_error() {
    let dir = Scratch::new("report", "chromium");
    let input = data("phishing/train.csv");
    kestrel(&["stream", "--learner", "rsvm", "--input", &input, "--report", &dir.str("run.html")]);
    // The width rsvm's race kept reads among the final figures as a field of its own.
    let html = page(&dir.path("run.html"));
    assert!(html.contains(", chosen gamma 0.") && !html.contains("{&quot;gamma"), "{html}");
    let Some(log) = screenshot(&dir.path("run.html"), &dir.path("run.png"), &dir.path("profile")) else { return };
    for line in log.lines() {
        let page_error = ["CONSOLE", "Uncaught", "ERR_FILE_NOT_FOUND", "net::ERR", "Failed to load resource"];
        assert!(!page_error.iter().any(|e| line.contains(e)), "the page logged: {line}");
    }
    let decoder = png::Decoder::new(std::fs::File::open(dir.path("run.png")).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size()];
    let frame = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((frame.width, frame.height), (1200, 2000));
    let pixels = &pixels[..frame.buffer_size()];
    let channels = frame.color_type.samples();
    let white = pixels.chunks(channels).filter(|p| p.iter().take(3).all(|&c| c > 245)).count();
    let ink = pixels.chunks(channels).filter(|p| p.iter().take(3).all(|&c| c < 100)).count();
    let coloured = pixels
        .chunks(channels)
        .filter(|p| p.iter().take(3).max().unwrap() - p.iter().take(3).min().unwrap() > 80)
        .count();
    let total = pixels.len() / channels;
    assert!(white > total / 2, "mostly the page's white: {white} of {total}");
    assert!(ink > 2000 && coloured > 2000, "text and coloured series drawn: {ink} dark, {coloured} coloured pixels");
}
