//! Integration tests of the `kestrel` binary.

mod resume;
