//! `kestrel stream --input mqtt://…` against a real broker: Mosquitto on a free loopback
//! port, with a configuration of its own, stopped when the test ends. The tests are skipped
//! (saying so) only when `mosquitto` is not installed; `scripts/test-all.sh` installs it.
//!
//! Messages are queued for kestrel before it runs: `mosquitto_sub -c -E` creates the
//! persistent session (the subscription) under kestrel's client id and leaves, the
//! messages are published at QoS 1 (by kestrel's own `MqttSink`, which waits for the
//! broker's acknowledgements), and kestrel's run then receives them all, in order.

use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use kestrel_core::Rng;
use kestrel_stream::checkpoint::Checkpoint;
use kestrel_stream::mqtt::{self, MqttSink};
use serde_json::Value;

use crate::outcome::{succeeded, summary};
use crate::scratch::Scratch;

const MOSQUITTO: &str = "/usr/sbin/mosquitto";
/// The longest any command or wait of these tests may take.
const DEADLINE: Duration = Duration::from_secs(120);

/// The path of `mosquitto`, or `None` (the test then says it is skipped).
fn mosquitto() -> Option<PathBuf> {
    let found = [PathBuf::from(MOSQUITTO)].into_iter().chain(
        std::env::var_os("PATH")
            .map(|paths| std::env::split_paths(&paths).map(|p| p.join("mosquitto")).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    let found = found.into_iter().find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: mosquitto is not installed (scripts/test-all.sh installs it)");
    }
    found
}

/// A loopback port nobody listens on (at the time of asking).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A Mosquitto broker of the test's own, killed on drop.
struct Broker {
    child: Child,
    port: u16,
    mosquitto: PathBuf,
    config: String,
    /// The clients' TLS flags (`--cafile`) for a TLS listener.
    tls: Vec<String>,
}

impl Broker {
    fn start(mosquitto: &Path, dir: &Scratch) -> Self {
        Broker::with(mosquitto, dir, "allow_anonymous true\n")
    }

    /// A broker with `access` lines in its configuration.
    fn with(mosquitto: &Path, dir: &Scratch, access: &str) -> Self {
        let port = free_port();
        let store = dir.path("mosquitto");
        std::fs::create_dir_all(&store).unwrap();
        // Started as root, mosquitto runs as the user `mosquitto`: it must write there.
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o777)).unwrap();
        let config = format!(
            "listener {port} 127.0.0.1\n{access}persistence true\npersistence_location {}/\n\
             max_queued_messages 0\n",
            store.display()
        );
        std::fs::write(dir.path("mosquitto.conf"), config).unwrap();
        let (mosquitto, config) = (mosquitto.to_path_buf(), dir.str("mosquitto.conf"));
        let child = Broker::spawn(&mosquitto, &config, port);
        Broker { child, port, mosquitto, config, tls: Vec::new() }
    }

    /// Starts `mosquitto` with `config` and waits until it listens on `port`.
    fn spawn(mosquitto: &Path, config: &str, port: u16) -> Child {
        let child = Command::new(mosquitto)
            .args(["-c", config])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("mosquitto starts");
        let deadline = Instant::now() + DEADLINE;
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "mosquitto does not listen on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        child
    }

    /// Stops the broker as an operator does (SIGTERM: it saves its sessions and queued
    /// messages) and starts it again on the same port.
    fn restart(&mut self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        assert_eq!(wait(&mut self.child).code(), Some(0));
        self.child = Broker::spawn(&self.mosquitto, &self.config, self.port);
    }

    /// Stops the broker answering (SIGSTOP): what its clients send waits unacknowledged.
    fn freeze(&self) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    }

    /// Kills the broker (SIGKILL: it saves nothing, every session is gone) and starts it
    /// again on the same port.
    fn crash_and_restart(&mut self) {
        self.child.kill().unwrap();
        wait(&mut self.child);
        self.child = Broker::spawn(&self.mosquitto, &self.config, self.port);
    }

    fn url(&self, topic: &str) -> String {
        format!("mqtt://127.0.0.1:{}/{topic}", self.port)
    }

    /// The clients' connection flags.
    fn client_flags(&self) -> Vec<String> {
        let flags = ["-h".to_string(), "127.0.0.1".into(), "-p".into(), self.port.to_string()];
        flags.into_iter().chain(self.tls.iter().cloned()).collect()
    }

    /// Creates the persistent session of `client_id`, subscribed to `filter` at QoS 1, so
    /// that messages published from now on wait for it.
    fn session(&self, client_id: &str, filter: &str) {
        let args = ["-c", "-i", client_id, "-q", "1", "-t", filter, "-E"];
        let output = finish(Command::new("mosquitto_sub").args(self.client_flags()).args(args), None);
        assert!(output.status.success(), "mosquitto_sub: {}", String::from_utf8_lossy(&output.stderr));
    }

    /// Publishes each of `messages` at QoS 1 to `topic`, in order, and returns once the
    /// broker has acknowledged them all (kestrel's own sink: `mosquitto_pub -l` was seen
    /// to drop messages of a long burst).
    fn publish(&self, topic: &str, messages: &[String]) {
        let scheme = if self.tls.is_empty() { "mqtt" } else { "mqtts" };
        let mut broker = mqtt::Broker::parse(&format!("{scheme}://127.0.0.1:{}/{topic}", self.port)).unwrap();
        broker.ca_file = self.tls.get(1).map(PathBuf::from);
        let mut sink = MqttSink::connect(&broker, &format!("publisher-{}", std::process::id()), DEADLINE).unwrap();
        for message in messages {
            sink.publish(message.clone().into_bytes(), false).unwrap();
        }
        assert!(sink.flush(DEADLINE).unwrap(), "the broker did not acknowledge every message");
        sink.close();
    }

    /// The `count` messages waiting for the persistent session `client_id`, or retained
    /// on its topic, in order.
    fn receive(&self, client_id: &str, topic: &str, count: usize) -> Vec<String> {
        let count = count.to_string();
        let args = ["-c", "-i", client_id, "-q", "1", "-t", topic, "-C", &count, "-W", "60"];
        let output = finish(Command::new("mosquitto_sub").args(self.client_flags()).args(args), None);
        assert!(output.status.success(), "mosquitto_sub: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap().lines().map(String::from).collect()
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for `child` at most `DEADLINE` (killing it then).
fn wait(child: &mut Child) -> ExitStatus {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running after {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `command` to its end (at most `DEADLINE`), `input` on its standard input.
fn finish(command: &mut Command, input: Option<String>) -> Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        if let Some(input) = input {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    let (mut stdout, mut stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut bytes).unwrap();
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut bytes).unwrap();
        bytes
    });
    let status = wait(&mut child);
    writer.join().unwrap();
    Output { status, stdout: out.join().unwrap(), stderr: err.join().unwrap() }
}

fn kestrel(args: &[String]) -> Output {
    finish(Command::new(env!("CARGO_BIN_EXE_kestrel")).args(args), None)
}

/// `n` rows of two features and an XOR-like label: `(a, b, label)`.
fn rows(n: usize) -> Vec<(f64, f64, i32)> {
    let mut rng = Rng::seed_from_u64(5);
    (0..n)
        .map(|_| {
            let (a, b): (f64, f64) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            (a, b, if a * b > 0.0 { 1 } else { -1 })
        })
        .collect()
}

fn libsvm((a, b, y): (f64, f64, i32)) -> String {
    format!("{y} 1:{a} 2:{b}")
}

/// `rows` as LibSVM lines.
fn libsvm_lines(rows: &[(f64, f64, i32)]) -> String {
    rows.iter().map(|&r| libsvm(r) + "\n").collect()
}

/// kestrel with `args`, its standard error written to the file `log`.
fn kestrel_logged(args: &[String], log: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_kestrel"));
    command.args(args).stderr(std::fs::File::create(log).unwrap());
    command
}

fn csv((a, b, y): (f64, f64, i32)) -> String {
    format!("{a},{b},{y}")
}

fn json((a, b, y): (f64, f64, i32), seq: usize) -> String {
    format!("{{\"x\": [{a}, {b}], \"y\": {y}, \"seq\": {seq}}}")
}

/// The flags of every run: the learner and a small configuration.
fn flags(input: &str, more: &[&str]) -> Vec<String> {
    let mut flags = vec!["stream", "--learner", "rsvm", "--input", input, "--dim", "2", "--window", "64"];
    flags.extend(["--centers", "16", "--seed", "3", "--steps-per-sample", "3", "--gamma", "2", "--c", "10"]);
    flags.extend(["--report-every", "0", "--json", "--on-error", "skip"]);
    flags.extend(more);
    flags.into_iter().map(String::from).collect()
}

/// The rows from the broker — LibSVM, JSON and CSV messages, some of several rows — give
/// the summary and the model bytes the same rows give from a file.
#[test]
fn mqtt_stream_learns_as_the_file_does() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "file");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(300);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.libsvm"), &["--out", &dir.str("file.model")]));
    let expected = summary(succeeded(&from_file));
    assert_eq!(expected["n"], 300);

    broker.session("kestrel-a", "plant/#");
    let (first, rest) = data.split_at(100);
    let (second, third) = rest.split_at(100);
    broker.publish("plant/a", &first.iter().map(|&r| libsvm(r)).collect::<Vec<_>>());
    broker.publish("plant/b", &second.iter().enumerate().map(|(i, &r)| json(r, i)).collect::<Vec<_>>());
    let chunks = third.chunks(10).map(|c| c.iter().map(|&r| csv(r)).collect::<Vec<_>>().join("\n"));
    broker.publish("plant/a", &chunks.collect::<Vec<_>>());
    let url = broker.url("plant/#");
    let more = ["--client-id", "kestrel-a", "--max-rows", "300", "--out", &dir.str("mqtt.model")];
    let from_broker = kestrel(&flags(&url, &more));
    assert_eq!(summary(succeeded(&from_broker)), expected);
    assert_eq!(std::fs::read(dir.path("mqtt.model")).unwrap(), std::fs::read(dir.path("file.model")).unwrap());

    // Everything was acknowledged: a run in the same session receives nothing.
    let more = ["--client-id", "kestrel-a", "--idle-timeout", "0.5"];
    let after = kestrel(&flags(&url, &more));
    assert_eq!(summary(succeeded(&after))["n"], 0);
}

