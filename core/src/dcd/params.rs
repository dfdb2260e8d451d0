//! Hyper-parameters of the DCD solvers: loss, costs `C₊`/`C₋`, bias feature, stopping rule.
//!
//! Built linfa-style: [`Params::new`] gives LIBLINEAR's defaults, by-value setters change
//! them, and [`Params::check`] validates everything once and returns the [`ValidParams`]
//! every solver of this module requires.

use crate::{Error, Real};

/// The loss of the primal problem, which fixes the box and the diagonal of the dual
/// (Hsieh et al. 2008, eq. (1)–(4); seed 000, Problem 1 is the L1 case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Hinge loss `max(0, 1 − y wᵀx)` (LIBLINEAR `-s 3`): dual box `0 ≤ αᵢ ≤ Cᵢ`, `Dᵢᵢ = 0`.
    Hinge,
    /// Squared hinge loss `max(0, 1 − y wᵀx)²` (LIBLINEAR `-s 1`, its default): `αᵢ ≥ 0`
    /// without upper bound, `Dᵢᵢ = 1/(2Cᵢ)`.
    SquaredHinge,
}

/// Unchecked hyper-parameters; see [`Params::check`] for their valid ranges.
///
/// # Examples
/// ```
/// use kestrel_core::dcd::{Loss, Params};
/// // LIBLINEAR `-s 3 -c 0.5 -B 1 -e 0.01`.
/// let params = Params::new().loss(Loss::Hinge).c(0.5).bias(1.0).epsilon(0.01).check()?;
/// assert_eq!(params.c_pos(), 0.5);
/// assert!(Params::new().c(-1.0f64).check().is_err());
/// # Ok::<(), kestrel_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params<T> {
    loss: Loss,
    c: T,
    weight_pos: T,
    weight_neg: T,
    bias: T,
    epsilon: T,
    max_passes: usize,
    shrinking: bool,
}

impl<T: Real> Default for Params<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Real> Params<T> {
    /// LIBLINEAR's defaults: squared hinge loss, `C = 1`, class weights 1, no bias term
    /// (`B = 0`, LIBLINEAR's `-B -1`), `ε = 0.1`, at most 1000 passes, shrinking on.
    pub fn new() -> Self {
        Params {
            loss: Loss::SquaredHinge,
            c: T::ONE,
            weight_pos: T::ONE,
            weight_neg: T::ONE,
            bias: T::ZERO,
            epsilon: T::from_f64(0.1),
            max_passes: 1000,
            shrinking: true,
        }
    }

    /// The loss (primal) and so the dual's box and diagonal.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.loss = loss;
        self
    }

    /// The cost `C > 0` (LIBLINEAR `-c`).
    pub fn c(mut self, c: T) -> Self {
        self.c = c;
        self
    }

    /// Class weights (LIBLINEAR `-w1`, `-w-1`): `C₊ = weight_pos·C`, `C₋ = weight_neg·C`.
    pub fn class_weights(mut self, weight_pos: T, weight_neg: T) -> Self {
        self.weight_pos = weight_pos;
        self.weight_neg = weight_neg;
        self
    }

    /// The value `B ≥ 0` of the constant feature appended to every row (LIBLINEAR `-B`);
    /// its weight is regularised like the others. `B = 0` means no bias term.
    pub fn bias(mut self, bias: T) -> Self {
        self.bias = bias;
        self
    }

    /// Stopping tolerance `ε > 0` on the projected-gradient range (LIBLINEAR `-e`).
    pub fn epsilon(mut self, epsilon: T) -> Self {
        self.epsilon = epsilon;
        self
    }

    /// Cap on outer passes (LIBLINEAR's `max_iter`, 1000); reaching it is
    /// [`Exit::Capped`](super::Exit::Capped), not an error.
    pub fn max_passes(mut self, max_passes: usize) -> Self {
        self.max_passes = max_passes;
        self
    }

    /// Shrinking of Hsieh et al. Sect. 3.2 on (default) or off.
    pub fn shrinking(mut self, shrinking: bool) -> Self {
        self.shrinking = shrinking;
        self
    }

    /// Validates the parameters.
    ///
    /// # Errors
    /// `InvalidParam { name }` with `name` one of `"c"`, `"class_weights"` (unless finite
    /// and positive, also for the products `C₊`, `C₋`), `"bias"` (unless ≥ 0 with `B²` finite),
    /// `"epsilon"` (unless finite and positive), `"max_passes"` (unless ≥ 1).
    pub fn check(self) -> Result<ValidParams<T>, Error> {
        let positive = |x: T| x > T::ZERO && x.is_finite();
        if !positive(self.c) {
            return Err(Error::InvalidParam { name: "c" });
        }
        let (c_pos, c_neg) = (self.weight_pos * self.c, self.weight_neg * self.c);
        let weights_ok = positive(self.weight_pos) && positive(self.weight_neg);
        if !(weights_ok && positive(c_pos) && positive(c_neg)) {
            return Err(Error::InvalidParam { name: "class_weights" });
        }
        // B² enters Q̄ᵢᵢ, so it must be finite too.
        if !(self.bias >= T::ZERO && (self.bias * self.bias).is_finite()) {
            return Err(Error::InvalidParam { name: "bias" });
        }
        if !positive(self.epsilon) {
            return Err(Error::InvalidParam { name: "epsilon" });
        }
        if self.max_passes == 0 {
            return Err(Error::InvalidParam { name: "max_passes" });
        }
        let valid = ValidParams {
            loss: self.loss,
            c_pos,
            c_neg,
            diagonals: [T::ZERO; 2],
            bias: self.bias,
            epsilon: self.epsilon,
            max_passes: self.max_passes,
            shrinking: self.shrinking,
        };
        Ok(valid.with_costs(c_pos, c_neg))
    }
}

