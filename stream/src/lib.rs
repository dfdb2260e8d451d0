//! Streaming for Kestrel: sources of labelled samples (files, pipes, serial ports), batch
//! and online learners over them, model files and checkpoints — the library behind the
//! `kestrel` command-line tool (which lives in `src/bin/kestrel/`, behind the default
//! `cli` feature; the library itself needs none of its dependencies).
//!
//! | module | what it holds |
//! |---|---|
//! | [`source`] | readers of CSV and LibSVM rows from files, standard input and serial ports |
//! | [`dataset`] | a training set in compressed sparse rows |
//! | [`labels`] | the one mapping between a classifier's labels and its classes |
//! | [`class_names`] | names in a CSV class column, and the labels they stand for |
//! | [`batch`] | training on a whole data set: linear SVM, SLKL, reduced-kernel SVM |
//! | [`online`] | learners that predict, then learn, one sample at a time |
//! | [`score`] | predictions against labels: accuracy, squared and absolute error |
//! | [`detection`] | novelty flags and scores against labels: precision, recall, AUC |
//! | [`model`] | model file bytes, and loading a model of any kind to predict |
//! | [`checkpoint`] | the state of a stream run, to resume it exactly |
//! | `device` (feature `device`) | checkpoints a device's C library wrote: what one holds, why one is refused, and the model one makes |
//! | [`history`] | a stream run's series in fixed memory, for its report |
//! | [`file`](mod@file) | atomic writes and bounded reads of whole files |
//! | [`limits`] | the limits on sizes taken from input; fallible allocation |
//!
//! # Examples
//! Train a classifier on a data set and save it:
//! ```
//! use kestrel_stream::{batch, dataset::{BadRows, Dataset, OnError}, model, source};
//! # let dir = std::env::temp_dir().join(format!("kestrel-doc-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir)?;
//! let data_path = dir.join("train.libsvm");
//! std::fs::write(&data_path, "+1 1:2 2:1\n-1 1:-1 2:-2\n+1 1:1.5 2:0.5\n-1 1:-2 2:-1\n")?;
//! let mut reader = source::open(data_path.to_str().unwrap(), &source::Options::default())?;
//! let data: Dataset<f64> = Dataset::read(reader.as_mut(), OnError::Stop, &mut BadRows::new())?;
//!
//! let params = kestrel_core::dcd::Params::new().c(1.0).check()?;
//! let (svm, summary) = batch::linear::train(&data, params, &batch::class_weights::ClassWeights::Unit, 1, None)?;
//! assert!(summary.converged);
//! kestrel_stream::file::write_atomic(&dir.join("svm.kestrel"), &model::to_bytes(&svm)?)?;
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Nothing from input may panic: no unwrap/expect/panic/unreachable, no unchecked indexing
// or truncating casts outside tests (a provably safe site says why it is allowed).
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

pub mod batch;
pub mod checkpoint;
pub mod class_names;
pub mod dataset;
pub mod detection;
#[cfg(feature = "device")]
pub mod device;
pub mod file;
pub mod history;
pub mod labels;
pub mod limits;
pub mod model;
#[cfg(feature = "mqtt")]
pub mod mqtt;
pub mod online;
pub mod score;
pub mod shell;
pub mod source;
