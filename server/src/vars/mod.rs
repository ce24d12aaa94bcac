//! System variables and status counters: one registry behind `SHOW VARIABLES`, `SET`,
//! `@@name`, `SHOW STATUS` and `FLUSH STATUS`.

pub mod idle_status;
pub mod mysql_only;
pub mod registry;
pub mod status;
pub mod system;

pub use registry::{Registry, Scope, SessionVars, VarDef, VarId, VarType, VarValue};
pub use status::{Counter, SessionCounters};
