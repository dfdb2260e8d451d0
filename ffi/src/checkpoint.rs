//! Checkpoints of the learners on the device: learning that survives a reset.
//!
//! A device that learns from its own sensors loses what it learned at every reset — a
//! watchdog, a brown-out, a new battery — unless the learner's state is kept in flash.
//! Each learning object of the ABI therefore writes a **checkpoint** into caller bytes
//! (`kestrel_svm_checkpoint`, `kestrel_multiclass_checkpoint`, `kestrel_slkl_checkpoint`,
//! `kestrel_novelty_checkpoint`, `kestrel_scaler_checkpoint`) and is rebuilt from one in a new work buffer
//! (`kestrel_*_resume`). The resumed object continues **bit for bit** as the saved one
//! would have: the same samples give the same predictions, steps and later checkpoints
//! (the core's `from_state_in` constructors; the random generator's state is saved too).
//!
//! A checkpoint is a frame of the core ([`kestrel_core::device_checkpoint`]), so a torn write to
//! flash — a reset in the middle of it — is caught by its length or CRC-32, never
//! resumed:
//!
//! ```text
//! offset  size  field
//! 0       4     magic "KSDC"
//! 4       2     format version (u16, little endian), currently 1
//! 6       2     tags: the object's kind (1 svm, 2 slkl, 3 novelty, 4 scaler, 5 multiclass), and the
//!               revision of its header (svm 1: the header is followed by its class
//!               probability's state; multiclass 1: its classes share one window; 0 for
//!               the others and for those two before; a revision up to the object's own
//!               is read)
//! 8       4     payload length P (u32, little endian)
//! 12      P     payload: the header, postcard-encoded — the object's configuration, its
//!               counters and the core learner's state — then its buffers: every float
//!               as 4 bytes and every index as a u32, little endian
//! 12+P    4     CRC-32 (ISO-HDLC) of bytes 0 .. 12+P, little endian
//! ```
//!
//! Indices are written as 32 bits (`SIZE_MAX`, the core's "none", as `0xFFFFFFFF`) so a
//! checkpoint moves between a 64-bit host and a 32-bit device. A resume names the
//! configuration it expects and refuses a checkpoint of another one with
//! `KESTREL_STATUS_CONFIG_MISMATCH` (a firmware update that changed the window starts
//! afresh instead of misreading the flash); truncated, altered or foreign bytes are the
//! model statuses (`MODEL_TRUNCATED`, `MODEL_CORRUPTED`, `MODEL_FOREIGN`,
//! `MODEL_UNSUPPORTED`), and the core's own checks of a state (an index outside its
//! buffer, NaN in a stored sample) refuse what a valid CRC still lets through.
//!
//! **Size.** The buffers' bytes, fixed by the configuration, plus the frame and the
//! header, at most [`KESTREL_CHECKPOINT_HEADER_BYTES`]: the header is postcard's encoding
//! of fewer than 80 numbers and flags (the largest, the novelty detector's with its two
//! quantile estimators), each at most 10 bytes; a `kestrel_multiclass` adds
//! `KESTREL_MULTICLASS_CLASS_CHECKPOINT_BYTES` a class for its classes' states.
//! `KESTREL_SVM_CHECKPOINT_BYTES(…)` and its siblings in the header give the bound at
//! compile time, for a static buffer; the exact length of a checkpoint follows the length
//! protocol of the `*_save` functions.
//!
//! **Only states that resume are written.** A learner fed values near the range of `float`
//! can break its own numerics (a factor no longer positive definite, a sum that
//! overflowed) and go on; its checkpoint would not resume. Before writing, each learner
//! runs the core's checks of a saved state on its own (`check_restorable`) and refuses
//! with `KESTREL_STATUS_NUMERICAL`, writing nothing, so the checkpoint already in flash
//! stays the last good one. (The scaler needs no such check: it refuses an update that
//! would overflow its statistics.) (The fuzz target `c_abi` found such states; it checkpoints and
//! resumes every learner it drives.)
//!
//! **Read on the host.** [`describe`] reads a checkpoint's frame and header without
//! resuming it — the object, its configuration, what it has learned — for `kestrel
//! inspect`, given a checkpoint copied off a device; [`crate::import`] makes a learner's
//! checkpoint its model file, for `kestrel import`.
//!
//! Cost: the core's check of the state, O(buffers); one pass over the buffers to write
//! them and one CRC pass (about 221,000 instructions on a Cortex-M4F for a 23 KB SLKL
//! checkpoint, BENCHMARKS.md); resuming reads, checks the CRC and the state likewise. No
//! memory besides the caller's.

