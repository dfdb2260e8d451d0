//! Integration tests of the `kestrel` binary.

mod cli;
mod hostile;
mod mqtt;
mod resume;
mod scratch;
