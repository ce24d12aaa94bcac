//! `tpbed-server`: parses mysqld-style options, builds the server, binds and serves until
//! SIGTERM, SIGINT or the `SHUTDOWN` statement, then shuts down gracefully and exits 0.
//!
//! Signals are main's alone: SIGTERM and SIGINT are blocked before any thread starts (threads
//! inherit the mask) and main takes them with `sigtimedwait`; one ignored at start-up
//! (`nohup`, a background job) stays ignored.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tpbed_server::core::Reason;
use tpbed_server::server::Server;
use tpbed_server::{config, listener, log, shutdown};

/// The system allocator (mimalloc with the `mimalloc` feature), counting the bytes the
/// process holds, so the memory budget can refuse a statement before an allocation fails and
/// ends the process.
#[global_allocator]
static ALLOCATOR: tpbed_server::memory::CountingAlloc = tpbed_server::memory::CountingAlloc;

/// SIGTERM and SIGINT, less any the process was started with ignored.
fn exit_signals() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset fill a zeroed set we own; sigaction with a null new action
    // only reads the current disposition.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGTERM, libc::SIGINT] {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, std::ptr::null(), &mut old);
            if old.sa_sigaction != libc::SIG_IGN {
                libc::sigaddset(&mut set, sig);
            }
        }
        set
    }
}

/// Blocks `set` in the calling thread and every thread it starts from now on.
fn block(set: &libc::sigset_t) {
    // SAFETY: pthread_sigmask with a valid set; the old mask is not needed.
    unsafe {
        libc::pthread_sigmask(libc::SIG_BLOCK, set, std::ptr::null_mut());
    }
}

/// Waits up to `timeout` for one of the blocked signals in `set`; its number, if one came.
fn take_signal(set: &libc::sigset_t, timeout: Duration) -> Option<i32> {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: libc::c_long::from(timeout.subsec_nanos() as i32),
    };
    // SAFETY: sigtimedwait with a valid set and timeout; the siginfo is not needed.
    let sig = unsafe { libc::sigtimedwait(set, std::ptr::null_mut(), &ts) };
    (sig > 0).then_some(sig)
}

const HELP: &str = "\
tpbed-server: a MySQL-protocol test bed server (in-memory engine)

Usage: tpbed-server [--defaults-file=my.cnf] [--name=value ...]

Every system variable can be given as --name=value (dashes or underscores), as mysqld
accepts; booleans also as --name, --skip-name, --enable-name, --disable-name.
Common options:
  --port=N                  TCP port (default 3306; 0 picks a free port)
  --bind-address=ADDR       address to listen on (default 127.0.0.1)
  --thread-handling=MODE    one-thread-per-connection | pool-of-threads
  --max-connections=N       default 151
  --defaults-file=FILE      read the [mysqld] group of FILE first
  --help, --version
Unknown names in an option file are warned about and ignored; on the command line they
are an error. The server logs 'ready for connections' with the port when it listens.";

