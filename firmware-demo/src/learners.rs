//! The demo's three learners, their configuration, and the statics that hold them.
//!
//! - [`Regressor`]: windowed SLKL predicting the die temperature from the three
//!   acceleration axes — window `N` = [`WINDOW`], `M` = [`CENTRES`] candidate centres
//!   (all of which may become active), `d` = [`DIM`], `f32`.
//! - [`Classifier`]: windowed DCD linear SVM predicting the tilt alarm from the same
//!   axes, same window.
//! - [`Novelty`]: the kernel novelty detector of kestrel-core ([`Detector`]) learning the
//!   sensor's normal vibration and flagging the readings that leave it ([`Vibration`] gives
//!   its features) — window [`NOVELTY_WINDOW`], [`NOVELTY_CENTRES`] centres, `f32`.
//!
//! Every buffer is a static whose length is a `const fn` of the configuration
//! ([`SlklWindow::scalars_len`], [`SlklWindow::indices_len`], [`OnlineSvm::scalars_len`],
//! [`CentreOfMass::scalars_len`]), so the linker places them in `.bss` and refuses a
//! configuration that does not fit the RAM of the target's memory layout (`memory/`). The
//! learner structs themselves (a few hundred bytes of bookkeeping over borrowed buffers)
//! live in statics too; nothing learner-sized is on the stack. `kestrel budget --learner
//! slkl|svm --dim 3 --window 128 --centers 32 --scalar f32 --target cortex-m` (4-byte
//! indices, as on every target here) and `kestrel budget --learner novelty --dim 4 --window
//! 256 --centers 32 --scalar f32 --target cortex-m --no-scale` report the buffers' bytes
//! before anything is built; `run-qemu-tests.sh` checks them against these symbols' sizes
//! in the ELF.
//!
//! Statics are taken once ([`ConstStaticCell`], [`StaticCell`]), never `static mut`.
//!
//! # The novelty detector's features and settings
//!
//! A healthy accelerometer on this machine reads gravity, 1 g whatever the orientation,
//! plus a little vibration, and the reading changes between samples only as fast as the
//! machine turns. The detector's four features ([`Vibration::features`]) say exactly that,
//! in g: the change of the reading since the previous sample (three axes: the machine's
//! motion and vibration, what a vibration monitor watches) and the excess of its magnitude
//! over 1 g. A rattle shows in the change, a dead channel or an offset in the magnitude
//! (and, for one sample, in the change), so every fault of the simulator's fault mode
//! (`sim::Fault`) leaves the normal set. The raw axes would not do: normal readings cover a
//! cap of the 1 g sphere, whose centre of mass in feature space lies inside it, so a fault
//! that pulls the reading inward (most of a rattle) scores as *more* normal, and 32 fixed
//! centres cannot cover the cap at a kernel width narrow enough to see 0.3 g.
//!
//! - Features in g, not scaled: the change and the magnitude's noise are on the same scale
//!   (normal changes up to ~0.12 g, the magnitude within ±0.03 g), so one width fits both.
//! - Gaussian kernel, γ = [`NOVELTY_GAMMA`] = 100 /g²: width `1/√(2γ)` ≈ 0.07 g, the size
//!   of the normal change between two samples (a 0.3 g fault is ~4 widths out).
//! - δ = [`NOVELTY_DELTA`] = 0.5 in feature space: a reading ≈ 0.04 g (`√(−ln(1 − δ²/2)/γ)`)
//!   from every centre becomes one, about half a kernel width, so the
//!   [`NOVELTY_CENTRES`] = 32 centres, all taken during the warm-up, tile the normal set.
//! - Window [`NOVELTY_WINDOW`] = 256 readings: longer than the slowest period of the
//!   machine's motion (its tilt, 173 samples), so every normal motion is in it.
//! - Warm-up [`NOVELTY_WARMUP`] = 256 readings taken as normal (as `kestrel stream
//!   --warmup 256`): the threshold starts from the scores of a whole period of motion.
//! - `q` = [`NOVELTY_QUANTILE`] = 0.99: about 1 % of normal readings are flagged. The
//!   faulty readings are 1.5 % of those scored (24 in the bursts and the one after each,
//!   whose change still holds the fault), a little more than `1 − q`, but they score far
//!   above normal ones, and the P² threshold, which interpolates between its markers, stays
//!   below them: all 30 are flagged, with 3 false alarms. With bursts twice as long (54
//!   faulty readings, 2.7 %; a host run of the same detector) it climbed into their scores
//!   and missed three of the six bursts, while `q = 0.98` flagged all 54 with 11 false
//!   alarms: `q` must stay below `1 −` the share of faults expected, as for `kestrel stream
//!   --learner novelty`.

