//! The figures of a stream run's [`History`]: the prequential error (rolling and
//! cumulative) against the running baseline with drift marks, rows per second, the
//! learner's size, and a novelty detector's score, threshold and flags. Each point is a
//! bucket of the history, placed at the last row it covers.

use anyhow::Result;
use kestrel_stream::checkpoint::RunConfig;
use kestrel_stream::history::{Bucket, History, JUMP_RATIO, JUMP_REFERENCE, JUMP_SIGMAS, Series};
use kestrel_stream::online::OnlineLearner;

use super::Report;
use super::chart::{Band, Dots, Plot, pick};

/// What the learner of a run does, which names its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Task {
    Classifier,
    Regressor,
    Detector,
}

impl Task {
    /// The task of `learner`.
    pub fn of(learner: &dyn OnlineLearner) -> Task {
        match (learner.is_detector(), learner.is_classifier()) {
            (true, _) => Task::Detector,
            (false, true) => Task::Classifier,
            (false, false) => Task::Regressor,
        }
    }
}

/// The page of a `kestrel stream` run: the flags that shaped it (`config`, its input
/// first), its final figures (`summary`, as printed) and the figures of its history.
///
/// # Errors
/// Only if a chart fails to draw.
pub fn run_page(
    config: &RunConfig,
    summary: &serde_json::Value,
    history: &History,
    learner: &dyn OnlineLearner,
) -> Result<Report> {
    let mut report = Report::new("kestrel stream");
    let input = config.flags().find(|&(flag, _)| flag == "--input").map_or("", |(_, value)| value);
    report
        .fact("data", input)
        .fact("rows learned", history.loss.rows())
        .flags("learner", config.flags().filter(|&(flag, _)| flag != "--input"))
        .summary(summary);
    add(&mut report, history, Task::of(learner), "learner")?;
    Ok(report)
}

/// Adds the figures of `history` to `report`; `what` names the learner in the headings
/// (a demo runs two).
///
/// # Errors
/// Only if a chart fails to draw.
pub fn add(report: &mut Report, history: &History, task: Task, what: &str) -> Result<()> {
    if history.loss.mean().is_some() {
        error_figure(report, history, task, what)?;
    }
    if task == Task::Detector {
        score_figure(report, history, what)?;
    }
    let mut rates = points(&history.seconds, |b| (b.sum > 0.0).then(|| b.count as f64 / b.sum));
    let mut sorted: Vec<f64> = rates.iter().map(|&(_, rate)| rate).collect();
    sorted.sort_by(f64::total_cmp);
    let cap = 3.0 * sorted.get(sorted.len() / 2).copied().unwrap_or(0.0);
    rates.iter_mut().for_each(|(_, rate)| *rate = rate.min(cap));
    let mut rate = Plot::new("row", "rows per second (rows/s)").line("rows/s", rates, 0, false);
    rate.y_range = Some(0.0..cap.max(1.0) * 1.05);
    let caption = "Rows read and learned per second of wall-clock time, over each bucket of rows (a slow \
                   source shows as a low rate); rates above three times the median are drawn at that height.";
    report.figure(&format!("{what}: throughput"), caption, rate.svg()?);
    let size = Plot::new("row", "held by the learner (samples, centres)")
        .line("samples in the window", points(&history.window, Bucket::mean), 0, false)
        .line(centres_name(task), points(&history.centres, Bucket::mean), 1, false);
    let caption = "What the learner holds, measured at the first row of each bucket: the samples in its window \
                   and the centres or support vectors its model uses.";
    report.figure(&format!("{what}: learner size"), caption, size.svg()?);
    if history.steps.mean().is_some() {
        steps_figure(report, history, what)?;
    }
    Ok(())
}

/// The coordinate steps per sample: the mean and the most of each bucket.
fn steps_figure(report: &mut Report, history: &History, what: &str) -> Result<()> {
    let most = |b: &Bucket| (b.count > 0).then_some(b.max);
    let plot = Plot::new("row", "coordinate steps per sample")
        .line("mean (each bucket)", points(&history.steps, Bucket::mean), 0, false)
        .line("most (each bucket)", points(&history.steps, most), 1, true);
    let caption = "The coordinate steps the learner took after each sample, over each bucket of rows: the work its \
                   stopping rule (--eps) and its cap (--steps-per-sample) left. Many samples at the cap mean a window \
                   that does not settle between arrivals.";
    report.figure(&format!("{what}: work per sample"), caption, plot.svg()?);
    Ok(())
}

