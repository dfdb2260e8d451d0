//! What `kestrel stream` builds from its flags: the learner — checked against `--budget`
//! and built before the first row is read, so that a configuration it refuses is a usage
//! error (exit code 2) — and the run's configuration a checkpoint records so that a resume
//! with other flags is refused.

use anyhow::Result;
use clap::ValueEnum;
use kestrel_core::{Error, Kernel, Real, dcd, slkl};
use kestrel_stream::checkpoint::RunConfig;
use kestrel_stream::online::{BuildError, OnlineLearner, RsvmSettings, WindowRsvm, WindowSlkl, WindowSvm};

use crate::Usage;
use crate::args::{KernelArg, Learner, Setting, StreamArgs};

/// The learner the flags describe, for samples of `dim` features.
///
/// # Errors
/// [`Usage`] naming the flag for a configuration the learner refuses or one over
/// `--budget`.
pub fn learner<T: Real>(args: &StreamArgs, dim: usize) -> Result<Box<dyn OnlineLearner>> {
    let scale = !args.no_scale;
    let footprint = match args.learner {
        Learner::Svm => WindowSvm::<T>::footprint(args.window, dim, scale, args.classes, args.memory > 0),
        Learner::Slkl => WindowSlkl::<T>::footprint(args.window, dim, args.centers, scale),
        Learner::Rsvm => WindowRsvm::<T>::footprint(
            args.window,
            dim,
            args.centers,
            scale,
            args.classes,
            args.memory > 0,
            !args.no_renew,
        ),
    };
    let bytes = footprint.bytes::<T>(size_of::<usize>(), true);
    if let Some(budget) = args.budget.filter(|&budget| bytes > budget) {
        let classes = match args.learner {
            Learner::Slkl => String::new(),
            _ => format!(" for up to {} classes (--classes)", args.classes),
        };
        return Err(Usage(format!("the learner needs {bytes} bytes{classes}, over --budget {budget}")).into());
    }
    let learner: Box<dyn OnlineLearner> = match args.learner {
        Learner::Svm => {
            let steps = args.steps_per_sample;
            let svm = WindowSvm::<T>::new(args.window, dim, svm_params(args)?, steps, args.seed, scale, decay(args));
            Box::new(svm.map_err(refused)?.with_classes(args.classes))
        }
        Learner::Slkl => {
            let params = slkl::Params::new().kernel(kernel(args, dim)?).nu(T::from_f64(args.nu)).seed(args.seed);
            let params = params.check().map_err(refused)?;
            let steps = args.steps_per_sample;
            let slkl = WindowSlkl::<T>::new(args.window, dim, args.centers, params, steps, scale).map_err(refused)?;
            Box::new(if args.no_renew { slkl.without_renewal() } else { slkl })
        }
        Learner::Rsvm => {
            let settings = RsvmSettings {
                kernel: kernel(args, dim)?,
                centres: args.centers,
                delta: T::from_f64(args.delta),
                window: args.window,
                params: svm_params(args)?,
                steps: args.steps_per_sample,
                seed: args.seed,
                scale,
                memory: decay(args),
                renew: !args.no_renew,
            };
            Box::new(WindowRsvm::new(settings, dim).map_err(refused)?.with_classes(args.classes))
        }
    };
    Ok(learner)
}

/// A configuration the learner refuses, as a usage error naming the flag.
fn refused(error: impl Into<BuildError>) -> Usage {
    match error.into() {
        BuildError::Core(Error::InvalidParam { name }) => {
            Usage(format!("invalid value for --{}: the learner refuses it", name.replace('_', "-")))
        }
        BuildError::Core(other) => Usage(format!("the learner refuses this configuration: {other}")),
        BuildError::Alloc(alloc) => Usage(format!("the learner's memory cannot be had: {alloc}")),
    }
}

/// The SVMs' memory decay `1 − 1/--memory`, `None` for `--memory 0`.
fn decay<T: Real>(args: &StreamArgs) -> Option<T> {
    (args.memory > 0).then(|| T::ONE - T::ONE / T::from_f64(args.memory as f64))
}

fn svm_params<T: Real>(args: &StreamArgs) -> Result<dcd::ValidParams<T>> {
    Ok(args.svm.params(cost(args)?, None).map_err(refused)?)
}

/// `--c`, 1 unless given; `auto` is refused (no data set to choose it from).
fn cost(args: &StreamArgs) -> Result<f64> {
    Setting::value_or(args.svm.c, 1.0, "--c").map_err(anyhow::Error::msg)
}

/// `--gamma`, 1/d for `dim` features unless given; `auto` is refused.
fn gamma(args: &StreamArgs, dim: usize) -> Result<f64> {
    Setting::value_or(args.kernel.gamma, default_gamma(dim), "--gamma").map_err(anyhow::Error::msg)
}

/// The kernel of the flags.
fn kernel<T: Real>(args: &StreamArgs, dim: usize) -> Result<Kernel<T>> {
    Ok(args.kernel.build(gamma(args, dim)?).map_err(refused)?)
}

/// The stream's RBF width for `dim` features: 1/d.
fn default_gamma(dim: usize) -> f64 {
    1.0 / dim.max(1) as f64
}

/// The flags that shape the model (and the input it is learned from), with `dim` as
/// resolved from `--dim` or the CSV header. Flags that only shape the output (`--out`,
/// `--json`, `--report-every`, the checkpoint's own) or the handling of bad rows
/// (`--on-error`: a run stopped on a bad row may resume skipping it) are not recorded.
///
/// # Errors
/// `auto` for `--gamma` or `--c`, which a stream cannot resolve.
pub fn run_config(args: &StreamArgs, dim: usize) -> Result<RunConfig> {
    let mut config = RunConfig::default();
    config.push("--learner", value_name(&args.learner));
    config.push("--input", &args.input.input);
    config.push("--format", value_name(&args.input.format));
    config.push("--label-column", args.input.label_column.as_deref().unwrap_or("(the last column)"));
    config.push("--dim", dim);
    config.push("--scalar", value_name(&args.scalar));
    config.push("--seed", args.seed);
    config.push("--window", args.window);
    config.push("--steps-per-sample", args.steps_per_sample);
    config.push("--no-scale", args.no_scale);
    if args.learner != Learner::Svm {
        config.push("--centers", args.centers);
        config.push("--no-renew", args.no_renew);
        let kernel = &args.kernel;
        config.push("--kernel", value_name(&kernel.kernel));
        if kernel.kernel != KernelArg::Linear {
            config.push("--gamma", gamma(args, dim)?);
        }
        if kernel.kernel == KernelArg::Poly {
            config.push("--degree", kernel.degree);
            config.push("--coef0", kernel.coef0);
        }
    }
    if args.learner == Learner::Slkl {
        config.push("--nu", args.nu);
    } else {
        config.push("--classes", args.classes);
        config.push("--memory", args.memory);
        config.push("--c", cost(args)?);
        config.push("--loss", value_name(&args.svm.loss));
        config.push("--bias", args.svm.bias);
    }
    if args.learner == Learner::Rsvm {
        config.push("--delta", args.delta);
    }
    Ok(config)
}

/// The name clap shows for a value.
fn value_name<E: ValueEnum>(value: &E) -> String {
    value.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
}
