//! Where the runner's start-up allocates: a bump arena, closed once the
//! call's long-lived parts take over.
//!
//! A fenced call parses its profile and reads the kept fence and its
//! rules, then execs or settles into a loop; almost nothing
//! it allocates before that is freed before the process ends. malloc's
//! bookkeeping (and, at thousands of rules, its frees and copies on growth)
//! is work for nothing there. The arena hands out memory by moving one
//! offset; a free gives memory back only when it is the last piece handed
//! out (a growing `Vec` or `String` on top grows in place). Pages of the
//! arena are touched only as they are used (it lies in `.bss`).
//!
//! It is closed ([`Arena::close`]) where a process goes on for the whole
//! call (the supervisor's loop, the call's init, the keeper): from then on
//! everything goes to the system allocator, so a long call's memory is
//! reused as malloc reuses it and the arena stays the size start-up made
//! it. A piece of the arena freed after that is simply not reused.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The runner binary's allocator (src/bin/dsh-allow.rs hands every
/// allocation to it): 32 MiB of address space, of which a call with the
/// default profile touches well under one.
pub static START_UP: Arena<{ 32 << 20 }> = Arena::new();

/// Start-up is over in this process: what it allocates from now on goes to
/// the system allocator.
pub fn start_up_done() {
    START_UP.close();
}

/// `N` bytes handed out from the bottom up, then the system allocator.
#[repr(C, align(4096))]
pub struct Arena<const N: usize> {
    room: UnsafeCell<[u8; N]>,
    /// The offset of the first byte not handed out.
    top: AtomicUsize,
    closed: AtomicBool,
}

// SAFETY: the room is handed out in pieces that never overlap (each taken
// by a compare-and-swap of `top`), and each piece is its owner's alone;
// a piece given back (release) is handed out again only after (acquire).
unsafe impl<const N: usize> Sync for Arena<N> {}

impl<const N: usize> Arena<N> {
    pub const fn new() -> Self {
        Arena { room: UnsafeCell::new([0; N]), top: AtomicUsize::new(0), closed: AtomicBool::new(false) }
    }

    /// From now on, nothing new is handed out of the arena.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    /// How many bytes have been handed out (and not given back on top).
    pub fn used(&self) -> usize {
        self.top.load(Ordering::Acquire)
    }

    fn base(&self) -> usize {
        self.room.get() as usize
    }

    /// The offset of `p` in the arena, if it is the arena's.
    fn offset(&self, p: *mut u8) -> Option<usize> {
        let at = (p as usize).wrapping_sub(self.base());
        (at < N).then_some(at)
    }

    /// A piece of the arena for `l`, or None when closed or full.
    fn take(&self, l: Layout) -> Option<*mut u8> {
        if self.closed.load(Ordering::Acquire) {
            return None;
        }
        let mut top = self.top.load(Ordering::Acquire);
        loop {
            let start = (self.base() + top).checked_next_multiple_of(l.align())? - self.base();
            let end = start.checked_add(l.size()).filter(|&e| e <= N)?;
            match self.top.compare_exchange_weak(top, end, Ordering::AcqRel, Ordering::Acquire) {
                // SAFETY: start < end <= N: inside the room.
                Ok(_) => return Some(unsafe { self.room.get().cast::<u8>().add(start) }),
                Err(now) => top = now,
            }
        }
    }
}

