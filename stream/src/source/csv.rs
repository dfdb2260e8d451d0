//! CSV rows with a header: one column is the label or target (the last by default, or the
//! one named by `--label-column`), every other column a feature. Serial streams have no
//! header: there the label is the last field.
//!
//! Fields are separated by commas, or by the tab or semicolon the header is written with
//! when it holds no comma ([`delimiter_of`]): tab-separated files read as they are, and so
//! do spreadsheets saved where the comma is the decimal mark — separated by semicolons,
//! where a number may have a decimal comma, `21,5` ([`number`]). Elsewhere a comma in a
//! number is an error (in a tab-separated file `1,500` could as well be fifteen hundred).
//!
//! The label column holds numbers or class names throughout: names when its first row's
//! value is not a number (or when the reader is told so, for a model of named classes).
//! A name is left in [`Record::class_name`] for [`crate::class_names`] to give it its
//! label.
//!
//! A first column without a name holds row names ([`is_row_names`]: pandas' index, R's
//! row names) and is left out, unless it is the label or the only feature; a last column
//! without a name is what a delimiter ending every line makes, and is left out too.
//!
//! Parsing is the `csv` crate's; line numbers are counted here, because the crate's own
//! count skips blank lines. A row quoted across several lines is reported at its last.
//! Lines longer than the reader's limit are bad rows; a header of more than
//! [`MAX_DIM`] features is refused. A name the header repeats becomes `name.1`, `name.2`,
//! … as in pandas ([`distinct_names`]), so that each column has a name of its own.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::path::Path;

use super::lines::{self, BoundedLines};
use super::one_hot::{self, Categorical, OneHot};
use super::record::{ReadError, ReadErrorKind, Record};
use super::{RecordReader, parse_finite};
use crate::limits::MAX_DIM;

/// The label column's name that means "no label column" (unless a column has that name):
/// every column is a feature and every row's label `NaN` — unlabelled rows for the novelty
/// detector, or for `predict`.
pub const NO_LABEL: &str = "none";

/// Reads CSV rows one at a time (constant memory: one line of at most `max_line_bytes`).
pub struct CsvReader<R> {
    reader: csv::Reader<LineCounter<BoundedLines<R>>>,
    max_line_bytes: usize,
    name: String,
    /// The row read, in the first header's column order.
    row: csv::StringRecord,
    /// Where a later header put the columns in another order (files of two column orders
    /// joined), the column of the row as read that each of the first header's is, in order;
    /// empty while the rows are in the first header's order.
    arrangement: Vec<usize>,
    /// The row as read, when `arranged`: the arrangement put it in order into `row`.
    as_read: csv::StringRecord,
    arranged: bool,
    fields: usize,
    /// The header's column names (empty for header-less rows), named in errors.
    header: csv::StringRecord,
    /// Which columns are left out (`--skip-column`, the row names), by position: neither
    /// read nor checked (empty when none is).
    skipped: Vec<bool>,
    /// The first column holds row names ([`is_row_names`]) and is left out.
    row_names: bool,
    /// The last column has no name, as when every line ends in a delimiter, and is left
    /// out (the label is the column before it, unless another was named).
    trailing: bool,
    /// A row whose label is missing is read with the label `NaN`, not as a bad row.
    unlabelled_rows: bool,
    /// The label's column; `None` for rows without labels (each read as `NaN`).
    label_field: Option<usize>,
    /// The column of the rows' weights (`--weight-column`), which is not a feature.
    weight_field: Option<usize>,
    labels: LabelColumn,
    /// The label column's kind was told by its first value.
    detected: bool,
    /// Numbers may have a decimal comma: the fields are separated by semicolons.
    decimal_comma: bool,
    /// The feature each field is, when the features are read in another order than the
    /// columns' ([`CsvReader::order_features_as`]); empty otherwise.
    feature_of_field: Vec<Option<u32>>,
    /// One row's features in that order, before its nonzero ones go into the record.
    reordered: Vec<f64>,
    /// The columns of categories, one-hot encoded ([`one_hot`]).
    one_hot: OneHot,
    /// The columns whose values each record keeps as text ([`CsvReader::keeping`]), in
    /// the order given.
    kept: Vec<usize>,
}

/// What a CSV label column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LabelColumn {
    /// Told by its first value: names when it is not a number.
    #[default]
    Detect,
    /// Numbers (a regression target, the classes of a model without names).
    Numbers,
    /// Class names, whatever they look like (the rows of a model of named classes).
    Names,
    /// Not read: every label `NaN`, whatever its field holds (rows to predict, whose
    /// targets may be missing or of another kind).
    Ignored,
}

impl<R: BufRead> CsvReader<R> {
    /// A reader whose first line is a header; `label_column` names the label column
    /// (default: the last); lines up to `max_line_bytes` long.
    ///
    /// # Errors
    /// `Header` when the header cannot be read, is too long, lacks the named column or
    /// names more than [`MAX_DIM`] features.
    pub fn with_header(
        mut input: R,
        name: impl Into<String>,
        label_column: Option<&str>,
        max_line_bytes: usize,
    ) -> Result<Self, ReadError> {
        let name = name.into();
        let at_header = |kind| ReadError { source_name: name.clone(), line: 1, column: 1, kind };
        let header_error = |message: String| at_header(ReadErrorKind::Header(message));
        let start = input.fill_buf().map_err(|e| header_error(format!("cannot read the header: {e}")))?;
        let mut builder = builder(true);
        let delimiter = delimiter_of(start);
        builder.delimiter(delimiter);
        let mut reader = builder.from_reader(LineCounter::new(BoundedLines::new(input, max_line_bytes)));
        let header = reader.headers().map_err(|e| match e.kind() {
            csv::ErrorKind::Utf8 { .. } => at_header(ReadErrorKind::NotUtf8),
            _ => header_error(format!("cannot read the header: {e}")),
        })?;
        let header = header.clone();
        if header.len() == 1 && header.get(0).is_some_and(lines::is_too_long) {
            return Err(header_error(format!("the header is longer than the limit of {max_line_bytes} bytes")));
        }
        if header.len() > MAX_DIM + 1 {
            return Err(header_error(format!("the header names more than {MAX_DIM} features")));
        }
        // A header ending in a delimiter (as every line then does): its last column has no
        // name, and no value. Left out only beside a label and a feature.
        let trailing = header.len() >= 3 && header.get(header.len() - 1) == Some("") && label_column != Some("");
        let header = distinct_names(&header);
        if header.is_empty() {
            return Err(header_error("the input is empty: no header, no rows".into()));
        }
        if let Some(counts) = count_line(&header, &name) {
            return Err(header_error(counts));
        }
        let label_field = match label_column {
            None => Some(header.len().saturating_sub(1 + usize::from(trailing))),
            Some(wanted) => match header.iter().position(|h| h == wanted) {
                Some(at) => Some(at),
                None if wanted == NO_LABEL => None,
                None => {
                    return Err(header_error(format!(
                        "no column named `{wanted}` in the header ({})",
                        columns_for(&header, wanted)
                    )));
                }
            },
        };
        if header.len() < 1 + usize::from(label_field.is_some()) {
            let spaced = header.get(0).filter(|line| line.split_ascii_whitespace().nth(1).is_some());
            return Err(header_error(match spaced {
                Some(line) => format!(
                    "the first line's fields are separated by spaces ({}): a CSV's are separated by commas, tabs or \
                     semicolons, under a header of column names (sed -E 's/^ +//; s/ +/,/g' FILE > FILE.csv \
                     separates them so; add a header line if the first is data)",
                    listed(line.split_ascii_whitespace(), line.split_ascii_whitespace().count())
                ),
                None => "the header needs a label column and at least one feature (fields separated by commas, tabs \
                         or semicolons)"
                    .into(),
            }));
        }
        let row = csv::StringRecord::new();
        let labels = LabelColumn::Detect;
        let fields = header.len();
        let (row_names, skipped) = left_out(&header, label_field, trailing);
        Ok(CsvReader {
            reader,
            max_line_bytes,
            name,
            row,
            arrangement: Vec::new(),
            as_read: csv::StringRecord::new(),
            arranged: false,
            fields,
            header,
            skipped,
            row_names,
            trailing,
            unlabelled_rows: false,
            label_field,
            weight_field: None,
            labels,
            detected: false,
            decimal_comma: delimiter == SEMICOLON,
            feature_of_field: Vec::new(),
            reordered: Vec::new(),
            one_hot: OneHot::default(),
            kept: Vec::new(),
        })
    }

    /// The reader of rows for a model whose features are `features`, read by name: when its
    /// last column (the label, unless another was named) is one of them, it is that feature
    /// and the rows have no label (`kestrel predict` of rows as the model learned them,
    /// without their target).
    pub fn unlabelled_if_a_feature(mut self, features: &[String]) -> Self {
        let last = self.fields.checked_sub(1 + usize::from(self.trailing));
        let named = |at: usize| self.header.get(at).is_some_and(|name| features.iter().any(|f| f == name));
        if self.label_field == last && last.is_some_and(named) {
            self.label_field = None;
            (self.row_names, self.skipped) = left_out(&self.header, None, self.trailing);
        }
        self
    }

    /// The reader leaving out the columns named `columns` (a timestamp, an identifier):
    /// they are neither read nor checked, and the features are the other columns.
    ///
    /// # Errors
    /// `Header` naming a column the header does not have, the label column, or a header
    /// with no feature column left.
    pub fn skipping(mut self, columns: &[String]) -> Result<Self, ReadError> {
        for wanted in columns {
            let at = self.column_at(wanted, "to skip")?;
            if Some(at) == self.label_field {
                return Err(self.header_error(format!("`{wanted}` is the label column: it cannot be skipped")));
            }
            self.set_skipped(at, true);
        }
        if self.dim() == 0 {
            let label = self.label_field.and_then(|at| self.header.get(at));
            let label = label.map(|label| format!(" (the label's is `{label}`)")).unwrap_or_default();
            let message = format!("no feature column is left once the skipped ones are{label}");
            return Err(self.header_error(message));
        }
        Ok(self)
    }

    /// The reader keeping the values of the columns named `columns`, in that order, as
    /// each record's [`Record::kept`] (`kestrel predict --keep-column`: an identifier or a
    /// time stamp written beside each prediction). A kept column is not a feature, unless
    /// a model's features name it ([`CsvReader::order_features_as`]); the label's column
    /// may be kept too.
    ///
    /// # Errors
    /// A header error naming a column the header does not have.
    pub fn keeping(mut self, columns: &[String]) -> Result<Self, ReadError> {
        for wanted in columns {
            let at = self.column_at(wanted, "to keep")?;
            self.kept.push(at);
            if Some(at) != self.label_field && Some(at) != self.weight_field {
                self.set_skipped(at, true);
            }
        }
        Ok(self)
    }

