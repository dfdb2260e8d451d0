//! What `kestrel stream` builds from its flags: the learner — checked against `--budget`
//! and built before the first row is learned (before the first is read when `--learner`
//! is given), so that a configuration it refuses is a usage error (exit code 2) — and the
//! run's configuration a checkpoint records so that a resume with other flags is refused.

use anyhow::Result;
use clap::ValueEnum;
use kestrel_core::{Error, Real};
use kestrel_stream::checkpoint::{self, RunConfig};
use kestrel_stream::online::build::{BuildFailure, StreamLearner, StreamSettings, build};
use kestrel_stream::online::{BuildError, Learn, OnlineLearner};

use crate::Usage;
use crate::args::{
    DEFAULT_BIAS, DEFAULT_MEMORY, DEFAULT_QUANTILE, DEFAULT_STREAM_CLASSES, DEFAULT_WARMUP, KernelArg, LearnArg,
    Learner, LossArg, StreamArgs, not_taken,
};

/// The library's stream settings these flags describe for `learner` (`--learner`, or the
/// one chosen without it).
pub fn settings(args: &StreamArgs, learner: Learner) -> StreamSettings {
    let learner = learner.stream();
    let learn = match args.learn {
        LearnArg::Unflagged => Learn::Unflagged,
        LearnArg::All => Learn::All,
    };
    StreamSettings {
        learner,
        window: args.window.unwrap_or(learner.default_window()),
        centers: args.centers.unwrap_or(learner.default_centers()),
        steps_per_sample: args.steps_per_sample.unwrap_or(learner.default_steps()),
        eps: args.eps,
        kernel: args.kernel.settings(),
        nu: args.nu,
        svm: args.svm.settings(),
        delta: args.delta.unwrap_or(learner.default_delta()),
        quantile: args.quantile,
        warmup: args.warmup,
        learn,
        scale: !args.no_scale,
        renew: !args.no_renew,
        memory: args.memory,
        classes: args.classes,
        seed: args.seed,
        budget: args.budget,
    }
}

/// The flags given (a value other than the default) that `learner` takes no part of:
/// the run tells of them, so that a flag that changed nothing is not taken for one that
/// did (`--eps` of a novelty detector, `--nu` of an SVM).
pub fn ignored_flags(args: &StreamArgs, learner: Learner) -> Vec<&'static str> {
    use StreamLearner::{Novelty, Rsvm, Slkl, Svm};
    let flags: [(&str, bool, &[StreamLearner]); 15] = [
        ("--centers", args.centers.is_some(), &[Rsvm, Slkl, Novelty]),
        ("--steps-per-sample", args.steps_per_sample.is_some(), &[Svm, Rsvm, Slkl]),
        ("--eps", args.eps.is_some(), &[Svm, Rsvm, Slkl]),
        ("--kernel/--gamma", args.kernel.given(), &[Rsvm, Slkl, Novelty]),
        ("--c", args.svm.c.is_some(), &[Svm, Rsvm]),
        ("--loss", args.svm.loss != LossArg::SquaredHinge, &[Svm, Rsvm]),
        ("--bias", args.svm.bias != DEFAULT_BIAS, &[Svm, Rsvm]),
        ("--classes", args.classes != DEFAULT_STREAM_CLASSES, &[Svm, Rsvm]),
        ("--memory", args.memory != DEFAULT_MEMORY, &[Svm, Rsvm]),
        ("--nu", args.nu.is_some(), &[Slkl]),
        ("--delta", args.delta.is_some(), &[Rsvm, Novelty]),
        ("--no-renew", args.no_renew, &[Rsvm, Slkl]),
        ("--quantile/--warmup", args.quantile != DEFAULT_QUANTILE || args.warmup != DEFAULT_WARMUP, &[Novelty]),
        ("--learn", args.learn != LearnArg::Unflagged, &[Novelty]),
        ("--probabilities", args.probabilities, &[Svm, Rsvm]),
    ];
    not_taken(&flags, &learner.stream())
}

/// The learner the flags describe, for samples of `dim` features
/// ([`kestrel_stream::online::build`]).
///
/// # Errors
/// [`Usage`] naming the flag for a configuration the learner refuses or one over
/// `--budget`; `auto` for `--gamma` or `--c`, which a stream cannot resolve.
pub fn learner<T: Real>(
    args: &StreamArgs,
    learner: Learner,
    dim: usize,
) -> Result<Box<dyn OnlineLearner + Send + Sync>> {
    build::<T>(&settings(args, learner), dim).map_err(|failure| match failure {
        BuildFailure::Auto(message) => anyhow::Error::msg(message),
        BuildFailure::OverBudget { .. } => Usage(failure.to_string()).into(),
        BuildFailure::Refused(error) => refused(error).into(),
    })
}

