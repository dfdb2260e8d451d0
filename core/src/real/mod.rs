//! The scalar type of every computation: a sealed trait implemented for `f32` and `f64`.
//!
//! Transcendentals go through [`libm`] or this module's own code, so a given input gives
//! the same bits on the host and on a Cortex-M. `f64`'s `exp` (the Gaussian kernel's, most
//! of the host's kernel learners' time) is this module's own ([`exp`]: within 1 ulp,
//! branch-free, so a kernel column's loop vectorises; `libm::exp` took 76 % of a Falkon
//! solve). `f32` keeps `libm::expf`: an own `f32` version (degree-7 Taylor) measured 0.7–3.8 %
//! fewer instructions on the Cortex-M4F but up to 15 % more on the soft-float cores (M0, M3,
//! RISC-V), whose every multiply is a call. With the `micromath` feature, `f32` uses
//! micromath's fast approximations of `exp` and `sqrt` instead (for cores without an FPU;
//! less accurate).
//!
//! `hypot` (one per Givens rotation of the Cholesky updates) is this module's own, scaled
//! by powers of two and computed in the scalar itself: `libm::hypotf` widens to `f64`,
//! which is software on a single-precision FPU and costs 8× an `expf` there.
//!
//! `f32`'s square root ([`sqrt`]) is the FPU's instruction on Arm hard-float targets and
//! `libm::sqrtf` elsewhere: both exactly rounded, so the bits are the same.

mod exp;
mod sqrt;

use core::fmt::{Debug, Display};
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

mod private {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A real scalar: `f32` on the device, `f64` (default) or `f32` on the host.
///
/// Sealed: only `f32` and `f64` implement it, so every algorithm is tested on exactly the
/// types it can run on.
pub trait Real:
    private::Sealed
    + Copy
    + Default
    + PartialOrd
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + serde::Serialize
    + serde::de::DeserializeOwned
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Machine epsilon: the gap between 1 and the next representable number.
    const EPSILON: Self;
    /// The largest finite value.
    const MAX: Self;
    /// Bytes one scalar occupies.
    const BYTES: usize;

    /// Nearest representable value of `x`.
    fn from_f64(x: f64) -> Self;
    /// `self` widened (or kept) as `f64`.
    fn to_f64(self) -> f64;
    /// Square root (NaN for negative input).
    fn sqrt(self) -> Self;
    /// `e^self`.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// `sqrt(self² + other²)` without undue overflow or underflow.
    fn hypot(self, other: Self) -> Self;
    /// `self^other`.
    fn powf(self, other: Self) -> Self;
    /// Neither NaN nor infinite.
    fn is_finite(self) -> bool;

