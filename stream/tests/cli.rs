//! End-to-end tests of the `kestrel` binary: every command, bad input of each kind, stdin,
//! and train → save → load → predict round trips.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use kestrel_core::model::Envelope;

use crate::scratch::Scratch;

fn kestrel(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kestrel")).args(args).output().expect("the kestrel binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Writes `text` to the file `name` in `dir`; its path.
fn write_in(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// A separable binary problem in LibSVM form: label = sign(x₁ − x₂).
fn binary_libsvm(dir: &Path, rows: usize) -> PathBuf {
    let mut text = String::new();
    for i in 0..rows {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        let label = if a > b { "+1" } else { "-1" };
        text.push_str(&format!("{label} 1:{a:.4} 2:{b:.4}\n"));
    }
    let path = dir.join("binary.libsvm");
    std::fs::write(&path, text).unwrap();
    path
}

/// A smooth regression problem in CSV form: y = sin(2x) + x².
fn regression_csv(dir: &Path, rows: usize) -> PathBuf {
    let mut text = String::from("x,y\n");
    for i in 0..rows {
        let x = (i * 61 % 199) as f64 / 50.0 - 2.0;
        text.push_str(&format!("{x:.5},{:.5}\n", (2.0 * x).sin() + x * x));
    }
    let path = dir.join("regression.csv");
    std::fs::write(&path, text).unwrap();
    path
}

fn json(o: &Output) -> serde_json::Value {
    let out = stdout(o);
    serde_json::from_str(out.lines().last().unwrap_or("")).unwrap_or_else(|e| panic!("{e}: {out} {}", stderr(o)))
}

#[test]
fn demo_runs_without_arguments_and_reports() {
    let o = kestrel(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("temperature RMSE") && out.contains("frost alarm accuracy"), "{out}");
}

/// `export --format c` writes the model's exact bytes as a C array, with macros for its
/// kind, dimension and length; invalid models and names, and a directory that is not
/// there, are refused.
#[test]
fn export_writes_a_c_array_of_the_model_bytes() {
    let dir = Scratch::new("cli", "export");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../firmware-demo/models/rsvm.kestrel");
    let o = kestrel(&["export", model.to_str().unwrap(), "--format", "c", "--out-dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let header = std::fs::read_to_string(dir.join("rsvm.h")).unwrap();
    let source = std::fs::read_to_string(dir.join("rsvm.c")).unwrap();
    let bytes = std::fs::read(&model).unwrap();
    for line in ["#define RSVM_KIND 3", "#define RSVM_DIM 2", &format!("#define RSVM_BYTES {}", bytes.len())] {
        assert!(header.contains(line), "{line} in\n{header}");
    }
    assert!(header.contains("extern const uint8_t rsvm[RSVM_BYTES];"), "{header}");
    assert!(source.contains("__attribute__((aligned(8)))") && source.contains("const uint8_t rsvm[RSVM_BYTES] = {"));
    let body = &source[source.find("= {").unwrap() + 3..source.rfind("};").unwrap()];
    let exported: Vec<u8> = body
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| u8::from_str_radix(t.trim_start_matches("0x"), 16).unwrap())
        .collect();
    assert_eq!(exported, bytes);

    let o = kestrel(&["export", model.to_str().unwrap(), "--format", "c", "--name", "2x", "--out-dir", "."]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let corrupted = dir.join("corrupted.kestrel");
    let mut flipped = bytes.clone();
    flipped[20] ^= 1;
    std::fs::write(&corrupted, flipped).unwrap();
    let o = kestrel(&["export", corrupted.to_str().unwrap(), "--format", "c", "--out-dir", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("checksum") && !dir.join("corrupted.c").exists(), "{}", stderr(&o));
    let missing = dir.join("no-such-dir");
    let o = kestrel(&["export", model.to_str().unwrap(), "--format", "c", "--out-dir", missing.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no-such-dir: no such directory"), "{}", stderr(&o));
}

/// A checkpoint given where a model goes is named, with what reads it: one of `kestrel
/// stream`, and one of a device's learner (the C ABI's frame; its payload is the C
/// library's, and only the frame is read here). `inspect` describes a stream checkpoint,
/// and reads a device checkpoint's header by the C library's code: one with a payload that
/// is not a header is damaged.
#[test]
fn a_checkpoint_given_for_a_model_is_named() {
    let dir = Scratch::new("cli", "checkpoint-for-model");
    let data = binary_libsvm(&dir, 50);
    let stream_checkpoint = dir.join("run.ck");
    let o = kestrel(&[
        "stream",
        "--learner",
        "svm",
        "--input",
        data.to_str().unwrap(),
        "--dim",
        "2",
        "--checkpoint",
        stream_checkpoint.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let device_checkpoint = |object: u8, name: &str| {
        let payload = [7u8; 20];
        let mut bytes = vec![0u8; kestrel_core::frame::framed_len(payload.len())];
        kestrel_core::frame::payload_mut(&mut bytes).copy_from_slice(&payload);
        kestrel_core::device_checkpoint::FORMAT.seal([object, 0], payload.len(), &mut bytes).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let stream_path = stream_checkpoint.to_str().unwrap();
    let o = kestrel(&["predict", "--model", stream_path, "--input", data.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let said = "a `kestrel stream` checkpoint, not a model: `kestrel stream --checkpoint FILE --resume`";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = kestrel(&["inspect", stream_path]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("checkpoint of `kestrel stream --learner svm`"), "{text}");
    let progress = "50 input rows consumed (0 bad, skipped), 50 samples learned; prequential accuracy";
    assert!(text.contains(progress), "{text}");
    assert!(text.contains("--window 256") && text.contains("--resume, with the same flags"), "{text}");
    let info = json(&kestrel(&["inspect", stream_path, "--json"]));
    assert_eq!((info["kind"].as_str(), info["learner"].as_str()), (Some("stream-checkpoint"), Some("svm")));
    assert_eq!((info["rows"].as_u64(), info["flags"]["--dim"].as_str()), (Some(50), Some("2")));
    // The payload, twenty bytes of 7, is no SVM header; as a scaler's it is two varints,
    // dim 7 and count 7 (`inspect` reads the header only; a resume checks the rest).
    let damaged = "a damaged device checkpoint: its CRC-32 does not match, or its header does not decode";
    let cases = [
        (
            device_checkpoint(1, "svm.bin"),
            "a checkpoint of a device's kestrel_svm, not a model: `kestrel import FILE --out MODEL`",
            (Some(1), damaged),
        ),
        (
            device_checkpoint(4, "scaler.bin"),
            "a checkpoint of a device's kestrel_scaler, not a model",
            (Some(0), "statistics: 7 samples of 7 features"),
        ),
    ];
    for (path, said, (inspect_code, inspect_said)) in cases {
        let path = path.to_str().unwrap();
        let o = kestrel(&["predict", "--model", path, "--input", data.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
        let o = kestrel(&["inspect", path]);
        assert_eq!(o.status.code(), inspect_code, "{}", stderr(&o));
        let told = format!("{}{}", stdout(&o), stderr(&o));
        assert!(told.contains(inspect_said), "{told}");
    }
}

/// `kestrel inspect` of checkpoints a device wrote: `firmware-demo-c`'s checkpoints
/// program on the Cortex-M0 under QEMU (`make CORE=m0 test-checkpoints`, its `checkpoint
/// svm` and `checkpoint scaler` lines, 2026-12-04; `run-tests.sh` checks they are the
/// host's bytes): a windowed SVM of `kestrel_svm_default_config(32, 3)` with 20 steps a
/// sample and its scaler, after 300 rows. A change of the checkpoint format makes them
/// again: `make --quiet CORE=m0 test-checkpoints | awk '$1 == "checkpoint" && $2 == "svm" {
/// print $4 }' | xxd -r -p > ../stream/tests/data/device-checkpoint-svm.bin` in
/// `firmware-demo-c` (`scaler` likewise). The object, the configuration by the C struct's
/// fields and what it learned; a copy torn short, or with a byte changed, is named so.
#[test]
fn inspect_reads_a_devices_checkpoint() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let svm = data.join("device-checkpoint-svm.bin");
    let o = kestrel(&["inspect", svm.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("checkpoint of a device's kestrel_svm (the C library's), 902 bytes, checksum ok"), "{text}");
    assert!(text.contains("learned: 300 samples"), "{text}");
    let config = "config (kestrel_svm_config): bias 1.0, c 1.0, dim 3, epsilon 1.0, loss KESTREL_SVM_LOSS_SQUARED_HINGE, \
                  memory 2000, seed 0, \
                  steps_per_sample 20, window 32";
    assert!(text.contains(config), "{text}");
    assert!(text.contains("continue it: kestrel_svm_resume with this config"), "{text}");
    assert!(text.contains(&format!("kestrel import {} --out MODEL", svm.display())), "{text}");
    let resumes = "resumes: yes; its model (kestrel import): linear-svm classifier (f32), 3 features, 60 bytes";
    assert!(text.contains(resumes), "{text}");
    let info = json(&kestrel(&["inspect", svm.to_str().unwrap(), "--json"]));
    assert_eq!((info["kind"].as_str(), info["object"].as_str()), (Some("device-checkpoint"), Some("kestrel_svm")));
    assert_eq!(info["resumes"].as_bool(), Some(true));
    assert_eq!((info["samples_seen"].as_u64(), info["config"]["window"].as_u64()), (Some(300), Some(32)));
    let scaler = data.join("device-checkpoint-scaler.bin");
    let o = kestrel(&["inspect", scaler.to_str().unwrap()]);
    assert!(stdout(&o).contains("statistics: 300 samples of 3 features"), "{}", stdout(&o));
    let bytes = std::fs::read(&svm).unwrap();
    let dir = Scratch::new("cli", "device-checkpoint");
    let (torn, changed) = (dir.join("torn.bin"), dir.join("changed.bin"));
    std::fs::write(&torn, &bytes[..500]).unwrap();
    let mut flipped = bytes.clone();
    flipped[40] ^= 1;
    std::fs::write(&changed, flipped).unwrap();
    for (path, said) in [(torn, "a device checkpoint cut short"), (changed, "a damaged device checkpoint")] {
        let o = kestrel(&["inspect", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
    }
    // A window's float made NaN and the frame sealed again: the header reads, the state
    // does not resume, and inspect says so.
    let mut nan = bytes.clone();
    let last = nan.len() - kestrel_core::frame::TRAILER_LEN - 4;
    nan[last..last + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    let payload_len = nan.len() - kestrel_core::frame::HEADER_LEN - kestrel_core::frame::TRAILER_LEN;
    kestrel_core::device_checkpoint::FORMAT.seal([1, 0], payload_len, &mut nan).unwrap();
    let path = dir.join("nan.bin");
    std::fs::write(&path, nan).unwrap();
    let o = kestrel(&["inspect", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = "resumes: no: the kestrel_svm did not resume: its buffers do not hold the state its header describes";
    assert!(stdout(&o).contains(said), "{}", stdout(&o));
    assert_eq!(json(&kestrel(&["inspect", path.to_str().unwrap(), "--json"]))["resumes"].as_bool(), Some(false));
}

/// `kestrel import` of the Cortex-M0's checkpoints above writes, byte for byte, the model
/// the M0's own `kestrel_svm_save` wrote with its scaler at the same moment (the `model svm`
/// line of the same run, `device-model-svm.kestrel`; made again as the checkpoints are,
/// from `$1 == "model" && $2 == "svm"`). The checkpoint predates the learner's class
/// probability (its header's revision 0): it imports with a fresh one, which gives the model
/// no sigmoid, as the device's save had none. The model predicts raw rows; without the
/// scaler it is the unscaled model. A scaler's checkpoint alone, a learner's given as the
/// scaler, and a torn copy are errors that say so.
#[test]
fn import_makes_a_devices_checkpoint_the_model_it_would_save() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let (svm, scaler) = (data.join("device-checkpoint-svm.bin"), data.join("device-checkpoint-scaler.bin"));
    let (svm, scaler) = (svm.to_str().unwrap(), scaler.to_str().unwrap());
    let dir = Scratch::new("cli", "import");
    let model = dir.join("imported.kestrel");
    let o = kestrel(&["import", svm, "--scaler", scaler, "--out", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("from a device's kestrel_svm after 300 samples, with the scaler's statistics"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(data.join("device-model-svm.kestrel")).unwrap());
    let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
    assert_eq!((info["dim"].as_u64(), info["scaled"].as_bool()), (Some(3), Some(true)));
    let rows = dir.join("raw.csv");
    std::fs::write(&rows, "pressure,vibration,tilt\n1030,0.01,1.2\n1005,0.04,-1.4\n").unwrap();
    let (model_arg, rows_arg) = (model.to_str().unwrap(), rows.to_str().unwrap());
    let o = kestrel(&["predict", "--model", model_arg, "--input", rows_arg, "--label-column", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().collect::<Vec<_>>(),
        ["1", "-1"],
        "the rule the device learned: x0 − 1020 + 40·x2 > 0"
    );

    let unscaled = dir.join("unscaled.kestrel");
    assert!(kestrel(&["import", svm, "--out", unscaled.to_str().unwrap()]).status.success());
    assert_eq!(json(&kestrel(&["inspect", unscaled.to_str().unwrap(), "--json"]))["scaled"].as_bool(), Some(false));

    let torn = dir.join("torn.bin");
    std::fs::write(&torn, &std::fs::read(svm).unwrap()[..500]).unwrap();
    let out = model.to_str().unwrap();
    let cases = [
        (
            vec!["import", scaler, "--out", out],
            "a kestrel_scaler's checkpoint has no model of its own; give it as the scaler",
        ),
        (
            vec!["import", svm, "--scaler", svm, "--out", out],
            "a checkpoint of a device's kestrel_svm, not of a kestrel_scaler",
        ),
        (vec!["import", torn.to_str().unwrap(), "--out", out], "a device checkpoint cut short"),
    ];
    for (args, said) in cases {
        let o = kestrel(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
    }
}

#[test]
fn svm_train_predict_eval_inspect_round_trip() {
    let dir = Scratch::new("cli", "svm");
    let data = binary_libsvm(&dir, 300);
    let model = dir.join("m.kestrel");
    for scalar in ["f64", "f32"] {
        let data_arg = data.to_str().unwrap();
        let o = kestrel(&[
            "train",
            "--learner",
            "svm",
            "--input",
            data_arg,
            "--out",
            model.to_str().unwrap(),
            "--scalar",
            scalar,
            "--json",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = json(&o);
        assert_eq!(summary["n"], 300);
        assert_eq!(summary["centers"], 0);
        assert!(summary["objective"].as_f64().unwrap() < 0.0);

        let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", data_arg, "--json"]);
        assert!(json(&o)["accuracy"].as_f64().unwrap() > 0.95, "{}", stdout(&o));
        // Predicting twice from the saved model gives identical output; labels as given.
        let first = stdout(&kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", data_arg]));
        let second = stdout(&kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", data_arg]));
        assert_eq!(first, second);
        assert_eq!(first.lines().count(), 300);
        assert!(first.lines().all(|l| l == "1" || l == "-1"), "{first}");

        let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
        assert_eq!((info["kind"].as_str(), info["scalar"].as_str()), (Some("linear-svm"), Some(scalar)));
        assert_eq!((info["dim"].as_u64(), info["crc_ok"].as_bool()), (Some(2), Some(true)));

        // `train --model` names the file as `--out` does: the flag `eval` and `predict` read.
        let aliased = dir.join("aliased.kestrel");
        let args = ["--input", data_arg, "--model", aliased.to_str().unwrap(), "--scalar", scalar];
        let o = kestrel(&[&["train", "--learner", "svm"][..], &args].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(std::fs::read(&aliased).unwrap(), std::fs::read(&model).unwrap());
    }
}

/// `kestrel stream --learner slkl` reports its model's own error beside its predictions':
/// they may use the stream's recent level, which a saved model does not have.
#[test]
fn stream_slkl_reports_the_models_own_error() {
    let dir = Scratch::new("cli", "slkl-model-mse");
    let data = regression_csv(&dir, 400);
    let summary = |learner: &str, input: &str, extra: &[&str]| {
        let o = kestrel(&[&["stream", "--learner", learner, "--input", input, "--report-every", "0"], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        json(&o)
    };
    let slkl = summary("slkl", data.to_str().unwrap(), &[]);
    let (mse, model_mse) = (slkl["mse"].as_f64().unwrap(), slkl["model_mse"].as_f64().unwrap());
    assert!(mse.is_finite() && model_mse.is_finite() && model_mse > 0.0, "{slkl}");
    let svm = summary("svm", binary_libsvm(&dir, 300).to_str().unwrap(), &["--dim", "2"]);
    assert!(svm.get("model_mse").is_none(), "{svm}");
}

#[test]
fn slkl_and_rsvm_round_trips() {
    let dir = Scratch::new("cli", "kernels");
    let data = regression_csv(&dir, 400);
    let model = dir.join("slkl.kestrel");
    let o = kestrel(&[
        "train",
        "--learner",
        "slkl",
        "--input",
        data.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
        "--gamma",
        "2",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let centres = json(&o)["centers"].as_u64().unwrap();
    let eval =
        json(&kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", data.to_str().unwrap(), "--json"]));
    assert!(eval["mse"].as_f64().unwrap() < 0.05, "{eval}");
    let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
    assert_eq!((info["kind"].as_str(), info["centers"].as_u64()), (Some("slkl"), Some(centres)));

    let data = binary_libsvm(&dir, 300);
    let model = dir.join("rsvm.kestrel");
    let o = kestrel(&[
        "train",
        "--learner",
        "rsvm",
        "--input",
        data.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
        "--centers",
        "20",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let eval =
        json(&kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", data.to_str().unwrap(), "--json"]));
    assert!(eval["accuracy"].as_f64().unwrap() > 0.9, "{eval}");
    let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
    assert_eq!(info["kind"].as_str(), Some("rsvm"));
    assert!((1..=20).contains(&info["centers"].as_u64().unwrap()));
}

#[test]
fn krr_and_lssvm_choose_their_settings_and_say_so() {
    let dir = Scratch::new("cli", "krr");
    let data = regression_csv(&dir, 300);
    let model = dir.join("krr.kestrel");
    let (data, model) = (data.to_str().unwrap(), model.to_str().unwrap());
    let o = kestrel(&["train", "--learner", "krr", "--input", data, "--out", model, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    let (gamma, lambda) = (summary["chosen"]["gamma"].as_f64().unwrap(), summary["chosen"]["lambda"].as_f64().unwrap());
    assert!(gamma > 0.0 && lambda > 0.0 && summary["path"].as_array().unwrap().len() > 10, "{summary}");
    let eval = json(&kestrel(&["eval", "--model", model, "--input", data, "--json"]));
    assert!(eval["mse"].as_f64().unwrap() < 1e-3, "{eval}");
    // R² from predict's own values: 1 − Σ(y − ŷ)²/Σ(y − ȳ)².
    let predicted: Vec<f64> =
        stdout(&kestrel(&["predict", "--model", model, "--input", data])).lines().map(|l| l.parse().unwrap()).collect();
    let text = std::fs::read_to_string(data).unwrap();
    let labels: Vec<f64> = text.lines().skip(1).map(|l| l.rsplit(',').next().unwrap().parse().unwrap()).collect();
    let mean = labels.iter().sum::<f64>() / labels.len() as f64;
    let residual: f64 = labels.iter().zip(&predicted).map(|(y, p)| (y - p) * (y - p)).sum();
    let total: f64 = labels.iter().map(|y| (y - mean) * (y - mean)).sum();
    assert!((eval["r2"].as_f64().unwrap() - (1.0 - residual / total)).abs() < 1e-9, "{eval}");
    // Without --json the chosen values go to the terminal.
    let o = kestrel(&["train", "--learner", "krr", "--input", data, "--out", model]);
    assert!(stderr(&o).contains("chosen") && stderr(&o).contains("lambda = "), "{}", stderr(&o));
    let info = json(&kestrel(&["inspect", model, "--json"]));
    // serde_json's float parsing may be an ulp off the printed value: compare as numbers.
    let kernel = info["kernel"].as_str().unwrap();
    let stored: f64 = kernel.trim_start_matches("rbf(gamma=").trim_end_matches(')').parse().unwrap();
    assert!((stored - gamma).abs() <= 1e-15 * gamma, "{info} vs {gamma}");

    let data = binary_libsvm(&dir, 300);
    let data = data.to_str().unwrap();
    for learner in ["lssvm", "rsvm"] {
        let o = kestrel(&["train", "--learner", learner, "--input", data, "--out", model, "--json"]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(json(&o)["chosen"]["gamma"].as_f64().is_some(), "{}", stdout(&o));
        let eval = json(&kestrel(&["eval", "--model", model, "--input", data, "--json"]));
        assert!(eval["accuracy"].as_f64().unwrap() > 0.95, "{learner}: {eval}");
    }
    let rsvm = json(&kestrel(&["train", "--learner", "rsvm", "--input", data, "--out", model, "--json"]));
    assert!(rsvm["chosen"]["c"].as_f64().unwrap() > 0.0, "{rsvm}");
    // auto where it cannot apply is a usage error naming the flag.
    for args in [
        vec!["train", "--learner", "svm", "--input", data, "--out", model, "--c", "auto"],
        vec!["train", "--learner", "rsvm", "--input", data, "--out", model, "--raw-features"],
        vec!["stream", "--learner", "rsvm", "--input", data, "--dim", "2", "--gamma", "auto"],
        vec!["train", "--learner", "krr", "--input", data, "--out", model, "--lambda", "0"],
    ] {
        let o = kestrel(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains("auto") || stderr(&o).contains("lambda"), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn krr_solver_cg_trains_the_model_exact_does() {
    let dir = Scratch::new("cli", "krr-cg");
    let data = regression_csv(&dir, 300);
    let (exact, cg) = (dir.join("exact.kestrel"), dir.join("cg.kestrel"));
    let (data, exact, cg) = (data.to_str().unwrap(), exact.to_str().unwrap(), cg.to_str().unwrap());
    let common = ["train", "--learner", "krr", "--input", data, "--gamma", "0.5", "--eps", "1e-12"];
    let o = kestrel(&[&common[..], &["--out", exact, "--solver", "exact", "--posterior", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert_eq!(summary["solver"].as_str(), Some("exact"), "{summary}");
    let o = kestrel(&[&common[..], &["--out", cg, "--solver", "cg", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let cg_summary = json(&o);
    assert_eq!((cg_summary["solver"].as_str(), cg_summary["converged"].as_bool()), (Some("cg"), Some(true)));
    assert_eq!(cg_summary["lambda"], summary["lambda"], "{cg_summary}");
    // The same kind of model: predict reads both and they agree.
    let exact_eval = json(&kestrel(&["eval", "--model", exact, "--input", data, "--json"]));
    assert!(exact_eval["mse"].as_f64().unwrap() < 1e-3, "{exact_eval}");
    let predict = |model: &str| -> Vec<f64> {
        let o = kestrel(&["predict", "--model", model, "--input", data]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().map(|line| line.trim().parse().unwrap()).collect()
    };
    let (a, b) = (predict(exact), predict(cg));
    assert_eq!(a.len(), 300);
    for (i, (a, b)) in a.iter().zip(&b).enumerate() {
        assert!((a - b).abs() <= 1e-6 * a.abs().max(1.0), "row {i}: exact {a} vs cg {b}");
    }
    // --std: the exact model prints its prediction and a predictive std of at least √λ
    // (the noise); the cg model has no posterior, a clear error.
    let o = kestrel(&["predict", "--model", exact, "--input", data, "--std"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let noise = summary["lambda"].as_f64().unwrap().sqrt();
    let rows: Vec<(f64, f64)> = stdout(&o)
        .lines()
        .map(|line| {
            let (f, s) = line.split_once(',').unwrap();
            (f.parse().unwrap(), s.parse().unwrap())
        })
        .collect();
    assert_eq!(rows.len(), 300);
    for (i, ((f, s), a)) in rows.iter().zip(&a).enumerate() {
        assert!(f == a && *s >= noise && s.is_finite(), "row {i}: {f},{s} vs {a}, √λ = {noise}");
    }
    let o = kestrel(&["predict", "--model", cg, "--input", data, "--std"]);
    assert!(!o.status.success() && stderr(&o).contains("no predictive variance"), "{}", stderr(&o));
    // Without --posterior the exact model is the same predictor, the posterior left out of
    // the file (below), and --std says which flag keeps it.
    let plain = dir.join("plain.kestrel");
    let plain = plain.to_str().unwrap();
    let o = kestrel(&[&common[..], &["--out", plain, "--solver", "exact"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(predict(plain), a);
    let o = kestrel(&["predict", "--model", plain, "--input", data, "--std"]);
    assert!(!o.status.success() && stderr(&o).contains("with --posterior"), "{}", stderr(&o));
    // inspect tells what the posterior takes in memory, m² + 2m scalars for m centres.
    let (exact_info, cg_info) =
        (json(&kestrel(&["inspect", exact, "--json"])), json(&kestrel(&["inspect", cg, "--json"])));
    let m = exact_info["centers"].as_u64().unwrap();
    assert_eq!(
        (exact_info["posterior_bytes"].as_u64(), cg_info.get("posterior_bytes")),
        (Some((m * m + 2 * m) * 8), None)
    );
    // In the file: the centres' means and the packed factor, m + m(m + 1)/2 scalars.
    let file_bytes = |path: &str| std::fs::metadata(path).unwrap().len();
    assert!(file_bytes(exact) - file_bytes(plain) >= (m + m * (m + 1) / 2) * 8, "{exact_info}");
    let text = stdout(&kestrel(&["inspect", exact]));
    assert!(text.contains(&format!("predictive variance (predict --std): the posterior of the {m} centres")), "{text}");
    // The file does not say which learner wrote it: inspect names those that write its format.
    assert!(text.contains("slkl regressor") && text.contains("which slkl, krr, ssvr and kpls write"), "{text}");
    // Solvers that belong to another learner are usage errors.
    for args in [
        vec!["train", "--learner", "krr", "--input", data, "--out", cg, "--solver", "dcd"],
        vec!["train", "--learner", "rsvm", "--input", data, "--out", cg, "--solver", "cg"],
    ] {
        let o = kestrel(&args);
        assert!(!o.status.success() && stderr(&o).contains("--solver"), "{args:?}: {}", stderr(&o));
    }
    // The posterior is the exact krr's alone.
    for (args, said) in [
        (vec!["--learner", "krr", "--solver", "cg"], "--posterior needs krr's exact solver"),
        (vec!["--learner", "ssvr"], "--posterior is kernel ridge regression's (krr)"),
    ] {
        let o = kestrel(&[&["train", "--input", data, "--out", cg, "--posterior"], &args[..]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{args:?}: {}", stderr(&o));
    }
}

/// `--nu auto`: every ν of the grid scored by cross-validation, the least error chosen and
/// said (in `chosen` and on the terminal), the model trained at it; a number skips it.
#[test]
fn slkl_nu_auto_chooses_by_cross_validation() {
    let dir = Scratch::new("cli", "slkl-nu-auto");
    let data = regression_csv(&dir, 150);
    let model = dir.join("slkl.kestrel");
    let (data, model) = (data.to_str().unwrap(), model.to_str().unwrap());
    let common = ["train", "--learner", "slkl", "--input", data, "--out", model, "--gamma", "1", "--centers", "32"];
    let o = kestrel(&[&common[..], &["--nu", "auto", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    let scores: Vec<(f64, f64)> = summary["nu_cv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row["nu"].as_f64().unwrap(), row["cv_mse"].as_f64().unwrap()))
        .collect();
    assert_eq!(scores.iter().map(|s| s.0).collect::<Vec<_>>(), kestrel_stream::batch::fit::NU_GRID.to_vec());
    let best = scores.iter().cloned().fold((f64::NAN, f64::INFINITY), |b, s| if s.1 < b.1 { s } else { b });
    assert_eq!(summary["chosen"]["nu"].as_f64(), Some(best.0), "{summary}");
    let o = kestrel(&[&common[..], &["--nu", &best.0.to_string(), "--json"]].concat());
    let fixed = json(&o);
    assert_eq!(fixed["nu_effective"], summary["nu_effective"], "{fixed}");
    assert_eq!(fixed["nu_cv"].as_array().map(Vec::len), Some(0));
    let o = kestrel(&[&common[..], &["--nu", "auto"]].concat());
    assert!(stderr(&o).contains("nu = "), "{}", stderr(&o));
}

/// Kernel PLS: the components given are the CG steps taken; under `auto` the held-out
/// errors are reported, one per number tried, and the chosen number is the least; more
/// components fit the training rows closer; the model is krr's kind (predict and eval read
/// it); settings of other learners are refused, naming the flag.
#[test]
fn kpls_takes_its_components_or_chooses_them_on_held_out_rows() {
    let dir = Scratch::new("cli", "kpls");
    let data = regression_csv(&dir, 300);
    let model = dir.join("kpls.kestrel");
    let (data, model) = (data.to_str().unwrap(), model.to_str().unwrap());
    let train = |extra: &[&str]| {
        let o = kestrel(&[&["train", "--learner", "kpls", "--input", data, "--out", model, "--json"], extra].concat());
        assert!(o.status.success(), "{extra:?}: {}", stderr(&o));
        let summary = json(&o);
        let eval = json(&kestrel(&["eval", "--model", model, "--input", data, "--json"]));
        (summary, eval["mse"].as_f64().unwrap())
    };
    let mut fits = Vec::new();
    for components in [1, 3] {
        let (summary, mse) = train(&["--gamma", "0.5", "--components", &components.to_string()]);
        assert_eq!(summary["components"].as_u64(), Some(components), "{summary}");
        assert!(summary["iterations"].as_u64().unwrap() <= components, "{summary}");
        assert_eq!(summary["held_out"].as_array().map(Vec::len), Some(0), "{summary}");
        fits.push(mse);
    }
    assert!(fits[1] < fits[0], "3 components fit worse than 1: {fits:?}");
    let (summary, mse) = train(&["--gamma", "0.5"]);
    let held_out: Vec<f64> =
        summary["held_out"].as_array().unwrap().iter().map(|row| row["held_out_mse"].as_f64().unwrap()).collect();
    let chosen = summary["chosen"]["components"].as_u64().unwrap() as usize;
    assert!(!held_out.is_empty() && held_out.len() <= kestrel_stream::batch::kpls::MAX_COMPONENTS, "{summary}");
    let least = held_out.iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(held_out[chosen - 1], least, "{summary}");
    assert!(mse < 1e-2, "sin(2x) + x² fitted with MSE {mse}");
    for (flag, value, says) in [("--components", "3", "--components"), ("--lambda", "1", "--lambda")] {
        let learner = if flag == "--components" { "krr" } else { "kpls" };
        let o = kestrel(&["train", "--learner", learner, "--input", data, "--out", model, flag, value]);
        assert_eq!(o.status.code(), Some(2), "a refused configuration: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{learner} {flag}: {}", stderr(&o));
    }
}

#[test]
fn ssvr_and_the_ssvm_solver_train_models_predict_reads() {
    let dir = Scratch::new("cli", "ssvm");
    let data = regression_csv(&dir, 300);
    let model = dir.join("ssvr.kestrel");
    let (data, model) = (data.to_str().unwrap(), model.to_str().unwrap());
    let o = kestrel(&["train", "--learner", "ssvr", "--input", data, "--out", model, "--epsilon", "0.01", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert!(summary["chosen"]["c"].as_f64().unwrap() > 0.0 && summary["converged"] == true, "{summary}");
    let eval = json(&kestrel(&["eval", "--model", model, "--input", data, "--json"]));
    assert!(eval["mse"].as_f64().unwrap() < 1e-3, "{eval}");
    let o = kestrel(&["predict", "--model", model, "--input", data]);
    assert!(o.status.success() && stdout(&o).lines().count() == 300, "{}", stderr(&o));

    let data = binary_libsvm(&dir, 300);
    let data = data.to_str().unwrap();
    let o = kestrel(&["train", "--learner", "rsvm", "--solver", "ssvm", "--input", data, "--out", model, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["solver"].as_str(), Some("ssvm"));
    let eval = json(&kestrel(&["eval", "--model", model, "--input", data, "--json"]));
    assert!(eval["accuracy"].as_f64().unwrap() > 0.95, "{eval}");
    // The smooth SVM smooths the squared hinge: the hinge is refused.
    let args = ["train", "--learner", "rsvm", "--solver", "ssvm", "--loss", "hinge", "--c", "1", "--input", data];
    let o = kestrel(&[&args[..], &["--out", model]].concat());
    assert!(!o.status.success() && stderr(&o).contains("loss"), "{}", stderr(&o));
}

#[test]
fn tune_compares_candidates_and_writes_the_best() {
    let dir = Scratch::new("cli", "tune");
    let (binary, regression) = (binary_libsvm(&dir, 240), regression_csv(&dir, 200));
    let (binary, regression) = (binary.to_str().unwrap(), regression.to_str().unwrap());
    let model = dir.join("best.kestrel");
    let model = model.to_str().unwrap();
    // Leave-one-out over the default widths: seven octaves, the best written.
    let o = kestrel(&["tune", "--learner", "rsvm", "--input", binary, "--out", model, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert_eq!(summary["criterion"], "leave-one-out", "{summary}");
    let candidates = summary["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 7);
    let accuracies: Vec<f64> = candidates.iter().map(|c| c["accuracy"].as_f64().unwrap()).collect();
    let best = &summary["best"];
    assert_eq!(best["accuracy"].as_f64().unwrap(), accuracies.iter().copied().fold(0.0, f64::max), "{summary}");
    assert_eq!(summary["model_bytes"].as_u64().unwrap(), std::fs::metadata(model).unwrap().len());
    let eval = json(&kestrel(&["eval", "--model", model, "--input", binary, "--json"]));
    assert!(eval["accuracy"].as_f64().unwrap() > 0.95, "{eval}");
    // The best width's leave-one-out is the least-squares SVM's own, as `train` reports it.
    let gamma = best["gamma"].as_f64().unwrap().to_string();
    let lssvm = json(&kestrel(&[
        "train",
        "--learner",
        "lssvm",
        "--input",
        binary,
        "--out",
        model,
        "--gamma",
        &gamma,
        "--json",
    ]));
    let errors = lssvm["loo_errors"].as_f64().unwrap();
    assert!((best["accuracy"].as_f64().unwrap() - (1.0 - errors / 240.0)).abs() < 1e-12, "{lssvm} vs {best}");

    // Given grids: exactly those candidates, every ridge from the grid.
    let args =
        ["tune", "--learner", "krr", "--input", regression, "--gamma-grid", "0.1,1,10", "--lambda-grid", "0.001,0.1"];
    let summary = json(&kestrel(&[&args[..], &["--json"]].concat()));
    let gammas: Vec<f64> =
        summary["candidates"].as_array().unwrap().iter().map(|c| c["gamma"].as_f64().unwrap()).collect();
    assert_eq!(gammas, [0.1, 1.0, 10.0]);
    assert!(
        summary["candidates"].as_array().unwrap().iter().all(|c| [0.001, 0.1].contains(&c["lambda"].as_f64().unwrap()))
    );
    assert!(summary["best"]["mse"].as_f64().unwrap() < 0.01, "{summary}");

    // Cross-validation for the linear SVM and SLKL; the table and the command that repeats the best.
    let summary = json(&kestrel(&[
        "tune",
        "--learner",
        "svm",
        "--input",
        binary,
        "--folds",
        "3",
        "--c-grid",
        "0.01,1,100",
        "--json",
    ]));
    assert_eq!(summary["criterion"], "3-fold");
    let cs: Vec<f64> = summary["candidates"].as_array().unwrap().iter().map(|c| c["c"].as_f64().unwrap()).collect();
    assert_eq!(cs, [0.01, 1.0, 100.0]);
    assert!(summary["best"]["accuracy"].as_f64().unwrap() > 0.9, "{summary}");
    let o = kestrel(&[
        "tune",
        "--learner",
        "slkl",
        "--input",
        regression,
        "--gamma",
        "1",
        "--nu-grid",
        "0.001,1",
        "--folds",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("2-fold MSE")
            && stdout(&o).contains("best: kestrel train --learner slkl --scale --gamma 1 --nu 0.001"),
        "{}",
        stdout(&o)
    );

    // A setting fixed and searched at once, or a grid the learner has not: usage errors.
    for args in [
        vec!["tune", "--learner", "rsvm", "--input", binary, "--gamma", "1", "--gamma-grid", "1,2"],
        vec!["tune", "--learner", "svm", "--input", binary, "--gamma-grid", "1,2"],
        vec!["tune", "--learner", "krr", "--input", regression, "--lambda", "1", "--lambda-grid", "1,2"],
        vec!["tune", "--learner", "svm", "--input", binary, "--folds", "1"],
    ] {
        let o = kestrel(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

/// Past 10,000 rows the leave-one-out compares candidates on a subsample of 10,000 (as
/// `--gamma auto`): scores count its rows, a grid's costs come back as given, and the best
/// model is trained on every row.
#[test]
fn tune_scores_a_large_set_on_a_subsample() {
    let dir = Scratch::new("cli", "tune-large");
    let (rows, data) = (10_500, dir.join("noisy.csv"));
    let mut text = String::from("a,b,label\n");
    for i in 0..rows {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        let flipped = i % 13 == 0;
        text.push_str(&format!("{a:.4},{b:.4},{}\n", if (a > b) != flipped { 1 } else { -1 }));
    }
    std::fs::write(&data, text).unwrap();
    let (data, model) = (data.to_str().unwrap(), dir.join("best.kestrel"));
    let model = model.to_str().unwrap();
    let report = dir.join("tune.html");
    let args = ["tune", "--learner", "rsvm", "--input", data, "--gamma-grid", "0.5", "--c-grid", "0.25,4"];
    let o = kestrel(&[&args[..], &["--out", model, "--json", "--report", report.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&report).unwrap().contains("10000 of 10500 (a uniform subsample"));
    let summary = json(&o);
    assert_eq!((summary["n"].as_u64(), summary["scored_rows"].as_u64()), (Some(10_500), Some(10_000)), "{summary}");
    let best = &summary["best"];
    let c = best["c"].as_f64().unwrap();
    assert!(c == 0.25 || c == 4.0, "{summary}");
    let errors = (1.0 - best["accuracy"].as_f64().unwrap()) * 10_000.0;
    assert!(errors > 100.0 && (errors - errors.round()).abs() < 1e-6, "{summary}");
    let c = c.to_string();
    let alone = dir.join("alone.kestrel");
    // `--scale auto` decided once, on the rows, before the candidates; the flag of its choice
    // trains the same model.
    let scale = if summary["standardised"] == true { "on" } else { "off" };
    let train = ["train", "--learner", "rsvm", "--input", data, "--gamma", "0.5", "--c", &c, "--scale", scale];
    let o = kestrel(&[&train[..], &["--out", alone.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(model).unwrap(), std::fs::read(&alone).unwrap());
}

#[test]
fn bad_rows_are_reported_with_line_and_column() {
    let dir = Scratch::new("cli", "bad");
    let path = dir.join("bad.libsvm");
    std::fs::write(&path, "1 1:0.5 2:1\n-1 1:nan\n1 2:1 1:3\n-1 1:2\n").unwrap();
    let model = dir.join("m.kestrel");
    let args = ["train", "--learner", "svm", "--input", path.to_str().unwrap(), "--out", model.to_str().unwrap()];
    let o = kestrel(&args);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.libsvm:2:6: `nan` is not finite"), "{}", stderr(&o));
    assert!(!model.exists());

    let mut skip = args.to_vec();
    skip.extend(["--on-error", "skip", "--json"]);
    let o = kestrel(&skip);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!((json(&o)["n"].as_u64(), json(&o)["skipped"].as_u64()), (Some(2), Some(2)));
    assert!(stderr(&o).contains("bad.libsvm:3:7: feature index 1 follows 2"), "{}", stderr(&o));

    let csv = dir.join("bad.csv");
    std::fs::write(&csv, "a,b,y\n1,2,1\n3,x,-1\n4,5\n").unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", csv.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.csv:3:3: `x` is not a number"), "{}", stderr(&o));
}

/// Two files of one set of columns in two orders, joined with their headers: the second
/// header is told where it stands, and under `--on-error skip` the rows after it are read
/// by its names — the model is the one the same rows in one order give.
#[test]
fn rows_after_a_header_of_another_order_are_read_by_its_names() {
    let dir = Scratch::new("cli", "reordered-header");
    let (mut joined, mut one_order) = ("t,x1,x2,y\n".to_string(), "t,x1,x2,y\n".to_string());
    for i in 0..80 {
        let (x1, x2) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        let y = u8::from(x1 > x2);
        if i == 40 {
            joined.push_str("y,x2,t,x1\n");
        }
        joined.push_str(&if i < 40 { format!("{i},{x1},{x2},{y}\n") } else { format!("{y},{x2},{i},{x1}\n") });
        one_order.push_str(&format!("{i},{x1},{x2},{y}\n"));
    }
    let (joined, one_order) = (write_in(&dir, "joined.csv", &joined), write_in(&dir, "one.csv", &one_order));
    let model = |input: &str, name: &str, extra: &[&str]| {
        let out = dir.join(name);
        let args = [&["train", "--learner", "svm", "--skip-column", "t", "--input", input], extra].concat();
        let o = kestrel(&[&args[..], &["--out", out.to_str().unwrap()]].concat());
        (o, std::fs::read(out).ok())
    };
    let (o, none) = model(&joined, "stopped.kestrel", &[]);
    assert_eq!((o.status.code(), none), (Some(1), None));
    let told = "joined.csv:42:1: a header again, its columns in another order (`y`, `x2`, `t`, `x1`)";
    assert!(stderr(&o).contains(told), "{}", stderr(&o));
    let (o, skipped) = model(&joined, "skipped.kestrel", &["--on-error", "skip"]);
    assert!(o.status.success() && stderr(&o).contains(told), "{}", stderr(&o));
    let (o, expected) = model(&one_order, "one.kestrel", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(skipped, expected);
}

/// `kestrel budget` without `--learner` gives every learner's line: the bytes (or, with
/// `--fit`, the largest window) that `--learner L` gives for each, and a learner no
/// window of which fits is a line that says so, not an error.
#[test]
fn budget_without_a_learner_lists_every_learner() {
    let base = ["budget", "--dim", "6", "--scalar", "f32", "--target", "cortex-m"];
    let learners = ["slkl", "svm", "rsvm", "novelty"];
    for extra in [&[][..], &["--fit", "48KiB"][..], &["--window", "64", "--centers", "8"][..]] {
        let args = [&base[..], extra, &["--json"]].concat();
        let all = json(&kestrel(&args));
        let key = if extra.contains(&"--fit") { "window" } else { "bytes" };
        assert_eq!(all[key].as_object().map(|o| o.len()), Some(learners.len()), "{all}");
        for learner in learners {
            let one = json(&kestrel(&[&args[..], &["--learner", learner]].concat()));
            assert!(one[key].as_u64().is_some_and(|v| v > 0), "{learner}: {one}");
            assert_eq!(all[key][learner], one[key], "{learner} {extra:?}");
        }
    }
    // 4 KiB holds no window of slkl's 32 centres, but one of svm's sixteen classes.
    let o = kestrel(&[&base[..], &["--fit", "4KiB"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(said.starts_with("learner   window\n") && said.contains("\nslkl      none: one sample takes "), "{said}");
    let svm: usize =
        said.lines().find_map(|line| line.strip_prefix("svm       ")).and_then(|w| w.parse().ok()).unwrap();
    assert!(svm > 0, "{said}");
    let o = kestrel(&[&base[..], &["--fit", "4KiB", "--json"]].concat());
    assert!(json(&o)["window"]["slkl"].is_null(), "{}", stdout(&o));
}

/// Without `--learner`, `stream` chooses it from the first good row and says so — rsvm for
/// a class name or a small whole number, slkl for another number, the novelty detector for
/// rows without labels — each the very model the flag gives; a resumed run takes the
/// checkpoint's.
#[test]
fn stream_without_a_learner_chooses_it_from_the_first_row() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");
    let dir = Scratch::new("cli", "stream-chosen");
    // A bad row before the first good one is skipped, and the good one chooses.
    let named = dir.join("named.csv");
    let rows: String = (0..60).map(|i| format!("{i},{}\n", ["low", "high"][(i / 7) % 2])).collect();
    std::fs::write(&named, format!("x,state\nx,low\n{rows}")).unwrap();
    let (chosen, given) = (dir.join("chosen.kestrel"), dir.join("given.kestrel"));
    let stream = |input: &str, extra: &[&str], out: &PathBuf| {
        let args =
            [&["stream", "--input", input, "--on-error", "skip", "--out", out.to_str().unwrap()], extra].concat();
        let o = kestrel(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let iris = format!("{data}/iris/train.csv");
    let diabetes = format!("{data}/diabetes/train.csv");
    let cases: [(&str, &[&str], &str, &str); 4] = [
        (
            &iris,
            &[],
            "rsvm",
            "learner rsvm: the first row's label 1 is a whole number from -1 to --classes 16, read as a class",
        ),
        (&diabetes, &[], "slkl", "learner slkl: the first row's label 68 is not a class code from -1 to --classes 16"),
        (named.to_str().unwrap(), &[], "rsvm", "learner rsvm: the first row's label is a class name (`low`)"),
        (&iris, &["--label-column", "none"], "novelty", "learner novelty: the rows have no labels"),
    ];
    for (input, extra, learner, said) in cases {
        let told = stream(input, extra, &chosen);
        assert!(told.contains(said), "{told}");
        stream(input, &[extra, &["--learner", learner]].concat(), &given);
        assert_eq!(std::fs::read(&chosen).unwrap(), std::fs::read(&given).unwrap(), "{input} {learner}");
    }
    // A checkpoint of `--learner svm` resumes without the flag, as svm.
    let checkpoint = dir.join("run.ckpt");
    let path = checkpoint.to_str().unwrap();
    stream(&iris, &["--learner", "svm", "--checkpoint", path, "--max-rows", "50"], &given);
    let told = stream(&iris, &["--checkpoint", path, "--resume"], &chosen);
    assert!(!told.contains("learner"), "{told}");
    assert_eq!(inspect_learner(&chosen), "linear-svm");
}

/// The kind of the model in `path`, as `kestrel inspect --json` names it.
fn inspect_learner(path: &std::path::Path) -> String {
    let o = kestrel(&["inspect", path.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    json(&o)["kind"].as_str().unwrap_or_default().to_string()
}

/// Without `--learner`, `train` and `tune` choose it from the label column and say so:
/// rsvm for classes, krr for a numeric target (many distinct numbers, a number a row or so,
/// more than 20 numbers that are not class codes, or one that is not whole), the novelty detector for rows without labels — each the very
/// model the flag gives.
#[test]
fn train_without_a_learner_chooses_it_from_the_labels() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");
    let dir = Scratch::new("cli", "chosen-learner");
    let fractions = dir.join("fractions.csv");
    std::fs::write(&fractions, "x,y\n0,0.5\n1,1.5\n2,0.5\n3,1.5\n4,0.5\n5,1.5\n").unwrap();
    // Whole numbers: a count of a row or so each is a target; two rows a number, classes.
    let (counts, pairs) = (dir.join("counts.csv"), dir.join("pairs.csv"));
    std::fs::write(&counts, "x,y\n0,3\n1,5\n2,8\n3,13\n4,21\n5,21\n").unwrap();
    std::fs::write(&pairs, "x,y\n0,1\n1,1\n2,2\n3,2\n4,3\n5,3\n").unwrap();
    // 22 whole numbers, six rows each: readings from 40 to 61 are a target, the codes 0 to
    // 21 classes.
    let many = |first: usize| (0..132).map(|i| format!("{i},{}\n", first + i % 22)).collect::<String>();
    let (readings, codes) = (dir.join("readings.csv"), dir.join("codes.csv"));
    std::fs::write(&readings, format!("x,y\n{}", many(40))).unwrap();
    std::fs::write(&codes, format!("x,y\n{}", many(0))).unwrap();
    let (chosen, given) = (dir.join("chosen.kestrel"), dir.join("given.kestrel"));
    let train = |input: &str, extra: &[&str], out: &PathBuf| {
        let o = kestrel(&[&["train", "--input", input, "--out", out.to_str().unwrap()], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    let iris = format!("{data}/iris/train.csv");
    let diabetes = format!("{data}/diabetes/train.csv");
    let cases: [(&str, &[&str], &str, &str); 8] = [
        (&iris, &[], "rsvm", "learner rsvm: the label column holds 3 classes (--learner chooses another)"),
        (
            &diabetes,
            &[],
            "krr",
            "learner krr: the label column holds a numeric target, 187 distinct numbers in 331 rows",
        ),
        (fractions.to_str().unwrap(), &[], "krr", "numeric target, 2 distinct numbers in 6 rows, not all whole (0.5)"),
        (counts.to_str().unwrap(), &[], "krr", "numeric target, 5 distinct numbers in 6 rows (--learner"),
        (pairs.to_str().unwrap(), &[], "rsvm", "learner rsvm: the label column holds 3 classes"),
        (
            readings.to_str().unwrap(),
            &[],
            "krr",
            "numeric target, 22 distinct numbers in 132 rows from 40 to 61, not class codes 0 or 1 to k",
        ),
        (codes.to_str().unwrap(), &[], "rsvm", "learner rsvm: the label column holds 22 classes"),
        (&iris, &["--label-column", "none"], "novelty", "learner novelty: the rows have no labels\n"),
    ];
    for (input, extra, learner, said) in cases {
        let o = train(input, extra, &chosen);
        assert!(stderr(&o).contains(said), "{}", stderr(&o));
        train(input, &[extra, &["--learner", learner]].concat(), &given);
        assert_eq!(std::fs::read(&chosen).unwrap(), std::fs::read(&given).unwrap(), "{input} {learner}");
    }
    let o = train(&iris, &["--json"], &chosen);
    let summary = json(&o);
    assert_eq!(summary["learner"], "rsvm");
    assert_eq!(summary["learner_chosen"], "the label column holds 3 classes");
    let o = train(&iris, &["--json", "--learner", "rsvm"], &chosen);
    assert!(json(&o).get("learner_chosen").is_none());
    // tune compares the chosen learner's settings, and names it in the line of the best.
    let o = kestrel(&["tune", "--input", &diabetes]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("best: kestrel train --learner krr"), "{}", stdout(&o));
    let o = kestrel(&["tune", "--input", &iris, "--label-column", "none"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the novelty detector learns without them"), "{}", stderr(&o));
}

/// A classifier told of more than 100 classes hears of their cost before its fit; a
/// hundred classes are not told of.
#[test]
fn many_classes_are_told_of_before_the_fit() {
    let dir = Scratch::new("cli", "many-classes");
    let model = dir.join("m.kestrel");
    let said = |classes: usize, learner: &str| {
        let path = dir.join(format!("c{classes}.csv"));
        let rows: String = (0..2 * classes).map(|i| format!("{i},class{}\n", i % classes)).collect();
        std::fs::write(&path, format!("x,y\n{rows}")).unwrap();
        let o = kestrel(&[
            "train",
            "--learner",
            learner,
            "--input",
            path.to_str().unwrap(),
            "--out",
            model.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let note = "note: the label column holds 101 classes in 202 rows: one-vs-rest fits a problem per class, 101 here";
    assert!(said(101, "svm").contains(note), "{}", said(101, "svm"));
    assert!(!said(100, "svm").contains("one-vs-rest fits"));
}

#[test]
fn bad_model_files_and_usage_errors() {
    let dir = Scratch::new("cli", "models");
    let data = binary_libsvm(&dir, 50);
    let model = dir.join("m.kestrel");
    assert!(
        kestrel(&["train", "--learner", "svm", "--input", data.to_str().unwrap(), "--out", model.to_str().unwrap()])
            .status
            .success()
    );
    let bytes = std::fs::read(&model).unwrap();
    let broken = dir.join("broken.kestrel");
    let cases: [(&[u8], &str); 3] = [
        (&bytes[..bytes.len() - 3], "truncated model"),
        (b"PK\x03\x04 definitely a zip file, not a model", "not a Kestrel model"),
        (&[&bytes[..20], &[bytes[20] ^ 0xff], &bytes[21..]].concat(), "checksum"),
    ];
    for (content, message) in cases {
        std::fs::write(&broken, content).unwrap();
        for args in [
            vec!["inspect", broken.to_str().unwrap()],
            vec!["predict", "--model", broken.to_str().unwrap(), "--input", data.to_str().unwrap()],
        ] {
            let o = kestrel(&args);
            assert_eq!(o.status.code(), Some(1));
            assert!(stderr(&o).contains(message), "{message}: {}", stderr(&o));
        }
    }
    // The two files swapped: the data given for the model, the model for the data.
    let (model, data) = (model.to_str().unwrap(), data.to_str().unwrap());
    let o = kestrel(&["predict", "--model", data, "--input", model]);
    assert_eq!(o.status.code(), Some(1));
    let said = "text, not a model file (a data file? a model file is what `kestrel train --out` writes, and data is \
                given with --input)";
    assert!(stderr(&o).contains(&format!("{data}: {said}")), "{}", stderr(&o));
    let o = kestrel(&["inspect", data]);
    assert!(o.status.code() == Some(1) && stderr(&o).contains(said), "{}", stderr(&o));
    for command in ["predict", "eval"] {
        let o = kestrel(&[command, "--model", model, "--input", model]);
        assert_eq!(o.status.code(), Some(1));
        let said = format!("{model}:1:1: a Kestrel model file, not data: a model is given with --model");
        assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    }
    assert_eq!(kestrel(&["train", "--learner", "nope"]).status.code(), Some(2));
    assert_eq!(kestrel(&["frobnicate"]).status.code(), Some(2));
    let o = kestrel(&["train", "--learner", "svm", "--input", "/nonexistent/x.csv", "--out", "/tmp/x"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/x.csv"), "{}", stderr(&o));
}

#[test]
fn stdin_input_and_stream() {
    let dir = Scratch::new("cli", "stdin");
    let data = std::fs::read(binary_libsvm(&dir, 400)).unwrap();
    let model = dir.join("m.kestrel");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["stream", "--learner", "svm", "--input", "-", "--dim", "2", "--report-every", "100", "--json"])
        .args(["--out", model.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&data).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<_> = stdout(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 5, "four reports and a summary: {lines:?}");
    let summary: serde_json::Value = serde_json::from_str(&lines[4]).unwrap();
    assert_eq!(
        (summary["n"].as_u64(), summary["skipped"].as_u64()),
        (Some(400), Some(0)),
        "every row is scored, the first too"
    );
    assert!(summary["accuracy"].as_f64().unwrap() > 0.8, "{summary}");
    assert!(model.exists());
}

/// `path`'s bytes gzip-compressed, written beside it as `name`.
fn gzipped(path: &Path, name: &str) -> PathBuf {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&std::fs::read(path).unwrap()).unwrap();
    let out = path.with_file_name(name);
    std::fs::write(&out, encoder.finish().unwrap()).unwrap();
    out
}

#[test]
fn gzip_inputs_are_read_as_the_text_they_hold() {
    let dir = Scratch::new("cli", "gzip");
    let plain = regression_csv(&dir, 300);
    let train = |input: &Path, model: &str| {
        let out = dir.join(model);
        let o =
            kestrel(&["train", "--learner", "krr", "--input", input.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read(out).unwrap()
    };
    let expected = train(&plain, "plain.kestrel");
    // By the extension without `.gz`, and by the first line when the name says nothing.
    assert_eq!(train(&gzipped(&plain, "regression.csv.gz"), "gz.kestrel"), expected);
    assert_eq!(train(&gzipped(&plain, "rows.data"), "unnamed.kestrel"), expected);

    let libsvm = binary_libsvm(&dir, 400);
    let stream = |stdin: Vec<u8>| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
            .args(["stream", "--learner", "svm", "--input", "-", "--dim", "2"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&stdin).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = json(&o);
        (summary["n"].as_u64(), summary["accuracy"].as_f64())
    };
    let compressed = std::fs::read(gzipped(&libsvm, "binary.libsvm.gz")).unwrap();
    let summary = stream(compressed.clone());
    assert_eq!(summary, stream(std::fs::read(&libsvm).unwrap()));
    assert_eq!(summary.0, Some(400));

    // A file cut off in the middle (still being written, say) is an error naming it.
    let cut = dir.join("cut.libsvm.gz");
    std::fs::write(&cut, compressed.get(..compressed.len() / 2).unwrap()).unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", cut.to_str().unwrap(), "--out", "/dev/null"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("cut.libsvm.gz:") && stderr(&o).contains("read failed"), "{}", stderr(&o));
}

/// `--categorical NAME=A,B,…` gives a column's categories: their features come first, in
/// that order, and a row of another category is a bad row. `kestrel stream`, whose features
/// are fixed at its start, takes them so (and refuses a column without them): its
/// predictions and model are those of the same rows one-hot encoded by hand.
#[test]
fn categories_given_in_advance_fix_the_features() {
    let dir = Scratch::new("cli", "categories-given");
    let (mut named, mut encoded) = ("mode,t,y\n".to_string(), "t,mode=cool,mode=idle,mode=heat,y\n".to_string());
    for i in 0..400usize {
        let (mode, t) = (["idle", "heat", "cool"][i * 7 % 3], (i * 37 % 101) as f64 / 10.0);
        let y = (t / 3.0).sin() + [0.0, 1.0, -0.5][i * 7 % 3];
        named.push_str(&format!("{mode},{t},{y}\n"));
        let is = |m: &str| u8::from(m == mode);
        encoded.push_str(&format!("{t},{},{},{},{y}\n", is("cool"), is("idle"), is("heat")));
    }
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let (named, encoded) = (write("named.csv", &named), write("encoded.csv", &encoded));
    let given = ["--categorical", "mode=cool,idle,heat"];
    let run = |input: &str, extra: &[&str], tag: &str| {
        let (predictions, model) = (dir.join(format!("{tag}.out")), dir.join(format!("{tag}.kestrel")));
        let (predictions, model) = (predictions.to_str().unwrap(), model.to_str().unwrap());
        let stream = ["stream", "--learner", "slkl", "--input", input, "--output", predictions, "--out", model];
        let o = kestrel(&[&stream[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        (std::fs::read(predictions).unwrap(), std::fs::read(model).unwrap())
    };
    assert_eq!(run(&named, &given, "given"), run(&encoded, &[], "by-hand"));
    let o = kestrel(&["inspect", dir.join("given.kestrel").to_str().unwrap()]);
    assert!(stdout(&o).contains("t, mode=cool, mode=idle, mode=heat"), "{}", stdout(&o));
    let o = kestrel(&["stream", "--learner", "slkl", "--input", &named, "--categorical", "mode"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a stream's features are fixed at its start, give the column's categories"));
    // Another category: a bad row, skipped and told under --on-error skip.
    let o = kestrel(&[
        "stream",
        "--learner",
        "slkl",
        "--input",
        &named,
        "--categorical",
        "mode=idle,heat",
        "--on-error",
        "skip",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let bad = "named.csv:4:1: `cool` is not one of the categories given for column `mode` (--categorical)";
    assert!(stderr(&o).contains(bad), "{}", stderr(&o));
    // train takes them alike: the given order, and another category a bad row.
    let model = dir.join("train.kestrel").to_str().unwrap().to_string();
    let o = kestrel(&[
        "train",
        "--learner",
        "krr",
        "--input",
        &named,
        "--out",
        &model,
        "--categorical",
        "mode=heat,idle,cool",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&kestrel(&["inspect", &model])).contains("t, mode=heat, mode=idle, mode=cool"));
    // A category holding a comma is shown in backquotes among the names.
    let quoted = write("quoted.csv", "t,mode,y\n1,\"idle, quiet\",1\n2,heat,0\n3,\"idle, quiet\",1\n");
    let o = kestrel(&["train", "--learner", "svm", "--input", &quoted, "--out", &model, "--categorical", "mode"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&kestrel(&["inspect", &model])).contains("t, `mode=idle, quiet`, mode=heat"));
    let o = kestrel(&["train", "--learner", "krr", "--input", &named, "--out", &model, "--categorical", "mode=heat"]);
    assert!(
        o.status.code() == Some(1) && stderr(&o).contains("`idle` is not one of the categories given"),
        "{}",
        stderr(&o)
    );
}

/// `predict --decision`: each row's class, then its decision values — one for two classes,
/// whose sign gives the class standard error names, one per class beyond, whose largest
/// is the class; a bad row keeps its line of `NaN`s; a model without them is refused.
#[test]
fn decision_values_follow_each_class() {
    let dir = Scratch::new("cli", "decision");
    let (mut two, mut three) = ("x0,x1,y\n".to_string(), "x0,x1,y\n".to_string());
    for i in 0..90usize {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        two.push_str(&format!("{a},{b},{}\n", if a * a + b > 0.3 { "wet" } else { "dry" }));
        three.push_str(&format!("{a},{b},{}\n", ["low", "mid", "high"][usize::from(a > 0.0) + usize::from(b > 0.4)]));
    }
    two.push_str("0.5,oops,wet\n");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let (two, three) = (write("two.csv", &two), write("three.csv", &three));
    for (data, learner) in [(&two, "rsvm"), (&three, "rsvm"), (&two, "svm"), (&three, "svm")] {
        let model = dir.join(format!("{learner}.kestrel")).to_str().unwrap().to_string();
        let o = kestrel(&["train", "--learner", learner, "--input", data, "--out", &model, "--on-error", "skip"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = kestrel(&["predict", "--model", &model, "--input", data, "--decision", "--on-error", "skip"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (told, printed) = (stderr(&o), stdout(&o));
        let lines: Vec<Vec<&str>> = printed.lines().map(|line| line.split(',').collect()).collect();
        let classes: Vec<&str> = match told.split_once("decision values of the classes, in order: ") {
            Some((_, order)) => order.lines().next().unwrap().split(", ").collect(),
            None => {
                let (_, rest) = told.split_once("decision values: ≥ 0 for class ").expect(&told);
                let (positive, rest) = rest.split_once(", < 0 for class ").unwrap();
                vec![rest.lines().next().unwrap(), positive]
            }
        };
        let outputs = if classes.len() == 2 { 1 } else { classes.len() };
        let bad_rows = lines.iter().filter(|line| line[0] == "NaN").count();
        assert_eq!(bad_rows, usize::from(data == &two), "{learner}: the bad row keeps its line");
        for line in &lines {
            assert_eq!(line.len(), 1 + outputs, "{learner}: {line:?}");
            if line[0] == "NaN" {
                assert!(line.iter().all(|&v| v == "NaN"), "{line:?}");
                continue;
            }
            let values: Vec<f64> = line[1..].iter().map(|v| v.parse().unwrap()).collect();
            let class = match values.as_slice() {
                [value] => classes[usize::from(*value >= 0.0)],
                _ => classes[(0..outputs).max_by(|&a, &b| values[a].total_cmp(&values[b])).unwrap()],
            };
            assert_eq!(line[0], class, "{learner}: {line:?}");
        }
        let plain = kestrel(&["predict", "--model", &model, "--input", data, "--on-error", "skip"]);
        let classes_only: Vec<&str> = lines.iter().map(|line| line[0]).collect();
        assert_eq!(stdout(&plain).lines().collect::<Vec<_>>(), classes_only);
    }
    let regression = regression_csv(&dir, 40);
    let model = dir.join("krr.kestrel").to_str().unwrap().to_string();
    assert!(
        kestrel(&["train", "--learner", "krr", "--input", regression.to_str().unwrap(), "--out", &model])
            .status
            .success()
    );
    let o = kestrel(&["predict", "--model", &model, "--input", regression.to_str().unwrap(), "--decision"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--decision writes a classifier's decision values: "), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", &model, "--input", regression.to_str().unwrap(), "--decision", "--std"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// `train --probabilities`, then `predict --probabilities`: each row's class, then one
/// probability per class in the order standard error names, summing to 1 (a bad row keeps
/// its line of `NaN`s); `eval` scores their log loss, the mean of −ln of each row's own
/// class's; the file is version 5 with them and 4 without; a model without them, and a
/// learner that has no classes, are refused.
#[test]
fn class_probabilities_from_train_to_predict_and_eval() {
    let dir = Scratch::new("cli", "probabilities");
    let (mut two, mut three) = ("x0,x1,y\n".to_string(), "x0,x1,y\n".to_string());
    for i in 0..150usize {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        // A noisy boundary: every tenth row on the other side.
        let flip = i % 10 == 0;
        two.push_str(&format!("{a},{b},{}\n", if (a * a + b > 0.3) != flip { "wet" } else { "dry" }));
        three.push_str(&format!("{a},{b},{}\n", ["low", "mid", "high"][usize::from(a > 0.0) + usize::from(b > 0.4)]));
    }
    two.push_str("0.5,oops,wet\n");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let (two, three) = (write("two.csv", &two), write("three.csv", &three));
    for (data, learner) in [(&two, "rsvm"), (&three, "rsvm"), (&two, "svm"), (&three, "lssvm"), (&three, "mrrsvm")] {
        let model = dir.join(format!("{learner}.kestrel")).to_str().unwrap().to_string();
        let train = ["train", "--learner", learner, "--input", data, "--out", &model, "--on-error", "skip"];
        let o = kestrel(&[&train[..], &["--probabilities", "--partitions", "2"][..]].concat());
        assert!(o.status.success(), "{learner}: {}", stderr(&o));
        let bytes = std::fs::read(&model).unwrap();
        assert_eq!(&bytes[4..6], &[5, 0], "{learner}: a model with class probabilities is version 5");
        assert_eq!(json(&kestrel(&["inspect", &model, "--json"]))["probabilities"], true);
        assert!(stdout(&kestrel(&["inspect", &model])).contains(", with class probabilities, "), "{learner}");
        let o = kestrel(&["predict", "--model", &model, "--input", data, "--probabilities", "--on-error", "skip"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let told = stderr(&o);
        let (_, order) = told.split_once("class probabilities, in order: ").expect(&told);
        let classes: Vec<&str> = order.lines().next().unwrap().split(", ").collect();
        let printed = stdout(&o);
        let lines: Vec<Vec<&str>> = printed.lines().map(|line| line.split(',').collect()).collect();
        let text = std::fs::read_to_string(data).unwrap();
        let truth: Vec<&str> = text.lines().skip(1).map(|l| l.rsplit(',').next().unwrap()).collect();
        assert_eq!(lines.len(), truth.len());
        let (mut loss, mut rows) = (0.0, 0);
        for (line, label) in lines.iter().zip(&truth) {
            assert_eq!(line.len(), 1 + classes.len(), "{learner}: {line:?}");
            if line[0] == "NaN" {
                assert!(line.iter().all(|&v| v == "NaN"), "{line:?}");
                continue;
            }
            let p: Vec<f64> = line[1..].iter().map(|v| v.parse().unwrap()).collect();
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9 && p.iter().all(|&p| p > 0.0), "{learner}: {line:?}");
            let own = classes.iter().position(|c| c == label).unwrap();
            loss -= p[own].ln();
            rows += 1;
        }
        assert_eq!(rows, 150, "{learner}: the bad row alone is left out");
        let o = kestrel(&["eval", "--model", &model, "--input", data, "--on-error", "skip", "--json"]);
        let eval_loss = json(&o)["log_loss"].as_f64().unwrap_or_else(|| panic!("{}", stdout(&o)));
        assert!((eval_loss - loss / rows as f64).abs() < 1e-9, "{learner}: {eval_loss} against {}", loss / rows as f64);
        // Better than knowing nothing: the uniform distribution's loss is ln K.
        assert!(eval_loss < 0.7 * (classes.len() as f64).ln(), "{learner}: log loss {eval_loss}");
        let o = kestrel(&["eval", "--model", &model, "--input", data, "--on-error", "skip"]);
        assert!(stdout(&o).contains("; log loss "), "{}", stdout(&o));
        // Without the flag: version 4, no log loss, and predict --probabilities refused.
        let o = kestrel(&[&train[..], &["--partitions", "2"][..]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(&std::fs::read(&model).unwrap()[4..6], &[4, 0], "{learner}");
        let o = kestrel(&["eval", "--model", &model, "--input", data, "--on-error", "skip", "--json"]);
        assert!(json(&o).get("log_loss").is_none(), "{}", stdout(&o));
        let o = kestrel(&["predict", "--model", &model, "--input", data, "--probabilities", "--on-error", "skip"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("was trained without class probabilities: `kestrel train --probabilities`"));
    }
    let regression = regression_csv(&dir, 40);
    let model = dir.join("krr.kestrel").to_str().unwrap().to_string();
    let o = kestrel(&[
        "train",
        "--learner",
        "krr",
        "--input",
        regression.to_str().unwrap(),
        "--out",
        &model,
        "--probabilities",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--probabilities is for the classifiers of decision values"), "{}", stderr(&o));
    assert!(
        kestrel(&["train", "--learner", "krr", "--input", regression.to_str().unwrap(), "--out", &model])
            .status
            .success()
    );
    let o = kestrel(&["predict", "--model", &model, "--input", regression.to_str().unwrap(), "--probabilities"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--probabilities writes a classifier's class probabilities: "), "{}", stderr(&o));
}

/// `stream --probabilities`: each --output line is the prediction and the probability the
/// learner gave it (`NaN,NaN` for a bad row; `NaN` before the first label), and the
/// summary's log loss is the mean of −ln of the probability of each row's own class —
/// for two classes the line's own when the prediction was right, one minus it when not,
/// 0 (counted as 10⁻¹⁵) where the learner had not met the class yet. A regressor is told
/// the flag is not its own.
#[test]
fn stream_writes_the_probability_of_each_prediction() {
    let dir = Scratch::new("cli", "stream-probabilities");
    let mut text = "x0,x1,y\n".to_string();
    let mut labels = Vec::new();
    for i in 0..600usize {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        let label = if (a + 0.5 * b > 0.1) != (i % 9 == 0) { "on" } else { "off" };
        text.push_str(&format!("{a},{b},{label}\n"));
        labels.push(label);
        if i == 300 {
            text.push_str("0.1,oops,on\n");
            labels.push("");
        }
    }
    let input = write_in(&dir, "rows.csv", &text);
    let output = dir.join("out.csv");
    for learner in ["rsvm", "svm"] {
        let o = kestrel(&[
            "stream",
            "--learner",
            learner,
            "--input",
            &input,
            "--output",
            output.to_str().unwrap(),
            "--probabilities",
            "--on-error",
            "skip",
            "--json",
            "--report-every",
            "0",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = json(&o);
        let written = std::fs::read_to_string(&output).unwrap();
        let lines: Vec<(&str, f64)> = written
            .lines()
            .map(|line| line.split_once(',').map(|(class, p)| (class, p.parse().unwrap())).unwrap())
            .collect();
        assert_eq!(lines.len(), labels.len());
        let mut loss = 0.0;
        for (&(prediction, p), &label) in lines.iter().zip(&labels) {
            if label.is_empty() {
                assert_eq!(prediction, "NaN", "the bad row's line");
                assert!(p.is_nan());
                continue;
            }
            let own = match prediction {
                "NaN" => 0.0,
                _ if prediction == label => p,
                _ => 1.0 - p,
            };
            assert!(prediction == "NaN" || (0.0..=1.0).contains(&p), "{learner}: {prediction},{p}");
            loss -= own.max(1e-15).ln();
        }
        let n = summary["n"].as_f64().unwrap();
        let expected = loss / n;
        let log_loss = summary["log_loss"].as_f64().unwrap();
        assert!((log_loss - expected).abs() < 1e-9 * expected, "{learner}: {log_loss} against {expected}");
        // Better than a coin's ln 2, two classes met anew (−ln 10⁻¹⁵ each) included.
        assert!(log_loss < 2f64.ln(), "{learner}: {summary}");
    }
    let regression = regression_csv(&dir, 40);
    let o = kestrel(&[
        "stream",
        "--learner",
        "slkl",
        "--input",
        regression.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
        "--probabilities",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--probabilities"), "{}", stderr(&o));
}

/// `train --categorical`: the model equals the one trained on the same rows one-hot
/// encoded by hand (numeric features first, then a 0/1 column `column=category` for each
/// category in order of first appearance); `predict` reads the column again in any order
/// of the columns, a category the model did not learn as none of them; what is not a
/// column of categories is refused by name.
#[test]
fn columns_of_categories_are_one_hot_encoded() {
    let dir = Scratch::new("cli", "categorical");
    let (modes, sites) = (["idle", "heat", "cool"], ["north", "south"]);
    let rows: Vec<(&str, f64, &str, f64)> = (0..60usize)
        .map(|i| {
            let (mode, site, t) = (modes[i * 7 % 3], sites[i * 5 % 2], (i * 37 % 101) as f64 / 50.0 - 1.0);
            let y = t * t + [0.0, 1.0, -0.5][i * 7 % 3] + [0.25, -0.25][i * 5 % 2];
            (mode, t, site, y)
        })
        .collect();
    let mut categories: Vec<String> = Vec::new();
    for &(mode, _, site, _) in &rows {
        for category in [format!("mode={mode}"), format!("site={site}")] {
            if !categories.contains(&category) {
                categories.push(category);
            }
        }
    }
    let (mut named, mut encoded) = ("mode,t,site,y\n".to_string(), format!("t,{},y\n", categories.join(",")));
    for &(mode, t, site, y) in &rows {
        named.push_str(&format!("{mode},{t},{site},{y}\n"));
        let is = |c: &String| if *c == format!("mode={mode}") || *c == format!("site={site}") { "1" } else { "0" };
        let indicators: Vec<&str> = categories.iter().map(is).collect();
        encoded.push_str(&format!("{t},{},{y}\n", indicators.join(",")));
    }
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let (named, encoded) = (write("named.csv", &named), write("encoded.csv", &encoded));
    let settings = ["--learner", "krr", "--gamma", "0.5", "--lambda", "0.01", "--centers", "64"];
    let train = |input: &str, extra: &[&str], out: &str| {
        let out = dir.join(out).to_str().unwrap().to_string();
        let o = kestrel(&[&["train", "--input", input, "--out", &out], &settings[..], extra].concat());
        (out, o)
    };
    let (by_flag, o) = train(&named, &["--categorical", "site", "--categorical", "mode"], "flag.kestrel");
    assert!(o.status.success(), "{}", stderr(&o));
    let (by_hand, o) = train(&encoded, &[], "hand.kestrel");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&by_flag).unwrap(), std::fs::read(&by_hand).unwrap());
    let o = kestrel(&["inspect", &by_flag]);
    assert!(stdout(&o).contains("t, mode=idle, site=north, mode=heat, site=south, mode=cool"), "{}", stdout(&o));

    // Rows to predict: columns reversed, a category never seen (`off`) in the third.
    let mut reversed = "y,site,t,mode\n".to_string();
    let mut hand_lines: Vec<String> = std::fs::read_to_string(&encoded).unwrap().lines().map(String::from).collect();
    for (i, &(mode, t, site, y)) in rows.iter().enumerate().take(6) {
        let mode = if i == 2 { "off" } else { mode };
        reversed.push_str(&format!("{y},{site},{t},{mode}\n"));
        if i == 2 {
            let fields: Vec<String> = hand_lines[3]
                .split(',')
                .zip(std::iter::once("t").chain(categories.iter().map(String::as_str)).chain(["y"]))
                .map(|(value, column)| if column.starts_with("mode=") { "0".into() } else { value.to_string() })
                .collect();
            hand_lines[3] = fields.join(",");
        }
    }
    let (reversed, hand_rows) =
        (write("reversed.csv", &reversed), write("hand_rows.csv", &(hand_lines[..7].join("\n") + "\n")));
    let o = kestrel(&["predict", "--model", &by_flag, "--input", &reversed, "--label-column", "y"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let note = "1 row holds a category the model did not learn (the first: `off` in column `mode`)";
    assert!(stderr(&o).contains(note) && !stderr(&o).contains("another order"), "{}", stderr(&o));
    let expected = kestrel(&["predict", "--model", &by_hand, "--input", &hand_rows]);
    assert_eq!(stdout(&o), stdout(&expected));
    assert_eq!(stdout(&o).lines().count(), 6);

    // tune keeps the flags in its best line.
    let o = kestrel(&["tune", "--learner", "krr", "--input", &named, "--categorical", "mode", "--categorical", "site"]);
    assert!(
        stdout(&o).contains("best: kestrel train --learner krr --scale off --categorical mode --categorical site"),
        "{}",
        stdout(&o)
    );

    let refused = |input: &str, extra: &[&str], message: &str| {
        let o = kestrel(&[&["train", "--input", input, "--out", "/dev/null"], &settings[..], extra].concat());
        assert!(o.status.code() == Some(1) && stderr(&o).contains(message), "{message}: {}", stderr(&o));
    };
    refused(
        &named,
        &[],
        "`idle` is not a number (column `mode`; a column that is not a feature can be left out: --skip-column mode; --categorical mode reads it as a column of categories: train, tune, stream, cluster, npkl, transform)",
    );
    refused(&named, &["--categorical", "kind"], "no column named `kind` for --categorical in the header");
    refused(&named, &["--categorical", "y"], "`y` is the label column, not a feature");
    let libsvm = write("rows.libsvm", "1 1:0.5\n-1 1:2\n");
    refused(
        &libsvm,
        &["--categorical", "mode"],
        "columns of categories are named in a CSV header: this input has none",
    );
    // An identifier taken for categories: told before the fit.
    let ids: String = (0..150).map(|i| format!("u{i},{},{}\n", i % 7, i % 5)).collect();
    let (_, o) = train(&write("ids.csv", &format!("id,x,y\n{ids}")), &["--categorical", "id"], "ids.kestrel");
    let note = "column `id` holds 150 categories in 150 rows, a feature each: an identifier or a time stamp is better \
                left out (--skip-column id)";
    assert!(o.status.success() && stderr(&o).contains(note), "{}", stderr(&o));
    // A target a spreadsheet wrote with thousands separators: read as class names, and told.
    let prices: String = (0..30).map(|i| format!("{i},{},\"{},{:03}\"\n", i % 4, 100 + i * 7, i * 13 % 1000)).collect();
    let prices = write("prices.csv", &format!("size,rooms,price\n{prices}"));
    let o = kestrel(&["train", "--input", &prices, "--out", dir.join("prices.kestrel").to_str().unwrap()]);
    let note = "the labels are read as 30 class names, and `100,000` is a number written with a thousands separator";
    assert!(o.status.success() && stderr(&o).contains(note), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", &by_flag, "--input", &write("no_mode.csv", "t,site,y\n0.5,north,1\n")]);
    let message = "no column named `mode=idle`, a feature of the model (its columns: `t`, `site`, `y`); or a column `mode` of categories, one of them";
    assert!(o.status.code() == Some(1) && stderr(&o).contains(message), "{}", stderr(&o));
}

/// `train --weight-column`: a row of weight k counts as k copies of it (kernel ridge with
/// every row a centre gives, to rounding, the model of the repeated rows), a row of weight
/// 0 is left out, and what cannot weigh rows is refused by name.
#[test]
fn a_weight_column_weighs_the_rows() {
    let dir = Scratch::new("cli", "weights");
    let (mut weighted, mut repeated, mut zeros) =
        ("x0,x1,w,y\n".to_string(), "x0,x1,y\n".to_string(), "x0,x1,w,y\n".to_string());
    for i in 0..40usize {
        let (a, b) = ((i * 37 % 101) as f64 / 50.0 - 1.0, (i * 53 % 97) as f64 / 48.0 - 1.0);
        let (y, k) = ((3.0 * a).sin() + b * b, 1 + i % 3);
        weighted.push_str(&format!("{a},{b},{k},{y}\n"));
        zeros.push_str(&format!("{a},{b},1,{y}\n"));
        repeated.push_str(&format!("{a},{b},{y}\n").repeat(k));
    }
    zeros.push_str("0.5,0.5,0,100\n-0.5,0.25,0,-100\n");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let (weighted, repeated, zeros) =
        (write("weighted.csv", &weighted), write("repeated.csv", &repeated), write("zeros.csv", &zeros));
    let settings = ["--learner", "krr", "--gamma", "1", "--lambda", "0.1", "--centers", "64"];
    let train = |input: &str, weights: &[&str], out: &str| {
        let out = dir.join(out).to_str().unwrap().to_string();
        let o = kestrel(&[&["train", "--input", input, "--out", &out], &settings[..], weights].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let predict = |model: &str| -> Vec<f64> {
        let o = kestrel(&["predict", "--model", model, "--input", &repeated]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().map(|l| l.parse().unwrap()).collect()
    };
    let by_weight = predict(&train(&weighted, &["--weight-column", "w"], "weighted.kestrel"));
    let by_copies = predict(&train(&repeated, &[], "repeated.kestrel"));
    let unweighted = predict(&train(&weighted, &["--skip-column", "w"], "unweighted.kestrel"));
    let gap = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert!(gap(&by_weight, &by_copies) < 1e-3, "{}", gap(&by_weight, &by_copies));
    assert!(gap(&unweighted, &by_copies) > 30.0 * gap(&by_weight, &by_copies), "{}", gap(&unweighted, &by_copies));
    // tune weighs its candidates' fits and scores alike, and its best line keeps the flag.
    // (`--scale auto` compares krr's rows and keeps them as they come; it standardises the
    // linear SVM's by rule.)
    for (learner, criterion, grid, scale) in [
        ("krr", "weighted leave-one-out", "--gamma-grid", " --scale off"),
        ("svm", "weighted 5-fold", "--c-grid", " --scale"),
    ] {
        let tune = ["tune", "--learner", learner, "--input", &weighted, "--weight-column", "w", grid, "0.5,1"];
        let o = kestrel(&[&tune[..], &["--json"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(json(&o)["criterion"], criterion, "{learner}");
        let o = kestrel(&tune);
        let best = format!("best: kestrel train --learner {learner}{scale} --weight-column w");
        assert!(stdout(&o).contains(&best), "{learner}: {}", stdout(&o));
    }
    let with_zeros = train(&zeros, &["--weight-column", "w"], "zeros.kestrel");
    let plain = train(&weighted, &["--skip-column", "w"], "plain.kestrel");
    assert_eq!(std::fs::read(with_zeros).unwrap(), std::fs::read(&plain).unwrap(), "rows of weight 0 are left out");

    // eval --weight-column scores the weighted rows as their copies, unweighted; rows of
    // weight 0 are left out; a detector's scores do not weigh.
    let eval = |model: &str, input: &str, extra: &[&str]| {
        let o = kestrel(&[&["eval", "--model", model, "--input", input, "--json"], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        json(&o)
    };
    let (by_weight, by_copies) = (eval(&plain, &weighted, &["--weight-column", "w"]), eval(&plain, &repeated, &[]));
    for score in ["mse", "mae", "r2"] {
        let (a, b) = (by_weight[score].as_f64().unwrap(), by_copies[score].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-12 * b.abs(), "{score}: {a} against {b}");
    }
    assert_eq!((by_weight["n"].as_u64(), by_weight["weight_column"].as_str()), (Some(40), Some("w")));
    assert_eq!(eval(&plain, &zeros, &["--weight-column", "w"])["n"].as_u64(), Some(40));
    let signs = |text: &str| {
        let mut lines = text.lines();
        let header = lines.next().unwrap().to_string();
        let rows = lines.map(|line| {
            let (row, y) = line.rsplit_once(',').unwrap();
            format!("{row},{}", if y.parse::<f64>().unwrap() > 0.5 { "up" } else { "down" })
        });
        std::iter::once(header).chain(rows).collect::<Vec<_>>().join("\n") + "\n"
    };
    let read = |path: &str| std::fs::read_to_string(path).unwrap();
    let (classes, class_copies) =
        (write("classes.csv", &signs(&read(&weighted))), write("class_copies.csv", &signs(&read(&repeated))));
    let classifier = dir.join("classifier.kestrel").to_str().unwrap().to_string();
    let o = kestrel(&["train", "--learner", "svm", "--input", &classes, "--skip-column", "w", "--out", &classifier]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (by_weight, by_copies) =
        (eval(&classifier, &classes, &["--weight-column", "w"]), eval(&classifier, &class_copies, &[]));
    for score in ["accuracy", "balanced_accuracy"] {
        let (a, b) = (by_weight[score].as_f64().unwrap(), by_copies[score].as_f64().unwrap());
        assert!((a - b).abs() <= 1e-12, "{score}: {a} against {b}");
    }
    assert_eq!(by_weight["recall"], by_copies["recall"]);
    let unweighed = eval(&classifier, &classes, &["--skip-column", "w"]);
    assert_ne!(unweighed["accuracy"], by_weight["accuracy"], "the weights change the score here");
    let detector = dir.join("detector.kestrel").to_str().unwrap().to_string();
    let o = kestrel(&["train", "--learner", "novelty", "--input", &weighted, "--skip-column", "w", "--out", &detector]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["eval", "--model", &detector, "--input", &weighted, "--weight-column", "w"]);
    assert!(
        o.status.code() == Some(2) && stderr(&o).contains("--weight-column weighs a classifier's"),
        "{}",
        stderr(&o)
    );

    let refused = |input: &str, extra: &[&str], message: &str| {
        let o = kestrel(&[&["train", "--input", input, "--out", "/dev/null"], &settings[..], extra].concat());
        assert!(o.status.code() == Some(1) && stderr(&o).contains(message), "{message}: {}", stderr(&o));
    };
    refused(&weighted, &["--weight-column", "v"], "no column named `v` for the row weights in the header");
    refused(&weighted, &["--weight-column", "y"], "`y` is the label column: it cannot weigh the rows");
    let negative = write("negative.csv", "x0,x1,w,y\n1,2,1,0.5\n2,1,-1,0.25\n");
    refused(&negative, &["--weight-column", "w"], "negative.csv:3:5: `-1` is not a row weight (column `w`");
    let libsvm = binary_libsvm(&dir, 20);
    refused(
        libsvm.to_str().unwrap(),
        &["--weight-column", "w"],
        "a weight column is read by its name in a CSV header: this input has none",
    );
    let o =
        kestrel(&["train", "--learner", "slkl", "--input", &weighted, "--weight-column", "w", "--out", "/dev/null"]);
    assert!(
        o.status.code() == Some(2) && stderr(&o).contains("row weights are for svm, rsvm, lssvm, krr, ssvr and mrrsvm"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn budget_reports_and_fits() {
    let any =
        ["budget", "--learner", "svm", "--dim", "16", "--window", "1000", "--scalar", "f32", "--memory", "0", "--json"];
    let svm = [&any[..], &["--classes", "2"]].concat();
    // The core's window N(d + 3) + d + 1 and the scaler's 4d; on the host two dense rows
    // of d and the scaler's undo copy.
    let device = kestrel(&[&svm[..], &["--target", "cortex-m"]].concat());
    assert_eq!(json(&device)["bytes"].as_u64(), Some(((1000 * (16 + 3) + 16 + 1 + 4 * 16) * 4) as u64));
    let unscaled = kestrel(&[&svm[..], &["--target", "cortex-m", "--no-scale"]].concat());
    assert_eq!(json(&unscaled)["bytes"].as_u64(), Some(((1000 * (16 + 3) + 16 + 1) * 4) as u64));
    // Three classes and more are one-vs-rest over one window: its rows, squared norms and
    // classes once, each class its α and weights, and its pass (three scalars and four
    // indices, 4 bytes each on a Cortex-M); the default allows 16.
    let four = kestrel(&[&any[..], &["--target", "cortex-m", "--no-scale", "--classes", "4"]].concat());
    let one_vs_rest = |k: usize| ((1000 * (16 + 2) + k * (1000 + 16 + 1 + 3 + 4)) * 4) as u64;
    assert_eq!(json(&four)["bytes"].as_u64(), Some(one_vs_rest(4)));
    // What a C program allocates for the C library's object (its value is checked against
    // the C demo's arrays, sized by kestrel.h's macros, in firmware-demo-c/run-tests.sh):
    // the binary SVM's on a Cortex-M in f32, more than the learner's state (its handle and
    // its saved model's room); nothing for four classes, nor on the host.
    let c = &json(&unscaled)["c"];
    assert_eq!((c["object"].as_str(), c["scaler_work_bytes"].as_u64()), (Some("kestrel_svm"), None));
    assert!(c["work_bytes"].as_u64() > json(&unscaled)["bytes"].as_u64(), "{c}");
    // The scaler: KESTREL_SCALER_WORK_BYTES(16), its 64-byte handle and 4d floats.
    assert_eq!(json(&device)["c"]["scaler_work_bytes"].as_u64(), Some(64 + 4 * 16 * 4));
    // Four classes on a device are a kestrel_multiclass: the same learner, and its records.
    let c = &json(&four)["c"];
    assert_eq!(c["object"].as_str(), Some("kestrel_multiclass"), "{c}");
    assert!(c["work_bytes"].as_u64() > json(&four)["bytes"].as_u64(), "{c}");
    assert!(json(&kestrel(&svm)).get("c").is_none(), "nothing on the host");
    let default = kestrel(&[&any[..], &["--target", "cortex-m", "--no-scale"]].concat());
    assert_eq!(json(&default)["bytes"].as_u64(), Some(one_vs_rest(16)));
    // `--memory` above 0 (stream's default) keeps d + 1 scalars more per window.
    let remembering = kestrel(&[
        "budget",
        "--learner",
        "svm",
        "--dim",
        "16",
        "--window",
        "1000",
        "--scalar",
        "f32",
        "--classes",
        "2",
        "--target",
        "cortex-m",
        "--no-scale",
        "--json",
    ]);
    assert_eq!(json(&remembering)["bytes"].as_u64(), Some(((1000 * (16 + 3) + 2 * (16 + 1)) * 4) as u64));
    // On the host also the class probabilities: two classes' sigmoid (five f64) and counts.
    let probabilities = (5 + 2) * 8;
    let bytes = json(&kestrel(&[&svm[..], &["--no-race"]].concat()))["bytes"].as_u64().unwrap();
    assert_eq!(bytes, (1000 * (16 + 3) + 16 + 1 + 4 * 16 + 2 * 16 + 4 * 16) * 4 + probabilities);
    // Without --c a stream races three costs through its first window: the host holds
    // three learners, which the count says, and one stream's probabilities.
    assert_eq!(json(&kestrel(&svm))["bytes"].as_u64(), Some(3 * (bytes - probabilities) + probabilities));
    let o = kestrel(&[&svm[..3], &["--dim", "16", "--scalar", "f32", "--classes", "2"]].concat());
    assert!(stderr(&o).contains("3 costs raced through the first window (stream without --c"), "{}", stderr(&o));
    let o = kestrel(&[
        "budget",
        "--learner",
        "svm",
        "--dim",
        "16",
        "--scalar",
        "f32",
        "--classes",
        "2",
        "--memory",
        "0",
        "--no-race",
        "--fit",
        &bytes.to_string(),
        "--json",
    ]);
    assert_eq!(json(&o)["window"].as_u64(), Some(1000));
    let o = kestrel(&[
        "budget",
        "--learner",
        "slkl",
        "--dim",
        "3",
        "--window",
        "128",
        "--centers",
        "32",
        "--target",
        "cortex-m",
    ]);
    assert!(o.status.success() && stdout(&o).starts_with("bytes: "));
    // The terminal is told what was counted, the defaults included.
    let counted = "kestrel: counted: slkl on 3 features, a window of 128, 32 centres, the scaler; f64 on a Cortex-M";
    assert!(stderr(&o).contains(counted), "{}", stderr(&o));
    let o = kestrel(&["budget", "--learner", "rsvm", "--dim", "3"]);
    let counted = "rsvm on 3 features, a window of 256, 32 centres, up to 16 classes, one window shared";
    assert!(o.status.success() && stderr(&o).contains(counted), "{}", stderr(&o));
    // Unless told, the window and the centres are `kestrel stream`'s (256 and 32; the
    // novelty detector's 48 and 16).
    for (learner, window, centers) in [("slkl", "256", "32"), ("rsvm", "256", "32"), ("novelty", "48", "16")] {
        let base = ["budget", "--learner", learner, "--dim", "3", "--scalar", "f32", "--target", "cortex-m", "--json"];
        let told = kestrel(&[&base[..], &["--window", window, "--centers", centers]].concat());
        assert_eq!(json(&kestrel(&base))["bytes"], json(&told)["bytes"], "{learner}");
    }
    // A budget below a window of one sample says so, and what needs less.
    let o = kestrel(&["budget", "--learner", "slkl", "--dim", "6", "--scalar", "f32", "--fit", "1KiB"]);
    let message = "no window fits --fit 1024 bytes: a window of one sample already takes";
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // On the host a stream without --nu races three values of ν: the count says so.
    let fewer = "(fewer --centers need less; it counts the three learners of a stream racing its values of nu (--nu \
                 learns one), --no-race one)";
    assert!(stderr(&o).contains(message) && stderr(&o).contains(fewer), "{}", stderr(&o));
    let o = kestrel(&["budget", "--learner", "slkl", "--dim", "6", "--scalar", "f32", "--no-race", "--fit", "1KiB"]);
    assert!(stderr(&o).contains("(fewer --centers need less)"), "{}", stderr(&o));
}

#[test]
fn npkl_learns_a_kernel_from_pairs_and_clusters() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/iris/train.csv");
    let dir = Scratch::new("cli", "npkl");
    let output = dir.join("clusters.csv");
    let o = kestrel(&[
        "npkl",
        "--input",
        data,
        "--constraints-from-labels",
        "0.6",
        "--loss",
        "square",
        "--clusters",
        "3",
        "--seed",
        "2",
        "--json",
        "--output",
        output.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert!(summary["rand"].as_f64().unwrap() > 0.9, "{summary}");
    assert_eq!(std::fs::read_to_string(&output).unwrap().lines().filter(|l| !l.starts_with("row")).count(), 112);
    let pairs = dir.join("pairs.txt");
    std::fs::write(&pairs, "0 1 must\n1 1 cannot\n").unwrap();
    let o = kestrel(&[
        "npkl",
        "--input",
        data,
        "--constraints",
        pairs.to_str().unwrap(),
        "--loss",
        "hinge",
        "--clusters",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("pairs.txt: line 2: a point cannot be paired with itself"), "{}", stderr(&o));
}

/// Standardised (`--scale`), the indicators of a column of categories keep their 0/1: the
/// model predicts as one trained on the numeric feature standardised by hand beside the
/// raw indicators, not as one whose indicators were standardised too (a rare category
/// would take the value 4); and the rows of categories are not too sparse for `--scale
/// auto` to compare.
#[test]
fn standardisation_leaves_the_indicators_as_they_come() {
    let dir = Scratch::new("cli", "categorical-scale");
    let modes = ["idle", "idle", "heat", "idle", "cool", "idle", "heat", "idle", "idle", "idle", "idle", "idle"];
    let rows: Vec<(f64, &str, f64)> = (0..96usize)
        .map(|i| {
            let (t, mode) = (500.0 + 100.0 * ((i * 37 % 101) as f64 / 50.0 - 1.0), modes[i % modes.len()]);
            let y = ((t - 500.0) / 100.0).powi(2) + if mode == "cool" { 1.0 } else { 0.0 };
            (t, mode, y)
        })
        .collect();
    let n = rows.len() as f64;
    let mean = rows.iter().map(|r| r.0).sum::<f64>() / n;
    let sd = (rows.iter().map(|r| (r.0 - mean).powi(2)).sum::<f64>() / n).sqrt();
    let share = |mode: &str| rows.iter().filter(|r| r.1 == mode).count() as f64 / n;
    let (mut named, mut raw, mut standardised) =
        ("t,mode,y\n".to_string(), "t,idle,heat,cool,y\n".to_string(), "t,idle,heat,cool,y\n".to_string());
    for &(t, mode, y) in &rows {
        named.push_str(&format!("{t},{mode},{y}\n"));
        let is = |m: &str| f64::from(u8::from(mode == m));
        let t = (t - mean) / sd;
        let [idle, heat, cool] = ["idle", "heat", "cool"].map(is);
        raw.push_str(&format!("{t},{idle},{heat},{cool},{y}\n"));
        let z = |m: &str| (is(m) - share(m)) / (share(m) * (1.0 - share(m))).sqrt();
        standardised.push_str(&format!("{t},{},{},{},{y}\n", z("idle"), z("heat"), z("cool")));
    }
    // Random centres: the same rows on both sides, whatever the rounding of near ties.
    let settings = ["--learner", "krr", "--gamma", "0.5", "--lambda", "0.01", "--centers", "32", "--select", "random"];
    let fit_predict = |text: &str, name: &str, extra: &[&str]| -> Vec<f64> {
        let (input, model) = (dir.join(format!("{name}.csv")), dir.join(format!("{name}.kestrel")));
        std::fs::write(&input, text).unwrap();
        let (input, model) = (input.to_str().unwrap(), model.to_str().unwrap());
        let o = kestrel(&[&["train", "--input", input, "--out", model], &settings[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let o = kestrel(&["predict", "--model", model, "--input", input]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o).lines().map(|line| line.parse().unwrap()).collect()
    };
    let by_flag = fit_predict(&named, "named", &["--categorical", "mode", "--scale"]);
    let by_hand = fit_predict(&raw, "raw", &["--scale", "off"]);
    let all_standardised = fit_predict(&standardised, "standardised", &["--scale", "off"]);
    let gap = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert_eq!(by_flag.len(), rows.len());
    assert!(gap(&by_flag, &by_hand) < 1e-8, "{}", gap(&by_flag, &by_hand));
    assert!(gap(&by_flag, &all_standardised) > 1e-3, "{}", gap(&by_flag, &all_standardised));
    // A column of twelve categories: a row stores 2 of 13 values, yet the standardised copy
    // keeps the indicators' zeros, so --scale auto compares.
    let mut sites = "t,site,y\n".to_string();
    for (i, &(t, _, y)) in rows.iter().enumerate() {
        sites.push_str(&format!("{t},s{},{y}\n", i % 12));
    }
    let input = dir.join("sites.csv");
    std::fs::write(&input, sites).unwrap();
    let (input, model) = (input.to_str().unwrap(), dir.join("sites.kestrel"));
    let args = ["train", "--learner", "krr", "--categorical", "site", "--input", input, "--json", "--out"];
    let o = kestrel(&[&args[..], &[model.to_str().unwrap()]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(json(&o)["scaling"]["loo"].is_object(), "{}", json(&o));
}

/// `cluster` and `npkl` read a column of categories one-hot (`--categorical`): rows that
/// differ only by their mode cluster by it, which the numeric columns alone cannot do; and
/// `npkl`'s loss defaults to hinge, as `cluster --method npkl`'s.
#[test]
fn cluster_and_npkl_read_a_column_of_categories() {
    let dir = Scratch::new("cli", "cluster-categories");
    let input = dir.join("modes.csv");
    let mut rng = kestrel_core::Rng::seed_from_u64(4);
    let mut text = String::from("t,h,mode,label\n");
    for i in 0..150 {
        let (t, h) = (0.05 * rng.normal::<f64>(), 0.05 * rng.normal::<f64>());
        text += &format!("{t},{h},{},{}\n", ["heat", "cool", "idle"][i % 3], i % 3);
    }
    std::fs::write(&input, text).unwrap();
    let input = input.to_str().unwrap();
    let rand = |args: &[&str]| {
        let o = kestrel(&[args, &["--input", input, "--clusters", "3", "--json"]].concat());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        json(&o)["rand"].as_f64().unwrap()
    };
    assert_eq!(rand(&["cluster", "--categorical", "mode"]), 1.0);
    assert_eq!(rand(&["npkl", "--categorical", "mode=heat,cool,idle", "--constraints-from-labels", "0.2"]), 1.0);
    assert!(rand(&["cluster", "--skip-column", "mode"]) < 0.8, "the numeric columns alone do not hold the modes");
    let o = kestrel(&["cluster", "--input", input, "--clusters", "3"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--categorical mode reads it as a column of categories"), "{}", stderr(&o));
}

#[test]
fn a_feature_beyond_the_model_dimension_is_an_error_naming_the_line() {
    let dir = Scratch::new("cli", "beyond");
    let data = binary_libsvm(&dir, 50);
    let model = dir.join("m.kestrel");
    assert!(
        kestrel(&["train", "--learner", "svm", "--input", data.to_str().unwrap(), "--out", model.to_str().unwrap()])
            .status
            .success()
    );
    let wide = dir.join("wide.libsvm");
    std::fs::write(&wide, "1 1:0.5 2:0.1\n-1 1:0.2 7:1.0\n").unwrap();
    let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", wide.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("wide.libsvm:2"), "{}", stderr(&o));
    let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", wide.to_str().unwrap(), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("wide.libsvm:2"), "{}", stderr(&o));
}

/// `train --scale` on raw features learns what `train` learns on the same rows
/// standardised beforehand (the data set's standardised copy uses the training mean and
/// population deviation, as the scaler does), and `predict` applies the model's scaler;
/// `stream` saves its scaler in the model unless `--no-scale`.
#[test]
fn scaling_is_carried_by_the_model_file() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/breast_cancer");
    let dir = Scratch::new("cli", "scaling");
    let accuracy = |train: &str, test: &str, scale: &[&str]| {
        let model = dir.join("model.kestrel");
        let input = format!("{data}/{train}");
        let o = kestrel(
            &[&["train", "--learner", "svm", "--input", &input, "--out", model.to_str().unwrap()], scale].concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
        assert_eq!(info["scaled"].as_bool(), Some(scale == ["--scale"]));
        let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", &format!("{data}/{test}"), "--json"]);
        json(&o)["accuracy"].as_f64().unwrap()
    };
    let standardised = accuracy("train.csv", "test.csv", &[]);
    let scaled = accuracy("train_raw.csv", "test_raw.csv", &["--scale"]);
    let raw = accuracy("train_raw.csv", "test_raw.csv", &["--scale", "off"]);
    assert_eq!(scaled, standardised);
    assert!(scaled > raw + 0.03, "scaled {scaled}, raw {raw}");
    // --budget counts the standardised copy beside the rows: the copy of breast_cancer's
    // 426 × 30 rows is dense, 427 offsets of 8 bytes, 12,780 values of 8 and indices of 4,
    // 426 labels of 8: 160,184 bytes; the rows as read omit their zeros, so they take a
    // little less. 250 kB holds the rows and the linear SVM's solver (11 kB), not the rows
    // and their copy.
    let model = dir.join("budget.kestrel");
    let train = |extra: &[&str]| {
        let (input, model) = (format!("{data}/train_raw.csv"), model.to_str().unwrap());
        let args = ["train", "--learner", "svm", "--input", &input, "--out", model, "--budget", "250000"];
        kestrel(&[&args[..], extra].concat())
    };
    assert!(train(&[]).status.success(), "{}", stderr(&train(&[])));
    let o = train(&["--scale"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let message = stderr(&o);
    let needed: usize = message
        .split("--scale: training needs ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{message}"));
    assert!((160_184 + 150_000..=2 * 160_184).contains(&needed), "{message}");
    assert!(message.contains("over the budget of 250000"), "{message}");
    // A kernel learner's whole fit counts there too (its `auto` search and its trainer on
    // the copy): whatever the budget short of it, one figure, and that figure is enough.
    let rsvm = |budget: usize| {
        let (input, model) = (format!("{data}/train_raw.csv"), model.to_str().unwrap());
        let budget = budget.to_string();
        let args = ["train", "--learner", "rsvm", "--scale", "--input", &input, "--out", model, "--budget", &budget];
        kestrel(&args)
    };
    let needs = |o: &std::process::Output| -> usize {
        let message = stderr(o);
        let figure = message.split("--scale: training needs ").nth(1).and_then(|rest| rest.split(' ').next());
        figure.and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{message}"))
    };
    let whole = needs(&rsvm(250_000));
    assert!(whole > 2 * 160_184, "{whole}");
    assert_eq!(needs(&rsvm(whole - 1)), whole);
    assert!(rsvm(whole).status.success(), "{}", stderr(&rsvm(whole)));

    let stream = |extra: &[&str]| {
        let model = dir.join("stream.kestrel");
        let input = format!("{data}/train_raw.csv");
        let o = kestrel(
            &[&["stream", "--learner", "svm", "--input", &input, "--out", model.to_str().unwrap()], extra].concat(),
        );
        assert!(o.status.success(), "{}", stderr(&o));
        json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]))["scaled"].as_bool()
    };
    assert_eq!((stream(&[]), stream(&["--no-scale"])), (Some(true), Some(false)));
}

/// A CSV states every feature, so one with fewer feature columns than the model has is
/// refused before any prediction (its missing features would be read as zeros), with a
/// hint when the columns are one short and the last may have been taken for the label; one with
/// more is read (a model learned from sparse rows takes the zero columns past its own, and a
/// LibSVM zero stated past them), and a value in a column past the model's features is
/// named by its row, column and feature. A
/// refused input leaves `--output`'s file as it was.
#[test]
fn a_csv_with_fewer_features_than_the_model_is_refused() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/iris");
    let dir = Scratch::new("cli", "columns");
    let model = dir.join("iris.kestrel");
    let (model, train) = (model.to_str().unwrap(), format!("{data}/train.csv"));
    assert!(kestrel(&["train", "--learner", "svm", "--input", &train, "--out", model]).status.success());
    let text = std::fs::read_to_string(&train).unwrap();
    let columns = |keep: &dyn Fn(&[&str]) -> Vec<String>| {
        text.lines().map(|line| keep(&line.split(',').collect::<Vec<_>>()).join(",") + "\n").collect::<String>()
    };
    let write = |name: &str, body: String| {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_string()
    };
    // Three of the four features, then the label.
    let three = write("three.csv", columns(&|f| [f[0], f[1], f[2], f[4]].map(String::from).to_vec()));
    let o = kestrel(&["eval", "--model", model, "--input", &three]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let missing = "three.csv:1:1: no column named `petal width (cm)`, a feature of the model";
    assert!(stderr(&o).contains(missing), "{}", stderr(&o));
    // The four features without a label: `predict` reads the last column as the model's
    // feature of its name; `eval`, which needs labels, reads it as the label unless told.
    let unlabelled = write("unlabelled.csv", columns(&|f| f[..4].iter().map(|s| s.to_string()).collect()));
    let labelled = kestrel(&["predict", "--model", model, "--input", &train]);
    for none in [&[][..], &["--label-column", "none"]] {
        let o = kestrel(&[&["predict", "--model", model, "--input", &unlabelled][..], none].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&labelled));
    }
    let o = kestrel(&["eval", "--model", model, "--input", &unlabelled]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let hint = "it is read as the label here: if the rows have no label column, --label-column none";
    assert!(stderr(&o).contains(hint), "{}", stderr(&o));
    // A fifth, zero column is read as the model's four.
    let wide = write("wide.csv", columns(&|f| [f[0], f[1], f[2], f[3], "0", f[4]].map(String::from).to_vec()));
    let o = kestrel(&["predict", "--model", model, "--input", &wide]);
    assert_eq!(stdout(&o), stdout(&labelled), "{}", stderr(&o));
    // A fifth column that is not zero: the first row holding one is named, its column (the
    // header's repeated name renamed as pandas does), its feature and the flag leaving it out.
    let wider = write("wider.csv", columns(&|f| [f[0], f[1], f[2], f[3], f[0], f[4]].map(String::from).to_vec()));
    let o = kestrel(&["eval", "--model", model, "--input", &wider]);
    let message = "wider.csv:2: a value in column `sepal length (cm).1` (feature 5), past the model's 4 features: \
                   a column that is not one of them can be left out: --skip-column 'sepal length (cm).1'";
    assert!(o.status.code() == Some(1) && stderr(&o).contains(message), "{}", stderr(&o));
    // LibSVM alike: a zero stated past the model's features is read, a value is named.
    let sparse = std::fs::read_to_string(format!("{data}/train.libsvm")).unwrap();
    let past = |value: &str| sparse.lines().map(|line| format!("{line} 7:{value}\n")).collect::<String>();
    let (zero, value) = (write("zero.libsvm", past("0")), write("value.libsvm", past("0.5")));
    let by_libsvm = kestrel(&["predict", "--model", model, "--input", &format!("{data}/train.libsvm")]);
    let o = kestrel(&["predict", "--model", model, "--input", &zero]);
    assert!(o.status.success() && stdout(&o) == stdout(&by_libsvm), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model, "--input", &value]);
    let message = "value.libsvm:1: a value in feature 7, past the model's 4 features";
    assert!(o.status.code() == Some(1) && stderr(&o).contains(message), "{}", stderr(&o));
    // --output replaces its file only once every row is predicted: an input refused at
    // once, or one whose 50th row is bad, leaves the predictions of the run before.
    let predictions = dir.join("predictions.csv");
    let output = predictions.to_str().unwrap();
    assert!(kestrel(&["predict", "--model", model, "--input", &train, "--output", output]).status.success());
    assert_eq!(std::fs::read_to_string(&predictions).unwrap(), stdout(&labelled));
    let mut bad = text.clone();
    bad.insert_str(bad.match_indices('\n').nth(49).unwrap().0 + 1, "1,2,x,4,0\n");
    let bad = write("bad.csv", bad);
    for input in [&three, &bad] {
        let o = kestrel(&["predict", "--model", model, "--input", input, "--output", output]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert_eq!(std::fs::read_to_string(&predictions).unwrap(), stdout(&labelled), "{input}");
    }
    assert!(stderr(&kestrel(&["predict", "--model", model, "--input", &bad])).contains("bad.csv:51:"));
    let leftovers =
        std::fs::read_dir(&*dir).unwrap().filter(|e| e.as_ref().unwrap().path().to_str().unwrap().contains(".tmp-"));
    assert_eq!(leftovers.count(), 0, "a temporary file was left");
}

/// A projection without feature names (fitted on LibSVM rows) applied to a CSV with fewer
/// feature columns than it takes, or to rows with a value past its features, is refused
/// (the rows would be zero-filled or cut); zero columns past them are read. One fitted on a
/// CSV keeps its header's names and reads rows by them, as `predict` does: in any order, a
/// missing column refused by name, zero columns past its own read.
#[test]
fn transform_apply_refuses_rows_of_another_width() {
    let iris = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data/iris");
    let (data, libsvm) = (format!("{iris}/train.csv"), format!("{iris}/train.libsvm"));
    let dir = Scratch::new("cli", "transform-width");
    let (unnamed, named, out) = (dir.join("unnamed.kestrel"), dir.join("named.kestrel"), dir.join("projected.csv"));
    let (unnamed, named, out) = (unnamed.to_str().unwrap(), named.to_str().unwrap(), out.to_str().unwrap());
    for (input, model) in [(libsvm.as_str(), unnamed), (data.as_str(), named)] {
        let o = kestrel(&["transform", "--input", input, "--components", "2", "--model", model, "--output", out]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let text = std::fs::read_to_string(&data).unwrap();
    let write = |name: &str, keep: &dyn Fn(&[&str]) -> Vec<String>| {
        let body: String =
            text.lines().map(|line| keep(&line.split(',').collect::<Vec<_>>()).join(",") + "\n").collect();
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_string()
    };
    let apply = |model: &str, input: &str| {
        let again = dir.join("again.csv");
        let _ = std::fs::remove_file(&again);
        let o = kestrel(&["transform", "--input", input, "--apply", model, "--output", again.to_str().unwrap()]);
        (o, std::fs::read_to_string(&again).unwrap_or_default())
    };
    let refused = |(o, _): (Output, String), message: &str| {
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains(message), "{}", stderr(&o));
    };
    let three = write("three.csv", &|f| [f[0], f[1], f[2], f[4]].map(String::from).to_vec());
    refused(apply(unnamed, &three), "three.csv: 3 feature columns, the projection takes 4 features");
    refused(apply(named, &three), "three.csv:1:1: no column named `petal width (cm)`, a feature of the model");
    let five = write("five.csv", &|f| [f[0], f[1], f[2], f[3], f[0], f[4]].map(String::from).to_vec());
    refused(apply(unnamed, &five), "a row has a value for feature 5, the projection takes 4");
    let zero = write("zero.csv", &|f| {
        let fifth = if f[0].parse::<f64>().is_ok() { "0" } else { "extra" };
        [f[0], f[1], f[2], f[3], fifth, f[4]].map(String::from).to_vec()
    });
    let (o, projected) = apply(unnamed, &zero);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(projected, apply(unnamed, &data).1);
    let (o, projected) = apply(named, &zero);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(projected, std::fs::read_to_string(out).unwrap());
    // The named model reads its columns in any order: the rows project as they did.
    let reversed = write("reversed.csv", &|f| [f[3], f[2], f[1], f[0], f[4]].map(String::from).to_vec());
    let (o, projected) = apply(named, &reversed);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(projected, std::fs::read_to_string(out).unwrap());
}

/// `transform --categorical NAME` one-hot encodes a column of categories for the fit; the
/// model keeps the features' names (`inspect` lists them), and `--apply` reads the column
/// as the model's categories again, in any column order — the same projections; the flag
/// is the fit's, not the apply's.
#[test]
fn transform_reads_a_column_of_categories() {
    let dir = Scratch::new("cli", "transform-categorical");
    let rows: String = (0..80)
        .map(|i| format!("{},{},{}\n", (i as f64 * 0.37).sin(), ["idle", "heat", "cool"][i % 3], i % 7))
        .collect();
    let (fit_rows, moved) = (dir.join("fit.csv"), dir.join("moved.csv"));
    std::fs::write(&fit_rows, format!("a,mode,b\n{rows}")).unwrap();
    let moved_rows: String = rows
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            format!("{},{},{}\n", f[2], f[0], f[1])
        })
        .collect();
    std::fs::write(&moved, format!("b,a,mode\n{moved_rows}")).unwrap();
    let (model, first, second) = (dir.join("m.kestrel"), dir.join("first.csv"), dir.join("second.csv"));
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    let none = ["--label-column", "none"];
    let fit =
        [&["transform", "--input", &path(&fit_rows), "--categorical", "mode", "--model", &path(&model)], &none[..]];
    let o = kestrel(&[&fit.concat()[..], &["--output", &path(&first)]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("rows of 5 features"), "{}", stderr(&o));
    let o = kestrel(&["inspect", &path(&model)]);
    assert!(
        stdout(&o).contains("features (read by these names from a CSV header): a, b, mode=idle, mode=heat, mode=cool"),
        "{}",
        stdout(&o)
    );
    let apply = ["transform", "--input", &path(&moved), "--apply", &path(&model), "--output", &path(&second)];
    let o = kestrel(&[&apply[..], &none[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&first).unwrap(), std::fs::read_to_string(&second).unwrap());
    let o = kestrel(&[&apply[..], &none[..], &["--categorical", "mode"]].concat());
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--categorical is a fit's"), "{}", stderr(&o));
}

/// `rows` rows of six features in [0, 1), the target `5 sin(π x₀ x₁) + 10 (x₂ − ½)²`
/// plus noise of deviation 0.2 from the first three (make_friedman1's terms): the other
/// three do not bear on it.
fn three_of_six_csv(path: &Path, rows: usize, seed: u64) {
    let mut rng = kestrel_core::Rng::seed_from_u64(seed);
    let mut text = String::from("x0,x1,x2,x3,x4,x5,y\n");
    for _ in 0..rows {
        let x: Vec<f64> = (0..6).map(|_| rng.uniform_in(0.0, 1.0)).collect();
        let noise = 0.2 * rng.normal::<f64>();
        let y = 5.0 * (std::f64::consts::PI * x[0] * x[1]).sin() + 10.0 * (x[2] - 0.5).powi(2) + noise;
        let row: Vec<String> = x.iter().chain([&y]).map(|v| format!("{v:.6}")).collect();
        text.push_str(&(row.join(",") + "\n"));
    }
    std::fs::write(path, text).unwrap();
}

/// `--relevance` weighs the features by alignment: the strong ones get large weights and
/// the three that do not bear on the target small ones, the model file carries them
/// (`eval` and `inspect` read them), and the test error falls; it refuses a kernel without
/// a width per feature.
#[test]
fn relevance_weights_travel_in_the_model_and_lower_the_error() {
    let dir = Scratch::new("cli", "relevance");
    let (train, test) = (dir.join("train.csv"), dir.join("test.csv"));
    three_of_six_csv(&train, 600, 1);
    three_of_six_csv(&test, 400, 2);
    let model = dir.join("model.kestrel");
    let (train, test, model) = (train.to_str().unwrap(), test.to_str().unwrap(), model.to_str().unwrap());
    let mse = |extra: &[&str]| {
        let args = ["train", "--learner", "krr", "--centers", "60", "--input", train, "--out", model, "--json"];
        let o = kestrel(&[&args[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let summary = json(&o);
        let o = kestrel(&["eval", "--model", model, "--input", test, "--json"]);
        (json(&o)["mse"].as_f64().unwrap(), summary)
    };
    let (plain, _) = mse(&[]);
    let (weighed, summary) = mse(&["--relevance"]);
    let weights: Vec<f64> =
        summary["relevance"]["weights"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
    assert_eq!(weights.len(), 6);
    assert_eq!(summary["relevance"]["kept"].as_bool(), Some(true), "{summary}");
    let noise = weights[3..].iter().fold(0.0f64, |m, &w| m.max(w));
    // x₂'s weaker, even effect gets a weight like the noise's (measured 0.25 against
    // 0.25-0.29): alignment ranks features by how much of the targets' similarity they
    // explain, and the strong interaction of x₀ and x₁ explains most of it.
    assert!(weights[..2].iter().all(|&w| w > 3.0 * noise), "{weights:?}");
    assert!(weighed < 0.8 * plain, "--relevance {weighed}, without {plain}");
    let info = json(&kestrel(&["inspect", model, "--json"]));
    let stored: Vec<f64> = info["relevance"].as_array().unwrap().iter().map(|w| w.as_f64().unwrap()).collect();
    assert_eq!(stored, weights, "the model keeps the weights it was trained with (f64)");
    assert_eq!(info["scaled"].as_bool(), Some(true));
    // tune weighs its candidates' rows alike and says how to train the best again.
    let o = kestrel(&["tune", "--learner", "krr", "--centers", "60", "--relevance", "--input", train]);
    assert!(stdout(&o).contains("best: kestrel train --learner krr --relevance --gamma"), "{}", stdout(&o));
    let o =
        kestrel(&["train", "--learner", "krr", "--kernel", "poly", "--relevance", "--input", train, "--out", model]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--relevance"), "{}", stderr(&o));
}

/// `rows` rows of two features whose class, a compass point, is the quadrant; the two
/// southern classes first appear at row `late`.
fn compass_csv(path: &Path, rows: usize, late: usize) {
    let mut rng = kestrel_core::Rng::seed_from_u64(9);
    let mut text = String::from("x,y,heading\n");
    let mut written = 0;
    while written < rows {
        let (x, y): (f64, f64) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
        let class =
            ["north east", "north west", "south east", "south west"][2 * usize::from(y < 0.0) + usize::from(x < 0.0)];
        if written < late && y < 0.0 {
            continue;
        }
        text.push_str(&format!("{x},{y},{class}\n"));
        written += 1;
    }
    std::fs::write(path, text).unwrap();
}

/// The class names of a CSV's last column, in order of first appearance.
fn appearance_of(path: &Path) -> Vec<String> {
    let mut appearance: Vec<String> = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines().skip(1) {
        let name = line.rsplit(',').next().unwrap().to_string();
        if !appearance.contains(&name) {
            appearance.push(name);
        }
    }
    appearance
}

/// A stream of four named classes, two appearing late: learned one-vs-rest by both
/// classifiers; the model carries the names, `predict` writes them and `eval` reads
/// them; a run killed at a checkpoint and resumed (names read again from the rows it
/// skips) ends with the same model; `train` reads names too, and a regressor refuses them.
#[test]
fn named_multi_class_streams_end_to_end() {
    let dir = Scratch::new("cli", "named");
    let (full, test) = (dir.join("compass.csv"), dir.join("test.csv"));
    compass_csv(&test, 200, 0);
    for learner in ["svm", "rsvm"] {
        compass_csv(&full, 1200, 300);
        let model = dir.join(format!("{learner}.kestrel"));
        let stream = |extra: &[&str]| {
            let base =
                ["stream", "--learner", learner, "--input", full.to_str().unwrap(), "--json", "--report-every", "0"];
            let o = kestrel(&[&base[..], extra].concat());
            assert!(o.status.success(), "{learner}: {}", stderr(&o));
            json(&o)
        };
        let output = dir.join(format!("{learner}.predictions"));
        let summary = stream(&["--out", model.to_str().unwrap(), "--output", output.to_str().unwrap()]);
        assert!(summary["accuracy"].as_f64().unwrap() > 0.8, "{learner}: {summary}");
        // Each class's recall, by name, and their mean are those of the predictions written
        // (the first row's, before any label, is NaN: wrong).
        let truth: Vec<String> = std::fs::read_to_string(&full)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap().into())
            .collect();
        let written = std::fs::read_to_string(&output).unwrap();
        let mut counts: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
        for (t, p) in truth.iter().zip(written.lines()) {
            let (rows, right) = counts.entry(t).or_default();
            *rows += 1.0;
            *right += f64::from(u8::from(t == p));
        }
        assert_eq!(summary["recall"].as_object().unwrap().len(), 4, "{learner}: {summary}");
        for (name, (rows, right)) in &counts {
            let recall = summary["recall"][name].as_f64().unwrap();
            assert!((recall - right / rows).abs() < 1e-12, "{learner}: {name} {recall} vs {}", right / rows);
        }
        let mean = counts.values().map(|(rows, right)| right / rows).sum::<f64>() / counts.len() as f64;
        assert!((summary["balanced_accuracy"].as_f64().unwrap() - mean).abs() < 1e-12, "{learner}: {summary}");
        let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
        let appearance = appearance_of(&full);
        assert_eq!(info["class_names"], serde_json::json!(appearance), "{learner}: names in order of first appearance");
        let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap(), "--json"]);
        assert!(json(&o)["accuracy"].as_f64().unwrap() > 0.85, "{learner}: {}", stdout(&o));
        let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap()]);
        let truth: Vec<String> = std::fs::read_to_string(&test)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.rsplit(',').next().unwrap().to_string())
            .collect();
        let predicted: Vec<String> = stdout(&o).lines().map(String::from).collect();
        let agree = truth.iter().zip(&predicted).filter(|(t, p)| t == p).count();
        assert!(predicted.len() == 200 && agree > 170, "{learner}: {agree} of {}", predicted.len());

        // Killed at the checkpoint after row 600 (the file then ended there), resumed on
        // the whole file.
        let (checkpoint, resumed) = (dir.join("run.ckpt"), dir.join("resumed.kestrel"));
        let _ = std::fs::remove_file(&checkpoint);
        compass_csv(&full, 600, 300);
        let save = ["--checkpoint", checkpoint.to_str().unwrap(), "--checkpoint-every", "100"];
        stream(&save);
        compass_csv(&full, 1200, 300);
        stream(&[&save[..], &["--resume", "--out", resumed.to_str().unwrap()]].concat());
        assert_eq!(std::fs::read(&resumed).unwrap(), std::fs::read(&model).unwrap(), "{learner}");
    }
    let model = dir.join("train.kestrel");
    let o =
        kestrel(&["train", "--learner", "svm", "--input", full.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap()]);
    assert_eq!(
        stdout(&o).lines().next(),
        std::fs::read_to_string(&test).unwrap().lines().nth(1).and_then(|l| l.rsplit(',').next())
    );
    // Rows labelled by numbers where the model's classes are names: nothing matches, and
    // eval says so instead of a bare accuracy of 0; rows that do name them draw no warning.
    let numbered = dir.join("numbered.csv");
    let text = std::fs::read_to_string(&test).unwrap();
    let mut lines = text.lines();
    let mut renamed = lines.next().unwrap().to_string() + "\n";
    for line in lines {
        let (features, _) = line.rsplit_once(',').unwrap();
        renamed.push_str(&format!("{features},1\n"));
    }
    std::fs::write(&numbered, renamed).unwrap();
    let eval =
        |input: &Path| kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap()]);
    let o = eval(&numbered);
    assert!(o.status.success() && stdout(&o).starts_with("accuracy 0.0000"), "{}", stdout(&o));
    let names = appearance_of(&full).join(", ");
    assert!(
        stderr(&o).contains(&format!("warning: no row's label is a class of the model ({names})")),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&eval(&test)).contains("warning"), "{}", stderr(&eval(&test)));
    // Some rows labelled by a name the model lacks: told, and a class of recall 0 in the
    // balanced accuracy, as scikit-learn's balanced_accuracy_score counts it.
    let mut fog = text.lines().next().unwrap().to_string() + "\n";
    for (i, line) in text.lines().skip(1).enumerate() {
        let (features, label) = line.rsplit_once(',').unwrap();
        fog.push_str(&format!("{features},{}\n", if i % 4 == 0 { "fog" } else { label }));
    }
    let foggy = dir.join("fog.csv");
    std::fs::write(&foggy, fog).unwrap();
    let warning = format!("warning: 50 rows' labels are not classes of the model ({names}): `fog`; a row so labelled");
    assert!(stderr(&eval(&foggy)).contains(&warning), "{}", stderr(&eval(&foggy)));
    let summary_of = |input: &Path| {
        json(&kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap(), "--json"]))
    };
    let (clear, summary) = (summary_of(&test), summary_of(&foggy));
    assert_eq!(summary["recall"]["fog"].as_f64(), Some(0.0), "{summary}");
    let recalls: Vec<f64> = summary["recall"].as_object().unwrap().values().map(|r| r.as_f64().unwrap()).collect();
    let mean = recalls.iter().sum::<f64>() / recalls.len() as f64;
    assert_eq!((recalls.len(), summary["balanced_accuracy"].as_f64()), (5, Some(mean)), "{summary}");
    assert!(mean < clear["balanced_accuracy"].as_f64().unwrap(), "{summary} against {clear}");
    let o = kestrel(&["stream", "--learner", "slkl", "--input", full.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains(":2:") && stderr(&o).contains("` is not a number"), "{}", stderr(&o));
}

/// `--class-weight` by class name or label value, for the linear SVM, the reduced-kernel
/// SVM and the least-squares SVM: unit weights change nothing, a heavier class is
/// predicted more often, `balanced` finds a rare class; a name no row has, a learner without
/// class weights and a malformed weight are errors.
#[test]
fn class_weights_by_name_or_label() {
    let dir = Scratch::new("cli", "class-weights");
    let (full, test, model) = (dir.join("compass.csv"), dir.join("test.csv"), dir.join("m.kestrel"));
    compass_csv(&full, 600, 0);
    compass_csv(&test, 400, 0);
    for learner in ["svm", "rsvm", "lssvm"] {
        let south_west_predictions = |extra: &[&str]| {
            let base =
                ["train", "--learner", learner, "--input", full.to_str().unwrap(), "--out", model.to_str().unwrap()];
            let o = kestrel(&[&base[..], extra].concat());
            assert!(o.status.success(), "{}", stderr(&o));
            let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap()]);
            stdout(&o).lines().filter(|l| *l == "south west").count()
        };
        let plain = south_west_predictions(&[]);
        assert_eq!(south_west_predictions(&["--class-weight", "south west=1"]), plain, "{learner}");
        // The quadrants overlap for one line only: the linear SVM moves its boundaries.
        if learner == "svm" {
            let heavy = south_west_predictions(&["--class-weight", "south west=20"]);
            assert!(heavy > plain + 10, "{heavy} vs {plain}");
        }
    }

    // A rare class (one row in twenty): unweighted, the kernel SVMs give it few rows;
    // balanced, they find most of it.
    let (rare, rare_test) = (dir.join("rare.csv"), dir.join("rare-test.csv"));
    for (path, seed) in [(&rare, 1), (&rare_test, 2)] {
        let mut rng = kestrel_core::Rng::seed_from_u64(seed);
        let mut text = String::from("a,b,label\n");
        for i in 0..1200 {
            let fault = i % 20 == 0;
            let (a, b) = (rng.normal::<f64>(), rng.normal::<f64>());
            let (a, b) = if fault { (a * 0.6 + 1.2, b * 0.6 + 1.2) } else { (a, b) };
            text.push_str(&format!("{a:.4},{b:.4},{}\n", if fault { "fault" } else { "ok" }));
        }
        std::fs::write(path, text).unwrap();
    }
    for learner in ["rsvm", "lssvm"] {
        let faults_found = |input: &Path| {
            let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap()]);
            let truth = std::fs::read_to_string(input).unwrap();
            let rows = truth.lines().skip(1).map(|l| l.ends_with(",fault"));
            stdout(&o).lines().zip(rows).filter(|&(p, fault)| fault && p == "fault").count()
        };
        // Faults found in the test rows and in the training rows, and what train said.
        let found = |extra: &[&str]| {
            let base =
                ["train", "--learner", learner, "--input", rare.to_str().unwrap(), "--out", model.to_str().unwrap()];
            let trained = kestrel(&[&base[..], extra].concat());
            assert!(trained.status.success(), "{}", stderr(&trained));
            (faults_found(&rare_test), faults_found(&rare), stderr(&trained))
        };
        let ((plain, plain_trained, plain_said), (balanced, _, balanced_said)) =
            (found(&[]), found(&["--class-weight", "balanced"]));
        assert!(
            balanced >= 40 && balanced > plain + 10,
            "{learner}: {balanced} of 60 faults found, {plain} unweighted"
        );
        // A model that calls no training row a fault is told so, with the flag that helps.
        let given_up = "the model predicts none of the training rows of `fault` (60 rows) as their class: a rare \
                        class? --class-weight balanced";
        assert_eq!(plain_said.contains(given_up), plain_trained == 0, "{learner}: {plain_trained} found; {plain_said}");
        assert!(!balanced_said.contains("predicts none"), "{balanced_said}");
        // eval gives each class's recall by name and their mean: the faults the balanced
        // model found in the test rows, of 60, and the normal rows it kept, of 1,140.
        let o =
            kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", rare_test.to_str().unwrap(), "--json"]);
        let summary = json(&o);
        let predictions =
            kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", rare_test.to_str().unwrap()]);
        let kept_ok = std::fs::read_to_string(&rare_test)
            .unwrap()
            .lines()
            .skip(1)
            .zip(stdout(&predictions).lines())
            .filter(|(row, p)| row.ends_with(",ok") && *p == "ok")
            .count();
        let (fault, ok) = (balanced as f64 / 60.0, kept_ok as f64 / 1140.0);
        assert_eq!((summary["recall"]["fault"].as_f64(), summary["recall"]["ok"].as_f64()), (Some(fault), Some(ok)));
        assert_eq!(summary["balanced_accuracy"].as_f64(), Some((ok + fault) / 2.0), "{summary}");
        let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", rare_test.to_str().unwrap()]);
        assert!(stdout(&o).contains(&format!("; balanced accuracy {:.4}", (ok + fault) / 2.0)), "{}", stdout(&o));
    }

    // tune scores its candidates with the class weights and says how to train the best.
    let tune = |extra: &[&str]| {
        let o = kestrel(&[&["tune", "--class-weight"][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let said = tune(&["balanced", "--learner", "rsvm", "--input", rare.to_str().unwrap()]);
    assert!(said.contains("weighted leave-one-out accuracy %"), "{said}");
    assert!(said.contains("best: kestrel train --learner rsvm --scale off --class-weight balanced --gamma "), "{said}");
    let said = tune(&["south west=20", "--learner", "svm", "--folds", "3", "--input", full.to_str().unwrap()]);
    assert!(said.contains("weighted 3-fold accuracy %"), "{said}");
    assert!(said.contains("best: kestrel train --learner svm --scale --class-weight 'south west=20' --c "), "{said}");

    let libsvm = binary_libsvm(&dir, 200);
    let train = |extra: &[&str]| {
        let base = ["train", "--input", libsvm.to_str().unwrap(), "--out", model.to_str().unwrap()];
        kestrel(&[&base[..], extra].concat())
    };
    assert!(train(&["--learner", "svm", "--class-weight=-1=5", "--class-weight", "1=0.5"]).status.success());
    assert!(train(&["--learner", "rsvm", "--class-weight", "balanced"]).status.success());
    for (flags, message) in [
        (&["--learner", "svm", "--class-weight", "up=2"][..], "--class-weight up: no class has that name"),
        (&["--learner", "svm", "--class-weight", "3=2"][..], "no row has the label 3"),
        (&["--learner", "krr", "--class-weight", "1=2"][..], "class weights are for the SVMs"),
        (&["--learner", "svm", "--class-weight", "1=0"][..], "is not above 0"),
        (&["--learner", "svm", "--class-weight", "1"][..], "is not LABEL=WEIGHT, nor `balanced`"),
        (&["--learner", "rsvm", "--class-weight", "balanced", "--class-weight", "1=2"][..], "give no other"),
    ] {
        let o = train(flags);
        assert_ne!(o.status.code(), Some(0), "{flags:?}");
        assert!(stderr(&o).contains(message), "{flags:?}: {}", stderr(&o));
    }
}

/// `--learner mrrsvm`: parts learned apart and combined, predicted by `predict` and `eval`,
/// described by `inspect`; the same rows in another order give the same model; impossible
/// partitions are errors naming the fix.
#[test]
fn mapreduce_rsvm_trains_predicts_and_refuses_impossible_splits() {
    let dir = Scratch::new("cli", "mrrsvm");
    let (full, test, model) = (dir.join("compass.csv"), dir.join("test.csv"), dir.join("m.kestrel"));
    compass_csv(&full, 800, 0);
    compass_csv(&test, 300, 0);
    let train = |input: &Path, extra: &[&str]| {
        let base = [
            "train",
            "--learner",
            "mrrsvm",
            "--input",
            input.to_str().unwrap(),
            "--out",
            model.to_str().unwrap(),
            "--json",
        ];
        kestrel(&[&base[..], extra].concat())
    };
    let o = train(&full, &["--partitions", "3", "--scale"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert_eq!((summary["partitions"].as_u64(), summary["classes"].as_u64()), (Some(3), Some(4)), "{summary}");
    let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap(), "--json"]);
    assert!(json(&o)["accuracy"].as_f64().unwrap() > 0.9, "{}", stdout(&o));
    let info = json(&kestrel(&["inspect", model.to_str().unwrap(), "--json"]));
    assert_eq!((info["kind"].as_str(), info["scaled"].as_bool()), (Some("mrrsvm"), Some(true)), "{info}");

    // Numeric labels, the rows reversed: the same parts, the same model (named classes are
    // numbered, and --scale's sums run, in the order of the rows).
    let libsvm = binary_libsvm(&dir, 400);
    let text = std::fs::read_to_string(&libsvm).unwrap();
    let reversed = dir.join("reversed.libsvm");
    std::fs::write(&reversed, text.lines().rev().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    assert!(train(&libsvm, &["--partitions", "3"]).status.success());
    let bytes = std::fs::read(&model).unwrap();
    assert!(train(&reversed, &["--partitions", "3"]).status.success());
    assert_eq!(std::fs::read(&model).unwrap(), bytes);

    for (parts, message) in
        [("801", "801 partitions for 800 rows"), ("400", "use fewer partitions"), ("0", "--partitions")]
    {
        let o = train(&full, &["--partitions", parts]);
        assert_ne!(o.status.code(), Some(0), "{parts}");
        assert!(stderr(&o).contains(message), "{parts}: {}", stderr(&o));
    }
}

/// A sensor log in CSV, readings in raw units with a `state` column naming faults: the
/// first name seen, `ok`, is normal; one row in twenty after the first 300 is a fault with
/// one channel off by five deviations.
fn sensor_csv(path: &Path, rows: usize, seed: u64) {
    let mut rng = kestrel_core::Rng::seed_from_u64(seed);
    let mut text = String::from("pressure,offset,temperature,state\n");
    for i in 0..rows {
        let mut x = [1e5 + 300.0 * rng.normal::<f64>(), 0.01 * rng.normal::<f64>(), 20.0 + rng.normal::<f64>()];
        let fault = i >= 300 && i % 20 == 0;
        if fault {
            let j = i / 20 % 3;
            x[j] += [1500.0, 0.05, 5.0][j] * if i % 40 == 0 { 1.0 } else { -1.0 };
        }
        let state = if fault { "fault" } else { "ok" };
        text.push_str(&format!("{:.2},{:.5},{:.3},{state}\n", x[0], x[1], x[2]));
    }
    std::fs::write(path, text).unwrap();
}

/// `train --normal-label` learns the detector from the rows of that label alone: the model
/// is the one trained on a file of those rows, and it finds the faults that a detector
/// learning every row (faults among them) takes for normal. A label no row has, or a
/// learner other than the detector, is refused.
#[test]
fn a_detector_learns_from_the_rows_labelled_normal() {
    let dir = Scratch::new("cli", "normal-label");
    let (log, normal) = (dir.join("log.csv"), dir.join("normal.csv"));
    sensor_csv(&log, 3000, 1);
    let text = std::fs::read_to_string(&log).unwrap();
    let kept: Vec<&str> = text.lines().filter(|line| !line.ends_with(",fault")).collect();
    std::fs::write(&normal, kept.join("\n") + "\n").unwrap();
    let (log, normal) = (log.to_str().unwrap(), normal.to_str().unwrap());
    let train = |input: &str, flags: &[&str], out: &str| {
        let out = dir.join(out);
        let o = kestrel(&[&["train", "--input", input, "--out", out.to_str().unwrap()][..], flags].concat());
        (o, out)
    };
    let (o, labelled) = train(log, &["--normal-label", "ok"], "labelled.kestrel");
    assert!(o.status.success(), "{}", stderr(&o));
    let said =
        format!("learns from the {} rows labelled ok; {} other rows left out", kept.len() - 1, 3001 - kept.len());
    assert!(stderr(&o).contains(&said) && stderr(&o).contains("learner novelty: --normal-label ok"), "{}", stderr(&o));
    let (o, reference) = train(normal, &["--learner", "novelty"], "reference.kestrel");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&labelled).unwrap(), std::fs::read(&reference).unwrap());
    let (o, every_row) = train(log, &["--learner", "novelty"], "every-row.kestrel");
    assert!(stderr(&o).contains("the novelty detector learns from every row: the label column is not read"));
    let recall = |model: &std::path::Path| {
        let o =
            kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", log, "--normal-label", "ok", "--json"]);
        json(&o)["recall"].as_f64().unwrap()
    };
    let (normal_only, all) = (recall(&labelled), recall(&every_row));
    assert!(normal_only > all + 0.1, "recall {normal_only} learning the normal rows, {all} learning every row");
    let (o, _) = train(log, &["--normal-label", "idle"], "none.kestrel");
    assert!(stderr(&o).contains("no row is labelled idle (--normal-label), its labels: ok, fault"), "{}", stderr(&o));
    let (o, _) = train(log, &["--normal-label", "ok", "--learner", "rsvm"], "rsvm.kestrel");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// Novelty detection end to end: a stream learns normal readings online and writes each
/// row's score and flag, scored against the named states (precision, recall, AUC); its
/// model file flags as the stream did at its end; a detector trained on a whole log flags
/// about 1 − q of it and its faults; the budget counts the detector; tune refuses it.
#[test]
fn novelty_streams_trains_and_evaluates() {
    let dir = Scratch::new("cli", "novelty");
    let (log, test) = (dir.join("log.csv"), dir.join("test.csv"));
    sensor_csv(&log, 3000, 1);
    sensor_csv(&test, 1000, 2);
    let (rows, model) = (dir.join("rows.txt"), dir.join("stream.kestrel"));
    let o = kestrel(&[
        "stream",
        "--learner",
        "novelty",
        "--input",
        log.to_str().unwrap(),
        "--quantile",
        "0.95",
        "--json",
        "--report-every",
        "1000",
        "--output",
        rows.to_str().unwrap(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert_eq!((summary["n"].as_u64(), summary["anomalies"].as_u64()), (Some(3000), Some(135)));
    let auc = summary["auc"].as_f64().unwrap();
    let (precision, recall) = (summary["precision"].as_f64().unwrap(), summary["recall"].as_f64().unwrap());
    assert!(auc > 0.95 && precision > 0.5 && recall > 0.8, "{summary}");
    assert_eq!(stdout(&o).lines().filter(|l| l.contains("\"flagged\"")).count(), 4, "3 reports and the summary");
    let lines: Vec<String> = std::fs::read_to_string(&rows).unwrap().lines().map(String::from).collect();
    assert_eq!(lines.len(), 3000);
    assert_eq!(lines[0], "NaN,0", "no score during the warm-up");
    let flagged = lines.iter().filter(|l| l.ends_with(",1")).count() as u64;
    assert_eq!(Some(flagged), summary["flagged"].as_u64());
    let scores: Vec<f64> = lines[256..].iter().map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert!(scores.iter().all(|s| (0.0..=2.0).contains(s)), "RBF distances lie in [0, 2]");

    let o = kestrel(&["inspect", model.to_str().unwrap(), "--json"]);
    let info = json(&o);
    assert_eq!(
        (info["kind"].as_str(), info["task"].as_str(), info["scaled"].as_bool()),
        (Some("novelty"), Some("detector"), Some(true))
    );
    let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap(), "--json"]);
    let evaluated = json(&o);
    assert!(evaluated["auc"].as_f64().unwrap() > 0.95, "{evaluated}");
    let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap()]);
    let predictions = stdout(&o);
    assert_eq!(predictions.lines().count(), 1000);
    let flagged = predictions.lines().filter(|l| l.ends_with(",1")).count() as u64;
    assert_eq!(Some(flagged), evaluated["flagged"].as_u64());

    let trained = dir.join("trained.kestrel");
    let o = kestrel(&[
        "train",
        "--learner",
        "novelty",
        "--input",
        log.to_str().unwrap(),
        "--scale",
        "--quantile",
        "0.95",
        "--out",
        trained.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(json(&o)["chosen"]["gamma"].as_f64().is_some(), "{}", stdout(&o));
    let o = kestrel(&["eval", "--model", trained.to_str().unwrap(), "--input", log.to_str().unwrap(), "--json"]);
    let on_log = json(&o);
    let share = on_log["flagged"].as_f64().unwrap() / 3000.0;
    assert!((0.045..=0.055).contains(&share), "{on_log}: the 0.95 quantile of the log's own scores");
    let o = kestrel(&["eval", "--model", trained.to_str().unwrap(), "--input", test.to_str().unwrap(), "--json"]);
    assert!(json(&o)["auc"].as_f64().unwrap() > 0.95, "{}", stdout(&o));

    let budget = |target: &str| {
        let o = kestrel(&[
            "budget",
            "--learner",
            "novelty",
            "--dim",
            "3",
            "--window",
            "256",
            "--centers",
            "32",
            "--scalar",
            "f32",
            "--target",
            target,
            "--json",
        ]);
        json(&o)["bytes"].as_u64().unwrap()
    };
    // m·d + m² + 2m scalars, the scaler's 4d, m counts and N ring entries, the threshold's
    // estimators.
    let estimators = size_of::<kestrel_core::novelty::RecentQuantile<f32>>() as u64;
    assert_eq!(budget("cortex-m"), (32 * 3 + 32 * 32 + 64 + 4 * 3) * 4 + (32 + 256) * 4 + estimators);
    assert!(budget("host") > budget("cortex-m"));
    let o = kestrel(&["tune", "--learner", "novelty", "--input", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("kestrel tune compares settings by their error on labels"), "{}", stderr(&o));
    for (flag, value) in [("--quantile", "1"), ("--warmup", "1")] {
        let o = kestrel(&["stream", "--learner", "novelty", "--input", log.to_str().unwrap(), flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", stderr(&o));
    }
}

/// A row of zeros under a linear kernel, which the detector's normalised kernel cannot
/// place: the stream names its line and the way out, `--on-error skip` leaves it out, and
/// `train` names its row.
#[test]
fn a_detector_names_a_row_of_zeros_under_a_linear_kernel() {
    let dir = Scratch::new("cli", "novelty-zeros");
    let input = dir.join("zeros.csv");
    std::fs::write(&input, "a,b,label\n1,2,0\n2,1,0\n0,0,0\n1,1,0\n3,1,0\n").unwrap();
    let input = input.to_str().unwrap();
    let stream = ["stream", "--learner", "novelty", "--input", input, "--kernel", "linear", "--no-scale"];
    let o = kestrel(&stream);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said = stderr(&o);
    assert!(said.contains("zeros.csv:4: the row's kernel value with itself is 0 or less"), "{said}");
    assert!(said.contains("use --kernel rbf, or --on-error skip"), "{said}");
    let o = kestrel(&[&stream[..], &["--on-error", "skip", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!((json(&o)["n"].as_u64(), json(&o)["skipped"].as_u64()), (Some(4), Some(1)));
    assert!(stderr(&o).contains("no direction: use --kernel rbf\n"), "skipping, it suggests no skip: {}", stderr(&o));
    let model = dir.join("m.kestrel");
    // (Standardised, as `--scale auto` does by rule, the row would be centred away from 0.)
    let train = ["train", "--learner", "novelty", "--input", input, "--kernel", "linear", "--scale", "off", "--out"];
    let o = kestrel(&[&train[..], &[model.to_str().unwrap()]].concat());
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("row 3: its kernel value with itself is 0, so the normalised linear kernel"),
        "{}",
        stderr(&o)
    );
}

/// `--normal-label`: a detector's flags are scored against the label of normal rows the
/// user names — scikit-learn's ±1 (1 normal) or a class name seen after another — and
/// the same rows score the same whatever their labels; labels that make most rows
/// anomalies are warned about; the flag is refused where nothing detects.
#[test]
fn a_detector_is_scored_against_the_normal_label_given() {
    let dir = Scratch::new("cli", "normal-label");
    let (log, named) = (dir.join("log.csv"), dir.join("named.csv"));
    sensor_csv(&log, 3000, 1);
    sensor_csv(&named, 1000, 2);
    let text = std::fs::read_to_string(&named).unwrap();
    let (header, rows) = text.split_once('\n').unwrap();
    let signed = dir.join("signed.csv");
    std::fs::write(&signed, text.replace(",ok\n", ",1\n").replace(",fault\n", ",-1\n")).unwrap();
    // A fault first: named classes are numbered as they come, so `ok` would not be 0.
    let fault_first = dir.join("fault-first.csv");
    let first_fault = rows.lines().find(|l| l.ends_with(",fault")).unwrap();
    std::fs::write(&fault_first, format!("{header}\n{first_fault}\n{rows}")).unwrap();
    let model = dir.join("novelty.kestrel");
    let o = kestrel(
        &["train", "--learner", "novelty", "--input", log.to_str().unwrap(), "--scale", "--out"]
            .into_iter()
            .chain([model.to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let eval = |input: &Path, normal: Option<&str>| {
        let mut args = vec!["eval", "--model", model.to_str().unwrap(), "--input", input.to_str().unwrap(), "--json"];
        args.extend(normal.map(|label| ["--normal-label", label]).into_iter().flatten());
        let o = kestrel(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        (json(&o), stderr(&o))
    };
    let (reference, said) = eval(&named, None);
    assert_eq!(reference["anomalies"].as_u64(), Some(35), "{reference}");
    assert!(reference["auc"].as_f64().unwrap() > 0.95 && !said.contains("--normal-label"), "{reference} {said}");

    let (zero, said) = eval(&signed, None);
    assert_eq!((zero["anomalies"].as_u64(), zero["auc"].as_f64()), (Some(1000), None), "{zero}");
    assert!(said.contains("warning: 1000 of 1000 labelled rows count as anomalies") && said.contains("--normal-label"));
    let (plus_one, said) = eval(&signed, Some("1"));
    assert_eq!(plus_one, reference);
    assert!(!said.contains("warning"), "{said}");

    let (as_read, said) = eval(&fault_first, None);
    assert_eq!(as_read["anomalies"].as_u64(), Some(1001 - 36), "every `ok` row: {as_read}");
    assert!(said.contains("--normal-label"), "{said}");
    let (ok, _) = eval(&fault_first, Some("ok"));
    assert_eq!((ok["n"].as_u64(), ok["anomalies"].as_u64()), (Some(1001), Some(36)), "{ok}");
    assert!(ok["auc"].as_f64().unwrap() > 0.95, "{ok}");

    // A stream scores alike: ±1 rows with 1 normal as the named rows.
    let stream = |input: &Path, extra: &[&str]| {
        let args = ["stream", "--learner", "novelty", "--input", input.to_str().unwrap(), "--json"];
        let o = kestrel(&args.iter().chain(extra).copied().collect::<Vec<_>>());
        let mut summary = json(&o);
        summary.as_object_mut().unwrap().remove("samples_per_sec");
        summary
    };
    assert_eq!(stream(&signed, &["--normal-label", "1"]), stream(&named, &[]));

    for args in [
        vec!["eval", "--model", model.to_str().unwrap(), "--input", signed.to_str().unwrap(), "--normal-label", "nan"],
        vec!["stream", "--learner", "svm", "--input", signed.to_str().unwrap(), "--normal-label", "1"],
    ] {
        let o = kestrel(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("--normal-label"), "{}", stderr(&o));
    }
}

/// `kestrel predict | head -1`: the reader goes away after one line; kestrel ends quietly
/// with success, as a Unix tool does, instead of reporting a broken pipe.
#[test]
fn a_reader_that_goes_away_ends_predict_quietly() {
    use std::io::BufRead;
    let dir = Scratch::new("cli", "broken-pipe");
    let data = binary_libsvm(&dir, 50_000);
    let model = dir.join("svm.kestrel");
    let o =
        kestrel(&["train", "--learner", "svm", "--input", data.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(["predict", "--model", model.to_str().unwrap(), "--input", data.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
    assert!(first.trim() == "1" || first.trim() == "-1", "{first}");
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}: {}", output.status, stderr(&output));
    assert_eq!(stderr(&output), "");
}

/// Every command that prints to standard output, its reader gone before the first line
/// (`kestrel train --json | head -c 80` once `head` has its bytes), and standard error's
/// with it (`2>&1 | head`): a quiet success, not a panic on the failed write; the files the
/// command writes are still written.
#[test]
fn a_reader_gone_before_the_first_line_ends_every_command_quietly() {
    let dir = Scratch::new("cli", "closed-stdout");
    let data = binary_libsvm(&dir, 300);
    let (data, model, kept) = (data.to_str().unwrap(), dir.join("svm.kestrel"), dir.join("stream.kestrel"));
    let (model, kept) = (model.to_str().unwrap(), kept.to_str().unwrap());
    let commands: [&[&str]; 10] = [
        &["train", "--learner", "svm", "--input", data, "--out", model, "--json"],
        &["train", "--learner", "svm", "--input", data, "--out", model],
        &["eval", "--model", model, "--input", data],
        &["inspect", model],
        &["tune", "--learner", "svm", "--input", data, "--folds", "2", "--c-grid", "0.1,1"],
        &["budget", "--learner", "svm", "--dim", "16", "--scalar", "f32"],
        &["stream", "--learner", "svm", "--input", data, "--dim", "2", "--json", "--report-every", "9", "--out", kept],
        &["cluster", "--input", data, "--clusters", "2", "--method", "kmeans"],
        &["npkl", "--input", data, "--constraints-from-labels", "0.2", "--loss", "hinge", "--clusters", "2"],
        &["demo"],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let both = writer.try_clone().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_kestrel")).args(args).stdout(writer).output().unwrap();
        assert!(o.status.success(), "{args:?}: {:?}: {}", o.status, stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
        // `2>&1 | head`: the diagnostics cannot be written either, and are dropped.
        let mut closed = Command::new(env!("CARGO_BIN_EXE_kestrel"));
        closed.args(args).stdout(both.try_clone().unwrap()).stderr(both);
        assert!(closed.status().unwrap().success(), "{args:?} with standard error gone too");
    }
    assert!(Path::new(model).is_file() && Path::new(kept).is_file());
}

/// `--label-column none`: every CSV column is a feature. The novelty detector streams and
/// trains on unlabelled readings (no precision or AUC without labels); a learner that needs
/// labels says the rows have none.
#[test]
fn unlabelled_readings_for_the_novelty_detector() {
    let dir = Scratch::new("cli", "unlabelled");
    let (labelled, readings) = (dir.join("labelled.csv"), dir.join("readings.csv"));
    sensor_csv(&labelled, 600, 3);
    let text = std::fs::read_to_string(&labelled).unwrap();
    let unlabelled: Vec<String> = text.lines().map(|line| line.rsplit_once(',').unwrap().0.to_string()).collect();
    std::fs::write(&readings, unlabelled.join("\n") + "\n").unwrap();
    let input = readings.to_str().unwrap();
    let o = kestrel(&["stream", "--learner", "novelty", "--input", input, "--label-column", "none", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = json(&o);
    assert_eq!(summary["n"].as_u64(), Some(600));
    assert!(summary.get("auc").is_none() && summary["flagged"].as_u64().is_some(), "{summary}");
    let model = dir.join("model.kestrel");
    let train = ["train", "--learner", "novelty", "--input", input, "--label-column", "none", "--scale", "--out"];
    let o = kestrel(&[&train[..], &[model.to_str().unwrap(), "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&o)["dim"].as_u64(), Some(3));
    let o = kestrel(&["stream", "--learner", "svm", "--input", input, "--label-column", "none"]);
    assert_eq!(o.status.code(), Some(2));
    let said = "--learner svm learns from labels: --label-column none gives the rows none";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
}

/// A stream row whose label is missing (an empty field, `?`, `NA`) is predicted, its
/// `--output` line written, and neither scored nor learned: each learner ends with the model
/// of the stream without those rows, and writes the same predictions for the rows both
/// have. A first row without a label chooses no learner (a bad row, and its line kept).
#[test]
fn a_stream_predicts_the_rows_whose_label_is_missing() {
    let dir = Scratch::new("cli", "stream-unlabelled");
    let mut seed = 7u64;
    let mut uniform = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let rows: Vec<(f64, f64, f64)> = (0..400)
        .map(|_| {
            let (a, b) = (uniform() * 4.0 - 2.0, uniform() * 4.0 - 2.0);
            (a, b, if a * a + b > 1.0 { 1.0 } else { -1.0 })
        })
        .collect();
    let missing = ["", "?", "NA"];
    let (mut partial, mut labelled) = (String::from("a,b,y\n"), String::from("a,b,y\n"));
    for (i, (a, b, y)) in rows.iter().enumerate() {
        match i % 7 == 3 {
            true => partial.push_str(&format!("{a},{b},{}\n", missing[i % 3])),
            false => {
                partial.push_str(&format!("{a},{b},{y}\n"));
                labelled.push_str(&format!("{a},{b},{y}\n"));
            }
        }
    }
    let unlabelled = (0..400).filter(|i| i % 7 == 3).count();
    let path = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (partial, labelled) = (path("partial.csv", &partial), path("labelled.csv", &labelled));
    let run = |input: &str, learner: &str, out: &str| {
        let (model, output) = (dir.join(format!("{out}.kestrel")), dir.join(format!("{out}.txt")));
        let (model_arg, output_arg) = (model.to_str().unwrap(), output.to_str().unwrap());
        let flags = ["stream", "--learner", learner, "--input", input, "--out", model_arg, "--output", output_arg];
        let o = kestrel(&[&flags[..], &["--json"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let lines: Vec<String> = std::fs::read_to_string(&output).unwrap().lines().map(String::from).collect();
        (json(&o), std::fs::read(&model).unwrap(), lines)
    };
    for learner in ["svm", "rsvm", "slkl"] {
        let (summary, model, lines) = run(&partial, learner, &format!("{learner}-partial"));
        let (reference, reference_model, reference_lines) = run(&labelled, learner, &format!("{learner}-labelled"));
        assert_eq!(summary["unlabelled"].as_u64(), Some(unlabelled as u64), "{learner}: {summary}");
        assert_eq!(
            (summary["n"].as_u64(), reference["n"].as_u64()),
            (Some(400 - unlabelled as u64), Some(400 - unlabelled as u64))
        );
        assert_eq!(reference.get("unlabelled"), None);
        assert_eq!(model, reference_model, "{learner}: the rows without labels taught nothing");
        assert_eq!(lines.len(), 400);
        let kept: Vec<&String> = lines.iter().enumerate().filter(|(i, _)| i % 7 != 3).map(|(_, line)| line).collect();
        assert_eq!(kept, reference_lines.iter().collect::<Vec<_>>(), "{learner}");
        let predicted =
            lines.iter().enumerate().filter(|(i, line)| i % 7 == 3 && line.parse::<f64>().is_ok_and(f64::is_finite));
        assert_eq!(predicted.count(), unlabelled, "{learner}: every row without a label is predicted");
    }
    // Without --learner, the first row must have a label to choose one.
    let first = path("first.csv", "a,b,y\n1,2,\n2,3,1\n3,1,?\n1,1,-1\n");
    let o = kestrel(&["stream", "--input", &first]);
    let said =
        "first.csv:2:1: the row's label is missing, and the first labelled row chooses the learner (or --learner)";
    assert!(o.status.code() == Some(1) && stderr(&o).contains(said), "{}", stderr(&o));
    let output = dir.join("first.txt");
    let o =
        kestrel(&["stream", "--input", &first, "--on-error", "skip", "--output", output.to_str().unwrap(), "--json"]);
    assert!(o.status.success() && stderr(&o).contains("learner rsvm"), "{}", stderr(&o));
    assert_eq!((json(&o)["skipped"].as_u64(), json(&o)["unlabelled"].as_u64()), (Some(1), Some(1)));
    let lines = std::fs::read_to_string(&output).unwrap();
    assert_eq!(lines.lines().count(), 4, "{lines}");
    assert!(lines.starts_with("NaN\n"), "{lines}");
}

/// An f32 projection applies as it was fitted, its file stating the scalar; the projected
/// rows go into a device in place.
#[test]
fn transform_applies_an_f32_model_without_scalar_flag() {
    let dir = Scratch::new("cli", "transform-f32");
    let data = regression_csv(&dir, 60);
    let (model, out, again) = (dir.join("kpca.kestrel"), dir.join("projected.csv"), dir.join("again.csv"));
    let (model_s, out_s, again_s) = (model.to_str().unwrap(), out.to_str().unwrap(), again.to_str().unwrap());
    let data_s = data.to_str().unwrap();
    let fit =
        ["transform", "--input", data_s, "--components", "2", "--centers", "20", "--scalar", "f32", "--model", model_s];
    let o = kestrel(&[&fit[..], &["--output", out_s]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["transform", "--input", data_s, "--apply", model_s, "--output", again_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&again).unwrap());
    let o = kestrel(&[&fit[..], &["--output", "/dev/null"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn transform_projects_rows_and_new_rows_through_its_model() {
    let dir = Scratch::new("cli", "transform");
    let data = regression_csv(&dir, 120);
    let (model, out, again) = (dir.join("kpca.kestrel"), dir.join("projected.csv"), dir.join("again.csv"));
    let (model_s, out_s, again_s) = (model.to_str().unwrap(), out.to_str().unwrap(), again.to_str().unwrap());
    let data_s = data.to_str().unwrap();
    // Exact, then reduced (`--centres`, the alias of `--centers`).
    for centres in [&[][..], &["--centres", "30"][..]] {
        let mut args = vec!["transform", "--input", data_s, "--components", "2", "--model", model_s, "--output", out_s];
        args.extend_from_slice(centres);
        let o = kestrel(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = kestrel(&["transform", "--input", data_s, "--apply", model_s, "--output", again_s]);
        assert!(o.status.success(), "{}", stderr(&o));
        let (first, second) = (std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&again).unwrap());
        assert_eq!(first, second, "the model projects the training rows as the fit did");
        assert!(first.starts_with("pc0,pc1,label\n") && first.lines().count() == 121, "{first}");
    }
    // inspect describes the projection (the last fit: 30 centres of the one feature, 2
    // components); it predicts nothing.
    let info = json(&kestrel(&["inspect", model_s, "--json"]));
    let expected = (Some("kernel-projection"), Some("projection"), Some(1), Some(2), Some(30));
    let got = (
        info["kind"].as_str(),
        info["task"].as_str(),
        info["dim"].as_u64(),
        info["components"].as_u64(),
        info["centers"].as_u64(),
    );
    assert_eq!(got, expected, "{info}");
    let o = kestrel(&["inspect", model_s]);
    assert!(o.status.success() && stdout(&o).contains("1 features to 2 components"), "{}", stdout(&o));
    let o = kestrel(&["predict", "--model", model_s, "--input", data_s]);
    assert!(!o.status.success() && stderr(&o).contains("kestrel transform --apply"), "{}", stderr(&o));
    // Too many components and a KSIR without slices fail.
    let o = kestrel(&["transform", "--input", data_s, "--components", "200"]);
    assert!(!o.status.success() && stderr(&o).contains("components"), "{}", stderr(&o));
    let o = kestrel(&["transform", "--method", "ksir", "--slices", "4", "--input", data_s, "--components", "4"]);
    assert!(!o.status.success() && stderr(&o).contains("components"), "{}", stderr(&o));
    let o = kestrel(&["transform", "--method", "ksir", "--slices", "4", "--input", data_s, "--components", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Without --components: two, and for KSIR the J − 1 its slices have when fewer.
    for (method, slices, header) in [("kpca", "4", "pc0,pc1,label\n"), ("ksir", "2", "pc0,label\n")] {
        let o = kestrel(&["transform", "--method", method, "--slices", slices, "--input", data_s, "--output", out_s]);
        assert!(o.status.success(), "{method}: {}", stderr(&o));
        assert!(std::fs::read_to_string(&out).unwrap().starts_with(header), "{method}");
    }
}

/// Two views of one latent `s`: `x = (cos 2s, sin 2s)` and `y = (s³, eˢ)`, `s` spread
/// over `[-1, 1]`, the label `s` rounded; returns the two CSV files.
fn two_view_csvs(dir: &Path, rows: usize) -> (PathBuf, PathBuf) {
    let (mut first, mut second) = (String::from("a,b,label\n"), String::from("c,d,label\n"));
    for i in 0..rows {
        let s = (i * 61 % rows) as f64 / rows as f64 * 2.0 - 1.0;
        first.push_str(&format!("{:.6},{:.6},{:.0}\n", (2.0 * s).cos(), (2.0 * s).sin(), s));
        second.push_str(&format!("{:.6},{:.6},0\n", s * s * s, s.exp()));
    }
    let paths = (dir.join("view1.csv"), dir.join("view2.csv"));
    std::fs::write(&paths.0, first).unwrap();
    std::fs::write(&paths.1, second).unwrap();
    paths
}

#[test]
fn transform_kcca_pairs_two_views_and_each_model_projects_its_own() {
    let dir = Scratch::new("cli", "kcca");
    let (view1, view2) = two_view_csvs(&dir, 150);
    let (v1, v2) = (view1.to_str().unwrap(), view2.to_str().unwrap());
    let paths = ["u.kestrel", "v.kestrel", "pairs.csv", "u.csv", "v.csv"].map(|f| dir.join(f));
    let [u, v, out, u_out, v_out] = paths.each_ref().map(|p| p.to_str().unwrap());
    let fit = ["transform", "--method", "kcca", "--input", v1, "--input2", v2, "--components", "2"];
    let o = kestrel(&[&fit[..], &["--centers", "40", "--model", u, "--model2", v, "--output", out]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let table = std::fs::read_to_string(&paths[2]).unwrap();
    assert!(table.starts_with("u0,u1,v0,v1,label\n") && table.lines().count() == 151, "{table}");
    let column = |text: &str, c: usize| -> Vec<f64> {
        text.lines().skip(1).map(|line| line.split(',').nth(c).unwrap().parse().unwrap()).collect()
    };
    let (u0, v0) = (column(&table, 0), column(&table, 2));
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (mu, mv) = (mean(&u0), mean(&v0));
    let cov: f64 = u0.iter().zip(&v0).map(|(a, b)| (a - mu) * (b - mv)).sum();
    let (su, sv): (f64, f64) = (u0.iter().map(|a| (a - mu).powi(2)).sum(), v0.iter().map(|b| (b - mv).powi(2)).sum());
    assert!(cov / (su * sv).sqrt() > 0.95, "corr(u0, v0) = {}", cov / (su * sv).sqrt());
    // Each view's model reproduces its own variates on its own file.
    for (model, input, output, first_column) in [(u, v1, u_out, 0), (v, v2, v_out, 2)] {
        let o = kestrel(&["transform", "--input", input, "--apply", model, "--output", output]);
        assert!(o.status.success(), "{}", stderr(&o));
        let again = std::fs::read_to_string(output).unwrap();
        assert_eq!(column(&again, 0), column(&table, first_column));
        assert_eq!(column(&again, 1), column(&table, first_column + 1));
    }
    // Views of different lengths, a missing second view, a second view without kcca.
    let short = dir.join("short.csv");
    let text = std::fs::read_to_string(&view2).unwrap();
    std::fs::write(&short, text.lines().take(100).collect::<Vec<_>>().join("\n") + "\n").unwrap();
    let o = kestrel(&[&fit[..5], &["--input2", short.to_str().unwrap(), "--components", "1"]].concat());
    let message = stderr(&o);
    assert!(!o.status.success() && message.contains("has 99 rows") && message.contains("has 150"), "{message}");
    let o = kestrel(&["transform", "--method", "kcca", "--input", v1, "--components", "1"]);
    assert!(!o.status.success() && stderr(&o).contains("--input2"), "{}", stderr(&o));
    let o = kestrel(&["transform", "--input", v1, "--input2", v2, "--components", "1"]);
    assert!(!o.status.success() && stderr(&o).contains("--method kcca"), "{}", stderr(&o));
}

/// Two concentric rings (radii 1 and 3) of `rows / 2` points each, a little noise, the
/// ring as the label; k-means on the plane cannot separate them, the kNN graph does.
fn rings_csv(dir: &Path, rows: usize) -> PathBuf {
    let mut text = String::from("x,y,ring\n");
    for i in 0..rows {
        let (radius, angle) = (if i % 2 == 0 { 1.0 } else { 3.0 }, i as f64 * 0.37);
        let wobble = 0.05 * ((i * 7919 % 101) as f64 / 50.0 - 1.0);
        text.push_str(&format!(
            "{:.5},{:.5},{}\n",
            (radius + wobble) * angle.cos(),
            (radius + wobble) * angle.sin(),
            i % 2
        ));
    }
    let path = dir.join("rings.csv");
    std::fs::write(&path, text).unwrap();
    path
}

/// The polynomial kernel's `--gamma auto` and reduced set: a quadratic kernel separates
/// two rings (the class is `x² + y²` against a threshold), with or without an offset. Its
/// alignment chooses no width (the same at every width without an offset), so the median
/// heuristic's width is searched, and IRSVM's threshold is relative to the kernel's scale:
/// an absolute one kept two centres once the width made every kernel value small.
#[test]
fn a_quadratic_kernel_separates_rings_at_its_automatic_width() {
    let dir = Scratch::new("cli", "poly-rings");
    let (train, test) = (rings_csv(&dir, 400), dir.join("test.csv"));
    let text = std::fs::read_to_string(&train).unwrap();
    // Every other row of the same rings, half a step of angle further on.
    let shifted: Vec<String> = text
        .lines()
        .skip(1)
        .step_by(3)
        .map(|line| {
            let values: Vec<f64> = line.split(',').map(|v| v.parse().unwrap()).collect();
            let (c, s) = (0.185f64.cos(), 0.185f64.sin());
            format!("{:.5},{:.5},{}", values[0] * c - values[1] * s, values[0] * s + values[1] * c, values[2])
        })
        .collect();
    std::fs::write(&test, format!("x,y,ring\n{}\n", shifted.join("\n"))).unwrap();
    let model = dir.join("poly.kestrel");
    for learner in ["rsvm", "lssvm"] {
        for coef0 in ["0", "1"] {
            let args = ["train", "--learner", learner, "--kernel", "poly", "--degree", "2", "--coef0", coef0];
            let o =
                kestrel(&[&args[..], &["--input", train.to_str().unwrap(), "--out", model.to_str().unwrap()]].concat());
            assert!(o.status.success(), "{}", stderr(&o));
            let o = kestrel(&["eval", "--model", model.to_str().unwrap(), "--input", test.to_str().unwrap(), "--json"]);
            let accuracy = json(&o)["accuracy"].as_f64().unwrap();
            assert!(accuracy > 0.97, "{learner}, coef0 {coef0}: accuracy {accuracy}");
        }
    }
}

#[test]
fn cluster_spectral_separates_rings_kmeans_and_npkl_run_as_told() {
    let dir = Scratch::new("cli", "cluster");
    let data = rings_csv(&dir, 300);
    let (out, report) = (dir.join("clusters.csv"), dir.join("clusters.html"));
    let (data, out_s, report_s) = (data.to_str().unwrap(), out.to_str().unwrap(), report.to_str().unwrap());
    let rand = |method: &str, extra: &[&str]| {
        let o =
            kestrel(&[&["cluster", "--input", data, "--clusters", "2", "--method", method, "--json"], extra].concat());
        assert!(o.status.success(), "{method} {extra:?}: {}", stderr(&o));
        let summary = json(&o);
        summary["rand"].as_f64().unwrap_or_else(|| panic!("{summary}"))
    };
    for scalar in ["f64", "f32"] {
        assert_eq!(rand("spectral", &["--scalar", scalar, "--output", out_s, "--report", report_s]), 1.0, "{scalar}");
        let table = std::fs::read_to_string(&out).unwrap();
        assert!(table.starts_with("row,cluster\n0,") && table.lines().count() == 301, "{table}");
        let page = std::fs::read_to_string(&report).unwrap();
        assert!(page.contains("spectral clustering found") && page.contains("RAND index 100.00 %"), "{scalar}");
    }
    let kmeans = rand("kmeans", &[]);
    assert!(kmeans < 0.6, "k-means on the plane cut the rings apart: RAND {kmeans}");
    let npkl = rand("npkl", &["--constraints-from-labels", "0.1"]);
    assert!(npkl > kmeans, "npkl {npkl} vs k-means {kmeans}");
    // Settings of another method, or impossible ones, are refused before any work (exit 2).
    for (extra, says) in [
        (&["--loss", "hinge"][..], "--loss is a setting of --method npkl"),
        (&["--method", "kmeans", "--budget", "1MiB"][..], "--budget is a setting of --method spectral"),
        (&["--method", "npkl", "--scalar", "f32"][..], "runs in f64"),
    ] {
        let o = kestrel(&[&["cluster", "--input", data, "--clusters", "2"], extra].concat());
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{extra:?}: {}", stderr(&o));
    }
    let o = kestrel(&["cluster", "--input", data, "--clusters", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = kestrel(&["cluster", "--input", data, "--clusters", "2", "--budget", "10KiB"]);
    assert!(!o.status.success() && stderr(&o).contains("over the budget"), "{}", stderr(&o));
    let o = kestrel(&["cluster", "--input", data, "--clusters", "2", "--neighbors", "300"]);
    assert!(!o.status.success() && stderr(&o).contains("neighbors must be between 1 and 299"), "{}", stderr(&o));
}

#[test]
fn transform_eigenmap_embeds_rows_and_lpp_projects_new_ones() {
    let dir = Scratch::new("cli", "spectral-transform");
    let data = rings_csv(&dir, 200);
    let (model, out, again) = (dir.join("lpp.kestrel"), dir.join("lpp.csv"), dir.join("again.csv"));
    let (data, model_s, out_s, again_s) =
        (data.to_str().unwrap(), model.to_str().unwrap(), out.to_str().unwrap(), again.to_str().unwrap());
    let o = kestrel(&["transform", "--input", data, "--method", "eigenmap", "--components", "2", "--neighbors", "8"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    assert!(table.starts_with("y0,y1,label\n") && table.lines().count() == 201, "{table}");
    // The rings' two components of the graph: the first coordinate alone tells them apart.
    let first: Vec<(f64, String)> = table
        .lines()
        .skip(1)
        .map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            (fields[0].parse().unwrap(), fields[2].to_string())
        })
        .collect();
    let inner_positive = first.iter().filter(|(y, ring)| (*y > 0.0) == (ring == "0")).count();
    assert!(inner_positive == 0 || inner_positive == 200, "{inner_positive} of 200 on their ring's side");
    let o = kestrel(&["transform", "--input", data, "--method", "eigenmap", "--components", "2", "--model", model_s]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--method lpp"), "{}", stderr(&o));
    let o = kestrel(&[
        "transform",
        "--input",
        data,
        "--method",
        "lpp",
        "--components",
        "2",
        "--model",
        model_s,
        "--output",
        out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["transform", "--input", data, "--apply", model_s, "--output", again_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (fitted, applied) = (std::fs::read_to_string(&out).unwrap(), std::fs::read_to_string(&again).unwrap());
    assert_eq!(fitted, applied, "the LPP model projects the training rows as the fit did");
    assert!(fitted.starts_with("pc0,pc1,label\n"), "{fitted}");
    let o = kestrel(&["transform", "--input", data, "--method", "lpp", "--components", "3"]);
    assert!(!o.status.success() && stderr(&o).contains("between 1 and the number of features (2)"), "{}", stderr(&o));
}

/// `--skip-column` leaves a CSV's named columns out of `train`, `predict` and `eval`: the
/// same model and predictions as the file without them. A value that is not a number names
/// its column and the flag; a column the header lacks, the label column and a LibSVM input
/// are refused.
/// A model trained on a CSV with a header carries its features' names, and reads a CSV's
/// columns by them: the same predictions whatever the columns' order, and a clear refusal
/// for a CSV that lacks one of them or has a column the model does not know — never one
/// column taken for another. A model of unnamed features (LibSVM rows) reads by position,
/// as before.
#[test]
fn features_are_read_by_the_names_the_model_was_trained_with() {
    let dir = Scratch::new("cli", "feature-names");
    let (mut ordered, mut swapped) = (String::from("temp,humidity,label\n"), String::from("humidity,temp,label\n"));
    for i in 0..200 {
        let (temp, humidity) = (10.0 + (i * 37 % 101) as f64 / 5.0, 30.0 + (i * 53 % 97) as f64 / 2.0);
        let label = if temp > 20.0 { 1 } else { -1 };
        ordered.push_str(&format!("{temp},{humidity},{label}\n"));
        swapped.push_str(&format!("{humidity},{temp},{label}\n"));
    }
    let csv = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let (ordered, swapped) = (csv("ordered.csv", &ordered), csv("swapped.csv", &swapped));
    let model = dir.join("m.kestrel");
    let model = model.to_str().unwrap();
    for learner in ["svm", "rsvm"] {
        let o = kestrel(&["train", "--learner", learner, "--input", &ordered, "--out", model]);
        assert!(o.status.success(), "{}", stderr(&o));
        let o = kestrel(&["inspect", model, "--json"]);
        assert_eq!(json(&o)["feature_names"], serde_json::json!(["temp", "humidity"]));
        let (a, b) = (
            kestrel(&["predict", "--model", model, "--input", &ordered]),
            kestrel(&["predict", "--model", model, "--input", &swapped]),
        );
        assert!(a.status.success() && b.status.success(), "{}", stderr(&b));
        assert_eq!((stdout(&a).lines().count(), stdout(&a)), (200, stdout(&b)), "{learner}");
        assert!(
            stderr(&b)
                .contains("swapped.csv lists the model's features in another order: they are read by their names")
        );
        assert!(!stderr(&a).contains("another order"), "{}", stderr(&a));
    }
    let missing = csv("missing.csv", "temp,label\n20,1\n");
    let o = kestrel(&["eval", "--model", model, "--input", &missing]);
    let message = "missing.csv:1:1: no column named `humidity`, a feature of the model (its columns: `temp`, `label`)";
    assert!(!o.status.success() && stderr(&o).contains(message), "{}", stderr(&o));
    let renamed = csv("renamed.csv", "temp,pressure,label\n20,1000,1\n");
    let o = kestrel(&["eval", "--model", model, "--input", &renamed]);
    let message = "renamed.csv:1:1: column `pressure` is not one of the model's features (`temp`, `humidity`)";
    assert!(!o.status.success() && stderr(&o).contains(message), "{}", stderr(&o));
    let extra = csv("extra.csv", "wind,humidity,temp,label\n3,50,25,1\n");
    let o = kestrel(&["predict", "--model", model, "--input", &extra]);
    let message = "extra.csv:1:1: column `wind` is not one of the model's features (`temp`, `humidity`): leave it out \
                   with --skip-column wind";
    assert!(!o.status.success() && stderr(&o).contains(message), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model, "--input", &extra, "--skip-column", "wind"]);
    let p = kestrel(&["predict", "--model", model, "--input", &csv("one.csv", "temp,humidity,label\n25,50,1\n")]);
    assert!(o.status.success() && p.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&p));

    // LibSVM rows name no feature: such a model reads a CSV by position.
    let libsvm = dir.join("rows.libsvm");
    std::fs::write(&libsvm, "1 1:25 2:50\n-1 1:12 2:40\n1 1:30 2:35\n-1 1:8 2:60\n").unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", libsvm.to_str().unwrap(), "--out", model]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&kestrel(&["inspect", model, "--json"])).get("feature_names"), None);
    let o = kestrel(&["eval", "--model", model, "--input", &swapped]);
    assert!(o.status.success() && !stderr(&o).contains("another order"), "{}", stderr(&o));
}

#[test]
fn skipped_columns_are_left_out_of_training_and_prediction() {
    let dir = Scratch::new("cli", "skip-column");
    let (with, without) = (dir.join("with.csv"), dir.join("without.csv"));
    let (mut logged, mut plain) = (String::from("time,x,id,y\n"), String::from("x,y\n"));
    for i in 0..120 {
        let x = (i * 61 % 199) as f64 / 50.0 - 2.0;
        let y = (2.0 * x).sin();
        logged.push_str(&format!("2026-11-28T10:{:02}:00,{x:.5},sensor-{i},{y:.5}\n", i % 60));
        plain.push_str(&format!("{x:.5},{y:.5}\n"));
    }
    std::fs::write(&with, logged).unwrap();
    std::fs::write(&without, plain).unwrap();
    let (with, without) = (with.to_str().unwrap(), without.to_str().unwrap());
    let (skipping, plain_model) = (dir.join("skipping.kestrel"), dir.join("plain.kestrel"));
    let (skipping, plain_model) = (skipping.to_str().unwrap(), plain_model.to_str().unwrap());
    let skip = ["--skip-column", "time", "--skip-column", "id"];
    let o = kestrel(&[&["train", "--learner", "krr", "--input", with, "--out", skipping][..], &skip].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = kestrel(&["train", "--learner", "krr", "--input", without, "--out", plain_model]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(skipping).unwrap(), std::fs::read(plain_model).unwrap(), "the same model");
    let o = kestrel(&[&["predict", "--model", skipping, "--input", with][..], &skip].concat());
    let p = kestrel(&["predict", "--model", plain_model, "--input", without]);
    assert!(o.status.success() && p.status.success(), "{} {}", stderr(&o), stderr(&p));
    assert_eq!((stdout(&o).lines().count(), stdout(&o)), (120, stdout(&p)));
    let o = kestrel(&[&["eval", "--model", skipping, "--input", with, "--json"][..], &skip].concat());
    let p = kestrel(&["eval", "--model", plain_model, "--input", without, "--json"]);
    assert_eq!(json(&o)["mse"], json(&p)["mse"], "{}", stderr(&o));

    let o = kestrel(&["train", "--learner", "krr", "--input", with, "--out", skipping]);
    assert!(!o.status.success());
    let expected = "with.csv:2:1: `2026-11-28T10:00:00` is a date or a time, not a number (column `time`): \
                    --skip-column time leaves it out";
    assert!(stderr(&o).contains(expected), "{}", stderr(&o));
    for (column, message) in [
        ("nope", "with.csv:1:1: no column named `nope` to skip in the header (its columns: `time`, `x`, `id`, `y`)"),
        ("y", "with.csv:1:1: `y` is the label column: it cannot be skipped"),
    ] {
        let o = kestrel(&["eval", "--model", skipping, "--input", with, "--skip-column", column]);
        assert!(!o.status.success() && stderr(&o).contains(message), "{}", stderr(&o));
    }
    let libsvm = binary_libsvm(&dir, 10);
    let o = kestrel(&[
        "train",
        "--learner",
        "svm",
        "--input",
        libsvm.to_str().unwrap(),
        "--skip-column",
        "x",
        "--out",
        skipping,
    ]);
    let message = "columns are skipped by their names in a CSV header: this input has none";
    assert!(!o.status.success() && stderr(&o).contains(message), "{}", stderr(&o));
}

/// The commands that learn without labels read unlabelled rows with `--label-column none`
/// (every column a feature); without it `transform` says that the last column was read as
/// the label.
#[test]
fn transform_and_cluster_read_unlabelled_rows() {
    let dir = Scratch::new("cli", "unlabelled");
    let rows = dir.join("rows.csv");
    let mut text = String::from("a,b,c\n");
    for i in 0..40 {
        let t = f64::from(i) / 40.0 * std::f64::consts::TAU;
        let ring = if i % 2 == 0 { 1.0 } else { 3.0 };
        text.push_str(&format!("{:.5},{:.5},{:.5}\n", ring * t.cos(), ring * t.sin(), f64::from(i % 5)));
    }
    std::fs::write(&rows, text).unwrap();
    let (rows, model) = (rows.to_str().unwrap(), dir.join("kpca.kestrel"));
    let model = model.to_str().unwrap();
    let kpca = ["transform", "--method", "kpca", "--input", rows, "--model", model, "--output", "/dev/null"];
    let o = kestrel(&[&kpca[..], &["--label-column", "none"]].concat());
    assert!(o.status.success() && !stderr(&o).contains("note:"), "{}", stderr(&o));
    let inspected = stdout(&kestrel(&["inspect", model]));
    assert!(inspected.contains("3 features to 2 components"), "{inspected}");
    let o = kestrel(&kpca);
    assert!(o.status.success(), "{}", stderr(&o));
    let note = "note: the last column of";
    assert!(
        stderr(&o).contains(note) && stderr(&o).contains("(2 features left); --label-column none"),
        "{}",
        stderr(&o)
    );
    let o = kestrel(&["cluster", "--input", rows, "--clusters", "2", "--label-column", "none", "--json"]);
    assert_eq!((json(&o)["dim"].as_u64(), json(&o)["n"].as_u64()), (Some(3), Some(40)), "{}", stderr(&o));
}

/// Tab- and semicolon-separated files read as CSV: by the extension `.tsv`, or by their
/// header, which also tells the delimiter; a model trained on one scores the other. The
/// semicolon file is written as a spreadsheet writes it where the comma is the decimal
/// mark (`1,5`), and a model trained on it is the tab-separated file's, byte for byte.
#[test]
fn tab_and_semicolon_separated_files_are_read() {
    let dir = Scratch::new("cli", "separated");
    let rows: String = (0..60)
        .map(|i| {
            let (a, b) = (f64::from(i % 7) / 2.0 - 1.5, f64::from(i % 5) / 4.0 - 0.5);
            format!("{a}\t{b}\t{}\n", u8::from(a * b > 0.0))
        })
        .collect();
    assert!(rows.contains("-1.5\t0.25\t"), "{rows}");
    let (tsv, semicolons) = (dir.join("rows.tsv"), dir.join("rows.txt"));
    std::fs::write(&tsv, format!("a\tb\ty\n{rows}")).unwrap();
    std::fs::write(&semicolons, format!("a;b;y\n{}", rows.replace('\t', ";").replace('.', ","))).unwrap();
    let (model, from_semicolons) = (dir.join("m.kestrel"), dir.join("semicolons.kestrel"));
    let (tsv, semicolons, model) = (tsv.to_str().unwrap(), semicolons.to_str().unwrap(), model.to_str().unwrap());
    let o = kestrel(&["train", "--learner", "rsvm", "--input", tsv, "--out", model]);
    assert!(o.status.success() && stderr(&o).contains("on 60 rows of 2 features"), "{}", stderr(&o));
    let scores = |input: &str| json(&kestrel(&["eval", "--model", model, "--input", input, "--json"]));
    let (on_tsv, on_semicolons) = (scores(tsv), scores(semicolons));
    assert_eq!(on_tsv["n"].as_u64(), Some(60), "{on_tsv}");
    assert_eq!(on_tsv, on_semicolons);
    let o = kestrel(&["train", "--learner", "rsvm", "--input", semicolons, "--out", from_semicolons.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(model).unwrap(), std::fs::read(&from_semicolons).unwrap());
}

/// rsvm without `--gamma` races the widths 1/d, 1/(4d) and 4/d through its first window
/// and names the one that went on in the summary's `chosen`; a given width is learned
/// alone, and names none.
#[test]
fn stream_rsvm_races_its_widths_unless_given_one() {
    let dir = Scratch::new("cli", "race");
    let rings = rings_csv(&dir, 1200);
    let rings = rings.to_str().unwrap();
    let o = kestrel(&["stream", "--learner", "rsvm", "--input", rings, "--json"]);
    let summary: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    let gamma = summary["chosen"]["gamma"].as_f64().unwrap_or_else(|| panic!("{summary}"));
    assert!([0.5, 0.125, 2.0].contains(&gamma) && summary["accuracy"].as_f64() > Some(0.9), "{summary}");
    let o = kestrel(&["stream", "--learner", "rsvm", "--input", rings, "--json", "--gamma", "0.5"]);
    let summary: serde_json::Value = serde_json::from_str(stdout(&o).lines().last().unwrap()).unwrap();
    assert!(summary.get("chosen").is_none() && summary["n"] == 1200, "{summary}");
}

/// slkl without `--nu` races ν = 0.01, 1 and 100 through its first window and names the one
/// that went on in `chosen`; a given ν is learned alone and names none. A checkpoint of a
/// run given `--nu` (as every slkl checkpoint before the race recorded 0.01) resumes with
/// it, and without it is refused, naming the flag.
#[test]
fn stream_slkl_races_its_nu_unless_given_one() {
    let dir = Scratch::new("cli", "nu-race");
    let regression = regression_csv(&dir, 600);
    let regression = regression.to_str().unwrap();
    let summary = json(&kestrel(&["stream", "--learner", "slkl", "--input", regression, "--json"]));
    let nu = summary["chosen"]["nu"].as_f64().unwrap_or_else(|| panic!("{summary}"));
    // The targets' variance is 1.89: a tenth of it is learning.
    assert!([0.01, 1.0, 100.0].contains(&nu) && summary["mse"].as_f64() < Some(0.19), "{summary}");
    let checkpoint = dir.str("given.ckpt");
    let given = ["stream", "--learner", "slkl", "--input", regression, "--json", "--nu", "0.01"];
    let summary = json(&kestrel(&[&given[..], &["--checkpoint", &checkpoint]].concat()));
    assert!(summary.get("chosen").is_none() && summary["n"] == 600, "{summary}");
    let o = kestrel(&["stream", "--learner", "slkl", "--input", regression, "--checkpoint", &checkpoint, "--resume"]);
    assert!(stderr(&o).contains("--nu is `0.01` in the checkpoint but unset now"), "{}", stderr(&o));
    let resumed = kestrel(&[&given[..], &["--checkpoint", &checkpoint, "--resume"]].concat());
    assert!(resumed.status.success(), "{}", stderr(&resumed));
}

/// The summary gives the coordinate steps per sample that the stopping rule (`--eps`) and
/// the cap (`--steps-per-sample`) left: fewer at a looser tolerance, and at most the cap
/// — for rsvm, whose hand-over feeds its SVM the warm-up's samples on one arrival, the cap
/// for each of them too — and none for the detector, which takes no steps. (The costs and
/// the width are given: a race's candidates each take steps.)
#[test]
fn stream_reports_its_steps_per_sample() {
    let dir = Scratch::new("cli", "steps");
    let rings = rings_csv(&dir, 1200);
    let rings = rings.to_str().unwrap();
    let steps = |extra: &[&str]| {
        let base = ["stream", "--input", rings, "--json", "--c", "1", "--gamma", "0.5"];
        let summary = json(&kestrel(&[&base[..], extra].concat()));
        summary.get("steps_per_sample").and_then(serde_json::Value::as_f64)
    };
    for (learner, handed_over) in [("svm", 0.0), ("rsvm", 256.0)] {
        let (tight, default) = (steps(&["--learner", learner, "--eps", "0.1"]), steps(&["--learner", learner]));
        let (tight, default) = (tight.unwrap(), default.unwrap());
        assert!(0.0 < default && default < tight, "{learner}: {default} {tight}");
        let capped = steps(&["--learner", learner, "--steps-per-sample", "5"]).unwrap();
        assert!(0.0 < capped && capped <= 5.0 * (1200.0 + handed_over) / 1200.0, "{learner}: {capped}");
    }
    assert_eq!(steps(&["--learner", "novelty"]), None);
}

/// The warning line naming the flags a successful run's learner ignored, if any.
fn ignored_flags_warning(args: &[&str]) -> Option<String> {
    let o = kestrel(args);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stderr(&o);
    let told: Vec<&str> = said.lines().filter(|line| line.contains("takes no")).collect();
    (!told.is_empty()).then(|| told.join("\n"))
}

/// A flag the learner takes no part of is told of, not silently dropped: novelty has no
/// stopping tolerance or cost, svm no kernel or ν, slkl no bias or classes, the Gaussian
/// kernel no degree; flags the learner takes are not named.
#[test]
fn stream_tells_of_flags_its_learner_ignores() {
    let dir = Scratch::new("cli", "ignored-flags");
    let rings = rings_csv(&dir, 300);
    let rings = rings.to_str().unwrap();
    let warning =
        |extra: &[&str]| ignored_flags_warning(&[&["stream", "--input", rings, "--json"][..], extra].concat());
    let told = warning(&["--learner", "novelty", "--eps", "0.5", "--c", "2", "--delta", "0.2"]).unwrap();
    assert!(told.contains("--learner novelty takes no --eps, --c: ignored"), "{told}");
    let told = warning(&["--learner", "svm", "--gamma", "0.1", "--nu", "0.5", "--c", "1"]).unwrap();
    assert!(told.contains("--learner svm takes no --kernel/--gamma, --nu: ignored"), "{told}");
    let told = warning(&["--learner", "slkl", "--memory", "0", "--learn", "all"]).unwrap();
    assert!(told.contains("--learner slkl takes no --memory, --learn: ignored"), "{told}");
    let told = warning(&["--learner", "slkl", "--bias", "2", "--classes", "3", "--degree", "2"]).unwrap();
    assert!(told.contains("--learner slkl takes no --bias, --classes: ignored"), "{told}");
    assert!(told.contains("--kernel rbf takes no --degree/--coef0: ignored"), "{told}");
    let own = ["--learner", "rsvm", "--c", "1", "--gamma", "0.5", "--eps", "0.5", "--delta", "0.2", "--no-renew"];
    assert_eq!(warning(&own), None);
    let own =
        ["--learner", "rsvm", "--kernel", "poly", "--degree", "2", "--coef0", "1", "--bias", "0", "--classes", "2"];
    assert_eq!(warning(&own), None);
}

/// `kestrel train` tells of the flags its learner takes no part of too: the linear SVM has
/// no kernel or ν, kernel ridge no cost or parts, slkl no selection threshold, lssvm no
/// loss, bias or tolerance; a learner's own flags are not named.
#[test]
fn train_tells_of_flags_its_learner_ignores() {
    let dir = Scratch::new("cli", "train-ignored-flags");
    let (rings, regression) = (rings_csv(&dir, 200), regression_csv(&dir, 150));
    let (rings, regression) = (rings.to_str().unwrap(), regression.to_str().unwrap());
    let out = dir.join("m.kestrel");
    let warning = |input: &str, extra: &[&str]| {
        ignored_flags_warning(&[&["train", "--input", input, "--out", out.to_str().unwrap()][..], extra].concat())
    };
    let told = warning(rings, &["--learner", "svm", "--gamma", "0.5", "--nu", "0.1", "--c", "2"]).unwrap();
    assert!(told.contains("--learner svm takes no --kernel/--gamma, --nu: ignored"), "{told}");
    let told = warning(regression, &["--learner", "krr", "--c", "2", "--partitions", "3", "--lambda", "0.1"]).unwrap();
    assert!(told.contains("--learner krr takes no --c, --partitions: ignored"), "{told}");
    let told = warning(regression, &["--learner", "slkl", "--delta", "0.01", "--centers", "16"]).unwrap();
    assert!(told.contains("--learner slkl takes no --select/--delta: ignored"), "{told}");
    let told = warning(rings, &["--learner", "lssvm", "--eps", "0.01", "--bias", "0", "--loss", "hinge"]).unwrap();
    assert!(told.contains("--learner lssvm takes no --loss, --bias, --eps: ignored"), "{told}");
    let told = warning(rings, &["--learner", "rsvm", "--coef0", "1", "--c", "1", "--gamma", "0.5"]).unwrap();
    assert!(told == "kestrel: warning: --kernel rbf takes no --degree/--coef0: ignored", "{told}");
    let own = ["--learner", "rsvm", "--c", "1", "--gamma", "0.5", "--centers", "16", "--delta", "0.001"];
    assert_eq!(warning(rings, &own), None);
}

/// svm without `--c` races the costs 1, 0.1 and 0.01 through its first window: on a linear
/// stream with a quarter of its labels flipped a smaller cost predicts better and goes on,
/// named in `chosen`, and the model it writes is the one `--c` with that cost learns alone
/// (its class probabilities apart: their sigmoids learned from the race's predictions).
#[test]
fn stream_svm_races_its_costs_unless_given_one() {
    let dir = Scratch::new("cli", "race-costs");
    let mut text = String::from("a,b,label\n");
    for i in 0..1500u64 {
        let (a, b) = ((i * 7919 % 1000) as f64 / 500.0 - 1.0, (i * 104_729 % 997) as f64 / 498.5 - 1.0);
        let flipped = (i * 2_654_435_761) % 97 < 24;
        text.push_str(&format!("{a:.4},{b:.4},{}\n", u8::from((a + b > 0.0) != flipped)));
    }
    let data = dir.join("noisy.csv");
    std::fs::write(&data, text).unwrap();
    let (data, raced_model, alone_model) = (data.to_str().unwrap(), dir.join("raced.kst"), dir.join("alone.kst"));
    let run = |extra: &[&str], model: &Path| {
        let base = ["stream", "--learner", "svm", "--input", data, "--json", "--out", model.to_str().unwrap()];
        let o = kestrel(&[&base[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<serde_json::Value>(stdout(&o).lines().last().unwrap()).unwrap()
    };
    let summary = run(&[], &raced_model);
    let c = summary["chosen"]["c"].as_f64().unwrap_or_else(|| panic!("{summary}"));
    assert!([0.1, 0.01].contains(&c), "{summary}");
    let alone = run(&["--c", &c.to_string()], &alone_model);
    assert!(alone.get("chosen").is_none() && alone["n"] == 1500, "{alone}");
    let (raced, alone) = (std::fs::read(&raced_model).unwrap(), std::fs::read(&alone_model).unwrap());
    let (raced, alone) = (Envelope::parse(&raced).unwrap(), Envelope::parse(&alone).unwrap());
    assert_eq!((raced.calibration_count(), alone.calibration_count()), (1, 1));
    assert_eq!(Envelope { calibration: &[], ..raced }, Envelope { calibration: &[], ..alone });
}

/// On fewer rows than the default neighbours, the graph commands take every other row as a
/// neighbour and say so; a number given on the command line is kept, and refused when the
/// rows are too few for it.
#[test]
fn graph_commands_fit_their_default_neighbours_to_few_rows() {
    let dir = Scratch::new("cli", "few-rows-graph");
    let rows = dir.join("rows.csv");
    let points = [(0.0, 0.0), (0.1, 0.0), (0.0, 0.1), (0.1, 0.1), (5.0, 5.0), (5.1, 5.0), (5.0, 5.1), (5.1, 5.1)];
    let text: String = points.iter().enumerate().map(|(i, (a, b))| format!("{a},{b},{}\n", i / 4)).collect();
    std::fs::write(&rows, format!("a,b,y\n{text}")).unwrap();
    let rows = rows.to_str().unwrap();
    let o = kestrel(&["cluster", "--input", rows, "--clusters", "2", "--json"]);
    assert_eq!((json(&o)["neighbors"].as_u64(), json(&o)["rand"].as_f64()), (Some(7), Some(1.0)), "{}", stderr(&o));
    let o = kestrel(&["transform", "--method", "eigenmap", "--input", rows, "--output", "/dev/null"]);
    assert!(o.status.success() && stderr(&o).contains("on the 7-NN graph"), "{}", stderr(&o));
    let o = kestrel(&[
        "npkl",
        "--input",
        rows,
        "--constraints-from-labels",
        "0.5",
        "--clusters",
        "2",
        "--loss",
        "hinge",
        "--json",
    ]);
    assert_eq!(json(&o)["neighbors"].as_u64(), Some(5), "{}", stderr(&o));
    let few = dir.join("few.csv");
    std::fs::write(
        &few,
        format!("a,b,y\n{}", text.lines().skip(2).take(4).map(|l| format!("{l}\n")).collect::<String>()),
    )
    .unwrap();
    let o = kestrel(&[
        "npkl",
        "--input",
        few.to_str().unwrap(),
        "--constraints-from-labels",
        "0.5",
        "--loss",
        "hinge",
        "--clusters",
        "2",
        "--json",
    ]);
    assert_eq!(json(&o)["neighbors"].as_u64(), Some(3), "{}", stderr(&o));
    let o = kestrel(&["cluster", "--input", rows, "--clusters", "2", "--neighbors", "8"]);
    assert!(!o.status.success() && stderr(&o).contains("neighbors must be between 1 and 7"), "{}", stderr(&o));
}

/// Readings in units of very different sizes: three bands 1 apart in `b` (in metres, say)
/// under a nuisance `a` spread over 1000 (in millimetres). Raw, `a` sets the distances (a
/// note says so) and the bands are lost; `--scale` standardises both features, and the
/// clusters found are those of the rows standardised here beforehand, the bands exactly;
/// `transform --scale` projects them as it projects those rows, and its model file
/// standardises the rows `--apply` takes in their own units.
#[test]
fn cluster_npkl_and_transform_standardise_readings_under_scale() {
    let dir = Scratch::new("cli", "cluster-scale");
    let rows: Vec<(f64, f64, usize)> =
        (0..120).map(|i| ((i * 37 % 101) as f64 * 10.0, (i % 3) as f64 + (i * 7 % 11) as f64 / 100.0, i % 3)).collect();
    let write = |name: &str, rows: &[(f64, f64, usize)]| {
        let mut text = String::from("a,b,band\n");
        for (a, b, band) in rows {
            text.push_str(&format!("{a},{b},{band}\n"));
        }
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let standardised = |column: &dyn Fn(&(f64, f64, usize)) -> f64| -> Vec<f64> {
        let values: Vec<f64> = rows.iter().map(column).collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let sd = (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / values.len() as f64).sqrt();
        values.iter().map(|v| (v - mean) / sd).collect()
    };
    let (a, b) = (standardised(&|r| r.0), standardised(&|r| r.1));
    let scaled_rows: Vec<(f64, f64, usize)> = rows.iter().enumerate().map(|(i, r)| (a[i], b[i], r.2)).collect();
    let (raw, scaled) = (write("raw.csv", &rows), write("scaled.csv", &scaled_rows));
    let assignments = |input: &str, extra: &[&str]| {
        let out = dir.join("clusters.csv");
        let cluster = ["cluster", "--input", input, "--clusters", "3", "--json", "--output", out.to_str().unwrap()];
        let o = kestrel(&[&cluster[..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        (json(&o), stderr(&o), std::fs::read_to_string(&out).unwrap())
    };
    let (summary, notes, _) = assignments(&raw, &[]);
    assert!(notes.contains("note: the features' scales differ widely"), "{notes}");
    assert!(summary["rand"].as_f64().unwrap() < 0.9 && summary["scaled"] == false, "{summary}");
    let (summary, notes, clusters) = assignments(&raw, &["--scale"]);
    assert!(!notes.contains("note:") && summary["scaled"] == true, "{notes}");
    assert_eq!(summary["rand"].as_f64(), Some(1.0), "{summary}");
    assert_eq!(clusters, assignments(&scaled, &[]).2);
    let npkl = ["npkl", "--input", &raw, "--constraints-from-labels", "0.2", "--loss", "hinge", "--clusters", "3"];
    let o = kestrel(&[&npkl[..], &["--scale", "--json"]].concat());
    assert!(o.status.success() && json(&o)["scaled"] == true && !stderr(&o).contains("note:"), "{}", stderr(&o));
    // transform: the same note and the same standardisation, which the model file keeps
    // and --apply uses on rows in their own units.
    let model = dir.join("kpca.kestrel");
    let model = model.to_str().unwrap();
    let project = |input: &str, extra: &[&str]| {
        let o = kestrel(&[&["transform", "--input", input][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o))
    };
    assert!(project(&raw, &[]).1.contains("note: the features' scales differ widely"));
    let (fitted, notes) = project(&raw, &["--scale", "--model", model]);
    assert!(!notes.contains("differ widely") && notes.contains("2 features, standardised"), "{notes}");
    assert_eq!(project(&raw, &["--apply", model]).0, fitted, "--apply standardises as the fit did");
    let numbers = |table: &str| -> Vec<f64> {
        table.lines().skip(1).flat_map(|line| line.split(',').map(|v| v.parse::<f64>().unwrap())).collect()
    };
    let by_hand = numbers(&project(&scaled, &[]).0);
    for (got, expected) in numbers(&fitted).iter().zip(&by_hand) {
        assert!((got - expected).abs() < 1e-9, "{got} against {expected} from rows standardised by hand");
    }
    let o = kestrel(&["inspect", model, "--json"]);
    assert_eq!(json(&o)["scaled"], true, "{}", stdout(&o));
}

/// `train`'s default `--scale auto` standardises raw features when the leave-one-out error
/// of its width search is lower so — wine, where proline's variance is 10⁵ times the
/// others' — and takes them as they come when it is not (iris); it says which, with both
/// scores, in `--json` too; its model is the one `--scale` or `--scale off` writes; `tune`
/// names the flag that rebuilds its best model; rows standardised already are not
/// compared, nor rows without a score (constant targets), whose fit says why as it does
/// unscaled; and `--relevance` refuses `--scale off`.
#[test]
fn scale_auto_standardises_when_leave_one_out_says_so() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");
    let dir = Scratch::new("cli", "scale_auto");
    let model = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let train = |input: &str, out: &str, extra: &[&str]| {
        let o = kestrel(&[&["train", "--learner", "rsvm", "--input", input, "--out", out], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        (o, std::fs::read(out).unwrap())
    };
    for (set, standardised, flag, told) in [
        ("wine", true, "--scale", "--scale auto standardised the features: leave-one-out errors "),
        ("iris", false, "--scale off", "--scale auto took the features as they come: leave-one-out errors "),
    ] {
        let input = format!("{data}/{set}/train_raw.csv");
        let (o, auto) = train(&input, &model("auto.kst"), &["--json"]);
        let scaling = &json(&o)["scaling"];
        assert_eq!(scaling["standardised"], standardised, "{set}: {scaling}");
        let (raw, scaled) =
            (scaling["loo"]["as_given"].as_f64().unwrap(), scaling["loo"]["standardised"].as_f64().unwrap());
        assert_eq!(scaled < raw, standardised, "{set}: {scaling}");
        assert_eq!(json(&o)["standardised"], standardised);
        let (o, _) = train(&input, &model("auto.kst"), &[]);
        assert!(stderr(&o).contains(told), "{set}: {}", stderr(&o));
        assert!(!stderr(&o).contains("--scale standardises them"), "{set}: {}", stderr(&o));
        let flags: Vec<&str> = flag.split(' ').collect();
        let (_, given) = train(&input, &model("given.kst"), &flags);
        assert!(auto == given, "{set}: --scale auto's model differs from {flag}'s");
        let info = json(&kestrel(&["inspect", &model("auto.kst"), "--json"]));
        assert_eq!(info["scaled"], standardised);
        let o = kestrel(&["tune", "--learner", "rsvm", "--input", &input]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains(&format!("best: kestrel train --learner rsvm {flag} --gamma")), "{}", stdout(&o));
    }
    let standard = format!("{data}/iris/train.csv");
    let (o, auto) = train(&standard, &model("auto.kst"), &["--json"]);
    assert_eq!(json(&o)["scaling"]["not_compared"], "the features are standardised already");
    let (_, off) = train(&standard, &model("off.kst"), &["--scale", "off"]);
    assert!(auto == off);
    // Rows without a score are left to the fit, which names the cause as it does unscaled.
    let constant = dir.join("constant.csv");
    std::fs::write(&constant, "a,b,y\n1,200,3\n2,100,3\n5,400,3\n").unwrap();
    let constant = constant.to_string_lossy();
    let refusal = |extra: &[&str]| {
        let o =
            kestrel(&[&["train", "--learner", "krr", "--input", &constant, "--out", &model("c.kst")], extra].concat());
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        stderr(&o)
    };
    assert_eq!(refusal(&[]), refusal(&["--scale", "off"]));
    assert!(refusal(&[]).contains("every target is 3: there is nothing to learn"), "{}", refusal(&[]));
    let o = kestrel(&[
        "train",
        "--learner",
        "rsvm",
        "--relevance",
        "--scale",
        "off",
        "--input",
        &standard,
        "--out",
        &model("r.kst"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not go with --scale off"), "{}", stderr(&o));
}

/// A solver that stops at its iteration limit says so, and what would speed it up; one
/// that converges says nothing. Features whose scales differ so widely that one sets the
/// distances (here 10⁶ times the other's variance) get a note suggesting `--scale` under
/// `--scale off`, from `train` and `tune`; rows of like scales, or scaled — as `--scale
/// auto` scales the linear SVM's by rule, and says so — get none.
#[test]
fn train_warns_when_the_solver_stops_at_its_limit() {
    let dir = Scratch::new("cli", "unconverged");
    let data = dir.join("ranges.csv");
    let mut text = String::from("a,b,y\n");
    for i in 0..200 {
        let (a, b) = ((i * 37 % 101) as f64 * 10.0, (i * 53 % 97) as f64 / 97.0);
        let label = if (b > 0.5) != (i % 17 == 0) { 1 } else { -1 };
        text.push_str(&format!("{a},{b:.4},{label}\n"));
    }
    std::fs::write(&data, text).unwrap();
    let (data, model) = (data.to_str().unwrap(), dir.join("m.kestrel"));
    let train = ["train", "--learner", "svm", "--input", data, "--out", model.to_str().unwrap(), "--scale", "off"];
    let o = kestrel(&train);
    assert!(o.status.success(), "{}", stderr(&o));
    let warning = "warning: training stopped at its limit (1000 iterations) before the solver's stopping rule held";
    assert!(stderr(&o).contains(warning) && stderr(&o).contains("--scale standardises them"), "{}", stderr(&o));
    let note = "note: the features' scales differ widely";
    assert!(stderr(&o).contains(&format!("{note} (variances from 8.")), "{}", stderr(&o));
    assert!(stderr(&o).contains("about 1.0 of the 2 features that vary set the distances"), "{}", stderr(&o));
    for scale in ["on", "auto"] {
        let o = kestrel(&[&train[..train.len() - 1], &[scale]].concat());
        let said = stderr(&o);
        assert!(o.status.success() && !said.contains("warning") && !said.contains(note), "{scale}: {said}");
        let rule = "--scale auto standardised the features, as it does for the linear SVM and the novelty detector";
        assert_eq!(said.contains(rule), scale == "auto", "{said}");
    }
    let tune = ["tune", "--learner", "svm", "--input", data, "--folds", "2", "--c-grid", "1"];
    let o = kestrel(&[&tune[..], &["--scale", "off"]].concat());
    assert!(o.status.success() && stderr(&o).contains(note), "{}", stderr(&o));
    for scale in [&["--scale"][..], &[]] {
        let o = kestrel(&[&tune[..], scale].concat());
        assert!(o.status.success() && !stderr(&o).contains(note), "{}", stderr(&o));
    }
    let o = kestrel(&[
        "train",
        "--learner",
        "svm",
        "--input",
        &binary_libsvm(&dir, 200).to_string_lossy(),
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success() && !stderr(&o).contains(note), "{}", stderr(&o));
}

/// A stream too short for its learner to have a model writes none, and says why: slkl
/// learns from its candidates' count of samples on, a detector flags once it has a
/// threshold (one sample gives none). The learner that has one writes it.
#[test]
fn a_stream_too_short_for_a_model_says_why_none_was_written() {
    let dir = Scratch::new("cli", "too-short");
    let (two, one) = (dir.join("two.csv"), dir.join("one.csv"));
    std::fs::write(&two, "a,b,y\n1,2,0\n2,1,1\n").unwrap();
    std::fs::write(&one, "a,b,y\n1,2,0\n").unwrap();
    let model = dir.join("m.kestrel");
    let stream = |learner: &str, input: &Path| {
        let _ = std::fs::remove_file(&model);
        let args =
            ["stream", "--learner", learner, "--input", input.to_str().unwrap(), "--out", model.to_str().unwrap()];
        let o = kestrel(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let said = stream("slkl", &two);
    let why = "no model written to";
    assert!(said.contains(why) && said.contains("as many samples as candidates (32, --centers), it has 2"), "{said}");
    assert!(!model.exists());
    let said = stream("novelty", &one);
    assert!(said.contains(why) && said.contains("the detector has no threshold yet"), "{said}");
    assert!(!model.exists());
    assert!(!stream("novelty", &two).contains(why) && model.exists());
    let predicted = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", two.to_str().unwrap()]);
    assert!(predicted.status.success() && stdout(&predicted).lines().count() == 2, "{}", stderr(&predicted));
}

/// A classifier asked to learn a label column of many distinct numbers (a regression
/// target: diabetes' disease progression) gets a note naming the regressors, and the
/// classes it gives up are named five at most; classes do not, nor does a regressor.
#[test]
fn a_classifier_on_a_numeric_target_gets_a_note() {
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data");
    let dir = Scratch::new("cli", "many-labels");
    let model = dir.join("m.kestrel");
    let train = |learner: &str, set: &str| {
        let input = format!("{data}/{set}/train.csv");
        let o = kestrel(&["train", "--learner", learner, "--input", &input, "--out", model.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let note = "note: the label column holds 187 distinct numbers in 331 rows: a classifier takes each as a class";
    let said = train("svm", "diabetes");
    assert!(said.contains(note), "{said}");
    // The classes given up are many: five are named (a class of one row as `1 row`), the
    // rest counted.
    let given_up = said.lines().find(|l| l.contains("predicts none of the training rows")).unwrap();
    assert_eq!(given_up.matches("` (").count(), 5, "{given_up}");
    assert!(given_up.contains(" (1 row)") && !given_up.contains(" 1 rows"), "{given_up}");
    let (_, counted) = given_up.split_once("training rows of ").unwrap();
    let (classes, named) = counted.split_once(" classes as their class, among them ").unwrap();
    assert!(classes.parse::<usize>().unwrap() > 5 && named.starts_with('`'), "{given_up}");
    assert!(!train("svm", "iris").contains("distinct numbers"));
    // A stream's classes are fixed in number: the 17th distinct number is an error that
    // names the regressor.
    let o = kestrel(&["stream", "--learner", "svm", "--input", &format!("{data}/diabetes/train.csv")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("would be a class past --classes 16 (a numeric target is a regressor's: --learner slkl)")
    );
    assert!(!train("krr", "diabetes").contains("distinct numbers"));
}

/// A CSV without a header loses its first row to the header, silently but for this note;
/// a header of names (even with digits in them) has none.
#[test]
fn a_header_of_numbers_is_told() {
    let dir = Scratch::new("cli", "numeric-header");
    let data = dir.join("rows.csv");
    std::fs::write(&data, "0.5,1.5,1\n0.25,2.5,-1\n1.5,0.5,1\n2.5,1.0,-1\n").unwrap();
    let model = dir.join("m.kestrel");
    let o =
        kestrel(&["train", "--learner", "svm", "--input", data.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = "its header names the columns `0.5`, `1.5`: numbers. The first line of a CSV is its header";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model.to_str().unwrap(), "--input", data.to_str().unwrap()]);
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    assert_eq!(stdout(&o).lines().count(), 3, "three rows after the header");
    std::fs::write(&data, "x1,x2,y\n0.5,1.5,1\n0.25,2.5,-1\n1.5,0.5,1\n2.5,1.0,-1\n").unwrap();
    let o =
        kestrel(&["train", "--learner", "svm", "--input", data.to_str().unwrap(), "--out", model.to_str().unwrap()]);
    assert!(o.status.success() && !stderr(&o).contains("numbers"), "{}", stderr(&o));
}

/// A first column without a name holds row names (pandas' `to_csv` of a frame, R's
/// `write.csv`): every command leaves it out and says so, so that a file sorted by class
/// does not hand the model its row numbers; the model reads the same rows without them.
#[test]
fn a_first_column_of_row_names_is_left_out() {
    let dir = Scratch::new("cli", "row-names");
    let (indexed, plain) = (dir.join("indexed.csv"), dir.join("plain.csv"));
    let rows = ["0.5,1.5,1", "0.25,2.5,-1", "1.5,0.5,1", "2.5,1.0,-1", "0.1,0.2,1", "2.0,2.2,-1"];
    let numbered: Vec<String> = rows.iter().enumerate().map(|(i, row)| format!("{i},{row}")).collect();
    std::fs::write(&indexed, format!(",a,b,y\n{}\n", numbered.join("\n"))).unwrap();
    std::fs::write(&plain, format!("a,b,y\n{}\n", rows.join("\n"))).unwrap();
    let model = dir.join("m.kestrel");
    let (indexed, plain, model) = (indexed.to_str().unwrap(), plain.to_str().unwrap(), model.to_str().unwrap());
    let o = kestrel(&["train", "--learner", "svm", "--input", indexed, "--out", model]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said =
        "its first column has no name: row names, as pandas' to_csv and R's write.csv write them, so it is left out";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = kestrel(&["inspect", model]);
    assert!(
        stdout(&o).contains("2 features") && stdout(&o).contains("by these names from a CSV header): a, b\n"),
        "{}",
        stdout(&o)
    );
    let predicted = |input: &str| {
        let o = kestrel(&["predict", "--model", model, "--input", input]);
        assert!(o.status.success(), "{}", stderr(&o));
        (stdout(&o), stderr(&o).contains(said))
    };
    let (from_indexed, told) = predicted(indexed);
    assert_eq!((from_indexed.lines().count(), told), (6, true));
    assert_eq!(predicted(plain), (from_indexed, false));
    let o = kestrel(&["stream", "--learner", "svm", "--input", indexed]);
    assert!(o.status.success() && stderr(&o).contains(said), "{}", stderr(&o));
}

/// Labels that mark a missing one (`?`, `NA`) in a column of numbers are missing labels,
/// bad rows that say so, not class names that would make every label a name; `predict`
/// does not read labels at all: rows whose target is missing, empty or a word predict as
/// the labelled ones.
#[test]
fn missing_labels_are_missing_and_predict_reads_none() {
    let dir = Scratch::new("cli", "missing-labels");
    let (marked, clean, odd) = (dir.join("marked.csv"), dir.join("clean.csv"), dir.join("odd.csv"));
    let rows = ["0.5,1.5", "0.25,2.5", "1.5,0.5", "2.5,1.0", "0.1,0.2", "2.0,2.2"];
    let write = |path: &std::path::Path, labels: [&str; 6]| {
        let body: Vec<String> = rows.iter().zip(labels).map(|(row, label)| format!("{row},{label}")).collect();
        std::fs::write(path, format!("a,b,y\n{}\n", body.join("\n"))).unwrap();
        path.to_str().unwrap().to_string()
    };
    let marked = write(&marked, ["1", "-1", "?", "-1", "NA", "-1"]);
    let clean = write(&clean, ["1", "-1", "1", "-1", "1", "-1"]);
    let odd = write(&odd, ["", "grass", "?", "1e9", "NA", "-1"]);
    let model = dir.join("m.kestrel");
    let model = model.to_str().unwrap();
    let o = kestrel(&["train", "--learner", "svm", "--input", &marked, "--out", model]);
    assert_eq!(o.status.code(), Some(1));
    let said = "marked.csv:4:9: `?` marks a missing label (--on-error skip leaves such rows out)";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = kestrel(&["train", "--learner", "svm", "--input", &marked, "--out", model, "--on-error", "skip", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!((json(&o)["n"].as_u64(), json(&o)["skipped"].as_u64()), (Some(4), Some(2)), "{}", stdout(&o));
    let predicted = |input: &str| {
        let o = kestrel(&["predict", "--model", model, "--input", input]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let labelled = predicted(&clean);
    assert_eq!(labelled.lines().count(), 6);
    assert_eq!(predicted(&marked), labelled);
    assert_eq!(predicted(&odd), labelled);
}

/// `--output -` is standard output where the command writes its rows there by default
/// (`predict`, `transform`), and refused where standard output holds the summary
/// (`stream`, `cluster`, `npkl`) — not a file named `-`.
#[test]
fn an_output_of_dash_is_standard_output_or_refused() {
    let dir = Scratch::new("cli", "output-dash");
    let data = regression_csv(&dir, 40);
    let (data, model) = (data.to_str().unwrap(), dir.join("m.kestrel"));
    let model = model.to_str().unwrap();
    assert!(kestrel(&["train", "--learner", "krr", "--input", data, "--out", model]).status.success());
    let plain = kestrel(&["predict", "--model", model, "--input", data]);
    let dash = kestrel(&["predict", "--model", model, "--input", data, "--output", "-"]);
    assert!(dash.status.success() && stdout(&dash).lines().count() == 40, "{}", stderr(&dash));
    assert_eq!(stdout(&dash), stdout(&plain));
    let dash = kestrel(&["transform", "--input", data, "--output", "-"]);
    assert_eq!(stdout(&dash), stdout(&kestrel(&["transform", "--input", data])));
    for command in [&["stream", "--input", data][..], &["cluster", "--input", data, "--clusters", "2"]] {
        let o = kestrel(&[command, &["--output", "-"]].concat());
        let said = "'-' for '--output";
        assert!(o.status.code() == Some(2) && stderr(&o).contains(said), "{}", stderr(&o));
        assert!(stderr(&o).contains("standard output holds the command's summary: give a file"));
    }
    assert!(!std::path::Path::new("-").exists());
}

/// A class column of numbers and names (R's `barley`: varieties 1 to 9 and `X`) is read as
/// names throughout, as a data frame's column of mixed values is one of strings, and said;
/// the model predicts the names. A regressor's target stays a number: a name is an error.
#[test]
fn a_class_column_of_numbers_and_names_is_read_as_names() {
    let dir = Scratch::new("cli", "mixed-labels");
    let data = dir.join("varieties.csv");
    let mut text = String::from("yield,height,variety\n");
    for i in 0..30 {
        let variety = ["1", "2", "X"][i % 3];
        text.push_str(&format!("{},{},{variety}\n", (i % 3) as f64 * 4.0 + (i % 5) as f64 * 0.1, (i % 3) as f64));
    }
    std::fs::write(&data, text).unwrap();
    let model = dir.join("m.kestrel");
    let (data_arg, model_arg) = (data.to_str().unwrap(), model.to_str().unwrap());
    let o = kestrel(&["train", "--input", data_arg, "--out", model_arg]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = "the class column holds names among its numbers (`X`): every label is read as a class name, 3 classes";
    assert!(stderr(&o).contains(said), "{}", stderr(&o));
    let o = kestrel(&["predict", "--model", model_arg, "--input", data_arg]);
    assert_eq!(stdout(&o).lines().take(3).collect::<Vec<_>>(), ["1", "2", "X"], "{}", stderr(&o));
    let o = kestrel(&["train", "--learner", "krr", "--input", data_arg, "--out", model_arg]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`X` is not a number"), "{}", stderr(&o));
}

/// `predict --keep-column`: the named columns' values, as the input has them (quoted where
/// a value holds a comma), before each prediction; a kept column the model names is still
/// its feature, one it does not name is not; a bad row keeps its line with empty fields.
#[test]
fn predict_keeps_columns_beside_each_prediction() {
    let dir = Scratch::new("cli", "keep");
    let write = |name: &str, text: &str| write_in(&dir, name, text);
    let mut rows = "id,time,a,b,y\n".to_string();
    for i in 0..40 {
        let (a, b) = ((i * 37 % 101) as f64 / 101.0, (i * 53 % 97) as f64 / 97.0);
        let time = if i == 1 { "\"10:01, Monday\"".to_string() } else { format!("t{i}") };
        let b = if i == 2 { "bad".to_string() } else { b.to_string() };
        rows.push_str(&format!("u{i},{time},{a},{b},{}\n", u8::from(a > 0.5)));
    }
    let (data, model) = (write("rows.csv", &rows), dir.join("m.kestrel").to_str().unwrap().to_string());
    let skip = ["--skip-column", "id", "--skip-column", "time", "--on-error", "skip"];
    let o = kestrel(&[&["train", "--learner", "svm", "--input", &data, "--out", &model][..], &skip].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let predict = |extra: &[&str]| {
        let o = kestrel(&[&["predict", "--model", &model, "--input", &data, "--on-error", "skip"][..], extra].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let plain = predict(&["--skip-column", "id", "--skip-column", "time"]);
    let kept = predict(&["--keep-column", "id", "--keep-column", "time", "--keep-column", "y"]);
    let (plain, kept): (Vec<&str>, Vec<&str>) = (plain.lines().collect(), kept.lines().collect());
    assert_eq!((plain.len(), kept.len()), (40, 40));
    assert_eq!(kept[0], format!("u0,t0,0,{}", plain[0]));
    assert_eq!(kept[1], format!("u1,\"10:01, Monday\",0,{}", plain[1]));
    assert_eq!((plain[2], kept[2]), ("NaN", ",,,NaN"), "a bad row keeps its line");
    for (i, (p, k)) in plain.iter().zip(&kept).enumerate().skip(3) {
        assert!(k.starts_with(&format!("u{i},t{i},")) && k.ends_with(&format!(",{p}")), "{k} against {p}");
    }
    // A feature kept is written and still read: the same predictions.
    let feature = predict(&["--skip-column", "id", "--skip-column", "time", "--keep-column", "a"]);
    for (p, k) in plain.iter().zip(feature.lines()) {
        assert!(k.ends_with(&format!(",{p}")), "{k} against {p}");
    }
    let o = kestrel(&["predict", "--model", &model, "--input", &data, "--keep-column", "zz"]);
    assert!(stderr(&o).contains("no column named `zz` to keep in the header"), "{}", stderr(&o));
    // kestrel stream writes them before each --output line, a resumed run as the first.
    let (output, checkpoint) = (dir.join("stream.out"), dir.join("stream.ckpt"));
    let stream = |extra: &[&str]| {
        let (output, checkpoint) = (output.to_str().unwrap(), checkpoint.to_str().unwrap());
        let base = ["stream", "--learner", "svm", "--input", &data, "--output", output, "--checkpoint", checkpoint];
        let kept = ["--keep-column", "id", "--skip-column", "time", "--on-error", "skip"];
        kestrel(&[&base[..], &kept, extra].concat())
    };
    assert!(stream(&[]).status.success());
    let lines = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!((lines.len(), lines[0], lines[2]), (40, "u0,NaN", ",NaN"), "{lines:?}");
    assert!(lines.iter().enumerate().all(|(i, l)| i == 2 || l.starts_with(&format!("u{i},"))), "{lines:?}");
    let o = stream(&["--resume", "--keep-column", "time"]);
    assert!(stderr(&o).contains("--keep-column"), "{}", stderr(&o));
    let libsvm = write("rows.libsvm", "1 1:0.5 2:0.5\n");
    let o = kestrel(&["predict", "--model", &model, "--input", &libsvm, "--keep-column", "id"]);
    assert!(
        stderr(&o).contains("columns are kept by their names in a CSV header: this input has none"),
        "{}",
        stderr(&o)
    );
}

/// `transform` carries a row's class over by its name (a name holding a comma quoted),
/// not by the number the reader gave it.
#[test]
fn transform_writes_class_names() {
    let dir = Scratch::new("cli", "transform-names");
    let rows: String = (0..30)
        .map(|i| format!("{},{},\"{}\"\n", (i as f64).sin(), (i as f64).cos(), ["sky", "wet, grass"][i % 2]))
        .collect();
    let input = dir.join("named.csv");
    std::fs::write(&input, format!("a,b,y\n{rows}")).unwrap();
    let o = kestrel(&["transform", "--input", input.to_str().unwrap(), "--method", "kfd"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 30, "{text}");
    for (i, line) in lines.iter().enumerate() {
        assert!(line.ends_with(if i % 2 == 0 { ",sky" } else { ",\"wet, grass\"" }), "{line}");
    }
}
