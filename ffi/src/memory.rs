//! Caller memory and the caller's pointers: the only place the crate dereferences a raw
//! pointer it was given.
//!
//! **Objects.** Every object of the ABI lives in a buffer the caller provides ("work"),
//! aligned to [`KESTREL_ALIGN`] bytes: the object's header first, then its buffers, each
//! starting on a `KESTREL_ALIGN` boundary. [`Layout`] computes the bytes of such a buffer
//! as a `const fn` (the header's size is a fixed upper bound per object kind, the same on
//! every target, so the C macros that size static arrays agree with it); [`Work`] checks a
//! caller's buffer against the whole layout before it writes anything (a buffer too small
//! is left as it was), clears the header's place, carves the buffers and writes the header
//! last. The handle the caller gets back is the address of the header, which starts with
//! a tag naming the object's kind: a handle of another kind, memory no constructor wrote,
//! or an object whose memory a failed constructor has since reused, is refused with
//! `KESTREL_STATUS_WRONG_OBJECT` (as far as a tag can tell: a pointer to unrelated memory
//! that happens to hold the tag cannot be told apart).
//!
//! **Inputs.** [`floats`], [`bytes`] and [`object`] turn a pointer and a length into a
//! slice or a reference after checking it is non-null and aligned; outputs are written
//! through the raw pointer ([`write`]), never through a reference, so an output that
//! overlaps an input is not undefined behaviour.
//!
//! The caller's side of the contract, which no check can verify: a pointer points to at
//! least the bytes its length says, work memory is used for nothing else while its object
//! lives, and no two calls use one object at the same time (`kestrel_model_predict` may
//! be: see the model's docs).

use core::ffi::c_void;
use core::mem::{align_of, size_of};

use crate::Status;

/// The alignment, in bytes, of every work buffer (`alignas(KESTREL_ALIGN)` in C11,
/// `__attribute__((aligned(KESTREL_ALIGN)))` in GCC's C).
pub const KESTREL_ALIGN: usize = 8;

/// The sizes a learning object's configuration asks for, as its `kestrel_*_work_bytes`
/// and `kestrel_*_checkpoint_bytes` give them to C, for Rust callers (the host's `kestrel
/// budget` and `kestrel import`); 0 for a configuration no object can have.
pub trait Sizes {
    /// The work bytes of the object on the target this library is built for.
    fn work_bytes(&self) -> usize;

    /// The work bytes on a 32-bit device (every Cortex-M): the same, unless the object holds
    /// buffers of `size_t` (4 bytes there, 8 on a 64-bit host).
    fn work_bytes_on_32_bit(&self) -> usize {
        self.work_bytes()
    }

    /// The most bytes its checkpoint takes, on every target (indices are written as 32 bits).
    fn checkpoint_bytes(&self) -> usize;

    /// Bytes of its work that hold records of handles rather than state a checkpoint
    /// keeps (a `kestrel_multiclass`'s classes' records); 0 for the others.
    fn records_bytes(&self) -> usize {
        0
    }
}

/// `n` rounded up to a multiple of [`KESTREL_ALIGN`] (saturating).
const fn aligned(n: usize) -> usize {
    match n.checked_add(KESTREL_ALIGN - 1) {
        Some(n) => n / KESTREL_ALIGN * KESTREL_ALIGN,
        None => usize::MAX,
    }
}

/// The bytes of an object in caller memory: a header of `header` bytes, then buffers of
/// `count` items, each rounded up to [`KESTREL_ALIGN`] (saturating: an impossible size is
/// `usize::MAX`, which no buffer holds).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout(usize);

impl Layout {
    /// The header of an object `O` alone.
    pub(crate) const fn of<O: Object>() -> Self {
        Layout(aligned(O::BYTES))
    }

    /// This layout followed by a buffer of `count` items of `T`.
    pub(crate) const fn then<T>(self, count: usize) -> Self {
        Layout(self.0.saturating_add(aligned(count.saturating_mul(size_of::<T>()))))
    }

