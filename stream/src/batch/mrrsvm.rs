//! MapReduce RSVM training (seed 003 §5, Algorithm 4) on one machine, in pieces an engine
//! such as Spark can run apart: [`split`] (which part each row belongs to), [`train_part`]
//! (the Map step on one part's rows) and [`reduce`] (the Reduce step on the parts' models).
//!
//! 1. **Split.** Row `(x, y)` goes to part `h(x, y) mod P`, `h` a seeded 64-bit hash of its
//!    nonzero features (index and `f64` bits) and its label ([`part_of`]): each class's rows
//!    spread evenly over the parts in expectation (stratified by hashing), and the part of a
//!    row depends on the row alone, not on its position, so an engine that sees the rows in
//!    another order, on other machines, assigns the same parts. Within a part the rows are
//!    put in the order of their hash, so a part's model depends only on
//!    which rows it holds. (Rows read from a file whose classes are names, or standardised
//!    by `--scale`, are numbered or scaled in the order they come: there the order still
//!    matters.)
//! 2. **Map.** Each part learns a reduced-kernel SVM with its own reduced set, by `kestrel
//!    train --learner rsvm`'s policy (`auto` settings chosen on the part), and keeps the
//!    labels of its centres ([`Part`]).
//! 3. **Reduce.** Every centre `x̃_j` of every part is encoded by the decision values of
//!    the `P` part models, `x̃_j^new = [h_1(x̃_j), …, h_P(x̃_j)]` (a one-vs-rest part gives
//!    one value per class): the Big Table, `Σ m_i` rows of `width = Σ outputs_i`
//!    features. A linear SVM by dual coordinate descent on the Big Table with the centres'
//!    labels (one-vs-rest beyond two classes, `C` = [`FINAL_C`]) is the final model.
//!
//! The model file ([`kestrel_core::reduced_set::mapreduce`]) holds the part models and the
//! final one; prediction is Algorithm 5.
//!
//! **Memory**: the data set and its parts (a second copy, split), then each part's rsvm
//! training (see [`super::rsvm::working_bytes`]), up to [`threads`] at once; the Big Table
//! is `Σ m_i × width` scalars.

use std::collections::HashMap;

use kestrel_core::model::Envelope;
use kestrel_core::reduced_set::{ReducedKernelModel, mapreduce};
use kestrel_core::{Real, dcd};
use serde::{Deserialize, Serialize};

use super::class_weights::ClassWeights;
use super::fit::{self, Field, FitError, FitSettings, Fitted, Learner, Summary};
use super::{TrainError, classes, linear};
use crate::dataset::Dataset;
use crate::limits::zeroed;
use crate::source::Record;

/// Parts unless the settings say.
pub const DEFAULT_PARTITIONS: usize = 4;
/// The most parts.
pub const MAX_PARTITIONS: usize = 1 << 12;
/// The final linear SVM's cost.
pub const FINAL_C: f64 = 1.0;

/// A part's model: an rsvm model file, and the label of each of its centres, in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// The rsvm model file's bytes.
    pub model: Vec<u8>,
    /// The label of each centre.
    pub centre_labels: Vec<f64>,
}

impl Part {
    /// The part as bytes (postcard), to send from where it was learned.
    ///
    /// # Errors
    /// Only if serialisation fails, which it does not for a part.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FitError> {
        postcard::to_allocvec(self).map_err(|e| FitError::Settings(format!("cannot encode a part: {e}")))
    }

    /// A part from [`to_bytes`](Self::to_bytes)'s bytes.
    ///
    /// # Errors
    /// `FitError::Settings` for bytes that are not a part.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FitError> {
        postcard::from_bytes(bytes).map_err(|_| FitError::Settings("not a MapReduce RSVM part".into()))
    }
}

