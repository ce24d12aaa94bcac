//! Memory accounting a DBA reads, through the real binary: `information_schema.TABLES`'
//! `DATA_LENGTH`, `INDEX_LENGTH`, `DATA_FREE`, `AVG_ROW_LENGTH` and `TABLE_ROWS`, `SHOW TABLE
//! STATUS`, `information_schema.INNODB_TABLESTATS` and
//! `performance_schema.memory_summary_global_by_event_name`.
//!
//! - Sizes grow linearly with the rows loaded (twice the rows: 1.8–2.2 times the bytes), and a
//!   sysbench-shaped row costs what the engine's `row_footprint` bench measures (236 bytes,
//!   `k_1` included, docs/storage.md) within 20 %; the growth of DATA_LENGTH + INDEX_LENGTH is
//!   within 15 % of the growth of the heap the server's counting allocator reports.
//! - TABLES, SHOW TABLE STATUS and INNODB_TABLESTATS agree (pages are bytes / 16 KiB,
//!   rounded up).
//! - DELETE keeps the rows' bytes while a read view needs them; after purge the row bytes
//!   count in DATA_FREE, and inserts reuse them.
//! - The summary's `memory/innodb/buf_buf_pool` is every table's DATA_LENGTH + INDEX_LENGTH,
//!   grows with rows and falls after DROP TABLE; its sums and marks keep MySQL's invariants.
//!
//! - Old versions a read view keeps are counted under `memory/innodb/trx0undo` until purge,
//!   record locks under `memory/innodb/lock0lock` while held;
//!   with `performance_schema=OFF` the summary is empty.
//! - Column names are MySQL 8.0's, and MariaDB 10.11's but for the table name
//!   `INNODB_SYS_TABLESTATS` and the column types README's deviations table lists.
//!
//! One connection-handling mode (one thread per connection): what a table holds does not
//! depend on it.

use std::time::{Duration, Instant};

use mysql::prelude::*;
use mysql::Conn;
use tpbed_tests::{has_program, require_tool, wait_purged, MariaDb, TestServer};

/// Bytes per sysbench row (`k_1` included) the engine's `row_footprint` bench measures as
/// requested from the allocator (docs/storage.md, headers sized to the record's history).
const BENCH_BYTES_PER_ROW: f64 = 223.4;

/// A row of the memory summary, in MySQL's column order.
type SummaryRow = (String, u64, u64, u64, u64, u64, u64, u64, u64, u64, u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    rows: u64,
    avg: u64,
    data: u64,
    index: u64,
    free: u64,
}

fn setup() -> (TestServer, Conn) {
    let srv = TestServer::start(&["--thread-handling=one-thread-per-connection"]);
    srv.connect().query_drop("CREATE DATABASE db").unwrap();
    let mut c = srv.connect_db("db");
    c.query_drop(
        "CREATE TABLE sbtest1 (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0,
         c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '',
         PRIMARY KEY (id), KEY k_1 (k))",
    )
    .unwrap();
    (srv, c)
}

/// Inserts sysbench-like rows with ids `from..to` (119- and 59-character `c` and `pad`, `k`
/// scattered), 500 per statement.
fn load(c: &mut Conn, table: &str, from: u64, to: u64) {
    let mut id = from;
    while id < to {
        let end = (id + 500).min(to);
        let values: Vec<String> = (id..end)
            .map(|i| {
                let k = (i * 7919) % 10_007;
                format!("({i}, {k}, '{i:0>119}', '{k:0>59}')")
            })
            .collect();
        c.query_drop(format!(
            "INSERT INTO {table} (id, k, c, pad) VALUES {}",
            values.join(",")
        ))
        .unwrap();
        id = end;
    }
}

fn sizes(c: &mut Conn, table: &str) -> Sizes {
    let row: (u64, u64, u64, u64, u64) = c
        .exec_first(
            "SELECT TABLE_ROWS, AVG_ROW_LENGTH, DATA_LENGTH, INDEX_LENGTH, DATA_FREE
             FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'db' AND TABLE_NAME = ?",
            (table,),
        )
        .unwrap()
        .expect("a TABLES row");
    Sizes {
        rows: row.0,
        avg: row.1,
        data: row.2,
        index: row.3,
        free: row.4,
    }
}

