//! Why a server the lab started did not come up, in the server's own words: the error line of
//! its start-up log that names the cause (MySQL, MariaDB and tpbed all end a refused start with
//! a bare `[ERROR] Aborting`, which says nothing), stripped of the timestamp and thread id.

/// Lines that only say the server gave up, not why.
const NOT_A_REASON: &[&str] = &["aborting", "aborting."];

/// The message part of a log line: what follows its `[ERROR]` / `[Warning]` tag (and a
/// MySQL/tpbed `[Server]` or `[MY-NNNNNN]` subsystem tag), or the whole line.
fn message(line: &str) -> &str {
    let mut rest = line.trim();
    for tag in ["[ERROR]", "[Error]", "[error]"] {
        if let Some((_, after)) = rest.split_once(tag) {
            rest = after.trim_start();
            break;
        }
    }
    // subsystem and code tags after the level: `[Server] `, `[MY-000067] `
    while rest.starts_with('[') {
        match rest.find(']') {
            Some(end) => rest = rest[end + 1..].trim_start(),
            None => break,
        }
    }
    rest
}

/// The reason a start failed, from the text of the server's log: the last error line that
/// says more than "Aborting"; without an error line, the last line of the log (a wrapper or a
/// shell may print its own reason). `None` when the log is empty.
pub(crate) fn start_failure(log: &str) -> Option<String> {
    let lines: Vec<&str> = log.lines().filter(|l| !l.trim().is_empty()).collect();
    let is_error = |l: &&&str| l.contains("[ERROR]") || l.contains("[Error]");
    let reason = lines
        .iter()
        .rev()
        .filter(is_error)
        .map(|l| message(l))
        .find(|m| !m.is_empty() && !NOT_A_REASON.contains(&m.to_lowercase().as_str()))
        .or_else(|| {
            lines
                .last()
                .map(|l| message(l))
                .filter(|m| !NOT_A_REASON.contains(&m.to_lowercase().as_str()))
        })?;
    Some(reason.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_the_error_before_aborting() {
        let mariadb = "2026-12-02  8:30:00 0 [Note] Starting MariaDB 10.11.19 as process 4242\n\
            2026-12-02  8:30:00 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'thread_pool_max_transactions_limit=2'\n\
            2026-12-02  8:30:00 0 [ERROR] Aborting\n";
        assert_eq!(
            start_failure(mariadb).as_deref(),
            Some("/usr/sbin/mariadbd: unknown variable 'thread_pool_max_transactions_limit=2'")
        );
        let tpbed =
            "2026-12-02T08:26:34.707438Z 0 [ERROR] [Server] unknown variable 'nosuch_var'\n\
            2026-12-02T08:26:34.707481Z 0 [ERROR] [Server] Aborting\n";
        assert_eq!(
            start_failure(tpbed).as_deref(),
            Some("unknown variable 'nosuch_var'")
        );
        let mysql =
            "2026-12-02T08:00:00.000000Z 0 [ERROR] [MY-000067] [Server] unknown variable 'x=1'.\n\
            2026-12-02T08:00:00.000001Z 0 [ERROR] [MY-010119] [Server] Aborting\n";
        assert_eq!(
            start_failure(mysql).as_deref(),
            Some("unknown variable 'x=1'.")
        );
    }

    #[test]
    fn without_an_error_line_the_last_line_speaks() {
        assert_eq!(
            start_failure("starting\nsh: 1: mariadbd: not found\n").as_deref(),
            Some("sh: 1: mariadbd: not found")
        );
        assert_eq!(start_failure(""), None);
        assert_eq!(start_failure("x [ERROR] Aborting\n"), None);
    }
}