    /// Marks column `at` left out (`skipped`) or read.
    fn set_skipped(&mut self, at: usize, skipped: bool) {
        self.skipped.resize(self.fields, false);
        if let Some(skip) = self.skipped.get_mut(at) {
            *skip = skipped;
        }
    }

    /// The reader taking each row's weight from the column named `column` (when given),
    /// which is then not a feature.
    ///
    /// # Errors
    /// A header error when no column has the name, or it is the label's.
    pub fn weighing(mut self, column: Option<&str>) -> Result<Self, ReadError> {
        let Some(wanted) = column else { return Ok(self) };
        let at = self.column_at(wanted, "for the row weights")?;
        if Some(at) == self.label_field {
            return Err(self.header_error(format!("`{wanted}` is the label column: it cannot weigh the rows")));
        }
        self.skipped.resize(self.fields, false);
        if let Some(skip) = self.skipped.get_mut(at) {
            *skip = true;
        }
        self.weight_field = Some(at);
        if self.dim() == 0 {
            return Err(self.header_error("no feature column is left beside the label and the weights".into()));
        }
        Ok(self)
    }

    /// The reader taking the columns `columns` as categories, one-hot encoded
    /// ([`one_hot`]): after the numeric features, the categories given, then each new one
    /// of a column not given its own.
    ///
    /// # Errors
    /// A header error when no column has one of the names, or it is the label's, a
    /// skipped column or the weights', or the categories given make more than
    /// [`MAX_DIM`] features.
    pub fn categorical(mut self, columns: &[Categorical]) -> Result<Self, ReadError> {
        let mut fields: Vec<(usize, Categorical)> = Vec::new();
        for categorical in columns {
            let wanted = &categorical.column;
            let at = self.column_at(wanted, "for --categorical")?;
            if Some(at) == self.label_field {
                let hint = "class names are read as they are";
                return Err(self.header_error(format!("`{wanted}` is the label column, not a feature: {hint}")));
            }
            if self.skipped.get(at) == Some(&true) {
                let what = if Some(at) == self.weight_field { "the weights'" } else { "skipped" };
                return Err(self.header_error(format!("`{wanted}` is {what}: it cannot be a feature too")));
            }
            if !fields.iter().any(|&(field, _)| field == at) {
                fields.push((at, categorical.clone()));
            }
        }
        fields.sort_unstable_by_key(|&(field, _)| field);
        let numeric = self.feature_fields().count() - fields.len();
        let given: usize = fields.iter().filter_map(|(_, c)| c.categories.as_ref()).map(Vec::len).sum();
        if numeric + given > MAX_DIM {
            return Err(self.header_error(format!("the categories given make more than {MAX_DIM} features")));
        }
        self.one_hot = OneHot::growing(self.fields, &fields, u32::try_from(numeric).unwrap_or(u32::MAX));
        Ok(self)
    }

    /// The field of the header's column `wanted`, which a flag names `purpose` ("to skip").
    ///
    /// # Errors
    /// A header error listing the columns when none has the name.
    fn column_at(&self, wanted: &str, purpose: &str) -> Result<usize, ReadError> {
        self.header.iter().position(|h| h == wanted).ok_or_else(|| {
            let columns = columns_for(&self.header, wanted);
            self.header_error(format!("no column named `{wanted}` {purpose} in the header ({columns})"))
        })
    }

    /// The fields that are features (neither the label nor skipped), in column order.
    fn feature_fields(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.fields).filter(|&i| Some(i) != self.label_field && self.skipped.get(i) != Some(&true))
    }

    /// The feature fields that hold numbers (not categories), in column order.
    fn numeric_fields(&self) -> impl Iterator<Item = usize> + '_ {
        self.feature_fields().filter(|&i| !self.one_hot.is_categorical(i))
    }

    /// The reader giving the features in the order `names` lists them (a model's, as the
    /// header of its training rows named them), each read from the column of its name; a
    /// column that is not one of them but holds the categories of some (`column=category`,
    /// [`one_hot`]) is read as categories. Nothing changes when the header lists them in
    /// that order already.
    ///
    /// # Errors
    /// `Header` naming a feature the header has no column for, a feature column that is
    /// not one of `names` (to be left out with `--skip-column`), or a feature two columns
    /// could hold.
    #[allow(
        clippy::indexing_slicing,
        reason = "i < fields (feature_fields), j < names.len() (the map's values and categories_of's features), missing < names.len() (a position in found)"
    )]
    pub fn order_features_as(&mut self, names: &[String]) -> Result<(), ReadError> {
        let named = |header: &csv::StringRecord, at| names.iter().any(|name| Some(name.as_str()) == header.get(at));
        if self.row_names && named(&self.header, 0) {
            // A model that took the row names for a feature reads them as one.
            self.row_names = false;
            self.set_skipped(0, false);
        }
        // So is a kept column the model names.
        for at in self.kept.clone() {
            if named(&self.header, at) {
                self.set_skipped(at, false);
            }
        }
        // By hash: a header and a model of 10⁵ features each are matched in linear time.
        let mut feature_of = std::collections::HashMap::with_capacity(names.len());
        for (j, name) in (0u32..).zip(names) {
            feature_of.entry(name.as_str()).or_insert(j);
        }
        let named = |i: usize| self.header.get(i).unwrap_or_default();
        let mut feature_of_field = vec![None; self.fields];
        let mut found = vec![false; names.len()];
        let mut unnamed = Vec::new();
        for i in self.feature_fields() {
            match feature_of.get(named(i)) {
                Some(&j) => {
                    feature_of_field[i] = Some(j);
                    found[j as usize] = true;
                }
                None => unnamed.push(i),
            }
        }
        let mut categories = one_hot::categories_of(names, unnamed.iter().map(|&i| named(i)));
        let mut categorical = Vec::new();
        for i in unnamed {
            let Some(features) = categories.remove(named(i)) else {
                return Err(self.unknown_column(named(i), names));
            };
            if let Some(&(_, j)) = features.iter().find(|&&(_, j)| std::mem::replace(&mut found[j as usize], true)) {
                let message = format!("the model's feature `{}` could be read from two columns", names[j as usize]);
                return Err(self.header_error(message));
            }
            categorical.push((i, named(i).to_string(), features));
        }
        if let Some(missing) = found.iter().position(|&found| !found) {
            let label = self.label_field.and_then(|i| self.header.get(i));
            let name = names[missing].as_str();
            let hint = match (label == Some(name), name.split_once(one_hot::SEPARATOR)) {
                (true, _) => {
                    "; it is read as the label here: if the rows have no label column, --label-column none".into()
                }
                (false, Some((column, _))) => format!("; or a column `{column}` of categories, one of them"),
                (false, None) => String::new(),
            };
            let columns = columns_for(&self.header, name);
            let message = format!("no column named `{name}`, a feature of the model ({columns}){hint}");
            return Err(self.header_error(message));
        }
        let in_order = categorical.is_empty()
            && self.feature_fields().enumerate().all(|(j, i)| feature_of_field[i] == u32::try_from(j).ok());
        if !in_order {
            (self.feature_of_field, self.reordered) = (feature_of_field, vec![0.0; names.len()]);
            self.one_hot = OneHot::fixed(self.fields, categorical);
        }
        Ok(())
    }

    /// The error for a feature column `name` that is not one of the model's `names`.
    fn unknown_column(&self, name: &str, names: &[String]) -> ReadError {
        // The label column taken for one of the model's features: this one is the label.
        let label = self.label_field.and_then(|i| self.header.get(i));
        let absent = |meant: &&str| self.header.iter().all(|column| column != *meant);
        let meant: Vec<&str> = nearest(names.iter().map(String::as_str), name).into_iter().filter(absent).collect();
        let hint = match (label.is_some_and(|label| names.iter().any(|n| n == label)), meant.as_slice()) {
            (true, _) => format!("if it is the label column: --label-column {}", crate::shell::word(name)),
            (false, []) => format!("leave it out with --skip-column {}", crate::shell::word(name)),
            (false, meant) => format!("if it is the model's {}, named otherwise here, rename it", either(meant)),
        };
        self.header_error(format!("column `{name}` is not one of the model's features ({}): {hint}", name_list(names)))
    }

    fn header_error(&self, message: String) -> ReadError {
        self.error(1, 1, ReadErrorKind::Header(message))
    }

    /// The numeric features of a row: its fields but the label, the skipped columns and
    /// those of categories.
    fn dim(&self) -> usize {
        let skipped = self.skipped.iter().filter(|&&skip| skip).count();
        self.fields - usize::from(self.label_field.is_some()) - skipped - self.one_hot.columns()
    }

    /// The reader taking its labels as `labels` says (by default it detects them).
    #[must_use]
    pub fn with_labels(mut self, labels: LabelColumn) -> Self {
        self.labels = labels;
        self
    }

    /// The reader giving a row whose label is missing (an empty field, or a word of
    /// [`MISSING_MARKERS`] in a column of numbers) with the label `NaN`, rather than as a
    /// bad row: `kestrel stream` predicts such a row and learns nothing from it.
    #[must_use]
    pub fn with_unlabelled_rows(mut self, unlabelled_rows: bool) -> Self {
        self.unlabelled_rows = unlabelled_rows;
        self
    }

    /// A reader of header-less rows of `fields` fields (at least 2) separated by `delimiter`,
    /// the label last (serial streams); lines up to `max_line_bytes` long. The caller takes
    /// the delimiter from the first row ([`row_delimiter`]): a semicolon, else a comma, else
    /// a tab (a microcontroller printing its readings with tabs between them).
    pub fn without_header(
        input: R,
        name: impl Into<String>,
        fields: usize,
        delimiter: u8,
        max_line_bytes: usize,
    ) -> Self {
        let mut builder = builder(false);
        builder.delimiter(delimiter);
        let reader = builder.from_reader(LineCounter::new(BoundedLines::new(input, max_line_bytes)));
        let (row, fields) = (csv::StringRecord::new(), fields.clamp(2, MAX_DIM + 1));
        let labels = LabelColumn::Detect;
        CsvReader {
            reader,
            max_line_bytes,
            name: name.into(),
            row,
            arrangement: Vec::new(),
            as_read: csv::StringRecord::new(),
            arranged: false,
            fields,
            header: csv::StringRecord::new(),
            skipped: Vec::new(),
            row_names: false,
            trailing: false,
            unlabelled_rows: false,
            label_field: Some(fields - 1),
            weight_field: None,
            labels,
            detected: false,
            decimal_comma: delimiter == SEMICOLON,
            feature_of_field: Vec::new(),
            reordered: Vec::new(),
            one_hot: OneHot::default(),
            kept: Vec::new(),
        }
    }

    /// Rows of `dim` features and no label column (each label read as `NaN`), for a
    /// stream that carries none.
    #[must_use]
    pub fn without_labels(mut self, dim: usize) -> Self {
        (self.fields, self.label_field) = (dim.clamp(1, MAX_DIM), None);
        self
    }

    /// Puts the row just read in the first header's column order, when a later header
    /// gave another ([`CsvReader::repeated_header`]); a row of another length stays as it
    /// is (a bad row).
    fn arrange(&mut self) {
        self.arranged = !self.arrangement.is_empty() && self.row.len() == self.arrangement.len();
        if self.arranged {
            std::mem::swap(&mut self.row, &mut self.as_read);
            self.row.clear();
            for &at in &self.arrangement {
                self.row.push_field(self.as_read.get(at).unwrap_or_default());
            }
        }
    }

    /// `error` of the current row, or [`ReadErrorKind::RepeatedHeader`] when the row is the
    /// header's names again, [`ReadErrorKind::ReorderedHeader`] when it is them in another
    /// order (looked at only for a row in error): the rows after a header are read in its
    /// order, each column by its name.
    fn repeated_header(&mut self, error: ReadError) -> ReadError {
        let as_read = if self.arranged { &self.as_read } else { &self.row };
        if self.header.is_empty() || as_read.len() != self.header.len() {
            return error;
        }
        let names = distinct_names(&trimmed(as_read));
        if names == self.header {
            let header = listed(self.header.iter(), self.header.len());
            self.arrangement.clear();
            return ReadError { column: 1, kind: ReadErrorKind::RepeatedHeader(header), ..error };
        }
        let Some(arrangement) = arrangement(&self.header, &names) else {
            return error;
        };
        let header = listed(names.iter(), names.len());
        self.arrangement = arrangement;
        ReadError { column: 1, kind: ReadErrorKind::ReorderedHeader(header), ..error }
    }

    fn error(&self, line: u64, column: usize, kind: ReadErrorKind) -> ReadError {
        ReadError { source_name: self.name.clone(), line, column, kind }
    }

    /// Fills `record` from the current row, which starts on `line`.
    fn convert(&mut self, line: u64, record: &mut Record) -> Result<(), ReadError> {
        if self.row.len() == 1 && self.row.get(0).is_some_and(lines::is_too_long) {
            return Err(self.error(line, 1, ReadErrorKind::LineTooLong(self.max_line_bytes)));
        }
        if self.row.len() != self.fields {
            let kind = ReadErrorKind::FieldCount { expected: self.fields, got: self.row.len() };
            return Err(self.error(line, 1, kind));
        }
        record.clear(line);
        for &at in &self.kept {
            record.kept.push_str(&csv_field(self.row.get(at).unwrap_or_default()));
            record.kept.push(',');
        }
        if self.label_field.is_none() {
            record.label = f64::NAN;
        }
        // Rows without columns of categories (the stream's common case) skip their step.
        let categorical = self.one_hot.columns() > 0;
        if categorical {
            self.one_hot.start_row();
        }
        let mut feature = 0u32;
        for (i, field) in self.row.iter().enumerate() {
            let at = |kind| {
                // The field's column (1-based, in characters), counted only for an error.
                let column = self.row.iter().take(i).map(|f| f.chars().count() + 1).sum::<usize>() + 1;
                ReadError { source_name: self.name.clone(), line, column, kind }
            };
            if Some(i) == self.label_field {
                match read_label((&mut self.labels, &mut self.detected), trim(field), self.decimal_comma, record) {
                    Err(ReadErrorKind::MissingLabel | ReadErrorKind::MissingLabelMarker(_)) if self.unlabelled_rows => {
                        record.label = f64::NAN;
                    }
                    read => read.map_err(|kind| at(in_column(kind, self.header.get(i), true)))?,
                }
            } else if Some(i) == self.weight_field {
                let text = trim(field);
                let weight = feature_value(text, self.decimal_comma).ok().filter(|&w| w >= 0.0 && w.is_finite());
                let column = self.header.get(i).unwrap_or_default().to_string();
                record.weight = Some(weight.ok_or_else(|| at(ReadErrorKind::Weight { text: text.into(), column }))?);
            } else if self.one_hot.is_categorical(i) {
                self.one_hot.read(i, trim(field)).map_err(at)?;
            } else if self.skipped.get(i) != Some(&true) {
                let value = feature_value(trim(field), self.decimal_comma)
                    .map_err(|kind| at(in_column(kind, self.header.get(i), false)))?;
                match self.feature_of_field.get(i) {
                    Some(&Some(j)) => {
                        if let Some(slot) = self.reordered.get_mut(j as usize) {
                            *slot = value;
                        }
                    }
                    _ if value != 0.0 => {
                        record.indices.push(feature);
                        record.values.push(value);
                    }
                    _ => {}
                }
                feature += 1;
            }
        }
        let categories = if categorical { self.one_hot.finish_row() } else { &[] };
        if self.feature_of_field.is_empty() {
            record.indices.extend_from_slice(categories);
            record.values.resize(record.indices.len(), 1.0);
        } else {
            for &j in categories {
                if let Some(slot) = self.reordered.get_mut(j as usize) {
                    *slot = 1.0;
                }
            }
            for (j, &value) in (0u32..).zip(&self.reordered).filter(|&(_, &value)| value != 0.0) {
                record.indices.push(j);
                record.values.push(value);
            }
            // A category's feature is 0 on the next row unless it is set again.
            for &j in categories {
                if let Some(slot) = self.reordered.get_mut(j as usize) {
                    *slot = 0.0;
                }
            }
        }
        Ok(())
    }
}

