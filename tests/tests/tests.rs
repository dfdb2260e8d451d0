//! Integration tests of Kestrel against dense reference solutions (one binary, one module
//! per concept).

mod core;
