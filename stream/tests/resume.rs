//! `kestrel stream --checkpoint/--resume` and its signals, end to end on the built binary.
//!
//! The central test (issue 6, item 4): a run killed with SIGKILL mid-stream and resumed
//! from its last checkpoint ends with a model file byte-identical to an uninterrupted
//! run's. The kill is made deterministic by feeding the run through a pipe: the test sends
//! the first rows only, waits until the checkpoint after the last whole `--checkpoint-every`
//! period appears, and kills the process while it waits for more input — the last
//! checkpoint is then known exactly, wherever the process was. The resumed run is sent
//! the whole stream again from its start, as the documented contract for standard input
//! asks of the producer.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use kestrel_core::Rng;
use kestrel_stream::checkpoint::Checkpoint;

use crate::outcome::{succeeded, summary};
use crate::scratch::Scratch;

/// Rows of the test stream; 1-based lines of the bad rows in it.
const ROWS: usize = 1000;
const BAD: [usize; 2] = [137, 811];
const EVERY: u64 = 100;

/// The test stream in LibSVM form, one string per line: two features in [−1, 1], an
/// XOR-like label for the classifiers, a smooth target for SLKL or the corners as
/// anomalies for novelty, and bad rows (a NaN,
/// indices out of order) that `--on-error skip` counts.
fn stream(learner: &str) -> Vec<String> {
    let mut rng = Rng::seed_from_u64(11);
    (1..=ROWS)
        .map(|line| {
            let (a, b): (f64, f64) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            let label = match learner {
                "slkl" => format!("{}", (2.0 * a).sin() + 0.5 * b),
                "novelty" => format!("{}", u8::from(a.abs().min(b.abs()) > 0.8)),
                _ if a * b > 0.0 => "1".to_string(),
                _ => "-1".to_string(),
            };
            match line {
                _ if line == BAD[0] => format!("{label} 1:nan 2:{b}\n"),
                _ if line == BAD[1] => format!("{label} 2:{b} 1:{a}\n"),
                _ => format!("{label} 1:{a} 2:{b}\n"),
            }
        })
        .collect()
}

/// The flags of every run of a test: learner, scalar and a small configuration, bad rows
/// skipped.
fn flags(learner: &str, scalar: &str, input: &str) -> Vec<String> {
    let mut flags = vec!["stream", "--learner", learner, "--scalar", scalar, "--input", input];
    flags.extend(["--format", "libsvm", "--dim", "2", "--window", "64", "--centers", "16", "--seed", "3"]);
    flags.extend(["--steps-per-sample", "3", "--gamma", "2", "--nu", "0.001", "--c", "10"]);
    flags.extend(["--on-error", "skip", "--report-every", "0", "--json", "--warmup", "100"]);
    flags.into_iter().map(String::from).collect()
}

/// `flags` without `flag` and its value.
fn without(mut flags: Vec<String>, flag: &str) -> Vec<String> {
    if let Some(at) = flags.iter().position(|f| f == flag) {
        flags.drain(at..at + 2);
    }
    flags
}

/// `flags` with more flags appended, or their values replaced where already present.
fn with(mut flags: Vec<String>, more: &[&str]) -> Vec<String> {
    let mut more = more.iter().map(|s| s.to_string()).peekable();
    while let Some(flag) = more.next() {
        let value = more.next_if(|v| !v.starts_with("--"));
        match (flags.iter().position(|f| *f == flag), value) {
            (Some(at), Some(value)) => flags[at + 1] = value,
            (_, value) => flags.extend(std::iter::once(flag).chain(value)),
        }
    }
    flags
}

fn spawn(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kestrel binary runs")
}