/// Hyper-parameters that passed [`Params::check`]: `C₊, C₋ > 0`, `B ≥ 0`, `ε > 0`, all
/// finite, at least one pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValidParams<T> {
    loss: Loss,
    c_pos: T,
    c_neg: T,
    /// `Dᵢᵢ` of the rows labelled +1 and −1 (worked out once: the squared hinge's
    /// `1/(2Cᵢ)` is a division, which a coordinate step would otherwise repeat).
    diagonals: [T; 2],
    bias: T,
    epsilon: T,
    max_passes: usize,
    shrinking: bool,
}

impl<T: Real> ValidParams<T> {
    /// The loss.
    pub fn loss(&self) -> Loss {
        self.loss
    }
    /// `C₊`, the cost of the rows labelled +1.
    pub fn c_pos(&self) -> T {
        self.c_pos
    }
    /// `C₋`, the cost of the rows labelled −1.
    pub fn c_neg(&self) -> T {
        self.c_neg
    }
    /// The bias feature `B` (0: no bias term).
    pub fn bias(&self) -> T {
        self.bias
    }
    /// The stopping tolerance `ε`.
    pub fn epsilon(&self) -> T {
        self.epsilon
    }
    /// The cap on outer passes.
    pub fn max_passes(&self) -> usize {
        self.max_passes
    }
    /// Whether shrinking is on.
    pub fn shrinking(&self) -> bool {
        self.shrinking
    }

    /// The same parameters with cost `c`, the class weights kept (`C₊ = c·w₊`,
    /// `C₋ = c·w₋`, read back from the current `C₊/C₋`'s ratio).
    ///
    /// # Errors
    /// As [`Params::check`]: `InvalidParam { name: "c" }` unless `c` is finite and positive,
    /// `"class_weights"` when a product overflows.
    pub fn with_c(self, c: T) -> Result<Self, Error> {
        let weights = Params::new().c(c).class_weights(T::ONE, self.c_neg / self.c_pos);
        let checked = weights.check()?;
        Ok(self.with_costs(checked.c_pos, checked.c_neg))
    }

    /// The same parameters with at most `max_passes` outer passes.
    ///
    /// # Errors
    /// `InvalidParam { name: "max_passes" }` for 0.
    pub fn with_max_passes(self, max_passes: usize) -> Result<Self, Error> {
        if max_passes == 0 {
            return Err(Error::InvalidParam { name: "max_passes" });
        }
        Ok(ValidParams { max_passes, ..self })
    }