    /// This layout followed by `count` slots of `slot_bytes` bytes (records whose size
    /// varies by target, each given the same room on every target).
    pub(crate) const fn then_slots(self, count: usize, slot_bytes: usize) -> Self {
        Layout(self.0.saturating_add(aligned(count.saturating_mul(slot_bytes))))
    }

    /// Bytes of the whole.
    pub(crate) const fn bytes(self) -> usize {
        self.0
    }
}

/// An item type a buffer may hold: every bit pattern of zeros is a valid value.
pub(crate) trait Zeroable: Copy {}
impl Zeroable for f32 {}
impl Zeroable for usize {}
impl Zeroable for u32 {}
impl Zeroable for u8 {}
impl Zeroable for kestrel_core::calibration::Sigmoid {}

/// A caller's work buffer being carved into an object: the header's place at the start,
/// then the buffers.
pub(crate) struct Work {
    start: *mut u8,
    len: usize,
    used: usize,
}

impl Work {
    /// The buffer of `len` bytes at `work`, to hold an object `O` of `layout` (which
    /// starts with [`Layout::of`]`::<O>()`); the header's place is cleared, so no earlier
    /// object's handle stays valid.
    ///
    /// # Safety
    /// `work` is valid for reads and writes of `len` bytes for as long as the object built
    /// in it lives, and nothing else uses that memory meanwhile.
    ///
    /// # Errors
    /// `NullPointer`, `Misaligned` (not on a [`KESTREL_ALIGN`] boundary), `BufferTooSmall`
    /// (shorter than `layout`); nothing is written then.
    pub(crate) unsafe fn new<O: Object>(work: *mut c_void, len: usize, layout: Layout) -> Result<Self, Status> {
        const { assert!(align_of::<O>() <= KESTREL_ALIGN && size_of::<O>() <= O::BYTES) };
        if work.is_null() {
            return Err(Status::NullPointer);
        }
        if !(work as usize).is_multiple_of(KESTREL_ALIGN) {
            return Err(Status::Misaligned);
        }
        let used = Layout::of::<O>().bytes();
        if used > len || layout.bytes() > len {
            return Err(Status::BufferTooSmall);
        }
        // SAFETY: `used ≤ len` bytes of the caller's buffer, by this function's contract.
        unsafe { work.cast::<u8>().write_bytes(0, used) };
        Ok(Work { start: work.cast(), len, used })
    }

