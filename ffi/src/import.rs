//! A device's checkpoint made a model file on the host: what `kestrel import` runs.
//!
//! A learner on a device writes checkpoints, for its own resets, and may never call its
//! `*_save`; a checkpoint copied off the device holds all that a save would write.
//! [`model_of`] resumes it in the caller's work memory — the C library's own
//! `kestrel_*_resume`, with its checks of the frame, the configuration and the state — and
//! saves the model through the learner's `kestrel_*_save`, with the statistics of a scaler's
//! checkpoint when one is given, so the bytes are those the device's save would have
//! written at that moment, and the host's tools (`kestrel predict`, `eval`, `inspect`,
//! Python's `kestrel.load`) read them as any model.
//!
//! The configuration comes from the checkpoint's own header ([`describe`]), so the host
//! needs nothing from the firmware's source. A scaler is paired by its dimension only: a
//! checkpoint of the wrong scaler of the same dimension is not detected (the device keeps
//! no link between the two objects).
//!
//! **Memory**: the caller's work, [`work_words`] words of [`KESTREL_ALIGN`] bytes — the
//! learner's `kestrel_*_work_bytes` and the scaler's, each rounded up to a word. The
//! configuration comes from the file, so it is held to the checkpoint's own size before
//! anything is allocated from it: every buffer of an object's work is in its checkpoint
//! (4 bytes an item there, at most 8 in the work: an index on a 64-bit host) but the saved
//! model's room, which is no larger than the buffers, so the work of a true checkpoint is
//! under 4 bytes per checkpoint byte, and 4 KiB for the handles and alignment (a
//! `kestrel_multiclass` also `KESTREL_MULTICLASS_CLASS_BYTES` per class, at most
//! `KESTREL_MULTICLASS_MAX_CLASSES` of them, for its classes' records:
//! `Sizes::records_bytes`); a
//! header claiming more than its bytes hold is `MODEL_CORRUPTED` (a resume would refuse it
//! too, but only after the work was had).

use core::ffi::c_void;
use core::ptr;

use crate::checkpoint::{Described, describe};
use crate::memory::KESTREL_ALIGN;
use crate::multiclass::{kestrel_multiclass_resume, kestrel_multiclass_save};
use crate::novelty::{kestrel_novelty_resume, kestrel_novelty_save};
use crate::scaler::{Scaler, kestrel_scaler_resume, kestrel_scaler_work_bytes};
use crate::slkl::{kestrel_slkl_resume, kestrel_slkl_save};
use crate::status::result_of;
use crate::svm::{kestrel_svm_resume, kestrel_svm_save};
use crate::{Sizes, Status};

/// Bytes of work an object may need per byte of its checkpoint (see the module doc).
const WORK_PER_CHECKPOINT_BYTE: usize = 4;
/// Bytes of work an object may need besides [`WORK_PER_CHECKPOINT_BYTE`]: its handle and
/// the alignment of its buffers.
const WORK_SLACK: usize = 4096;

/// Which checkpoint a [`Refused`] import is about (the learner's, too, for the caller's
/// buffers too short).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// The learner's checkpoint.
    Learner,
    /// The scaler's checkpoint.
    Scaler,
}

/// Why [`work_words`] or [`model_of`] refused: the C library's status, and the checkpoint
/// it is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The checkpoint the status is about.
    pub input: Input,
    /// The status.
    pub status: Status,
}

/// What the two checkpoints ask for, checked: the learner's description, the scaler's
/// dimension, and the words of the learner's work and of the scaler's (0 without one).
struct Plan {
    learner: Described,
    scaler_dim: Option<usize>,
    words: [usize; 2],
}

/// Words (of [`KESTREL_ALIGN`] bytes) of work memory [`model_of`] needs for the learner's
/// checkpoint `learner` and the scaler's checkpoint `scaler`.
///
/// # Errors
/// As [`describe`] of either; `MODEL_FOREIGN` when `learner` holds a scaler (it has no
/// model of its own) or `scaler` holds no scaler; `INVALID_PARAM` for a configuration no
/// object can have; `MODEL_CORRUPTED` for one that needs more work than its checkpoint's
/// bytes can fill (the module doc). Each about the checkpoint at fault.
pub fn work_words(learner: &[u8], scaler: Option<&[u8]>) -> Result<usize, Refused> {
    plan(learner, scaler).map(|plan| plan.words.iter().sum())
}

