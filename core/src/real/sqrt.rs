//! The exactly rounded `f32` square root: the FPU's `vsqrt.f32` on Arm hard-float targets
//! (Cortex-M4F/M7/M33 with an FPU), `libm::sqrtf` everywhere else.
//!
//! IEEE 754 defines the square root as exactly rounded, so both give the same bits for
//! every input (NaN for a negative one; the on-device tests compare them). `libm::sqrtf` is
//! integer arithmetic, 54 instructions on a Cortex-M4F, where the FPU's instruction is one:
//! a Cholesky update takes one root per Givens rotation. Stable Rust reaches the instruction
//! only through inline assembly (`f32::sqrt` lives in `std`; `core`'s is unstable), hence the
//! crate's one `unsafe` block below.

/// `√x`, exactly rounded.
#[cfg(not(all(target_arch = "arm", target_abi = "eabihf")))]
#[inline]
pub(super) fn exact_sqrt_f32(x: f32) -> f32 {
    libm::sqrtf(x)
}

/// `√x`, exactly rounded, by `vsqrt.f32`. The hard-float ABI (`eabihf`) implies a VFP unit,
/// every version of which has the instruction; the value goes through a core register
/// because `core` does not expose the `vfp2` feature the `sreg` operand class asks for.
#[cfg(all(target_arch = "arm", target_abi = "eabihf"))]
#[allow(unsafe_code)]
#[inline]
pub(super) fn exact_sqrt_f32(x: f32) -> f32 {
    let bits: u32;
    // SAFETY: three register-to-register instructions; no memory, stack or condition flags
    // touched, and the scratch register `s15` is declared clobbered.
    unsafe {
        core::arch::asm!(
            "vmov s15, {x}",
            "vsqrt.f32 s15, s15",
            "vmov {root}, s15",
            x = in(reg) x.to_bits(),
            root = out(reg) bits,
            out("s15") _,
            options(pure, nomem, nostack, preserves_flags),
        );
    }
    f32::from_bits(bits)
}
