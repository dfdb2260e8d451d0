//! The demo's two learners, their configuration, and the statics that hold them.
//!
//! - [`Regressor`]: windowed SLKL predicting the die temperature from the three
//!   acceleration axes — window `N` = [`WINDOW`], `M` = [`CENTRES`] candidate centres
//!   (all of which may become active), `d` = [`DIM`], `f32`.
//! - [`Classifier`]: windowed DCD linear SVM predicting the tilt alarm from the same
//!   axes, same window.
//!
//! Every buffer is a static whose length is a `const fn` of the configuration
//! ([`SlklWindow::scalars_len`], [`SlklWindow::indices_len`], [`OnlineSvm::scalars_len`]), so the
//! linker places them in `.bss` and refuses a configuration that does not fit the RAM of
//! the target's memory layout (`memory/`). The learner structs themselves (a few hundred
//! bytes of bookkeeping over borrowed buffers) live in statics too; nothing learner-sized is
//! on the stack. `kestrel budget --learner slkl|svm --dim 3 --window 128 --centers 32
//! --scalar f32 --target cortex-m` (4-byte indices, as on every target here) reports the
//! buffers' bytes before anything is built; `run-qemu-tests.sh` checks it against these
//! symbols' sizes in the ELF.
//!
//! Statics are taken once ([`ConstStaticCell`], [`StaticCell`]), never `static mut`.

use kestrel_core::dcd::{self, OnlineSvm};
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
/// SLKL's capacities.
pub const SLKL_DIMS: Dims = Dims::new(WINDOW, DIM, CENTRES, CENTRES);
/// Scalars of SLKL's buffer.
pub const SLKL_SCALARS_LEN: usize = SlklWindow::scalars_len(SLKL_DIMS);
/// Indices of SLKL's buffer.
pub const SLKL_INDICES_LEN: usize = SlklWindow::indices_len(SLKL_DIMS);
/// Scalars of the SVM's buffer.
pub const SVM_SCALARS_LEN: usize = OnlineSvm::scalars_len(WINDOW, DIM);

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

static SLKL_SCALARS: ConstStaticCell<[f32; SLKL_SCALARS_LEN]> = ConstStaticCell::new([0.0; SLKL_SCALARS_LEN]);
static SLKL_INDICES: ConstStaticCell<[usize; SLKL_INDICES_LEN]> = ConstStaticCell::new([0; SLKL_INDICES_LEN]);
static SLKL_LEARNER: StaticCell<Regressor> = StaticCell::new();
static SVM_SCALARS: ConstStaticCell<[f32; SVM_SCALARS_LEN]> = ConstStaticCell::new([0.0; SVM_SCALARS_LEN]);
static SVM_LEARNER: StaticCell<Classifier> = StaticCell::new();

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