/// Writes into `out` the model file of the learner the checkpoint `learner` holds, with the
/// statistics of the scaler's checkpoint `scaler` when given, and returns its length; with
/// `out` `None`, only the length. `work` is scratch of at least [`work_words`] words.
///
/// # Errors
/// As [`work_words`]; `BUFFER_TOO_SMALL` for `work` or `out` too short; what the
/// learner's and the scaler's resume give (`MODEL_CORRUPTED` for a state that does not
/// resume); what the learner's save gives (`INVALID_PARAM` for a detector that has
/// learned nothing yet: it has no model); `DIMENSION_MISMATCH`, about the scaler, for one
/// of another dimension than the learner.
pub fn model_of(
    learner: &[u8],
    scaler: Option<&[u8]>,
    work: &mut [u64],
    out: Option<&mut [u8]>,
) -> Result<usize, Refused> {
    let Plan { learner: described, scaler_dim, words: [learner_words, scaler_words] } = plan(learner, scaler)?;
    let work = work
        .get_mut(..learner_words.saturating_add(scaler_words))
        .ok_or(refused(Input::Learner)(Status::BufferTooSmall))?;
    let (learner_work, scaler_work) = work.split_at_mut(learner_words);
    let scaler = match (scaler, scaler_dim) {
        (Some(bytes), Some(dim)) => resumed_scaler(bytes, dim, scaler_work).map_err(refused(Input::Scaler))?,
        _ => ptr::null(),
    };
    let asks_length = out.is_none();
    let (out, out_len) = out.map_or((ptr::null_mut(), 0), |out| (out.as_mut_ptr(), out.len()));
    let mut written = 0;
    let (work, work_len) = (learner_work.as_mut_ptr().cast::<c_void>(), learner_work.len() * KESTREL_ALIGN);
    // SAFETY: `learner` is a live slice outside `work`; `work` is `work_len` bytes aligned to
    // KESTREL_ALIGN that outlive the handle, which is used only in this block; `scaler` is
    // null or a live scaler handle in `scaler_work`; `out` is null with 0 or a live
    // slice's; `written` and each handle are live locals.
    let status = unsafe {
        match described {
            Described::Svm { config, .. } => {
                let mut svm = ptr::null_mut();
                let resumed = kestrel_svm_resume(&config, learner.as_ptr(), learner.len(), work, work_len, &mut svm);
                result_of(resumed).map_err(refused(Input::Learner))?;
                kestrel_svm_save(svm, scaler, out, out_len, &mut written)
            }
            Described::Multiclass { config, .. } => {
                let mut multiclass = ptr::null_mut();
                let resumed = kestrel_multiclass_resume(
                    &config,
                    learner.as_ptr(),
                    learner.len(),
                    work,
                    work_len,
                    &mut multiclass,
                );
                result_of(resumed).map_err(refused(Input::Learner))?;
                kestrel_multiclass_save(multiclass, scaler, out, out_len, &mut written)
            }
            Described::Slkl { config, .. } => {
                let mut slkl = ptr::null_mut();
                let resumed = kestrel_slkl_resume(&config, learner.as_ptr(), learner.len(), work, work_len, &mut slkl);
                result_of(resumed).map_err(refused(Input::Learner))?;
                kestrel_slkl_save(slkl, scaler, out, out_len, &mut written)
            }
            Described::Novelty { config, .. } => {
                let mut novelty = ptr::null_mut();
                let resumed =
                    kestrel_novelty_resume(&config, learner.as_ptr(), learner.len(), work, work_len, &mut novelty);
                result_of(resumed).map_err(refused(Input::Learner))?;
                kestrel_novelty_save(novelty, scaler, out, out_len, &mut written)
            }
            Described::Scaler { .. } => Status::ModelForeign,
        }
    };
    match status {
        Status::Ok => Ok(written),
        Status::BufferTooSmall if asks_length => Ok(written),
        Status::DimensionMismatch => Err(refused(Input::Scaler)(status)),
        other => Err(refused(Input::Learner)(other)),
    }
}

/// The refusal of `status` about `input`.
fn refused(input: Input) -> impl Fn(Status) -> Refused {
    move |status| Refused { input, status }
}

