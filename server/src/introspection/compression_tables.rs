//! `information_schema.INNODB_CMP` and `INNODB_CMPMEM`: InnoDB's compressed-page statistics,
//! one row per compressed page size, all zero since tpbed compresses no pages (MySQL shows
//! the same rows, zero, while no table is compressed).

use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// The compressed page sizes InnoDB reports, 1 KiB to 16 KiB.
const PAGE_SIZES: [u64; 5] = [1024, 2048, 4096, 8192, 16384];

/// One zero row per page size: the size, then `zeros` zeros.
fn zero_rows(zeros: usize) -> Vec<Vec<Value>> {
    PAGE_SIZES
        .iter()
        .map(|&size| {
            std::iter::once(Value::UInt(size))
                .chain(std::iter::repeat_n(Value::UInt(0), zeros))
                .collect()
        })
        .collect()
}

/// `information_schema.INNODB_CMP`.
#[derive(Debug)]
pub struct InnodbCmp;

impl VirtualTable for InnodbCmp {
    fn name(&self) -> &'static str {
        "INNODB_CMP"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("page_size", UInt),
            ("compress_ops", UInt),
            ("compress_ops_ok", UInt),
            ("compress_time", UInt),
            ("uncompress_ops", UInt),
            ("uncompress_time", UInt),
        ]
    }
    fn rows(&self, _server: &dyn ServerView) -> Vec<Vec<Value>> {
        zero_rows(5)
    }
}

/// `information_schema.INNODB_CMPMEM` (one buffer pool instance, 0).
#[derive(Debug)]
pub struct InnodbCmpMem;

impl VirtualTable for InnodbCmpMem {
    fn name(&self) -> &'static str {
        "INNODB_CMPMEM"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("page_size", UInt),
            ("buffer_pool_instance", UInt),
            ("pages_used", UInt),
            ("pages_free", UInt),
            ("relocation_ops", UInt),
            ("relocation_time", UInt),
        ]
    }
    fn rows(&self, _server: &dyn ServerView) -> Vec<Vec<Value>> {
        zero_rows(5)
    }
}