/// Runs to the end with `input` on standard input (written from a thread, so a full pipe
/// cannot stall the test).
fn run(args: &[String], input: String) -> Output {
    let mut child = spawn(args);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// Waits until the checkpoint at `path` has consumed `rows` rows.
fn wait_for_checkpoint(path: &Path, rows: u64) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Ok(checkpoint) = Checkpoint::read(path) {
            assert!(checkpoint.rows <= rows, "{} rows consumed, expected {rows}", checkpoint.rows);
            if checkpoint.rows == rows {
                return;
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no checkpoint at {rows} rows in {}", path.display());
}

/// SIGKILL mid-run, resume from the last checkpoint: the same model bytes and the same
/// summary as an uninterrupted run — with or without checkpoints, which do not change
/// what is learned.
fn killed_and_resumed_run_matches_uninterrupted(learner: &str, scalar: &str) {
    resumed_run_matches(&format!("{learner}-{scalar}"), learner, flags(learner, scalar, "-"));
}

/// As [`killed_and_resumed_run_matches_uninterrupted`], for `learner` run with `base`'s
/// flags (`name` names its scratch directory); the summary both runs printed.
fn resumed_run_matches(name: &str, learner: &str, base: Vec<String>) -> serde_json::Value {
    let dir = Scratch::new("resume", name);
    let rows = stream(learner);
    let all = rows.concat();
    let every = EVERY.to_string();
    let (reference, plain, reference_checkpoint) =
        (dir.path("reference.model"), dir.path("plain.model"), dir.path("reference.ckpt"));
    let (reference_rows, run_rows) = (dir.path("reference.out"), dir.path("run.out"));
    let reference_flags = [
        "--out",
        reference.to_str().unwrap(),
        "--output",
        reference_rows.to_str().unwrap(),
        "--checkpoint",
        reference_checkpoint.to_str().unwrap(),
        "--checkpoint-every",
        every.as_str(),
    ];
    let uninterrupted = run(&with(base.clone(), &reference_flags), all.clone());
    let expected = summary(succeeded(&uninterrupted));
    assert_eq!(expected["skipped"], 2);
    succeeded(&run(&with(base.clone(), &["--out", plain.to_str().unwrap()]), all.clone()));
    let reference = std::fs::read(&reference).unwrap();
    assert_eq!(std::fs::read(&plain).unwrap(), reference, "checkpoints changed the model");

    let (model, checkpoint) = (dir.path("run.model"), dir.path("run.ckpt"));
    let run_flags = with(
        base,
        &[
            "--out",
            model.to_str().unwrap(),
            "--output",
            run_rows.to_str().unwrap(),
            "--checkpoint",
            checkpoint.to_str().unwrap(),
            "--checkpoint-every",
            every.as_str(),
        ],
    );
    let mut child = spawn(&run_flags);
    let mut stdin = child.stdin.take().unwrap();
    let sent = 650; // past the first bad row; the last checkpoint is at 600 rows
    stdin.write_all(rows[..sent].concat().as_bytes()).unwrap();
    wait_for_checkpoint(&checkpoint, 600);
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(9), "{status:?}");
    drop(stdin);
    assert!(!model.exists(), "a killed run wrote no model");
    // Lines past the checkpoint, as a run killed after flushing them would leave.
    std::fs::OpenOptions::new().append(true).open(&run_rows).unwrap().write_all(b"0.5,1\n0.25,0\n").unwrap();

    let resumed = run(&with(run_flags, &["--resume"]), all);
    assert_eq!(summary(succeeded(&resumed)), expected);
    assert_eq!(std::fs::read(&model).unwrap(), reference, "resumed model differs");
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, ROWS as u64);
    // One line per input row, each once (NaN for a bad row, BAD counts lines from 1): the
    // lines the killed run had written after its checkpoint were cut.
    let lines = std::fs::read_to_string(&run_rows).unwrap();
    assert_eq!(lines, std::fs::read_to_string(&reference_rows).unwrap(), "resumed --output differs");
    let written: Vec<&str> = lines.lines().collect();
    assert_eq!(written.len(), ROWS);
    assert!(BAD.iter().all(|&line| written[line - 1].starts_with("NaN")), "{:?}", BAD.map(|line| written[line - 1]));
    expected
}

#[test]
fn sigkill_and_resume_novelty_f64() {
    killed_and_resumed_run_matches_uninterrupted("novelty", "f64");
}

#[test]
fn sigkill_and_resume_novelty_f32() {
    killed_and_resumed_run_matches_uninterrupted("novelty", "f32");
}

#[test]
fn sigkill_and_resume_svm_f64() {
    killed_and_resumed_run_matches_uninterrupted("svm", "f64");
}

