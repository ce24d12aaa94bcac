//! A panic inside a command fails that command, not the connection or the process: the
//! session catches it, answers ERR 1105 and logs one line. Panics outside a command (other
//! threads, start-up) keep Rust's default report.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// This thread is running a command under [`catch`].
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    /// What the hook recorded of the last panic under [`catch`]: message and location.
    static CAUGHT: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once per process) a panic hook that records a command's panic for [`catch`]
/// instead of printing it, and defers to the previous hook everywhere else.
fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(Cell::get) {
                return previous(info);
            }
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".to_owned());
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            CAUGHT.with(|c| *c.borrow_mut() = Some(format!("{msg}{at}")));
        }));
    });
}

/// Runs `f`; a panic in it comes back as `Err` with its message and location, printed
/// nowhere (the caller logs it).
pub fn catch<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    install_hook();
    let outer = CATCHING.with(|c| c.replace(true));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    r.map_err(|_| {
        CAUGHT
            .with(|c| c.borrow_mut().take())
            .unwrap_or_else(|| "a panic".to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_comes_back_as_its_message_and_location() {
        assert_eq!(catch(|| 7), Ok(7));
        let e = catch(|| {
            let v: Vec<u8> = Vec::new();
            v[std::hint::black_box(3)]
        })
        .unwrap_err();
        assert!(e.contains("index out of bounds"), "{e}");
        assert!(e.contains("panic.rs:"), "{e}");
        let e = catch(|| panic!("boom {}", 1)).unwrap_err();
        assert!(e.starts_with("boom 1 at "), "{e}");
    }
}