/// `field` as a CSV field: quoted, its quotes doubled, when it holds a comma, a quote or a
/// line break (RFC 4180); as it is otherwise.
pub fn csv_field(field: &str) -> std::borrow::Cow<'_, str> {
    match field.contains([',', '"', '\n', '\r']) {
        true => format!("\"{}\"", field.replace('"', "\"\"")).into(),
        false => field.into(),
    }
}

/// The fields of `record`, trimmed.
fn trimmed(record: &csv::StringRecord) -> csv::StringRecord {
    record.iter().map(trim).collect()
}

/// For each of `header`'s names, the position of the same name in `names` (another order
/// of them); `None` when `names` are not the header's. `n log n` in the header's width.
fn arrangement(header: &csv::StringRecord, names: &csv::StringRecord) -> Option<Vec<usize>> {
    let (in_header, in_names) = (by_name(header), by_name(names));
    let mut pairs = Vec::with_capacity(header.len());
    for (&(column, name), &(at, other)) in in_header.iter().zip(&in_names) {
        if name != other {
            return None;
        }
        pairs.push((column, at));
    }
    pairs.sort_unstable();
    Some(pairs.into_iter().map(|(_, at)| at).collect())
}

/// `record`'s fields with their positions, sorted by name.
fn by_name(record: &csv::StringRecord) -> Vec<(usize, &str)> {
    let mut named: Vec<(usize, &str)> = record.iter().enumerate().collect();
    named.sort_unstable_by_key(|&(_, name)| name);
    named
}

/// `names` (`count` of them) for a message: the first [`LISTED_COLUMNS`], and how many in
/// all when there are more.
fn listed<'a>(names: impl Iterator<Item = &'a str>, count: usize) -> String {
    let listed: Vec<String> = names.take(LISTED_COLUMNS).map(|name| format!("`{name}`")).collect();
    match count {
        n if n > LISTED_COLUMNS => format!("{}, … ({n} in all)", listed.join(", ")),
        _ => listed.join(", "),
    }
}

/// A model's feature names for a message ([`listed`]).
fn name_list(names: &[String]) -> String {
    listed(names.iter().map(String::as_str), names.len())
}

/// The header's names, each column's its own: a name met again becomes `name.k`, `k` the
/// smallest from 1 that names no other column, as pandas' `read_csv` renames them. Without
/// it, features read by name ([`CsvReader::order_features_as`]) could not tell two
/// columns of one name apart. Linear in the header: a name's next `k` is remembered.
fn distinct_names(header: &csv::StringRecord) -> csv::StringRecord {
    use std::collections::{HashMap, HashSet};
    let mut taken: HashSet<String> = header.iter().map(str::to_string).collect();
    if taken.len() == header.len() {
        return header.clone();
    }
    let (mut first, mut next_k) = (HashSet::new(), HashMap::new());
    let mut names = csv::StringRecord::with_capacity(header.as_slice().len(), header.len());
    for name in header {
        if first.insert(name) {
            names.push_field(name);
            continue;
        }
        let k = next_k.entry(name).or_insert(1u64);
        let mut renamed = format!("{name}.{k}");
        while taken.contains(&renamed) {
            *k += 1;
            renamed = format!("{name}.{k}");
        }
        *k += 1;
        names.push_field(&renamed);
        taken.insert(renamed);
    }
    names
}

/// The names of `header`'s columns for a message ([`listed`]).
fn column_list(header: &csv::StringRecord) -> String {
    format!("its columns: {}", listed(header.iter(), header.len()))
}

/// [`column_list`] for an error on `wanted`, which no column is named, with the column it
/// may have meant ([`nearest`]), or for a number the column at that position.
fn columns_for(header: &csv::StringRecord, wanted: &str) -> String {
    let position = wanted.parse::<usize>().ok().and_then(|n| Some((n, header.get(n.checked_sub(1)?)?)));
    let hint = match (nearest(header.iter(), wanted).as_slice(), position) {
        ([], Some((n, name))) => format!("; columns are given by name: column {n}, counting from 1, is `{name}`"),
        ([], None) => String::new(),
        (meant, _) => format!("; did you mean {}?", either(meant)),
    };
    format!("{}{hint}", column_list(header))
}

/// The ones of `names` that `wanted` may have meant: the same name in another case or with
/// other spaces, else the nearest in spelling (Jaro-Winkler similarity of 0.8 or more, as
/// clap suggests flags) — every name as near as the nearest, as `region-centroid` is to
/// `region-centroid-col` and `region-centroid-row`; none when none is near.
fn nearest<'a>(names: impl Iterator<Item = &'a str> + Clone, wanted: &str) -> Vec<&'a str> {
    let folded = |name: &str| name.trim().to_lowercase();
    let wanted_folded = folded(wanted);
    if let Some(same) = names.clone().find(|name| folded(name) == wanted_folded) {
        return vec![same];
    }
    let scored: Vec<(f64, &str)> =
        names.map(|name| (strsim::jaro_winkler(&folded(name), &wanted_folded), name)).collect();
    let best = scored.iter().map(|&(score, _)| score).fold(0.8, f64::max);
    scored.into_iter().filter(|&(score, _)| score >= best).map(|(_, name)| name).take(MEANT).collect()
}

/// Names a suggestion offers at most.
const MEANT: usize = 3;

