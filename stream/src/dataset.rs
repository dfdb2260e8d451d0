//! A training set held in compact form: compressed sparse rows of the scalar the learner
//! runs in, plus the labels.
//!
//! Memory: one `u32` index and one scalar per non-zero feature, one offset and one label
//! per row — for dense data about `(4 + size_of T)·n·d` bytes, the least that holds it.

use kestrel_core::Real;
use kestrel_core::scaler::Scaler;

use crate::class_names::ClassNames;
use crate::limits::{AllocError, zeroed};
use crate::source::{ReadError, ReadErrorKind, Record, RecordReader};

/// A feature scaler in host memory.
pub type HostScaler<T> = Scaler<T, Vec<T>>;

/// What to do with a row that cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnError {
    /// Stop at the first bad row (the default).
    #[default]
    Stop,
    /// Count the row as skipped, report it, and go on.
    Skip,
}

/// The bad rows a read left out under [`OnError::Skip`]: all counted, the first
/// [`BadRows::KEPT`] kept in input order — enough to find what is wrong with an input,
/// and no more, so that a file of bad rows costs no memory for them. Memory: at most
/// `KEPT` [`ReadError`]s.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BadRows {
    count: u64,
    first: Vec<ReadError>,
}

impl BadRows {
    /// The errors kept, the first in input order.
    pub const KEPT: usize = 10;

    /// None yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts a bad row, keeping its error while fewer than [`KEPT`](Self::KEPT) are kept.
    pub fn add(&mut self, error: &ReadError) {
        self.count = self.count.saturating_add(1);
        if self.first.len() < Self::KEPT {
            self.first.push(error.clone());
        }
    }

    /// Bad rows counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The first bad rows' errors, at most [`KEPT`](Self::KEPT), in input order.
    pub fn first(&self) -> &[ReadError] {
        &self.first
    }

    /// Counts the bad rows of the input that follows this one's, its lines numbered after
    /// `lines_before` lines.
    fn append(&mut self, later: BadRows, lines_before: u64) {
        let room = Self::KEPT.saturating_sub(self.first.len());
        self.first.extend(later.first.into_iter().take(room).map(|mut e| {
            e.line += lines_before;
            e
        }));
        self.count = self.count.saturating_add(later.count);
    }
}

/// Labelled rows in compressed sparse form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset<T> {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<T>,
    labels: Vec<f64>,
    dim: usize,
    /// The number of features the input stated (a CSV header), when it did.
    stated_dim: Option<usize>,
    /// The features' names the input stated (a CSV header), in order; empty when it
    /// stated none.
    feature_names: Vec<String>,
    /// How many of the last features are indicators of a column of categories (one-hot,
    /// `--categorical`), which standardisation only centres ([`Dataset::standardized`]).
    indicators: usize,
    class_names: ClassNames,
    /// Each row's weight (scikit-learn's `sample_weight`: a row of weight 2 counts as two
    /// copies of it), finite and positive; `None`: every row weighs 1.
    row_weights: Option<Vec<f64>>,
}

impl<T: Real> Dataset<T> {
    /// An empty data set.
    pub fn new() -> Self {
        let (offsets, indices, values, labels) = (vec![0], Vec::new(), Vec::new(), Vec::new());
        let (stated_dim, feature_names, class_names) = (None, Vec::new(), ClassNames::new());
        let (dim, indicators, row_weights) = (0, 0, None);
        Dataset {
            offsets,
            indices,
            values,
            labels,
            dim,
            stated_dim,
            feature_names,
            indicators,
            class_names,
            row_weights,
        }
    }

    /// Gives each row a weight, `weights[i]` to row `i` (the learners that take them:
    /// svm, rsvm, lssvm, ssvr, mrrsvm and krr's exact solver; [`crate::batch::fit`]).
    ///
    /// # Errors
    /// `DimensionMismatch` unless there is one weight per row; `InvalidParam { name:
    /// "sample_weight" }` for a weight that is not finite and positive (a row of weight 0
    /// is left out by the caller instead). The data set is unchanged then.
    pub fn set_row_weights(&mut self, weights: Vec<f64>) -> Result<(), kestrel_core::Error> {
        if weights.len() != self.len() {
            return Err(kestrel_core::Error::DimensionMismatch { expected: self.len(), got: weights.len() });
        }
        if !weights.iter().all(|&w| w > 0.0 && w.is_finite()) {
            return Err(kestrel_core::Error::InvalidParam { name: "sample_weight" });
        }
        self.row_weights = Some(weights);
        Ok(())
    }

