//! Real client libraries against the real binary: the Rust `mysql` crate (text and
//! server-side prepared statements with every supported parameter type), in every
//! connection-handling mode.

use mysql::prelude::*;
use mysql::{Params, Value};
use tpbed_tests::each_mode;

each_mode! {
    fn mysql_crate_text_queries_read_values_and_types(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        let row: (String, i64, String) = c
            .query_first("select @@version_comment, 1+1, now()")
            .unwrap()
            .unwrap();
        assert!(row.0.contains("tpbed"));
        assert_eq!(row.1, 2);
        assert_eq!(row.2.len(), 19, "now() is YYYY-MM-DD HH:MM:SS: {}", row.2);
        let r: Vec<mysql::Row> = c.query("SELECT 1 AS a, -5, 18446744073709551615, 2.50, 1e3, 'héllo', NULL, CAST('2024-02-29 13:14:15' AS DATETIME)").unwrap();
        let cols = r[0].columns();
        use mysql::consts::ColumnType as T;
        let types: Vec<T> = cols.iter().map(|c| c.column_type()).collect();
        assert_eq!(
            types,
            vec![
                T::MYSQL_TYPE_LONGLONG,
                T::MYSQL_TYPE_LONGLONG,
                T::MYSQL_TYPE_LONGLONG,
                T::MYSQL_TYPE_NEWDECIMAL,
                T::MYSQL_TYPE_DOUBLE,
                T::MYSQL_TYPE_VAR_STRING,
                T::MYSQL_TYPE_NULL,
                T::MYSQL_TYPE_DATETIME
            ]
        );
        assert_eq!(cols[0].name_str(), "a");
        assert_eq!(cols[1].name_str(), "-5");
        let row = &r[0];
        assert_eq!(row.get::<i64, _>(0), Some(1));
        assert_eq!(row.get::<i64, _>(1), Some(-5));
        assert_eq!(row.get::<u64, _>(2), Some(u64::MAX));
        assert_eq!(row.get::<String, _>(3).as_deref(), Some("2.50"));
        assert_eq!(row.get::<f64, _>(4), Some(1000.0));
        assert_eq!(row.get::<String, _>(5).as_deref(), Some("héllo"));
        assert_eq!(row.get::<Option<i64>, _>(6), Some(None));
        assert_eq!(
            row.get::<String, _>(7).as_deref(),
            Some("2024-02-29 13:14:15")
        );
        let id: u64 = c.query_first("SELECT CONNECTION_ID()").unwrap().unwrap();
        assert_eq!(id, u64::from(c.connection_id()));
    }
}

each_mode! {
    fn mysql_crate_prepared_statements_with_every_parameter_type(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        let stmt = c.prep("SELECT ?, ?, ?, ?, ?, ?, ?, ?").unwrap();
        assert_eq!(stmt.num_params(), 8);
        let date = Value::Date(2024, 2, 29, 13, 14, 15, 250_000);
        let day = Value::Date(2001, 12, 31, 0, 0, 0, 0);
        let params = Params::Positional(vec![
            Value::Int(-42),
            Value::UInt(u64::MAX),
            Value::Double(1.5),
            Value::Float(0.25),
            Value::Bytes(b"text \x00 with nul".to_vec()),
            Value::NULL,
            date.clone(),
            day.clone(),
        ]);
        let row: mysql::Row = c.exec_first(&stmt, params.clone()).unwrap().unwrap();
        assert_eq!(row.get::<i64, _>(0), Some(-42));
        assert_eq!(row.get::<u64, _>(1), Some(u64::MAX));
        assert_eq!(row.get::<f64, _>(2), Some(1.5));
        assert_eq!(row.get::<f64, _>(3), Some(0.25));
        assert_eq!(
            row.get::<Vec<u8>, _>(4),
            Some(b"text \x00 with nul".to_vec())
        );
        assert_eq!(row.get::<Option<i64>, _>(5), Some(None));
        assert_eq!(row.as_ref(6), Some(&date));
        assert_eq!(row.as_ref(7), Some(&Value::Date(2001, 12, 31, 0, 0, 0, 0)));
        // Re-executing keeps working (the crate may skip resending types).
        for i in 0..50i64 {
            let v: i64 = c.exec_first("SELECT ? + 1", (i,)).unwrap().unwrap();
            assert_eq!(v, i + 1);
        }
        let s: String = c
            .exec_first("SELECT CONCAT(?, '-', ?)", ("a", 7))
            .unwrap()
            .unwrap();
        assert_eq!(s, "a-7");
        c.exec_drop("SET @@session.wait_timeout = ?", (1000,))
            .unwrap();
        let w: i64 = c.query_first("SELECT @@wait_timeout").unwrap().unwrap();
        assert_eq!(w, 1000);
    }
}
