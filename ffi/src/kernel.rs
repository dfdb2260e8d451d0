//! `kestrel_kernel`: the kernel of a learner's configuration, as C sets it.
//!
//! | `kind` | kernel | parameters |
//! |---|---|---|
//! | `KESTREL_KERNEL_KIND_RBF` | `exp(−γ‖x − x'‖²)` | `gamma > 0` |
//! | `KESTREL_KERNEL_KIND_LAPLACIAN` | `exp(−γ‖x − x'‖₁)` | `gamma > 0` |
//! | `KESTREL_KERNEL_KIND_POLYNOMIAL` | `(γ·xᵀx' + coef0)^degree` | `gamma > 0`, `degree ≥ 1` |
//! | `KESTREL_KERNEL_KIND_LINEAR` | `xᵀx'` | none |

use kestrel_core::Kernel;

use crate::Status;

/// The kernels, by the value of [`KernelConfig::kind`].
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Gaussian: `exp(−γ‖x − x'‖²)`.
    Rbf = 1,
    /// Laplacian: `exp(−γ‖x − x'‖₁)`.
    Laplacian = 2,
    /// Polynomial: `(γ·xᵀx' + coef0)^degree`.
    Polynomial = 3,
    /// Linear: `xᵀx'`.
    Linear = 4,
}

impl KernelKind {
    /// The kind whose value is `value`, `None` for no kind.
    pub const fn of(value: u32) -> Option<Self> {
        match value {
            1 => Some(KernelKind::Rbf),
            2 => Some(KernelKind::Laplacian),
            3 => Some(KernelKind::Polynomial),
            4 => Some(KernelKind::Linear),
            _ => None,
        }
    }

    /// Its constant's name in `kestrel.h`.
    pub const fn c_name(self) -> &'static str {
        match self {
            KernelKind::Rbf => "KESTREL_KERNEL_KIND_RBF",
            KernelKind::Laplacian => "KESTREL_KERNEL_KIND_LAPLACIAN",
            KernelKind::Polynomial => "KESTREL_KERNEL_KIND_POLYNOMIAL",
            KernelKind::Linear => "KESTREL_KERNEL_KIND_LINEAR",
        }
    }
}

/// A kernel and its parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct KernelConfig {
    /// A `kestrel_kernel_kind` value.
    pub kind: u32,
    /// `γ` (RBF, Laplacian, polynomial).
    pub gamma: f32,
    /// The polynomial's degree.
    pub degree: u32,
    /// The polynomial's constant term.
    pub coef0: f32,
}

impl KernelConfig {
    /// The Gaussian kernel of width `gamma`.
    pub(crate) const fn rbf(gamma: f32) -> Self {
        KernelConfig { kind: KernelKind::Rbf as u32, gamma, degree: 3, coef0: 0.0 }
    }

    /// The core's kernel.
    ///
    /// # Errors
    /// `InvalidParam` for an unknown kind or a parameter out of range.
    pub(crate) fn build(&self) -> Result<Kernel<f32>, Status> {
        let kernel = match KernelKind::of(self.kind).ok_or(Status::InvalidParam)? {
            KernelKind::Rbf => Kernel::rbf(self.gamma),
            KernelKind::Laplacian => Kernel::laplacian(self.gamma),
            KernelKind::Polynomial => Kernel::polynomial(self.degree, self.gamma, self.coef0),
            KernelKind::Linear => Ok(Kernel::linear()),
        };
        Ok(kernel?)
    }
}

#[cfg(test)]
mod tests {
    use kestrel_core::KernelKind as Core;

    use super::*;

    #[test]
    fn every_kind_builds_and_an_unknown_one_is_refused() {
        let config = |kind: u32| KernelConfig { kind, gamma: 0.5, degree: 2, coef0: 1.0 };
        assert!(matches!(config(1).build().unwrap().kind(), Core::Rbf { .. }));
        assert!(matches!(config(2).build().unwrap().kind(), Core::Laplacian { .. }));
        assert!(matches!(config(3).build().unwrap().kind(), Core::Polynomial { degree: 2, .. }));
        assert!(matches!(config(4).build().unwrap().kind(), Core::Linear));
        assert_eq!(config(0).build().err(), Some(Status::InvalidParam));
        assert_eq!(KernelConfig { gamma: -1.0, ..KernelConfig::rbf(1.0) }.build().err(), Some(Status::InvalidParam));
    }
}