use kestrel_core::device_checkpoint::{DeviceObject, FORMAT};
use kestrel_core::frame::{self, FrameError};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::Status;
use crate::memory;
use crate::multiclass::{self, MulticlassConfig};
use crate::novelty::{self, NoveltyConfig};
use crate::scaler;
use crate::slkl::{self, SlklConfig};
use crate::svm::{self, SvmConfig};

/// Bytes a checkpoint may take besides the object's buffers: the frame's 16 and the
/// header (see the module doc).
pub const KESTREL_CHECKPOINT_HEADER_BYTES: usize = 1024;

/// The most bytes of a checkpoint whose buffers hold `floats` floats and `indices`
/// indices (saturating).
pub(crate) const fn bound(floats: usize, indices: usize) -> usize {
    floats.saturating_add(indices).saturating_mul(4).saturating_add(KESTREL_CHECKPOINT_HEADER_BYTES)
}

/// A checkpoint being written into a caller's buffer; a value that does not fit is
/// counted, not written, so one pass gives the length a larger buffer needs.
pub(crate) struct Writer<'a> {
    out: &'a mut [u8],
    /// Payload bytes so far (written, or counted once the buffer was full).
    len: usize,
    fits: bool,
}

impl<'a> Writer<'a> {
    pub(crate) fn new(out: &'a mut [u8]) -> Self {
        Writer { out, len: 0, fits: true }
    }

    /// The next `size` bytes of the payload, or `None` (and from then on only counting)
    /// when they do not fit before the trailer.
    fn place(&mut self, size: usize) -> Option<&mut [u8]> {
        let start = frame::HEADER_LEN.saturating_add(self.len);
        let room = self.out.len().saturating_sub(frame::TRAILER_LEN);
        self.len = self.len.saturating_add(size);
        let place = if self.fits { self.out.get_mut(start..room).and_then(|rest| rest.get_mut(..size)) } else { None };
        self.fits = place.is_some();
        place
    }

    /// Appends `value`, postcard-encoded.
    pub(crate) fn value<V: Serialize>(&mut self, value: &V) -> Result<(), Status> {
        let size = postcard::serialize_with_flavor(value, postcard::ser_flavors::Size::default())
            .map_err(|_| Status::InvalidParam)?;
        if let Some(place) = self.place(size) {
            postcard::to_slice(value, place).map_err(|_| Status::InvalidParam)?;
        }
        Ok(())
    }

    /// Appends 4-byte items, each as `bytes` gives it: one bounds check for the whole
    /// slice, and none at all while only counting.
    fn items<V: Copy>(&mut self, values: &[V], bytes: impl Fn(V) -> [u8; 4]) {
        if let Some(place) = self.place(values.len().saturating_mul(4)) {
            for (out, &v) in place.chunks_exact_mut(4).zip(values) {
                out.copy_from_slice(&bytes(v));
            }
        }
    }

    /// Appends floats, 4 bytes each, little endian.
    pub(crate) fn floats(&mut self, values: &[f32]) {
        self.items(values, f32::to_le_bytes);
    }

    /// Appends 32-bit words, little endian.
    pub(crate) fn words(&mut self, values: &[u32]) {
        self.items(values, u32::to_le_bytes);
    }

    /// Appends indices as 32-bit words (`usize::MAX` as `u32::MAX`).
    ///
    /// # Errors
    /// `InvalidParam` for an index past `u32::MAX − 1` (no buffer of the ABI has one).
    pub(crate) fn indices(&mut self, values: &[usize]) -> Result<(), Status> {
        let fits = |&v: &usize| v == usize::MAX || u32::try_from(v).is_ok_and(|word| word != u32::MAX);
        if !values.iter().all(fits) {
            return Err(Status::InvalidParam);
        }
        self.items(values, |v| u32::try_from(v).unwrap_or(u32::MAX).to_le_bytes());
        Ok(())
    }

