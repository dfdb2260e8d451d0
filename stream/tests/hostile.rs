//! Input a hostile or careless user gives: every case here once crashed, hung or lost a
//! device node. Each must end promptly with a clear error (exit code 1 for bad data, 2
//! for a bad flag or configuration) — or succeed, where the input was in fact fine.

use std::io::Write;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::scratch::Scratch;

/// Runs `kestrel` on `args` with `stdin` as input; fails the test if it has not ended after
/// `limit` (a hang, not a timing: the cases end in seconds).
fn kestrel_within(args: &[&str], stdin: &[u8], limit: Duration) -> Output {
    run_within(Command::new(env!("CARGO_BIN_EXE_kestrel")).args(args), args, stdin, limit)
}

/// As [`kestrel_within`], with the process's address space capped at `kib` KiB
/// (`ulimit -v`): an allocation that grows with the input aborts under the cap.
fn kestrel_capped(kib: u64, args: &[&str], stdin: &[u8], limit: Duration) -> Output {
    let mut command = Command::new("sh");
    command.args(["-c", &format!("ulimit -v {kib} && exec \"$0\" \"$@\""), env!("CARGO_BIN_EXE_kestrel")]);
    run_within(command.args(args), args, stdin, limit)
}

fn run_within(command: &mut Command, args: &[&str], stdin: &[u8], limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the kestrel binary runs");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // The child may stop reading early (an error): a broken pipe is expected then.
        let _ = input.write_all(&stdin);
    });
    let output = wait(child, limit, args);
    feeder.join().expect("stdin feeder");
    output
}

