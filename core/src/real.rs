//! The scalar type of every computation: a sealed trait implemented for `f32` and `f64`.
//!
//! Transcendentals go through [`libm`], so a given input gives the same bits on the host
//! and on a Cortex-M. With the `micromath` feature, `f32` uses micromath's fast
//! approximations of `exp` and `sqrt` instead (for cores without an FPU; less accurate).

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
    fn exp(self) -> Self {
        libm::exp(self)
    }
    fn ln(self) -> Self {
        libm::log(self)
    }
    fn abs(self) -> Self {
        libm::fabs(self)
    }
    fn hypot(self, other: Self) -> Self {
        libm::hypot(self, other)
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
        libm::sqrtf(self)
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
        libm::hypotf(self, other)
    }
    fn powf(self, other: Self) -> Self {
        libm::powf(self, other)
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
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

    #[test]
    fn finite_check() {
        assert!(check_finite(&[1.0f32, 2.0]).is_ok());
        assert_eq!(check_finite(&[1.0f64, f64::NAN]), Err(crate::Error::NonFinite));
        assert_eq!(check_finite(&[f32::INFINITY]), Err(crate::Error::NonFinite));
    }
}
