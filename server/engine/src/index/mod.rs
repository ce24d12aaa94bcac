//! Indexes: B+trees of in-memory pages, each page behind its own latch; records kept in key
//! order with every record inside its ancestors' separator ranges (a record in child `i` of an
//! inner page satisfies `keys[i-1] <= key < keys[i]`).

mod bulk;
mod key_buf;
mod page;
mod record;
mod tree;

#[cfg(test)]
mod tests;

pub use key_buf::KeyBuf;
pub(crate) use page::{LeafGuard, Page, Records, SLOT};
pub use page::{PageCapacity, PAGE_BYTES};
pub(crate) use record::ClusteredMut;
pub use record::{
    ClusteredRec, ClusteredRef, HintRef, Record, RecordRef, SecondaryRec, SecondaryRef,
};
pub(crate) use tree::Route;
pub use tree::{BTree, IndexStats};