/// `names` as a choice: `` `a` ``, `` `a` or `b` ``, `` `a`, `b` or `c` ``.
fn either(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Column names a message lists at most.
const LISTED_COLUMNS: usize = 12;

/// The words that mark a missing value in a feature's field, or in a label column of
/// numbers: those pandas' `read_csv` takes for one by default, and `?`, the UCI
/// repository's. A row with one is a bad row that says so (a word a feature cannot hold
/// otherwise; `nan` would be a value that is not finite).
pub const MISSING_MARKERS: [&str; 19] = [
    "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL",
    "NaN", "None", "n/a", "nan", "null", "?",
];

/// A field's error naming its column (`name`, from the header) when it is a value that is
/// not a number: the label's, or a feature's — missing when the field is empty or holds a
/// word of [`MISSING_MARKERS`], a decimal comma outside a file separated by semicolons,
/// else one that `--skip-column` can leave out.
pub(crate) fn in_column(kind: ReadErrorKind, name: Option<&str>, label: bool) -> ReadErrorKind {
    match (kind, name) {
        (ReadErrorKind::NonFinite(text), Some(column)) if !label && MISSING_MARKERS.contains(&text.as_str()) => {
            ReadErrorKind::MissingMarker { text, column: column.to_string() }
        }
        (ReadErrorKind::NotANumber(text), Some(column)) => {
            let column = column.to_string();
            if label {
                ReadErrorKind::LabelNotANumber { text, column }
            } else if text.is_empty() {
                ReadErrorKind::MissingValue { column }
            } else if MISSING_MARKERS.contains(&text.as_str()) {
                ReadErrorKind::MissingMarker { text, column }
            } else if number(&text, true).is_ok() {
                ReadErrorKind::DecimalComma { text, column }
            } else if let Some(what) = number_formatting(&text) {
                ReadErrorKind::FormattedNumber { text, column, what }
            } else if is_date_or_time(&text) {
                ReadErrorKind::DateOrTime { text, column }
            } else {
                ReadErrorKind::FeatureNotANumber { text, column }
            }
        }
        (kind, _) => kind,
    }
}

/// Whether `text` is a date, a time of day or both, as logs and spreadsheets write them:
/// `2022-03-20`, `2022-03-20T11:00:00+01:00`, `2022-03-20 11:00:05.250Z`, `11:00`,
/// `20/03/2022`, `3/20/2022 11:00`.
fn is_date_or_time(text: &str) -> bool {
    let digits = |part: &str, lengths: std::ops::RangeInclusive<usize>| {
        lengths.contains(&part.len()) && part.bytes().all(|b| b.is_ascii_digit())
    };
    let date = |part: &str| {
        let mut fields = part.split(['-', '/']);
        let (Some(a), Some(b), Some(c), None) = (fields.next(), fields.next(), fields.next(), fields.next()) else {
            return false;
        };
        let year_first = digits(a, 4..=4) && digits(b, 1..=2) && digits(c, 1..=2);
        year_first || (part.contains('/') && digits(a, 1..=2) && digits(b, 1..=2) && digits(c, 2..=4))
    };
    let time = |part: &str| {
        let part = part.trim_end_matches('Z');
        // A zone after the time: `+01:00`, `-0500`.
        let part = part.get(5..).and_then(|rest| rest.find(['+', '-'])).map_or(part, |at| &part[..at + 5]);
        let mut fields = part.split(':');
        let (Some(hours), Some(minutes), seconds, None) = (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return false;
        };
        let whole = |s: &str| digits(s.split_once('.').map_or(s, |(whole, _)| whole), 2..=2);
        digits(hours, 1..=2) && digits(minutes, 2..=2) && seconds.is_none_or(whole)
    };
    match text.split_once(['T', ' ']) {
        Some((day, clock)) => date(day) && time(clock.trim()),
        None => date(text) || time(text),
    }
}

/// What a spreadsheet's formatting wrote beside the digits of `text`, which is not a number
/// as it stands: a currency sign (`$12`, `12 €`), a percent sign (`15%`), or a thousands
/// separator (`1,234.5`, `1.234,5`, `1 234`, `1'234`). `None` for anything else.
pub fn number_formatting(text: &str) -> Option<&'static str> {
    const CURRENCIES: [char; 5] = ['$', '€', '£', '¥', '₹'];
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let a_number = |rest: &str| number(rest.trim(), true).is_ok() || thousands_grouped(rest.trim());
    let currency = unsigned.strip_prefix(CURRENCIES).or_else(|| unsigned.strip_suffix(CURRENCIES));
    if currency.is_some_and(a_number) {
        return Some("a currency sign");
    }
    if unsigned.strip_suffix('%').is_some_and(a_number) {
        return Some("a percent sign");
    }
    thousands_grouped(unsigned).then_some("a thousands separator")
}

/// Whether `text` is digits in groups of three after the first one to three, the groups
/// separated by `,`, `.`, a space (also no-break) or `'`, and then, after the other of `.`
/// and `,`, the decimals.
fn thousands_grouped(text: &str) -> bool {
    let digits = |group: &str| group.bytes().all(|b| b.is_ascii_digit());
    let Some(separator) = text.chars().find(|c| !c.is_ascii_digit()) else { return false };
    if !matches!(separator, ',' | '.' | ' ' | '\'' | '\u{a0}' | '\u{202f}') {
        return false;
    }
    let decimal = if separator == '.' { ',' } else { '.' };
    let (whole, decimals) = text.split_once(decimal).unwrap_or((text, ""));
    let mut groups = whole.split(separator);
    let first = groups.next().is_some_and(|g| (1..=3).contains(&g.len()) && digits(g));
    let (mut later, mut count) = (true, 0);
    for group in groups {
        later &= group.len() == 3 && digits(group);
        count += 1;
    }
    first && later && count > 0 && digits(decimals)
}

/// `field` without its leading and trailing whitespace, as `str::trim` gives it: ASCII
/// whitespace is trimmed byte by byte, and only a field that then still starts or ends
/// with a non-ASCII character or a vertical tab (whitespace to `str::trim`, not to
/// `trim_ascii`) goes through the Unicode-aware trim, several times slower.
fn trim(field: &str) -> &str {
    let ascii = field.trim_ascii();
    let edges = [ascii.as_bytes().first(), ascii.as_bytes().last()];
    let plain = |b: &u8| b.is_ascii() && *b != 0x0B;
    if edges.into_iter().flatten().all(plain) { ascii } else { ascii.trim() }
}

/// A field's number: as [`parse_finite`] reads it, or, when the file allows a
/// `decimal_comma`, with its one comma read as the decimal point (`21,5`; not `1.234,5`,
/// whose point would be a thousands separator).
fn number(field: &str, decimal_comma: bool) -> Result<f64, ReadErrorKind> {
    let read = parse_finite(field);
    if !(decimal_comma && matches!(read, Err(ReadErrorKind::NotANumber(_)))) {
        return read;
    }
    if field.bytes().filter(|&b| b == b',').count() != 1 || field.contains('.') {
        return read;
    }
    // The field with a point for its comma, on the stack: a number is far shorter.
    let mut buffer = [0u8; 64];
    let Some(text) = buffer.get_mut(..field.len()) else { return read };
    for (to, from) in text.iter_mut().zip(field.bytes()) {
        *to = if from == b',' { b'.' } else { from };
    }
    let Ok(with_point) = std::str::from_utf8(text) else { return read };
    parse_finite(with_point).map_err(|kind| match kind {
        ReadErrorKind::NonFinite(_) => ReadErrorKind::NonFinite(field.to_string()),
        _ => ReadErrorKind::NotANumber(field.to_string()),
    })
}

/// A feature's value: a finite number (with a decimal comma when `decimal_comma`), or a
/// truth value as a word — `true` or `false` in any case, as pandas and Python write a
/// column of booleans — read as 1 and 0.
/// (A label column of such words holds two class names.)
pub fn feature_value(field: &str, decimal_comma: bool) -> Result<f64, ReadErrorKind> {
    number(field, decimal_comma).or_else(|kind| match kind {
        ReadErrorKind::NotANumber(_) if field.eq_ignore_ascii_case("true") => Ok(1.0),
        ReadErrorKind::NotANumber(_) if field.eq_ignore_ascii_case("false") => Ok(0.0),
        kind => Err(kind),
    })
}

/// The delimiter of the files whose numbers may have a decimal comma.
const SEMICOLON: u8 = b';';

/// Reads a label field into `record`: a number ([`number`]), or a class name when the
/// column holds names (`labels`, and whether the column's first value `detected` it). A
/// word of [`MISSING_MARKERS`] is a missing label unless the column holds names: it
/// neither makes a column of numbers one of names nor tells what the column holds.
fn read_label(
    (labels, detected): (&mut LabelColumn, &mut bool),
    field: &str,
    decimal_comma: bool,
    record: &mut Record,
) -> Result<(), ReadErrorKind> {
    if *labels == LabelColumn::Ignored {
        record.label = f64::NAN;
        return Ok(());
    }
    if field.is_empty() {
        return Err(ReadErrorKind::MissingLabel);
    }
    if *labels == LabelColumn::Names {
        record.label = f64::NAN;
        record.class_name.push_str(field);
        return Ok(());
    }
    if MISSING_MARKERS.contains(&field) {
        return Err(ReadErrorKind::MissingLabelMarker(field.to_string()));
    }
    match number(field, decimal_comma) {
        Ok(value) => {
            *detected |= *labels == LabelColumn::Detect;
            *labels = LabelColumn::Numbers;
            record.label = value;
            Ok(())
        }
        Err(ReadErrorKind::NotANumber(_)) if *labels == LabelColumn::Detect => {
            (*labels, *detected) = (LabelColumn::Names, true);
            read_label((labels, detected), field, decimal_comma, record)
        }
        Err(ReadErrorKind::NotANumber(text)) if *detected && *labels == LabelColumn::Numbers => {
            Err(ReadErrorKind::NameAmongNumbers(text))
        }
        Err(kind) => Err(kind),
    }
}

/// Counts lines under the CSV parser: remembers the byte offsets of the newlines read
/// ahead of the parser (at most one buffer's worth) and answers which line a byte is on.
struct LineCounter<R> {
    inner: R,
    offset: u64,
    pending_newlines: VecDeque<u64>,
    lines_before: u64,
}

impl<R> LineCounter<R> {
    fn new(inner: R) -> Self {
        LineCounter { inner, offset: 0, pending_newlines: VecDeque::new(), lines_before: 0 }
    }

    /// 1-based line of byte `byte`; bytes must be asked in non-decreasing order.
    fn line_of(&mut self, byte: u64) -> u64 {
        while self.pending_newlines.front().is_some_and(|&nl| nl < byte) {
            self.pending_newlines.pop_front();
            self.lines_before += 1;
        }
        self.lines_before + 1
    }
}

