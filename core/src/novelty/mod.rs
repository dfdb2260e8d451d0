//! Kernel novelty detection (seed 002 §4.2, eq. 55-63): how far a point's image `φ(x)` lies
//! from the centre of mass of "normal" points in feature space, through kernel evaluations
//! only, and when that is far enough to call it an anomaly.
//!
//! - [`CentreOfMass`] (`mass.rs`): the squared distance `d²(x)` of eq. (61), with the set
//!   represented by weighted centres (a reduced set), so a score costs `O(m·d)` instead of
//!   `O(n·d)` and a point entering or leaving the set `O(m)`; optionally in the normalised
//!   kernel of eq. (62-63).
//! - [`P2Quantile`] (`quantile.rs`): the `q`-quantile of the scores of normal points in
//!   constant memory (the P² algorithm), so that "anomaly" means "beyond the `q`-th quantile
//!   of normal", with nothing sorted or stored.
//! - [`RecentQuantile`] (`recent.rs`): the same over the recent numbers only — two P²
//!   estimators in turn — so that the threshold follows scores that drift.
//! - [`Detector`] (`detector.rs`): both over a window of the last `N` normal points, with
//!   centres chosen on the way (a point at least `δ` from every centre becomes one).
//! - [`DetectorState`] (`state.rs`): a detector saved and restored, bit for bit.
//! - [`NoveltyModel`] (`model.rs`): a detector frozen into a model file (kind 5 of the
//!   core's envelope) that scores and flags on a host or a device.

mod detector;
mod mass;
mod model;
mod quantile;
mod recent;
mod state;

pub use detector::{Assessment, Detector, DetectorParams, Score};
pub use mass::{Assessed, CentreOfMass, REFRESH};
pub use model::NoveltyModel;
pub use quantile::P2Quantile;
pub use recent::RecentQuantile;
pub use state::DetectorState;
