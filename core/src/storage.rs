//! The memory model: every structure works in storage it is given.
//!
//! A structure of the core never allocates. Its constructor takes a buffer `S` of scalars
//! and checks it against the bytes the configuration needs, which a `const fn` next to
//! each structure computes before anything is built (e.g.
//! [`Cholesky::scalars_len`](crate::Cholesky::scalars_len)). Any `S` that dereferences to a
//! mutable slice will do, so one algorithm serves three forms of storage:
//!
//! - a buffer **lent** by the caller: `&mut [T]` (a `static` region on a device, a stack
//!   array, a slice of a larger arena);
//! - an **owned fixed-capacity array** `[T; N]`, with `N` from the same `const fn`, so the
//!   structure can live in a `static` and the linker enforces the RAM budget ("if it links,
//!   it fits");
//! - on a host, a `Vec<T>` sized at run time (the core does not depend on `alloc`; `Vec`
//!   simply satisfies the same bound).
//!
//! ```
//! use kestrel_core::Cholesky;
//! // Owned: the array length is computed at compile time from the capacity.
//! let owned = Cholesky::<f32, _>::new_in([0.0f32; Cholesky::scalars_len(16)], 16)?;
//! // Lent: any mutable slice long enough.
//! let mut buf = [0.0f64; 64];
//! let lent = Cholesky::new_in(&mut buf[..], 4)?;
//! assert_eq!((owned.capacity(), lent.capacity()), (16, 4));
//! // Too small is an error, not a panic.
//! assert!(Cholesky::<f64, _>::new_in(&mut [0.0f64; 3][..], 4).is_err());
//! # Ok::<(), kestrel_core::Error>(())
//! ```

use crate::Error;

/// A buffer a structure can work in: anything that views as a mutable slice of `T`.
pub trait Storage<T>: AsRef<[T]> + AsMut<[T]> {}

impl<T, S: AsRef<[T]> + AsMut<[T]> + ?Sized> Storage<T> for S {}

/// `Ok` when a buffer of `len` items holds the `needed` ones.
pub(crate) fn check_capacity(needed: usize, len: usize) -> Result<(), Error> {
    if needed <= len { Ok(()) } else { Err(Error::CapacityExceeded { needed, capacity: len }) }
}