impl<R: Read> Read for LineCounter<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = buf.get(..n).unwrap_or_default();
        self.pending_newlines.extend(memchr::memchr_iter(b'\n', read).map(|i| self.offset + i as u64));
        self.offset += n as u64;
        Ok(n)
    }
}

/// The field delimiters a CSV header may be written with: a comma, else a tab or a
/// semicolon ([`delimiter_of`]).
pub(super) const DELIMITERS: [u8; 3] = [b',', b'\t', SEMICOLON];

/// The field delimiter of the header at the start of `start` (its first line, or as much
/// of it as is there): a comma when the line holds one; else a tab or a semicolon,
/// whichever it holds more of; else a comma (a header of one column, or a comment line).
fn delimiter_of(start: &[u8]) -> u8 {
    let line = start.split(|&b| b == b'\n').next().unwrap_or_default();
    let count = |delimiter: u8| line.iter().filter(|&&b| b == delimiter).count();
    let [comma, tab, semicolon] = DELIMITERS;
    match (count(comma), count(tab), count(semicolon)) {
        (0, 0, 0) => comma,
        (0, tabs, semicolons) if line.first() != Some(&b'#') => match tabs >= semicolons {
            true => tab,
            false => semicolon,
        },
        _ => comma,
    }
}

/// The field delimiter of the header-less row at the start of `start` (a serial port's,
/// an MQTT message's): a semicolon when the row holds one — a comma in a number is then a
/// decimal comma, as [`CsvReader`] reads it — else a comma when it holds one, else a tab
/// when it holds one, else a comma.
pub fn row_delimiter(start: &[u8]) -> u8 {
    let line = start.split(|&b| b == b'\n').next().unwrap_or_default();
    if line.first() != Some(&b'#') && line.contains(&SEMICOLON) { SEMICOLON } else { delimiter_of(line) }
}

/// The `csv` crate's reader as every CSV here is read: `#` comments, rows of any length
/// (checked here, naming the line), and the header's names trimmed as the values are
/// (`temp, humidity` names `humidity`).
fn builder(has_headers: bool) -> csv::ReaderBuilder {
    let mut b = csv::ReaderBuilder::new();
    b.has_headers(has_headers).flexible(true).comment(Some(b'#')).trim(csv::Trim::Headers);
    b
}

impl<R: BufRead> RecordReader for CsvReader<R> {
    fn next_record(&mut self, record: &mut Record) -> Result<bool, ReadError> {
        let read = self.reader.read_record(&mut self.row);
        // The row ends on the line of the last byte read (csv's start positions point at
        // the blank or comment lines it skipped before the row).
        let last_byte = self.reader.position().byte().saturating_sub(1);
        let line = self.reader.get_mut().line_of(last_byte);
        match read {
            Ok(false) => Ok(false),
            Ok(true) => {
                self.arrange();
                self.convert(line, record).map(|()| true).map_err(|error| self.repeated_header(error))
            }
            Err(e) if matches!(e.kind(), csv::ErrorKind::Utf8 { .. }) => {
                Err(self.error(line, 1, ReadErrorKind::NotUtf8))
            }
            Err(e) => Err(self.error(line, 1, ReadErrorKind::Io(e.to_string()))),
        }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn dim_hint(&self) -> Option<usize> {
        Some(self.dim() + self.one_hot.names().len())
    }

    fn feature_names(&self) -> Option<Vec<String>> {
        let named = !self.header.is_empty();
        let numeric = self.numeric_fields().map(|i| self.header.get(i).unwrap_or_default().to_string());
        named.then(|| numeric.chain(self.one_hot.names().iter().cloned()).collect())
    }

    fn indicators(&self) -> usize {
        self.one_hot.names().len()
    }

    fn order_features_as(&mut self, names: &[String]) -> Result<(), ReadError> {
        CsvReader::order_features_as(self, names)
    }

    fn note(&self) -> Option<String> {
        self.one_hot.unknown_note()
    }

    fn header_note(&self) -> Option<String> {
        let names = self.feature_names().unwrap_or_default();
        let mut notes = Vec::new();
        if self.row_names {
            let name = self.header.get(0).unwrap_or_default();
            let named = if name.is_empty() { "has no name".to_string() } else { format!("is named `{name}`") };
            notes.push(format!(
                "its first column {named}: row names, as pandas' to_csv and R's write.csv write them, so it is left \
                 out (name it in the header to read it as a feature)"
            ));
        } else if !names.is_empty() && names.iter().all(|name| name.parse::<f64>().is_ok_and(f64::is_finite)) {
            notes.push(format!(
                "its header names the columns {}: numbers. The first line of a CSV is its header, so if that line is \
                 data it is not read as a row (add a line of column names)",
                name_list(&names)
            ));
        }
        if self.trailing {
            notes.push("its header ends in a delimiter: the last column has no name and is left out".into());
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

/// What a first line of scikit-learn's bundled CSV files is, when `header` is one: the
/// rows' and features' counts, then the classes' names (`150,4,setosa,versicolor,virginica`
/// in `iris.csv`: two classes at least), where a header of column names belongs. The
/// file's `name` names its loader.
fn count_line(header: &csv::StringRecord, name: &str) -> Option<String> {
    let count = |at: usize| header.get(at).and_then(|field| field.parse::<u64>().ok());
    let (rows, features) = (count(0)?, count(1)?);
    let classes: Vec<&str> = header.iter().skip(2).collect();
    if classes.len() < 2 || classes.iter().any(|name| name.parse::<f64>().is_ok()) {
        return None;
    }
    let stem = Path::new(name).file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
    let set = ["iris", "wine", "breast_cancer"].into_iter().find(|&set| stem.trim_end_matches("_data") == set);
    let loader = match set {
        Some(set) => format!("sklearn.datasets.load_{set}(as_frame=True).frame.to_csv(\"{set}.csv\", index=False)"),
        None => "its sklearn.datasets loader with as_frame=True, then .frame.to_csv(path, index=False)".into(),
    };
    Some(format!(
        "the first line is scikit-learn's count line ({rows} rows of {features} features; classes {}), not a header \
         of column names: put one in its place (the features' names, then the label's), or write the set from \
         {loader}, which names the columns",
        listed(classes.into_iter(), header.len() - 2)
    ))
}

/// The columns a header's shape leaves out, given the label's column: its first when it
/// holds row names ([`is_row_names`]) and is neither the label nor the only feature — and
/// whether it does — and its last when it is `trailing` (unnamed, after the last
/// delimiter).
fn left_out(header: &csv::StringRecord, label_field: Option<usize>, trailing: bool) -> (bool, Vec<bool>) {
    let features = header.len().saturating_sub(usize::from(label_field.is_some()) + usize::from(trailing));
    let row_names = header.get(0).is_some_and(is_row_names) && label_field != Some(0) && features > 1;
    let last = header.len().saturating_sub(1);
    let skipped = match row_names || trailing {
        true => (0..header.len()).map(|i| (i == 0 && row_names) || (i == last && trailing)).collect(),
        false => Vec::new(),
    };
    (row_names, skipped)
}

/// Whether the header's first name marks a column of row names: empty, as pandas' `to_csv`
/// writes a frame's index and R's `write.csv` its row names, or `Unnamed: 0`, the name
/// pandas' `read_csv` gives that column (a frame read and written again keeps it).
fn is_row_names(name: &str) -> bool {
    name.is_empty() || name == "Unnamed: 0"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_column_of_row_names_is_left_out_and_told() {
        let features = |text: &str, label: Option<&str>| {
            let reader = CsvReader::with_header(text.as_bytes(), "t.csv", label, 1024).unwrap();
            (reader.feature_names().unwrap(), reader.header_note().is_some_and(|note| note.contains("row names")))
        };
        let names = |names: &[&str]| names.iter().map(ToString::to_string).collect::<Vec<_>>();
        assert_eq!(features(",a,b,y\n0,1,2,1\n", None), (names(&["a", "b"]), true));
        assert_eq!(features("\"\",a,b,y\n\"r1\",1,2,1\n", None), (names(&["a", "b"]), true));
        assert_eq!(features("Unnamed: 0,a,y\n0,1,1\n", None), (names(&["a"]), true));
        assert_eq!(features(",a,b\n0,1,2\n", Some(NO_LABEL)), (names(&["a", "b"]), true));
        // Kept: the only feature, the label, a column not first.
        assert_eq!(features(",y\n0,1\n", None), (names(&[""]), false));
        assert_eq!(features(",a,y\n0,1,1\n", Some("")), (names(&["a", "y"]), false));
        assert_eq!(features("a,,y\n0,1,1\n", None), (names(&["a", ""]), false));
        let mut reader = CsvReader::with_header(",a,y\n7,1.5,1\n".as_bytes(), "t.csv", None, 1024).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.indices.clone(), r.values.clone()), (vec![0], vec![1.5]));
        // A model that took them for a feature reads them.
        let mut reader = CsvReader::with_header(",a,y\n7,1.5,1\n".as_bytes(), "t.csv", None, 1024).unwrap();
        reader.order_features_as(&names(&["", "a"])).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.indices.clone(), r.values.clone()), (vec![0, 1], vec![7.0, 1.5]));
    }

    /// Text in another encoding than UTF-8 (Windows-1252's `é`) is named as such, in the
    /// header and in a row.
    #[test]
    fn a_line_that_is_not_utf8_is_named() {
        let e = CsvReader::with_header(&b"temp\xe9rature,y\n1,2\n"[..], "t.csv", None, 1024).err().unwrap();
        assert!(e.to_string().contains("iconv -f WINDOWS-1252 -t UTF-8"), "{e}");
        assert_eq!((e.line, e.kind), (1, ReadErrorKind::NotUtf8));
        let mut reader = CsvReader::with_header(&b"a,y\n1,caf\xe9\n2,1\n"[..], "t.csv", None, 1024).unwrap();
        let mut r = Record::default();
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!((e.line, e.kind), (2, ReadErrorKind::NotUtf8));
        assert!(reader.next_record(&mut r).unwrap(), "the next row reads");
    }

