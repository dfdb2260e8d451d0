#![doc = include_str!("../README.md")]
#![no_std]
// One `unsafe` block: the FPU's square root on Arm hard-float targets (`real/sqrt.rs`).
#![deny(unsafe_code)]
#![deny(missing_docs)]
// No panic reachable from input: in library code (tests may unwrap), no unwrap/expect,
// no panic!/unreachable!, no unchecked indexing and no truncating casts; the few places
// where indexing is provably in bounds allow it with the invariant that makes it so.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::indexing_slicing,
        clippy::cast_possible_truncation
    )
)]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod alignment;
pub mod calibration;
pub mod cholesky;
pub mod cluster;
pub mod dcd;
pub mod device_checkpoint;
mod error;
pub mod frame;
pub mod gp;
pub mod kernel;
pub mod kpca;
pub mod krr;
pub mod linalg;
pub mod model;
pub mod neighbors;
pub mod novelty;
pub mod npkl;
mod real;
pub mod reduced_set;
mod rng;
pub mod scaler;
pub mod slkl;
pub mod spectral;
pub mod ssvm;
pub mod storage;

pub use cholesky::{Cholesky, IncompleteCholesky};
pub use error::Error;
pub use kernel::{Kernel, KernelKind};
pub use real::Real;
pub use rng::Rng;
