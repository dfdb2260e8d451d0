//! Integration tests of the `kestrel` binary.

mod cli;
mod fuzz_seeds;
mod hostile;
mod mqtt;
mod outcome;
mod report;
mod resume;
mod scratch;
