//! `kestrel import`: a checkpoint a device's C library wrote, made the model file its
//! learner's `*_save` would have written, for the host's commands and Python.
//!
//! The C library's own resume and save do the work ([`kestrel_ffi::import`]), so the
//! model's bytes are the device's; the learner's configuration comes from the checkpoint.
//! With `--scaler`, the statistics of the device's `kestrel_scaler` go into the model and
//! its predictions take raw sensor units, as a save given the scaler writes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use kestrel_ffi::checkpoint::{self, Described};
use kestrel_ffi::{Status, import};
use kestrel_stream::limits::{self, MAX_FILE_BYTES};
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
    let described = described(&args.checkpoint, &learner)?;
    if let Described::Scaler { .. } = described {
        bail!(
            "{}: a kestrel_scaler's checkpoint has no model of its own; give it as --scaler beside the checkpoint of \
             the learner it standardised",
            args.checkpoint.display()
        );
    }
    let scaler = args.scaler.as_deref().map(read_scaler).transpose()?;
    let refused = |status| refused(args, &described, status);
    let words = import::work_words(&learner, scaler.as_deref()).map_err(refused)?;
    let mut work = limits::zeroed::<u64>(words, "the learner's work memory")?;
    let len = import::model_of(&learner, scaler.as_deref(), &mut work, None).map_err(refused)?;
    let mut model = limits::zeroed::<u8>(len, "the model")?;
    import::model_of(&learner, scaler.as_deref(), &mut work, Some(&mut model)).map_err(refused)?;
    let info = model::describe_read(&args.out, &model)?;
    file::write_atomic(&args.out, &model).with_context(|| format!("writing {}", args.out.display()))?;
    let name = described.object().c_name();
    let scaled = if scaler.is_some() { ", with the scaler's statistics" } else { "" };
    tell!(
        "kestrel: wrote {} — {}, from a device's {name} after {}{scaled}",
        args.out.display(),
        info.summary(),
        learned(&described)
    );
    Ok(())
}

/// What the checkpoint `bytes` read from `path` holds, or why it is none.
fn described(path: &Path, bytes: &[u8]) -> Result<Described> {
    checkpoint::describe(bytes).or_else(|status| bail!("{}: {}", path.display(), device_checkpoint::refused(status)))
}

/// The scaler's checkpoint at `path`, once it is one.
fn read_scaler(path: &Path) -> Result<Vec<u8>> {
    let bytes = file::read_bounded(path, MAX_FILE_BYTES)?;
    match described(path, &bytes)? {
        Described::Scaler { .. } => Ok(bytes),
        other => bail!(
            "--scaler {}: a checkpoint of a device's {}, not of a kestrel_scaler",
            path.display(),
            other.object().c_name()
        ),
    }
}

/// Samples the learner has seen, in its terms.
fn learned(described: &Described) -> String {
    match described {
        Described::Svm { samples_seen, .. } | Described::Slkl { samples_seen, .. } => format!("{samples_seen} samples"),
        Described::Novelty { samples_seen, .. } => format!("{samples_seen} readings"),
        Described::Scaler { count, .. } => format!("{count} samples"),
    }
}

/// Why the learner did not resume or save.
fn refused(args: &ImportArgs, described: &Described, status: Status) -> anyhow::Error {
    let path = args.checkpoint.display();
    let name = described.object().c_name();
    match (status, &args.scaler) {
        (Status::DimensionMismatch, Some(scaler)) => {
            anyhow::anyhow!("--scaler {}: its dimension is not the {name}'s", scaler.display())
        }
        (Status::InvalidParam, _) => anyhow::anyhow!("{path}: a configuration no {name} can have"),
        (Status::Numerical, _) => {
            anyhow::anyhow!("{path}: the {name}'s state cannot make a model (a numerical failure)")
        }
        (status, _) => anyhow::anyhow!("{path}: the {name} did not resume: {}", device_checkpoint::refused(status)),
    }
}
