//! Numbers for humans without float formatting: [`Fixed`] prints an `f32` with a fixed
//! number of decimals through integer arithmetic, so the demo does not link core's float
//! formatting machinery (several KiB of flash) to print an error figure.

use core::fmt;

/// `value` with `decimals` (at most 6) digits after the point, rounded half away from
/// zero; `nan`, `inf` and `-inf` as such, and magnitudes from 2³¹/10^decimals up as `big`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fixed {
    /// The number.
    pub value: f32,
    /// Digits after the point.
    pub decimals: u8,
}

impl Fixed {
    /// `value` with `decimals` digits after the point (6 at most).
    pub fn new(value: f32, decimals: u8) -> Self {
        Fixed { value, decimals: decimals.min(6) }
    }
}

impl fmt::Display for Fixed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.value;
        if v.is_nan() {
            return f.write_str("nan");
        }
        if v.is_infinite() {
            return f.write_str(if v > 0.0 { "inf" } else { "-inf" });
        }
        let scale = 10u32.pow(u32::from(self.decimals));
        let scaled = libm::roundf(libm::fabsf(v) * scale as f32);
        if scaled >= 2_147_483_648.0 {
            return f.write_str("big");
        }
        let scaled = scaled as u32;
        let sign = if v < 0.0 && scaled != 0 { "-" } else { "" };
        let (whole, fraction) = (scaled / scale, scaled % scale);
        if self.decimals == 0 {
            write!(f, "{sign}{whole}")
        } else {
            write!(f, "{sign}{whole}.{fraction:0width$}", width = usize::from(self.decimals))
        }
    }
}
