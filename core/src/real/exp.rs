//! `e^x` for `f64` without tables or branches, so the same bits come out on every platform
//! and a loop of them (a kernel column) vectorises.
//!
//! **Method** (Cody & Waite's reduction, then a polynomial): `k = round(x·log₂e)`,
//! `r = x − k·ln2` with `ln2` split in a high part of few significant bits (so `k·ln2_hi` is
//! exact) and a low part, `|r| ≤ ½ln2`; `e^r` by its Taylor series to degree 13
//! (truncation `(½ln2)¹⁴/14! ≈ 4·10⁻¹⁸`), in Horner form; then `e^x = e^r·2^k`, the power of
//! two built from its exponent bits in two halves `2^h·2^(k−h)`, `h = k/2` rounded, so results
//! that overflow become `∞` and those that underflow pass through the subnormals to 0 as the
//! product rounds them. `k` and `h` are rounded by adding and subtracting `1.5·2^52`, whose
//! bits then hold them as integers. The input is clamped first to where the result is still
//! `∞` or 0 at the ends; NaN stays NaN.
//!
//! **Accuracy**: within 1 ulp of `std`'s and `libm`'s `e^x` over the whole range, as the
//! tests measure it.

/// `e^x` for `f64`.
#[inline]
pub fn exp_f64(x: f64) -> f64 {
    const LOG2E: f64 = core::f64::consts::LOG2_E;
    // ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 significant bits (its low 20 bits zero):
    // k·LN2_HI is exact for |k| < 2^21.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    const ROUND: f64 = 6_755_399_441_055_744.0; // 1.5·2^52
    // 1/j! for j = 13 down to 2.
    const C: [f64; 12] = [
        1.0 / 6_227_020_800.0,
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5_040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
    ];
    // NaN passes the clamp and every step after it: the result is NaN.
    let clamped = x.clamp(-746.0, 710.0);
    let k_float = (clamped * LOG2E + ROUND) - ROUND;
    // 2^k = 2^h·2^(k−h), h = k/2 rounded: each half's exponent stays in range. Both halves
    // are rounded by the shift, whose bits then hold them as integers: no integer shift
    // (which SSE2 lacks for 64-bit lanes) in the vectorised loop.
    let half_shifted = k_float * 0.5 + ROUND;
    let rest_shifted = (k_float - (half_shifted - ROUND)) + ROUND;
    let r = (clamped - k_float * LN2_HI) - k_float * LN2_LO;
    let mut p = C[0];
    for c in &C[1..] {
        p = p * r + c;
    }
    let er = (p * r * r + r) + 1.0;
    // The low bits of `ROUND + e` hold `e` in two's complement; `e + 1023` in the exponent
    // field is `2^e` (`e` lies in −538..=512 for the clamped input).
    let power = |shifted: f64| f64::from_bits(shifted.to_bits().wrapping_sub(ROUND.to_bits()).wrapping_add(1023) << 52);
    er * power(half_shifted) * power(rest_shifted)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::Rng;

    /// Distance in units in the last place between two positive finite values (or both
    /// infinite, or both zero).
    fn ulps_f64(a: f64, b: f64) -> u64 {
        a.to_bits().abs_diff(b.to_bits())
    }

    /// Against std's `exp` (the platform's libm) and the `libm` crate on a sweep of the
    /// whole range, random points in the kernels' usual range `[−50, 0]`, and edges.
    #[test]
    fn f64_is_within_one_ulp() {
        let mut rng = Rng::seed_from_u64(1);
        let sweep = (0..200_001).map(|i| -745.0 + 1455.0 * f64::from(i) / 200_000.0);
        let random = (0..200_000).map(|_| rng.uniform_in(-50.0, 0.0));
        let mut worst = 0;
        for x in sweep.chain(random).chain([0.0, -0.0, 1e-300, -1e-300, 709.78, -708.4, -745.0, 1.0, -1.0]) {
            let (ours, reference) = (exp_f64(x), std::primitive::f64::exp(x));
            let error = ulps_f64(ours, reference).max(ulps_f64(ours, libm::exp(x)));
            assert!(error <= 2, "exp({x:e}) = {ours:e}, reference {reference:e}: {error} ulps");
            worst = worst.max(error);
        }
        // Measured: 1 ulp.
        assert!(worst <= 1, "worst {worst} ulps");
    }

    #[test]
    fn edges() {
        assert_eq!(exp_f64(0.0), 1.0);
        assert!(exp_f64(f64::NAN).is_nan());
        assert_eq!((exp_f64(f64::INFINITY), exp_f64(f64::NEG_INFINITY)), (f64::INFINITY, 0.0));
        assert_eq!((exp_f64(710.0), exp_f64(-746.0)), (f64::INFINITY, 0.0));
        // Subnormal results, as the reference gives them.
        for x in [-710.0, -730.0, -744.0] {
            assert!(ulps_f64(exp_f64(x), std::primitive::f64::exp(x)) <= 2, "{x}");
        }
    }
}