/// A broker's row whose label is missing — a JSON row without `"y"` or with `null`, a CSV
/// row whose label field is empty — is predicted and not learned when `--learner` is
/// given: the model is the one the labelled rows alone give from a file.
#[test]
fn mqtt_rows_without_a_label_are_predicted_not_learned() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "unlabelled");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(60);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.libsvm"), &["--out", &dir.str("file.model")]));
    assert_eq!(summary(succeeded(&from_file))["n"], 60);
    broker.session("kestrel-u", "u/t");
    let mut messages: Vec<String> = data.iter().map(|&r| csv(r)).collect();
    messages.insert(10, "{\"x\": [0.5, -0.5]}".into());
    messages.insert(20, "{\"x\": [0.5, 0.5], \"y\": null}".into());
    messages.insert(30, "0.25,0.75,".into());
    broker.publish("u/t", &messages);
    let (model, output) = (dir.str("mqtt.model"), dir.str("predictions.txt"));
    let more = ["--client-id", "kestrel-u", "--max-rows", "63", "--out", &model, "--output", &output];
    let result = summary(succeeded(&kestrel(&flags(&broker.url("u/t"), &more))));
    assert_eq!((result["n"].as_u64(), result["unlabelled"].as_u64()), (Some(60), Some(3)), "{result}");
    assert_eq!(std::fs::read(dir.path("mqtt.model")).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
    let lines = std::fs::read_to_string(dir.path("predictions.txt")).unwrap();
    let predicted: Vec<&str> = lines.lines().collect();
    assert_eq!(predicted.len(), 63);
    for at in [10, 20, 30] {
        assert!(predicted[at] == "1" || predicted[at] == "-1", "{at}: {}", predicted[at]);
    }
}

