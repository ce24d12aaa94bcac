//! `tpbed-load experiment`: named, versioned experiments (scenarios and matrices in TOML) run
//! against tpbed and other MySQL-compatible servers, with counters, verdicts and reports.

pub(crate) mod counters;
pub(crate) mod matrix;
pub(crate) mod scenario;
pub(crate) mod spec;
pub(crate) mod target;
pub(crate) mod verdict;
