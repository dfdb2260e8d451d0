//! Checkpoints a device's C library wrote, read on the host (feature `device`): what one
//! holds ([`describe`]), why one is refused, in words, and the model file a learner's
//! checkpoint makes — what `kestrel inspect`, `kestrel import` and Python's
//! `kestrel.describe_checkpoint` and `kestrel.import_checkpoint` use.
//!
//! The C library's own code does the reading, resuming and saving
//! ([`kestrel_ffi::checkpoint::describe`], [`kestrel_ffi::import`]), so there is no second
//! copy of the format here; this module gives its statuses words and allocates the work
//! memory, once the checkpoint's size has bounded it.

use kestrel_ffi::Status;
use kestrel_ffi::checkpoint::{self, Described};
use kestrel_ffi::import::{self, Refused};
use serde_json::{Map, Value, json};

use crate::limits::{self, AllocError};
use crate::model;

/// Which of the inputs of [`import_model`] an [`ImportError`] is about.
pub use kestrel_ffi::import::Input;

/// Why a checkpoint made no model.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// One of the inputs is no checkpoint the C library reads.
    #[error("{}", refused(*.1))]
    Unreadable(Input, Status),
    /// A scaler's checkpoint was given as the learner's.
    #[error(
        "a kestrel_scaler's checkpoint has no model of its own; give it as the scaler beside the checkpoint of the \
         learner it standardised"
    )]
    ScalerAlone,
    /// The scaler's input holds a learner's checkpoint.
    #[error("a checkpoint of a device's {0}, not of a kestrel_scaler")]
    NotAScaler(&'static str),
    /// The scaler standardised another number of features than the learner takes.
    #[error("the scaler's dimension is not the {0}'s")]
    ScalerDimension(&'static str),
    /// The learner has learned nothing, so it has no model to save (a detector before its
    /// first reading).
    #[error("the {0} has learned nothing yet: it has no model (its checkpoint was written before its first reading)")]
    NothingLearned(&'static str),
    /// The learner or the scaler (the input) did not resume, or the learner's state made
    /// no model.
    #[error("the {1} did not resume: {reason}", reason = resume_refused(*.2))]
    NotResumed(Input, &'static str, Status),
    /// The work memory or the model could not be allocated.
    #[error(transparent)]
    Alloc(#[from] AllocError),
}

impl ImportError {
    /// The input the error is about.
    pub fn input(&self) -> Input {
        match self {
            ImportError::Unreadable(input, _) | ImportError::NotResumed(input, ..) => *input,
            ImportError::NotAScaler(_) | ImportError::ScalerDimension(_) => Input::Scaler,
            _ => Input::Learner,
        }
    }
}

/// The model file of the learner whose checkpoint is `learner`, with the statistics of
/// the scaler whose checkpoint is `scaler`: the bytes the learner's `*_save` would have
/// written on the device; and what the learner's checkpoint holds.
///
/// # Errors
/// [`ImportError`], naming the input it is about.
pub fn import_model(learner: &[u8], scaler: Option<&[u8]>) -> Result<(Vec<u8>, Described), ImportError> {
    let described = checkpoint::describe(learner).map_err(|status| ImportError::Unreadable(Input::Learner, status))?;
    let name = described.object().c_name();
    if let Described::Scaler { .. } = described {
        return Err(ImportError::ScalerAlone);
    }
    if let Some(scaler) = scaler {
        match checkpoint::describe(scaler).map_err(|status| ImportError::Unreadable(Input::Scaler, status))? {
            Described::Scaler { .. } => {}
            other => return Err(ImportError::NotAScaler(other.object().c_name())),
        }
    }
    // The checkpoints read: a refusal from here on is the resume's or the save's, of the
    // input it names.
    let not_resumed = |Refused { input, status }| {
        let object = match input {
            Input::Learner => name,
            Input::Scaler => "kestrel_scaler",
        };
        ImportError::NotResumed(input, object, status)
    };
    let words = import::work_words(learner, scaler).map_err(not_resumed)?;
    let refused = |refusal: Refused| match (refusal.input, refusal.status) {
        (Input::Scaler, Status::DimensionMismatch) => ImportError::ScalerDimension(name),
        // Its configuration checked by `work_words`, the learner's INVALID_PARAM is its
        // save's: a detector that has learned nothing has no model.
        (Input::Learner, Status::InvalidParam) => ImportError::NothingLearned(name),
        _ => not_resumed(refusal),
    };
    let mut work = limits::zeroed::<u64>(words, "the learner's work memory")?;
    let len = import::model_of(learner, scaler, &mut work, None).map_err(refused)?;
    let mut model = limits::zeroed::<u8>(len, "the model")?;
    import::model_of(learner, scaler, &mut work, Some(&mut model)).map_err(refused)?;
    Ok((model, described))
}

/// What the device checkpoint `bytes` holds, as `kestrel inspect --json` prints it: `kind`
/// (`device-checkpoint`), `object` (the C name), `bytes`, the header's fields by the C
/// struct's names (`config`, `samples_seen`, …), and for a learner whether it `resumes`,
/// with the summary of the `model` it makes ([`import_model`]) or the `error` why not;
/// beside the header decoded.
///
/// # Errors
/// The status the C library's reader refused the bytes with ([`refused`] words it).
pub fn describe(bytes: &[u8]) -> Result<(Described, Map<String, Value>), Status> {
    let described = checkpoint::describe(bytes)?;
    let mut info = Map::new();
    info.extend([
        ("kind".to_string(), json!("device-checkpoint")),
        ("object".to_string(), json!(described.object().c_name())),
        ("bytes".to_string(), json!(bytes.len())),
    ]);
    // Through JSON text, so that a `float` field is the float it is (0.1, not the f64
    // nearest to it); the header's variant is the object named above.
    let fields = serde_json::to_string(&described).ok().and_then(|text| serde_json::from_str::<Value>(&text).ok());
    if let Some(Value::Object(variant)) = fields
        && let Some(Value::Object(fields)) = variant.into_iter().next().map(|(_, fields)| fields)
    {
        info.extend(fields);
    }
    if !matches!(described, Described::Scaler { .. }) {
        let model = import_model(bytes, None).map_err(|error| error.to_string()).and_then(|(model, _)| {
            model::describe(&model).map(|info| info.summary()).map_err(|error| error.to_string())
        });
        match model {
            Ok(summary) => info.extend([("resumes".into(), json!(true)), ("model".into(), json!(summary))]),
            Err(why) => info.extend([("resumes".into(), json!(false)), ("error".into(), json!(why))]),
        }
    }
    Ok((described, info))
}

/// Why the C library's reader refused bytes given as a device checkpoint.
pub fn refused(status: Status) -> &'static str {
    match status {
        Status::ModelTruncated => {
            "a device checkpoint cut short: it ends before the length its frame announces (a write to flash torn by a \
             reset, or a partial copy)"
        }
        Status::ModelCorrupted => {
            "a damaged device checkpoint: its CRC-32 does not match, or its header does not decode"
        }
        Status::ModelUnsupported => "a device checkpoint of another format version than this kestrel reads",
        _ => "not a checkpoint of any object the C library has",
    }
}

/// Why a checkpoint that reads did not resume, or its state made no model.
fn resume_refused(status: Status) -> &'static str {
    match status {
        Status::InvalidParam => "its configuration is one no object can have",
        Status::Numerical => "its state cannot make a model (a numerical failure)",
        Status::ModelCorrupted => "its buffers do not hold the state its header describes (a damaged checkpoint)",
        status => refused(status),
    }
}

#[cfg(test)]
mod tests {
    use kestrel_core::device_checkpoint::FORMAT;
    use kestrel_core::frame;

    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap()
    }

    /// A scaler checkpoint that reads (its CRC sealed again) but does not resume — a
    /// negative sum of squares — is named as the scaler's fault, not the learner's.
    #[test]
    fn a_scaler_that_does_not_resume_is_named() {
        let (learner, mut scaler) = (fixture("device-checkpoint-svm.bin"), fixture("device-checkpoint-scaler.bin"));
        assert!(import_model(&learner, Some(&scaler)).is_ok());
        // The last 9 floats of the payload: 3 means, then the 3 sums of squares, then 3 more.
        let m2 = scaler.len() - frame::TRAILER_LEN - 9 * 4 + 3 * 4;
        scaler[m2..m2 + 4].copy_from_slice(&(-1.0f32).to_le_bytes());
        let payload_len = scaler.len() - frame::HEADER_LEN - frame::TRAILER_LEN;
        FORMAT.seal([4, 0], payload_len, &mut scaler).unwrap();
        let error = import_model(&learner, Some(&scaler)).unwrap_err();
        assert_eq!(error.input(), Input::Scaler);
        assert_eq!(
            error.to_string(),
            "the kestrel_scaler did not resume: its buffers do not hold the state its header describes (a damaged \
             checkpoint)"
        );
    }
}