fn wait(mut child: Child, limit: Duration, args: &[&str]) -> Output {
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("kestrel {args:?} still running after {limit:?}: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn kestrel(args: &[&str]) -> Output {
    kestrel_within(args, b"", Duration::from_secs(120))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code `code` and a message containing `text`, without a panic or an abort.
fn assert_refused(o: &Output, code: i32, text: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(code), "{err}");
    assert!(err.contains(text), "`{text}` not in: {err}");
    assert!(!err.contains("panicked") && !err.contains("memory allocation"), "{err}");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// 60 rows of 2 features in 3 classes, LibSVM.
fn sixty(dir: &Path) -> String {
    let text: String = (0..60).map(|i| format!("{} 1:{} 2:{}\n", i % 3, i % 11, (i * 7) % 13)).collect();
    write(dir, "sixty.libsvm", &text)
}

/// 300 rows of a smooth regression target, CSV.
fn regression(dir: &Path) -> String {
    let text: String = std::iter::once("x,y\n".to_string())
        .chain((0..300).map(|i| format!("{},{}\n", i as f64 / 100.0, (i as f64 / 50.0).sin())))
        .collect();
    write(dir, "regression.csv", &text)
}

#[test]
fn a_huge_label_is_a_class_like_any_other() {
    let dir = Scratch::new("hostile", "labels");
    let data = write(&dir, "labels.libsvm", "0 1:-3\n4000000000 1:0\n1 1:3\n0 1:-2.5\n4000000000 1:0.2\n1 1:2.8\n");
    let model = dir.join("m.kestrel");
    let o = kestrel(&["train", "--learner", "svm", "--input", &data, "--out", model.to_str().unwrap(), "--c", "10"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", &data]);
    let predictions = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(predictions, "0\n4000000000\n1\n0\n4000000000\n1\n");
}

#[test]
fn what_fuzzing_found_in_training_is_a_clear_error() {
    let dir = Scratch::new("hostile", "fuzz-finds");
    let out = dir.join("m.kestrel");
    let out = out.to_str().unwrap();
    // IRSVM keeps no centre when every kernel column is zero: once a panic.
    let zeros = write(&dir, "zeros.csv", "x,y\n0,1\n0,-1\n");
    let o = kestrel(&["train", "--learner", "rsvm", "--kernel", "linear", "--input", &zeros, "--out", out]);
    assert_refused(&o, 1, "no centre was selected");
    // An f32 model stores its labels in f32: 0.1 would come back as 0.10000000149.
    let tenths = write(&dir, "tenths.libsvm", "0.1 1:1\n0.2 1:-1\n");
    let o = kestrel(&["train", "--learner", "svm", "--scalar", "f32", "--input", &tenths, "--out", out]);
    assert_refused(&o, 1, "row 1: label 0.1 is not exact in f32");
    // A value f32 cannot hold is a bad row, not an infinity trained on.
    let huge = write(&dir, "huge.libsvm", "1 1:1\n-1 1:-1e39\n-1 1:-1\n");
    let o = kestrel(&["train", "--learner", "rsvm", "--scalar", "f32", "--input", &huge, "--out", out]);
    assert_refused(&o, 1, "huge.libsvm:2:1: `-1e39` is too large for f32");
    // Values f64 holds, but whose squares it does not: the fit's overflow, named as one.
    let vast = write(&dir, "vast.csv", "a,b,y\n1e300,2,0\n-1e300,3,1\n3e299,1,0\n4e300,4,1\n2,5,1\n");
    let o = kestrel(&["train", "--learner", "svm", "--input", &vast, "--out", out]);
    assert_refused(&o, 1, "the svm fit met a value too large for f64 arithmetic (the features reach 4e300)");
    let o = kestrel(&[
        "train",
        "--learner",
        "svm",
        "--scalar",
        "f32",
        "--input",
        &huge,
        "--out",
        out,
        "--on-error",
        "skip",
    ]);
    assert!(o.status.success() && stderr(&o).contains("skipped"), "{}", stderr(&o));
}

/// An input of bad rows under `--on-error skip` costs neither memory nor a message a row:
/// the first ten are told, then their number at each power of ten and in all. A 10 MB
/// LibSVM file (read in parts on every core) of 5·10⁶ bad rows trains under a 300 MiB
/// address space; before, every bad row's error was held until the parts were joined
/// (3.9 GB for 2.5·10⁷ of them) and each was printed.
#[test]
fn bad_rows_are_counted_and_only_the_first_told() {
    let dir = Scratch::new("hostile", "bad-rows");
    let rows = 5_000_000;
    let data = write(&dir, "bad.libsvm", &format!("1 1:1\n-1 1:-1\n{}", "x\n".repeat(rows)));
    let model = dir.join("m.kes");
    let out = model.to_str().unwrap();
    let args = ["train", "--learner", "svm", "--input", &data, "--out", out, "--on-error", "skip", "--json"];
    let o = kestrel_capped(300 << 10, &args, b"", Duration::from_secs(300));
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(summary["skipped"], rows, "{summary}");
    let told: Vec<&str> = err.lines().filter(|line| line.starts_with("kestrel: skipped")).collect();
    assert_eq!(told.len(), 11, "{err}");
    assert!(told[0].ends_with("bad.libsvm:3:1: `x` is not a number"), "{err}");
    assert_eq!(told[10], "kestrel: skipped 5000000 bad rows in all (each of the first 10 told)");

    // Row by row (stream, predict, eval): the first ten, then 100, 1000, ..., and in all.
    let text = format!("1 1:1\n{}-1 1:-1\n", "x\n".repeat(1500));
    let rows = write(&dir, "rows.libsvm", &text);
    let stream = ["stream", "--learner", "svm", "--input", &rows, "--dim", "1", "--on-error", "skip"];
    let predict = ["predict", "--model", out, "--input", &rows, "--on-error", "skip"];
    let eval = ["eval", "--model", out, "--input", &rows, "--on-error", "skip"];
    for args in [&stream[..], &predict, &eval] {
        let o = kestrel(args);
        let err = stderr(&o);
        assert!(o.status.success(), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|line| line.contains("skipped")).collect();
        assert_eq!(lines.len(), 13, "{args:?}: {err}");
        assert!(lines[9].ends_with("rows.libsvm:11:1: `x` is not a number"), "{args:?}: {err}");
        assert_eq!(lines[10], "kestrel: 100 bad rows skipped so far (each of the first 10 told)");
        assert_eq!(lines[11], "kestrel: 1000 bad rows skipped so far (each of the first 10 told)");
        assert_eq!(lines[12], "kestrel: skipped 1500 bad rows in all (each of the first 10 told)");
    }
    // predict, and stream's --output, keep a line per row: NaN for each bad one.
    let o = kestrel(&predict);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1502, "{}", stderr(&o));
    assert!(lines[1..1501].iter().all(|&line| line == "NaN") && lines[0] != "NaN" && lines[1501] != "NaN");
    let output = dir.join("stream.txt");
    let o = kestrel(&[&stream[..], &["--output", output.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let out = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1502);
    assert!(lines[1..1501].iter().all(|&line| line == "NaN") && lines[1501] != "NaN", "{out}");
}

/// A data set with no row says so, whatever the learner (before, rsvm and krr spoke of
/// `--gamma auto`'s rows); an empty file says it is empty.
#[test]
fn no_rows_to_train_on_is_named() {
    let dir = Scratch::new("hostile", "no-rows");
    let out = dir.join("m.kestrel");
    let out = out.to_str().unwrap();
    let header = write(&dir, "header.csv", "a,b,y\n");
    let bad = write(&dir, "bad.csv", "a,b,y\nx,1,1\n1,x,-1\n");
    let empty = write(&dir, "empty.csv", "");
    for learner in ["svm", "rsvm", "krr", "slkl", "novelty"] {
        let o = kestrel(&["train", "--learner", learner, "--input", &header, "--out", out]);
        assert_refused(&o, 1, "header.csv: no rows to train on");
        let o = kestrel(&["train", "--learner", learner, "--input", &bad, "--out", out, "--on-error", "skip"]);
        assert_refused(&o, 1, "bad.csv: no rows to train on (2 bad rows skipped)");
        let o = kestrel(&["train", "--learner", learner, "--input", &empty, "--out", out]);
        assert_refused(&o, 1, "empty.csv:1:1: the input is empty: no header, no rows");
    }
    let one_bad = write(&dir, "one.csv", "a,b,y\nx,1,1\n");
    let o = kestrel(&["train", "--learner", "svm", "--input", &one_bad, "--out", out, "--on-error", "skip"]);
    assert_refused(&o, 1, "one.csv: no rows to train on (1 bad row skipped)");
}

/// A stream that learned nothing but bad rows, and an `eval` that scored no row, end in an
/// error after what they have to say (before, both exited 0, the stream with an accuracy
/// of 0 on no row); a stream of no row at all is not an error, and scores nothing (null).
#[test]
fn nothing_learned_or_scored_is_an_error() {
    let dir = Scratch::new("hostile", "nothing-learned");
    let (header, bad) = (write(&dir, "header.csv", "a,b,y\n"), write(&dir, "bad.csv", "a,b,y\nx,1,1\n1,x,-1\n"));
    for learner in ["svm", "rsvm", "slkl", "novelty"] {
        let o = kestrel(&["stream", "--learner", learner, "--input", &bad, "--on-error", "skip", "--json"]);
        assert_refused(&o, 1, "bad.csv: no row was learned (2 bad rows skipped)");
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!((summary["n"].as_u64(), summary["skipped"].as_u64()), (Some(0), Some(2)), "{learner}");
        let score = match learner {
            "slkl" => "mse",
            "novelty" => "flagged",
            _ => "accuracy",
        };
        assert!(learner == "novelty" || summary[score].is_null(), "{learner}: {summary}");
    }
    let o = kestrel(&["stream", "--learner", "svm", "--input", &header, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(summary["accuracy"].is_null() && summary["n"] == 0, "{summary}");
    let model = dir.join("m.kestrel");
    let good = write(&dir, "good.csv", "a,b,y\n1,2,1\n2,1,-1\n3,3,1\n");
    let o = kestrel(&["train", "--learner", "svm", "--input", &good, "--out", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let eval =
        |input: &str| kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", input, "--on-error", "skip"]);
    assert_refused(&eval(&bad), 1, "bad.csv: no row was scored (2 bad rows skipped)");
    assert_refused(&eval(&header), 1, "header.csv: no row was scored");
}

#[test]
fn a_huge_feature_index_names_its_line() {
    let dir = Scratch::new("hostile", "index");
    let data = write(&dir, "dims.libsvm", "2 1:1\n1 4000000000:1\n");
    let out = dir.join("m.kestrel");
    let o = kestrel(&["train", "--learner", "slkl", "--input", &data, "--out", out.to_str().unwrap()]);
    assert_refused(&o, 1, "dims.libsvm:2:3: feature index 4000000000 is past the limit of 16777216 features");
}

#[test]
fn sizes_out_of_range_are_usage_errors_naming_the_flag() {
    let dir = Scratch::new("hostile", "flags");
    let (data, csv) = (sixty(&dir), regression(&dir));
    let stream = |extra: &[&str]| {
        let mut args = vec!["stream", "--input", data.as_str(), "--dim", "2"];
        args.extend_from_slice(extra);
        kestrel(&args)
    };
    assert_refused(&stream(&["--learner", "svm", "--window", "100000000000"]), 2, "--window");
    assert_refused(&stream(&["--learner", "rsvm", "--centers", "1000000000"]), 2, "--centers");
    assert_refused(&stream(&["--learner", "slkl", "--centers", "0"]), 2, "--centers");
    assert_refused(&stream(&["--learner", "svm", "--dim", "100000000000"]), 2, "--dim");
    let npkl = |extra: &[&str]| {
        let mut args = vec!["npkl", "--input", data.as_str(), "--loss", "hinge", "--clusters", "3"];
        args.extend_from_slice(extra);
        kestrel(&args)
    };
    assert_refused(&npkl(&["--rank", "100000000000", "--constraints-from-labels", "0.5"]), 2, "--rank");
    assert_refused(&npkl(&["--constraints-from-labels", "1e30"]), 1, "asks for");
    // Once an endless draw: more pairs asked than 60 rows have.
    let o = kestrel_within(
        &["npkl", "--input", &data, "--loss", "hinge", "--clusters", "3", "--constraints-from-labels", "1e6"],
        b"",
        Duration::from_secs(60),
    );
    assert_refused(&o, 1, "asks for");
    let o = kestrel(&["train", "--learner", "slkl", "--input", &csv, "--out", "/nonexistent/m", "--centers", "0"]);
    assert_refused(&o, 2, "--centers");
}

#[test]
fn a_configuration_the_learner_refuses_fails_at_start_up_not_as_skipped_rows() {
    let dir = Scratch::new("hostile", "config");
    let (data, csv) = (sixty(&dir), regression(&dir));
    let o = kestrel(&["stream", "--learner", "slkl", "--input", &csv, "--window", "0", "--on-error", "skip"]);
    assert_refused(&o, 2, "--window");
    let o = kestrel(&[
        "stream",
        "--learner",
        "rsvm",
        "--input",
        &data,
        "--dim",
        "2",
        "--centers",
        "0",
        "--on-error",
        "skip",
    ]);
    assert_refused(&o, 2, "--centers");
    // A valid configuration whose memory cannot be had: refused before the first row.
    let o = kestrel(&["stream", "--learner", "svm", "--input", &data, "--dim", "16777216", "--window", "16777216"]);
    assert_refused(&o, 2, "cannot allocate");
    assert!(o.stdout.is_empty(), "no row was read");
}

#[test]
fn budgets_are_checked_before_training_for_every_learner() {
    let dir = Scratch::new("hostile", "budget");
    let (data, csv) = (sixty(&dir), regression(&dir));
    let out = dir.join("m.kestrel");
    let out = out.to_str().unwrap();
    for (learner, input) in [("svm", &data), ("rsvm", &data), ("slkl", &csv)] {
        let o = kestrel(&["train", "--learner", learner, "--input", input, "--out", out, "--budget", "1KiB"]);
        assert_refused(&o, 1, "over the budget of 1024");
        assert!(!Path::new(out).exists(), "{learner}: nothing trained, nothing written");
    }
    let binary: String = (0..60).map(|i| format!("{} 1:{} 2:{}\n", 2 * (i % 2) - 1, i % 11, (i * 7) % 13)).collect();
    let binary = write(&dir, "binary.libsvm", &binary);
    let o = kestrel(&["stream", "--learner", "rsvm", "--input", &binary, "--dim", "2", "--budget", "4KiB"]);
    assert_refused(&o, 2, "over --budget 4096");
    // What `kestrel budget` prints for the host is what the stream needs.
    let o = kestrel(&["budget", "--learner", "rsvm", "--dim", "2", "--window", "256", "--centers", "32"]);
    let needed: usize = String::from_utf8_lossy(&o.stdout).trim().trim_start_matches("bytes: ").parse().unwrap();
    let fits = format!("{needed}");
    let o = kestrel(&["stream", "--learner", "rsvm", "--input", &binary, "--dim", "2", "--budget", &fits]);
    assert!(o.status.success(), "{}", stderr(&o));
    let less = format!("{}", needed - 1);
    let o = kestrel(&["stream", "--learner", "rsvm", "--input", &binary, "--dim", "2", "--budget", &less]);
    assert_refused(&o, 2, "over --budget");
}

#[test]
fn a_line_over_the_limit_is_a_bad_row_naming_its_line() {
    let long = format!("1 1:1\n{}\n-1 1:2\n", "1 1:0.5 ".repeat(20_000));
    let args = ["stream", "--learner", "svm", "--input", "-", "--dim", "1", "--max-line-bytes", "64KiB"];
    let o = kestrel_within(&args, long.as_bytes(), Duration::from_secs(120));
    assert_refused(&o, 1, "<stdin>:2:1: the line is longer than the limit of 65536 bytes");
    let skip = [&args[..], &["--on-error", "skip"]].concat();
    let o = kestrel_within(&skip, long.as_bytes(), Duration::from_secs(120));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"skipped\":1"));
    // A line that never ends: 384 MiB without a newline, read under a 300 MiB address
    // space — in constant memory, or the process aborts. It is the stream's only row, so
    // the run learned nothing: exit code 1 after the summary.
    let endless = vec![b'1'; 384 << 20];
    let stream = ["stream", "--learner", "svm", "--input", "-", "--dim", "1", "--on-error", "skip"];
    let o = kestrel_capped(300 << 10, &stream, &endless, Duration::from_secs(300));
    assert_refused(&o, 1, "<stdin>: no row was learned (1 bad row skipped)");
    assert!(String::from_utf8_lossy(&o.stdout).contains("\"skipped\":1"));
}

#[test]
fn outputs_that_are_not_regular_files_are_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let dir = Scratch::new("hostile", "outputs");
    let data = sixty(&dir);
    let fifo = dir.join("fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let fifo_arg = fifo.to_str().unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", &data, "--out", fifo_arg]);
    assert_refused(&o, 1, "is not a regular file; refusing to replace it");
    let o = kestrel(&["stream", "--learner", "svm", "--input", &data, "--dim", "2", "--checkpoint", fifo_arg]);
    assert_refused(&o, 1, "is not a regular file; refusing to replace it");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO is still a FIFO");
    // A symbolic link is followed: the target is written, the link stays.
    let link = dir.join("link.kestrel");
    std::os::unix::fs::symlink("target.kestrel", &link).unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", &data, "--out", link.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert!(dir.join("target.kestrel").is_file());
}
