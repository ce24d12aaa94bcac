//! The client thread's deadline timer: a timerfd in its epoll set, armed at an absolute
//! `CLOCK_MONOTONIC` time and re-armed only when the loop's next deadline changes. Passing the
//! deadline as a timeout to every `epoll_pwait2` instead arms a kernel timer on each wait and
//! cancels it when a reply wakes the wait first, once per wait; at a fixed `--rate` the
//! deadline is the next arrival and changes once per event, in closed loop it is the 100 ms
//! check for the stop flag, so the timer is armed once per arrival or once per 100 ms.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Instant;

use nix::errno::Errno;

/// A one-shot timerfd and the deadline it is armed for.
#[derive(Debug)]
pub(super) struct Deadline {
    fd: OwnedFd,
    armed: Option<Instant>,
    /// An `Instant` and the `CLOCK_MONOTONIC` reading taken with it (`Instant` is that clock).
    base: (Instant, libc::timespec),
}

impl Deadline {
    /// A disarmed non-blocking timerfd.
    pub(super) fn new() -> Result<Deadline, Errno> {
        // SAFETY: timerfd_create takes two integers and returns a new descriptor or -1.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(Errno::last());
        }
        // SAFETY: `fd` was just returned by timerfd_create and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid timespec to write into.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        Ok(Deadline {
            fd,
            armed: None,
            base: (Instant::now(), ts),
        })
    }

    /// The descriptor to watch for readability (readable once the deadline has passed).
    pub(super) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// Arms the timer for `at` unless it is already armed for exactly that time.
    pub(super) fn arm(&mut self, at: Instant) -> Result<(), Errno> {
        if self.armed == Some(at) {
            return Ok(());
        }
        let (base, ts) = self.base;
        let nanos = ts.tv_nsec as i128
            + at.checked_duration_since(base).map_or_else(
                || -(base.duration_since(at).as_nanos() as i128),
                |d| d.as_nanos() as i128,
            );
        let secs = ts.tv_sec as i128 + nanos.div_euclid(1_000_000_000);
        // a time at or before the clock's zero would disarm the timer: fire at once instead
        let value = if secs < 0 || (secs == 0 && nanos.rem_euclid(1_000_000_000) == 0) {
            libc::timespec {
                tv_sec: 0,
                tv_nsec: 1,
            }
        } else {
            libc::timespec {
                tv_sec: secs as libc::time_t,
                tv_nsec: nanos.rem_euclid(1_000_000_000) as libc::c_long,
            }
        };
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: value,
        };
        // SAFETY: the descriptor is a live timerfd, `spec` is a valid itimerspec, and a null old
        // value is allowed.
        let r = unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        if r < 0 {
            self.armed = None;
            return Err(Errno::last());
        }
        self.armed = Some(at);
        Ok(())
    }

    /// Called when epoll reported the timer readable: takes the expiry so the descriptor is not
    /// reported again, and forgets the deadline (the next `arm` sets a new one).
    pub(super) fn expired(&mut self) {
        let mut n = [0u8; 8];
        // SAFETY: reading at most 8 bytes into an 8-byte buffer from a live descriptor.
        let _ = unsafe { libc::read(self.fd.as_raw_fd(), n.as_mut_ptr().cast(), n.len()) };
        self.armed = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn readable(d: &Deadline, wait_ms: i32) -> bool {
        let mut p = libc::pollfd {
            fd: d.fd().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, wait_ms) == 1 }
    }

    #[test]
    fn fires_at_the_armed_instant_and_once() {
        let mut d = Deadline::new().expect("timerfd");
        let at = Instant::now() + Duration::from_millis(30);
        d.arm(at).expect("arm");
        assert!(!readable(&d, 0), "not before its time");
        assert!(readable(&d, 2_000), "fires");
        assert!(Instant::now() >= at);
        d.expired();
        assert!(!readable(&d, 50), "taken expiry is not reported again");
        // an instant already passed fires at once
        d.arm(Instant::now() - Duration::from_millis(1))
            .expect("arm");
        assert!(readable(&d, 1_000));
    }
}