/// JSON rows of named fields, in any order of their keys, name the model's features as a
/// CSV header does: the model is the one the same rows give from a CSV file with a header,
/// and `predict` reads a CSV of its columns in another order by their names.
#[test]
fn mqtt_json_field_names_name_the_model_s_features() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "names");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(120);
    // The features in the order of their names, as the JSON rows are read.
    let header: String = data.iter().map(|&(a, b, y)| format!("{b},{a},{y}\n")).collect();
    std::fs::write(dir.path("rows.csv"), format!("humidity,temp,label\n{header}")).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.csv"), &["--out", &dir.str("file.model")]));
    let expected = summary(succeeded(&from_file));

    broker.session("kestrel-n", "n/t");
    let messages: Vec<String> = data
        .iter()
        .enumerate()
        .map(|(i, &(a, b, y))| match i % 2 {
            0 => format!("{{\"temp\": {a}, \"humidity\": {b}, \"y\": {y}}}"),
            _ => format!("{{\"y\": {y}, \"humidity\": {b}, \"temp\": {a}}}"),
        })
        .collect();
    broker.publish("n/t", &messages);
    let more = ["--client-id", "kestrel-n", "--max-rows", "120", "--out", &dir.str("mqtt.model")];
    let from_broker = kestrel(&flags(&broker.url("n/t"), &more));
    assert_eq!(summary(succeeded(&from_broker)), expected);
    assert_eq!(std::fs::read(dir.path("mqtt.model")).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
    // Fields that are no features, as firmware sends a timestamp and its name with its
    // readings, are left out by --skip-column: the same model.
    broker.session("kestrel-s", "n/s");
    let stamped: Vec<String> = data
        .iter()
        .enumerate()
        .map(|(i, &(a, b, y))| {
            format!("{{\"ts\": \"2026-12-04T10:{:02}:00Z\", \"temp\": {a}, \"device\": \"a7\", \"humidity\": {b}, \"y\": {y}}}", i % 60)
        })
        .collect();
    broker.publish("n/s", &stamped);
    let skip = ["--skip-column", "ts", "--skip-column", "device"];
    let out = dir.str("skip.model");
    let more = [&["--client-id", "kestrel-s", "--max-rows", "120", "--out", &out][..], &skip].concat();
    let from_broker = kestrel(&flags(&broker.url("n/s"), &more));
    assert_eq!(summary(succeeded(&from_broker)), expected);
    assert_eq!(std::fs::read(dir.path("skip.model")).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
    let csv = [&["--client-id", "kestrel-c", "--payload", "csv"][..], &skip].concat();
    let refused = kestrel(&flags(&broker.url("n/s"), &csv));
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--skip-column names the fields of JSON rows"));

    let swapped: String = data.iter().map(|&(a, b, y)| format!("{a},{b},{y}\n")).collect();
    std::fs::write(dir.path("swapped.csv"), format!("temp,humidity,label\n{swapped}")).unwrap();
    let predict = |input: &str| {
        let args = ["predict", "--model", &dir.str("mqtt.model"), "--input", &dir.str(input)];
        succeeded(&kestrel(&args.map(String::from))).stdout.clone()
    };
    assert_eq!(predict("swapped.csv"), predict("rows.csv"));
}

/// JSON rows whose field `mode` holds a state, with `--categorical mode=idle,run`: a
/// feature per given category after the numeric fields; the summary and the model are
/// those of the same rows from a CSV file with a header and the same flag.
#[test]
fn mqtt_json_fields_of_categories_are_one_hot_encoded() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "categories");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(120);
    let mode = |i: usize| ["idle", "run"][i % 3 / 2];
    let lines: String = data.iter().enumerate().map(|(i, &(a, b, y))| format!("{b},{a},{},{y}\n", mode(i))).collect();
    std::fs::write(dir.path("rows.csv"), format!("humidity,temp,mode,label\n{lines}")).unwrap();
    // Two numeric features and the two given categories.
    let with_categories = |input: &str, more: &[&str]| {
        let mut flags = flags(input, &[&["--categorical", "mode=idle,run"][..], more].concat());
        let dim = flags.iter().position(|flag| flag == "--dim").unwrap() + 1;
        flags[dim] = "4".into();
        flags
    };
    let from_file = kestrel(&with_categories(&dir.str("rows.csv"), &["--out", &dir.str("file.model")]));
    let expected = summary(succeeded(&from_file));

    broker.session("kestrel-c", "c/t");
    let messages: Vec<String> = data
        .iter()
        .enumerate()
        .map(|(i, &(a, b, y))| format!("{{\"temp\": {a}, \"mode\": \"{}\", \"humidity\": {b}, \"y\": {y}}}", mode(i)))
        .collect();
    broker.publish("c/t", &messages);
    let more = ["--client-id", "kestrel-c", "--max-rows", "120", "--out", &dir.str("mqtt.model")];
    let from_broker = kestrel(&with_categories(&broker.url("c/t"), &more));
    assert_eq!(summary(succeeded(&from_broker)), expected);
    assert_eq!(std::fs::read(dir.path("mqtt.model")).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
}