    /// Each row's weight, `None` when every row weighs 1 ([`set_row_weights`](Self::set_row_weights)).
    pub fn row_weights(&self) -> Option<&[f64]> {
        self.row_weights.as_deref()
    }

    /// The rows' total weight: their number when they weigh 1.
    pub fn total_weight(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "a count of rows, as a weight")]
        self.row_weights().map_or(self.len() as f64, |weights| weights.iter().sum())
    }

    /// Appends a record (its values rounded to `T`), with its weight when it has one (the
    /// rows before weighing 1); a record of weight 0 is left out.
    ///
    /// # Errors
    /// `NonFinite` for a value that is NaN or infinite (a reader refuses them, an array
    /// handed in may hold them), `Overflow` for a finite one that `T` cannot hold (e.g.
    /// 1e39 in `f32`); nothing is appended then.
    pub fn push(&mut self, record: &Record) -> Result<(), ReadErrorKind> {
        if let Some(&value) = record.values.iter().find(|&&v| !T::from_f64(v).is_finite()) {
            if !value.is_finite() {
                return Err(ReadErrorKind::NonFinite(value.to_string()));
            }
            return Err(ReadErrorKind::Overflow { value, scalar: crate::model::scalar_name::<T>() });
        }
        match record.weight {
            Some(0.0) => return Ok(()),
            Some(w) if !(w > 0.0 && w.is_finite()) => {
                return Err(ReadErrorKind::Weight { text: w.to_string(), column: "weight".into() });
            }
            _ => {}
        }
        if let (Some(_), None) = (record.weight, &self.row_weights) {
            self.row_weights = Some(vec![1.0; self.len()]);
        }
        self.indices.extend_from_slice(&record.indices);
        self.values.extend(record.values.iter().map(|&v| T::from_f64(v)));
        self.offsets.push(self.indices.len());
        self.labels.push(record.label);
        if let Some(weights) = self.row_weights.as_mut() {
            weights.push(record.weight.unwrap_or(1.0));
        }
        self.dim = self.dim.max(record.dim());
        Ok(())
    }

    /// Reads every record of `reader`, class names given their labels
    /// ([`crate::class_names`]). With [`OnError::Skip`], bad rows (those the reader
    /// rejects, those with a value `T` cannot hold, a class name past the limits) are
    /// counted in `bad` and left out; with [`OnError::Stop`], the first one is returned.
    ///
    /// # Errors
    /// The first bad row under [`OnError::Stop`].
    pub fn read(reader: &mut dyn RecordReader, on_error: OnError, bad: &mut BadRows) -> Result<Self, ReadError> {
        let mut data = Dataset::new();
        let mut record = Record::default();
        loop {
            let next = reader.next_record(&mut record).and_then(|more| {
                let line = record.line;
                let error = |kind| ReadError { source_name: reader.name().to_string(), line, column: 1, kind };
                if !more {
                    return Ok(false);
                }
                data.class_names.resolve(&mut record).map_err(error)?;
                data.push(&record).map_err(error).map(|()| true)
            });
            match next {
                Ok(true) => {}
                Ok(false) => {
                    // Known once every row is read: one-hot columns add a feature per category.
                    data.stated_dim = reader.dim_hint();
                    data.feature_names = reader.feature_names().unwrap_or_default();
                    data.indicators = reader.indicators();
                    data.dim = data.dim.max(data.stated_dim.unwrap_or(0));
                    return Ok(data);
                }
                Err(e) if on_error == OnError::Skip => bad.add(&e),
                Err(e) => return Err(e),
            }
        }
    }

    /// [`Dataset::read`] of the consecutive parts of one LibSVM file
    /// ([`crate::source::split`]), each on a thread of its own, then joined in order: the
    /// same rows, the same bad rows in `bad` (numbered by their line in the whole file),
    /// the same first bad row under [`OnError::Stop`], as one reader of the whole file
    /// gives. Memory: the parts, then their join (the data set and its largest part's worth
    /// besides, for a moment), and [`BadRows::KEPT`] errors a part.
    ///
    /// # Errors
    /// The first bad row under [`OnError::Stop`]; an allocation failure while joining, as
    /// a bad row of the file.
    pub fn read_parts<R: std::io::BufRead + Send>(
        parts: Vec<crate::source::LibSvmReader<R>>,
        on_error: OnError,
        bad: &mut BadRows,
    ) -> Result<Self, ReadError> {
        type Part<T> = (Result<Dataset<T>, ReadError>, BadRows, u64, String);
        let read: Vec<Part<T>> = std::thread::scope(|scope| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|mut reader| {
                    scope.spawn(move || {
                        let mut bad = BadRows::new();
                        let data = Dataset::read(&mut reader, on_error, &mut bad);
                        (data, bad, reader.lines_read(), reader.name().to_string())
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
        });
        let mut joined = Dataset::new();
        let mut lines_before = 0u64;
        for (data, part_bad, lines, name) in read {
            bad.append(part_bad, lines_before);
            let data = data.map_err(|mut e| {
                e.line += lines_before;
                e
            })?;
            joined.append(data).map_err(|error| ReadError {
                source_name: name,
                line: lines_before + 1,
                column: 1,
                kind: ReadErrorKind::Io(error.to_string()),
            })?;
            lines_before += lines;
        }
        Ok(joined)
    }

    /// Appends the rows of `other`, whose labels mean what `self`'s do (LibSVM rows: numbers,
    /// no class names; parts of one file, read without row weights).
    ///
    /// # Errors
    /// [`AllocError`] when the rows cannot be held; `self` is unchanged then.
    fn append(&mut self, other: Dataset<T>) -> Result<(), AllocError> {
        if self.is_empty() && self.class_names == other.class_names {
            *self = Dataset { dim: self.dim.max(other.dim), ..other };
            return Ok(());
        }
        crate::limits::reserve(&mut self.indices, other.indices.len(), "the rows")?;
        crate::limits::reserve(&mut self.values, other.values.len(), "the rows")?;
        crate::limits::reserve(&mut self.offsets, other.len(), "the rows")?;
        crate::limits::reserve(&mut self.labels, other.len(), "the rows")?;
        let base = self.indices.len();
        self.offsets.extend(other.offsets.iter().skip(1).map(|&o| o + base));
        self.indices.extend_from_slice(&other.indices);
        self.values.extend_from_slice(&other.values);
        self.labels.extend_from_slice(&other.labels);
        self.dim = self.dim.max(other.dim);
        Ok(())
    }

    /// The last `window` rows (all of them when there are fewer).
    pub fn last(&self, window: usize) -> Self {
        let first = self.len().saturating_sub(window);
        let offsets = self.offsets.get(first..).unwrap_or_default();
        let start = offsets.first().copied().unwrap_or(0);
        Dataset {
            offsets: offsets.iter().map(|o| o - start).collect(),
            indices: self.indices.get(start..).unwrap_or_default().to_vec(),
            values: self.values.get(start..).unwrap_or_default().to_vec(),
            labels: self.labels.get(first..).unwrap_or_default().to_vec(),
            dim: self.dim,
            stated_dim: self.stated_dim,
            feature_names: self.feature_names.clone(),
            indicators: self.indicators,
            class_names: self.class_names.clone(),
            row_weights: self.row_weights.as_ref().map(|w| w.get(first..).unwrap_or_default().to_vec()),
        }
    }

    /// The rows `keep` says yes to, in order (for cross-validation folds).
    pub fn subset(&self, mut keep: impl FnMut(usize) -> bool) -> Self {
        let kept: Vec<usize> = (0..self.len()).filter(|&i| keep(i)).collect();
        self.rows_in(&kept)
    }

    /// The rows numbered in `order`, in that order (a row may repeat; numbers past the end
    /// are left out).
    pub fn rows_in(&self, order: &[usize]) -> Self {
        let (dim, class_names, feature_names) = (self.dim, self.class_names.clone(), self.feature_names.clone());
        let row_weights = self.row_weights.as_ref().map(|_| Vec::new());
        let indicators = self.indicators;
        let mut data = Dataset { dim, class_names, feature_names, indicators, row_weights, ..Dataset::new() };
        for &i in order {
            if let (Some((indices, values)), Some(&label)) = (self.row(i), self.labels.get(i)) {
                data.indices.extend_from_slice(indices);
                data.values.extend_from_slice(values);
                data.offsets.push(data.indices.len());
                data.labels.push(label);
                if let (Some(kept), Some(weights)) = (data.row_weights.as_mut(), self.row_weights.as_ref()) {
                    kept.push(weights.get(i).copied().unwrap_or(1.0));
                }
            }
        }
        data
    }

    /// Row `i` as a [`Record`] (into `record`, reusing its buffers); `false` past the end.
    pub fn record(&self, i: usize, record: &mut Record) -> bool {
        let Some((indices, values)) = self.row(i) else { return false };
        record.indices.clear();
        record.indices.extend_from_slice(indices);
        record.values.clear();
        record.values.extend(values.iter().map(|v| v.to_f64()));
        record.label = self.labels.get(i).copied().unwrap_or(f64::NAN);
        record.line = u64::try_from(i).map_or(u64::MAX, |i| i.saturating_add(1));
        true
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Number of features: one past the largest index seen (or the CSV header's count).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The number of features the input stated (a CSV header's columns), `None` when it
    /// stated none (LibSVM rows, whose width is their largest index).
    pub fn stated_dim(&self) -> Option<usize> {
        self.stated_dim
    }

    /// The features' names the input stated (a CSV header's feature columns), in order;
    /// empty when it stated none.
    pub fn feature_names(&self) -> &[String] {
        &self.feature_names
    }

    /// How many of the last features are the indicators of a column of categories
    /// (one-hot, `--categorical`): standardisation only centres them, so that a rare
    /// category keeps the value 1 (standardised, a category of share `p` would be
    /// `√((1 − p)/p)`: 10 at `p` = 0.01, and a column of many rare ones would set every
    /// distance).
    pub fn indicators(&self) -> usize {
        self.indicators
    }

    /// Declares the rows at least `dim` features wide, as a matrix whose last columns are
    /// all zero is (a sparse matrix of a known shape): the model trained on them then takes
    /// rows of that width.
    pub fn widen(&mut self, dim: usize) {
        self.dim = self.dim.max(dim);
    }

    /// The labels, one per row.
    pub fn labels(&self) -> &[f64] {
        &self.labels
    }

    /// The names of the classes, when the labels were read as names (empty otherwise).
    pub fn class_names(&self) -> &ClassNames {
        &self.class_names
    }

    /// The population variance of the labels (0 for no rows): the scale of a regression
    /// target, in which `kestrel train --learner slkl` states `--nu`.
    pub fn label_variance(&self) -> f64 {
        let n = self.labels.len().max(1) as f64;
        let mean = self.labels.iter().sum::<f64>() / n;
        self.labels.iter().map(|y| (y - mean) * (y - mean)).sum::<f64>() / n
    }

    /// The population variance of each feature over every row (a row's missing entries
    /// are zeros), by two passes in `f64`; `None` for no rows, or when the rows store fewer
    /// values than they have features (sparse rows, where `d` accumulators would outweigh
    /// the data).
    pub fn feature_variances(&self) -> Option<Vec<f64>> {
        Some(self.feature_moments()?.1)
    }

    /// The mean and population variance of each feature over every row, as
    /// [`feature_variances`](Self::feature_variances) computes them.
    pub fn feature_moments(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        if self.is_empty() || self.values.len() < self.dim {
            return None;
        }
        let n = self.len() as f64;
        let mut means = vec![0.0; self.dim];
        let mut stored = vec![0usize; self.dim];
        for (&j, &v) in self.indices.iter().zip(&self.values) {
            if let (Some(mean), Some(count)) = (means.get_mut(j as usize), stored.get_mut(j as usize)) {
                *mean += v.to_f64() / n;
                *count += 1;
            }
        }
        // Each missing entry is a zero, `mean²` from the mean.
        let mut variances: Vec<f64> = means.iter().zip(&stored).map(|(m, &c)| (n - c as f64) * m * m / n).collect();
        for (&j, &v) in self.indices.iter().zip(&self.values) {
            if let (Some(variance), Some(mean)) = (variances.get_mut(j as usize), means.get(j as usize)) {
                *variance += (v.to_f64() - mean) * (v.to_f64() - mean) / n;
            }
        }
        Some((means, variances))
    }

    /// Row `i` as `(indices, values)`.
    pub fn row(&self, i: usize) -> Option<(&[u32], &[T])> {
        let (start, end) = (*self.offsets.get(i)?, *self.offsets.get(i + 1)?);
        Some((self.indices.get(start..end)?, self.values.get(start..end)?))
    }

    /// The CSR arrays `(offsets, indices, values)`.
    pub fn csr(&self) -> (&[usize], &[u32], &[T]) {
        (&self.offsets, &self.indices, &self.values)
    }

    /// Bytes of the dense copy [`dense`](Self::dense) makes for `dim` features.
    pub fn dense_bytes(&self, dim: usize) -> usize {
        self.len().saturating_mul(dim).saturating_mul(size_of::<T>())
    }

    /// The rows as a dense row-major `n × dim` matrix (features past `dim` are dropped).
    ///
    /// # Errors
    /// [`AllocError`] when the `n·dim` scalars cannot be allocated.
    pub fn dense(&self, dim: usize) -> Result<Vec<T>, AllocError> {
        let mut dense = zeroed(self.len().saturating_mul(dim), "a dense copy of the data set")?;
        for (i, row) in dense.chunks_exact_mut(dim.max(1)).enumerate() {
            self.dense_row(i, row);
        }
        Ok(dense)
    }

    /// Row `i` written densely into `out` (`out.len()` features, those past it dropped);
    /// `false`, with `out` all zeros, past the end.
    pub fn dense_row(&self, i: usize, out: &mut [T]) -> bool {
        out.fill(T::ZERO);
        let Some((indices, values)) = self.row(i) else { return false };
        for (&j, &v) in indices.iter().zip(values) {
            if let Some(slot) = out.get_mut(j as usize) {
                *slot = v;
            }
        }
        true
    }

    /// Multiplies every value of feature `j` by `weights[j]` (a feature beyond `weights`
    /// keeps its values): the relevance weights of a scaler
    /// ([`Scaler::set_weights`](kestrel_core::scaler::Scaler::set_weights)) applied to rows
    /// it has already standardised.
    pub fn weigh_features(&mut self, weights: &[T]) {
        for (value, &j) in self.values.iter_mut().zip(&self.indices) {
            if let Some(&w) = weights.get(j as usize) {
                *value *= w;
            }
        }
    }

    /// The data set with every feature standardised by its mean and population standard
    /// deviation over all rows (`kestrel_core::scaler`), and the scaler that did it, for
    /// the model file; the indicators of a column of categories are left as they come
    /// ([`Dataset::indicators`], `Scaler::leave`). The other features' values become dense
    /// (a centred zero is not zero); the indicators keep only their ones.
    ///
    /// # Errors
    /// `CapacityExceeded` (in bytes) when the copy cannot be allocated; `NonFinite` when a
    /// feature's statistics overflow `T`.
    pub fn standardized(&self) -> Result<(Self, Scaler<T, Vec<T>>), kestrel_core::Error> {
        let (dim, numeric) = (self.dim, self.dim.saturating_sub(self.indicators));
        let scaler = fitted_scaler(dim, self.indicators, self.len(), |i, row| {
            self.dense_row(i, row);
        })?;
        let memory = |e: AllocError| kestrel_core::Error::CapacityExceeded { needed: e.bytes, capacity: 0 };
        let mut row = zeroed(dim, "a row").map_err(memory)?;
        let cells = self.standardized_cells();
        let mut data = Dataset {
            labels: self.labels.clone(),
            dim,
            stated_dim: self.stated_dim,
            feature_names: self.feature_names.clone(),
            indicators: self.indicators,
            class_names: self.class_names.clone(),
            row_weights: self.row_weights.clone(),
            ..Dataset::new()
        };
        crate::limits::reserve(&mut data.values, cells, "the standardised rows").map_err(memory)?;
        crate::limits::reserve(&mut data.indices, cells, "the standardised rows").map_err(memory)?;
        crate::limits::reserve(&mut data.offsets, self.len(), "the standardised rows").map_err(memory)?;
        for i in 0..self.len() {
            self.dense_row(i, &mut row);
            scaler.transform(&mut row)?;
            for (j, &value) in row.iter().enumerate() {
                if j < numeric || value != T::ZERO {
                    data.indices.push(u32::try_from(j).unwrap_or(u32::MAX));
                    data.values.push(value);
                }
            }
            data.offsets.push(data.values.len());
        }
        Ok((data, scaler))
    }

    /// Values the copy [`standardized`](Self::standardized) holds: every row's features
    /// but the indicators, and the indicators it stores.
    fn standardized_cells(&self) -> usize {
        let numeric = self.dim.saturating_sub(self.indicators);
        let stored = self.indices.iter().filter(|&&j| j as usize >= numeric).count();
        self.len().saturating_mul(numeric).saturating_add(stored)
    }

    /// Bytes the copy [`standardized`](Self::standardized) makes will occupy (every row's
    /// values but the indicators', the indicators stored, their feature indices, `n + 1`
    /// offsets, `n` labels), known before it is made.
    pub fn standardized_bytes(&self) -> usize {
        let (n, cells) = (self.len(), self.standardized_cells());
        (n.saturating_add(1))
            .saturating_mul(size_of::<usize>())
            .saturating_add(cells.saturating_mul(size_of::<u32>() + size_of::<T>()))
            .saturating_add(n.saturating_mul(size_of::<f64>()))
    }

    /// A hash of the rows, their labels and weights (the same for the same data set, in this
    /// process): whether a result computed on some rows was computed on these.
    pub fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (self.dim, &self.offsets, &self.indices).hash(&mut hasher);
        self.values.iter().for_each(|v| v.to_f64().to_bits().hash(&mut hasher));
        self.labels.iter().for_each(|y| y.to_bits().hash(&mut hasher));
        self.row_weights.iter().flatten().for_each(|w| w.to_bits().hash(&mut hasher));
        hasher.finish()
    }

    /// Bytes the rows, labels and row weights occupy.
    pub fn bytes(&self) -> usize {
        self.offsets.len() * size_of::<usize>()
            + self.indices.len() * size_of::<u32>()
            + self.values.len() * size_of::<T>()
            + self.labels.len() * size_of::<f64>()
            + self.row_weights.as_ref().map_or(0, |w| w.len() * size_of::<f64>())
    }
}

/// Standardises the rows of the row-major `values` (`dim` columns) in place, each feature
/// by its mean and population standard deviation over the rows (`kestrel_core::scaler`),
/// the last `indicators` (a column of categories, one-hot) left as they come, and gives
/// the scaler that did it.
///
/// # Errors
/// `CapacityExceeded` (in bytes) when the scaler's `3·dim` scalars cannot be allocated;
/// `NonFinite` when a feature's statistics overflow `T`.
pub fn standardize_rows<T: Real>(
    values: &mut [T],
    dim: usize,
    indicators: usize,
) -> Result<HostScaler<T>, kestrel_core::Error> {
    let width = dim.max(1);
    let scaler = fitted_scaler(dim, indicators, values.len() / width, |i, row| {
        if let Some(values) = values.get(i * width..(i + 1) * width) {
            row.copy_from_slice(values);
        }
    })?;
    for row in values.chunks_exact_mut(width) {
        scaler.transform(row)?;
    }
    Ok(scaler)
}

/// The scaler of `dim` features fitted to `n` rows, row `i` written by `row(i, out)`: each
/// feature's mean and population standard deviation, the last `indicators` left as they
/// come (`Scaler::leave`).
///
/// # Errors
/// `CapacityExceeded` (in bytes) when the scaler or a row cannot be allocated; `NonFinite`
/// when a feature's statistics overflow `T`.
fn fitted_scaler<T: Real>(
    dim: usize,
    indicators: usize,
    n: usize,
    mut row: impl FnMut(usize, &mut [T]),
) -> Result<HostScaler<T>, kestrel_core::Error> {
    let memory = |e: AllocError| kestrel_core::Error::CapacityExceeded { needed: e.bytes, capacity: 0 };
    let mut scaler = Scaler::new_in(zeroed(Scaler::scalars_len(dim), "the feature scaler").map_err(memory)?, dim)?;
    let mut buffer = zeroed(dim, "a row").map_err(memory)?;
    for i in 0..n {
        row(i, &mut buffer);
        scaler.observe(&buffer)?;
    }
    scaler.leave(dim.saturating_sub(indicators)..dim)?;
    Ok(scaler)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::LibSvmReader;

    /// Row weights are checked when given and follow their rows into every copy.
    #[test]
    fn row_weights_are_checked_and_follow_their_rows() {
        let mut data = Dataset::<f64>::new();
        for i in 0..5 {
            let record = Record { label: i as f64, indices: vec![0], values: vec![i as f64], ..Record::default() };
            data.push(&record).unwrap();
        }
        let short = data.set_row_weights(vec![1.0; 4]);
        assert!(matches!(short, Err(kestrel_core::Error::DimensionMismatch { expected: 5, got: 4 })));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let refused = data.set_row_weights(vec![1.0, bad, 1.0, 1.0, 1.0]);
            assert_eq!(refused, Err(kestrel_core::Error::InvalidParam { name: "sample_weight" }));
        }
        assert_eq!((data.row_weights(), data.total_weight()), (None, 5.0));
        data.set_row_weights(vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert_eq!(data.total_weight(), 15.0);
        assert_eq!(data.rows_in(&[4, 0, 4]).row_weights(), Some(&[5.0, 1.0, 5.0][..]));
        assert_eq!(data.subset(|i| i % 2 == 1).row_weights(), Some(&[2.0, 4.0][..]));
        assert_eq!(data.last(2).row_weights(), Some(&[4.0, 5.0][..]));
        assert_eq!(data.standardized().unwrap().0.row_weights(), data.row_weights());
    }

    /// The features' variances over sparse rows, their missing entries zeros, equal those
    /// of the dense matrix computed directly; too sparse a set has none.
    #[test]
    fn feature_variances_count_missing_entries_as_zeros() {
        let rows: [&[(u32, f64)]; 4] =
            [&[(0, 1.0), (2, 1e6)], &[(1, -2.0), (2, 1e6 + 3.0)], &[(0, 3.0)], &[(2, 1e6 - 1.0)]];
        let mut data = Dataset::<f64>::new();
        for row in rows {
            let (indices, values) = row.iter().copied().unzip();
            data.push(&Record { indices, values, label: 1.0, ..Record::default() }).unwrap();
        }
        let dense = data.dense(3).unwrap();
        let got = data.feature_variances().unwrap();
        for (j, variance) in got.iter().enumerate() {
            let column: Vec<f64> = dense.chunks_exact(3).map(|row| row[j]).collect();
            let mean = column.iter().sum::<f64>() / 4.0;
            let expected = column.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 4.0;
            assert!((variance - expected).abs() <= 1e-9 * expected.max(1.0), "feature {j}: {variance} vs {expected}");
        }
        let mut sparse = Dataset::<f64>::new();
        sparse.push(&Record { indices: vec![0, 9], values: vec![1.0, 2.0], label: 1.0, ..Record::default() }).unwrap();
        assert_eq!(sparse.feature_variances(), None);
        assert_eq!(Dataset::<f64>::new().feature_variances(), None);
    }

    /// A file read in parts gives what one reader of it gives: the same rows, the same bad
    /// rows in the same order with the same lines (skip), the same first bad row (stop) —
    /// for any number of parts, bad rows near and across the cuts, f64 and f32 (where 1e39
    /// overflows).
    #[test]
    fn a_file_read_in_parts_is_the_file_read_whole() {
        let dir = std::env::temp_dir().join(format!("kestrel-parts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut text = String::from("# header comment\n");
        for i in 0..400 {
            match i % 37 {
                5 => text.push_str("1 2:x\n"),
                11 => text.push('\n'),
                17 => text.push_str(&format!("-1 3:1 2:{i}\n")),
                23 => text.push_str("1 1:1e39\n"),
                _ => text.push_str(&format!("{} 1:{i} {}:0.5 # row {i}\n", i % 3, 2 + i % 9)),
            }
        }
        text.push_str("2 4:4");
        let path = dir.join("rows.svm");
        std::fs::write(&path, &text).unwrap();
        fn check<T: Real>(path: &std::path::Path, text: &str) {
            for on_error in [OnError::Skip, OnError::Stop] {
                let mut whole_bad = BadRows::new();
                let mut reader = LibSvmReader::new(text.as_bytes(), path.to_str().unwrap(), 4096);
                let whole: Result<Dataset<T>, _> = Dataset::read(&mut reader, on_error, &mut whole_bad);
                // 11 rows each of a bad value, a bad order and (in f32) an overflow; the
                // first ten kept.
                match on_error {
                    OnError::Skip => {
                        assert!(whole_bad.count() >= 22 && whole.as_ref().unwrap().len() > 300);
                        assert_eq!(whole_bad.first().len(), BadRows::KEPT);
                    }
                    OnError::Stop => assert_eq!(whole.as_ref().unwrap_err().line, 7),
                }
                for parts in [1, 2, 3, 5, 16] {
                    let readers =
                        crate::source::split::libsvm_parts(path, path.to_str().unwrap(), 4096, parts).unwrap();
                    let mut bad = BadRows::new();
                    let joined: Result<Dataset<T>, _> = Dataset::read_parts(readers, on_error, &mut bad);
                    assert_eq!(joined, whole, "{parts} parts, {on_error:?}");
                    assert_eq!(bad, whole_bad, "{parts} parts, {on_error:?}");
                }
            }
        }
        check::<f64>(&path, &text);
        check::<f32>(&path, &text);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_rows_and_skips_or_stops_on_bad_ones() {
        let text = "1 1:0.5 3:2\n-1 x\n-1 2:1\n";
        let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 1024);
        let mut bad = BadRows::new();
        let data: Dataset<f32> = Dataset::read(&mut reader, OnError::Skip, &mut bad).unwrap();
        let lines: Vec<u64> = bad.first().iter().map(|e| e.line).collect();
        assert_eq!((data.len(), data.dim(), bad.count(), lines), (2, 3, 1, vec![2]));
        assert_eq!(data.row(0), Some((&[0u32, 2][..], &[0.5f32, 2.0][..])));
        assert_eq!(data.row(1), Some((&[1u32][..], &[1.0f32][..])));
        assert_eq!(data.labels(), &[1.0, -1.0]);
        assert_eq!(data.row(2), None);

        let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 1024);
        let e = Dataset::<f64>::read(&mut reader, OnError::Stop, &mut BadRows::new()).unwrap_err();
        assert_eq!(e.to_string(), "d.svm:2:4: `x` is not an index:value pair");
    }

    /// The size `--budget` counts for the standardised copy is the copy's.
    #[test]
    fn the_standardised_copy_is_the_size_announced() {
        fn check<T: Real>() {
            let text = "1 1:0.5 3:2\n-1 2:1\n1 5:3\n";
            let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 1024);
            let data: Dataset<T> = Dataset::read(&mut reader, OnError::Stop, &mut BadRows::new()).unwrap();
            let (copy, _) = data.standardized().unwrap();
            assert_eq!(data.standardized_bytes(), copy.bytes());
            assert!(copy.bytes() > data.bytes(), "the copy is dense: {} against {}", copy.bytes(), data.bytes());
        }
        check::<f64>();
        check::<f32>();
    }

    #[test]
    fn a_value_the_scalar_cannot_hold_is_a_bad_row() {
        let text = "1 1:2\n-1 1:-1e39\n1 1:1e38\n";
        let mut bad = BadRows::new();
        let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 1024);
        let data = Dataset::<f32>::read(&mut reader, OnError::Skip, &mut bad).unwrap();
        let told: Vec<String> = bad.first().iter().map(ToString::to_string).collect();
        assert_eq!((data.len(), told), (2, vec!["d.svm:2:1: `-1e39` is too large for f32".to_string()]));
        let mut reader = LibSvmReader::new(text.as_bytes(), "d.svm", 1024);
        assert_eq!(Dataset::<f64>::read(&mut reader, OnError::Stop, &mut BadRows::new()).unwrap().len(), 3);
        // A value that is not finite at all (from an array: a reader refuses it) is said so.
        let mut data = Dataset::<f64>::new();
        for (value, said) in [(f64::NAN, "`NaN` is not finite"), (f64::NEG_INFINITY, "`-inf` is not finite")] {
            let record = Record { indices: vec![0], values: vec![value], label: 1.0, ..Record::default() };
            assert_eq!(data.push(&record).unwrap_err().to_string(), said);
        }
        assert!(data.is_empty());
    }

    /// Bad rows cost no memory beyond the first few: a file of 10⁵ of them, read whole or
    /// in parts, keeps the first `KEPT` (their lines, in order) and counts them all.
    #[test]
    fn bad_rows_are_counted_and_only_the_first_kept() {
        let dir = std::env::temp_dir().join(format!("kestrel-bad-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!("1 1:1\n{}-1 1:2\n", "x\n".repeat(100_000));
        let path = dir.join("bad.svm");
        std::fs::write(&path, &text).unwrap();
        let first_lines: Vec<u64> = (2..2 + BadRows::KEPT as u64).collect();
        for parts in [1, 2, 7] {
            let readers = crate::source::split::libsvm_parts(&path, path.to_str().unwrap(), 4096, parts).unwrap();
            let mut bad = BadRows::new();
            let data = Dataset::<f64>::read_parts(readers, OnError::Skip, &mut bad).unwrap();
            let lines: Vec<u64> = bad.first().iter().map(|e| e.line).collect();
            assert_eq!((data.len(), bad.count(), lines), (2, 100_000, first_lines.clone()), "{parts} parts");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
