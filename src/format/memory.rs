//! Allocations klf asks for rather than demands (here, in the lowest
//! layer, so that every layer can ask).
//!
//! A refused allocation ends the run (`klf: out of memory: ...`, exit
//! status 2) at once, in the allocator, before Rust's runtime prints
//! anything of its own: the `klf` binary's allocator does that for every
//! refusal made outside [`fallible`]. The allocations that grow with a
//! capture ask through [`fallible`] (`try_reserve` and the like inside it):
//! a refusal there is an error the caller handles (a partition not read, a
//! smaller window), not the end of the run.

use std::cell::Cell;

thread_local! {
    /// How deep this thread is in [`fallible`] calls.
    static FALLIBLE: Cell<u32> = const { Cell::new(0) };
}

/// Runs `f`, whose refused allocations are handled by their caller (a
/// `try_reserve`, a `read_to_end` that reports `OutOfMemory`), not fatal.
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = FALLIBLE.try_with(|c| c.set(c.get().saturating_sub(1)));
        }
    }
    let _ = FALLIBLE.try_with(|c| c.set(c.get().saturating_add(1)));
    let _leave = Leave;
    f()
}

/// Whether this thread is inside [`fallible`]: called by the allocator
/// when a request is refused (allocates nothing).
pub fn in_fallible() -> bool {
    FALLIBLE.try_with(|c| c.get() > 0).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_and_leaving() {
        assert!(!in_fallible());
        fallible(|| {
            assert!(in_fallible());
            fallible(|| assert!(in_fallible()));
            assert!(in_fallible());
        });
        assert!(!in_fallible());
        let r = std::panic::catch_unwind(|| fallible(|| panic!("inside")));
        assert!(r.is_err());
        assert!(!in_fallible());
    }
}