/// Malformed payloads, a wrong width, NaN and an oversized message are bad rows, counted
/// under `--on-error skip` and reported with their topic and message; under `--on-error
/// stop` the first ends the run (exit code 1).
#[test]
fn mqtt_bad_payloads_are_counted() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "bad");
    let broker = Broker::start(&mosquitto, &dir);
    broker.session("kestrel-b", "s/+");
    let mut messages: Vec<String> = rows(20).into_iter().map(libsvm).collect();
    messages.insert(3, "{\"x\": [1, 2], \"y\"".into()); // malformed JSON
    messages.insert(7, "0.5,1".into()); // a CSV row of 1 feature
    messages.insert(9, "1 1:nan 2:0".into());
    messages.insert(12, format!("1 1:0.5 {}", "2:1 ".repeat(100))); // over 256 bytes
    broker.publish("s/x", &messages);
    let url = broker.url("s/+");
    let more = ["--client-id", "kestrel-b", "--max-rows", "24", "--max-message-bytes", "256"];
    let output = kestrel(&flags(&url, &more));
    let result = summary(succeeded(&output));
    assert_eq!((result["n"].as_u64(), result["skipped"].as_u64()), (Some(20), Some(4)), "{result}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("skipped s/x (message 4):1:1: not JSON"), "{stderr}");
    assert!(stderr.contains("s/x (message 8):1:1: 2 fields where the header has 3"), "{stderr}");
    assert!(stderr.contains("s/x (message 10):1:5: `nan` is not finite"), "{stderr}");
    assert!(stderr.contains("s/x (message 13):1:1: the message is larger than the limit of 256 bytes"), "{stderr}");

    broker.publish("s/y", &["1 1:1 2:1".to_string(), "1 1:x".to_string()]);
    let mut stop = flags(&url, &["--client-id", "kestrel-b", "--idle-timeout", "30"]);
    let at = stop.iter().position(|f| f == "skip").unwrap();
    stop[at] = "stop".into();
    let output = kestrel(&stop);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("s/y (message 2):1:5: `x` is not a number"), "{stderr}");
}

