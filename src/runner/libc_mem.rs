//! `memcpy`, `memmove`, `memcmp` and `bcmp` for the static musl runner
//! (scripts/build.sh). musl's x86_64 `memcpy` copies the unaligned head and
//! the tail of a short copy a byte at a time (`movsb`) around a `rep movsq`,
//! and its `memcmp` compares a byte at a time: the runner's short strings
//! (paths, rules, formatted lines) made both several times glibc's cost,
//! about 1.5 ms more a compiled fence. Defined here, the linker takes these
//! and never pulls musl's.
//!
//! Short copies load everything before they store anything, so they are
//! also correct for overlapping regions; longer ones are `rep movsb`, which
//! CPUs with ERMS/FSRM run at full speed and which copies forwards byte by
//! byte, so it is correct for a destination below its source. No loop here
//! copies or compares byte-wise in a way the compiler could turn back into a
//! call to these very functions (there is none for copies; the comparison
//! loop is of words).

use std::arch::asm;

#[inline(always)]
unsafe fn load<T: Copy>(p: *const u8) -> T {
    // SAFETY: the caller passes a pointer with size_of::<T>() readable bytes.
    unsafe { p.cast::<T>().read_unaligned() }
}

#[inline(always)]
unsafe fn store<T: Copy>(p: *mut u8, v: T) {
    // SAFETY: the caller passes a pointer with size_of::<T>() writable bytes.
    unsafe { p.cast::<T>().write_unaligned(v) }
}

/// Copies `n <= 16` bytes with two overlapping loads of the widest size that
/// fits, both made before either store.
#[inline(always)]
unsafe fn copy_short(dst: *mut u8, src: *const u8, n: usize) {
    // SAFETY (all arms): each load and store stays within the n bytes.
    unsafe {
        if n >= 8 {
            let (a, b) = (load::<u64>(src), load::<u64>(src.add(n - 8)));
            store(dst, a);
            store(dst.add(n - 8), b);
        } else if n >= 4 {
            let (a, b) = (load::<u32>(src), load::<u32>(src.add(n - 4)));
            store(dst, a);
            store(dst.add(n - 4), b);
        } else if n >= 2 {
            let (a, b) = (load::<u16>(src), load::<u16>(src.add(n - 2)));
            store(dst, a);
            store(dst.add(n - 2), b);
        } else if n == 1 {
            *dst = *src;
        }
    }
}

/// Copies `n` bytes forwards: correct unless `dst` lies inside `src..src+n`.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
pub unsafe fn copy_forward(dst: *mut u8, src: *const u8, n: usize) {
    if n <= 16 {
        // SAFETY: the caller's.
        unsafe { copy_short(dst, src, n) };
        return;
    }
    // SAFETY: the caller's; the direction flag is clear (the ABI's default).
    unsafe { asm!("rep movsb", inout("rcx") n => _, inout("rdi") dst => _, inout("rsi") src => _, options(nostack, preserves_flags)) };
}

/// Copies `n` bytes backwards, from the last: correct for any `dst` above `src`.
///
/// # Safety
/// As [`copy_forward`].
pub unsafe fn copy_backward(dst: *mut u8, src: *const u8, n: usize) {
    if n <= 16 {
        // SAFETY: the caller's.
        unsafe { copy_short(dst, src, n) };
        return;
    }
    // SAFETY: the caller's; the direction flag is set for this copy only
    // and cleared again, as the ABI requires at every call and return.
    unsafe {
        asm!("std", "rep movsb", "cld",
            inout("rcx") n => _, inout("rdi") dst.add(n - 1) => _, inout("rsi") src.add(n - 1) => _,
            options(nostack))
    };
}