#[test]
fn sigkill_and_resume_svm_f32() {
    killed_and_resumed_run_matches_uninterrupted("svm", "f32");
}

#[test]
fn sigkill_and_resume_slkl_f64() {
    killed_and_resumed_run_matches_uninterrupted("slkl", "f64");
}

#[test]
fn sigkill_and_resume_slkl_f32() {
    killed_and_resumed_run_matches_uninterrupted("slkl", "f32");
}

#[test]
fn sigkill_and_resume_rsvm_f64() {
    killed_and_resumed_run_matches_uninterrupted("rsvm", "f64");
}

#[test]
fn sigkill_and_resume_rsvm_f32() {
    killed_and_resumed_run_matches_uninterrupted("rsvm", "f32");
}

/// rsvm without `--gamma` races three widths through its first window, here 700 arrivals:
/// the checkpoint at 600 rows holds the three learners mid-race, and the resumed run keeps
/// the width the uninterrupted run keeps, with the same model.
#[test]
fn sigkill_and_resume_rsvm_mid_race() {
    let base = with(without(flags("rsvm", "f64", "-"), "--gamma"), &["--window", "700"]);
    let summary = resumed_run_matches("rsvm-race", "rsvm", base);
    assert!([0.5, 0.125, 2.0].contains(&summary["chosen"]["gamma"].as_f64().unwrap_or(0.0)), "{summary}");
}

/// With `--probabilities` each `--output` line carries the probability of its prediction:
/// the resumed run writes the uninterrupted run's lines and summary (its log loss too),
/// the class probabilities carried through the checkpoint.
#[test]
fn sigkill_and_resume_rsvm_with_probabilities() {
    let summary =
        resumed_run_matches("rsvm-probabilities", "rsvm", with(flags("rsvm", "f64", "-"), &["--probabilities"]));
    let log_loss = summary["log_loss"].as_f64().unwrap();
    assert!(log_loss > 0.0 && log_loss < 0.5, "{summary}");
}

/// A file is resumed exactly: a run over the first 700 rows writes its final checkpoint
/// at the end of the input; the file then grows to the whole stream and `--resume` skips
/// the 700 rows consumed. The result is the uninterrupted run's.
#[test]
fn resuming_a_grown_file_skips_the_consumed_rows() {
    let dir = Scratch::new("resume", "file");
    let rows = stream("slkl");
    let (full, growing) = (dir.path("full.libsvm"), dir.path("growing.libsvm"));
    std::fs::write(&full, rows.concat()).unwrap();
    std::fs::write(&growing, rows[..700].concat()).unwrap();
    let (reference, model, checkpoint) = (dir.path("reference.model"), dir.path("m"), dir.path("c"));
    let full_flags = with(flags("slkl", "f64", full.to_str().unwrap()), &["--out", reference.to_str().unwrap()]);
    let expected = summary(succeeded(&run(&full_flags, String::new())));
    let run_flags = with(
        flags("slkl", "f64", growing.to_str().unwrap()),
        &["--out", model.to_str().unwrap(), "--checkpoint", checkpoint.to_str().unwrap(), "--checkpoint-every", "0"],
    );
    succeeded(&run(&run_flags, String::new()));
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, 700);
    std::fs::write(&growing, rows.concat()).unwrap();
    let resumed = run(&with(run_flags.clone(), &["--resume"]), String::new());
    assert_eq!(summary(succeeded(&resumed)), expected);
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(&reference).unwrap());

    // Resuming again now finds the input shorter than what the checkpoint consumed...
    std::fs::write(&growing, rows[..500].concat()).unwrap();
    let short = run(&with(run_flags.clone(), &["--resume"]), String::new());
    let stderr = String::from_utf8_lossy(&short.stderr);
    assert_eq!(short.status.code(), Some(1));
    assert!(stderr.contains("ended after 500 rows, but the checkpoint had consumed 1000"), "{stderr}");
    // ...other flags are refused, naming the flag...
    let other = run(&with(run_flags.clone(), &["--resume", "--nu", "0.01"]), String::new());
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(1));
    assert!(stderr.contains("--nu is `0.001` in the checkpoint but `0.01` now"), "{stderr}");
    let other = run(&with(run_flags.clone(), &["--resume", "--eps", "0.001"]), String::new());
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(1));
    assert!(stderr.contains("--eps is `0.0001` in the checkpoint but `0.001` now"), "{stderr}");
    // ...and so is a corrupted checkpoint.
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    let last = bytes.len() - 10;
    bytes[last] ^= 1;
    std::fs::write(&checkpoint, bytes).unwrap();
    let corrupted = run(&with(run_flags, &["--resume"]), String::new());
    let stderr = String::from_utf8_lossy(&corrupted.stderr);
    assert!(corrupted.status.code() == Some(1) && stderr.contains("corrupted checkpoint: checksum"), "{stderr}");
}