/// Without `--dim` the first good CSV or JSON row states the number of features (the bad
/// rows before it skipped, a LibSVM row among them, since it states none); a resumed run
/// takes it from the checkpoint. The model is the one `--dim 2` gives from a file.
#[test]
fn mqtt_without_dim_the_first_row_states_it() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "dim");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(100);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.libsvm"), &["--out", &dir.str("file.model")]));
    let learned = summary(succeeded(&from_file));

    broker.session("kestrel-d", "d/t");
    let mut messages = vec![libsvm(data[0]), "0.5,nan,1".to_string()];
    messages.extend(data.iter().map(|&r| csv(r)));
    broker.publish("d/t", &messages);
    let without_dim = |more: &[&str]| {
        let mut flags = flags(&broker.url("d/t"), more);
        let at = flags.iter().position(|f| f == "--dim").unwrap();
        flags.drain(at..at + 2);
        flags
    };
    let (model, checkpoint) = (dir.str("mqtt.model"), dir.str("run.ckpt"));
    let base = ["--client-id", "kestrel-d", "--out", &model, "--checkpoint", &checkpoint];
    let first = kestrel(&without_dim(&[&base[..], &["--max-rows", "52"]].concat()));
    let stderr = String::from_utf8_lossy(&first.stderr);
    assert_eq!(summary(succeeded(&first))["skipped"], 2, "{stderr}");
    assert!(stderr.contains("a LibSVM row does not state the number of features (--dim)"), "{stderr}");
    let second = kestrel(&without_dim(&[&base[..], &["--max-rows", "102", "--resume"]].concat()));
    let resumed = summary(succeeded(&second));
    assert_eq!((&resumed["n"], &resumed["accuracy"]), (&learned["n"], &learned["accuracy"]), "{resumed}");
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(dir.path("file.model")).unwrap());

    // With `--on-error stop` the LibSVM row ends the run, saying what is missing.
    broker.publish("d/t", &[libsvm(data[0])]);
    let mut stop = without_dim(&["--client-id", "kestrel-d", "--idle-timeout", "30"]);
    let at = stop.iter().position(|f| f == "skip").unwrap();
    stop[at] = "stop".into();
    let output = kestrel(&stop);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("d/t (message 1):1:1: a LibSVM row does not state"), "{stderr}");
}

/// No broker on the port: exit code 1 at once, naming the broker; a malformed URL or a
/// missing --client-id is a usage error (exit code 2).
#[test]
fn mqtt_connection_refused_exits_quickly() {
    let port = free_port();
    let url = format!("mqtt://user:secret@127.0.0.1:{port}/t");
    let started = Instant::now();
    let output = kestrel(&flags(&url, &["--client-id", "k"]));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("mqtt://user@127.0.0.1:{port}/t: ")), "{stderr}");
    assert!(stderr.contains("refused"), "{stderr}");
    assert!(!stderr.contains("secret"), "{stderr}");
    let output = kestrel(&flags("mqtt://127.0.0.1:1883/a/#/b", &["--client-id", "k"]));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("# must be the last level"));
    let output = kestrel(&flags("mqtt://127.0.0.1:1883/t", &[]));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--client-id"));
}

/// Rejected credentials: exit code 1 at once, naming the broker (not the password).
#[test]
fn mqtt_rejected_credentials_exit_quickly() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "auth");
    let passwords = dir.str("passwords");
    let output = finish(Command::new("mosquitto_passwd").args(["-b", "-c", &passwords, "ann", "right"]), None);
    assert!(output.status.success(), "mosquitto_passwd: {}", String::from_utf8_lossy(&output.stderr));
    let broker = Broker::with(&mosquitto, &dir, &format!("allow_anonymous false\npassword_file {passwords}\n"));
    let url = format!("mqtt://ann:wrong@127.0.0.1:{}/t", broker.port);
    let started = Instant::now();
    let output = kestrel(&flags(&url, &["--client-id", "k"]));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let name = format!("mqtt://ann@127.0.0.1:{}/t: the broker refused the connection", broker.port);
    assert!(stderr.contains(&name), "{stderr}");
    assert!(!stderr.contains("wrong"), "{stderr}");
    // The right password connects (and the run ends when the broker stays silent).
    let url = format!("mqtt://ann:right@127.0.0.1:{}/t", broker.port);
    let output = kestrel(&flags(&url, &["--client-id", "k", "--idle-timeout", "0.3"]));
    assert_eq!(summary(succeeded(&output))["n"], 0);
}

