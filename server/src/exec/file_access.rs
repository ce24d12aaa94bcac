//! Which server-side files the file statements may touch: the FILE privilege (refused with
//! 1045, as MySQL does), `secure_file_priv` (empty: anywhere; `NULL`: nowhere; a directory:
//! only below it, else 1290), and where a relative name points (the data directory).

use std::path::{Path, PathBuf};

use crate::accounts::PrivSet;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};

/// 1045 unless the session has the global FILE privilege (MySQL answers a missing FILE
/// privilege with the access-denied error of a failed login).
pub(crate) fn require_file_privilege(st: &Context) -> SqlResult<()> {
    if st.privileges.global.contains(PrivSet::FILE) {
        return Ok(());
    }
    Err(crate::privileges::access::account_denied(st))
}

/// 1290 naming `--secure-file-priv`.
fn prevented() -> SqlError {
    SqlError::new(
        ErrorCode::OptionPreventsStatement,
        "The MySQL server is running with the --secure-file-priv option so it cannot execute \
         this statement",
    )
}

/// The path a file name in a statement names: absolute as written, relative to the data
/// directory otherwise.
pub(crate) fn resolve(st: &Context, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    let datadir = st.core.vars.global_by_name("datadir");
    Path::new(datadir.as_str()).join(p)
}

/// Checks `path` against `secure_file_priv`: with symbolic links and `..` resolved, an
/// existing file (input) or the directory of a new one (output) must lie under it.
pub(crate) fn check_secure(st: &Context, path: &Path) -> SqlResult<()> {
    let priv_dir = st.core.vars.global_by_name("secure_file_priv");
    let priv_dir = priv_dir.as_str();
    if priv_dir.is_empty() {
        return Ok(());
    }
    if priv_dir.eq_ignore_ascii_case("NULL") {
        return Err(prevented());
    }
    let Ok(allowed) = Path::new(priv_dir).canonicalize() else {
        return Err(prevented());
    };
    let real = path.canonicalize().or_else(|_| {
        let dir = path.parent().unwrap_or(Path::new("/"));
        dir.canonicalize()
    });
    match real {
        Ok(real) if real.starts_with(&allowed) => Ok(()),
        Ok(_) => Err(prevented()),
        // A directory that does not exist cannot hold the file: the open reports it.
        Err(_) => Ok(()),
    }
}

/// The OS error text MySQL prints after an errno: "(OS errno 2 - No such file or directory)".
pub(crate) fn os_error(e: &std::io::Error) -> String {
    let code = e.raw_os_error().unwrap_or(0);
    let text = e.to_string();
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    format!("(OS errno {code} - {text})")
}