/// The hash of a row's nonzero features (each index and value's `f64` bits), FNV-1a.
pub fn row_key<T: Real>(indices: &[u32], values: &[T]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut mix = |word: u64| {
        for byte in word.to_le_bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (&j, &v) in indices.iter().zip(values) {
        if v != T::ZERO {
            mix(u64::from(j));
            mix(v.to_f64().to_bits());
        }
    }
    hash
}

/// SplitMix64's finaliser: spreads the bits of `x`.
fn spread(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The order key of a row: its features' [`row_key`] mixed with its label and the seed.
fn order_key(key: u64, label: f64, seed: u64) -> u64 {
    // −0 and +0 are one label.
    let label = if label == 0.0 { 0.0f64 } else { label };
    spread(key ^ spread(label.to_bits() ^ spread(seed)))
}

/// The part of a row with features' key `key` and label `label`, of `parts`.
pub fn part_of(key: u64, label: f64, seed: u64, parts: usize) -> usize {
    part_by_order(order_key(key, label, seed), parts)
}

/// The part of a row of order key `order`, of `parts`.
fn part_by_order(order: u64, parts: usize) -> usize {
    let parts = u64::try_from(parts.max(1)).unwrap_or(u64::MAX);
    usize::try_from(order % parts).unwrap_or(0)
}

/// The rows of `data` split into `parts` parts ([`part_of`]), each in canonical order.
pub fn split<T: Real>(data: &Dataset<T>, seed: u64, parts: usize) -> Vec<Dataset<T>> {
    let mut members: Vec<Vec<(u64, usize)>> = vec![Vec::new(); parts];
    for i in 0..data.len() {
        let (indices, values) = data.row(i).unwrap_or_default();
        let label = data.labels().get(i).copied().unwrap_or(0.0);
        let key = order_key(row_key(indices, values), label, seed);
        if let Some(part) = members.get_mut(part_by_order(key, parts)) {
            part.push((key, i));
        }
    }
    members.iter().map(|part| canonical(data, part)).collect()
}

/// The rows `members` (order key, row) of `data` in the order of their keys (ties: the
/// rows' contents, which are then equal in practice).
fn canonical<T: Real>(data: &Dataset<T>, members: &[(u64, usize)]) -> Dataset<T> {
    let mut sorted = members.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| compare_rows(data, a.1, b.1)));
    data.rows_in(&sorted.iter().map(|&(_, i)| i).collect::<Vec<_>>())
}

/// Rows `a` and `b` of `data` compared by contents (indices, values' bits, label).
fn compare_rows<T: Real>(data: &Dataset<T>, a: usize, b: usize) -> std::cmp::Ordering {
    let bits = |i: usize| {
        let (indices, values) = data.row(i).unwrap_or_default();
        let label = data.labels().get(i).copied().unwrap_or(0.0).to_bits();
        (indices.to_vec(), values.iter().map(|v| v.to_f64().to_bits()).collect::<Vec<_>>(), label)
    };
    bits(a).cmp(&bits(b))
}

/// Map: the rsvm of one part (its rows in canonical order, as [`split`] gives them), by
/// `settings` with the learner set to rsvm.
///
/// # Errors
/// As [`fit::fit`] for rsvm: a part with a single class is `TrainError::SingleClass`.
pub fn train_part<T: Real>(settings: &FitSettings, part: &Dataset<T>) -> Result<Part, FitError> {
    let settings = FitSettings { learner: Learner::Rsvm, ..settings.clone() };
    let fitted = fit::fit(&settings, part)?;
    let model = decode::<T>(&fitted.bytes).map_err(TrainError::Core)?;
    let centre_labels = centre_labels(&model, part)?;
    Ok(Part { model: fitted.bytes, centre_labels })
}

/// The reduced-kernel model in `bytes`, in storage its payload bounds.
fn decode<T: Real>(bytes: &[u8]) -> Result<ReducedKernelModel<T, Vec<T>>, kestrel_core::Error> {
    let envelope = Envelope::parse(bytes)?;
    ReducedKernelModel::from_envelope_in(&envelope, crate::model::storage_for(&envelope))
}