/// The learner's and the baseline's error, rolling and cumulative, with drift marks.
fn error_figure(report: &mut Report, history: &History, task: Task, what: &str) -> Result<()> {
    let (unit, scale, baseline) = match task {
        Task::Classifier => ("error rate (%)", 100.0, "majority label so far"),
        Task::Regressor => ("squared error (target units²)", 1.0, "mean target so far"),
        Task::Detector => ("flags against labels: error rate (%)", 100.0, "never flagging"),
    };
    let scaled = |series: &Series| points(series, |b| b.mean().map(|m| scale * m));
    let cumulative = |series: &Series| {
        let ends = series.buckets().iter().enumerate().map(|(i, _)| series.span(i).end as f64);
        let values = series.cumulative().into_iter().map(|m| m.map_or(f64::NAN, |m| scale * m));
        ends.zip(values).collect()
    };
    let mut plot = Plot::new("row", unit)
        .line("rolling (each bucket)", scaled(&history.loss), 0, false)
        .line("cumulative", cumulative(&history.loss), 2, false)
        .line(&format!("baseline: {baseline}, rolling"), scaled(&history.baseline), 1, true)
        .line("baseline, cumulative", cumulative(&history.baseline), 5, true);
    if scale == 100.0 {
        plot.y_range = Some(0.0..100.0);
    }
    let jumps = history.loss.jumps();
    plot.marks = (!jumps.is_empty()).then(|| {
        ("drift: the error jumps".to_string(), jumps.iter().map(|&i| history.loss.span(i).start as f64).collect())
    });
    let caption = format!(
        "Prequential: every row predicted before it was learned. Buckets of {} rows (the latest may hold \
         fewer). Drift marks (red) start a bucket whose error is {JUMP_RATIO} times that of the {JUMP_REFERENCE} \
         buckets before it or more, and above it by more than {JUMP_SIGMAS} standard errors; {} marked.",
        history.loss.width(),
        jumps.len()
    );
    report.figure(&format!("{what}: prequential error"), &caption, plot.svg()?);
    Ok(())
}

/// A detector's score (min–max band, mean), its threshold and the flagged rows.
fn score_figure(report: &mut Report, history: &History, what: &str) -> Result<()> {
    let score = &history.score;
    let band = Band {
        name: "score, min to max".into(),
        lower: points(score, |b| (b.count > 0).then_some(b.min)),
        upper: points(score, |b| (b.count > 0).then_some(b.max)),
        colour: pick(0),
    };
    let flagged_at = |(i, b): (usize, &Bucket)| {
        let top = score.buckets().get(i).filter(|s| s.count > 0).map(|s| s.max);
        (b.sum > 0.0).then_some(top).flatten().map(|top| (score.span(i).end as f64, top))
    };
    let flagged: Vec<(f64, f64)> = history.flagged.buckets().iter().enumerate().filter_map(flagged_at).collect();
    let mut plot = Plot::new("row", "score d² (squared feature-space distance)")
        .line("score, mean", points(score, Bucket::mean), 0, false)
        .line("threshold", points(&history.threshold, Bucket::mean), 3, true);
    plot.bands.push(band);
    plot.dots.push(Dots { name: "buckets with flagged rows".into(), points: flagged, colour: pick(1) });
    let total: f64 = history.flagged.buckets().iter().map(|b| b.sum).sum();
    let caption = format!(
        "The novelty score of each row before it was learned (none during the warm-up) and the threshold beyond \
         which a row is flagged; {total} rows flagged, the buckets holding them dotted at their highest score."
    );
    report.figure(&format!("{what}: novelty score"), &caption, plot.svg()?);
    Ok(())
}

/// A point per bucket of `series` that `value` gives one for, at the bucket's last row.
fn points(series: &Series, value: impl Fn(&Bucket) -> Option<f64>) -> Vec<(f64, f64)> {
    let at = |(i, bucket): (usize, &Bucket)| value(bucket).map(|v| (series.span(i).end as f64, v));
    series.buckets().iter().enumerate().filter_map(at).collect()
}

fn centres_name(task: Task) -> &'static str {
    match task {
        Task::Classifier => "support vectors or centres",
        Task::Regressor => "active centres",
        Task::Detector => "centres",
    }
}