    #[test]
    fn a_header_ending_in_a_delimiter_leaves_its_unnamed_last_column_out() {
        let read = |text: &str, label: Option<&str>| {
            let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", label, 1024).unwrap();
            let note = reader.header_note().unwrap_or_default();
            let mut r = Record::default();
            assert!(reader.next_record(&mut r).unwrap());
            (reader.feature_names().unwrap(), r.label, r.values, note)
        };
        let names = |names: &[&str]| names.iter().map(ToString::to_string).collect::<Vec<_>>();
        let (features, label, values, note) = read("a,b,y,\n1,2,0,\n", None);
        assert_eq!((features, label, values), (names(&["a", "b"]), 0.0, vec![1.0, 2.0]));
        assert_eq!(note, "its header ends in a delimiter: the last column has no name and is left out");
        let (features, label, values, note) = read(",a,b,y,\n7,1,2,1,\n", None);
        assert_eq!((features, label, values), (names(&["a", "b"]), 1.0, vec![1.0, 2.0]));
        assert!(note.contains("row names") && note.contains("ends in a delimiter"), "{note}");
        let (features, label, ..) = read("y,a,b,\n1,2,3,\n", Some("y"));
        assert_eq!((features, label), (names(&["a", "b"]), 1.0));
        // Not beside a label and a feature only (found by fuzzing: `;` left no feature).
        for header in [";\n", "a,\n"] {
            let reader = CsvReader::with_header(header.as_bytes(), "t.csv", None, 1024).unwrap();
            assert_eq!((reader.dim_hint(), reader.header_note()), (Some(1), None), "{header}");
        }
        // Rows for a model of features a and b, without their label.
        let reader = CsvReader::with_header("a,b,\n1,2,\n".as_bytes(), "t.csv", None, 1024).unwrap();
        let mut reader = reader.unlabelled_if_a_feature(&names(&["a", "b"]));
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(
            (reader.feature_names().unwrap(), r.label.is_nan(), r.values),
            (names(&["a", "b"]), true, vec![1.0, 2.0])
        );
    }

    #[test]
    fn a_last_column_the_model_names_is_its_feature_for_rows_without_labels() {
        let names = |names: &[&str]| names.iter().map(ToString::to_string).collect::<Vec<_>>();
        let read = |text: &str, features: &[&str]| {
            let reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
            let mut reader = reader.unlabelled_if_a_feature(&names(features));
            let mut r = Record::default();
            assert!(reader.next_record(&mut r).unwrap());
            (reader.feature_names().unwrap(), r.label.is_nan(), r.values)
        };
        assert_eq!(read("a,b\n1,2\n", &["a", "b"]), (names(&["a", "b"]), true, vec![1.0, 2.0]));
        assert_eq!(read("a,b,y\n1,2,3\n", &["a", "b"]), (names(&["a", "b"]), false, vec![1.0, 2.0]));
        // Row names before a single feature are row names again once the label is gone.
        assert_eq!(read(",b\n7,2\n", &["b"]), (names(&["b"]), true, vec![2.0]));
    }

