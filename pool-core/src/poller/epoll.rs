//! epoll backend: each connection registered `EPOLLIN | EPOLLRDHUP | EPOLLONESHOT` with its
//! token as the event data, re-armed with `EPOLL_CTL_MOD` (by the attached thread before it
//! takes the group mutex: group.rs, re-arm protocol). Invariant: the wake eventfd is
//! registered level-triggered and never drained, so once woken every poll returns at once.

use super::{new_eventfd, shutdown_fd, signal_eventfd, Poller, Token, MAX_EVENTS};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

const WAKE: u64 = u64::MAX;

/// One group's epoll set and wake fd.
#[derive(Debug)]
pub(crate) struct EpollPoller {
    epoll: Epoll,
    wake: OwnedFd,
}

fn conn_flags() -> EpollFlags {
    EpollFlags::EPOLLIN | EpollFlags::EPOLLRDHUP | EpollFlags::EPOLLONESHOT
}

fn borrowed(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: the caller holds the group mutex while the connection slot owning `fd` exists,
    // or (re-arm) owns the attached session that owns `fd`, so the descriptor stays open for
    // the duration of the epoll_ctl call.
    unsafe { BorrowedFd::borrow_raw(fd) }
}

impl EpollPoller {
    /// A new epoll set with its wake fd registered.
    pub(crate) fn new() -> io::Result<EpollPoller> {
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        let wake = new_eventfd()?;
        epoll.add(wake.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, WAKE))?;
        Ok(EpollPoller { epoll, wake })
    }
}

impl Poller for EpollPoller {
    fn register(&self, token: Token, fd: RawFd) -> io::Result<()> {
        self.epoll
            .add(borrowed(fd), EpollEvent::new(conn_flags(), token.0))?;
        Ok(())
    }

    fn rearm(&self, token: Token, fd: RawFd) -> io::Result<()> {
        let mut ev = EpollEvent::new(conn_flags(), token.0);
        self.epoll.modify(borrowed(fd), &mut ev)?;
        Ok(())
    }

    fn deregister(&self, _token: Token, fd: RawFd) -> io::Result<()> {
        self.epoll.delete(borrowed(fd))?;
        Ok(())
    }

    fn poll(&self, out: &mut Vec<Token>, block: bool) -> io::Result<()> {
        let mut events = [EpollEvent::empty(); MAX_EVENTS];
        let timeout = if block {
            EpollTimeout::NONE
        } else {
            EpollTimeout::ZERO
        };
        let n = match self.epoll.wait(&mut events, timeout) {
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => 0,
            Err(e) => return Err(e.into()),
        };
        out.extend(
            events[..n]
                .iter()
                .filter(|e| e.data() != WAKE)
                .map(|e| Token(e.data())),
        );
        Ok(())
    }

    fn wake(&self) -> io::Result<()> {
        signal_eventfd(self.wake.as_raw_fd())
    }

    fn interrupt(&self, fd: RawFd) {
        shutdown_fd(fd);
    }
}
