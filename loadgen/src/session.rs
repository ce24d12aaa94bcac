//! tpbed-load generates load from a session of its own. With autogroup scheduling
//! (`/proc/sys/kernel/sched_autogroup_enabled`) every session is one CFS task group, and a
//! group's CPU weight is split over the cores its threads run on in proportion to their load.
//! A server started from the same shell shares the client's group: pinned to another core with
//! 64 runnable threads, it takes nearly all of the group's weight, and the client's one
//! event-loop thread is left a sliver of its own core against any other session's work there
//! (it waits runnable for most of each statement). In a session of its own the client's weight
//! on its core no longer depends on how many threads the server runs.
//!
//! A process that leads its process group (an interactive shell's job) cannot start a session,
//! so it forks: the child starts the session and does the work, the parent stays in the shell's
//! job as a relay. Any other process starts the session itself and forks a relay that stays in
//! the old process group. The relay forwards the signals a terminal or a job-wide `kill` sends
//! to that group (SIGINT, SIGQUIT, SIGHUP, SIGTERM) to the worker, which the new session no
//! longer reaches; relay and worker die together (`PR_SET_PDEATHSIG`). A parent relay exits
//! with the worker's status (or is killed by the worker's signal). Job control is not relayed:
//! a terminal's Ctrl-Z stops the relay, not the load.

use std::os::fd::AsRawFd;

use nix::sys::prctl;
use nix::sys::signal::{self, SigHandler, SigSet, SigmaskHow, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{self, ForkResult, Pid};

/// The signals a relay forwards; SIGCHLD only wakes a parent relay to reap the worker.
const FORWARDED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGQUIT,
    Signal::SIGHUP,
    Signal::SIGTERM,
];

/// Whether the kernel groups tasks by session for CPU scheduling.
fn autogroup_enabled() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|s| s.trim() == "1")
}

/// Moves the work of this process into a session of its own (see the module docs); a no-op
/// without autogroup scheduling or when the process already leads its session. Must be called
/// while the process has one thread. In a parent relay it does not return.
pub(crate) fn detach() {
    if !autogroup_enabled() {
        return;
    }
    let me = unistd::getpid();
    if unistd::getsid(None) == Ok(me) {
        return;
    }
    let leader = unistd::getpgrp() == me;
    let mut relayed = SigSet::empty();
    for s in FORWARDED {
        relayed.add(s);
    }
    relayed.add(Signal::SIGCHLD);
    let mut old = SigSet::empty();
    // blocked across the fork so no signal is lost to a default action; the worker unblocks
    if signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&relayed), Some(&mut old)).is_err() {
        return;
    }
    // SAFETY: the process has one thread (the caller's contract), so the child may run any code.
    match unsafe { unistd::fork() } {
        Err(_) => {}
        Ok(ForkResult::Child) if leader => {
            // the worker: dies with its relay, and not at all if the relay is already gone
            let _ = prctl::set_pdeathsig(Signal::SIGKILL);
            if unistd::getppid() != me {
                // SAFETY: _exit ends the process without running anything else.
                unsafe { libc::_exit(1) };
            }
            let _ = unistd::setsid();
        }
        Ok(ForkResult::Parent { child }) if leader => relay(child, true, &relayed),
        Ok(ForkResult::Child) => {
            let _ = prctl::set_pdeathsig(Signal::SIGKILL);
            if unistd::getppid() != me {
                // SAFETY: as above.
                unsafe { libc::_exit(0) };
            }
            relay(me, false, &relayed)
        }
        Ok(ForkResult::Parent { .. }) => {
            let _ = unistd::setsid();
        }
    }
    let _ = signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
}

/// Forwards the relayed signals to `worker` until it is gone; a `parent` relay reaps it and
/// ends as it ended. Holds no descriptor of the worker's (a pipe reader sees its end).
fn relay(worker: Pid, parent: bool, relayed: &SigSet) -> ! {
    if let Ok(null) = std::fs::File::open("/dev/null") {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors of this single-threaded process.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
    // SAFETY: closes every other descriptor; nothing in this process uses them any more.
    unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    loop {
        let Ok(sig) = relayed.wait() else { continue };
        if sig != Signal::SIGCHLD {
            if signal::kill(worker, sig).is_err() && !parent {
                // SAFETY: _exit ends the process without running anything else.
                unsafe { libc::_exit(0) };
            }
            continue;
        }
        if !parent {
            continue;
        }
        match waitpid(worker, Some(WaitPidFlag::WNOHANG)) {
            // SAFETY: as above.
            Ok(WaitStatus::Exited(_, code)) => unsafe { libc::_exit(code) },
            Ok(WaitStatus::Signaled(_, s, _)) => {
                // end as the worker ended: by its signal, with the default action
                // SAFETY: SIG_DFL is a valid disposition.
                let _ = unsafe { signal::signal(s, SigHandler::SigDfl) };
                let mut only = SigSet::empty();
                only.add(s);
                let _ = signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&only), None);
                let _ = signal::raise(s);
                // SAFETY: as above (a signal whose default is not to end the process).
                unsafe { libc::_exit(128 + s as i32) }
            }
            // SAFETY: as above.
            Err(_) => unsafe { libc::_exit(1) },
            Ok(_) => {}
        }
    }
}
