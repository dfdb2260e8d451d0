//! # kestrel-ffi: Kestrel for C
//!
//! A static library (`libkestrel_ffi.a`) and a C header (`include/kestrel.h`, generated
//! from this crate by cbindgen) that let C firmware — STM32Cube, Zephyr, ESP-IDF, the nRF
//! Connect SDK — learn on the device and predict with models trained elsewhere, over
//! `kestrel-core`, with the same bits as the host.
//!
//! | object | what it is | module |
//! |---|---|---|
//! | `kestrel_model` | a model file from `kestrel train`, Python or a device, predicting | [`model`] |
//! | `kestrel_slkl` | the windowed SLKL kernel regressor, learning | [`slkl`] |
//! | `kestrel_svm` | the windowed linear SVM, learning | [`svm`] |
//! | `kestrel_multiclass` | one windowed linear SVM per class (one-vs-rest), learning `k ≥ 3` classes | [`multiclass`] |
//! | `kestrel_novelty` | the kernel novelty detector, learning what is normal and flagging the rest | [`novelty`] |
//! | `kestrel_scaler` | online standardisation of raw sensor units | [`scaler`] |
//!
//! Each learning object (`kestrel_slkl`, `kestrel_svm`, `kestrel_multiclass`, `kestrel_novelty`, `kestrel_scaler`)
//! writes a checkpoint of its whole state and resumes from one bit for bit, so what a
//! device learned survives a reset ([`checkpoint`]); on the host, a learner's checkpoint
//! copied off a device becomes the model file its save would write ([`import`], `kestrel
//! import`).
//!
//! ## The contract
//!
//! - **Memory the caller sizes.** The library never allocates. Every object lives in a
//!   work buffer the caller provides, aligned to `KESTREL_ALIGN` (8) bytes; each object
//!   has a function that returns the bytes it needs at start-up
//!   (`kestrel_slkl_work_bytes(&config)`) and a macro that gives the same number at compile
//!   time for a static array (`KESTREL_SLKL_WORK_BYTES(window, dim, centres, max_active)`).
//!   The buffer must stay valid, and be used for nothing else, while the object is used.
//! - **A status from every call.** Every function returns a `kestrel_status` (values
//!   stable, documented in [`Status`], `kestrel_status_str()` for text), except those
//!   that cannot fail: the size queries (0 for an impossible configuration), the default
//!   configurations and `kestrel_status_str` itself. Null pointers, a buffer too
//!   small or misaligned, a wrong dimension, NaN or ±∞ input, truncated, corrupted or
//!   foreign model bytes, a handle of another kind: each is a status, never a crash, and a
//!   rejected call leaves its object unchanged and writes no output.
//! - **`f32`.** Learners compute in `f32`, as the core does on a Cortex-M4F; `f64` model
//!   files are refused (`KESTREL_STATUS_MODEL_UNSUPPORTED`).
//! - **One caller per object.** An object is not locked: two calls on one object must not
//!   overlap (`kestrel_model_predict` excepted; see [`model`]). Different objects are
//!   independent.
//!
//! ## Panics
//!
//! The core returns an error for every input instead of panicking, and this layer checks
//! every pointer and size before use, so no input reaches a panic: the C tests call every
//! function with good and bad arguments under AddressSanitizer and UBSan, and the firmware
//! demo's C tests do the same on the device. Should a panic happen all the same (a defect),
//! it never unwinds into C:
//!
//! - on a bare-metal target (`target_os = "none"`, the staticlib for a Cortex-M or
//!   RISC-V part), the library's panic handler (feature `panic-handler`, on by default)
//!   executes the architecture's permanently-undefined instruction (`udf` on Arm, `unimp`
//!   on RISC-V), so the firmware's own fault handler runs (HardFault on a Cortex-M, an
//!   illegal-instruction exception on RISC-V) and decides: log, reset, or wait for the
//!   watchdog;
//! - on a hosted target (the host build the C tests link), the library links Rust's
//!   standard library, whose panic at an `extern "C"` boundary aborts the process.

#![no_std]
#![deny(missing_docs)]
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

#[cfg(not(target_os = "none"))]
extern crate std;

pub mod checkpoint;
pub mod import;
pub mod kernel;
mod memory;
pub mod model;
pub mod multiclass;
pub mod novelty;
mod save;
pub mod scaler;
pub mod slkl;
mod status;
pub mod svm;
#[cfg(test)]
mod test_support;

pub use memory::{KESTREL_ALIGN, Sizes};
pub use status::{Status, kestrel_status_str};

/// What a learner has done so far, as `kestrel_slkl_state`, `kestrel_svm_state` and
/// `kestrel_multiclass_state` report it.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LearnerState {
    /// Samples learned since the learner was created.
    pub samples_seen: u64,
    /// Samples in the window now.
    pub window_len: usize,
    /// Centres the model uses now (SLKL's active set; 0 for the linear SVM).
    pub active_centres: usize,
    /// SLKL: the window's mean target, the model's constant term (the prediction of a
    /// window mean, the baseline a regressor must beat); 0 for the SVM.
    pub target_mean: f32,
    /// Whether the learner's stopping rule held after the last sample.
    pub converged: bool,
    /// The coordinate steps the last sample learned took (at most `steps_per_sample`;
    /// 0 before the first sample, and after a resume until the next): the work the
    /// stopping rule left, for a device that budgets its time.
    pub last_steps: u32,
}

/// The staticlib's panic handler on bare metal: the architecture's undefined instruction,
/// so the firmware's fault handler takes over (see the crate doc).
#[cfg(all(target_os = "none", feature = "panic-handler"))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        #[cfg(target_arch = "arm")]
        // SAFETY: `udf` raises the undefined-instruction fault (HardFault when
        // UsageFault is not enabled); it touches no memory.
        unsafe {
            core::arch::asm!("udf #0")
        };
        #[cfg(any(target_arch = "riscv32", target_arch = "riscv64"))]
        // SAFETY: `unimp` raises the illegal-instruction exception; it touches no memory.
        unsafe {
            core::arch::asm!("unimp")
        };
    }
}
