//! `tpbed-server`: parses mysqld-style options, binds, and serves until killed.

use std::process::ExitCode;

use tpbed_server::{config, listener, log, server::Server};

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

/// Fixes glibc's mmap threshold at 128 KiB: allocations above it (a large packet's
/// buffers, a big statement's tokens) are mapped and unmapped on their own. Left dynamic,
/// glibc raises the threshold after the first large free, and the next large buffers come
/// from the heap arenas, which keep the memory after it is freed: repeated 3 MB packets held
/// about 100 MB.
fn return_large_frees_to_the_os() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; it is called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

fn main() -> ExitCode {
    return_large_frees_to_the_os();
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
    let server = match Server::from_config(&cfg) {
        Ok(s) => s,
        Err(e) => {
            log::error(&e);
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
            log::error(&format!("Can't start server: Bind on TCP/IP port: {e}"));
            return ExitCode::FAILURE;
        }
    };
    let port = sock.local_addr().map(|a| a.port()).unwrap_or(0);
    if let Some(id) = server.vars.lookup("port") {
        server
            .vars
            .set_global_unchecked(id, tpbed_server::vars::VarValue::Int(i64::from(port)));
    }
    let handler = listener::start_handler(&server);
    log::note(&format!(
        "tpbed-server: ready for connections. Version: '{}'  port: {port}  thread_handling: {}",
        tpbed_server::vars::system::SERVER_VERSION,
        server.vars.global_by_name("thread_handling").show()
    ));
    listener::accept_loop(server, sock, handler);
    ExitCode::SUCCESS
}
