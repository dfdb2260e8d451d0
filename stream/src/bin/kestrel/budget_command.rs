//! `kestrel budget`: the bytes a learner's streaming state takes at given sizes, or the
//! largest window that fits a number of bytes (`--fit`), for one learner or for each.

use anyhow::{Result, bail};
use kestrel_core::Real;
use kestrel_ffi::Sizes;
use kestrel_ffi::multiclass::kestrel_multiclass_default_config;
use kestrel_ffi::novelty::kestrel_novelty_default_config;
use kestrel_ffi::scaler::kestrel_scaler_work_bytes;
use kestrel_ffi::slkl::kestrel_slkl_default_config;
use kestrel_ffi::svm::{SvmConfig, kestrel_svm_default_config};
use kestrel_stream::model::scalar_name;
use kestrel_stream::online::build::{Raced, StreamSettings};
use serde_json::{Map, Value, json};

use crate::args::{BudgetArgs, Learner, ScalarArg, TargetArg};
use crate::stream_setup::value_name;

/// `kestrel budget`.
pub fn budget(args: &BudgetArgs) -> Result<()> {
    match args.scalar {
        ScalarArg::F64 => budget_in::<f64>(args),
        ScalarArg::F32 => budget_in::<f32>(args),
    }
}

fn budget_in<T: Real>(args: &BudgetArgs) -> Result<()> {
    let Some(learner) = args.learner else {
        return budget_table::<T>(args);
    };
    let (key, value) = match learner_budget::<T>(args, learner) {
        Ok(value) => value,
        Err(nothing_fits) => bail!("{}", nothing_fits.message(args, learner)),
    };
    let c = c_library(args, learner);
    if args.json {
        let mut info = json!({ "learner": value_name(&learner), "scalar": scalar_name::<T>(), key: value });
        if let (Some(info), Some(c)) = (info.as_object_mut(), &c) {
            info.insert("c".to_string(), c.json());
        }
        say!("{info}")?;
    } else {
        say!("{key}: {value}")?;
        tell!("kestrel: counted: {}", budget_counted::<T>(args, learner, host_race(args, learner)));
        if let Some(c) = c {
            tell!("kestrel: {}", c.described());
        }
    }
    Ok(())
}

/// What a C program allocates for the same learner: the C library's object's work bytes,
/// its scaler's, and the most bytes of its checkpoint, with the `kestrel.h` macros that
/// give them at compile time.
struct CObjects {
    /// The object's C name (`kestrel_svm`).
    object: &'static str,
    /// Its work bytes and the macro call that gives them.
    work: (usize, String),
    /// The scaler's work bytes and macro call, unless `--no-scale`.
    scaler: Option<(usize, String)>,
    /// The most bytes of the object's checkpoint.
    checkpoint: usize,
}

impl CObjects {
    fn described(&self) -> String {
        let scaler =
            self.scaler.as_ref().map_or(String::new(), |(bytes, call)| format!(", kestrel_scaler {bytes} ({call})"));
        format!(
            "in the C library: {} {} bytes of work ({}){scaler}; its checkpoint at most {} bytes",
            self.object, self.work.0, self.work.1, self.checkpoint
        )
    }

    fn json(&self) -> Value {
        json!({
            "object": self.object,
            "work_bytes": self.work.0,
            "scaler_work_bytes": self.scaler.as_ref().map(|(bytes, _)| *bytes),
            "checkpoint_bytes": self.checkpoint,
        })
    }
}

