//! What each table holds in memory, as `information_schema.TABLES` (`TABLE_ROWS`,
//! `AVG_ROW_LENGTH`, `DATA_LENGTH`, `INDEX_LENGTH`, `DATA_FREE`), `PARTITIONS`, `SHOW TABLE
//! STATUS` and `information_schema.INNODB_TABLESTATS` report it: all from one
//! [`Table::footprint`] walk per table and read, so they agree with each other and with the
//! engine.
//!
//! DATA_LENGTH is the clustered index (records with their rows, reserved slots, pages);
//! INDEX_LENGTH every secondary index; DATA_FREE the part of both that holds no record (a
//! page's unused slots, including those purge emptied). InnoDB's page counts are those bytes
//! in 16 KiB pages, rounded up.

use std::sync::Arc;

use crate::engine::table::footprint::TableFootprint;
use crate::engine::Table;
use crate::introspection::innodb_tables::tables;
use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// InnoDB's page size (`innodb_page_size`'s default), the unit of INNODB_TABLESTATS' sizes.
pub const PAGE_SIZE: u64 = 16 << 10;

/// A table's size figures, as the information_schema columns of the same names hold them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSizes {
    /// `TABLE_ROWS`: live rows (delete-marked ones not counted).
    pub rows: u64,
    /// `AVG_ROW_LENGTH`: `DATA_LENGTH / TABLE_ROWS` (0 for an empty table), as MySQL computes it.
    pub avg_row_length: u64,
    /// `DATA_LENGTH`: bytes of the clustered index.
    pub data_length: u64,
    /// `INDEX_LENGTH`: bytes of every secondary index.
    pub index_length: u64,
    /// `DATA_FREE`: bytes of both that hold no record.
    pub data_free: u64,
}

impl TableSizes {
    /// The figures of a footprint, for a table with `rows` live rows.
    pub fn of(f: &TableFootprint, rows: u64) -> TableSizes {
        let data_length = f.clustered.total_bytes();
        TableSizes {
            rows,
            avg_row_length: data_length.checked_div(rows).unwrap_or(0),
            data_length,
            index_length: f.secondary_bytes(),
            data_free: f.free_bytes(),
        }
    }

    /// The figures of table `t` now (walks it).
    pub fn read(t: &Table) -> TableSizes {
        TableSizes::of(&t.footprint(), t.row_count())
    }

    /// `CLUST_INDEX_SIZE`: DATA_LENGTH in pages.
    pub fn clust_index_pages(&self) -> u64 {
        pages(self.data_length)
    }

    /// `OTHER_INDEX_SIZE`: INDEX_LENGTH in pages.
    pub fn other_index_pages(&self) -> u64 {
        pages(self.index_length)
    }
}

/// `bytes` in InnoDB pages, rounded up.
pub fn pages(bytes: u64) -> u64 {
    bytes.div_ceil(PAGE_SIZE)
}

/// `information_schema.INNODB_TABLESTATS`: a row per table with MySQL 8.0's columns
/// (MariaDB's `INNODB_SYS_TABLESTATS` has the same ones). Statistics are computed when read,
/// so `STATS_INITIALIZED` is always `Initialized` and `MODIFIED_COUNTER` (rows changed since
/// the statistics were computed) always 0.
#[derive(Debug)]
pub struct InnodbTablestats;

impl VirtualTable for InnodbTablestats {
    fn name(&self) -> &'static str {
        "INNODB_TABLESTATS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TABLE_ID", UInt),
            ("NAME", Text),
            ("STATS_INITIALIZED", Text),
            ("NUM_ROWS", UInt),
            ("CLUST_INDEX_SIZE", UInt),
            ("OTHER_INDEX_SIZE", UInt),
            ("MODIFIED_COUNTER", UInt),
            ("AUTOINC", UInt),
            ("REF_COUNT", UInt),
        ]
    }
    fn rows(&self, server: &dyn ServerView) -> Vec<Vec<Value>> {
        tables(server)
            .into_iter()
            .map(|(db, t)| {
                let sizes = TableSizes::read(&t);
                let autoinc = match t.def().auto_increment_column() {
                    Some(_) => t.auto_increment_value(),
                    None => 0,
                };
                // Holders besides the catalog and this read: the statements using it now.
                let refs = Arc::strong_count(&t).saturating_sub(2) as u64;
                vec![
                    Value::UInt(t.id()),
                    Value::str(&format!("{db}/{}", t.name())),
                    Value::str("Initialized"),
                    Value::UInt(sizes.rows),
                    Value::UInt(sizes.clust_index_pages()),
                    Value::UInt(sizes.other_index_pages()),
                    Value::UInt(0),
                    Value::UInt(autoinc),
                    Value::UInt(refs),
                ]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_round_up_to_whole_16k_pages() {
        assert_eq!(pages(0), 0);
        assert_eq!(pages(1), 1);
        assert_eq!(pages(PAGE_SIZE), 1);
        assert_eq!(pages(PAGE_SIZE + 1), 2);
    }

    #[test]
    fn sizes_split_the_footprint_into_data_and_index() {
        use crate::engine::table::footprint::IndexFootprint;
        let ix = |records, free, pages| IndexFootprint {
            record_bytes: records,
            free_bytes: free,
            page_bytes: pages,
            ..IndexFootprint::default()
        };
        let f = TableFootprint {
            clustered: ix(30_000, 2_000, 500),
            secondary: vec![ix(4_000, 1_000, 100), ix(6_000, 0, 100)],
        };
        let s = TableSizes::of(&f, 100);
        assert_eq!(s.data_length, 32_500);
        assert_eq!(s.index_length, 11_200);
        assert_eq!(s.data_free, 3_000);
        assert_eq!(s.avg_row_length, 325);
        assert_eq!((s.clust_index_pages(), s.other_index_pages()), (2, 1));
        assert_eq!(TableSizes::of(&f, 0).avg_row_length, 0);
    }
}
