//! MySQL's privilege checks: what each statement needs at the global, database and table
//! levels ([`statement`]), the session's access test with MySQL's errors (1142, 1143, 1044,
//! 1227; [`access`]), which introspection rows a session sees ([`visibility`]) and the text
//! of SHOW GRANTS and SHOW CREATE USER ([`show_grants`]). The grants themselves are stored
//! with the accounts ([`crate::accounts`]).

pub mod access;
pub mod show_grants;
pub mod statement;
pub mod visibility;
