//! The demo firmware: factors a 3×3 symmetric positive-definite matrix with kestrel-core in
//! `f32`, prints the factor and `log det A` over semihosting, and exits.
//!
//! `cargo run --release` (from this crate's directory) boots it in QEMU.

#![no_std]
#![no_main]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use kestrel_core::cholesky::{Cholesky, storage_len};
use kestrel_firmware_demo::exit;

/// `A = L·Lᵀ` with `L = [[2, 0, 0], [1, 3, 0], [-1, 1, 2]]`, so `log det A = ln 144 ≈ 4.9698`.
const A: [f32; 9] = [4.0, 2.0, -2.0, 2.0, 10.0, 2.0, -2.0, 2.0, 6.0];

#[entry]
fn main() -> ! {
    match Cholesky::from_matrix_in([0.0f32; storage_len(3)], 3, &A, 3) {
        Ok(chol) => {
            hprintln!("kestrel: 3x3 Cholesky, packed L = {:?}, log det A = {}", chol.packed(), chol.log_det());
            exit(true)
        }
        Err(e) => {
            hprintln!("kestrel: 3x3 Cholesky failed: {e}");
            exit(false)
        }
    }
}