/// Waits until the checkpoint at `path` has consumed at least `rows` rows.
fn wait_for_checkpoint(path: &Path, rows: u64) {
    let deadline = Instant::now() + DEADLINE;
    while Instant::now() < deadline {
        if Checkpoint::read(path).is_ok_and(|c| c.rows >= rows) {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    panic!("no checkpoint at {rows} rows in {}", path.display());
}

/// SIGKILL mid-stream, then `--resume` (twice: the first ends in the middle of a message,
/// whose rows the broker sends again): with `seq` numbers every row is learned once, and
/// the model is byte for byte the one the rows give from a file.
#[test]
fn mqtt_killed_and_resumed_learns_each_row_once() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "resume");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(1000);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.libsvm"), &["--out", &dir.str("file.model")]));
    let expected = summary(succeeded(&from_file));

    broker.session("kestrel-r", "r/t");
    // Messages of 7 rows: they straddle the checkpoints every 100 rows.
    let messages: Vec<String> = data
        .iter()
        .enumerate()
        .map(|(i, &r)| json(r, i + 1))
        .collect::<Vec<_>>()
        .chunks(7)
        .map(|c| c.join("\n"))
        .collect();
    let (before, after) = messages.split_at(72); // rows 1..=504, then the rest
    broker.publish("r/t", before);
    let url = broker.url("r/t");
    let (model, checkpoint) = (dir.str("mqtt.model"), dir.str("run.ckpt"));
    let run = |more: &[&str]| {
        let base =
            ["--client-id", "kestrel-r", "--out", &model, "--checkpoint", &checkpoint, "--checkpoint-every", "100"];
        flags(&url, &[&base[..], more].concat())
    };
    let mut child = Command::new(env!("CARGO_BIN_EXE_kestrel"))
        .args(run(&[]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_checkpoint(&dir.path("run.ckpt"), 250);
    child.kill().unwrap(); // SIGKILL
    assert_eq!(wait(&mut child).signal(), Some(9));
    let killed_at = Checkpoint::read(&dir.path("run.ckpt")).unwrap().rows;
    assert!((250..=504).contains(&killed_at), "{killed_at}");

    broker.publish("r/t", after);
    // 600 ends inside a message (rows 596..=602): its rows are sent again to the next run.
    let first = kestrel(&run(&["--resume", "--max-rows", "600"]));
    assert_eq!(summary(succeeded(&first))["n"], 600);
    let second = kestrel(&run(&["--resume", "--max-rows", "1000"]));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(summary(succeeded(&second)), expected, "{stderr}");
    assert!(stderr.contains("row seq 600 was learned before"), "{stderr}");
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
}

/// `--output mqtt://…` publishes one message per sample — its `seq`, the prediction the
/// file output has, the label, and with `--probabilities` the probability the file output
/// has and each class's, a distribution — and `--metrics-topic` the rolling metrics and,
/// retained, the summary.
#[test]
fn mqtt_output_publishes_each_prediction() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "output");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(300);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let to_file =
        kestrel(&flags(&dir.str("rows.libsvm"), &["--output", &dir.str("predictions.txt"), "--probabilities"]));
    let expected = summary(succeeded(&to_file));
    let lines = std::fs::read_to_string(dir.path("predictions.txt")).unwrap();
    let lines: Vec<(&str, &str)> = lines.lines().map(|line| line.split_once(',').unwrap()).collect();

    broker.session("watcher", "out/predictions");
    broker.session("metrics-watcher", "out/metrics");
    let (output, metrics) = (broker.url("out/predictions"), broker.url("out/metrics"));
    let mut more =
        flags(&dir.str("rows.libsvm"), &["--output", &output, "--metrics-topic", &metrics, "--probabilities"]);
    let at = more.iter().position(|f| f == "--report-every").unwrap();
    more[at + 1] = "100".into();
    let to_broker = kestrel(&more);
    assert_eq!(summary(succeeded(&to_broker)), expected);
    let messages = broker.receive("watcher", "out/predictions", 300);
    for (i, ((message, line), &(_, _, label))) in messages.iter().zip(&lines).zip(&data).enumerate() {
        let message: Value = serde_json::from_str(message).unwrap();
        assert_eq!(message["seq"], i + 1, "{message}");
        assert_eq!(message["label"], f64::from(label), "{message}");
        let (prediction, probability): (f64, f64) = (line.0.parse().unwrap(), line.1.parse().unwrap());
        match message["prediction"].as_f64() {
            Some(published) => assert_eq!(published, prediction, "row {}: {message}", i + 1),
            None => assert!(prediction.is_nan() && message["prediction"].is_null(), "{message}"),
        }
        match message["probability"].as_f64() {
            Some(published) => {
                assert_eq!(published, probability, "row {}: {message}", i + 1);
                let by_class = message["probabilities"].as_object().unwrap();
                assert_eq!(by_class[&prediction.to_string()], published, "{message}");
                let sum: f64 = by_class.values().map(|p| p.as_f64().unwrap()).sum();
                assert!((sum - 1.0).abs() < 1e-12, "{message}");
            }
            None => assert!(probability.is_nan() && message["probability"].is_null(), "{message}"),
        }
    }
    // Three reports (--json prints them too) and the summary, the last also retained.
    let stdout = String::from_utf8(to_broker.stdout.clone()).unwrap();
    let printed: Vec<&str> = stdout.lines().collect();
    assert_eq!(broker.receive("metrics-watcher", "out/metrics", 4), printed);
    let retained = broker.receive("late-watcher", "out/metrics", 1);
    assert_eq!(retained, [printed[3]]);
}

