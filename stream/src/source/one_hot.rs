//! Columns of categories, one-hot encoded (`--categorical`).
//!
//! A CSV column whose values name categories (`idle`, `heating`; a number is a name here
//! too) becomes one feature per category: `1` on the rows of that category, `0` on the
//! others. The features follow the numeric ones, each named `NAME=category`: first the
//! categories given in advance (`--categorical NAME=A,B,…`, a stream's, whose features are
//! fixed at its start; a row of another category is a bad row), then those learned from
//! the rows in the order they first appear. A model keeps those names and nothing more: rows
//! read for it by name ([`CsvReader::order_features_as`](super::CsvReader::order_features_as))
//! take a header column `NAME` that is not one of its features, while some of its features
//! are named `NAME=…`, as that column's categories again, and a category the model has no
//! feature for as none of them (all zeros, as scikit-learn's
//! `OneHotEncoder(handle_unknown="ignore")` reads it).
//!
//! A row's new categories are kept only once the whole row is read: a bad row adds none.
//! An empty field is a missing value, as in a numeric column.
//!
//! Memory: each distinct category once, with a hash-table entry: at most [`MAX_CLASSES`]
//! categories a column, of at most [`MAX_CLASS_NAME_BYTES`] bytes each, and at most
//! [`MAX_DIM`] features in all.

use std::collections::HashMap;

use super::record::ReadErrorKind;
use crate::limits::{MAX_CLASS_NAME_BYTES, MAX_CLASSES, MAX_DIM};

/// The separator of a column's name and a category's in a feature's name.
pub const SEPARATOR: char = '=';

/// A column's categories, each with its feature.
pub(super) type Categories = Vec<(String, u32)>;

/// A CSV column of categories, one-hot encoded, as a reader is told of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Categorical {
    /// The column's name in the header.
    pub column: String,
    /// Its categories when given in advance (a row of another is a bad row); `None`: each
    /// new one becomes a feature.
    pub categories: Option<Vec<String>>,
}

impl std::fmt::Display for Categorical {
    /// As the flag gives it: `NAME`, or `NAME=A,B,…`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.categories {
            None => write!(f, "{}", self.column),
            Some(categories) => write!(f, "{}{SEPARATOR}{}", self.column, categories.join(",")),
        }
    }
}

impl std::str::FromStr for Categorical {
    type Err = String;

    /// `NAME` (categories learned from the rows) or `NAME=A,B,…` (given; each once).
    fn from_str(text: &str) -> Result<Self, String> {
        let Some((column, list)) = text.split_once(SEPARATOR) else {
            return Ok(Categorical { column: text.to_string(), categories: None });
        };
        let mut categories: Vec<String> = Vec::new();
        for category in list.split(',').map(str::trim) {
            if category.is_empty() {
                return Err(format!("`{text}`: an empty category (NAME=A,B,…)"));
            }
            if category.len() > MAX_CLASS_NAME_BYTES || categories.len() >= MAX_CLASSES {
                return Err(format!("`{column}`: at most {MAX_CLASSES} categories of {MAX_CLASS_NAME_BYTES} bytes"));
            }
            if !categories.iter().any(|known| known == category) {
                categories.push(category.to_string());
            }
        }
        Ok(Categorical { column: column.to_string(), categories: Some(categories) })
    }
}

/// The categorical columns of a reader (a CSV reader's, a broker's JSON rows') and the
/// features their categories are.
#[derive(Clone, Debug, Default)]
pub(crate) struct OneHot {
    /// The categorical column each field is, an index into `columns` (empty: none is).
    column_of_field: Vec<Option<usize>>,
    columns: Vec<Column>,
    /// New categories of the columns not given theirs become features (training rows);
    /// otherwise (a model's rows) a category without a feature is none.
    growing: bool,
    /// The feature the next new category becomes.
    next_feature: u32,
    /// The names of the features new categories became, in order.
    names: Vec<String>,
    /// This row's categories, as features.
    row: Vec<u32>,
    /// This row's new categories (column, category): features once the row is read whole.
    pending: Vec<(usize, String)>,
    /// This row holds a category without a feature (a model's rows).
    row_unknown: bool,
    /// Rows read whole that held a category without a feature, and the first such.
    unknown_rows: u64,
    first_unknown: Option<String>,
}