/// Compares `n` bytes as unsigned bytes, as `memcmp` does.
///
/// # Safety
/// `a` and `b` readable for `n` bytes.
pub unsafe fn compare(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    // SAFETY (the loads below): each stays within the n bytes.
    while i + 8 <= n {
        let (x, y) = unsafe { (load::<u64>(a.add(i)), load::<u64>(b.add(i))) };
        if x != y {
            // Big-endian order makes the first differing byte the most
            // significant one.
            return if u64::from_be(x) < u64::from_be(y) { -1 } else { 1 };
        }
        i += 8;
    }
    while i < n {
        let (x, y) = unsafe { (*a.add(i), *b.add(i)) };
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

#[cfg(all(target_env = "musl", target_arch = "x86_64"))]
mod exported {
    use std::ffi::c_void;

    #[no_mangle]
    unsafe extern "C" fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
        // SAFETY: memcpy's contract is copy_forward's, and more.
        unsafe { super::copy_forward(dst.cast(), src.cast(), n) };
        dst
    }

    #[no_mangle]
    unsafe extern "C" fn memmove(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
        // Forwards unless the destination starts inside the source.
        // SAFETY: memmove's contract; each direction is right for its case.
        unsafe {
            if (dst as usize).wrapping_sub(src as usize) >= n {
                super::copy_forward(dst.cast(), src.cast(), n);
            } else {
                super::copy_backward(dst.cast(), src.cast(), n);
            }
        }
        dst
    }

    #[no_mangle]
    unsafe extern "C" fn memcmp(a: *const c_void, b: *const c_void, n: usize) -> i32 {
        // SAFETY: memcmp's contract is compare's.
        unsafe { super::compare(a.cast(), b.cast(), n) }
    }

    #[no_mangle]
    unsafe extern "C" fn bcmp(a: *const c_void, b: *const c_void, n: usize) -> i32 {
        // SAFETY: as memcmp.
        unsafe { super::compare(a.cast(), b.cast(), n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn copies_every_length_and_alignment_exactly_and_touches_nothing_else() {
        for n in 0..300 {
            for off in 0..8 {
                let src = pattern(n + off);
                let mut dst = vec![0xAAu8; n + 24];
                unsafe { copy_forward(dst.as_mut_ptr().add(off), src.as_ptr().add(off), n) };
                assert_eq!(&dst[off..off + n], &src[off..off + n], "n {n} off {off}");
                assert!(dst[..off].iter().chain(&dst[off + n..]).all(|&b| b == 0xAA), "n {n} off {off}: wrote outside");
                let mut back = vec![0xAAu8; n + 24];
                unsafe { copy_backward(back.as_mut_ptr().add(off), src.as_ptr().add(off), n) };
                assert_eq!(back, dst, "backwards, n {n} off {off}");
            }
        }
    }

    #[test]
    fn overlapping_moves_match_a_copy_made_through_a_buffer() {
        for n in 0..200 {
            for shift in 1..40usize {
                let base = pattern(n + shift);
                // Destination below the source: forwards.
                let mut v = base.clone();
                let want: Vec<u8> = base[shift..shift + n].to_vec();
                unsafe { copy_forward(v.as_mut_ptr(), v.as_ptr().add(shift), n) };
                assert_eq!(&v[..n], &want[..], "down n {n} shift {shift}");
                // Destination above the source: backwards.
                let mut v = base.clone();
                let want: Vec<u8> = base[..n].to_vec();
                unsafe { copy_backward(v.as_mut_ptr().add(shift), v.as_ptr(), n) };
                assert_eq!(&v[shift..shift + n], &want[..], "up n {n} shift {shift}");
            }
        }
    }

    #[test]
    fn compares_as_unsigned_bytes_with_the_first_difference_deciding() {
        for n in 0..70 {
            let a = pattern(n);
            assert_eq!(unsafe { compare(a.as_ptr(), a.clone().as_ptr(), n) }, 0, "equal, n {n}");
            for at in 0..n {
                for (x, y) in [(0u8, 1u8), (1, 0), (0x7F, 0x80), (0xFF, 0x00)] {
                    let (mut p, mut q) = (a.clone(), a.clone());
                    p[at] = x;
                    q[at] = y;
                    // A later difference the other way must not count.
                    if at + 1 < n {
                        p[n - 1] = 0x00;
                        q[n - 1] = 0xFF;
                    }
                    let got = unsafe { compare(p.as_ptr(), q.as_ptr(), n) }.signum();
                    assert_eq!(got, p.cmp(&q) as i32, "n {n} at {at} {x:#x} against {y:#x}");
                }
            }
        }
    }
}