/// The C library's objects of `learner` as `args` describe it (its default configuration
/// for what they leave out), for `--target cortex-m --scalar f32` without `--fit`; `None`
/// for another learner (rsvm has no C object), target, scalar or `--fit`. An SVM of two
/// classes is a `kestrel_svm`, of more a `kestrel_multiclass`.
fn c_library(args: &BudgetArgs, learner: Learner) -> Option<CObjects> {
    if args.target != TargetArg::CortexM || args.scalar != ScalarArg::F32 || args.fit.is_some() {
        return None;
    }
    let window = u32::try_from(args.window.unwrap_or(learner.stream().default_window())).ok()?;
    let centres = u32::try_from(args.centers.unwrap_or(learner.stream().default_centers())).ok()?;
    let dim = u32::try_from(args.dim).ok()?;
    let scaler =
        (!args.no_scale).then(|| (kestrel_scaler_work_bytes(args.dim), format!("KESTREL_SCALER_WORK_BYTES({dim})")));
    let objects = |object, call, config: &dyn Sizes| {
        let work = (config.work_bytes_on_32_bit(), call);
        // 0: a configuration the C library refuses.
        (work.0 > 0).then_some(CObjects { object, work, scaler, checkpoint: config.checkpoint_bytes() })
    };
    match learner {
        Learner::Svm if args.classes == 2 => {
            let config =
                SvmConfig { memory: u32::try_from(args.memory).ok()?, ..kestrel_svm_default_config(window, dim) };
            objects("kestrel_svm", format!("KESTREL_SVM_WORK_BYTES({window}, {dim}, {})", config.memory), &config)
        }
        Learner::Svm => {
            let classes = u32::try_from(args.classes).ok()?;
            let mut config = kestrel_multiclass_default_config(window, dim, classes);
            config.svm.memory = u32::try_from(args.memory).ok()?;
            let memory = config.svm.memory;
            let call = format!("KESTREL_MULTICLASS_WORK_BYTES({window}, {dim}, {memory}, {classes})");
            objects("kestrel_multiclass", call, &config)
        }
        Learner::Slkl => {
            let config = kestrel_slkl_default_config(window, dim, centres);
            let call = format!("KESTREL_SLKL_WORK_BYTES({window}, {dim}, {centres}, {})", config.max_active);
            objects("kestrel_slkl", call, &config)
        }
        Learner::Novelty => {
            let config = kestrel_novelty_default_config(window, dim, centres);
            objects("kestrel_novelty", format!("KESTREL_NOVELTY_WORK_BYTES({window}, {dim}, {centres})"), &config)
        }
        Learner::Rsvm => None,
    }
}

/// `kestrel budget` without `--learner`: every learner's bytes (or largest window), each
/// with `kestrel stream`'s defaults for what the flags leave out.
fn budget_table<T: Real>(args: &BudgetArgs) -> Result<()> {
    let learners = <Learner as clap::ValueEnum>::value_variants();
    let rows: Vec<(Learner, LearnerBudget)> =
        learners.iter().map(|&learner| (learner, learner_budget::<T>(args, learner))).collect();
    let key = if args.fit.is_some() { "window" } else { "bytes" };
    if args.json {
        let values: Map<String, Value> = rows
            .iter()
            .map(|(learner, row)| (value_name(learner), row.as_ref().map_or(Value::Null, |(_, value)| json!(value))))
            .collect();
        return Ok(say!("{}", json!({ "scalar": scalar_name::<T>(), key: values }))?);
    }
    say!("{:<9} {key}", "learner")?;
    for (learner, row) in &rows {
        match row {
            Ok((_, value)) => say!("{:<9} {value}", value_name(learner))?,
            Err(nothing_fits) => say!("{:<9} none: one sample takes {} bytes", value_name(learner), nothing_fits.one)?,
        }
    }
    let target = if args.target == TargetArg::Host { "this host" } else { "a Cortex-M" };
    tell!(
        "kestrel: counted: each learner on {} features in {} on {target}, with `kestrel stream`'s window, centres \
         and classes where not given (--learner L says what it counted for one)",
        args.dim,
        scalar_name::<T>()
    );
    Ok(())
}

/// The stream's settings of `learner` for a window of `window` samples, as `args` give them.
fn settings_for(args: &BudgetArgs, learner: Learner, window: usize) -> StreamSettings {
    StreamSettings {
        window,
        centers: args.centers.unwrap_or(learner.stream().default_centers()),
        warmup: args.warmup,
        scale: !args.no_scale,
        renew: !args.no_renew,
        memory: args.memory,
        classes: args.classes,
        ..StreamSettings::new(learner.stream())
    }
}

/// What `kestrel stream` would race through its first window on the host (rsvm without
/// --gamma: widths; svm without --c: costs; slkl: ν), unless `--no-race`; a device runs one
/// learner.
fn host_race(args: &BudgetArgs, learner: Learner) -> Option<Raced> {
    settings_for(args, learner, 1).raced().filter(|_| args.target == TargetArg::Host && !args.no_race)
}