impl<const N: usize> Default for Arena<N> {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: every piece is either the arena's (disjoint, aligned, of the size
// asked) or the system allocator's, told apart by address.
unsafe impl<const N: usize> GlobalAlloc for Arena<N> {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        match self.take(l) {
            Some(p) => p,
            // SAFETY: the caller's layout, passed on.
            None => unsafe { System.alloc(l) },
        }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        match self.offset(p) {
            // The last piece handed out comes back; any other stays taken.
            Some(at) => {
                let _ = self.top.compare_exchange(at + l.size(), at, Ordering::AcqRel, Ordering::Acquire);
            }
            // SAFETY: the system allocator's piece, with its layout.
            None => unsafe { System.dealloc(p, l) },
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        let Some(at) = self.offset(p) else {
            // SAFETY: the system allocator's piece, as the caller asks.
            return unsafe { System.realloc(p, l, size) };
        };
        // The last piece grows or shrinks where it is (while open, or
        // shrinking: a closed arena takes nothing more).
        let fits = at.checked_add(size).is_some_and(|e| e <= N);
        let may = size <= l.size() || !self.closed.load(Ordering::Acquire);
        if fits && may && self.top.compare_exchange(at + l.size(), at + size, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return p;
        }
        // SAFETY: the caller guarantees `size` is valid for `l.align()`.
        let moved = unsafe { self.alloc(Layout::from_size_align_unchecked(size, l.align())) };
        if !moved.is_null() {
            // SAFETY: both pieces hold at least the smaller size; they are apart.
            unsafe {
                std::ptr::copy_nonoverlapping(p, moved, l.size().min(size));
                self.dealloc(p, l);
            }
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn pieces_come_from_the_arena_in_order_and_aligned_until_it_is_full() {
        let a: Box<Arena<4096>> = Box::new(Arena::new());
        unsafe {
            let p = a.alloc(layout(10, 1));
            let q = a.alloc(layout(8, 8));
            assert!(a.offset(p).is_some() && a.offset(q).is_some());
            assert_eq!(q as usize % 8, 0);
            assert!(q as usize >= p as usize + 10);
            assert_eq!(a.used(), a.offset(q).unwrap() + 8);
            // More than is left goes to the system allocator.
            let big = a.alloc(layout(8192, 8));
            assert!(!big.is_null() && a.offset(big).is_none());
            big.write_bytes(7, 8192);
            a.dealloc(big, layout(8192, 8));
        }
    }

    #[test]
    fn only_the_last_piece_is_given_back() {
        let a: Box<Arena<4096>> = Box::new(Arena::new());
        unsafe {
            let p = a.alloc(layout(100, 1));
            let q = a.alloc(layout(100, 1));
            a.dealloc(p, layout(100, 1));
            assert_eq!(a.used(), 200, "a piece below the top stays taken");
            a.dealloc(q, layout(100, 1));
            assert_eq!(a.used(), 100);
            let r = a.alloc(layout(50, 1));
            assert_eq!(r, q, "the top is handed out again");
        }
    }

    #[test]
    fn the_last_piece_grows_in_place_and_another_moves_with_its_bytes() {
        let a: Box<Arena<4096>> = Box::new(Arena::new());
        unsafe {
            let p = a.alloc(layout(4, 1));
            p.copy_from_nonoverlapping(b"abcd".as_ptr(), 4);
            let grown = a.realloc(p, layout(4, 1), 64);
            assert_eq!(grown, p);
            assert_eq!(a.used(), a.offset(p).unwrap() + 64);
            let _above = a.alloc(layout(1, 1));
            let moved = a.realloc(p, layout(64, 1), 128);
            assert_ne!(moved, p);
            assert_eq!(std::slice::from_raw_parts(moved, 4), b"abcd");
            // Past the arena's end: to the system allocator, bytes kept.
            let out = a.realloc(moved, layout(128, 1), 10_000);
            assert!(a.offset(out).is_none());
            assert_eq!(std::slice::from_raw_parts(out, 4), b"abcd");
            a.dealloc(out, layout(10_000, 1));
        }
    }

    #[test]
    fn a_closed_arena_hands_out_nothing_but_still_knows_its_pieces() {
        let a: Box<Arena<4096>> = Box::new(Arena::new());
        unsafe {
            let p = a.alloc(layout(16, 8));
            a.close();
            let q = a.alloc(layout(16, 8));
            assert!(a.offset(q).is_none(), "after close: the system allocator");
            // Growing the arena's piece moves it out; freeing either is sound.
            let r = a.realloc(p, layout(16, 8), 32);
            assert!(a.offset(r).is_none());
            a.dealloc(r, layout(32, 8));
            a.dealloc(q, layout(16, 8));
        }
    }

    #[test]
    fn threads_never_share_a_piece() {
        static SHARED: Arena<{ 1 << 20 }> = Arena::new();
        let a = &SHARED;
        let handles: Vec<_> = (0..4u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    for _ in 0..500 {
                        let p = unsafe { a.alloc(layout(24, 8)) };
                        unsafe { p.write_bytes(t, 24) };
                        got.push(p as usize);
                    }
                    (t, got)
                })
            })
            .collect();
        let mut all = Vec::new();
        for h in handles {
            let (t, got) = h.join().unwrap();
            for &p in &got {
                let bytes = unsafe { std::slice::from_raw_parts(p as *const u8, 24) };
                assert!(bytes.iter().all(|&b| b == t), "a piece was written by another thread");
            }
            all.extend(got);
        }
        all.sort_unstable();
        assert!(all.windows(2).all(|w| w[1] - w[0] >= 24));
    }
}
