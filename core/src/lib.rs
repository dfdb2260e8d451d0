#![doc = include_str!("../README.md")]
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

pub mod cholesky;
pub mod cluster;
pub mod dcd;
mod error;
pub mod frame;
pub mod kernel;
pub mod linalg;
pub mod model;
pub mod neighbors;
pub mod npkl;
mod real;
pub mod reduced_set;
mod rng;
pub mod slkl;
pub mod storage;

pub use cholesky::{Cholesky, IncompleteCholesky};
pub use error::Error;
pub use kernel::{Kernel, KernelKind};
pub use real::Real;
pub use rng::Rng;