use kestrel_core::dcd::{self, OnlineSvm};
use kestrel_core::novelty::{CentreOfMass, Detector, DetectorParams};
use kestrel_core::slkl::{self, Dims, SlklWindow};
use kestrel_core::{Error, Kernel};
use static_cell::{ConstStaticCell, StaticCell};

use crate::Failure;

/// Samples in each learner's window.
pub const WINDOW: usize = 128;
/// Features: the three acceleration axes.
pub const DIM: usize = 3;
/// SLKL's candidate centres `M`, and the largest `m0`.
pub const CENTRES: usize = 32;
/// SLKL's capacities, its candidates' columns precomputed ([`Dims::fewer_scalars`]):
/// `WINDOW·CENTRES` scalars, fewer than on the fly (`WINDOW·(m0_max + 1)`) when `m0` may
/// reach `M`, and no kernel column computed by a step.
pub const SLKL_DIMS: Dims = Dims::new(WINDOW, DIM, CENTRES, CENTRES).fewer_scalars();
/// Scalars of SLKL's buffer.
pub const SLKL_SCALARS_LEN: usize = SlklWindow::scalars_len(SLKL_DIMS);
/// Indices of SLKL's buffer.
pub const SLKL_INDICES_LEN: usize = SlklWindow::indices_len(SLKL_DIMS);
/// Scalars of the SVM's buffer.
pub const SVM_SCALARS_LEN: usize = OnlineSvm::scalars_len(WINDOW, DIM);

/// The novelty detector's features: [`Vibration::features`].
pub const NOVELTY_DIM: usize = 4;
/// Readings in the novelty detector's window.
pub const NOVELTY_WINDOW: usize = 256;
/// The novelty detector's most centres.
pub const NOVELTY_CENTRES: usize = 32;
/// Readings the novelty detector takes as normal before it flags any.
pub const NOVELTY_WARMUP: usize = 256;
/// Scalars of the novelty detector's centre of mass.
pub const NOVELTY_SCALARS_LEN: usize = CentreOfMass::scalars_len(NOVELTY_CENTRES, NOVELTY_DIM);
/// Gaussian kernel width of the novelty detector, 1/g².
pub const NOVELTY_GAMMA: f32 = 100.0;
/// Feature-space distance from every centre at which a reading becomes a centre.
pub const NOVELTY_DELTA: f32 = 0.5;
/// The quantile of the scores beyond which a reading is flagged.
pub const NOVELTY_QUANTILE: f64 = 0.99;

/// Gaussian kernel width of SLKL, `exp(−γ‖x − x'‖²)` on accelerations in g.
pub const GAMMA: f32 = 4.0;
/// SLKL's sparsity weight `ν`, °C² (about 0.5 % of the temperature's variance over a window).
pub const NU: f32 = 0.01;
/// SVM cost `C`.
pub const SVM_C: f32 = 1.0;
/// DCD coordinate steps after each arrival.
pub const SVM_STEPS_PER_ARRIVAL: usize = 32;
/// Largest tilt of the centres' spherical cap, rad (the scene stays below ~1 rad).
pub const CAP: f32 = 1.15;

/// SLKL over the window, in static buffers.
pub type Regressor = SlklWindow<f32, &'static mut [f32; SLKL_SCALARS_LEN], &'static mut [usize; SLKL_INDICES_LEN]>;
/// The windowed SVM, in a static buffer.
pub type Classifier = OnlineSvm<f32, &'static mut [f32; SVM_SCALARS_LEN]>;
/// The novelty detector, in static buffers: centre of mass, counts, window ring.
pub type Novelty = Detector<
    f32,
    &'static mut [f32; NOVELTY_SCALARS_LEN],
    &'static mut [u32; NOVELTY_CENTRES],
    &'static mut [u32; NOVELTY_WINDOW],