    /// `self^n` by repeated squaring (exact order of operations on every platform).
    fn powi(self, mut n: u32) -> Self {
        let mut base = self;
        let mut acc = Self::ONE;
        while n > 0 {
            if n & 1 == 1 {
                acc *= base;
            }
            base *= base;
            n >>= 1;
        }
        acc
    }
    /// The larger of the two (`self` when they compare equal or one is NaN).
    fn max_of(self, other: Self) -> Self {
        if other > self { other } else { self }
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: Self = f64::EPSILON;
    const MAX: Self = f64::MAX;
    const BYTES: usize = 8;

    fn from_f64(x: f64) -> Self {
        x
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn sqrt(self) -> Self {
        libm::sqrt(self)
    }
    #[inline]
    fn exp(self) -> Self {
        exp::exp_f64(self)
    }
    fn ln(self) -> Self {
        libm::log(self)
    }
    fn abs(self) -> Self {
        libm::fabs(self)
    }
    fn hypot(self, other: Self) -> Self {
        hypot(self, other, &F64_SCALES, libm::sqrt)
    }
    fn powf(self, other: Self) -> Self {
        libm::pow(self, other)
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const EPSILON: Self = f32::EPSILON;
    const MAX: Self = f32::MAX;
    const BYTES: usize = 4;

    #[allow(clippy::cast_possible_truncation, reason = "rounding f64 to the nearest f32 is the conversion wanted")]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[cfg(not(feature = "micromath"))]
    fn sqrt(self) -> Self {
        sqrt::exact_sqrt_f32(self)
    }
    #[cfg(feature = "micromath")]
    fn sqrt(self) -> Self {
        micromath::F32Ext::sqrt(self)
    }
    #[cfg(not(feature = "micromath"))]
    fn exp(self) -> Self {
        libm::expf(self)
    }
    #[cfg(feature = "micromath")]
    fn exp(self) -> Self {
        micromath::F32Ext::exp(self)
    }
    fn ln(self) -> Self {
        libm::logf(self)
    }
    fn abs(self) -> Self {
        libm::fabsf(self)
    }
    fn hypot(self, other: Self) -> Self {
        hypot(self, other, &F32_SCALES, sqrt::exact_sqrt_f32)
    }
    fn powf(self, other: Self) -> Self {
        libm::powf(self, other)
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
}

/// `2^e` in `f32`, exactly (`-126 ≤ e ≤ 127`).
const fn power_of_two_f32(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// `2^e` in `f64`, exactly (`-1022 ≤ e ≤ 1023`).
const fn power_of_two_f64(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// Where [`hypot`] scales, and by what: `a > large` is multiplied by `down.0` (and the root
/// by `down.1`), `a < small` by `up.0` (the root by `up.1`); all powers of two. A sum of
/// squares within `direct` comes from `small < a < large` (below).
struct HypotScales<T> {
    direct: (T, T),
    large: T,
    small: T,
    down: (T, T),
    up: (T, T),
}

/// `f32`: squares safe for `2⁻⁶⁰ ≤ a ≤ 2⁶⁰`; scaled by `2⁻⁷⁰` and `2⁹⁰` (which lifts the
/// smallest subnormal, `2⁻¹⁴⁹`, to `2⁻⁵⁹`).
const F32_SCALES: HypotScales<f32> = HypotScales {
    direct: (power_of_two_f32(-118), power_of_two_f32(118)),
    large: power_of_two_f32(60),
    small: power_of_two_f32(-60),
    down: (power_of_two_f32(-70), power_of_two_f32(70)),
    up: (power_of_two_f32(90), power_of_two_f32(-90)),
};

/// `f64`: squares safe for `2⁻⁵⁰⁰ ≤ a ≤ 2⁵⁰⁰`; scaled by `2⁻⁶⁰⁰` and `2⁷⁰⁰` (`2⁻¹⁰⁷⁴` to
/// `2⁻³⁷⁴`).
const F64_SCALES: HypotScales<f64> = HypotScales {
    direct: (power_of_two_f64(-998), power_of_two_f64(998)),
    large: power_of_two_f64(500),
    small: power_of_two_f64(-500),
    down: (power_of_two_f64(-600), power_of_two_f64(600)),
    up: (power_of_two_f64(700), power_of_two_f64(-700)),
};

/// `√(x² + y²)` without undue overflow or underflow, in `T` alone (one per Givens
/// rotation of the Cholesky updates).
///
/// With `a = max(|x|, |y|)` and `b = min(|x|, |y|)`: in the range `small ≤ a ≤ large` of
/// `scales` the squares neither overflow nor lose to underflow anything that shows beside
/// `a²`, so `√(a² + b²)` is formed as it stands; outside it both are first scaled into it
/// by a power of two (exact, except where a scaled-down `b` underflows, and then `b/a` is
/// far below the last place), and the root scaled back. Error: the roundings of the two
/// squares, the sum and the root, at most ≈ 1.5 units in the last place; the tests measure
/// it over the whole exponent range, subnormals included, against `f64` (for `f32`) and
/// `libm::hypot` (for `f64`). Unlike `libm::hypotf`, the `f32` version never widens to `f64`,
/// which a single-precision FPU computes in software (432 instructions a call on a
/// Cortex-M4F, against 13). `hypot(±∞, y) = +∞` even for a NaN `y`, as IEEE 754 says; NaN
/// otherwise propagates. `sqrt` is exactly rounded (`libm`'s or the FPU's), whatever
/// `Real::sqrt` is.
///
/// The common case first: a sum `x² + y²` within `scales.direct` (`2^±118` for `f32`)
/// implies `small < a < large` (`a² ≤ x² + y² ≤ 2a²`), where the general path forms the
/// same sum and root, so its root is returned as it stands — the same bits, a third of the
/// instructions on a Cortex-M4F. NaN and ∞ fail the range test and take the general path.
#[inline]
fn hypot<T: Real>(x: T, y: T, scales: &HypotScales<T>, sqrt: fn(T) -> T) -> T {
    let sum = x * x + y * y;
    if sum >= scales.direct.0 && sum <= scales.direct.1 {
        return sqrt(sum);
    }
    scaled_hypot(x, y, scales, sqrt)
}

/// [`hypot`]'s general path: `a` and `b` ordered, scaled by a power of two when `a` is
/// outside `small ≤ a ≤ large`.
fn scaled_hypot<T: Real>(x: T, y: T, scales: &HypotScales<T>, sqrt: fn(T) -> T) -> T {
    let (a, b) = (x.abs(), y.abs());
    if a > T::MAX {
        return a;
    }
    if b > T::MAX {
        return b;
    }
    let (a, b) = if a >= b { (a, b) } else { (b, a) };
    let (scale, unscale) = if a > scales.large {
        scales.down
    } else if a < scales.small {
        scales.up
    } else {
        return sqrt(a * a + b * b);
    };
    let (a, b) = (a * scale, b * scale);
    sqrt(a * a + b * b) * unscale
}

/// `value`, or `NonFinite` for NaN/∞ (a result that overflowed).
pub(crate) fn finite<T: Real>(value: T) -> Result<T, crate::Error> {
    if value.is_finite() { Ok(value) } else { Err(crate::Error::NonFinite) }
}

/// `Ok` when every value of `xs` is finite, `Err(NonFinite)` otherwise.
pub(crate) fn check_finite<T: Real>(xs: &[T]) -> Result<(), crate::Error> {
    if xs.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(crate::Error::NonFinite) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn powi_matches_repeated_product<T: Real>() {
        let x = T::from_f64(1.5);
        let mut expected = T::ONE;
        for n in 0..10 {
            assert_eq!(x.powi(n), expected);
            expected *= x;
        }
    }

    #[test]
    fn powi_both_scalars() {
        powi_matches_repeated_product::<f32>();
        powi_matches_repeated_product::<f64>();
    }

    /// The distance in units in the last place between two finite non-negative `f32`s.
    fn ulps(a: f32, b: f32) -> u32 {
        a.to_bits().abs_diff(b.to_bits())
    }

    #[test]
    fn f32_hypot_is_within_two_ulps_of_f64_over_every_exponent() {
        let mut rng = crate::Rng::seed_from_u64(17);
        let mut worst = 0;
        for _ in 0..200_000 {
            // Uniform bit patterns of positive finite floats: every exponent, subnormals too.
            let draw = |rng: &mut crate::Rng| f32::from_bits((rng.next_u64() as u32) % 0x7f80_0000);
            let x = draw(&mut rng);
            let y = if rng.below(4) == 0 { 0.0 } else { draw(&mut rng) };
            let reference = (f64::from(x)).hypot(f64::from(y)) as f32;
            let got = Real::hypot(x, -y);
            worst = worst.max(ulps(got, reference));
            assert!(ulps(got, reference) <= 2, "hypot({x:e}, {y:e}) = {got:e}, f64 says {reference:e}");
        }
        // Near equal magnitudes, where both squares count, at the scaling thresholds.
        for e in [-149, -140, -126, -80, -61, -60, -59, 0, 59, 60, 61, 100, 127] {
            let x = 2f64.powi(e) as f32;
            for y in [x, x * 0.75, x * 1.0e-3, f32::from_bits(x.to_bits() - 1)] {
                let reference = (f64::from(x)).hypot(f64::from(y)) as f32;
                assert!(ulps(Real::hypot(x, y), reference) <= 2, "hypot({x:e}, {y:e})");
            }
        }
        assert!(worst >= 1, "the test reached rounding at all");
    }

    /// The direct path of `hypot` gives the general path's bits wherever it is taken: pairs
    /// with every exponent and ratio, and pairs around the edges of the direct range.
    fn direct_path_is_the_general_path<T: Real>(scales: &HypotScales<T>, sqrt: fn(T) -> T, seed: u64) {
        let mut rng = crate::Rng::seed_from_u64(seed);
        let mut direct = 0;
        for i in 0..400_000 {
            let edge = if i % 2 == 0 { scales.direct.0 } else { scales.direct.1 };
            // Half the pairs near an edge (√edge times a factor in [1/2, 2)), half anywhere.
            let (x, y) = if i % 4 < 2 {
                let near = |rng: &mut crate::Rng| edge.sqrt() * T::from_f64(rng.uniform_in(0.5, 2.0));
                (near(&mut rng), near(&mut rng) * T::from_f64(rng.uniform()))
            } else {
                let e = |rng: &mut crate::Rng| rng.uniform_in(-300.0, 300.0);
                (T::from_f64(2f64.powf(e(&mut rng))), T::from_f64(2f64.powf(e(&mut rng)) * rng.uniform_in(1.0, 2.0)))
            };
            let sum = x * x + y * y;
            if sum >= scales.direct.0 && sum <= scales.direct.1 {
                direct += 1;
                let (fast, general) = (hypot(x, -y, scales, sqrt), scaled_hypot(x, -y, scales, sqrt));
                assert_eq!(fast.to_f64().to_bits(), general.to_f64().to_bits(), "hypot({x}, {y})");
            }
        }
        assert!(direct > 100_000, "the direct path was taken {direct} times");
    }

    #[test]
    fn hypot_direct_path_gives_the_general_paths_bits() {
        direct_path_is_the_general_path(&F32_SCALES, sqrt::exact_sqrt_f32, 19);
        direct_path_is_the_general_path(&F64_SCALES, libm::sqrt, 20);
    }

    #[test]
    fn f64_hypot_is_within_two_ulps_of_libm_over_every_exponent() {
        let mut rng = crate::Rng::seed_from_u64(18);
        for _ in 0..200_000 {
            let draw = |rng: &mut crate::Rng| f64::from_bits(rng.next_u64() % 0x7ff0_0000_0000_0000);
            let x = draw(&mut rng);
            let y = if rng.below(4) == 0 { 0.0 } else { draw(&mut rng) };
            let (got, reference) = (Real::hypot(x, -y), libm::hypot(x, y));
            assert!(
                got.to_bits().abs_diff(reference.to_bits()) <= 2,
                "hypot({x:e}, {y:e}) = {got:e}, libm {reference:e}"
            );
        }
    }

    fn special_values<T: Real>() {
        let (inf, nan) = (T::MAX * T::from_f64(2.0), T::from_f64(f64::NAN));
        let tiny = T::from_f64(f64::from(f32::from_bits(1)));
        assert_eq!(T::from_f64(3.0).hypot(T::from_f64(4.0)), T::from_f64(5.0));
        assert_eq!(T::ZERO.hypot(-T::ZERO), T::ZERO);
        assert_eq!(T::MAX.hypot(T::MAX), inf);
        assert_eq!(T::MAX.hypot(T::ONE), T::MAX);
        assert_eq!((-inf).hypot(nan), inf);
        assert_eq!(nan.hypot(inf), inf);
        assert!(nan.hypot(T::ONE).to_f64().is_nan() && T::ONE.hypot(nan).to_f64().is_nan());
        assert_eq!(tiny.hypot(T::ZERO), tiny);
    }

    #[test]
    fn hypot_special_values() {
        special_values::<f32>();
        special_values::<f64>();
    }

    #[test]
    fn finite_check() {
        assert!(check_finite(&[1.0f32, 2.0]).is_ok());
        assert_eq!(check_finite(&[1.0f64, f64::NAN]), Err(crate::Error::NonFinite));
        assert_eq!(check_finite(&[f32::INFINITY]), Err(crate::Error::NonFinite));
    }
}
