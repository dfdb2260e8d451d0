//! Clustering tools any learner can use: k-means with k-means++ seeding and restarts, and
//! the RAND index that scores a clustering against known classes.
//!
//! - [`KMeans`] (`kmeans.rs`): Lloyd's algorithm on the rows of a matrix in caller storage
//!   (kernel k-means on an embedding `K = VᵀV` is k-means on the columns of `V`, as
//!   [`npkl`](crate::npkl) uses it).
//! - [`rand_index`], [`rand_index_table`] (`rand_index.rs`): the share of point pairs on
//!   which two labellings agree.

mod kmeans;
mod rand_index;

pub use kmeans::{KMeans, KMeansParams, ValidKMeansParams};
pub use rand_index::{rand_index, rand_index_table};