/// The label of each centre of `model`: that of the first row of `part` equal to it (the
/// centres are rows of the part).
fn centre_labels<T: Real>(model: &ReducedKernelModel<T, Vec<T>>, part: &Dataset<T>) -> Result<Vec<f64>, FitError> {
    let dim = model.dim();
    let mut labels = vec![f64::NAN; model.centres_len()];
    let mut centres: HashMap<Vec<u64>, Vec<usize>> = HashMap::new();
    for (j, centre) in model.centres().chunks_exact(dim).enumerate() {
        centres.entry(bits(centre)).or_default().push(j);
    }
    let mut dense = zeroed::<T>(dim, "a row")?;
    for i in 0..part.len() {
        if centres.is_empty() {
            break;
        }
        let (indices, values) = part.row(i).unwrap_or_default();
        dense.fill(T::ZERO);
        for (&j, &v) in indices.iter().zip(values) {
            if let Some(slot) = dense.get_mut(j as usize) {
                *slot = v;
            }
        }
        for j in centres.remove(&bits(&dense)).unwrap_or_default() {
            if let (Some(slot), Some(&label)) = (labels.get_mut(j), part.labels().get(i)) {
                *slot = label;
            }
        }
    }
    if !centres.is_empty() {
        return Err(FitError::Settings("a centre is not a row of its part".into()));
    }
    Ok(labels)
}

/// The bits of a row's values.
fn bits<T: Real>(row: &[T]) -> Vec<u64> {
    row.iter().map(|v| v.to_f64().to_bits()).collect()
}

/// Reduce: the Big Table of the parts' centres and the final linear SVM; the MapReduce
/// RSVM model file of `dim` features (scalar `T`) and a summary.
///
/// # Errors
/// `FitError::Settings` for no parts or parts of another dimension or scalar; the linear
/// SVM's errors (the centres hold a single class: `TrainError::SingleClass`).
pub fn reduce<T: Real>(parts: &[Part], dim: usize, seed: u64) -> Result<Fitted, FitError> {
    if parts.is_empty() {
        return Err(FitError::Settings("no parts to reduce".into()));
    }
    let models =
        parts.iter().map(|part| decode::<T>(&part.model)).collect::<Result<Vec<_>, _>>().map_err(TrainError::Core)?;
    if models.iter().zip(parts).any(|(m, p)| m.dim() != dim || m.centres_len() != p.centre_labels.len()) {
        return Err(FitError::Settings(format!(
            "the parts are not models of {dim} features with their centres' labels"
        )));
    }
    let width: usize = models.iter().map(ReducedKernelModel::outputs).sum();
    let table = big_table(&models, parts, width)?;
    let params = dcd::Params::new().c(T::from_f64(FINAL_C)).bias(T::ONE).check().map_err(TrainError::Core)?;
    let (final_model, linear) = linear::train(&table, params, &ClassWeights::Unit, seed, None)?;
    let final_file = crate::model::to_bytes(&final_model).map_err(TrainError::Core)?;
    let payloads: Vec<&[u8]> = parts
        .iter()
        .map(|p| Envelope::parse(&p.model).map(|e| e.payload))
        .collect::<Result<_, _>>()
        .map_err(TrainError::Core)?;
    let final_payload = Envelope::parse(&final_file).map_err(TrainError::Core)?.payload;
    let len = mapreduce::encoded_len(dim, width, &payloads, final_payload).map_err(TrainError::Core)?;
    let mut bytes = zeroed(len, "the model")?;
    let written = mapreduce::encode::<T>(dim, width, &payloads, final_payload, &mut bytes).map_err(TrainError::Core)?;
    bytes.truncate(written);
    let summary = Summary::from([
        ("learner", "mrrsvm".into()),
        ("partitions", parts.len().into()),
        ("centers", table.len().into()),
        ("part_centers", Field::Counts(models.iter().map(ReducedKernelModel::centres_len).collect())),
        ("width", width.into()),
        ("classes", linear.classes.into()),
        ("final_passes", linear.passes.into()),
        ("converged", linear.converged.into()),
    ]);
    Ok(Fitted { bytes, summary })
}

/// The Big Table: every part's centres, encoded by every part's decision values.
fn big_table<T: Real>(
    models: &[ReducedKernelModel<T, Vec<T>>],
    parts: &[Part],
    width: usize,
) -> Result<Dataset<T>, FitError> {
    let mut table = Dataset::new();
    let mut values = zeroed::<T>(width, "the Big Table")?;
    let mut record =
        Record { indices: (0..width).filter_map(|j| u32::try_from(j).ok()).collect(), ..Record::default() };
    for (model, part) in models.iter().zip(parts) {
        for (centre, &label) in model.centres().chunks_exact(model.dim()).zip(&part.centre_labels) {
            let mut filled = 0;
            for encoder in models {
                let slot = values.get_mut(filled..filled + encoder.outputs()).unwrap_or_default();
                encoder.decision_values(centre, slot).map_err(TrainError::Core)?;
                filled += encoder.outputs();
            }
            record.values.clear();
            record.values.extend(values.iter().map(|v| v.to_f64()));
            record.label = label;
            table.push(&record).map_err(|e| FitError::Settings(format!("the Big Table: {e}")))?;
        }
    }
    table.widen(width);
    Ok(table)
}

