//! A tiny reader of LibSVM/SVMlight files (`label index:value ...`, 1-based indices) for
//! tests and examples. Not the product's parser (that lives in `kestrel-stream`): it
//! reads whole files into memory and reports a bad line by number, nothing more.

use std::path::{Path, PathBuf};

use kestrel_core::Real;
use kestrel_core::dcd::{DenseRows, SparseRows};

/// A LibSVM file in compressed-sparse-row form, values kept in `f64`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LibSvm {
    /// Largest feature index seen (features are 0-based `0..dim` after reading).
    pub dim: usize,
    /// One integer label per row.
    pub labels: Vec<i32>,
    /// Row `i` is `indices[offsets[i]..offsets[i + 1]]`.
    pub offsets: Vec<usize>,
    /// 0-based feature indices.
    pub indices: Vec<u32>,
    /// The matching values.
    pub values: Vec<f64>,
}

impl LibSvm {
    /// Parses LibSVM text; `Err` names the first bad line (1-based).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut data = LibSvm { offsets: vec![0], ..LibSvm::default() };
        for (number, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                data.push_line(line).map_err(|reason| format!("line {}: {reason}", number + 1))?;
            }
        }
        Ok(data)
    }

    /// Reads and parses a file.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// `true` without rows.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The values converted to `T`, to borrow in [`SparseRows`].
    pub fn values_as<T: Real>(&self) -> Vec<T> {
        self.values.iter().map(|&v| T::from_f64(v)).collect()
    }

    /// A sparse view of `dim ≥ self.dim` features over `values` (from [`values_as`](Self::values_as)).
    pub fn sparse_rows<'a, T: Real>(&'a self, values: &'a [T], dim: usize) -> SparseRows<'a, T> {
        SparseRows::new(dim, &self.offsets, &self.indices, values).expect("a well-formed file")
    }

    /// The rows as a dense row-major `len × dim` matrix.
    pub fn dense<T: Real>(&self, dim: usize) -> Vec<T> {
        let mut dense = vec![T::ZERO; self.len() * dim];
        for i in 0..self.len() {
            for k in self.offsets[i]..self.offsets[i + 1] {
                dense[i * dim + self.indices[k] as usize] = T::from_f64(self.values[k]);
            }
        }
        dense
    }

    /// The same rows without the features at index `dim` and beyond.
    pub fn truncated(&self, dim: usize) -> LibSvm {
        let mut kept =
            LibSvm { dim: self.dim.min(dim), labels: self.labels.clone(), offsets: vec![0], ..LibSvm::default() };
        for i in 0..self.len() {
            for k in self.offsets[i]..self.offsets[i + 1] {
                if (self.indices[k] as usize) < dim {
                    kept.indices.push(self.indices[k]);
                    kept.values.push(self.values[k]);
                }
            }
            kept.offsets.push(kept.indices.len());
        }
        kept
    }

    /// A dense view over `dense` (from [`dense`](Self::dense)).
    pub fn dense_rows<T: Real>(dense: &[T], dim: usize) -> DenseRows<'_, T> {
        DenseRows::new(dense, dim).expect("a whole number of rows")
    }

    fn push_line(&mut self, line: &str) -> Result<(), String> {
        let mut fields = line.split_whitespace();
        let label = fields.next().ok_or("no label")?;
        let label: f64 = label.parse().map_err(|_| format!("bad label `{label}`"))?;
        if label.fract() != 0.0 || label.abs() > f64::from(i32::MAX) {
            return Err(format!("label {label} is not an integer"));
        }
        for field in fields {
            let (index, value) = field.split_once(':').ok_or(format!("bad pair `{field}`"))?;
            let index: u32 = index.parse().map_err(|_| format!("bad index `{index}`"))?;
            let value: f64 = value.parse().map_err(|_| format!("bad value `{value}`"))?;
            if index == 0 {
                return Err("indices start at 1".into());
            }
            self.dim = self.dim.max(index as usize);
            self.indices.push(index - 1);
            self.values.push(value);
        }
        self.labels.push(label as i32);
        self.offsets.push(self.indices.len());
        Ok(())
    }
}

/// `../shared/data/<name>/<file>` seen from this crate.
pub fn shared_data(name: &str, file: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/data")).join(name).join(file)
}

/// The standardised train and test splits of a shared dataset.
pub fn train_test(name: &str) -> Result<(LibSvm, LibSvm), String> {
    let train = LibSvm::read(&shared_data(name, "train.libsvm"))?;
    let test = LibSvm::read(&shared_data(name, "test.libsvm"))?;
    Ok((train, test))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_and_reports_bad_lines() {
        let data = LibSvm::parse("+1 1:0.5 3:-2\n\n-1 2:1e-3 # comment\n").unwrap();
        assert_eq!(data.labels, vec![1, -1]);
        assert_eq!((data.dim, data.offsets.clone()), (3, vec![0, 2, 3]));
        assert_eq!(data.indices, vec![0, 2, 1]);
        assert_eq!(data.dense::<f64>(3), vec![0.5, 0.0, -2.0, 0.0, 1e-3, 0.0]);
        let narrow = data.truncated(2);
        assert_eq!((narrow.indices, narrow.offsets), (vec![0, 1], vec![0, 1, 2]));
        assert_eq!(LibSvm::parse("1 0:1").unwrap_err(), "line 1: indices start at 1");
        assert!(LibSvm::parse("1 1:1\n0.5 1:1").unwrap_err().starts_with("line 2"));
        assert!(LibSvm::parse("1 1-1").is_err());
    }
}