    /// The next buffer: `count` items of `T`, zeroed, starting on a [`KESTREL_ALIGN`]
    /// boundary.
    ///
    /// # Errors
    /// `BufferTooSmall` when the rest of the work buffer is shorter.
    pub(crate) fn take<T: Zeroable>(&mut self, count: usize) -> Result<&'static mut [T], Status> {
        const { assert!(align_of::<T>() <= KESTREL_ALIGN) };
        let bytes = count.checked_mul(size_of::<T>()).ok_or(Status::BufferTooSmall)?;
        let end = self.used.checked_add(aligned(bytes)).filter(|&end| end <= self.len).ok_or(Status::BufferTooSmall)?;
        // SAFETY: `used + bytes ≤ len` bytes lie in the caller's buffer (`Work::new`'s
        // contract), the offset is a multiple of KESTREL_ALIGN from an aligned start, so
        // aligned for `T`, and this range is handed out once; zero bits are a valid `T`.
        let items = unsafe {
            let first = self.start.add(self.used).cast::<T>();
            first.write_bytes(0, count);
            core::slice::from_raw_parts_mut(first, count)
        };
        self.used = end;
        Ok(items)
    }

    /// The next buffer: `count` records of `T` that `make(i)` builds in turn — records
    /// whose zero bits are no value (they hold references into the work) — in `slot_bytes`
    /// bytes each as [`Layout::then_slots`] counts them, starting on a [`KESTREL_ALIGN`]
    /// boundary.
    ///
    /// # Errors
    /// `BufferTooSmall` when the rest of the work buffer is shorter; `InvalidParam` when a
    /// `T` is larger than its slot (a defect the callers' compile-time checks rule out);
    /// what `make` returns, the records made before it left in the buffer, unread.
    pub(crate) fn take_made<T>(
        &mut self,
        count: usize,
        slot_bytes: usize,
        mut make: impl FnMut(usize) -> Result<T, Status>,
    ) -> Result<&'static mut [T], Status> {
        const { assert!(align_of::<T>() <= KESTREL_ALIGN) };
        if size_of::<T>() > slot_bytes {
            return Err(Status::InvalidParam);
        }
        let bytes = count.checked_mul(slot_bytes).ok_or(Status::BufferTooSmall)?;
        let end = self.used.checked_add(aligned(bytes)).filter(|&end| end <= self.len).ok_or(Status::BufferTooSmall)?;
        // SAFETY: `used ≤ len` bytes lie in the caller's buffer (`Work::new`'s contract).
        let first = unsafe { self.start.add(self.used).cast::<T>() };
        for i in 0..count {
            let record = make(i)?;
            // SAFETY: `i < count` records of `size_of::<T>() ≤ slot_bytes` bytes lie within
            // the `bytes` checked above, at an offset that is a multiple of KESTREL_ALIGN
            // from an aligned start plus a multiple of `T`'s size: aligned for `T`; this
            // range is handed out once.
            unsafe { first.add(i).write(record) };
        }
        self.used = end;
        // SAFETY: the `count` records were written just above, in memory handed out once.
        Ok(unsafe { core::slice::from_raw_parts_mut(first, count) })
    }

    /// Writes the object's header at the start of the buffer and returns its address, the
    /// handle.
    pub(crate) fn finish<O>(self, object: O) -> *mut O {
        let header = self.start.cast::<O>();
        // SAFETY: `Work::new` checked the start is aligned (to KESTREL_ALIGN ≥ align of O)
        // and that the header's bytes fit; the buffers handed out start after them.
        unsafe { header.write(object) };
        header
    }
}

/// An object kind of the ABI: its header starts with [`Tag`] (`#[repr(C)]`, tag first).
///
/// # Safety
/// The implementing type is `#[repr(C)]` and its first field is a [`Tag`] holding
/// [`Object::TAG`] in every value a constructor writes.
pub(crate) unsafe trait Object {
    /// The tag that names this kind.
    const TAG: Tag;
    /// Bytes reserved for the header, the same on every target (the C macros that size
    /// work buffers count on it); at least the type's size, checked at compile time.
    const BYTES: usize;
}

/// The first field of every object: a number naming its kind.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag(pub(crate) u32);

/// The object behind a handle, after checking it is non-null, aligned and tagged as `O`.
///
/// # Safety
/// `handle` is null or points to at least a [`Tag`]'s bytes that are readable (a handle a
/// constructor returned, not yet reused for something else), and no other reference to
/// the object is live.
///
/// # Errors
/// `NullPointer`, `Misaligned`, `WrongObject`.
pub(crate) unsafe fn object<'a, O: Object>(handle: *const O) -> Result<&'a O, Status> {
    check_pointer(handle)?;
    // SAFETY: non-null and aligned (checked), readable for the tag (the contract); an
    // object starts with its tag (`Object`'s contract), so the tag is read where every
    // object keeps it.
    let tag = unsafe { handle.cast::<Tag>().read() };
    if tag != O::TAG {
        return Err(Status::WrongObject);
    }
    // SAFETY: the tag says a constructor wrote an `O` here.
    Ok(unsafe { &*handle })
}

