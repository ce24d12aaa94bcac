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

fn main() -> ExitCode {
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
            log::error(&e.to_string());
            log::error("Aborting");
            return ExitCode::FAILURE;
        }
    };
    // Signals are main's: SIGTERM and SIGINT first remove a temporary data directory (the redo
    // file, its directory, the datadir), then end the process as they would have.
    let redo_file = server.redo.path().to_path_buf();
    let mut created: Vec<&std::path::Path> = vec![&redo_file];
    created.extend(redo_file.parent());
    server.datadir.remove_on_signal(&created);
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
    listener::accept_loop(server, sock, handler);
    ExitCode::SUCCESS
}