/// A configuration the learner refuses, as a usage error naming the flag.
fn refused(error: BuildError) -> Usage {
    match error {
        BuildError::Core(Error::InvalidParam { name }) => {
            Usage(format!("invalid value for --{}: the learner refuses it", name.replace('_', "-")))
        }
        BuildError::Core(other) => Usage(format!("the learner refuses this configuration: {other}")),
        BuildError::Alloc(alloc) => Usage(format!("the learner's memory cannot be had: {alloc}")),
    }
}

/// The flags that shape the model (and the input it is learned from), with `dim` as
/// resolved from `--dim` or the CSV header, and the names a CSV header gives the features
/// (`columns`: a run resumed on columns in another order would learn one for another).
/// Flags that only shape the output (`--out`, `--json`, `--report-every`, the checkpoint's
/// own) or the handling of bad rows (`--on-error`: a run stopped on a bad row may resume
/// skipping it) are not recorded.
///
/// # Errors
/// `auto` for `--gamma` or `--c`, which a stream cannot resolve.
pub fn run_config(args: &StreamArgs, learner: Learner, dim: usize, feature_names: &[String]) -> Result<RunConfig> {
    // The values the learner takes, defaults resolved.
    let resolved = settings(args, learner);
    let mut config = RunConfig::default();
    config.push("--learner", value_name(&learner));
    // A broker's URL without its password; the session's client id, which must not change.
    match kestrel_stream::mqtt::Broker::parse(&args.input.input) {
        Ok(broker) => {
            config.push("--input", broker.name());
            config.push("--client-id", args.client_id.as_deref().unwrap_or(""));
            config.push("--payload", value_name(&args.payload));
            config.push("--seq-column", args.seq_column.as_deref().unwrap_or("seq"));
        }
        Err(_) => config.push("--input", &args.input.input),
    }
    config.push("--format", value_name(&args.input.format));
    config.push("--label-column", args.input.columns.label_column.as_deref().unwrap_or("(the last column)"));
    let skipped = &args.input.columns.skip_columns;
    if !skipped.is_empty() {
        // Recorded only when given: a checkpoint from before the flag resumes unchanged.
        config.push("--skip-column", skipped.join(", "));
    }
    if !args.keep_columns.is_empty() {
        // The --output lines' first fields: a resumed run writes the same.
        config.push("--keep-column", args.keep_columns.join(", "));
    }
    if args.probabilities {
        // The --output lines' last field.
        config.push("--probabilities", true);
    }
    config.push("--dim", dim);
    if !feature_names.is_empty() {
        // Recorded only for a header: rows without one, and checkpoints from before, resume
        // as they did (RunConfig::difference).
        config.push(checkpoint::COLUMNS, feature_names.join(", "));
    }
    config.push("--scalar", value_name(&args.scalar));
    config.push("--seed", args.seed);
    config.push("--window", resolved.window);
    config.push("--steps-per-sample", resolved.steps_per_sample);
    if let Some(eps) = resolved.eps() {
        config.push("--eps", eps);
    }
    config.push("--no-scale", args.no_scale);
    if learner != Learner::Svm {
        config.push("--centers", resolved.centers);
        if learner != Learner::Novelty {
            config.push("--no-renew", args.no_renew);
        }
        let kernel = &args.kernel;
        config.push("--kernel", value_name(&kernel.kernel));
        if kernel.kernel != KernelArg::Linear {
            config.push("--gamma", resolved.gamma(dim)?);
        }
        if kernel.kernel == KernelArg::Poly {
            config.push("--degree", kernel.degree);
            config.push("--coef0", kernel.coef0);
        }
    }
    if learner == Learner::Slkl {
        // Recorded when given: a raced ν is the race's state. (A checkpoint from before
        // the race recorded 0.01 and resumes with `--nu 0.01`.)
        if let Some(nu) = args.nu {
            config.push("--nu", nu);
        }
    } else if learner == Learner::Novelty {
        config.push("--delta", resolved.delta);
        config.push("--quantile", args.quantile);
        config.push("--warmup", args.warmup);
        config.push("--learn", value_name(&args.learn));
        if let Some(label) = &args.detection.normal_label {
            // Recorded only when given: a checkpoint from before the flag resumes unchanged.
            config.push("--normal-label", label);
        }
    } else {
        config.push("--classes", args.classes);
        config.push("--memory", args.memory);
        config.push("--c", resolved.cost()?);
        config.push("--loss", value_name(&args.svm.loss));
        config.push("--bias", args.svm.bias);
    }
    if learner == Learner::Rsvm {
        config.push("--delta", resolved.delta);
    }
    Ok(config)
}

/// The name clap shows for a value.
pub fn value_name<E: ValueEnum>(value: &E) -> String {
    value.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
}