/// [`object`], mutable.
///
/// # Safety
/// As [`object`], and no other reference to the object is live.
///
/// # Errors
/// As [`object`].
pub(crate) unsafe fn object_mut<'a, O: Object>(handle: *mut O) -> Result<&'a mut O, Status> {
    // SAFETY: as this function's contract.
    unsafe { object(handle)? };
    // SAFETY: checked just above; exclusive by the contract.
    Ok(unsafe { &mut *handle })
}

/// A copy of the `T` at `pointer` (a configuration: plain numbers, any bits valid).
///
/// # Safety
/// `pointer` is null or points to a readable `T`.
///
/// # Errors
/// `NullPointer`, `Misaligned`.
pub(crate) unsafe fn read<T: Copy>(pointer: *const T) -> Result<T, Status> {
    check_pointer(pointer)?;
    // SAFETY: non-null, aligned, readable by the contract.
    Ok(unsafe { pointer.read() })
}

/// The `len` floats at `x`.
///
/// # Safety
/// `x` is null or points to `len` readable floats that nothing writes during the call.
///
/// # Errors
/// `NullPointer`, `Misaligned`, `BufferTooSmall` for a length no buffer can have.
pub(crate) unsafe fn floats<'a>(x: *const f32, len: usize) -> Result<&'a [f32], Status> {
    check_pointer(x)?;
    if len > isize::MAX as usize / size_of::<f32>() {
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: non-null, aligned, and `len` readable floats by the contract.
    Ok(unsafe { core::slice::from_raw_parts(x, len) })
}

/// The `len` floats at `out`, to be written.
///
/// # Safety
/// `out` is null or points to `len` writable floats that nothing else uses during the call.
///
/// # Errors
/// `NullPointer`, `Misaligned`, `BufferTooSmall` for a length no buffer can have.
pub(crate) unsafe fn floats_mut<'a>(out: *mut f32, len: usize) -> Result<&'a mut [f32], Status> {
    check_pointer(out)?;
    if len > isize::MAX as usize / size_of::<f32>() {
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: non-null, aligned, and `len` writable floats used by nothing else, by the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(out, len) })
}