#[derive(Clone, Debug)]
struct Column {
    name: String,
    feature_of: HashMap<String, u32>,
    /// Its categories were given: another one is a bad row.
    given: bool,
}

impl OneHot {
    /// Training or streamed rows: the fields `fields` (by position) hold the categories of
    /// their columns; from `first_feature` on, the given categories become features in
    /// order, then each new one of a column not given its own.
    pub fn growing(field_count: usize, fields: &[(usize, Categorical)], first_feature: u32) -> Self {
        let mut one_hot = OneHot {
            column_of_field: column_of_field(field_count, fields.iter().map(|&(field, _)| field)),
            growing: true,
            next_feature: first_feature,
            ..OneHot::default()
        };
        for (at, (_, categorical)) in fields.iter().enumerate() {
            let given = categorical.categories.as_deref();
            let name = categorical.column.clone();
            one_hot.columns.push(Column { name, feature_of: HashMap::new(), given: given.is_some() });
            one_hot.pending.extend(given.unwrap_or_default().iter().map(|category| (at, category.clone())));
        }
        one_hot.finish_row();
        one_hot
    }

    /// A model's rows: field `field` of each of `fields` holds the categories of
    /// `(category, feature)` pairs; no category is added.
    pub fn fixed(field_count: usize, fields: Vec<(usize, String, Categories)>) -> Self {
        let at = column_of_field(field_count, fields.iter().map(|(field, _, _)| *field));
        let columns = fields.into_iter().map(|(_, name, categories)| Column {
            name,
            feature_of: categories.into_iter().collect(),
            given: false,
        });
        OneHot { column_of_field: at, columns: columns.collect(), ..OneHot::default() }
    }

    /// Whether field `field` holds categories.
    pub fn is_categorical(&self, field: usize) -> bool {
        self.column_of_field.get(field).is_some_and(Option::is_some)
    }

    /// How many fields hold categories.
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// The features new categories became so far, by name, in order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Starts a row.
    pub fn start_row(&mut self) {
        self.row.clear();
        self.pending.clear();
        self.row_unknown = false;
    }

    /// Reads `category`, the value of field `field` (a categorical one).
    ///
    /// # Errors
    /// `MissingValue` for an empty field; `UnknownCategory` for a category its column was
    /// not given; `CategoryTooLong` or `TooManyCategories` for a new category past the
    /// limits.
    pub fn read(&mut self, field: usize, category: &str) -> Result<(), ReadErrorKind> {
        let Some(&Some(at)) = self.column_of_field.get(field) else { return Ok(()) };
        let Some(column) = self.columns.get(at) else { return Ok(()) };
        if category.is_empty() {
            return Err(ReadErrorKind::MissingValue { column: column.name.clone() });
        }
        if let Some(&feature) = column.feature_of.get(category) {
            self.row.push(feature);
            return Ok(());
        }
        if column.given {
            let category = category.chars().take(SHOWN_CHARS).collect();
            return Err(ReadErrorKind::UnknownCategory { column: column.name.clone(), category });
        }
        if !self.growing {
            self.row_unknown = true;
            if self.first_unknown.is_none() {
                let shown: String = category.chars().take(SHOWN_CHARS).collect();
                self.first_unknown = Some(format!("`{shown}` in column `{}`", column.name));
            }
            return Ok(());
        }
        let too_many = |limit: String| ReadErrorKind::TooManyCategories { column: column.name.clone(), limit };
        if category.len() > MAX_CLASS_NAME_BYTES {
            let column = column.name.clone();
            return Err(ReadErrorKind::CategoryTooLong { column, limit: MAX_CLASS_NAME_BYTES });
        }
        if column.feature_of.len() >= MAX_CLASSES {
            return Err(too_many(format!("{MAX_CLASSES} categories a column")));
        }
        let feature = self.next_feature as usize + self.pending.len();
        let Some(feature) = u32::try_from(feature).ok().filter(|_| feature < MAX_DIM) else {
            return Err(too_many(format!("{MAX_DIM} features")));
        };
        self.pending.push((at, category.to_string()));
        self.row.push(feature);
        Ok(())
    }

