//! `kestrel inspect`: what a model file holds, what a `kestrel stream` checkpoint holds and
//! how far its run got, or what a device's checkpoint holds ([`device_checkpoint`]).

use anyhow::{Context, Result};
use kestrel_stream::checkpoint::{self, Checkpoint};
use kestrel_stream::file;
use kestrel_stream::limits::MAX_FILE_BYTES;
use kestrel_stream::model;
use serde_json::{Map, Value, json};

use crate::args::InspectArgs;
use crate::commands::{detection_text, listed_name};
use crate::device_checkpoint;

/// `kestrel inspect`: a model file, a `kestrel stream` checkpoint ([`inspect_checkpoint`])
/// or a device's checkpoint ([`device_checkpoint::inspect`]).
pub fn inspect(args: &InspectArgs) -> Result<()> {
    let bytes = file::read_bounded(&args.model, MAX_FILE_BYTES)?;
    if bytes.starts_with(&checkpoint::FORMAT.magic) {
        return inspect_checkpoint(args, &bytes);
    }
    if bytes.starts_with(&kestrel_core::device_checkpoint::FORMAT.magic) {
        return device_checkpoint::inspect(args, &bytes);
    }
    let info = model::describe_read(&args.model, &bytes)?;
    if args.json {
        say!("{}", serde_json::to_string(&info)?)?;
    } else if let Some(components) = info.components {
        say!(
            "{}: kernel projection ({}), {} features{} to {components} components, {} centres, kernel {}, {} bytes, \
             checksum ok (apply it with `kestrel transform --apply`)",
            args.model.display(),
            info.scalar,
            info.dim,
            if info.scaled { " (standardised)" } else { "" },
            info.centers,
            info.kernel,
            info.bytes
        )?;
        say_feature_names(&info.feature_names)?;
    } else {
        say!("{}: {}, checksum ok", args.model.display(), info.summary())?;
        if let Some(learners) = written_by(info.kind) {
            say!("format: the {} {}s' file, which {learners} write", info.kind, info.task)?;
        }
        if !info.class_names.is_empty() {
            say!("classes: {}", info.class_names.iter().map(|name| listed_name(name)).collect::<Vec<_>>().join(", "))?;
        }
        say_feature_names(&info.feature_names)?;
        if !info.relevance.is_empty() {
            let weights: Vec<String> = info.relevance.iter().map(|w| format!("{w:.3}")).collect();
            say!("relevance weights: {}", weights.join(" "))?;
        }
        if let Some(bytes) = info.posterior_bytes {
            let m = info.centers;
            say!("predictive variance (predict --std): the posterior of the {m} centres, {bytes} bytes in memory")?;
        }
        if info.probabilities {
            say!("class probabilities (predict --probabilities): Platt's sigmoid of each decision value")?;
        }
    }
    Ok(())
}

/// `kestrel inspect`'s line of a model's feature names, when it has them: the first
/// twenty (`--json` lists them all).
fn say_feature_names(names: &[String]) -> std::io::Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    let listed = names.iter().take(20).map(|name| listed_name(name)).collect::<Vec<_>>().join(", ");
    let more = if names.len() > 20 { format!(", … {} in all", names.len()) } else { String::new() };
    say!("features (read by these names from a CSV header): {listed}{more}")
}

/// `kestrel inspect` of a `kestrel stream` checkpoint: the learner, how far the run got,
/// its score so far and the flags a resume must repeat.
fn inspect_checkpoint(args: &InspectArgs, bytes: &[u8]) -> Result<()> {
    let path = args.model.display();
    let saved = Checkpoint::from_bytes(bytes).with_context(|| path.to_string())?;
    let flags: Vec<(&str, &str)> = saved.config.flags().filter(|(flag, _)| *flag != checkpoint::COLUMNS).collect();
    let learner = saved.config.value("--learner").unwrap_or("unknown");
    let metrics = &saved.metrics;
    let scored = metrics.n;
    let (name, value) = match learner {
        "slkl" => ("mse", (scored > 0).then(|| metrics.squared / scored as f64)),
        "novelty" => ("flagged", None),
        _ => ("accuracy", (scored > 0).then(|| metrics.correct as f64 / scored as f64)),
    };
    if args.json {
        let flags: Map<String, Value> = flags.iter().map(|(flag, value)| (flag.to_string(), json!(value))).collect();
        let mut info = json!({
            "kind": "stream-checkpoint", "learner": learner, "rows": saved.rows, "seen": saved.seen,
            "skipped": saved.skipped, "scored": scored, "flags": flags, "learner_state_bytes": saved.learner.len(),
            "bytes": bytes.len(),
        });
        if let (Some(object), Some(value)) = (info.as_object_mut(), value) {
            object.insert(name.to_string(), json!(value));
        }
        return Ok(say!("{info}")?);
    }
    let score = match (learner, value) {
        ("novelty", _) => detection_text(&metrics.detections),
        (_, Some(value)) => format!("prequential {name} {value:.4} over {scored} rows"),
        (_, None) => "nothing scored yet".to_string(),
    };
    say!("{path}: checkpoint of `kestrel stream --learner {learner}`, {} bytes, checksum ok", bytes.len())?;
    say!(
        "progress: {} input rows consumed ({} bad, skipped), {} samples learned; {score}",
        saved.rows,
        saved.skipped,
        saved.seen
    )?;
    let listed: Vec<String> = flags.iter().map(|(flag, value)| format!("{flag} {value}")).collect();
    say!("flags: {}", listed.join(", "))?;
    Ok(say!("continue it: kestrel stream --checkpoint {path} --resume, with the same flags")?)
}

/// The learners whose models share the file format of `kind`, when more than its namesake
/// writes it (the file does not say which of them did).
fn written_by(kind: &str) -> Option<&'static str> {
    match kind {
        "slkl" => Some("slkl, krr, ssvr and kpls"),
        "rsvm" => Some("rsvm (either solver) and lssvm"),
        _ => None,
    }
}