/// The `len` bytes at `bytes`.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes that nothing writes during the call.
///
/// # Errors
/// `NullPointer`, `BufferTooSmall` for a length no buffer can have.
pub(crate) unsafe fn bytes<'a>(bytes: *const u8, len: usize) -> Result<&'a [u8], Status> {
    check_pointer(bytes)?;
    if len > isize::MAX as usize {
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: non-null, and `len` readable bytes by the contract.
    Ok(unsafe { core::slice::from_raw_parts(bytes, len) })
}

/// The `len` bytes at `out`, to be written.
///
/// # Safety
/// `out` is null or points to `len` writable bytes that nothing else uses during the call.
///
/// # Errors
/// `NullPointer`, `BufferTooSmall` for a length no buffer can have.
pub(crate) unsafe fn bytes_mut<'a>(out: *mut u8, len: usize) -> Result<&'a mut [u8], Status> {
    check_pointer(out)?;
    if len > isize::MAX as usize {
        return Err(Status::BufferTooSmall);
    }
    // SAFETY: non-null, and `len` writable bytes used by nothing else, by the contract.
    Ok(unsafe { core::slice::from_raw_parts_mut(out, len) })
}

/// Writes `value` to the output `out`.
///
/// # Safety
/// `out` is null or points to a writable `T`.
///
/// # Errors
/// `NullPointer`, `Misaligned`.
pub(crate) unsafe fn write<T>(out: *mut T, value: T) -> Result<(), Status> {
    check_pointer(out)?;
    // SAFETY: non-null, aligned, writable by the contract.
    unsafe { out.write(value) };
    Ok(())
}

/// `NullPointer` or `Misaligned` for a pointer that cannot be a `T`.
pub(crate) fn check_pointer<T>(pointer: *const T) -> Result<(), Status> {
    if pointer.is_null() {
        Err(Status::NullPointer)
    } else if !pointer.is_aligned() {
        Err(Status::Misaligned)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(8))]
    struct Buffer([u8; 64]);

    /// An object of 8 bytes.
    #[repr(C)]
    struct Small(Tag, u32);

    // SAFETY: repr(C), tag first.
    unsafe impl Object for Small {
        const TAG: Tag = Tag(7);
        const BYTES: usize = 8;
    }

    /// An object larger than the tests' buffers.
    #[repr(C)]
    struct Large(Tag, [u32; 17]);

    // SAFETY: repr(C), tag first.
    unsafe impl Object for Large {
        const TAG: Tag = Tag(8);
        const BYTES: usize = 72;
    }

    #[test]
    fn layouts_round_every_part_to_the_alignment() {
        let layout = Layout::of::<Small>().then::<f32>(3).then::<u8>(1);
        assert_eq!(layout.bytes(), 8 + 16 + 8);
        assert_eq!(Layout::of::<Large>().bytes(), 72);
        assert_eq!(Layout::of::<Small>().then::<f32>(usize::MAX).bytes(), usize::MAX);
    }

    fn buffer_head(start: *mut c_void) -> [u8; 8] {
        // SAFETY: the tests' buffers hold at least 8 bytes.
        unsafe { start.cast::<[u8; 8]>().read() }
    }

    #[test]
    fn work_is_carved_in_order_and_refused_when_short() {
        let mut buffer = Buffer([0xAA; 64]);
        let start = buffer.0.as_mut_ptr().cast::<c_void>();
        // SAFETY: the buffer lives through the test and nothing else uses it.
        let mut work = unsafe { Work::new::<Small>(start, 64, Layout::of::<Small>()) }.unwrap();
        assert_eq!(buffer_head(start), [0; 8], "the header's place is cleared");
        let first = work.take::<f32>(3).unwrap();
        assert_eq!(first, [0.0; 3]);
        assert_eq!(first.as_ptr() as usize - start as usize, 8);
        assert_eq!(work.take::<u8>(41).err(), Some(Status::BufferTooSmall));
        assert_eq!(work.take::<u8>(40).unwrap().len(), 40);
        // SAFETY: as above.
        let misaligned = unsafe { Work::new::<Small>(start.cast::<u8>().add(4).cast(), 32, Layout::of::<Small>()) };
        assert_eq!(misaligned.err(), Some(Status::Misaligned));
        // SAFETY: null is refused before any access.
        let null = unsafe { Work::new::<Small>(core::ptr::null_mut(), 64, Layout::of::<Small>()) };
        assert_eq!(null.err(), Some(Status::NullPointer));
        // SAFETY: as above.
        assert_eq!(unsafe { Work::new::<Large>(start, 64, Layout::of::<Large>()) }.err(), Some(Status::BufferTooSmall));
        let mut untouched = Buffer([0xAA; 64]);
        let start = untouched.0.as_mut_ptr().cast::<c_void>();
        // SAFETY: as above.
        let short = unsafe { Work::new::<Small>(start, 64, Layout::of::<Small>().then::<f32>(15)) };
        assert_eq!((short.err(), untouched.0), (Some(Status::BufferTooSmall), [0xAA; 64]), "nothing written");
    }

    #[test]
    fn pointers_are_checked_before_use() {
        let x = [1.0f32, 2.0];
        // SAFETY: two readable floats; null and misaligned are refused before any access.
        unsafe {
            assert_eq!(floats(x.as_ptr(), 2).unwrap(), x);
            assert_eq!(floats(core::ptr::null(), 0).err(), Some(Status::NullPointer));
            let odd = x.as_ptr().cast::<u8>().add(1).cast::<f32>();
            assert_eq!(floats(odd, 1).err(), Some(Status::Misaligned));
            assert_eq!(floats(x.as_ptr(), usize::MAX).err(), Some(Status::BufferTooSmall));
        }
    }
}
