//! The acceptor: binds the listening socket, raises the open-file limit, and hands every
//! accepted connection to the connection handler.

use std::net::{TcpListener, TcpStream};
use std::sync::Arc;

use pool_core::{ConnectionHandler, ThreadPerConnection};

use crate::core::ThreadHandling;
use crate::log;
use crate::server::{Handler, Server};
use crate::session::ClientSession;
use crate::startup::StartupError;

/// Raises the soft open-file limit to the hard limit (a server holding thousands of sockets
/// needs it; the hard limit is the administrator's). Returns the new soft limit.
pub fn raise_nofile_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) => {
            if soft < hard && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
                return hard;
            }
            soft
        }
        Err(_) => 0,
    }
}

/// Binds `bind_address:port` (port 0 picks a free one) and listens with a backlog of
/// `max(back_log, max_connections)`.
///
/// MySQL autosizes `back_log` to `max_connections`; std's `listen(128)` is far below that, and
/// with a full accept queue the kernel drops the client's final handshake ACK, so a burst of
/// 1,024 connects (sysbench's thread start) left some clients waiting for the greeting until
/// their read timeout. The kernel caps the backlog at `net.core.somaxconn`.
pub fn bind(server: &Server) -> Result<TcpListener, StartupError> {
    use std::os::fd::AsRawFd;
    let addr = server.vars.global_by_name("bind_address");
    let port = server.vars.global_by_name("port").as_int();
    let host = match addr.as_str() {
        "*" | "" => "0.0.0.0",
        "localhost" => "127.0.0.1",
        other => other,
    };
    let listener = TcpListener::bind((host, port as u16)).map_err(StartupError::Bind)?;
    let backlog = server
        .vars
        .global_by_name("back_log")
        .as_int()
        .max(server.vars.global_by_name("max_connections").as_int())
        .clamp(1, 65_535) as libc::c_int;
    // SAFETY: listen(2) on a socket we own; calling it again on a listening socket only
    // changes its backlog.
    if unsafe { libc::listen(listener.as_raw_fd(), backlog) } != 0 {
        return Err(StartupError::Bind(std::io::Error::last_os_error()));
    }
    Ok(listener)
}

/// Creates the connection handler the configuration asks for and records it in the server.
pub fn start_handler(
    server: &Arc<Server>,
) -> Result<Arc<dyn ConnectionHandler<ClientSession>>, StartupError> {
    Ok(match server.thread_handling {
        ThreadHandling::Pool => {
            let p = crate::thread_pool::start(&server.vars).map_err(StartupError::ThreadPool)?;
            crate::thread_pool::register_hooks(&server.vars, &p)
                .map_err(|e| StartupError::MissingVariable(e.message))?;
            server.set_handler(Handler::Pool(p.clone()));
            p
        }
        ThreadHandling::PerConnection => {
            let size = server
                .vars
                .global_by_name("thread_cache_size")
                .as_int()
                .clamp(0, 16384) as u32;
            let h = Arc::new(ThreadPerConnection::new(size));
            let cache = Arc::clone(&h);
            server
                .vars
                .on_set("thread_cache_size", move |n: u32| {
                    cache.set_thread_cache_size(n);
                    Ok(())
                })
                .map_err(|e| StartupError::MissingVariable(e.message))?;
            server.set_handler(Handler::PerConnection(h.clone()));
            h
        }
    })
}

/// Accepts connections until a shutdown is requested (the shutdown then shuts the listening
/// socket down, which ends the wait in `accept`).
pub fn accept_loop(
    server: Arc<Server>,
    listener: TcpListener,
    handler: Arc<dyn ConnectionHandler<ClientSession>>,
) {
    for stream in listener.incoming() {
        if server.shutdown.requested() {
            return;
        }
        match stream {
            Ok(s) => admit(&server, s, handler.as_ref()),
            Err(e) => {
                // EMFILE and friends: log, back off briefly, keep serving.
                log::warning(&format!("accept failed: {e}"));
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }
}

fn admit(server: &Arc<Server>, stream: TcpStream, handler: &dyn ConnectionHandler<ClientSession>) {
    handler.add_connection(ClientSession::new(Arc::clone(server.core()), stream));
}