/// A checkpoint records the names a CSV header gave the features: a run resumed on the
/// same columns in another order is refused (it would learn one column for another), and
/// on the same header it goes on.
#[test]
fn a_resumed_run_must_read_the_same_columns() {
    let dir = Scratch::new("resume", "columns");
    let (data, checkpoint) = (dir.path("rows.csv"), dir.path("c"));
    let rows = |header: &str, swap: bool| {
        let lines = (0..300).map(|i| {
            let (a, b) = ((i * 37 % 101) as f64 / 10.0, (i * 53 % 97) as f64 / 10.0);
            let (first, second) = if swap { (b, a) } else { (a, b) };
            format!("{first},{second},{}\n", i32::from(a > b))
        });
        std::iter::once(format!("{header}\n")).chain(lines).collect::<String>()
    };
    std::fs::write(&data, rows("a,b,y", false)).unwrap();
    let (data_flag, checkpoint_flag) = (data.to_str().unwrap(), checkpoint.to_str().unwrap());
    let base = ["stream", "--learner", "svm", "--input", data_flag, "--checkpoint", checkpoint_flag];
    let kestrel = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kestrel")).args(base).args(extra).output().expect("the kestrel binary runs")
    };
    succeeded(&kestrel(&["--checkpoint-every", "0"]));
    std::fs::write(&data, rows("b,a,y", true)).unwrap();
    let other = kestrel(&["--resume"]);
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert_eq!(other.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("columns is `a, b` in the checkpoint but `b, a` now"), "{stderr}");
    std::fs::write(&data, rows("a,b,y", false)).unwrap();
    succeeded(&kestrel(&["--resume"]));
}

/// `--on-error stop` writes the checkpoint and the model before exiting 1; after the bad
/// row is fixed, `--resume` continues with it and ends as a run over the fixed file.
#[test]
fn stopping_on_a_bad_row_keeps_a_checkpoint_to_resume_from() {
    let dir = Scratch::new("resume", "stop");
    let mut rows = stream("svm");
    let (data, fixed) = (dir.path("data.libsvm"), dir.path("fixed.libsvm"));
    std::fs::write(&data, rows.concat()).unwrap();
    rows[BAD[0] - 1] = "1 1:0.5 2:0.5\n".to_string();
    rows[BAD[1] - 1] = "-1 1:0.5 2:-0.5\n".to_string();
    std::fs::write(&fixed, rows.concat()).unwrap();
    let (model, checkpoint, reference) = (dir.path("m"), dir.path("c"), dir.path("r"));
    let stop = |input: &Path, more: &[&str]| {
        let flags = with(flags("svm", "f32", input.to_str().unwrap()), &["--on-error", "stop"]);
        let flags = with(flags, &["--out", model.to_str().unwrap(), "--checkpoint", checkpoint.to_str().unwrap()]);
        run(&with(flags, more), String::new())
    };
    let stopped = stop(&data, &[]);
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("data.libsvm:{}:", BAD[0])), "{stderr}");
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, BAD[0] as u64 - 1);
    assert!(model.exists());
    std::fs::rename(&fixed, &data).unwrap();
    let resumed = stop(&data, &["--resume"]);
    let reference_flags = with(flags("svm", "f32", data.to_str().unwrap()), &["--out", reference.to_str().unwrap()]);
    let expected = summary(succeeded(&run(&reference_flags, String::new())));
    assert_eq!(summary(succeeded(&resumed)), expected);
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(&reference).unwrap());
}