/// No window fits `--fit`: one sample already takes `one` bytes.
struct NothingFits {
    one: usize,
}

impl NothingFits {
    /// The error of `kestrel budget --learner learner --fit B`.
    fn message(&self, args: &BudgetArgs, learner: Learner) -> String {
        let fewer = match learner {
            Learner::Svm => "--classes",
            Learner::Rsvm => "--centers or --classes",
            Learner::Slkl | Learner::Novelty => "--centers",
        };
        let raced = host_race(args, learner).map_or(String::new(), |raced| {
            format!("; it counts the three learners of a stream racing {}, --no-race one", raced.described())
        });
        let budget = args.fit.unwrap_or_default();
        format!(
            "no window fits --fit {budget} bytes: a window of one sample already takes {} bytes (fewer {fewer} need \
             less{raced})",
            self.one
        )
    }
}

/// What [`learner_budget`] found: `("bytes", B)` or `("window", N)`, or that nothing fits.
type LearnerBudget = Result<(&'static str, usize), NothingFits>;

/// `("bytes", B)` of `learner` as `args` describe it or, with `--fit`, `("window", N)`,
/// the largest window within it.
fn learner_budget<T: Real>(args: &BudgetArgs, learner: Learner) -> LearnerBudget {
    // The streaming (windowed) learners, as `kestrel stream` and the firmware run them:
    // scalars of T plus indices of the target's pointer width; on the host also the
    // buffers the host's learners add (warm-up, dense row).
    let host = args.target == TargetArg::Host;
    let index_bytes = if host { size_of::<usize>() } else { 4 };
    let raced = host_race(args, learner);
    let bytes_for = |window: usize| -> usize {
        let settings = settings_for(args, learner, window);
        settings.footprint_racing::<T>(args.dim, raced).bytes::<T>(index_bytes, host)
    };
    let Some(budget) = args.fit else {
        return Ok(("bytes", bytes_for(args.window.unwrap_or(learner.stream().default_window()))));
    };
    // bytes_for grows with the window: bisect for the largest that fits.
    let (mut lo, mut hi) = (0usize, 1usize << 40);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if bytes_for(mid) <= budget { lo = mid } else { hi = mid - 1 }
    }
    match lo {
        0 => Err(NothingFits { one: bytes_for(1) }),
        window => Ok(("window", window)),
    }
}

/// What `kestrel budget` counted, in words: the learner's settings, as `args` and the
/// stream's defaults give them (`raced`: what the stream races), and where it runs.
fn budget_counted<T: Real>(args: &BudgetArgs, learner: Learner, raced: Option<Raced>) -> String {
    let centers = args.centers.unwrap_or(learner.stream().default_centers());
    let mut parts = vec![format!("{} on {} features", value_name(&learner), args.dim)];
    parts.push(match (args.fit, args.window) {
        (Some(_), _) => "the largest window".to_string(),
        (None, window) => format!("a window of {}", window.unwrap_or(learner.stream().default_window())),
    });
    if learner != Learner::Svm {
        parts.push(format!("{centers} centres"));
    }
    if learner == Learner::Novelty {
        parts.push(format!("a warm-up of {}", args.warmup));
    }
    if matches!(learner, Learner::Svm | Learner::Rsvm) {
        parts.push(match args.classes {
            2 => "two classes (one window)".to_string(),
            k => format!("up to {k} classes, one window shared (--classes K for fewer)"),
        });
        if args.memory > 0 {
            parts.push("the memory beyond the window".to_string());
        }
    }
    if learner == Learner::Rsvm && !args.no_renew {
        parts.push("room to renew centres".to_string());
    }
    if let Some(raced) = raced {
        parts.push(format!(
            "{} {} raced through the first window (stream without {}; --no-race counts one)",
            raced.values(args.dim).len(),
            raced.noun(),
            raced.flag()
        ));
    }
    if !args.no_scale {
        parts.push("the scaler".to_string());
    }
    let place = match args.target {
        TargetArg::Host => "on the host (8-byte indices, the host's buffers)",
        TargetArg::CortexM => "on a Cortex-M (4-byte indices)",
    };
    format!("{}; {} {place}", parts.join(", "), scalar_name::<T>())
}