/// The summary's CURRENT_NUMBER_OF_BYTES_USED of `event`.
fn current_bytes(c: &mut Conn, event: &str) -> u64 {
    c.exec_first(
        "SELECT CURRENT_NUMBER_OF_BYTES_USED
         FROM performance_schema.memory_summary_global_by_event_name WHERE EVENT_NAME = ?",
        (event,),
    )
    .unwrap()
    .expect("a summary row")
}

/// The heap the server holds: the summary's rows add up to the counting allocator's count.
fn heap(c: &mut Conn) -> u64 {
    c.query_first(
        "SELECT SUM(CURRENT_NUMBER_OF_BYTES_USED)
         FROM performance_schema.memory_summary_global_by_event_name",
    )
    .unwrap()
    .expect("a sum")
}

#[test]
fn sizes_grow_linearly_match_the_engine_and_agree_across_views() {
    let (_srv, mut c) = setup();
    let empty = sizes(&mut c, "sbtest1");
    assert_eq!((empty.rows, empty.avg), (0, 0));
    assert!(empty.data > 0, "an empty leaf: {empty:?}");
    let heap0 = heap(&mut c);
    load(&mut c, "sbtest1", 1, 10_001);
    let one = sizes(&mut c, "sbtest1");
    let heap1 = heap(&mut c);
    load(&mut c, "sbtest1", 10_001, 20_001);
    let two = sizes(&mut c, "sbtest1");
    assert_eq!((one.rows, two.rows), (10_000, 20_000));
    for (what, e, a, b) in [
        ("DATA_LENGTH", empty.data, one.data, two.data),
        ("INDEX_LENGTH", empty.index, one.index, two.index),
    ] {
        let ratio = (b - e) as f64 / (a - e) as f64;
        assert!((1.8..=2.2).contains(&ratio), "{what}: {e} {a} {b}");
    }
    assert_eq!(two.avg, two.data / two.rows, "AVG_ROW_LENGTH");
    let per_row = (two.data + two.index - empty.data - empty.index) as f64 / 20_000.0;
    assert!(
        (per_row / BENCH_BYTES_PER_ROW - 1.0).abs() < 0.20,
        "{per_row:.1} bytes per row against the bench's {BENCH_BYTES_PER_ROW}"
    );
    let grew = (one.data + one.index - empty.data - empty.index) as f64;
    let heap_grew = heap1 as f64 - heap0 as f64;
    assert!(
        (grew / heap_grew - 1.0).abs() < 0.15,
        "tables grew {grew} bytes, the heap {heap_grew}"
    );
    println!(
        "{per_row:.1} bytes per row; first 10,000 rows: tables {grew} bytes, heap {heap_grew}"
    );

    // SHOW TABLE STATUS and INNODB_TABLESTATS read the same figures.
    let status: mysql::Row = c
        .query_first("SHOW TABLE STATUS LIKE 'sbtest1'")
        .unwrap()
        .expect("a status row");
    let col = |n: &str| status.get::<u64, _>(n).expect(n);
    let now = sizes(&mut c, "sbtest1");
    assert_eq!(
        (
            col("Rows"),
            col("Avg_row_length"),
            col("Data_length"),
            col("Index_length"),
            col("Data_free")
        ),
        (now.rows, now.avg, now.data, now.index, now.free)
    );
    let stats: (String, String, u64, u64, u64, u64, u64) = c
        .query_first(
            "SELECT NAME, STATS_INITIALIZED, NUM_ROWS, CLUST_INDEX_SIZE, OTHER_INDEX_SIZE,
             MODIFIED_COUNTER, AUTOINC FROM information_schema.INNODB_TABLESTATS
             WHERE NAME = 'db/sbtest1'",
        )
        .unwrap()
        .expect("an INNODB_TABLESTATS row");
    assert_eq!(
        stats,
        (
            "db/sbtest1".to_string(),
            "Initialized".to_string(),
            20_000,
            now.data.div_ceil(16384),
            now.index.div_ceil(16384),
            0,
            20_001
        )
    );
}

