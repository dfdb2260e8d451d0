//! The frame of the checkpoints the C ABI's learning objects write
//! (`kestrel_svm_checkpoint` and its siblings in kestrel-ffi): magic "KSDC", the kind of
//! object a checkpoint holds as its first tag byte, and the revision of that object's
//! header as the second: a header that grows gets a new revision, and a checkpoint of an
//! earlier one still resumes (a firmware update keeps what the device learned).
//!
//! The frame is the core's ([`crate::frame`]); its payload — the object's C configuration,
//! counters and buffers — is the C ABI's (kestrel-ffi's `checkpoint` module). It lives
//! here so that the library that writes these files and the host tools that meet one
//! (`kestrel inspect` and `predict`, given a checkpoint copied off a device instead of a
//! model) share one definition.

use crate::frame::Format;

/// The frame of a device checkpoint: magic "KSDC", format version 1.
pub const FORMAT: Format = Format::new(*b"KSDC", 1);

/// The object a device checkpoint holds (its first tag byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum DeviceObject {
    /// `kestrel_svm`, the windowed linear SVM.
    Svm = 1,
    /// `kestrel_slkl`, the windowed SLKL regressor.
    Slkl = 2,
    /// `kestrel_novelty`, the novelty detector.
    Novelty = 3,
    /// `kestrel_scaler`, the online scaler.
    Scaler = 4,
    /// `kestrel_multiclass`, one windowed linear SVM per class.
    Multiclass = 5,
}

impl DeviceObject {
    /// Every object, in the order of their tags.
    pub const ALL: [Self; 5] = [Self::Svm, Self::Slkl, Self::Novelty, Self::Scaler, Self::Multiclass];

    /// The object whose tag byte is `tag`, or `None`.
    pub fn from_tag(tag: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|object| *object as u8 == tag)
    }

    /// The revision of its header a checkpoint is written with (the second tag byte); a
    /// reader takes this one and every earlier one. `kestrel_svm`: 1 since its header is
    /// followed by its class probability's state; `kestrel_multiclass`: 1 since its classes
    /// share one window; the others 0.
    pub fn revision(self) -> u8 {
        match self {
            Self::Svm => 1,
            Self::Multiclass => 1,
            Self::Slkl | Self::Novelty | Self::Scaler => 0,
        }
    }

    /// The C type's name: `kestrel_svm`, `kestrel_slkl`, `kestrel_novelty`, `kestrel_scaler`,
    /// `kestrel_multiclass`.
    pub fn c_name(self) -> &'static str {
        match self {
            Self::Svm => "kestrel_svm",
            Self::Slkl => "kestrel_slkl",
            Self::Novelty => "kestrel_novelty",
            Self::Scaler => "kestrel_scaler",
            Self::Multiclass => "kestrel_multiclass",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_objects_and_nothing_else() {
        for object in DeviceObject::ALL {
            assert_eq!(DeviceObject::from_tag(object as u8), Some(object));
            assert!(object.c_name().starts_with("kestrel_"));
        }
        assert_eq!(DeviceObject::from_tag(0), None);
        assert_eq!(DeviceObject::from_tag(6), None);
    }
}