    /// Ends a row read whole: its new categories become features, and its categories'
    /// features are returned, in increasing order.
    pub fn finish_row(&mut self) -> &[u32] {
        self.unknown_rows += u64::from(self.row_unknown);
        for (at, category) in self.pending.drain(..) {
            if let Some(column) = self.columns.get_mut(at) {
                self.names.push(format!("{}{SEPARATOR}{category}", column.name));
                column.feature_of.insert(category, self.next_feature);
                self.next_feature += 1;
            }
        }
        self.row.sort_unstable();
        &self.row
    }
}

/// The characters of a category a message shows at most.
const SHOWN_CHARS: usize = 40;

impl OneHot {
    /// What to tell of the rows read for a model that held a category it has no feature
    /// for, if any did.
    pub fn unknown_note(&self) -> Option<String> {
        let first = self.first_unknown.as_deref().filter(|_| self.unknown_rows > 0)?;
        let rows = match self.unknown_rows {
            1 => "1 row holds".to_string(),
            n => format!("{n} rows hold"),
        };
        Some(format!(
            "{rows} a category the model did not learn (the first: {first}), read as none of the column's categories"
        ))
    }
}

/// For `field_count` fields, the index among `fields` of each that is one of them.
fn column_of_field(field_count: usize, fields: impl Iterator<Item = usize>) -> Vec<Option<usize>> {
    let mut at = vec![None; field_count];
    for (column, field) in fields.enumerate() {
        if let Some(slot) = at.get_mut(field) {
            *slot = Some(column);
        }
    }
    at
}