#[test]
fn delete_keeps_bytes_until_purge_then_frees_space_that_inserts_reuse() {
    let (srv, mut c) = setup();
    load(&mut c, "sbtest1", 1, 4_001);
    let loaded = sizes(&mut c, "sbtest1");

    // A read view from before the DELETE keeps the deleted rows (delete-marked) in place.
    let mut reader = srv.connect_db("db");
    reader
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    c.query_drop("DELETE FROM sbtest1 WHERE id % 2 = 0")
        .unwrap();
    let marked = sizes(&mut c, "sbtest1");
    assert_eq!(marked.rows, 2_000);
    assert!(
        marked.data >= loaded.data && marked.index >= loaded.index,
        "delete-marked rows keep their bytes: {loaded:?} -> {marked:?}"
    );

    reader.query_drop("COMMIT").unwrap();
    wait_purged(&mut c, Duration::from_secs(30));
    let purged = sizes(&mut c, "sbtest1");
    // Purge removes the rows: their bytes stop being live (DATA_LENGTH less DATA_FREE falls by
    // at least their 188 data bytes each), whether a page keeps them as garbage for its next
    // compaction, compacts at once or merges with a sibling.
    let live = |s: &Sizes| s.data + s.index - s.free;
    assert!(
        live(&purged) + 2_000 * 188 <= live(&marked),
        "row bytes left the live bytes: {marked:?} -> {purged:?}"
    );
    assert!(purged.data <= marked.data && purged.index <= marked.index);

    // Re-inserting the deleted rows reuses the freed space: the table comes back within 10 %
    // of its size before the DELETE.
    for i in (2..=4_000).step_by(2) {
        load(&mut c, "sbtest1", i, i + 1);
    }
    let refilled = sizes(&mut c, "sbtest1");
    assert_eq!(refilled.rows, 4_000);
    assert!(
        (refilled.data + refilled.index) * 10 <= (loaded.data + loaded.index) * 11,
        "space reused: {loaded:?} -> {purged:?} -> {refilled:?}"
    );

    // Deleting everything empties leaves, which purge discards.
    c.query_drop("DELETE FROM sbtest1").unwrap();
    wait_purged(&mut c, Duration::from_secs(30));
    let emptied = sizes(&mut c, "sbtest1");
    assert_eq!(emptied.rows, 0);
    assert!(emptied.data * 10 < loaded.data, "{loaded:?} -> {emptied:?}");
}