>;

static SLKL_SCALARS: ConstStaticCell<[f32; SLKL_SCALARS_LEN]> = ConstStaticCell::new([0.0; SLKL_SCALARS_LEN]);
static SLKL_INDICES: ConstStaticCell<[usize; SLKL_INDICES_LEN]> = ConstStaticCell::new([0; SLKL_INDICES_LEN]);
static SLKL_LEARNER: StaticCell<Regressor> = StaticCell::new();
static SVM_SCALARS: ConstStaticCell<[f32; SVM_SCALARS_LEN]> = ConstStaticCell::new([0.0; SVM_SCALARS_LEN]);
static SVM_LEARNER: StaticCell<Classifier> = StaticCell::new();
static NOVELTY_SCALARS: ConstStaticCell<[f32; NOVELTY_SCALARS_LEN]> = ConstStaticCell::new([0.0; NOVELTY_SCALARS_LEN]);
static NOVELTY_COUNTS: ConstStaticCell<[u32; NOVELTY_CENTRES]> = ConstStaticCell::new([0; NOVELTY_CENTRES]);
static NOVELTY_RING: ConstStaticCell<[u32; NOVELTY_WINDOW]> = ConstStaticCell::new([0; NOVELTY_WINDOW]);
static NOVELTY_DETECTOR: StaticCell<Novelty> = StaticCell::new();

/// SLKL's hyper-parameters: Gaussian kernel of width [`GAMMA`], `ν` = [`NU`], the exact
/// coordinate step, shrinking, seed 1.
///
/// # Errors
/// Never for these constants; `InvalidParam` if they are edited out of range.
pub fn slkl_params() -> Result<slkl::ValidParams<f32>, Error> {
    slkl::Params::new().kernel(Kernel::rbf(GAMMA)?).nu(NU).seed(1).check()
}

/// The SVM's hyper-parameters: hinge loss, `C` = [`SVM_C`], bias feature 1.
///
/// # Errors
/// Never for these constants; `InvalidParam` if they are edited out of range.
pub fn svm_params() -> Result<dcd::ValidParams<f32>, Error> {
    dcd::Params::new().loss(dcd::Loss::Hinge).c(SVM_C).bias(1.0).check()
}

/// `cos(CAP)`, and the cosine and sine of the golden angle `π(3 − √5)`, as `f32`
/// literals: the centres are computed from them by multiplications and additions only, so
/// the C demo (`firmware-demo-c`), with another libm, computes the same bits.
const COS_CAP: f32 = 0.408_487_44;
const COS_GOLDEN: f32 = -0.737_368_9;
const SIN_GOLDEN: f32 = 0.675_490_3;

/// SLKL's candidate centres: a Fibonacci lattice of [`CENTRES`] points of equal area on
/// the cap of unit vectors within [`CAP`] of vertical, where gravity seen by the sensor
/// lies. Row-major, [`DIM`] per point. Point `i` is at height `z_i` evenly spaced over the
/// cap and azimuth `i` golden angles, turned by a rotation recurrence.
pub fn centres() -> [f32; CENTRES * DIM] {
    let mut points = [0.0; CENTRES * DIM];
    let (mut cos, mut sin) = (1.0f32, 0.0f32);
    for (i, point) in points.chunks_exact_mut(DIM).enumerate() {
        let z = 1.0 - (1.0 - COS_CAP) * (i as f32 + 0.5) / CENTRES as f32;
        let r = libm::sqrtf(1.0 - z * z);
        point.copy_from_slice(&[r * cos, r * sin, z]);
        (cos, sin) = (cos * COS_GOLDEN - sin * SIN_GOLDEN, sin * COS_GOLDEN + cos * SIN_GOLDEN);
    }
    points
}