    /// The same parameters with the costs weighted: `C₊·w₊` and `C₋·w₋` (LIBLINEAR's `-wi`;
    /// one-vs-rest weights the class against the rest by `w₊ = w_c`, `w₋ = 1`).
    ///
    /// # Errors
    /// `InvalidParam { name: "class_weights" }` unless both weights and both products are
    /// finite and positive.
    pub fn weighted(self, weight_pos: T, weight_neg: T) -> Result<Self, Error> {
        let positive = |x: T| x > T::ZERO && x.is_finite();
        let (c_pos, c_neg) = (self.c_pos * weight_pos, self.c_neg * weight_neg);
        if !(positive(weight_pos) && positive(weight_neg) && positive(c_pos) && positive(c_neg)) {
            return Err(Error::InvalidParam { name: "class_weights" });
        }
        Ok(self.with_costs(c_pos, c_neg))
    }

    /// The same parameters with costs `C₊ = c_pos`, `C₋ = c_neg` (checked by the caller)
    /// and the diagonals that follow from them.
    fn with_costs(self, c_pos: T, c_neg: T) -> Self {
        let diagonal = |c: T| match self.loss {
            Loss::Hinge => T::ZERO,
            Loss::SquaredHinge => T::ONE / (c + c),
        };
        ValidParams { c_pos, c_neg, diagonals: [diagonal(c_pos), diagonal(c_neg)], ..self }
    }

    /// The dual box and diagonal of a row with label `y = ±1` (`y > 0` means +1).
    pub(crate) fn coordinate(&self, y: T) -> Coordinate<T> {
        let (c, diagonal) = if y > T::ZERO { (self.c_pos, self.diagonals[0]) } else { (self.c_neg, self.diagonals[1]) };
        match self.loss {
            Loss::Hinge => Coordinate { upper: c, diagonal },
            Loss::SquaredHinge => Coordinate { upper: T::from_f64(f64::INFINITY), diagonal },
        }
    }
}

/// What one dual coordinate `αᵢ` lives in: the box `0 ≤ αᵢ ≤ upper` (`upper = ∞` for the
/// squared hinge) and the diagonal `Dᵢᵢ` added to `Qᵢᵢ` (Hsieh et al. eq. (4)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Coordinate<T> {
    pub(crate) upper: T,
    pub(crate) diagonal: T,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_liblinears() {
        let p = Params::<f64>::new().check().unwrap();
        assert_eq!(p.loss(), Loss::SquaredHinge);
        assert_eq!((p.c_pos(), p.c_neg(), p.bias()), (1.0, 1.0, 0.0));
        assert_eq!((p.epsilon(), p.max_passes(), p.shrinking()), (0.1, 1000, true));
    }

    #[test]
    fn coordinates_follow_the_loss() {
        let p = Params::new().c(2.0f32).class_weights(1.0, 0.5);
        let hinge = p.loss(Loss::Hinge).check().unwrap();
        assert_eq!(hinge.coordinate(1.0).upper, 2.0);
        assert_eq!(hinge.coordinate(-1.0).upper, 1.0);
        assert_eq!(hinge.coordinate(-1.0).diagonal, 0.0);
        let squared = p.loss(Loss::SquaredHinge).check().unwrap();
        assert_eq!(squared.coordinate(1.0).diagonal, 0.25);
        assert_eq!(squared.coordinate(-1.0).diagonal, 0.5);
        assert!(!squared.coordinate(1.0).upper.is_finite());
    }

    #[test]
    fn rejects_out_of_range() {
        let p = Params::<f64>::new();
        let name = |p: Params<f64>| match p.check() {
            Err(Error::InvalidParam { name }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(p.c(0.0)), "c");
        assert_eq!(name(p.c(f64::NAN)), "c");
        assert_eq!(name(p.class_weights(1.0, -1.0)), "class_weights");
        assert_eq!(name(p.c(1e300).class_weights(1e300, 1.0)), "class_weights");
        assert_eq!(name(p.bias(-1.0)), "bias");
        assert_eq!(name(p.bias(f64::INFINITY)), "bias");
        assert_eq!(name(p.epsilon(0.0)), "epsilon");
        assert_eq!(name(p.max_passes(0)), "max_passes");
        let valid = p.c(2.0).check().unwrap();
        assert_eq!(valid.with_max_passes(0).err(), Some(Error::InvalidParam { name: "max_passes" }));
        let fewer = valid.with_max_passes(7).unwrap();
        assert_eq!((fewer.max_passes(), fewer.c_pos(), fewer.loss()), (7, 2.0, valid.loss()));
    }
}
