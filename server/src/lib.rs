//! tpbed-server: the session layer, SQL front end and in-memory engine.

pub mod engine;
pub mod value;