/// The two checkpoints' [`Plan`], once their headers read, the learner is one and the
/// scaler one, and each one's work is within the bound of its bytes.
fn plan(learner_bytes: &[u8], scaler_bytes: Option<&[u8]>) -> Result<Plan, Refused> {
    let learner = describe(learner_bytes).map_err(refused(Input::Learner))?;
    let sizes: &dyn Sizes = match &learner {
        Described::Svm { config, .. } => config,
        Described::Multiclass { config, .. } => config,
        Described::Slkl { config, .. } => config,
        Described::Novelty { config, .. } => config,
        Described::Scaler { .. } => return Err(refused(Input::Learner)(Status::ModelForeign)),
    };
    let (learner_work, records) = (sizes.work_bytes(), sizes.records_bytes());
    let learner_words =
        words_within(learner_work.saturating_sub(records), learner_bytes).map_err(refused(Input::Learner))?;
    let learner_words = learner_words.saturating_add(records.div_ceil(KESTREL_ALIGN));
    let Some(scaler_bytes) = scaler_bytes else {
        return Ok(Plan { learner, scaler_dim: None, words: [learner_words, 0] });
    };
    let scaler_dim = match describe(scaler_bytes) {
        Ok(Described::Scaler { dim, .. }) => usize::try_from(dim).map_err(|_| Status::InvalidParam),
        Ok(_) => Err(Status::ModelForeign),
        Err(status) => Err(status),
    }
    .map_err(refused(Input::Scaler))?;
    let scaler_words =
        words_within(kestrel_scaler_work_bytes(scaler_dim), scaler_bytes).map_err(refused(Input::Scaler))?;
    Ok(Plan { learner, scaler_dim: Some(scaler_dim), words: [learner_words, scaler_words] })
}

/// The words of `work` bytes, once its configuration is one an object can have (not 0:
/// `INVALID_PARAM`) and within the bound of its checkpoint's `bytes` (`MODEL_CORRUPTED`).
fn words_within(work: usize, bytes: &[u8]) -> Result<usize, Status> {
    let most = bytes.len().saturating_mul(WORK_PER_CHECKPOINT_BYTE).saturating_add(WORK_SLACK);
    let words = work.div_ceil(KESTREL_ALIGN);
    match work {
        0 => Err(Status::InvalidParam),
        _ if words.saturating_mul(KESTREL_ALIGN) > most => Err(Status::ModelCorrupted),
        _ => Ok(words),
    }
}

/// The scaler the checkpoint `bytes` of `dim` features holds, resumed in `work`.
fn resumed_scaler(bytes: &[u8], dim: usize, work: &mut [u64]) -> Result<*const Scaler, Status> {
    let mut scaler = ptr::null_mut();
    let (work, work_len) = (work.as_mut_ptr().cast::<c_void>(), work.len() * KESTREL_ALIGN);
    // SAFETY: `bytes` is a live slice outside `work`, which is `work_len` bytes aligned to
    // KESTREL_ALIGN and outlives the handle (the caller's borrow); `scaler` is a live local.
    result_of(unsafe { kestrel_scaler_resume(dim, bytes.as_ptr(), bytes.len(), work, work_len, &mut scaler) })?;
    Ok(scaler)
}

#[cfg(test)]
mod tests {
    use std::vec;
    use std::vec::Vec;

    use super::*;
    use crate::novelty::kestrel_novelty_checkpoint;
    use crate::scaler::kestrel_scaler_checkpoint;
    use crate::slkl::kestrel_slkl_checkpoint;
    use crate::svm::SvmCheckpoint;
    use crate::svm::kestrel_svm_checkpoint;
    use crate::test_support::{Learned, written_by};
    use kestrel_core::device_checkpoint::{DeviceObject, FORMAT};
    use kestrel_core::frame;

