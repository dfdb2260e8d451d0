//! Integration tests of the `kestrel` binary.

mod cli;
mod hostile;
mod mqtt;
mod report;
mod resume;
mod scratch;
