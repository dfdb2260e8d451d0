//! A small seeded pseudo-random generator with the same output on every platform.
//!
//! xoshiro256++ (Blackman & Vigna, 2019) seeded through SplitMix64, exactly as the
//! reference C code and the `rand_xoshiro` crate's `seed_from_u64` do (a test checks the
//! streams agree). Integer arithmetic only, so a seed gives the same samples on x86-64 and
//! on a Cortex-M. Not cryptographic.
//!
//! Memory: 32 bytes.

use crate::Real;

/// The core's deterministic random number generator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    state: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::Rng;
    /// let mut a = Rng::seed_from_u64(7);
    /// let mut b = Rng::seed_from_u64(7);
    /// assert_eq!(a.next_u64(), b.next_u64());
    /// ```
    pub fn seed_from_u64(seed: u64) -> Self {
        let mut sm = seed;
        let mut state = [0u64; 4];
        for word in &mut state {
            *word = splitmix64(&mut sm);
        }
        Rng { state }
    }

    /// The generator's whole state, to save it (e.g. in a checkpoint) and continue the
    /// same stream later with [`from_state`](Self::from_state).
    ///
    /// # Examples
    /// ```
    /// use kestrel_core::Rng;
    /// let mut a = Rng::seed_from_u64(7);
    /// a.next_u64();
    /// let mut b = Rng::from_state(a.state())?;
    /// assert_eq!(a.next_u64(), b.next_u64());
    /// # Ok::<(), kestrel_core::Error>(())
    /// ```
    pub fn state(&self) -> [u64; 4] {
        self.state
    }

    /// A generator continuing from a saved [`state`](Self::state).
    ///
    /// # Errors
    /// `InvalidParam { name: "state" }` for the all-zero state, which xoshiro256++ never
    /// reaches (it would output zeros forever).
    pub fn from_state(state: [u64; 4]) -> Result<Self, crate::Error> {
        if state == [0; 4] {
            return Err(crate::Error::InvalidParam { name: "state" });
        }
        Ok(Rng { state })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[0, 1)` as the scalar type `T`.
    pub fn uniform<T: Real>(&mut self) -> T {
        let u = T::from_f64(self.next_f64());
        // f32 rounding can turn 1 - 2^-53 into 1.0; keep the interval half-open.
        if u < T::ONE { u } else { T::ZERO }
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform_in<T: Real>(&mut self, lo: T, hi: T) -> T {
        lo + (hi - lo) * self.uniform::<T>()
    }

    /// Standard normal sample (Box–Muller, one of the pair).
    pub fn normal<T: Real>(&mut self) -> T {
        // 1 - u lies in (0, 1], so the logarithm is finite.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        let r = libm::sqrt(-2.0 * libm::log(u1));
        T::from_f64(r * libm::cos(core::f64::consts::TAU * u2))
    }

    /// Uniform integer in `0..n`, without modulo bias (Lemire's method).
    /// Returns 0 when `n` is 0.
    #[allow(
        clippy::cast_possible_truncation,
        reason = "the low 64 bits of the product are wanted; its high half is below n, a usize"
    )]
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let n = n as u64;
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as usize;
            }
        }
    }

    /// Shuffles `items` in place (Fisher–Yates): every permutation equally likely.
    pub fn shuffle<E>(&mut self, items: &mut [E]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_xoshiro::Xoshiro256PlusPlus;
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};

    #[test]
    fn matches_reference_xoshiro256plusplus() {
        for seed in [0u64, 1, 42, u64::MAX] {
            let mut ours = Rng::seed_from_u64(seed);
            let mut reference = Xoshiro256PlusPlus::seed_from_u64(seed);
            for _ in 0..1000 {
                assert_eq!(ours.next_u64(), reference.next_u64());
            }
        }
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::seed_from_u64(3);
        let mut seen = [0usize; 7];
        for _ in 0..7000 {
            let k = rng.below(7);
            assert!(k < 7);
            seen[k] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800 && c < 1200), "{seen:?}");
        assert_eq!(rng.below(0), 0);
    }

    #[test]
    fn uniform_is_half_open_and_normal_has_unit_variance() {
        let mut rng = Rng::seed_from_u64(9);
        let n = 20_000;
        let (mut sum, mut sum_sq) = (0.0f64, 0.0f64);
        for _ in 0..n {
            let u: f32 = rng.uniform();
            assert!((0.0..1.0).contains(&u));
            let z: f64 = rng.normal();
            sum += z;
            sum_sq += z * z;
        }
        let mean = sum / n as f64;
        let var = sum_sq / n as f64 - mean * mean;
        assert!(mean.abs() < 0.03 && (var - 1.0).abs() < 0.05, "{mean} {var}");
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut rng = Rng::seed_from_u64(5);
        let mut v = [0usize, 1, 2, 3, 4, 5, 6, 7, 8, 9];
        rng.shuffle(&mut v);
        let mut sorted = v;
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_ne!(v, sorted);
    }
}
