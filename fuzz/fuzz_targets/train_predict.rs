//! `kestrel train` then `kestrel predict` on arbitrary bytes as the data file.
//!
//! The first [`FLAGS`] bytes choose the flags (each clamped to a small range so that one
//! execution stays fast), the rest is the file. The path is the CLI's
//! (stream/src/bin/kestrel/commands.rs `train_in`, `train_svm`/`train_slkl`/`train_rsvm`,
//! `predict`) through the stream crate's library: the reader `source::from_reader` builds
//! for `--format csv` or `libsvm` → `Dataset::read` with `--on-error skip` → `--window` →
//! `batch::linear::train`, `batch::slkl::train` or `batch::rsvm::train` → `model::to_bytes`
//! → `model::load` → a prediction for every record of the file.
//!
//! Training always runs under `--budget` (256 B to 256 MiB, from the flags): the budget is
//! checked before anything is allocated, so a data set of 2²⁴ features is refused rather
//! than allocated — as a user who sets `--budget` sees it — and libFuzzer's malloc limit
//! is not mistaken for a bug.
//!
//! Checks: no panic, no allocation over the rss limit; a model that trains encodes and
//! loads, with the data set's dimension, and was trained on values its scalar holds; it
//! predicts a finite value for every readable row, or refuses one cleanly whose features lie
//! past its dimension or overflow its scalar (or whose kernel or decision value overflows:
//! `NonFinite`); a classifier predicts labels seen in training.

#![no_main]

use kestrel_core::dcd::{self, Loss};
use kestrel_core::{Kernel, Real, slkl};
use kestrel_stream::batch::class_weights::ClassWeights;
use kestrel_stream::batch::linear;
use kestrel_stream::batch::rsvm::{self, RsvmConfig, Selection};
use kestrel_stream::batch::slkl::{self as slkl_train, SlklConfig};
use kestrel_stream::dataset::{BadRows, Dataset, OnError};
use kestrel_stream::model;
use kestrel_stream::source::Format;
use libfuzzer_sys::fuzz_target;

mod common;

/// Bytes of flags before the data file.
const FLAGS: usize = 14;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Learner {
    Svm,
    Slkl,
    Rsvm,
}

/// The `kestrel train` flags the prefix chooses.
#[derive(Debug)]
struct Flags {
    learner: Learner,
    f32: bool,
    format: Format,
    label_column: Option<&'static str>,
    kernel: u8,
    gamma: f64,
    degree: u32,
    coef0: f64,
    nu: f64,
    centers: usize,
    max_active: Option<usize>,
    window: Option<usize>,
    c: f64,
    hinge: bool,
    bias: f64,
    eps: Option<f64>,
    random_selection: bool,
    delta: Option<f64>,
    raw_features: bool,
    seed: u64,
    budget: usize,
    /// SLKL's step cap, 2⁸…2¹⁴, and DCD's pass cap, 8…1000. The CLI keeps the core's
    /// defaults (10⁶ steps, 1000 passes), which a problem that does not converge spends in
    /// full — seconds a run on a few dozen rows with many classes or an extreme kernel,
    /// most of the fuzzer's time. The caps' own exits are reached the same way at any value.
    max_steps: u64,
    max_passes: usize,
}

impl Flags {
    fn parse(b: &[u8; FLAGS]) -> Self {
        let power = |x: u8| 2f64.powi(i32::from(x % 16) - 8);
        let bit = |i: u32| b[1] >> i & 1 == 1;
        Flags {
            learner: [Learner::Svm, Learner::Slkl, Learner::Rsvm][usize::from(b[0] % 3)],
            f32: bit(0),
            format: if bit(1) { Format::LibSvm } else { Format::Csv },
            label_column: bit(5).then_some("y"),
            kernel: b[1] >> 6,
            gamma: power(b[3]),
            degree: 1 + u32::from(b[12] % 4),
            coef0: [0.0, 0.5, 1.0, 2.0][usize::from(b[12] >> 2 & 3)],
            nu: [1.0, 0.1, 0.01, 1e-3, 1e-4, 0.0][usize::from(b[9] % 6)],
            centers: 1 + usize::from(b[4] % 16),
            max_active: (b[10] != 0).then(|| 1 + usize::from(b[10] % 16)),
            window: (b[5] != 0).then(|| usize::from(b[5] % 64)),
            c: power(b[2]),
            hinge: bit(2),
            bias: [1.0, 0.0, 0.5, 2.0, 10.0, 0.25][usize::from(b[6] % 6)],
            eps: [None, Some(0.1), Some(0.01), Some(1e-3), Some(1.0)][usize::from(b[8] % 5)],
            random_selection: bit(3),
            delta: [None, Some(0.05), Some(0.005), Some(5e-4), Some(0.5)][usize::from(b[11] % 5)],
            raw_features: bit(4),
            seed: u64::from(b[7]),
            budget: 1usize << (8 + b[13] % 21),
            max_steps: 1u64 << (8 + 2 * (b[12] >> 4 & 3)),
            max_passes: [8, 32, 128, 1000][usize::from(b[12] >> 6)],
        }
    }