/// SIGTERM and SIGINT while the input is silent: the process notices at once (reading
/// happens on its own thread), writes the checkpoint and the model, exits 143 or 130. The
/// model is the one a run over the rows received gives.
fn signal_writes_checkpoint_and_model(signal: &str, code: i32) {
    let dir = Scratch::new("resume", signal);
    let rows = stream("rsvm");
    let (model, checkpoint, reference) = (dir.path("m"), dir.path("c"), dir.path("r"));
    let paths = ["--out", model.to_str().unwrap(), "--checkpoint", checkpoint.to_str().unwrap()];
    let args = with(with(flags("rsvm", "f64", "-"), &paths), &["--checkpoint-every", "100"]);
    let mut child = spawn(&args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(rows[..300].concat().as_bytes()).unwrap();
    wait_for_checkpoint(&checkpoint, 300);
    let kill = Command::new("kill").args(["-s", signal, &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(code), "{stderr}");
    assert!(stderr.contains(&format!("stopped by SIG{signal} after 300 input rows")), "{stderr}");
    drop(stdin);
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, 300);
    let reference_flags = with(flags("rsvm", "f64", "-"), &["--out", reference.to_str().unwrap()]);
    let expected = summary(succeeded(&run(&reference_flags, rows[..300].concat())));
    assert_eq!(summary(&output), expected);
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(&reference).unwrap());
}

#[test]
fn sigterm_writes_checkpoint_and_model() {
    signal_writes_checkpoint_and_model("TERM", 143);
}

#[test]
fn sigint_writes_checkpoint_and_model() {
    signal_writes_checkpoint_and_model("INT", 130);
}

/// `--max-rows` ends a run after that many input rows, counted from the stream's start: a
/// run resumed from it with a larger limit goes on to that limit and ends with the model
/// of a run given the larger limit from the start.
#[test]
fn max_rows_ends_a_run_and_a_resumed_run_counts_from_the_start() {
    let dir = Scratch::new("resume", "max-rows");
    let input = dir.path("stream.libsvm");
    std::fs::write(&input, stream("svm").concat()).unwrap();
    let base = flags("svm", "f64", input.to_str().unwrap());
    let (model, checkpoint, whole) = (dir.path("run.model"), dir.path("run.ckpt"), dir.path("whole.model"));
    let run_flags = with(
        base.clone(),
        &["--out", model.to_str().unwrap(), "--checkpoint", checkpoint.to_str().unwrap(), "--checkpoint-every", "0"],
    );
    let first = summary(succeeded(&run(&with(run_flags.clone(), &["--max-rows", "300"]), String::new())));
    // Rows 1..=300 hold the first bad row (137): 299 learned, 1 skipped.
    assert_eq!((first["n"].as_u64(), first["skipped"].as_u64()), (Some(299), Some(1)));
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, 300);
    let resumed = run(&with(run_flags, &["--max-rows", "700", "--resume"]), String::new());
    let resumed = summary(succeeded(&resumed));
    let uninterrupted = run(&with(base, &["--max-rows", "700", "--out", whole.to_str().unwrap()]), String::new());
    assert_eq!(resumed, summary(succeeded(&uninterrupted)));
    assert_eq!(Checkpoint::read(&checkpoint).unwrap().rows, 700);
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(&whole).unwrap());
}

/// `--idle-timeout` ends a run whose pipe falls silent (the writer still holding it open)
/// as an end of input: exit 0, the summary, the model.
#[test]
fn idle_timeout_ends_a_silent_pipe() {
    let dir = Scratch::new("resume", "idle");
    let model = dir.path("idle.model");
    let args = with(flags("svm", "f64", "-"), &["--idle-timeout", "0.5", "--out", model.to_str().unwrap()]);
    let mut child = spawn(&args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(stream("svm")[..200].concat().as_bytes()).unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("--idle-timeout 0.5 did not end the run");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    assert!(status.success(), "{status:?}: {}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--idle-timeout"));
    assert_eq!(summary(&output)["n"].as_u64(), Some(199));
    assert!(model.exists());
}