/// Allocator settings that keep the resident size and the mapped address space close to what
/// the server holds. They run from the process's initialisers, before Rust's runtime makes its
/// first allocation, because mimalloc reserves its first arena at that allocation.
///
/// mimalloc (the default; it maps large allocations on its own and purges what it frees):
/// - arenas are committed as they are used instead of all at once, which on a kernel that
///   overcommits left about 14 MB more resident after a load of 4 x 1,000,000 sysbench rows;
/// - arenas are reserved 64 MiB at a time instead of 1 GiB, and an object of 16 MiB or more is
///   mapped on its own and unmapped when freed, so the address space the server maps follows
///   what it holds (under `ulimit -v` the memory budget is derived from it, and a freed 960 MB
///   value must give its address space back).
///
/// glibc's malloc (`--no-default-features`): the mmap threshold is fixed at 128 KiB, so
/// allocations above it (a large packet's buffers, a big statement's tokens) are mapped and
/// unmapped on their own. Left dynamic, glibc raises the threshold after the first large free,
/// and the next large buffers come from the heap arenas, which keep the memory after it is
/// freed: repeated 3 MB packets held about 100 MB.
extern "C" fn tune_the_allocator() {
    #[cfg(feature = "mimalloc")]
    {
        use libmimalloc_sys::{mi_option_set, mi_option_t};
        /// Places in mimalloc.h's option list (v3, as libmimalloc-sys 0.1.49 builds it; the
        /// Rust bindings name no constants for them). If they moved, the address-space test
        /// in `memory_limits` fails: the budget would be derived from a 1 GiB first arena.
        const ARENA_EAGER_COMMIT: mi_option_t = 4;
        const ARENA_RESERVE: mi_option_t = 23;
        const ARENA_MAX_OBJECT_SIZE: mi_option_t = 45;
        // SAFETY: mi_option_set only stores an option value, read by the allocations made
        // after it.
        unsafe {
            mi_option_set(ARENA_EAGER_COMMIT, 0);
            // Both in KiB.
            mi_option_set(ARENA_RESERVE, 64 << 10);
            mi_option_set(ARENA_MAX_OBJECT_SIZE, 16 << 10);
        }
    }
    #[cfg(all(not(feature = "mimalloc"), target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; no other thread exists yet.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

/// Runs [`tune_the_allocator`] among the process's initialisers (ELF `.init_array`), before
/// `main` and before the runtime's first allocation.
#[used]
#[link_section = ".init_array"]
static TUNE_THE_ALLOCATOR: extern "C" fn() = tune_the_allocator;

fn main() -> ExitCode {
    // Purge gives freed rows back through the installed allocator's own release.
    tpbed_engine::set_release_free_memory(tpbed_server::memory::release_free_memory);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match config::parse_args(&args) {
        Ok(c) => c,
        Err(e) => {
            log::error(&e);
            return ExitCode::FAILURE;
        }
    };
    if cfg.help {
        println!("{HELP}");
        return ExitCode::SUCCESS;
    }
    if cfg.version {
        println!(
            "tpbed-server  Ver {}",
            tpbed_server::vars::system::SERVER_VERSION
        );
        return ExitCode::SUCCESS;
    }
    let signals = exit_signals();
    block(&signals);
    let server = match Server::from_config(&cfg) {
        Ok(s) => s,
        Err(e) => {
            log::error(&e.to_string());
            log::error("Aborting");
            return ExitCode::FAILURE;
        }
    };
    let nofile = listener::raise_nofile_limit();
    if let Some(id) = server.vars.lookup("open_files_limit") {
        server
            .vars
            .set_global_unchecked(id, tpbed_server::vars::VarValue::Int(nofile as i64));
    }
    let sock = match listener::bind(&server) {
        Ok(l) => l,
        Err(e) => {
            log::error(&e.to_string());
            return ExitCode::FAILURE;
        }
    };
    let port = sock.local_addr().map(|a| a.port()).unwrap_or(0);
    if let Some(id) = server.vars.lookup("port") {
        server
            .vars
            .set_global_unchecked(id, tpbed_server::vars::VarValue::Int(i64::from(port)));
    }
    let handler = match listener::start_handler(&server) {
        Ok(h) => h,
        Err(e) => {
            log::error(&format!("{e}; aborting"));
            return ExitCode::FAILURE;
        }
    };
    log::note(&format!(
        "tpbed-server: ready for connections. Version: '{}'  port: {port}  thread_handling: {}",
        tpbed_server::vars::system::SERVER_VERSION,
        server.vars.global_by_name("thread_handling").show()
    ));
    let acceptor = {
        let (server, handler) = (Arc::clone(&server), Arc::clone(&handler));
        let sock = match sock.try_clone() {
            Ok(s) => s,
            Err(e) => {
                log::error(&format!("Can't start server: listening socket: {e}"));
                return ExitCode::FAILURE;
            }
        };
        std::thread::Builder::new()
            .name("tpbed-acceptor".into())
            .spawn(move || listener::accept_loop(server, sock, handler))
    };
    let acceptor = match acceptor {
        Ok(h) => h,
        Err(e) => {
            log::error(&format!("Can't start server: acceptor thread: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let reason = loop {
        if let Some(sig) = take_signal(&signals, Duration::from_millis(100)) {
            server.shutdown.request(Reason::Signal(sig));
        }
        if let Some(r) = server.shutdown.reason() {
            break r;
        }
    };
    log::note(&match &reason {
        Reason::Signal(sig) => format!("Received signal {sig}. Shutting down."),
        Reason::Statement(user) => format!("Received SHUTDOWN from user {user}. Shutting down."),
    });
    let s = shutdown::run(
        &server,
        &sock,
        acceptor,
        &handler,
        shutdown::STATEMENT_GRACE,
    );
    log::note(&format!(
        "Shutdown: {} connections closed, {} killed when the {} s grace period ended, {} \
         transactions rolled back",
        s.closed,
        s.killed,
        shutdown::STATEMENT_GRACE.as_secs(),
        s.rolled_back
    ));
    drop(handler);
    drop(sock);
    // The last reference: dropping it stops purge and the redo log and removes a temporary
    // data directory.
    match Arc::try_unwrap(server) {
        Ok(server) => drop(server),
        Err(server) => {
            log::error(&format!(
                "Shutdown: {} references to the server remain; its data directory is kept",
                Arc::strong_count(&server) - 1
            ));
            return ExitCode::FAILURE;
        }
    }
    log::note(&format!(
        "tpbed-server: Shutdown complete (Version: '{}')",
        tpbed_server::vars::system::SERVER_VERSION
    ));
    ExitCode::SUCCESS
}