    /// `--kernel rbf|poly|linear` with `--gamma`, `--degree`, `--coef0` (`KernelArgs::build`).
    fn kernel<T: Real>(&self) -> Option<Kernel<T>> {
        let gamma = T::from_f64(self.gamma);
        match self.kernel {
            1 => Kernel::polynomial(self.degree, gamma, T::from_f64(self.coef0)).ok(),
            2 => Some(Kernel::linear()),
            _ => Kernel::rbf(gamma).ok(),
        }
    }

    /// `SvmArgs::params` of args.rs.
    fn svm_params<T: Real>(&self) -> Option<dcd::ValidParams<T>> {
        let loss = if self.hinge { Loss::Hinge } else { Loss::SquaredHinge };
        let params = dcd::Params::new().loss(loss).c(T::from_f64(self.c)).bias(T::from_f64(self.bias));
        let params = params.max_passes(self.max_passes);
        params.epsilon(T::from_f64(self.eps.unwrap_or(0.1))).check().ok()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((prefix, file)) = data.split_first_chunk::<FLAGS>() else { return };
    let flags = Flags::parse(prefix);
    if flags.f32 { train_predict::<f32>(&flags, file) } else { train_predict::<f64>(&flags, file) }
});

fn train_predict<T: Real>(flags: &Flags, file: &[u8]) {
    let Some(mut reader) = common::open_bytes(file, flags.format, flags.label_column) else { return };
    let mut bad = BadRows::new();
    let mut data = Dataset::<T>::read(reader.as_mut(), OnError::Skip, &mut bad).expect("skip never stops");
    // The readers' own targets check every error; these are the ones a user is told.
    bad.first().iter().for_each(common::check_error);
    if let Some(window) = flags.window {
        data = data.last(window);
    }
    let Some(bytes) = (match flags.learner {
        Learner::Svm => train_svm(flags, &data),
        Learner::Slkl => train_slkl(flags, &data),
        Learner::Rsvm => train_rsvm(flags, &data),
    }) else {
        return;
    };
    assert!(data.csr().2.iter().all(|v| v.is_finite()), "trained on a value the scalar does not hold");
    let mut model = model::load(&bytes).expect("a trained model loads");
    assert_eq!(model.info().dim, data.dim().max(1), "the model's dimension is not the data set's");
    assert_eq!(model.is_classifier(), flags.learner != Learner::Slkl);
    let seen = data.labels();
    // `kestrel predict --on-error skip` on the same file.
    common::check_predictions::<T>(model.as_mut(), file, flags.format, flags.label_column, seen);
}

/// `train_svm` of commands.rs: the model file bytes, `None` where the CLI reports an error.
fn train_svm<T: Real>(flags: &Flags, data: &Dataset<T>) -> Option<Vec<u8>> {
    let (model, _) =
        linear::train(data, flags.svm_params()?, &ClassWeights::Unit, flags.seed, Some(flags.budget)).ok()?;
    Some(model::to_bytes(&model).expect("a trained linear model encodes"))
}

/// `train_slkl` of commands.rs.
fn train_slkl<T: Real>(flags: &Flags, data: &Dataset<T>) -> Option<Vec<u8>> {
    let nu = flags.nu * data.label_variance().max(f64::MIN_POSITIVE);
    let mut params =
        slkl::Params::new().kernel(flags.kernel()?).nu(T::from_f64(nu)).seed(flags.seed).max_steps(flags.max_steps);
    if let Some(eps) = flags.eps {
        params = params.epsilon(T::from_f64(eps));
    }
    let config = SlklConfig {
        params: params.check().ok()?,
        candidates: flags.centers,
        max_active: flags.max_active.unwrap_or(flags.centers),
        budget: Some(flags.budget),
    };
    let (model, _) = slkl_train::train(data, &config).ok()?;
    Some(model::to_bytes(&model).expect("a trained SLKL model encodes"))
}

/// `train_rsvm` of commands.rs, with the default solver (DCD, then Newton when DCD is slow).
fn train_rsvm<T: Real>(flags: &Flags, data: &Dataset<T>) -> Option<Vec<u8>> {
    let selection =
        if flags.random_selection { Selection::Random } else { Selection::Irsvm { rms: flags.delta.unwrap_or(0.005) } };
    let config = RsvmConfig {
        kernel: flags.kernel()?,
        centres: flags.centers,
        selection,
        whiten: !flags.raw_features,
        params: flags.svm_params()?,
        seed: flags.seed,
        budget: Some(flags.budget),
        tune: rsvm::Tune::default(),
        solver: rsvm::Solver::default(),
        class_weights: ClassWeights::Unit,
    };
    let (model, _) = rsvm::train(data, &config).ok()?;
    Some(model::to_bytes(&model).expect("a trained reduced-kernel model encodes"))
}