/// The categories of the model's features `names` that belong to the header columns
/// `columns` (names not among the model's features): for each such column, the
/// `(category, feature)` of every name `column=category`. A name with several `=` is
/// tried at each, so a column's name may hold one too.
pub(super) fn categories_of<'a>(
    names: &[String],
    columns: impl Iterator<Item = &'a str>,
) -> HashMap<&'a str, Categories> {
    let mut categories: HashMap<&str, Categories> = columns.map(|column| (column, Vec::new())).collect();
    for (feature, name) in (0u32..).zip(names) {
        for (at, _) in name.match_indices(SEPARATOR) {
            let (column, category) = (&name[..at], &name[at + SEPARATOR.len_utf8()..]);
            if let Some(found) = categories.get_mut(column) {
                found.push((category.to_string(), feature));
            }
        }
    }
    categories.retain(|_, found| !found.is_empty());
    categories
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Columns whose categories are learned from the rows.
    fn learned(fields: &[(usize, String)]) -> Vec<(usize, Categorical)> {
        fields
            .iter()
            .map(|(field, column)| (*field, Categorical { column: column.clone(), categories: None }))
            .collect()
    }

    #[test]
    fn given_categories_come_first_and_another_is_a_bad_row() {
        let site: Categorical = "site=n, s,n".parse().unwrap();
        assert_eq!(site.categories.as_deref(), Some(&["n".to_string(), "s".to_string()][..]));
        assert_eq!("mode".parse::<Categorical>().unwrap().categories, None);
        assert!("mode=a,,b".parse::<Categorical>().is_err());
        let fields = [(0, Categorical { column: "mode".into(), categories: None }), (2, site)];
        let mut one_hot = OneHot::growing(3, &fields, 1);
        assert_eq!(one_hot.names(), ["site=n", "site=s"]);
        assert_eq!(read_row(&mut one_hot, &[(0, "idle"), (2, "s")]), Ok(vec![2, 3]));
        let unknown = ReadErrorKind::UnknownCategory { column: "site".into(), category: "e".into() };
        assert_eq!(read_row(&mut one_hot, &[(0, "heat"), (2, "e")]), Err(unknown));
        assert_eq!(one_hot.names(), ["site=n", "site=s", "mode=idle"]);
    }

    fn read_row(one_hot: &mut OneHot, values: &[(usize, &str)]) -> Result<Vec<u32>, ReadErrorKind> {
        one_hot.start_row();
        for &(field, value) in values {
            one_hot.read(field, value)?;
        }
        Ok(one_hot.finish_row().to_vec())
    }

    #[test]
    fn categories_become_features_in_order_of_first_appearance() {
        let fields = [(0, "mode".to_string()), (2, "site".to_string())];
        let mut one_hot = OneHot::growing(4, &learned(&fields), 1);
        assert!(one_hot.is_categorical(0) && !one_hot.is_categorical(1) && one_hot.is_categorical(2));
        assert_eq!(read_row(&mut one_hot, &[(0, "idle"), (2, "north")]), Ok(vec![1, 2]));
        assert_eq!(read_row(&mut one_hot, &[(0, "heat"), (2, "north")]), Ok(vec![2, 3]));
        // The site's new category takes a feature before the mode's known one.
        assert_eq!(read_row(&mut one_hot, &[(0, "idle"), (2, "south")]), Ok(vec![1, 4]));
        assert_eq!(one_hot.names(), ["mode=idle", "site=north", "mode=heat", "site=south"]);
    }

    #[test]
    fn a_bad_row_adds_no_category() {
        let mut one_hot = OneHot::growing(2, &learned(&[(0, "mode".to_string())]), 1);
        one_hot.start_row();
        one_hot.read(0, "idle").unwrap();
        // The row fails later (another field): it is never finished.
        assert_eq!(read_row(&mut one_hot, &[(0, "heat")]), Ok(vec![1]));
        assert_eq!(one_hot.names(), ["mode=heat"]);
        let missing = read_row(&mut one_hot, &[(0, "")]);
        assert_eq!(missing, Err(ReadErrorKind::MissingValue { column: "mode".into() }));
        let long = "x".repeat(MAX_CLASS_NAME_BYTES + 1);
        let too_long = ReadErrorKind::CategoryTooLong { column: "mode".into(), limit: MAX_CLASS_NAME_BYTES };
        assert_eq!(read_row(&mut one_hot, &[(0, &long)]), Err(too_long));
        assert_eq!(one_hot.names(), ["mode=heat"]);
    }

    #[test]
    fn limits_are_errors() {
        let mut one_hot = OneHot::growing(1, &learned(&[(0, "id".to_string())]), 0);
        for k in 0..MAX_CLASSES {
            read_row(&mut one_hot, &[(0, &k.to_string())]).unwrap();
        }
        let limit = format!("{MAX_CLASSES} categories a column");
        let e = read_row(&mut one_hot, &[(0, "one more")]);
        assert_eq!(e, Err(ReadErrorKind::TooManyCategories { column: "id".into(), limit }));
        assert_eq!(read_row(&mut one_hot, &[(0, "7")]), Ok(vec![7]));
        let mut wide = OneHot::growing(1, &learned(&[(0, "id".to_string())]), (MAX_DIM - 1) as u32);
        assert_eq!(read_row(&mut wide, &[(0, "a")]), Ok(vec![(MAX_DIM - 1) as u32]));
        let limit = format!("{MAX_DIM} features");
        assert_eq!(
            read_row(&mut wide, &[(0, "b")]),
            Err(ReadErrorKind::TooManyCategories { column: "id".into(), limit })
        );
    }

    #[test]
    fn a_models_categories_are_read_and_an_unknown_one_is_none() {
        let names: Vec<String> =
            ["t", "mode=idle", "a=b=x", "mode=heat", "a=y"].iter().map(ToString::to_string).collect();
        let categories = categories_of(&names, ["mode", "a", "a=b", "other"].into_iter());
        let sorted = |column: &str| {
            let mut found = categories.get(column).cloned().unwrap_or_default();
            found.sort();
            found
        };
        assert_eq!(sorted("mode"), [("heat".to_string(), 3), ("idle".to_string(), 1)]);
        assert_eq!(sorted("a"), [("b=x".to_string(), 2), ("y".to_string(), 4)]);
        assert_eq!(sorted("a=b"), [("x".to_string(), 2)]);
        assert!(!categories.contains_key("other"));
        let mut one_hot = OneHot::fixed(3, vec![(2, "mode".into(), sorted("mode"))]);
        assert_eq!(read_row(&mut one_hot, &[(2, "heat")]), Ok(vec![3]));
        assert_eq!(one_hot.unknown_note(), None);
        assert_eq!(read_row(&mut one_hot, &[(2, "cool")]), Ok(vec![]));
        assert_eq!(read_row(&mut one_hot, &[(2, "warm")]), Ok(vec![]));
        assert!(one_hot.names().is_empty());
        let note = "2 rows hold a category the model did not learn (the first: `cool` in column `mode`), read as none of the column's categories";
        assert_eq!(one_hot.unknown_note().as_deref(), Some(note));
    }
}