/// Parts trained at once: the machine's cores.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// Algorithm 4 on one machine: split, the parts' rsvms in parallel threads, reduce.
///
/// # Errors
/// `FitError::Settings` for more parts than rows, an empty part or a part with a single
/// class (each naming the part); a part's training error naming the part; the reduce
/// step's errors.
pub fn train<T: Real>(settings: &FitSettings, data: &Dataset<T>) -> Result<Fitted, FitError> {
    let parts = settings.partitions.unwrap_or(DEFAULT_PARTITIONS);
    if parts == 0 || parts > MAX_PARTITIONS {
        return Err(FitError::Settings(format!("partitions must be between 1 and {MAX_PARTITIONS}")));
    }
    if parts > data.len() {
        return Err(FitError::Settings(format!("{parts} partitions for {} rows: use fewer partitions", data.len())));
    }
    // The whole set's classes first: fewer partitions would not help a set of one class.
    classes::<T>(data.labels())?;
    let split = split(data, settings.seed, parts);
    check_parts(&split)?;
    let trained = train_parts(settings, &split)?;
    let mut fitted = reduce::<T>(&trained, data.dim().max(1), settings.seed)?;
    fitted.summary.insert("part_rows", Field::Counts(split.iter().map(Dataset::len).collect()));
    Ok(fitted)
}

/// The parts' models, at most [`threads`] trained at once.
fn train_parts<T: Real>(settings: &FitSettings, split: &[Dataset<T>]) -> Result<Vec<Part>, FitError> {
    let mut results: Vec<Option<Result<Part, FitError>>> = split.iter().map(|_| None).collect();
    for (chunk, slots) in split.chunks(threads()).zip(results.chunks_mut(threads())) {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunk.iter().map(|part| scope.spawn(|| train_part(settings, part))).collect();
            for (slot, handle) in slots.iter_mut().zip(handles) {
                *slot = Some(
                    handle.join().unwrap_or_else(|_| Err(FitError::Settings("a part's training panicked".into()))),
                );
            }
        });
    }
    let total = split.len();
    results
        .into_iter()
        .zip(split)
        .enumerate()
        .map(|(i, (result, part))| {
            let failed = || FitError::Settings("a part was not trained".into());
            let describe = |error| FitError::Settings(format!("part {i} of {total} ({} rows): {error}", part.len()));
            result.unwrap_or_else(|| Err(failed())).map_err(describe)
        })
        .collect()
}