    #[test]
    fn skipped_columns_are_not_read_and_the_features_close_up() {
        let text = "when,a,y,id,b\nmonday,1.5,1,x-7,2\n";
        let skip = ["when".to_string(), "id".to_string(), "when".to_string()];
        let reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap();
        let mut reader = reader.skipping(&skip).unwrap();
        assert_eq!(reader.dim_hint(), Some(2));
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone(), r.values.clone()), (1.0, vec![0, 1], vec![1.5, 2.0]));
        let open = |skip: &[&str]| {
            let skip: Vec<String> = skip.iter().map(ToString::to_string).collect();
            CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap().skipping(&skip).err()
        };
        let header = |message: &str| {
            Some(ReadError {
                source_name: "t.csv".into(),
                line: 1,
                column: 1,
                kind: ReadErrorKind::Header(message.into()),
            })
        };
        let listed = "its columns: `when`, `a`, `y`, `id`, `b`";
        assert_eq!(open(&["z"]), header(&format!("no column named `z` to skip in the header ({listed})")));
        assert_eq!(open(&["y"]), header("`y` is the label column: it cannot be skipped"));
        assert_eq!(
            open(&["when", "a", "id", "b"]),
            header("no feature column is left once the skipped ones are (the label's is `y`)")
        );
        let mut unskipped = CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap();
        let e = unskipped.next_record(&mut r).unwrap_err();
        let kind = ReadErrorKind::FeatureNotANumber { text: "monday".into(), column: "when".into() };
        assert_eq!((e.column, e.kind), (1, kind));
    }

    /// A row as read: its features' indices and values and its label, or what is wrong.
    type Read = Result<(Vec<u32>, Vec<f64>, f64), ReadErrorKind>;

    fn read_all(reader: &mut CsvReader<&[u8]>) -> Vec<Read> {
        let mut rows = Vec::new();
        let mut r = Record::default();
        loop {
            match reader.next_record(&mut r) {
                Ok(true) => rows.push(Ok((r.indices.clone(), r.values.clone(), r.label))),
                Ok(false) => return rows,
                Err(e) => rows.push(Err(e.kind)),
            }
        }
    }

    /// `--categorical`: each category a feature after the numeric ones, in order of first
    /// appearance, named `column=category`; a bad row adds none.
    #[test]
    fn columns_of_categories_are_one_hot_encoded() {
        let text = "mode,t,site,y\nidle,1.5,n,1\nheat,2,n,0\nidle,x,s,1\nheat,0,s,1\n";
        let columns: Vec<Categorical> = ["site", "mode", "site"].map(|c| c.parse().unwrap()).to_vec();
        let reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let mut reader = reader.categorical(&columns).unwrap();
        assert_eq!((reader.dim_hint(), reader.feature_names()), (Some(1), Some(vec!["t".to_string()])));
        let rows = read_all(&mut reader);
        let not_a_number = ReadErrorKind::FeatureNotANumber { text: "x".into(), column: "t".into() };
        let expected = [
            Ok((vec![0, 1, 2], vec![1.5, 1.0, 1.0], 1.0)),
            Ok((vec![0, 2, 3], vec![2.0, 1.0, 1.0], 0.0)),
            Err(not_a_number),
            Ok((vec![3, 4], vec![1.0, 1.0], 1.0)),
        ];
        assert_eq!(rows, expected);
        let names = ["t", "mode=idle", "site=n", "mode=heat", "site=s"].map(String::from).to_vec();
        assert_eq!((reader.dim_hint(), reader.feature_names()), (Some(5), Some(names)));
        let open = |columns: &[&str], skip: &[&str], weight: Option<&str>| {
            let columns: Vec<Categorical> = columns.iter().map(|c| c.parse().unwrap()).collect();
            let skip: Vec<String> = skip.iter().map(ToString::to_string).collect();
            let reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
            match reader.skipping(&skip).and_then(|r| r.weighing(weight)).and_then(|r| r.categorical(&columns)) {
                Ok(_) => String::new(),
                Err(e) => e.to_string(),
            }
        };
        let listed = "its columns: `mode`, `t`, `site`, `y`";
        assert_eq!(
            open(&["z"], &[], None),
            format!("t.csv:1:1: no column named `z` for --categorical in the header ({listed})")
        );
        let label = "t.csv:1:1: `y` is the label column, not a feature: class names are read as they are";
        assert_eq!(open(&["y"], &[], None), label);
        assert_eq!(open(&["site"], &["site"], None), "t.csv:1:1: `site` is skipped: it cannot be a feature too");
        assert_eq!(open(&["t"], &[], Some("t")), "t.csv:1:1: `t` is the weights': it cannot be a feature too");
        assert_eq!(open(&["mode", "t", "site"], &[], None), "");
    }

    /// A model's rows: a column that is not one of its features, while some are named
    /// `column=category`, is read as categories, in any order of the columns; a category
    /// the model did not learn is none of them, and told.
    #[test]
    fn a_models_columns_of_categories_are_read_by_name() {
        let names = ["t", "mode=idle", "site=n", "mode=heat", "site=s"].map(String::from).to_vec();
        let text = "site,y,mode,t\ns,1,heat,2.5\nn,0,cool,0\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap();
        reader.order_features_as(&names).unwrap();
        assert_eq!(reader.note(), None);
        let rows = read_all(&mut reader);
        assert_eq!(rows, [Ok((vec![0, 3, 4], vec![2.5, 1.0, 1.0], 1.0)), Ok((vec![2], vec![1.0], 0.0))]);
        let note = "1 row holds a category the model did not learn (the first: `cool` in column `mode`), read as none of the column's categories";
        assert_eq!(reader.note().as_deref(), Some(note));
        let error = |text: &str| {
            let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap();
            reader.order_features_as(&names).unwrap_err().to_string()
        };
        let no_mode = "t.csv:1:1: no column named `mode=idle`, a feature of the model (its columns: `site`, `y`, `t`); or a column `mode` of categories, one of them";
        assert_eq!(error("site,y,t\n"), no_mode);
        let twice = "t.csv:1:1: the model's feature `site=n` could be read from two columns";
        assert_eq!(error("site,y,mode,t,site=n\n"), twice);
    }

    /// 10⁵ features in reverse order are matched by hash (a name-by-name search would
    /// compare 10¹⁰ pairs), and each value lands on its feature.
    #[test]
    fn a_wide_header_is_matched_in_linear_time() {
        let d = 100_000;
        let names: Vec<String> = (0..d).map(|j| format!("f{j}")).collect();
        let reversed: Vec<&str> = names.iter().rev().map(String::as_str).collect();
        let values: Vec<String> = (0..d).rev().map(|j| (j + 1).to_string()).collect();
        let text = format!("{},y\n{},1\n", reversed.join(","), values.join(","));
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 8 << 20).unwrap();
        reader.order_features_as(&names).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(r.indices.len(), d);
        assert!(r.indices.iter().zip(&r.values).all(|(&j, &v)| v == f64::from(j + 1)));
    }

    /// A header's names are trimmed, as values are: `--label-column`, `--skip-column` and a
    /// model's feature names find them.
    #[test]
    fn header_names_are_trimmed() {
        let text = "temp, humidity , label\n1, 2, 3\n";
        let reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("label"), 1024).unwrap();
        let mut reader = reader.skipping(&["humidity".to_string()]).unwrap();
        assert_eq!(RecordReader::feature_names(&reader), Some(vec!["temp".to_string()]));
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone()), (3.0, vec![1.0]));
    }

    /// A repeated name is told apart as pandas does, so that a model's features are read
    /// by name from a header that repeats one; a header of 10⁵ alike names is read in
    /// linear time.
    #[test]
    fn dates_and_times_are_told_from_other_words() {
        for text in [
            "2022-03-20",
            "2022-03-20T11:00:00+01:00",
            "2022-03-20 11:00:05.250Z",
            "2022-03-20T11:00:00-0500",
            "11:00",
            "9:05:30",
            "20/03/2022",
            "3/20/2022 11:00",
        ] {
            assert!(is_date_or_time(text), "{text}");
        }
        for text in ["grass", "1-2", "2022-03", "12:5", "11:00:00:00", "2022-03-20Tnoon", "a:bc", "1/2", "-", ""] {
            assert!(!is_date_or_time(text), "{text}");
        }
        let text = "Time,flow\n2022-03-20T11:00:00+01:00,100.59\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let e = reader.next_record(&mut Record::default()).unwrap_err();
        assert!(e.to_string().contains("is a date or a time, not a number (column `Time`): --skip-column Time"), "{e}");
    }

    /// scikit-learn's bundled CSV files start with a line of counts and class names.
    #[test]
    fn a_count_line_of_scikit_learn_is_no_header() {
        let iris = "150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,0\n";
        let e = CsvReader::with_header(iris.as_bytes(), "iris.csv", None, 1024).err().unwrap();
        let said = "iris.csv:1:1: the first line is scikit-learn's count line (150 rows of 4 features; classes \
                    `setosa`, `versicolor`, `virginica`), not a header of column names";
        assert!(e.to_string().starts_with(said), "{e}");
        let wine = "178,13,class_0,class_1,class_2\n";
        let e = CsvReader::with_header(wine.as_bytes(), "data/wine_data.csv", None, 1024).err().unwrap();
        let loader = "sklearn.datasets.load_wine(as_frame=True).frame.to_csv(\"wine.csv\", index=False)";
        assert!(e.to_string().contains(loader), "{e}");
        for header in ["150,4,y\n", "1.5,4,a,b\n", "150,4,7,8\n", "x,4,a,b\n"] {
            assert!(CsvReader::with_header(header.as_bytes(), "t.csv", None, 1024).is_ok(), "{header}");
        }
    }

    #[test]
    fn repeated_header_names_are_told_apart() {
        let text = "a,a,b,a.1,a,label\n1,2,3,4,5,0\n";
        let reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let names = RecordReader::feature_names(&reader).unwrap();
        assert_eq!(names, ["a", "a.2", "b", "a.1", "a.3"]);
        // The same columns in another order, read by the names of the first.
        let reordered = "a.1,b,a,a,a,label\n4,3,1,2,5,0\n";
        let mut reader = CsvReader::with_header(reordered.as_bytes(), "t.csv", None, 1024).unwrap();
        reader.order_features_as(&names).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(r.values, [1.0, 2.0, 3.0, 4.0, 5.0]);
        let many = format!("{}y\n", "x,".repeat(100_000));
        let reader = CsvReader::with_header(many.as_bytes(), "t.csv", None, 1 << 20).unwrap();
        let names = RecordReader::feature_names(&reader).unwrap();
        assert_eq!((names[0].as_str(), names[1].as_str(), names[99_999].as_str()), ("x", "x.1", "x.99999"));
    }

    /// Features read by a model's names land in its order, zeros left out as always, with
    /// the label and a skipped column where they are; in the header's order nothing changes.
    #[test]
    fn features_are_read_in_the_order_of_the_names_given() {
        let text = "c,when,a,y,b\n3,monday,0,1,2\n0,tuesday,5,0,6\n";
        let names = ["a".to_string(), "b".to_string(), "c".to_string()];
        let reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("y"), 1024).unwrap();
        let mut reader = reader.skipping(&["when".to_string()]).unwrap();
        assert_eq!(RecordReader::feature_names(&reader), Some(vec!["c".into(), "a".into(), "b".into()]));
        reader.order_features_as(&names).unwrap();
        let mut r = Record::default();
        for (label, indices, values) in [(1.0, vec![1, 2], vec![2.0, 3.0]), (0.0, vec![0, 1], vec![5.0, 6.0])] {
            assert!(reader.next_record(&mut r).unwrap());
            assert_eq!((r.label, r.indices.clone(), r.values.clone()), (label, indices, values));
        }
        let in_order = "a,b,c,y\n1,0,3,1\n";
        let mut reader = CsvReader::with_header(in_order.as_bytes(), "t.csv", None, 1024).unwrap();
        reader.order_features_as(&names).unwrap();
        assert!(reader.feature_of_field.is_empty(), "nothing to reorder");
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.indices.clone(), r.values.clone()), (vec![0, 2], vec![1.0, 3.0]));
        let other = CsvReader::with_header("a,x,c,y\n1,2,3,1\n".as_bytes(), "t.csv", None, 1024);
        let e = other.unwrap().order_features_as(&names).unwrap_err();
        assert!(
            e.to_string().ends_with(
                "column `x` is not one of the model's features (`a`, `b`, `c`): leave it out with --skip-column x"
            ),
            "{e}"
        );
        // The label in another column than the last, which is a feature: the hint says so.
        let middle = CsvReader::with_header("a,y,c,b\n1,1,3,2\n".as_bytes(), "t.csv", None, 1024);
        let e = middle.unwrap().order_features_as(&names).unwrap_err();
        assert!(e.to_string().ends_with("if it is the label column: --label-column y"), "{e}");
        // A feature of the model named otherwise (another case) here: the one meant is named.
        let renamed = CsvReader::with_header("a,B,c,y\n1,2,3,1\n".as_bytes(), "t.csv", None, 1024);
        let e = renamed.unwrap().order_features_as(&names).unwrap_err();
        assert!(e.to_string().ends_with("column `B` is not one of the model's features (`a`, `b`, `c`): if it is the model's `b`, named otherwise here, rename it"), "{e}");
    }

    /// Booleans as pandas writes them are features of 1 and 0, in any case; a label column
    /// of them names two classes; other words are still not numbers.
    #[test]
    fn truth_values_are_ones_and_zeros() {
        let text = "on,off,level,state\nTrue,False,2.5,True\nfalse,TRUE,0,False\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.indices.clone(), r.values.clone(), r.class_name.as_str()), (vec![0, 2], vec![1.0, 2.5], "True"));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.indices.clone(), r.values.clone(), r.class_name.as_str()), (vec![1], vec![1.0], "False"));
        let mut reader = CsvReader::with_header("a,y\nyes,1\n".as_bytes(), "t.csv", None, 1024).unwrap();
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.kind, ReadErrorKind::FeatureNotANumber { text: "yes".into(), column: "a".into() });
    }

    #[test]
    fn reads_rows_and_picks_the_label_column() {
        let text = "a,b,y\n1.5,0,-1\n\n2,3,1\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        assert_eq!(reader.dim_hint(), Some(2));
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone(), r.values.clone(), r.line), (-1.0, vec![0], vec![1.5], 2));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.line), (1.0, 4));
        assert!(!reader.next_record(&mut r).unwrap());

        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some("a"), 1024).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.indices.clone()), (1.5, vec![1]));

        // No label column: every column a feature, every label NaN; a column named `none`
        // is still a label column.
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", Some(NO_LABEL), 1024).unwrap();
        assert_eq!(reader.dim_hint(), Some(3));
        assert!(reader.next_record(&mut r).unwrap());
        assert!(r.label.is_nan());
        assert_eq!((r.indices.clone(), r.values.clone()), (vec![0, 2], vec![1.5, -1.0]));
        let named = "a,none\n1,2\n";
        let mut reader = CsvReader::with_header(named.as_bytes(), "t.csv", Some(NO_LABEL), 1024).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, reader.dim_hint()), (2.0, Some(1)));
        let e = CsvReader::with_header("a\n".as_bytes(), "t.csv", None, 1024).err().unwrap();
        let separated = "(fields separated by commas, tabs or semicolons)";
        assert_eq!(
            e.to_string(),
            format!("t.csv:1:1: the header needs a label column and at least one feature {separated}")
        );
        assert!(CsvReader::with_header("a\n".as_bytes(), "t.csv", Some(NO_LABEL), 1024).is_ok());
        // Fields separated by spaces (scikit-learn's linnerud_exercise.csv, R's write.table).
        let e = CsvReader::with_header("Chins Situps Jumps\n5 162 60\n".as_bytes(), "t.csv", None, 1024).err().unwrap();
        let said = "t.csv:1:1: the first line's fields are separated by spaces (`Chins`, `Situps`, `Jumps`): a CSV's";
        assert!(e.to_string().starts_with(said), "{e}");
        for empty in ["", "\n", "# only a comment\n"] {
            for label in [None, Some("y"), Some(NO_LABEL)] {
                let e = CsvReader::with_header(empty.as_bytes(), "t.csv", label, 1024).err().unwrap();
                assert_eq!(e.to_string(), "t.csv:1:1: the input is empty: no header, no rows", "{empty:?}");
            }
        }
    }

    /// A header without a comma may be written with tabs or semicolons, and its rows are
    /// read so; a comma anywhere in it keeps the comma.
    #[test]
    fn tab_and_semicolon_separated_rows() {
        let mut r = Record::default();
        for (text, label, values) in [
            ("a\tb\ty\n1.5\t2\t1\n", 1.0, vec![1.5, 2.0]),
            ("a;b;y\n1.5;2;1\n", 1.0, vec![1.5, 2.0]),
            ("a;b,c;y\n1,0\n", 0.0, vec![1.0]),
            ("\"a;b\",y\n3,4\n", 4.0, vec![3.0]),
        ] {
            let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
            assert!(reader.next_record(&mut r).unwrap(), "{text:?}");
            assert_eq!((r.label, r.values.clone()), (label, values), "{text:?}");
        }
        let e = CsvReader::with_header("a|b|y\n".as_bytes(), "t.csv", None, 1024).err().unwrap();
        assert!(e.to_string().ends_with("(fields separated by commas, tabs or semicolons)"), "{e}");
    }

    #[test]
    fn semicolon_files_read_decimal_commas() {
        let mut r = Record::default();
        let text = "a;b;y\n21,5;-0,25;2,75\n1e3;,5;1\n\"3,5\";7;0\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        for (label, values) in [(2.75, vec![21.5, -0.25]), (1.0, vec![1e3, 0.5]), (0.0, vec![3.5, 7.0])] {
            assert!(reader.next_record(&mut r).unwrap());
            assert_eq!((r.label, r.values.clone()), (label, values));
        }
        // Header-less rows (a serial port, MQTT) separated by semicolons too.
        assert_eq!(row_delimiter(b"0,5;1\n"), b';');
        let mut reader = CsvReader::without_header("0,5;1\n".as_bytes(), "serial", 2, b';', 1024);
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.values.clone()), (1.0, vec![0.5]));
        // A point and a comma, or two commas: not a number, named with its column (a point
        // between thousands, as a spreadsheet formats them, told as such).
        let formatted = |text: &str| ReadErrorKind::FormattedNumber {
            text: text.into(),
            column: "a".into(),
            what: "a thousands separator",
        };
        let not_a_number = |text: &str| ReadErrorKind::FeatureNotANumber { text: text.into(), column: "a".into() };
        for (text, kind) in [("a;y\n1.234,5;1\n", formatted("1.234,5")), ("a;y\n1,2,3;1\n", not_a_number("1,2,3"))] {
            let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
            assert_eq!(reader.next_record(&mut r).unwrap_err().kind, kind, "{text:?}");
        }
        // A decimal comma in a tab-separated file: the error says where one is read.
        let mut reader = CsvReader::with_header("a\ty\n1,5\t1\n".as_bytes(), "t.tsv", None, 1024).unwrap();
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.kind, ReadErrorKind::DecimalComma { text: "1,5".into(), column: "a".into() });
        assert!(e.to_string().ends_with("a decimal comma is read where fields are separated by semicolons"), "{e}");
        let mut reader = CsvReader::with_header("a;y\n1,5e999;1\n".as_bytes(), "t.csv", None, 1024).unwrap();
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, ReadErrorKind::NonFinite("1,5e999".into()));
        // A class name with a comma stays a name.
        let mut reader = CsvReader::with_header("a;y\n1;north, east\n".as_bytes(), "t.csv", None, 1024).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!(r.class_name, "north, east");
    }

    #[test]
    fn fields_are_trimmed_as_str_trim_does() {
        let unicode = ["\u{a0}2\u{2003}", " \u{a0} 3 \u{a0}", "\u{e9}t\u{e9}", " \u{a0}", "\u{b}4\u{b} ", " \u{b}"];
        for field in ["", " ", "1.5", " 1.5\t"].into_iter().chain(unicode) {
            assert_eq!(trim(field), field.trim(), "{field:?}");
        }
    }

    #[test]
    fn names_line_and_column_of_faults() {
        let text = "a,b,y\n1,2,1\n# note\n10,NaN,1\n\n1,2\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv:4:4: `NaN` marks a missing value in column `b` (--on-error skip leaves such rows out)"
        );
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!((e.line, e.kind), (6, ReadErrorKind::FieldCount { expected: 3, got: 2 }));
        // An empty field (blank but for spaces) is a missing value.
        let mut reader = CsvReader::with_header("a,b,y\n1, ,0\n".as_bytes(), "t.csv", None, 1024).unwrap();
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!((e.column, e.kind), (3, ReadErrorKind::MissingValue { column: "b".into() }));
        // So is a word that marks one (pandas' defaults, UCI's `?`); infinity is a value, not
        // finite; a label's word is a missing label (a column of names would make it a name).
        let text = "a,b,y\n1,NA,0\n1,?,0\n1,-inf,0\n1,2,NA\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let marker = |text: &str| ReadErrorKind::MissingMarker { text: text.into(), column: "b".into() };
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, marker("NA"));
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, marker("?"));
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, ReadErrorKind::NonFinite("-inf".into()));
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, ReadErrorKind::MissingLabelMarker("NA".into()));
        // Files joined with their headers: the second header is told as one, and reading
        // goes on.
        let mut reader =
            CsvReader::with_header("a,b,y\n1,2,0\na, b ,y\n3,4,1\n".as_bytes(), "t.csv", None, 1024).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        let e = reader.next_record(&mut r).unwrap_err();
        let said = "t.csv:3:1: the header again (`a`, `b`, `y`): files joined one after another each bring theirs";
        assert!(e.to_string().starts_with(said), "{e}");
        assert!(reader.next_record(&mut r).unwrap() && r.label == 1.0);
        // A header of the same names in another order: the rows after it are read by its
        // names, until the first header's order comes back; a repeated name's k-th column
        // is the k-th of that name.
        let joined = "a,b,a,y\n1,2,3,0\nb,y,a,a\n20,1,10,30\nb, y, a,a\n21,0,11,31\na,b,a,y\n4,5,6,1\n";
        let mut reader = CsvReader::with_header(joined.as_bytes(), "t.csv", None, 1024).unwrap();
        let mut read = |reader: &mut CsvReader<&[u8]>| match reader.next_record(&mut r) {
            Ok(_) => Ok((r.values.clone(), r.label)),
            Err(e) => Err(e.kind),
        };
        assert_eq!(read(&mut reader), Ok((vec![1.0, 2.0, 3.0], 0.0)));
        let reordered = ReadErrorKind::ReorderedHeader("`b`, `y`, `a`, `a.1`".into());
        assert_eq!(read(&mut reader), Err(reordered.clone()));
        assert_eq!(read(&mut reader), Ok((vec![10.0, 20.0, 30.0], 1.0)));
        assert_eq!(read(&mut reader), Err(reordered));
        assert_eq!(read(&mut reader), Ok((vec![11.0, 21.0, 31.0], 0.0)));
        assert!(matches!(read(&mut reader), Err(ReadErrorKind::RepeatedHeader(_))));
        assert_eq!(read(&mut reader), Ok((vec![4.0, 5.0, 6.0], 1.0)));
        let e = CsvReader::with_header("a,b\n".as_bytes(), "t.csv", Some("z"), 1024).err().unwrap();
        assert_eq!(e.to_string(), "t.csv:1:1: no column named `z` in the header (its columns: `a`, `b`)");
        // The column meant, when one is near: another case, a misspelling, a position.
        let header = "temperature,humidity,Label\n";
        for (wanted, meant) in [
            ("label", "; did you mean `Label`?"),
            ("humidty", "; did you mean `humidity`?"),
            ("temp", "; did you mean `temperature`?"),
            ("2", "; columns are given by name: column 2, counting from 1, is `humidity`"),
        ] {
            let e = CsvReader::with_header(header.as_bytes(), "t.csv", Some(wanted), 1024).err().unwrap();
            let said = format!(
                "no column named `{wanted}` in the header (its columns: `temperature`, `humidity`, `Label`{meant})"
            );
            assert!(e.to_string().ends_with(&said), "{e}");
        }
        // Names as near as each other are all offered (River's segment.csv).
        let segment = "region-centroid-col,region-centroid-row,short-line-density-5,class\n";
        let e = CsvReader::with_header(segment.as_bytes(), "t.csv", Some("region-centroid"), 1024).err().unwrap();
        assert!(e.to_string().ends_with("did you mean `region-centroid-col` or `region-centroid-row`?)"), "{e}");
        let wide: Vec<String> = (0..20).map(|j| format!("x{j}")).collect();
        let e = CsvReader::with_header(wide.join(",").as_bytes(), "t.csv", Some("z"), 1024).err().unwrap();
        assert!(e.to_string().ends_with("`x10`, `x11`, … (20 in all))"), "{e}");
        let e = CsvReader::with_header("a,b,c\n".as_bytes(), "t.csv", None, 4).err().unwrap();
        assert_eq!(e.to_string(), "t.csv:1:1: the header is longer than the limit of 4 bytes");
    }

    #[test]
    fn numbers_a_spreadsheet_formatted_are_named_as_such() {
        for (text, what) in [
            ("1,234.5", Some("a thousands separator")),
            ("1.234,5", Some("a thousands separator")),
            ("-12 345 678", Some("a thousands separator")),
            ("1'234", Some("a thousands separator")),
            ("$12", Some("a currency sign")),
            ("-€1,234.50", Some("a currency sign")),
            ("12 €", Some("a currency sign")),
            ("15%", Some("a percent sign")),
            ("1,23,456", None),
            ("1.2.3", None),
            ("12,34.5", None),
            ("abc", None),
            ("%", None),
            ("$", None),
            ("1,", None),
        ] {
            assert_eq!(number_formatting(text), what, "{text}");
        }
        let mut reader = CsvReader::with_header("a;b;y\n\"1.234,5\";2;0\n".as_bytes(), "t.csv", None, 1024).unwrap();
        let e = reader.next_record(&mut Record::default()).unwrap_err();
        let said = "t.csv:2:1: `1.234,5` is a number written with a thousands separator (column `a`): write numbers as \
                    digits alone";
        assert!(e.to_string().starts_with(said), "{e}");
    }

    #[test]
    fn a_class_column_holds_names_or_numbers_throughout() {
        let text = "a,class\n1,grass\n2, sky \n3,7\n4,\n";
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        let mut r = Record::default();
        let mut names = Vec::new();
        while let Ok(true) = reader.next_record(&mut r) {
            assert!(r.label.is_nan());
            names.push(r.class_name.clone());
        }
        assert_eq!(names, ["grass", "sky", "7"], "a name that looks like a number is a name");
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap();
        for _ in 0..3 {
            reader.next_record(&mut r).unwrap();
        }
        assert_eq!(reader.next_record(&mut r).unwrap_err().to_string(), "t.csv:5:3: the row has no label");
        let numbers = "a,class\n1,2\n2,sky\n3,\n";
        let mut reader = CsvReader::with_header(numbers.as_bytes(), "t.csv", None, 1024).unwrap();
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.class_name.as_str()), (2.0, ""));
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.kind, ReadErrorKind::NameAmongNumbers("sky".into()));
        // An empty label among numbers is a missing one too, not a number of no digits.
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, ReadErrorKind::MissingLabel);
        let empty_first = CsvReader::with_header("a,y\n1,\n".as_bytes(), "t.csv", None, 1024).unwrap();
        assert_eq!(
            empty_first.with_labels(LabelColumn::Numbers).next_record(&mut r).unwrap_err().kind,
            ReadErrorKind::MissingLabel
        );
        let mut told =
            CsvReader::with_header(numbers.as_bytes(), "t.csv", None, 1024).unwrap().with_labels(LabelColumn::Names);
        assert!(told.next_record(&mut r).unwrap());
        assert_eq!((r.label.is_nan(), r.class_name.as_str()), (true, "2"));
        let mut target =
            CsvReader::with_header(text.as_bytes(), "t.csv", None, 1024).unwrap().with_labels(LabelColumn::Numbers);
        let kind = ReadErrorKind::LabelNotANumber { text: "grass".into(), column: "class".into() };
        assert_eq!(target.next_record(&mut r).unwrap_err().kind, kind);
        // A word that marks a missing value is a missing label among numbers, first or not,
        // and a name among names.
        let marked = "a,y\n1,?\n2,1.5\n3,NA\n4,nan\n";
        let mut reader = CsvReader::with_header(marked.as_bytes(), "t.csv", None, 1024).unwrap();
        let marker = |text: &str| ReadErrorKind::MissingLabelMarker(text.into());
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, marker("?"));
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.label, r.class_name.as_str()), (1.5, ""));
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, marker("NA"));
        assert_eq!(reader.next_record(&mut r).unwrap_err().kind, marker("nan"));
        let mut named = CsvReader::with_header("a,y\n1,sky\n2,None\n".as_bytes(), "t.csv", None, 1024).unwrap();
        assert!(named.next_record(&mut r).unwrap() && named.next_record(&mut r).unwrap());
        assert_eq!(r.class_name, "None");
    }

    #[test]
    fn a_long_line_is_a_bad_row_and_reading_goes_on() {
        let text = format!("a,y\n1,2\n{},1\n\n3,4\n", "9".repeat(100));
        let mut reader = CsvReader::with_header(text.as_bytes(), "t.csv", None, 16).unwrap();
        let mut r = Record::default();
        assert!(reader.next_record(&mut r).unwrap());
        let e = reader.next_record(&mut r).unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3:1: the line is longer than the limit of 16 bytes");
        assert!(reader.next_record(&mut r).unwrap());
        assert_eq!((r.line, r.label), (5, 4.0));
    }
}