    /// Seals the frame around the payload and returns the checkpoint's length.
    ///
    /// # Errors
    /// `BufferTooSmall` with the length needed when the buffer is shorter.
    pub(crate) fn finish(self, kind: DeviceObject) -> Result<usize, (Status, usize)> {
        let needed = frame::framed_len(self.len);
        if !self.fits || self.out.len() < needed {
            return Err((Status::BufferTooSmall, needed));
        }
        FORMAT.seal([kind as u8, kind.revision()], self.len, self.out).map_err(|_| (Status::BufferTooSmall, needed))
    }
}

/// Writes a checkpoint into `out[0..out_len]` by `write`, and its length (or the length
/// needed, with `BUFFER_TOO_SMALL`) to `*written`: the length protocol of the `*_save`
/// functions. `write` runs twice, first to count the bytes, so a buffer too small is left
/// as it was.
///
/// # Safety
/// `out` is null or points to `out_len` writable bytes (null with `out_len` = 0 asks for
/// the length); `written` is null or points to a writable `size_t`.
pub(crate) unsafe fn write(
    kind: DeviceObject,
    out: *mut u8,
    out_len: usize,
    written: *mut usize,
    write: impl Fn(&mut Writer<'_>) -> Result<(), Status>,
) -> Result<(), Status> {
    memory::check_pointer(written)?;
    let mut counter = Writer::new(&mut []);
    write(&mut counter)?;
    let needed = frame::framed_len(counter.len);
    if out_len < needed {
        // SAFETY: checked non-null and aligned; writable by the contract.
        unsafe { memory::write(written, needed)? };
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: as this function's contract.
    let mut writer = Writer::new(unsafe { memory::bytes_mut(out, out_len)? });
    write(&mut writer)?;
    let len = writer.finish(kind).map_err(|(status, _)| status)?;
    // SAFETY: as above.
    unsafe { memory::write(written, len) }
}

/// What a checkpoint holds, read from its frame and header without resuming it: the object,
/// its configuration and what it has learned. For the host's tools (`kestrel inspect`),
/// given a checkpoint copied off a device.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Described {
    /// A `kestrel_svm`'s.
    Svm {
        /// Its `kestrel_svm_config`.
        config: SvmConfig,
        /// Samples learned since it was created.
        samples_seen: u64,
        /// The samples of −1 and of +1 its class probability learned from (`None` in a
        /// checkpoint written before it had one: revision 0 of its header).
        probability_samples: Option<[u64; 2]>,
    },
    /// A `kestrel_multiclass`'s.
    Multiclass {
        /// Its `kestrel_multiclass_config`.
        config: MulticlassConfig,
        /// Samples learned since it was created.
        samples_seen: u64,
    },
    /// A `kestrel_slkl`'s.
    Slkl {
        /// Its `kestrel_slkl_config`.
        config: SlklConfig,
        /// Samples learned since it was created.
        samples_seen: u64,
    },
    /// A `kestrel_novelty`'s.
    Novelty {
        /// Its `kestrel_novelty_config`.
        config: NoveltyConfig,
        /// Readings scored or learned since it was created.
        samples_seen: u64,
        /// Readings it flagged.
        flagged: u64,
    },
    /// A `kestrel_scaler`'s.
    Scaler {
        /// Features it standardises.
        dim: u64,
        /// Samples its statistics count.
        count: u64,
    },
}

impl Described {
    /// The object the checkpoint holds.
    pub fn object(&self) -> DeviceObject {
        match self {
            Described::Svm { .. } => DeviceObject::Svm,
            Described::Multiclass { .. } => DeviceObject::Multiclass,
            Described::Slkl { .. } => DeviceObject::Slkl,
            Described::Novelty { .. } => DeviceObject::Novelty,
            Described::Scaler { .. } => DeviceObject::Scaler,
        }
    }
}

/// Reads what the checkpoint `bytes` holds ([`Described`]): its frame (length, version,
/// CRC-32) and its header, not the buffers after it, which only a resume checks.
///
/// # Errors
/// `MODEL_TRUNCATED`, `MODEL_CORRUPTED` (checksum, or a header that does not decode),
/// `MODEL_FOREIGN` (not a device checkpoint, or of no known object), `MODEL_UNSUPPORTED`
/// (another format version).
pub fn describe(bytes: &[u8]) -> Result<Described, Status> {
    let (object, mut reader) = Reader::open_any(bytes)?;
    match object {
        DeviceObject::Svm => svm::describe(&mut reader),
        DeviceObject::Multiclass => multiclass::describe(&mut reader),
        DeviceObject::Slkl => slkl::describe(&mut reader),
        DeviceObject::Novelty => novelty::describe(&mut reader),
        DeviceObject::Scaler => scaler::describe(&mut reader),
    }
}

/// The checkpoint at `bytes[0..len]` of an object of `kind`: its header `H`, once
/// `same_config` holds of it, and the reader at the buffers that follow.
///
/// # Errors
/// As [`Reader::open`] and [`Reader::value`], and the pointer's statuses;
/// `CONFIG_MISMATCH` when `same_config` does not hold.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes that nothing writes while the reader
/// is used.
pub(crate) unsafe fn open<'a, H: DeserializeOwned>(
    bytes: *const u8,
    len: usize,
    kind: DeviceObject,
    same_config: impl FnOnce(&H) -> bool,
) -> Result<(Reader<'a>, H), Status> {
    // SAFETY: as this function's contract.
    let mut reader = Reader::open(unsafe { memory::bytes(bytes, len)? }, kind)?;
    let header: H = reader.value()?;
    if same_config(&header) { Ok((reader, header)) } else { Err(Status::ConfigMismatch) }
}