    /// The model made from each learner's checkpoint, with and without the scaler's, is
    /// byte for byte what the learner's own save writes at that moment.
    #[test]
    fn a_checkpoint_gives_the_model_its_learner_saves() {
        let learned = Learned::new(40);
        let Learned { svm, slkl, novelty, scaler, .. } = learned;
        // SAFETY: live handles; `written_by` gives a writable buffer and length.
        let (checkpoints, saved, saved_scaled, scaler_checkpoint) = unsafe {
            (
                [
                    written_by(|out, len, n| kestrel_svm_checkpoint(svm, out, len, n)),
                    written_by(|out, len, n| kestrel_slkl_checkpoint(slkl, out, len, n)),
                    written_by(|out, len, n| kestrel_novelty_checkpoint(novelty, out, len, n)),
                ],
                [
                    written_by(|out, len, n| kestrel_svm_save(svm, ptr::null(), out, len, n)),
                    written_by(|out, len, n| kestrel_slkl_save(slkl, ptr::null(), out, len, n)),
                    written_by(|out, len, n| kestrel_novelty_save(novelty, ptr::null(), out, len, n)),
                ],
                [
                    written_by(|out, len, n| kestrel_svm_save(svm, scaler, out, len, n)),
                    written_by(|out, len, n| kestrel_slkl_save(slkl, scaler, out, len, n)),
                    written_by(|out, len, n| kestrel_novelty_save(novelty, scaler, out, len, n)),
                ],
                written_by(|out, len, n| kestrel_scaler_checkpoint(scaler, out, len, n)),
            )
        };
        let unscaled = checkpoints.iter().zip(&saved).map(|(checkpoint, model)| (checkpoint, None, model));
        let with_scaler = Some(scaler_checkpoint.as_slice());
        let scaled = checkpoints.iter().zip(&saved_scaled).map(|(checkpoint, model)| (checkpoint, with_scaler, model));
        for (checkpoint, scaler, expected) in unscaled.chain(scaled) {
            let mut work = vec![0; work_words(checkpoint, scaler).unwrap()];
            let len = model_of(checkpoint, scaler, &mut work, None).unwrap();
            assert_eq!(len, expected.len());
            let mut model = vec![0; len];
            assert_eq!(status(model_of(checkpoint, scaler, &mut work, Some(&mut model))), Ok(len));
            assert_eq!(&model, expected);
            assert_eq!(
                status(model_of(checkpoint, scaler, &mut work, Some(&mut model[..len - 1]))),
                Err(Status::BufferTooSmall)
            );
            let short = work.len() - 1;
            assert_eq!(status(model_of(checkpoint, scaler, &mut work[..short], None)), Err(Status::BufferTooSmall));
        }
    }

    /// A scaler's checkpoint has no model; a learner's is no scaler; a scaler of another
    /// dimension, a damaged checkpoint, bytes of no checkpoint and a detector that has
    /// learned nothing are statuses.
    #[test]
    fn what_is_no_learner_and_scaler_is_refused() {
        let learned = Learned::new(20);
        let (svm, scaler) = (learned.svm, learned.scaler);
        // SAFETY: live handles; `written_by` gives a writable buffer and length.
        let (svm_checkpoint, scaler_checkpoint) = unsafe {
            (
                written_by(|out, len, n| kestrel_svm_checkpoint(svm, out, len, n)),
                written_by(|out, len, n| kestrel_scaler_checkpoint(scaler, out, len, n)),
            )
        };
        let mut work = vec![0; 1 << 14];
        let mut model_of = |learner: &[u8], scaler: Option<&[u8]>| status(model_of(learner, scaler, &mut work, None));
        assert_eq!(model_of(&scaler_checkpoint, None), Err(Status::ModelForeign));
        assert_eq!(model_of(&svm_checkpoint, Some(&svm_checkpoint)), Err(Status::ModelForeign));
        assert_eq!(model_of(&svm_checkpoint[..40], None), Err(Status::ModelTruncated));
        assert_eq!(model_of(b"not a checkpoint, nor a model either", None), Err(Status::ModelForeign));
        let mut damaged = svm_checkpoint.clone();
        let last = damaged.len() - 5;
        damaged[last] ^= 1;
        assert_eq!(model_of(&damaged, None), Err(Status::ModelCorrupted));

        let other = learned_scaler_of_dim(2);
        assert_eq!(model_of(&svm_checkpoint, Some(&other)), Err(Status::DimensionMismatch));
        // Each refusal names the checkpoint at fault.
        let mut work = vec![0; 1 << 14];
        let mut refusal = |learner: &[u8], scaler: Option<&[u8]>| super::model_of(learner, scaler, &mut work, None);
        assert_eq!(refusal(&svm_checkpoint, Some(&other)).unwrap_err().input, Input::Scaler);
        assert_eq!(refusal(&svm_checkpoint, Some(&svm_checkpoint)).unwrap_err().input, Input::Scaler);
        assert_eq!(refusal(&scaler_checkpoint, None).unwrap_err().input, Input::Learner);

        // A detector checkpointed before its first reading resumes, but has no model.
        let fresh = Learned::new(0);
        let novelty = fresh.novelty;
        // SAFETY: a live handle; `written_by` gives a writable buffer and length.
        let novelty_checkpoint = unsafe { written_by(|out, len, n| kestrel_novelty_checkpoint(novelty, out, len, n)) };
        assert_eq!(model_of(&novelty_checkpoint, None), Err(Status::InvalidParam));
    }

