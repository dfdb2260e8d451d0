//! Streaming for Kestrel: sources of labelled samples (files, pipes, serial ports) and the
//! machinery behind the `kestrel` command-line tool.

pub mod checkpoint;
pub mod dataset;
pub mod linear;
pub mod model;
pub mod model_file;
pub mod online;
pub mod rsvm;
pub mod slkl;
pub mod source;