/// The broker stopped and started again mid-stream (its sessions saved): kestrel connects
/// again, the rows published meanwhile wait in its session, none is lost; with sequence
/// numbers none is learned twice either (an acknowledgement on its way when the broker
/// stopped may bring its message again), and the model is the file's byte for byte.
#[test]
fn mqtt_broker_restarted_mid_stream_loses_no_row() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "restart");
    let mut broker = Broker::start(&mosquitto, &dir);
    let data = rows(400);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let from_file = kestrel(&flags(&dir.str("rows.libsvm"), &["--out", &dir.str("file.model")]));
    let expected = summary(succeeded(&from_file));

    broker.session("kestrel-s", "s/t");
    let messages: Vec<String> = data.iter().enumerate().map(|(i, &r)| json(r, i + 1)).collect();
    broker.publish("s/t", &messages[..200]);
    let url = broker.url("s/t");
    let (model, checkpoint) = (dir.str("mqtt.model"), dir.str("run.ckpt"));
    let more = ["--client-id", "kestrel-s", "--out", &model, "--checkpoint", &checkpoint, "--max-rows", "400"];
    let mut child =
        kestrel_logged(&flags(&url, &more), &dir.path("stderr.txt")).stdout(Stdio::piped()).spawn().unwrap();
    wait_for_checkpoint(&dir.path("run.ckpt"), 200);
    broker.restart();
    broker.publish("s/t", &messages[200..]);
    let status = wait(&mut child);
    let stderr = std::fs::read_to_string(dir.path("stderr.txt")).unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    let output = Output { status, stdout: stdout.into_bytes(), stderr: Vec::new() };
    assert_eq!(summary(&output), expected, "{stderr}");
    assert!(stderr.contains(&format!("{url}: connection lost")), "{stderr}");
    assert!(stderr.contains("connected again"), "{stderr}");
    assert_eq!(std::fs::read(&model).unwrap(), std::fs::read(dir.path("file.model")).unwrap());
}

/// kestrel with `args` (`--output` to the broker's `out/predictions`) reading its standard
/// input, its standard error to `log`, once the predictions of the first 100 of `data`
/// have reached a watcher's session: the process and its standard input.
fn first_predictions_through(
    broker: &Broker,
    args: &[String],
    log: &Path,
    data: &[(f64, f64, i32)],
) -> (Child, ChildStdin) {
    let mut child = kestrel_logged(args, log).stdin(Stdio::piped()).stdout(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    broker.session("watcher", "out/predictions");
    stdin.write_all(libsvm_lines(&data[..100]).as_bytes()).unwrap();
    stdin.flush().unwrap();
    assert_eq!(broker.receive("watcher", "out/predictions", 100).len(), 100);
    (child, stdin)
}

/// The `--output` broker frozen (SIGSTOP) while predictions go out, then killed and
/// started again without the session: the messages the lost connection took (sent and
/// queued, which rumqttc drops with a session the broker did not keep) can no longer be
/// acknowledged; kestrel says how many were lost and ends with its final checkpoint,
/// instead of waiting for acknowledgements that cannot come and writing none.
#[test]
fn mqtt_output_broker_lost_with_messages_on_their_way_is_reported_not_waited_for() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "output-lost");
    let mut broker = Broker::start(&mosquitto, &dir);
    let data = rows(300);
    let (output, checkpoint) = (broker.url("out/predictions"), dir.str("run.ckpt"));
    let args = flags("-", &["--output", &output, "--checkpoint", &checkpoint]);
    let log = dir.path("stderr.txt");
    let (mut child, mut stdin) = first_predictions_through(&broker, &args, &log, &data);
    broker.freeze();
    stdin.write_all(libsvm_lines(&data[100..]).as_bytes()).unwrap();
    drop(stdin);
    // Time to learn the rows and send their predictions to the frozen broker (the final
    // checkpoint waits 10 s for their acknowledgements).
    std::thread::sleep(Duration::from_secs(1));
    broker.crash_and_restart();
    let status = wait(&mut child);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(stderr.contains("the broker had not kept the session:"), "{stderr}");
    assert!(stderr.contains("messages not acknowledged are lost"), "{stderr}");
    assert_eq!(Checkpoint::read(&dir.path("run.ckpt")).unwrap().rows, 300);
}