/// The novelty detector's settings: `q` = [`NOVELTY_QUANTILE`], `δ` = [`NOVELTY_DELTA`],
/// flags from reading [`NOVELTY_WARMUP`]` + 1` on (the first reading learned has no score,
/// so `NOVELTY_WARMUP − 1` scores set the first threshold, as in `kestrel stream`).
pub fn novelty_params() -> DetectorParams<f32> {
    DetectorParams {
        quantile: NOVELTY_QUANTILE,
        delta: NOVELTY_DELTA,
        warmup: NOVELTY_WARMUP as u64 - 1,
        ..DetectorParams::new()
    }
}

/// The novelty detector's features of a stream of readings (module docs): the change
/// since the previous reading and the excess of the magnitude over 1 g, all in g.
#[derive(Clone, Copy, Debug, Default)]
pub struct Vibration {
    previous: Option<[f32; DIM]>,
}

impl Vibration {
    /// The features of `accel` (g) after the reading before it; `None` for the first
    /// reading, which has no change yet.
    pub fn features(&mut self, accel: &[f32; DIM]) -> Option<[f32; NOVELTY_DIM]> {
        let previous = self.previous.replace(*accel)?;
        let [x, y, z] = *accel;
        let magnitude = libm::sqrtf(x * x + y * y + z * z);
        Some([x - previous[0], y - previous[1], z - previous[2], magnitude - 1.0])
    }
}

/// Builds the regressor in its statics (once).
///
/// # Errors
/// [`Failure::Core`] if kestrel-core rejects the configuration; [`Failure::Check`] when
/// the statics were taken before.
pub fn regressor() -> Result<&'static mut Regressor, Failure> {
    let taken = Failure::Check("SLKL statics already taken");
    let scalars = SLKL_SCALARS.try_take().ok_or(taken)?;
    let indices = SLKL_INDICES.try_take().ok_or(taken)?;
    let window = SlklWindow::new_in(scalars, indices, SLKL_DIMS, slkl_params()?, &centres())?;
    SLKL_LEARNER.try_init(window).ok_or(taken)
}

/// Builds the classifier in its statics (once).
///
/// # Errors
/// As [`regressor`].
pub fn classifier() -> Result<&'static mut Classifier, Failure> {
    let taken = Failure::Check("SVM statics already taken");
    let scalars = SVM_SCALARS.try_take().ok_or(taken)?;
    let svm = OnlineSvm::new_in(scalars, WINDOW, DIM, svm_params()?, SVM_STEPS_PER_ARRIVAL)?;
    SVM_LEARNER.try_init(svm).ok_or(taken)
}

/// Builds the novelty detector in its statics (once): Gaussian kernel of width
/// [`NOVELTY_GAMMA`] (normalised already), [`novelty_params`].
///
/// # Errors
/// As [`regressor`].
pub fn novelty() -> Result<&'static mut Novelty, Failure> {
    let taken = Failure::Check("novelty statics already taken");
    let scalars = NOVELTY_SCALARS.try_take().ok_or(taken)?;
    let counts = NOVELTY_COUNTS.try_take().ok_or(taken)?;
    let ring = NOVELTY_RING.try_take().ok_or(taken)?;
    let mass = CentreOfMass::new_in(scalars, counts, NOVELTY_DIM, Kernel::rbf(NOVELTY_GAMMA)?, false)?;
    let detector = Detector::new_in(mass, ring, novelty_params())?;
    NOVELTY_DETECTOR.try_init(detector).ok_or(taken)
}

/// Scores `x` and, unless it is flagged, learns it; a flagged reading's score counts
/// toward the threshold instead (the policy of `kestrel stream --learner novelty`). One
/// pass over the centres serves both (`Detector::assess`). Returns the flag (never during
/// the warm-up).
///
/// # Errors
/// As `Detector::assess` and `Detector::learn_assessed`: a reading of another width or
/// not finite.
pub fn flag_then_learn(detector: &mut Novelty, x: &[f32]) -> Result<bool, Error> {
    let assessment = detector.assess(x)?;
    match assessment.score() {
        Some(score) if score.anomaly => {
            detector.observe(score.distance2)?;
            Ok(true)
        }
        _ => {
            detector.learn_assessed(x, &assessment)?;
            Ok(false)
        }
    }
}
