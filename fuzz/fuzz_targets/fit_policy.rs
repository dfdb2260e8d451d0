//! `kestrel train` as the CLI and the Python package run it, on arbitrary bytes as the data
//! file (its first CSV column one-hot encoded as `--categorical` when a flag says so, the
//! file read plainly when that does not open): the rows prepared as `--scale auto|on|off`
//! or `--relevance` says
//! (`batch::scaling`, `Dataset::standardized`, `batch::relevance`), then the library's
//! policy `batch::fit::fit` — every learner, with its `auto` searches (the width by
//! alignment and leave-one-out, C, λ, the IRSVM prefix, ν, kpls's components) — then
//! `model::load` and a prediction for every record of the file.
//!
//! The first [`FLAGS`] bytes choose the settings (each clamped to a small range so that one
//! execution stays fast), the rest is the file. Training always runs under `--budget`
//! (4 KiB to 256 MiB, from the flags), checked before anything is allocated, as in
//! `train_predict`.
//!
//! Checks: no panic, no allocation over the rss limit; a preparation that standardises
//! gives the rows of `Dataset::standardized`; a model that trains loads (with the scaler's
//! section when the rows were standardised), has the data set's dimension, and predicts a
//! finite value for every readable row or refuses it cleanly (features past its dimension,
//! values its scalar does not hold, a kernel or decision value that overflows); a
//! classifier predicts labels seen in training.

#![no_main]

use kestrel_core::Real;
use kestrel_core::dcd::Loss;
use kestrel_stream::batch::fit::{self, FitSettings, KernelChoice, Learner, Setting};
use kestrel_stream::batch::{relevance, scaling};
use kestrel_stream::dataset::{BadRows, Dataset, HostScaler, OnError};
use kestrel_stream::model;
use kestrel_stream::source::{Categorical, Format, Options};
use libfuzzer_sys::fuzz_target;

mod common;

/// Bytes of flags before the data file.
const FLAGS: usize = 10;

/// How the rows are prepared.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Preparation {
    Auto,
    On,
    Off,
    Relevance,
}

/// The settings the prefix chooses.
#[derive(Debug)]
struct Flags {
    settings: FitSettings,
    f32: bool,
    format: Format,
    label_column: Option<&'static str>,
    /// The first CSV column read as a column of categories.
    categorical: bool,
    preparation: Preparation,
}