/// A checkpoint's payload being read back.
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
    /// The revision of the object's header (the frame's second tag).
    revision: u8,
}

impl<'a> Reader<'a> {
    /// The payload of the checkpoint `bytes` of an object of `kind`.
    ///
    /// # Errors
    /// `MODEL_TRUNCATED`, `MODEL_CORRUPTED` (checksum, trailing bytes), `MODEL_FOREIGN`
    /// (another magic, or a checkpoint of another kind of object), `MODEL_UNSUPPORTED`
    /// (another format version).
    pub(crate) fn open(bytes: &'a [u8], kind: DeviceObject) -> Result<Self, Status> {
        match Self::open_any(bytes)? {
            (object, reader) if object == kind => Ok(reader),
            _ => Err(Status::ModelForeign),
        }
    }

    /// The payload of the checkpoint `bytes`, and the kind of object it holds.
    ///
    /// # Errors
    /// As [`open`](Self::open); `MODEL_FOREIGN` for a kind no object has,
    /// `MODEL_UNSUPPORTED` for a revision of its header past the object's own (a later
    /// library's).
    fn open_any(bytes: &'a [u8]) -> Result<(DeviceObject, Self), Status> {
        let opened = FORMAT.open(bytes).map_err(|error| match error {
            FrameError::Truncated { .. } => Status::ModelTruncated,
            FrameError::BadMagic => Status::ModelForeign,
            FrameError::UnsupportedVersion { .. } => Status::ModelUnsupported,
            FrameError::ChecksumMismatch { .. } | FrameError::TrailingBytes => Status::ModelCorrupted,
        })?;
        let [tag, revision] = opened.tags;
        match DeviceObject::from_tag(tag) {
            Some(object) if revision <= object.revision() => Ok((object, Reader { rest: opened.payload, revision })),
            Some(_) => Err(Status::ModelUnsupported),
            None => Err(Status::ModelForeign),
        }
    }

    /// The revision of the object's header the checkpoint was written with.
    pub(crate) fn revision(&self) -> u8 {
        self.revision
    }

    /// Skips the next `count` 4-byte items.
    pub(crate) fn skip(&mut self, count: usize) -> Result<(), Status> {
        let bytes = count.checked_mul(4).ok_or(Status::ModelCorrupted)?;
        self.rest = self.rest.get(bytes..).ok_or(Status::ModelCorrupted)?;
        Ok(())
    }