/// SIGINT while the `--output` broker is frozen and the predictions fill the client's
/// queue (the stream waits for them to drain): the run still stops — within the sink's
/// grace after the signal — with the signal's exit code and the model written, but no
/// checkpoint: it would cover predictions the broker never had.
#[test]
fn mqtt_output_broker_frozen_still_lets_a_signal_stop_the_run() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "output-frozen-signal");
    let broker = Broker::start(&mosquitto, &dir);
    let data = rows(5000);
    let (output, checkpoint, model) = (broker.url("out/predictions"), dir.str("run.ckpt"), dir.str("run.kestrel"));
    let args =
        flags("-", &["--output", &output, "--checkpoint", &checkpoint, "--checkpoint-every", "0", "--out", &model]);
    let log = dir.path("stderr.txt");
    let (mut child, mut stdin) = first_predictions_through(&broker, &args, &log, &data);
    broker.freeze();
    // More predictions than the client sends unacknowledged and queues: the stream waits
    // (and stops reading, so the rows go from a thread of their own).
    let rest = libsvm_lines(&data[100..]);
    let writer = std::thread::spawn(move || drop(stdin.write_all(rest.as_bytes())));
    std::thread::sleep(Duration::from_secs(2));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = wait(&mut child);
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}: {stderr}");
    assert!(stderr.contains("stopped by SIGINT"), "{stderr}");
    assert!(
        stderr.contains("predictions not handed to the broker (stopped while it was away): no checkpoint written"),
        "{stderr}"
    );
    assert!(std::fs::metadata(dir.path("run.kestrel")).unwrap().len() > 0);
    assert!(!dir.path("run.ckpt").exists());
    writer.join().unwrap();
}

/// `mqtts://` with `--ca-file`: the rows learned over TLS are those of the file; without
/// the CA the broker's certificate is refused at once (exit code 1).
#[test]
fn mqtt_over_tls_checks_the_broker() {
    let Some(mosquitto) = mosquitto() else { return };
    let dir = Scratch::new("mqtt", "tls");
    let openssl = |args: &[&str]| {
        let output = finish(Command::new("openssl").args(args).current_dir(dir.path("")), None);
        assert!(output.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=kestrel test CA"],
        ]
        .concat(),
    );
    openssl(&[&["req"][..], &ec, &["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"]].concat());
    std::fs::write(dir.path("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
    // Read by mosquitto as the user `mosquitto` (when started as root): a test key only.
    std::fs::set_permissions(dir.path("server.key"), std::fs::Permissions::from_mode(0o644)).unwrap();
    let tls = format!(
        "cafile {}\ncertfile {}\nkeyfile {}\nallow_anonymous true\n",
        dir.str("ca.pem"),
        dir.str("server.pem"),
        dir.str("server.key")
    );
    let mut broker = Broker::with(&mosquitto, &dir, &tls);
    broker.tls = vec!["--cafile".into(), dir.str("ca.pem")];
    let data = rows(100);
    std::fs::write(dir.path("rows.libsvm"), libsvm_lines(&data)).unwrap();
    let expected = summary(succeeded(&kestrel(&flags(&dir.str("rows.libsvm"), &[]))));
    broker.session("kestrel-t", "t");
    broker.publish("t", &data.iter().map(|&r| libsvm(r)).collect::<Vec<_>>());
    let url = format!("mqtts://127.0.0.1:{}/t", broker.port);
    let output =
        kestrel(&flags(&url, &["--client-id", "kestrel-t", "--max-rows", "100", "--ca-file", &dir.str("ca.pem")]));
    assert_eq!(summary(succeeded(&output)), expected);

    let started = Instant::now();
    let output = kestrel(&flags(&url, &["--client-id", "kestrel-t", "--max-rows", "100"]));
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{url}: ")), "{stderr}");
    assert!(stderr.contains("certificate") || stderr.contains("--ca-file"), "{stderr}");
}
