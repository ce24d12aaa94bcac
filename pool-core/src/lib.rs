//! Connection-handling models for tpbed: one thread per connection and MySQL's
//! thread-group pool. This crate schedules [`Session`]s and knows nothing of SQL or MySQL.

pub mod session;
pub mod sync;
pub mod wait;

pub use session::{Outcome, Session};
pub use wait::{WaitGuard, WaitKind};
