//! What a connection runs: the `Script` trait every workload implements, and its steps.

use std::time::Duration;

use crate::conn::{Param, Reply};

/// One statement to send.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    /// A text-protocol statement (COM_QUERY).
    Query(String),
    /// The script's prepared statement number `slot` (index into `Script::prepares`) with
    /// these parameters; sent as text with the values inlined when not prepared.
    Exec(usize, Vec<Param>),
}

/// What a script wants next.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Send this statement; its reply comes back through `Script::next`.
    Send(Op),
    /// Wait this long (inside the event, e.g. simulated work), then call `next(None)`.
    Sleep(Duration),
    /// The event is complete.
    EndEvent,
    /// Count an ignored error and run the event again from the start (sysbench's restart).
    Restart,
    /// End the whole run with this error (sysbench: a non-ignored error is fatal).
    Fatal(String),
}

/// How sysbench counts a statement: read (returned a result set), write (affected rows > 0)
/// or other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Returned a result set.
    Read = 0,
    /// Affected at least one row.
    Write,
    /// Anything else (BEGIN, COMMIT, a DELETE that found nothing).
    Other,
}

impl Kind {
    /// Classifies a reply the way sysbench does; `None` for errors.
    pub(crate) fn of(reply: &Reply) -> Option<Kind> {
        match reply {
            Reply::Rows { .. } => Some(Kind::Read),
            Reply::Ok { affected, .. } if *affected > 0 => Some(Kind::Write),
            Reply::Ok { .. } => Some(Kind::Other),
            _ => None,
        }
    }
}

/// A workload as seen by one connection.
pub(crate) trait Script: Send {
    /// Whether this connection runs events (an idle connection only connects and waits).
    fn active(&self) -> bool {
        true
    }
    /// Text statements to run once after connecting (e.g. `SET SESSION ...`).
    fn setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// Statements to prepare after connecting (with `--db-ps-mode=auto`); `Op::Exec(slot, ..)`
    /// refers to them by position.
    fn prepares(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether replies to the current statement must carry their rows (else only counts).
    fn wants_rows(&self) -> bool {
        false
    }
    /// Starts a new event (also after a restart).
    fn begin_event(&mut self);
    /// The next step; `last` is the reply to the previous `Step::Send` (None at the start of
    /// the event and after a `Sleep`).
    fn next(&mut self, last: Option<&Reply>) -> Step;
    /// The event this script ended with `Step::EndEvent` is over; `measured` says whether it
    /// counted (it started and ended inside the measured window). Defaults to nothing.
    fn end_event(&mut self, _measured: bool) {}
    /// Text statements to send before closing (e.g. a final flush); defaults to none.
    fn finish(&mut self) -> Vec<String> {
        Vec::new()
    }
}

/// Builds the script of each connection: `make(connection_index)`.
pub(crate) type ScriptFactory = dyn Fn(usize) -> Box<dyn Script> + Send + Sync;