impl Flags {
    fn parse(b: &[u8; FLAGS]) -> Self {
        let power = |x: u8| 2f64.powi(i32::from(x % 16) - 8);
        let auto_or = |x: u8| if x % 4 == 0 { Some(Setting::Auto) } else { Some(Setting::Value(power(x / 4))) };
        let learner = [
            Learner::Slkl,
            Learner::Svm,
            Learner::Rsvm,
            Learner::Krr,
            Learner::Lssvm,
            Learner::Mrrsvm,
            Learner::Novelty,
            Learner::Ssvr,
            Learner::Kpls,
        ][usize::from(b[0] % 9)];
        let mut settings = FitSettings::new(learner);
        settings.kernel.kind =
            [KernelChoice::Rbf, KernelChoice::Poly, KernelChoice::Linear][usize::from(b[1] >> 5 & 3) % 3];
        settings.kernel.gamma = auto_or(b[2]);
        settings.kernel.degree = 1 + u32::from(b[8] % 3);
        settings.svm.c = auto_or(b[3]);
        settings.svm.loss = if b[1] >> 7 == 1 { Loss::Hinge } else { Loss::SquaredHinge };
        settings.lambda = auto_or(b[5]);
        settings.delta =
            [None, Some(Setting::Auto), Some(Setting::Value(0.05)), Some(Setting::Value(5e-4))][usize::from(b[9] % 4)];
        settings.nu = [None, Some(Setting::Value(0.01)), Some(Setting::Auto)][usize::from(b[9] >> 2) % 3];
        settings.centers = Some(1 + usize::from(b[4] % 16));
        settings.partitions = Some(1 + usize::from(b[8] >> 2 & 3));
        if learner == Learner::Kpls && b[8] >> 4 & 1 == 1 {
            settings.components = Some(1 + usize::from(b[8] >> 5));
        }
        settings.eps = [None, Some(0.1), Some(1e-3)][usize::from(b[9] >> 4) % 3];
        settings.seed = u64::from(b[6] & 0x7f);
        settings.budget = Some(1usize << (12 + b[7] % 17));
        settings.posterior = learner == Learner::Krr && b[7] >> 7 == 1;
        Flags {
            settings,
            f32: b[1] & 1 == 1,
            format: if b[1] >> 1 & 1 == 1 { Format::LibSvm } else { Format::Csv },
            label_column: (b[1] >> 2 & 1 == 1).then_some("y"),
            categorical: b[6] >> 7 == 1,
            preparation: [Preparation::Auto, Preparation::On, Preparation::Off, Preparation::Relevance]
                [usize::from(b[1] >> 3 & 3)],
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((prefix, file)) = data.split_first_chunk::<FLAGS>() else { return };
    let flags = Flags::parse(prefix);
    if flags.f32 { fit_predict::<f32>(&flags, file) } else { fit_predict::<f64>(&flags, file) }
});

/// The rows as `--scale` or `--relevance` prepares them, and the scaler a model file then
/// carries; `None` where the CLI reports an error.
fn prepare<T: Real>(flags: &Flags, data: Dataset<T>) -> Option<(Dataset<T>, Option<HostScaler<T>>)> {
    let standardised = |rows: &Dataset<T>, data: &Dataset<T>| {
        let (expected, _) = data.standardized().expect("standardised once already");
        assert!((0..data.len()).all(|i| rows.row(i) == expected.row(i)), "not the rows of `standardized`");
    };
    match flags.preparation {
        Preparation::Off => Some((data, None)),
        Preparation::On => {
            let (rows, scaler) = data.standardized().ok()?;
            Some((rows, Some(scaler)))
        }
        Preparation::Auto => {
            let decided = scaling::standardized_if_better(&data, &flags.settings).ok()?;
            assert_eq!(decided.standardised.is_some(), decided.verdict.standardised());
            match decided.standardised {
                Some((rows, scaler)) => {
                    standardised(&rows, &data);
                    Some((rows, Some(scaler)))
                }
                None => Some((data, None)),
            }
        }
        Preparation::Relevance => {
            relevance::check_applies(flags.settings.learner, flags.settings.kernel.kind).ok()?;
            let weighed = relevance::weighed_if_better(&data, &flags.settings).ok()?;
            if !weighed.relevance.kept {
                standardised(&weighed.rows, &data);
            }
            Some((weighed.rows, Some(weighed.scaler)))
        }
    }
}

/// The reader of `file` as the flags say: its first CSV column `--categorical` when asked
/// and that opens, else read plainly.
fn open(flags: &Flags, file: &[u8]) -> Option<Box<dyn kestrel_stream::source::RecordReader + Send>> {
    let first_column = file.split(|&b| b == b'\n').next().and_then(|line| line.split(|&b| b == b',').next());
    let column = first_column.and_then(|name| std::str::from_utf8(name).ok()).map(|name| name.trim().to_string());
    let label_column = flags.label_column.map(str::to_string);
    let options = Options { format: flags.format, label_column, ..Options::default() };
    let categorical = match (flags.categorical, column) {
        (true, Some(column)) => vec![Categorical { column, categories: None }],
        _ => Vec::new(),
    };
    let encoded =
        (!categorical.is_empty()).then(|| common::open_with(file, Options { categorical, ..options.clone() }));
    encoded.flatten().or_else(|| common::open_with(file, options))
}

fn fit_predict<T: Real>(flags: &Flags, file: &[u8]) {
    let Some(mut reader) = open(flags, file) else { return };
    let mut bad = BadRows::new();
    let data = Dataset::<T>::read(reader.as_mut(), OnError::Skip, &mut bad).expect("skip never stops");
    bad.first().iter().for_each(common::check_error);
    let seen = data.labels().to_vec();
    let dim = data.dim();
    let Some((rows, scaler)) = prepare(flags, data) else { return };
    let Ok(fitted) = fit::fit(&flags.settings, &rows) else { return };
    let bytes = match &scaler {
        Some(scaler) => model::with_scaler(fitted.bytes, scaler.section()).expect("a fitted model takes its scaler"),
        None => fitted.bytes,
    };
    let mut model = model::load(&bytes).expect("a fitted model loads");
    assert_eq!(model.info().dim, dim.max(1), "the model's dimension is not the data set's");
    common::check_predictions::<T>(model.as_mut(), file, flags.format, flags.label_column, &seen);
}