    /// A checkpoint whose header claims a window of 2²⁸ samples, sealed with a good CRC, is
    /// refused before its work is asked for: the true checkpoints' work is within the bound
    /// of their bytes.
    #[test]
    fn a_configuration_larger_than_its_checkpoint_is_refused() {
        let learned = Learned::new(20);
        let (svm, slkl, novelty, scaler) = (learned.svm, learned.slkl, learned.novelty, learned.scaler);
        // SAFETY: live handles; `written_by` gives a writable buffer and length.
        let checkpoints = unsafe {
            [
                written_by(|out, len, n| kestrel_svm_checkpoint(svm, out, len, n)),
                written_by(|out, len, n| kestrel_slkl_checkpoint(slkl, out, len, n)),
                written_by(|out, len, n| kestrel_novelty_checkpoint(novelty, out, len, n)),
            ]
        };
        // SAFETY: as above.
        let scaler_checkpoint = unsafe { written_by(|out, len, n| kestrel_scaler_checkpoint(scaler, out, len, n)) };
        for checkpoint in &checkpoints {
            let words = work_words(checkpoint, Some(&scaler_checkpoint)).unwrap();
            let most = (checkpoint.len() + scaler_checkpoint.len()) * WORK_PER_CHECKPOINT_BYTE;
            assert!(words * KESTREL_ALIGN <= most, "{} words for {} bytes", words, checkpoint.len());
        }
        let svm_checkpoint = &checkpoints[0];
        let payload = &svm_checkpoint[frame::HEADER_LEN..svm_checkpoint.len() - frame::TRAILER_LEN];
        let (mut header, buffers) = postcard::take_from_bytes::<SvmCheckpoint>(payload).unwrap();
        header.config.window = 1 << 28;
        let mut forged = vec![0; svm_checkpoint.len() + 16];
        let header_len = postcard::to_slice(&header, &mut forged[frame::HEADER_LEN..]).unwrap().len();
        let payload_len = header_len + buffers.len();
        forged[frame::HEADER_LEN + header_len..frame::HEADER_LEN + payload_len].copy_from_slice(buffers);
        forged.truncate(frame::HEADER_LEN + payload_len + frame::TRAILER_LEN);
        FORMAT.seal([DeviceObject::Svm as u8, 0], payload_len, &mut forged).unwrap();
        let Ok(Described::Svm { config, .. }) = describe(&forged) else { panic!("the forged header decodes") };
        assert_eq!(config.window, 1 << 28);
        assert_eq!(status(work_words(&forged, None)), Err(Status::ModelCorrupted));
        assert_eq!(status(model_of(&forged, None, &mut [], None)), Err(Status::ModelCorrupted));
    }

    /// The status of a refusal, whichever checkpoint it is about.
    fn status<T>(result: Result<T, Refused>) -> Result<T, Status> {
        result.map_err(|refused| refused.status)
    }

    /// The checkpoint of a scaler of `dim` features that observed one row.
    fn learned_scaler_of_dim(dim: usize) -> Vec<u8> {
        let mut work = vec![0u64; kestrel_scaler_work_bytes(dim).div_ceil(8)];
        let mut scaler = ptr::null_mut();
        let row = vec![0.5f32; dim];
        // SAFETY: `work` is aligned, as long as given and outlives the handle; every
        // pointer is to a live local.
        unsafe {
            let created =
                crate::scaler::kestrel_scaler_create(dim, work.as_mut_ptr().cast(), work.len() * 8, &mut scaler);
            assert_eq!(created, Status::Ok);
            assert_eq!(crate::scaler::kestrel_scaler_observe(scaler, row.as_ptr(), dim), Status::Ok);
            written_by(|out, len, n| kestrel_scaler_checkpoint(scaler, out, len, n))
        }
    }
}
