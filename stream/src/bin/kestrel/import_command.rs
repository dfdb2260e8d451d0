//! `kestrel import`: a checkpoint a device's C library wrote, made the model file its
//! learner's `*_save` would have written, for the host's commands and Python
//! ([`kestrel_stream::device::import_model`]).
//!
//! The C library's own resume and save do the work, so the model's bytes are the
//! device's; the learner's configuration comes from the checkpoint. With `--scaler`, the
//! statistics of the device's `kestrel_scaler` go into the model and its predictions take
//! raw sensor units, as a save given the scaler writes.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow};
use clap::Args;
use kestrel_stream::device::{self, Input};
use kestrel_stream::limits::MAX_FILE_BYTES;
use kestrel_stream::{file, model};

use crate::device_checkpoint;

#[derive(Args)]
pub struct ImportArgs {
    /// The learner's checkpoint, copied off the device (`kestrel_svm_checkpoint`,
    /// `kestrel_slkl_checkpoint` or `kestrel_novelty_checkpoint`).
    pub checkpoint: PathBuf,
    /// The checkpoint of the `kestrel_scaler` that standardised the learner's inputs: the
    /// model then takes raw units.
    #[arg(long)]
    pub scaler: Option<PathBuf>,
    /// The model file to write.
    #[arg(long)]
    pub out: PathBuf,
}

/// `kestrel import`.
pub fn run(args: &ImportArgs) -> Result<()> {
    let learner = file::read_bounded(&args.checkpoint, MAX_FILE_BYTES)?;
    let scaler = args.scaler.as_deref().map(|path| file::read_bounded(path, MAX_FILE_BYTES)).transpose()?;
    let (model, described) = device::import_model(&learner, scaler.as_deref()).map_err(|error| {
        let input = match (error.input(), &args.scaler) {
            (Input::Scaler, Some(scaler)) => format!("--scaler {}", scaler.display()),
            _ => args.checkpoint.display().to_string(),
        };
        anyhow!("{input}: {error}")
    })?;
    let info = model::describe_read(&args.out, &model)?;
    file::write_atomic(&args.out, &model).with_context(|| format!("writing {}", args.out.display()))?;
    let learned = device_checkpoint::seen(&described);
    let scaled = if scaler.is_some() { ", with the scaler's statistics" } else { "" };
    tell!(
        "kestrel: wrote {} — {}, from a device's {} after {learned}{scaled}",
        args.out.display(),
        info.summary(),
        described.object().c_name()
    );
    Ok(())
}
