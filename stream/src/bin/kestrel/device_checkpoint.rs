//! `kestrel inspect` of a checkpoint a device wrote: the bytes a learning object of the C
//! library (`kestrel_svm_checkpoint` and its siblings) put in flash, copied off the device.
//!
//! The C library's own reader ([`kestrel_ffi::checkpoint::describe`]) checks the frame —
//! length, format version, CRC-32, so a torn write is named as one — and decodes the
//! header: which object, its C configuration by the struct's field names, and how much it
//! has learned. A learner's checkpoint is then resumed and saved, as `kestrel import` does
//! ([`device::import_model`]), which checks the buffers after the header: `inspect` says
//! whether it resumes, and the model it makes. (A scaler's buffers are not checked: it has
//! no model of its own.)

use std::path::Path;

use anyhow::{Result, bail};
use kestrel_ffi::checkpoint::Described;
use kestrel_ffi::kernel::KernelKind;
use kestrel_ffi::svm::SvmLoss;
use kestrel_stream::device;
use serde_json::Value;

use crate::args::InspectArgs;

/// Prints what the device checkpoint `bytes` holds ([`device::describe`]), or fails naming
/// what is wrong with it.
pub fn inspect(args: &InspectArgs, bytes: &[u8]) -> Result<()> {
    let path = args.model.display();
    let (described, info) = device::describe(bytes).or_else(|status| bail!("{path}: {}", device::refused(status)))?;
    if args.json {
        return Ok(say!("{}", Value::Object(info))?);
    }
    let name = described.object().c_name();
    say!("{path}: checkpoint of a device's {name} (the C library's), {} bytes, checksum ok", bytes.len())?;
    say!("{}", learned(&described))?;
    if let Some(config) = info.get("config") {
        say!("config ({name}_config): {}", listed(config))?;
    }
    match (info.get("model"), info.get("error")) {
        (Some(Value::String(summary)), _) => say!("resumes: yes; its model (kestrel import): {summary}")?,
        (_, Some(Value::String(why))) => say!("resumes: no: {why}")?,
        _ => {}
    }
    Ok(say!("{}", continuation(&described, &args.model))?)
}

/// What the object has learned, in its own terms.
fn learned(described: &Described) -> String {
    let seen = seen(described);
    match described {
        Described::Svm { probability_samples: Some([negatives, positives]), .. } => {
            format!("learned: {seen}; its class probability from {negatives} of label -1 and {positives} of +1")
        }
        Described::Svm { .. } | Described::Slkl { .. } => format!("learned: {seen}"),
        Described::Multiclass { config, .. } => format!("learned: {seen} of {} classes", config.classes),
        Described::Novelty { flagged, .. } => format!("seen: {seen}, {flagged} flagged"),
        Described::Scaler { dim, .. } => format!("statistics: {seen} of {dim} features"),
    }
}

/// What the object has seen: `300 samples`, or a detector's `300 readings`.
pub(crate) fn seen(described: &Described) -> String {
    match described {
        Described::Svm { samples_seen, .. }
        | Described::Multiclass { samples_seen, .. }
        | Described::Slkl { samples_seen, .. } => format!("{samples_seen} samples"),
        Described::Novelty { samples_seen, .. } => format!("{samples_seen} readings"),
        Described::Scaler { count, .. } => format!("{count} samples"),
    }
}

/// `name value, …` of a JSON object's fields (a nested one in braces), by name; an
/// enumeration's value by its constant's name in `kestrel.h`.
fn listed(value: &Value) -> String {
    match value {
        Value::Object(fields) => {
            fields.iter().map(|(name, value)| format!("{name} {}", field(name, value))).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

fn field(name: &str, value: &Value) -> String {
    let number = value.as_u64().and_then(|v| u32::try_from(v).ok());
    let constant = match name {
        "loss" => number.and_then(SvmLoss::of).map(SvmLoss::c_name),
        "kind" => number.and_then(KernelKind::of).map(KernelKind::c_name),
        _ => None,
    };
    match (constant, value) {
        (Some(constant), _) => constant.to_string(),
        (None, Value::Object(_)) => format!("{{{}}}", listed(value)),
        (None, other) => other.to_string(),
    }
}

/// How the checkpoint goes on: a resume in the C library, or its model through `kestrel
/// import`.
fn continuation(described: &Described, path: &Path) -> String {
    let (name, path) = (described.object().c_name(), path.display());
    let (given, model) = match described {
        Described::Scaler { dim, .. } => (
            format!("dim {dim}"),
            format!(
                "its statistics go into a learner's model by `kestrel import LEARNER.bin --scaler {path} --out MODEL`"
            ),
        ),
        _ => (
            "this config".to_string(),
            format!(
                "the model `kestrel predict` reads: `kestrel import {path} --out MODEL` (add `--scaler` with the \
                 checkpoint of the scaler that standardised its inputs)"
            ),
        ),
    };
    format!("continue it: {name}_resume with {given}, on a device or a host build of the C library\n{model}")
}
