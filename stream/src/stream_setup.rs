//! What `kestrel stream` builds from its flags: the learner, and the run's configuration
//! a checkpoint records so that a resume with other flags is refused.

use anyhow::Result;
use clap::ValueEnum;
use kestrel_core::{Kernel, Real, dcd, slkl};
use kestrel_stream::checkpoint::RunConfig;
use kestrel_stream::online::{OnlineLearner, RsvmSettings, WindowRsvm, WindowSlkl, WindowSvm};

use crate::args::{KernelArg, Learner, LossArg, StreamArgs};

/// The learner the flags describe, for samples of `dim` features.
pub fn learner<T: Real>(args: &StreamArgs, dim: usize) -> Result<Box<dyn OnlineLearner>> {
    Ok(match args.learner {
        Learner::Svm => {
            Box::new(WindowSvm::<T>::new(args.window, dim, svm_params(args)?, args.steps_per_sample, args.seed)?)
        }
        Learner::Slkl => {
            let params = slkl::Params::new().kernel(kernel(args)?).nu(T::from_f64(args.nu)).seed(args.seed).check()?;
            Box::new(WindowSlkl::<T>::new(args.window, dim, args.centers, params, args.steps_per_sample))
        }
        Learner::Rsvm => {
            let settings = RsvmSettings {
                kernel: kernel(args)?,
                centres: args.centers,
                delta: T::from_f64(args.delta),
                window: args.window,
                params: svm_params(args)?,
                steps: args.steps_per_sample,
                seed: args.seed,
            };
            Box::new(WindowRsvm::new(settings, dim)?)
        }
    })
}

fn svm_params<T: Real>(args: &StreamArgs) -> Result<dcd::ValidParams<T>> {
    let loss = match args.loss {
        LossArg::Hinge => dcd::Loss::Hinge,
        LossArg::SquaredHinge => dcd::Loss::SquaredHinge,
    };
    Ok(dcd::Params::new().loss(loss).c(T::from_f64(args.c)).bias(T::from_f64(args.bias)).check()?)
}

fn kernel<T: Real>(args: &StreamArgs) -> Result<Kernel<T>> {
    Ok(args.kernel.build()?)
}

/// The flags that shape the model (and the input it is learned from), with `dim` as
/// resolved from `--dim` or the CSV header. Flags that only shape the output (`--out`,
/// `--json`, `--report-every`, the checkpoint's own) or the handling of bad rows
/// (`--on-error`: a run stopped on a bad row may resume skipping it) are not recorded.
pub fn run_config(args: &StreamArgs, dim: usize) -> RunConfig {
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
    if args.learner != Learner::Svm {
        config.push("--centers", args.centers);
        let kernel = &args.kernel;
        config.push("--kernel", value_name(&kernel.kernel));
        if kernel.kernel != KernelArg::Linear {
            config.push("--gamma", kernel.gamma);
        }
        if kernel.kernel == KernelArg::Poly {
            config.push("--degree", kernel.degree);
            config.push("--coef0", kernel.coef0);
        }
    }
    if args.learner == Learner::Slkl {
        config.push("--nu", args.nu);
    } else {
        config.push("--c", args.c);
        config.push("--loss", value_name(&args.loss));
        config.push("--bias", args.bias);
    }
    if args.learner == Learner::Rsvm {
        config.push("--delta", args.delta);
    }
    config
}

/// The name clap shows for a value.
fn value_name<E: ValueEnum>(value: &E) -> String {
    value.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
}