    /// The next postcard value.
    pub(crate) fn value<V: DeserializeOwned>(&mut self) -> Result<V, Status> {
        let (value, rest) = postcard::take_from_bytes(self.rest).map_err(|_| Status::ModelCorrupted)?;
        self.rest = rest;
        Ok(value)
    }

    /// The next `N` bytes.
    fn word<const N: usize>(&mut self) -> Result<[u8; N], Status> {
        let (word, rest) = self.rest.split_first_chunk::<N>().ok_or(Status::ModelCorrupted)?;
        self.rest = rest;
        Ok(*word)
    }

    /// Fills `into` with the next floats.
    pub(crate) fn floats(&mut self, into: &mut [f32]) -> Result<(), Status> {
        for v in into {
            *v = f32::from_le_bytes(self.word()?);
        }
        Ok(())
    }

    /// Fills `into` with the next 32-bit words.
    pub(crate) fn words(&mut self, into: &mut [u32]) -> Result<(), Status> {
        for v in into {
            *v = u32::from_le_bytes(self.word()?);
        }
        Ok(())
    }

    /// Fills `into` with the next indices (`u32::MAX` as `usize::MAX`).
    pub(crate) fn indices(&mut self, into: &mut [usize]) -> Result<(), Status> {
        for v in into {
            let word = u32::from_le_bytes(self.word()?);
            *v = if word == u32::MAX {
                usize::MAX
            } else {
                usize::try_from(word).map_err(|_| Status::ModelCorrupted)?
            };
        }
        Ok(())
    }

    /// Checks that the whole payload was read.
    ///
    /// # Errors
    /// `MODEL_CORRUPTED` when bytes are left.
    pub(crate) fn finish(self) -> Result<(), Status> {
        if self.rest.is_empty() { Ok(()) } else { Err(Status::ModelCorrupted) }
    }
}

#[cfg(test)]
mod tests {
    use std::vec::Vec;

    use super::*;
    use crate::novelty::kestrel_novelty_checkpoint;
    use crate::scaler::kestrel_scaler_checkpoint;
    use crate::slkl::kestrel_slkl_checkpoint;
    use crate::svm::kestrel_svm_checkpoint;
    use crate::test_support::{Learned, written_by};

    /// A checkpoint written through the ABI by each object, after it learned, reads back as
    /// the configuration it was created with and the samples it learned; cut short or with
    /// a byte changed it is the status a resume would give.
    #[test]
    fn a_checkpoint_describes_its_object() {
        let learned = Learned::new(50);
        let Learned { svm_config, slkl_config, novelty_config, svm, slkl, novelty, scaler, .. } = learned;
        // SAFETY: live handles; `written_by` gives a writable buffer and length.
        let written = unsafe {
            [
                written_by(|out, len, n| kestrel_svm_checkpoint(svm, out, len, n)),
                written_by(|out, len, n| kestrel_slkl_checkpoint(slkl, out, len, n)),
                written_by(|out, len, n| kestrel_novelty_checkpoint(novelty, out, len, n)),
                written_by(|out, len, n| kestrel_scaler_checkpoint(scaler, out, len, n)),
            ]
        };
        let described: Vec<Described> = written.iter().map(|bytes| describe(bytes).unwrap()).collect();
        let Described::Svm { config, samples_seen: 50, probability_samples: Some([negatives, positives]) } =
            described[0]
        else {
            panic!("{:?}", described[0]);
        };
        assert!(config == svm_config && negatives + positives == 50 && negatives > 0 && positives > 0);
        assert_eq!(described[1], Described::Slkl { config: slkl_config, samples_seen: 50 });
        let Described::Novelty { config, samples_seen: 50, flagged } = described[2] else {
            panic!("{:?}", described[2]);
        };
        assert!(config == novelty_config && flagged <= 50);
        assert_eq!(described[3], Described::Scaler { dim: 3, count: 50 });
        let objects = [DeviceObject::Svm, DeviceObject::Slkl, DeviceObject::Novelty, DeviceObject::Scaler];
        assert!(described.iter().zip(objects).all(|(d, object)| d.object() == object));
        for bytes in &written {
            assert_eq!(describe(&bytes[..bytes.len() - 1]), Err(Status::ModelTruncated));
            let mut flipped = bytes.clone();
            flipped[frame::HEADER_LEN + 1] ^= 4;
            assert_eq!(describe(&flipped), Err(Status::ModelCorrupted));
        }
        let mut foreign = written[3].clone();
        let payload_len = foreign.len() - frame::HEADER_LEN - frame::TRAILER_LEN;
        FORMAT.seal([9, 0], payload_len, &mut foreign).unwrap();
        assert_eq!(describe(&foreign), Err(Status::ModelForeign), "a tag no object has, sealed");
    }

