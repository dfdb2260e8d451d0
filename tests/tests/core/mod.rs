//! `kestrel-core` against nalgebra.

mod cholesky_errors;
mod cholesky_properties;
mod cholesky_sequence;
mod dcd;
mod incomplete;
mod npkl;
mod reduced_set;
mod slkl;