/// `Ok` unless a part is empty or holds a single class.
fn check_parts<T: Real>(split: &[Dataset<T>]) -> Result<(), FitError> {
    let total = split.len();
    for (i, part) in split.iter().enumerate() {
        let labels = part.labels();
        let Some(&first) = labels.first() else {
            return Err(FitError::Settings(format!("part {i} of {total} is empty: use fewer partitions")));
        };
        if labels.iter().all(|&l| l == first) {
            return Err(FitError::Settings(format!(
                "part {i} of {total} ({} rows) holds a single class ({first}): use fewer partitions",
                labels.len()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kestrel_core::Rng;

    /// Rows in four quadrants, label by the sign of x·y (XOR: not linearly separable);
    /// with `classes = 3` a third class for rows far from the origin.
    fn quadrants(n: usize, classes: usize, seed: u64) -> Dataset<f64> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut data = Dataset::new();
        for _ in 0..n {
            let (a, b): (f64, f64) = (rng.uniform_in(-1.0, 1.0), rng.uniform_in(-1.0, 1.0));
            let label = if classes == 3 && a * a + b * b > 0.8 {
                2.0
            } else if a * b > 0.0 {
                1.0
            } else {
                0.0
            };
            data.push(&Record { label, indices: vec![0, 1], values: vec![a, b], ..Record::default() }).unwrap();
        }
        data
    }

    fn settings(parts: usize) -> FitSettings {
        FitSettings { partitions: Some(parts), centers: Some(24), ..FitSettings::new(Learner::Mrrsvm) }
    }

    fn accuracy(bytes: &[u8], data: &Dataset<f64>) -> f64 {
        let mut model = crate::model::load(bytes).unwrap();
        let mut record = Record::default();
        let right =
            (0..data.len()).filter(|&i| data.record(i, &mut record) && model.predict(&record).unwrap() == record.label);
        right.count() as f64 / data.len() as f64
    }

    #[test]
    fn learns_nonlinear_classes_from_parts() {
        for classes in [2, 3] {
            let (train_set, test_set) = (quadrants(1200, classes, 1), quadrants(400, classes, 2));
            let fitted = train(&settings(4), &train_set).unwrap();
            let accuracy = accuracy(&fitted.bytes, &test_set);
            assert!(accuracy > 0.9, "{classes} classes: {accuracy}");
            assert_eq!(fitted.summary.get("partitions"), Some(&Field::Count(4)));
            let Some(Field::Counts(rows)) = fitted.summary.get("part_rows") else { panic!("{:?}", fitted.summary) };
            assert_eq!(rows.iter().sum::<usize>(), 1200);
            assert!(rows.iter().all(|&r| (200..400).contains(&r)), "{rows:?}");
        }
    }

    #[test]
    fn the_model_depends_on_the_rows_not_their_order_and_the_pieces_make_it() {
        let data = quadrants(600, 2, 3);
        let reversed = data.rows_in(&(0..data.len()).rev().collect::<Vec<_>>());
        let fitted = train(&settings(3), &data).unwrap();
        assert_eq!(train(&settings(3), &reversed).unwrap().bytes, fitted.bytes);
        // The pieces an engine runs apart, with the parts sent as bytes, give the same model.
        let parts: Vec<Part> = split(&reversed, 1, 3)
            .iter()
            .map(|part| Part::from_bytes(&train_part(&settings(3), part).unwrap().to_bytes().unwrap()).unwrap())
            .collect();
        assert_eq!(reduce::<f64>(&parts, 2, 1).unwrap().bytes, fitted.bytes);
        // Each row's part is part_of of its contents.
        let pieces = split(&data, 1, 3);
        for (p, piece) in pieces.iter().enumerate() {
            for i in 0..piece.len() {
                let (indices, values) = piece.row(i).unwrap();
                assert_eq!(part_of(row_key(indices, values), piece.labels()[i], 1, 3), p);
            }
        }
        // Explicit zeros do not change a row's key.
        assert_eq!(row_key::<f64>(&[0, 1, 2], &[0.0, 2.5, 0.0]), row_key::<f64>(&[1], &[2.5]));
    }

    #[test]
    fn impossible_splits_are_errors_naming_the_fix() {
        let data = quadrants(40, 2, 4);
        let message = |parts: usize, data: &Dataset<f64>| train(&settings(parts), data).unwrap_err().to_string();
        assert_eq!(message(41, &data), "41 partitions for 40 rows: use fewer partitions");
        assert!(message(40, &data).contains("use fewer partitions"), "{}", message(40, &data));
        assert_eq!(message(0, &data), "partitions must be between 1 and 4096");
        // One class in a part: the rows of class 1 are few.
        let mut record = Record::default();
        let keep: Vec<usize> =
            (0..data.len()).filter(|&i| data.record(i, &mut record) && (record.label == 0.0 || i < 8)).collect();
        let skewed = data.rows_in(&keep);
        let error = message(8, &skewed);
        assert!(error.contains("holds a single class (0): use fewer partitions"), "{error}");
        // A set of one class is told as such: no number of partitions would do.
        let zeros: Vec<usize> =
            (0..data.len()).filter(|&i| data.record(i, &mut record) && record.label == 0.0).collect();
        let single = message(2, &data.rows_in(&zeros));
        assert_eq!(single, "the training set has a single label value (0): nothing to separate");
        assert!(Part::from_bytes(b"nonsense").is_err());
        assert!(reduce::<f64>(&[], 2, 1).is_err());
    }
}