    fn written(values: &[f32], indices: &[usize], out: &mut [u8]) -> Result<usize, (Status, usize)> {
        let mut writer = Writer::new(out);
        writer.value(&(7u64, 1.5f32)).unwrap();
        writer.floats(values);
        writer.indices(indices).unwrap();
        writer.words(&[9, u32::MAX]);
        writer.finish(DeviceObject::Slkl)
    }

    #[test]
    fn a_checkpoint_reads_back_what_was_written() {
        let (values, indices) = ([1.0, -0.0, f32::MIN_POSITIVE, 3.25], [0, 5, usize::MAX]);
        let mut out = [0u8; 128];
        let len = written(&values, &indices, &mut out).unwrap();
        assert!(len <= bound(values.len(), indices.len() + 2));
        let mut reader = Reader::open(&out[..len], DeviceObject::Slkl).unwrap();
        assert_eq!(reader.value::<(u64, f32)>().unwrap(), (7, 1.5));
        let (mut floats, mut read_indices, mut words) = ([0.0f32; 4], [0usize; 3], [0u32; 2]);
        reader.floats(&mut floats).unwrap();
        reader.indices(&mut read_indices).unwrap();
        reader.words(&mut words).unwrap();
        reader.finish().unwrap();
        assert_eq!(floats.map(f32::to_bits), values.map(f32::to_bits));
        assert_eq!((read_indices, words), (indices, [9, u32::MAX]));
    }

    #[test]
    fn a_short_buffer_gets_the_length_needed_and_every_cut_is_refused() {
        let mut out = [0u8; 128];
        let len = written(&[1.0, 2.0], &[3], &mut out).unwrap();
        for short in 0..len {
            let mut small = [0u8; 128];
            assert_eq!(written(&[1.0, 2.0], &[3], &mut small[..short]), Err((Status::BufferTooSmall, len)));
            assert_eq!(
                Reader::open(&out[..short], DeviceObject::Slkl).err(),
                Some(Status::ModelTruncated),
                "cut at {short}"
            );
        }
        assert_eq!(Reader::open(&out[..len], DeviceObject::Svm).err(), Some(Status::ModelForeign));
        let mut flipped = out;
        flipped[frame::HEADER_LEN] ^= 1;
        assert_eq!(Reader::open(&flipped[..len], DeviceObject::Slkl).err(), Some(Status::ModelCorrupted));
    }

    #[test]
    fn an_index_a_word_cannot_hold_is_refused() {
        let mut out = [0u8; 64];
        let mut writer = Writer::new(&mut out);
        assert_eq!(writer.indices(&[u32::MAX as usize]), Err(Status::InvalidParam));
        #[cfg(target_pointer_width = "64")]
        assert_eq!(writer.indices(&[1 << 40]), Err(Status::InvalidParam));
    }

    #[test]
    fn reading_past_the_payload_or_leaving_some_is_corrupted() {
        let mut out = [0u8; 64];
        let mut writer = Writer::new(&mut out);
        writer.floats(&[1.0]);
        let len = writer.finish(DeviceObject::Scaler).unwrap();
        let mut reader = Reader::open(&out[..len], DeviceObject::Scaler).unwrap();
        assert_eq!(reader.floats(&mut [0.0; 2]), Err(Status::ModelCorrupted));
        let reader = Reader::open(&out[..len], DeviceObject::Scaler).unwrap();
        assert_eq!(reader.finish(), Err(Status::ModelCorrupted));
    }
}
