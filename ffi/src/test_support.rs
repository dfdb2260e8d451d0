//! What the unit tests of several modules share: one learned object of each kind, in
//! aligned work memory, and the bytes a length-protocol call writes.

use core::ffi::c_void;
use core::ptr;
use std::vec;
use std::vec::Vec;

use crate::Status;
use crate::novelty::{self, Novelty, NoveltyConfig, NoveltyVerdict};
use crate::scaler::{self, Scaler};
use crate::slkl::{self, Slkl, SlklConfig};
use crate::svm::{self, Svm, SvmConfig};

/// A learner of each kind and a scaler, of three features, after `rows` rows of [`row`]
/// (the scaler observing them); the handles live as long as this value.
pub(crate) struct Learned {
    pub(crate) svm_config: SvmConfig,
    pub(crate) slkl_config: SlklConfig,
    pub(crate) novelty_config: NoveltyConfig,
    pub(crate) svm: *mut Svm,
    pub(crate) slkl: *mut Slkl,
    pub(crate) novelty: *mut Novelty,
    pub(crate) scaler: *mut Scaler,
    /// The objects' work memory, which the handles point into.
    _memory: [Vec<u64>; 4],
}

impl Learned {
    pub(crate) fn new(rows: u16) -> Self {
        let (svm_config, slkl_config, novelty_config) = (
            svm::kestrel_svm_default_config(16, 3),
            slkl::kestrel_slkl_default_config(16, 3, 4),
            novelty::kestrel_novelty_default_config(32, 3, 4),
        );
        let mut memory = [work(1 << 16), work(1 << 16), work(1 << 16), work(1 << 12)];
        let centres: Vec<f32> = (0..4).flat_map(row).collect();
        let (mut svm, mut slkl, mut novelty, mut scaler) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let [svm_work, slkl_work, novelty_work, scaler_work] = &mut memory;
        let bytes = |w: &mut Vec<u64>| (w.as_mut_ptr().cast::<c_void>(), w.len() * 8);
        let ((sv, sn), (lv, ln), (nv, nn), (cv, cn)) =
            (bytes(svm_work), bytes(slkl_work), bytes(novelty_work), bytes(scaler_work));
        // SAFETY: each work buffer is aligned, as long as given, and moves with this value
        // (a Vec's heap buffer does not move); every pointer is to a live local.
        unsafe {
            assert_eq!(svm::kestrel_svm_create(&svm_config, sv, sn, &mut svm), Status::Ok);
            assert_eq!(slkl::kestrel_slkl_create(&slkl_config, centres.as_ptr(), 12, lv, ln, &mut slkl), Status::Ok);
            assert_eq!(novelty::kestrel_novelty_create(&novelty_config, nv, nn, &mut novelty), Status::Ok);
            assert_eq!(scaler::kestrel_scaler_create(3, cv, cn, &mut scaler), Status::Ok);
            for t in 0..rows {
                let x = row(t);
                let label = if x[0] + x[1] > 0.0 { 1 } else { -1 };
                assert_eq!(svm::kestrel_svm_learn(svm, x.as_ptr(), 3, label), Status::Ok);
                assert_eq!(slkl::kestrel_slkl_learn(slkl, x.as_ptr(), 3, x[0] * x[2]), Status::Ok);
                let verdict = &mut NoveltyVerdict::default();
                assert_eq!(novelty::kestrel_novelty_learn(novelty, x.as_ptr(), 3, verdict), Status::Ok);
                assert_eq!(scaler::kestrel_scaler_observe(scaler, x.as_ptr(), 3), Status::Ok);
            }
        }
        Learned { svm_config, slkl_config, novelty_config, svm, slkl, novelty, scaler, _memory: memory }
    }
}

/// Work memory of `len` bytes, aligned for every object.
pub(crate) fn work(len: usize) -> Vec<u64> {
    vec![0; len.div_ceil(8)]
}

/// The bytes `write` writes into a buffer of 64 KiB by the length protocol of the
/// `*_save` and `*_checkpoint` functions (it must succeed).
pub(crate) fn written_by(write: impl FnOnce(*mut u8, usize, *mut usize) -> Status) -> Vec<u8> {
    let mut out = vec![0u8; 1 << 16];
    let mut len = 0;
    assert_eq!(write(out.as_mut_ptr(), out.len(), &mut len), Status::Ok);
    out.truncate(len);
    out
}

/// Row `t` of three features.
pub(crate) fn row(t: u16) -> [f32; 3] {
    [f32::from(t % 7) / 3.0 - 1.0, f32::from(t % 5) / 2.0 - 1.0, f32::from(t % 11) / 5.0 - 1.0]
}
