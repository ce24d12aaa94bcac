//! The stack-overrun check of recursive binding and evaluation, as mysqld's
//! `check_stack_overrun`: each recursive step first checks that the running thread has at
//! least [`STACK_MIN_FREE`] bytes of stack left, and fails the statement with 1436 instead of
//! overflowing (which aborts the whole process).

use std::cell::Cell;

use crate::error::{ErrorCode, SqlError, SqlResult};

/// The stack a recursive step must find free before it goes deeper.
pub const STACK_MIN_FREE: usize = 256 * 1024;

thread_local! {
    /// The running thread's stack: (lowest address, size), looked up once per thread; (0, 0)
    /// when unknown, which disables the check.
    static BOUNDS: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// The calling thread's stack bounds from pthread (Linux reports the main thread's too).
fn lookup() -> (usize, usize) {
    // SAFETY: pthread_getattr_np fills `attr` for the calling thread, pthread_attr_getstack
    // only reads it, and it is destroyed once, after a successful init.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return (0, 0);
        }
        let mut addr: *mut libc::c_void = std::ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        if ok {
            (addr as usize, size)
        } else {
            (0, 0)
        }
    }
}

/// Fails with 1436 when less than [`STACK_MIN_FREE`] bytes of the thread's stack are left.
#[inline]
pub fn check() -> SqlResult<()> {
    let marker = 0u8;
    let here = std::ptr::addr_of!(marker) as usize;
    let (low, size) = BOUNDS.with(|b| match b.get() {
        Some(v) => v,
        None => {
            let v = lookup();
            b.set(Some(v));
            v
        }
    });
    if size == 0 || here >= low + STACK_MIN_FREE {
        return Ok(());
    }
    let used = (low + size).saturating_sub(here);
    Err(SqlError::new(
        ErrorCode::StackOverrunNeedMore,
        format!(
            "Thread stack overrun:  {used} bytes used of a {size} byte stack, and \
             {STACK_MIN_FREE} bytes needed.  Use 'mysqld --thread_stack=#' to specify a \
             bigger stack."
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recurse(n: u64) -> SqlResult<u64> {
        check()?;
        let pad = std::hint::black_box([n; 64]);
        Ok(recurse(n + 1)? + pad[0])
    }

    #[test]
    fn unbounded_recursion_ends_in_1436_not_an_overflow() {
        let e = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| recurse(0))
            .unwrap()
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::StackOverrunNeedMore);
        assert!(e.message.contains("of a "), "{}", e.message);
    }
}