#[test]
fn the_summary_follows_the_tables_and_keeps_mysqls_invariants() {
    let (srv, mut c) = setup();
    let pool = "memory/innodb/buf_buf_pool";
    let before = current_bytes(&mut c, pool);
    load(&mut c, "sbtest1", 1, 5_001);
    let loaded = current_bytes(&mut c, pool);
    assert!(loaded >= before + 5_000 * 200, "{before} -> {loaded}");
    let tables: u64 = c
        .query_first(
            "SELECT SUM(DATA_LENGTH + INDEX_LENGTH) FROM information_schema.TABLES
             WHERE ENGINE = 'InnoDB'",
        )
        .unwrap()
        .expect("a sum");
    assert_eq!(
        current_bytes(&mut c, pool),
        tables,
        "the pool is the tables"
    );

    // Old versions a read view needs are counted until purge frees them.
    let undo = |c: &mut Conn| -> (u64, u64) {
        c.exec_first(
            "SELECT CURRENT_COUNT_USED, CURRENT_NUMBER_OF_BYTES_USED
             FROM performance_schema.memory_summary_global_by_event_name WHERE EVENT_NAME = ?",
            ("memory/innodb/trx0undo",),
        )
        .unwrap()
        .expect("the undo row")
    };
    let mut reader = srv.connect_db("db");
    reader
        .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    c.query_drop("UPDATE sbtest1 SET k = k + 1 WHERE id <= 1000")
        .unwrap();
    let (versions, bytes) = undo(&mut c);
    assert!(
        versions >= 1_000 && bytes >= 1_000 * 188,
        "{versions} {bytes}"
    );
    reader.query_drop("COMMIT").unwrap();
    wait_purged(&mut c, Duration::from_secs(30));
    assert_eq!(undo(&mut c), (0, 0), "purge freed the versions");

    // Record locks are counted while a transaction holds them.
    let locks = |c: &mut Conn| -> u64 {
        c.exec_first(
            "SELECT CURRENT_COUNT_USED FROM performance_schema.memory_summary_global_by_event_name
             WHERE EVENT_NAME = ?",
            ("memory/innodb/lock0lock",),
        )
        .unwrap()
        .expect("the lock row")
    };
    reader.query_drop("BEGIN").unwrap();
    let ids: Vec<u64> = reader
        .query("SELECT id FROM sbtest1 WHERE id <= 500 FOR UPDATE")
        .unwrap();
    assert_eq!(ids.len(), 500);
    let held = locks(&mut c);
    assert!((500..=501).contains(&held), "{held} record locks");
    reader.query_drop("ROLLBACK").unwrap();
    assert_eq!(locks(&mut c), 0);

    // Prepared statements and connections are counted.
    // The client caches 32 statements by default and closes the ones it evicts.
    let opts = mysql::OptsBuilder::from_opts(srv.opts("root", ""))
        .db_name(Some("db"))
        .stmt_cache_size(Some(1_000));
    let mut other = Conn::new(opts).unwrap();
    let heap0 = heap(&mut c);
    let stmts: Vec<_> = (0..200)
        .map(|i| {
            other
                .prep(format!("SELECT c FROM sbtest1 WHERE id = ? + {i}"))
                .unwrap()
        })
        .collect();
    let heap1 = heap(&mut c);
    println!(
        "prepared statements: {:.0} bytes each",
        (heap1 as f64 - heap0 as f64) / 200.0
    );
    let count = |c: &mut Conn, event: &str| -> u64 {
        c.exec_first(
            "SELECT CURRENT_COUNT_USED FROM performance_schema.memory_summary_global_by_event_name
             WHERE EVENT_NAME = ?",
            (event,),
        )
        .unwrap()
        .expect("a summary row")
    };
    let prepared = "memory/sql/Prepared_statement::main_mem_root";
    let with = count(&mut c, prepared);
    assert_eq!(count(&mut c, "memory/sql/THD::main_mem_root"), 3);
    drop(stmts);
    drop(other);
    drop(reader);
    let end = Instant::now() + Duration::from_secs(10);
    while count(&mut c, "memory/sql/THD::main_mem_root") > 1 {
        assert!(Instant::now() < end, "the connection did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(with - count(&mut c, prepared), 200, "statements counted");

    c.query_drop("DROP TABLE sbtest1").unwrap();
    let dropped = current_bytes(&mut c, pool);
    assert!(
        dropped + 5_000 * 200 <= loaded,
        "{loaded} -> {dropped} after DROP TABLE"
    );
    let rows: Vec<SummaryRow> = c
        .query("SELECT * FROM performance_schema.memory_summary_global_by_event_name")
        .unwrap();
    for r in &rows {
        let (name, _, _, alloc, free, low_n, cur_n, high_n, low_b, cur_b, high_b) = r.clone();
        assert_eq!(cur_b, alloc - free, "{name}: CURRENT = ALLOC - FREE");
        assert!(low_n <= cur_n && cur_n <= high_n, "{name}: counts {r:?}");
        assert!(low_b <= cur_b && cur_b <= high_b, "{name}: bytes {r:?}");
        assert!(name.starts_with("memory/"), "{name}");
    }
    let pool_row = rows.iter().find(|r| r.0 == pool).expect("the pool row");
    assert!(pool_row.10 >= loaded, "HIGH keeps the peak: {pool_row:?}");
    assert!(pool_row.4 >= loaded - dropped, "the drop counts as freed");

    // TRUNCATE restarts the sums and marks at the current values.
    c.query_drop("TRUNCATE TABLE performance_schema.memory_summary_global_by_event_name")
        .unwrap();
    let after: (u64, u64, u64) = c
        .exec_first(
            "SELECT SUM_NUMBER_OF_BYTES_FREE, HIGH_NUMBER_OF_BYTES_USED, CURRENT_NUMBER_OF_BYTES_USED
             FROM performance_schema.memory_summary_global_by_event_name WHERE EVENT_NAME = ?",
            (pool,),
        )
        .unwrap()
        .expect("the pool row");
    assert_eq!((after.0, after.1), (0, after.2));
}

#[test]
fn column_names_are_mysql_80s() {
    let (_srv, mut c) = setup();
    let columns = |c: &mut Conn, db: &str, t: &str| -> Vec<String> {
        c.exec(
            "SELECT COLUMN_NAME FROM information_schema.COLUMNS
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
            (db, t),
        )
        .unwrap()
    };
    assert_eq!(
        columns(&mut c, "information_schema", "INNODB_TABLESTATS"),
        [
            "TABLE_ID",
            "NAME",
            "STATS_INITIALIZED",
            "NUM_ROWS",
            "CLUST_INDEX_SIZE",
            "OTHER_INDEX_SIZE",
            "MODIFIED_COUNTER",
            "AUTOINC",
            "REF_COUNT"
        ]
    );
    assert_eq!(
        columns(
            &mut c,
            "performance_schema",
            "memory_summary_global_by_event_name"
        ),
        [
            "EVENT_NAME",
            "COUNT_ALLOC",
            "COUNT_FREE",
            "SUM_NUMBER_OF_BYTES_ALLOC",
            "SUM_NUMBER_OF_BYTES_FREE",
            "LOW_COUNT_USED",
            "CURRENT_COUNT_USED",
            "HIGH_COUNT_USED",
            "LOW_NUMBER_OF_BYTES_USED",
            "CURRENT_NUMBER_OF_BYTES_USED",
            "HIGH_NUMBER_OF_BYTES_USED"
        ]
    );
}

/// (column, DATA_TYPE, unsigned) of a table, from information_schema.COLUMNS.
fn column_types(c: &mut Conn, db: &str, table: &str) -> Vec<(String, String, bool)> {
    let rows: Vec<(String, String, String)> = c
        .exec(
            "SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
            (db, table),
        )
        .unwrap();
    rows.into_iter()
        .map(|(n, t, full)| (n, t, full.contains("unsigned")))
        .collect()
}

#[test]
fn columns_are_mariadbs_but_for_the_differences_the_readme_lists() {
    if !require_tool("mariadbd", has_program("mariadbd"))
        || !require_tool("the mariadb CLI", has_program("mariadb"))
    {
        return;
    }
    let mdb = MariaDb::start("memacct", "64M", 20);
    mdb.root_sql(
        "GRANT SELECT ON performance_schema.* TO 'sbtest'@'%';
         GRANT SELECT ON performance_schema.* TO 'sbtest'@'localhost';",
    );
    let mut theirs = mdb.connect();
    let (_srv, mut ours) = setup();
    // MariaDB 10.11 keeps MySQL 5.7's name; MySQL 8.0 renamed it and its name wins.
    let pairs = [
        (
            "information_schema",
            "INNODB_TABLESTATS",
            "INNODB_SYS_TABLESTATS",
        ),
        (
            "performance_schema",
            "memory_summary_global_by_event_name",
            "memory_summary_global_by_event_name",
        ),
    ];
    // What differs, as README's deviations table says: MySQL 8.0's STATS_INITIALIZED is text
    // (MariaDB: an int), REF_COUNT and the LOW/CURRENT/HIGH columns are tpbed's unsigned
    // bigints (MariaDB: int, signed bigints).
    let documented = [
        "STATS_INITIALIZED",
        "REF_COUNT",
        "LOW_COUNT_USED",
        "CURRENT_COUNT_USED",
        "HIGH_COUNT_USED",
        "LOW_NUMBER_OF_BYTES_USED",
        "CURRENT_NUMBER_OF_BYTES_USED",
        "HIGH_NUMBER_OF_BYTES_USED",
    ];
    for (db, mine, mariadb) in pairs {
        let a = column_types(&mut ours, db, mine);
        let b = column_types(&mut theirs, db, mariadb);
        let names =
            |v: &[(String, String, bool)]| v.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), names(&b), "{mine}");
        for (x, y) in a.iter().zip(&b) {
            if x != y {
                assert!(
                    documented.contains(&x.0.as_str()),
                    "{mine}.{}: tpbed {x:?}, MariaDB {y:?}",
                    x.0
                );
            }
        }
    }
}

#[test]
fn the_summary_is_empty_with_performance_schema_off() {
    let srv = TestServer::start(&["--performance-schema=OFF"]);
    let mut c = srv.connect();
    let n: u64 = c
        .query_first("SELECT COUNT(*) FROM performance_schema.memory_summary_global_by_event_name")
        .unwrap()
        .expect("a count");
    assert_eq!(n, 0);
    let on = TestServer::start(&[]);
    let n: u64 = on
        .connect()
        .query_first("SELECT COUNT(*) FROM performance_schema.memory_summary_global_by_event_name")
        .unwrap()
        .expect("a count");
    assert!(n >= 5, "{n} rows with performance_schema on");
}
