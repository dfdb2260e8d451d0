//! Class names: a CSV class column may hold names (`grass`, `sky`) instead of numbers.
//!
//! A reader that finds a name in the class column ([`crate::source`]: the column holds
//! names when its first row's value is not a number) leaves it in
//! [`Record::class_name`] with the label `NaN`; [`ClassNames::resolve`] gives it its
//! label, `k` for the `k`-th distinct name in order of first appearance. From there a
//! classifier learns labels as it always does, and its model file carries the names
//! (`kestrel_core::model::add_class_names`), so that `predict` writes names back and
//! `eval` reads named test rows by the model's own table.
//!
//! Memory: each distinct name once with a hash-table entry, at most
//! [`MAX_CLASSES`] names of at most [`MAX_CLASS_NAME_BYTES`] bytes.

use std::collections::HashMap;

use crate::limits::{MAX_CLASS_NAME_BYTES, MAX_CLASSES};
use crate::source::{ReadErrorKind, Record};

/// The names seen so far, name `k` that of label `k`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassNames {
    names: Vec<String>,
    index: HashMap<String, usize>,
}

impl ClassNames {
    /// No names yet.
    pub fn new() -> Self {
        ClassNames::default()
    }

    /// The names a model stores, name `k` that of label `k` (a repeated name keeps its
    /// first label).
    pub fn from_names(names: impl IntoIterator<Item = String>) -> Self {
        let mut table = ClassNames::new();
        for name in names {
            table.index.entry(name.clone()).or_insert(table.names.len());
            table.names.push(name);
        }
        table
    }

    /// Gives a record whose class is a name its label, the name's (a new name becoming
    /// the next label); a record with a numeric label is left as it is.
    ///
    /// # Errors
    /// `ClassNameTooLong` or `TooManyClassNames` (the record is unchanged then).
    ///
    /// # Examples
    /// ```
    /// use kestrel_stream::class_names::ClassNames;
    /// use kestrel_stream::source::Record;
    /// let mut names = ClassNames::new();
    /// let mut record = Record { class_name: "sky".into(), label: f64::NAN, ..Record::default() };
    /// names.resolve(&mut record)?;
    /// assert_eq!((record.label, names.name(0.0)), (0.0, Some("sky")));
    /// # Ok::<(), kestrel_stream::source::ReadErrorKind>(())
    /// ```
    pub fn resolve(&mut self, record: &mut Record) -> Result<(), ReadErrorKind> {
        if record.class_name.is_empty() {
            return Ok(());
        }
        let label = match self.index.get(&record.class_name) {
            Some(&label) => label,
            None => self.add(&record.class_name)?,
        };
        record.label = label as f64;
        Ok(())
    }

    fn add(&mut self, name: &str) -> Result<usize, ReadErrorKind> {
        if name.len() > MAX_CLASS_NAME_BYTES {
            return Err(ReadErrorKind::ClassNameTooLong(MAX_CLASS_NAME_BYTES));
        }
        if self.names.len() >= MAX_CLASSES {
            return Err(ReadErrorKind::TooManyClassNames(MAX_CLASSES));
        }
        let label = self.names.len();
        self.index.insert(name.to_string(), label);
        self.names.push(name.to_string());
        Ok(label)
    }

    /// The name of label `label`, if it is one.
    pub fn name(&self, label: f64) -> Option<&str> {
        if label.fract() != 0.0 || label < 0.0 {
            return None;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a non-negative integer; get() bounds it"
        )]
        self.names.get(label as usize).map(String::as_str)
    }

    /// The names, name `k` that of label `k`.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// `true` while no name was seen.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// How a message or a summary shows class `label`: its name in `names`, or the label
/// itself (classes not named, or a label past the names).
pub fn shown(names: Option<&ClassNames>, label: f64) -> String {
    names.and_then(|names| names.name(label)).map_or_else(|| label.to_string(), str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Record {
        Record { class_name: name.into(), label: f64::NAN, ..Record::default() }
    }

    #[test]
    fn names_take_labels_in_order_of_first_appearance() {
        let mut names = ClassNames::new();
        let labels: Vec<f64> = ["grass", "sky", "grass", "path"]
            .iter()
            .map(|name| {
                let mut record = named(name);
                names.resolve(&mut record).unwrap();
                record.label
            })
            .collect();
        assert_eq!(labels, [0.0, 1.0, 0.0, 2.0]);
        assert_eq!(
            (names.name(1.0), names.name(2.5), names.name(-1.0), names.name(3.0)),
            (Some("sky"), None, None, None)
        );
        let mut numeric = Record { label: 4.0, ..Record::default() };
        names.resolve(&mut numeric).unwrap();
        assert_eq!((numeric.label, names.names().len()), (4.0, 3));
    }

    #[test]
    fn a_model_table_reads_its_names_and_extends_past_them() {
        let mut names = ClassNames::from_names(["sky".to_string(), "grass".to_string()]);
        let (mut grass, mut mud) = (named("grass"), named("mud"));
        names.resolve(&mut grass).unwrap();
        names.resolve(&mut mud).unwrap();
        assert_eq!((grass.label, mud.label), (1.0, 2.0));
    }

    #[test]
    fn limits_are_errors_that_change_nothing() {
        let mut names = ClassNames::new();
        let mut long = named(&"x".repeat(MAX_CLASS_NAME_BYTES + 1));
        assert_eq!(names.resolve(&mut long), Err(ReadErrorKind::ClassNameTooLong(MAX_CLASS_NAME_BYTES)));
        assert!(long.label.is_nan() && names.is_empty());
        for k in 0..MAX_CLASSES {
            names.resolve(&mut named(&k.to_string())).unwrap();
        }
        let mut one_more = named("one more");
        assert_eq!(names.resolve(&mut one_more), Err(ReadErrorKind::TooManyClassNames(MAX_CLASSES)));
        assert_eq!(names.names().len(), MAX_CLASSES);
    }
}
