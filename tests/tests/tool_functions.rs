//! String and hash functions checksumming and monitoring scripts call, with the values MySQL
//! 8.0 returns (its manual's examples) and its column labels (the expression's text).

use mysql::prelude::*;
use tpbed_tests::TestServer;

#[test]
fn string_and_hash_functions_return_mysqls_values() {
    let srv = TestServer::start(&[]);
    let mut c = srv.connect();
    for (expr, want) in [
        ("LEFT('foobarbar', 5)", Some("fooba")),
        ("RIGHT('foobarbar', 4)", Some("rbar")),
        ("LEFT('héllo', 2)", Some("hé")),
        (
            "SUBSTRING_INDEX('www.mysql.com', '.', 2)",
            Some("www.mysql"),
        ),
        (
            "SUBSTRING_INDEX('www.mysql.com', '.', -2)",
            Some("mysql.com"),
        ),
        ("HEX('abc')", Some("616263")),
        ("HEX(255)", Some("FF")),
        ("CRC32('MySQL')", Some("3259397556")),
        ("MD5('testing')", Some("ae2b1fca515949e5d54fb22b8ed95575")),
        (
            "SHA1('abc')",
            Some("a9993e364706816aba3e25717850c26c9cd0d89d"),
        ),
        (
            "SHA2('abc', 224)",
            Some("23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
        ),
        ("SHA2('abc', 1)", None),
        ("MD5(NULL)", None),
        ("LEFT(NULL, 1)", None),
    ] {
        let got: Option<String> = c.query_first(format!("SELECT {expr}")).unwrap().unwrap();
        assert_eq!(got.as_deref(), want, "{expr}");
    }
    let result = c
        .query_iter("SELECT SUBSTRING_INDEX('a.b', '.', 1), CRC32('x')")
        .unwrap();
    let labels: Vec<String> = result
        .columns()
        .as_ref()
        .iter()
        .map(|col| col.name_str().into_owned())
        .collect();
    drop(result);
    assert_eq!(labels, ["SUBSTRING_INDEX('a.b', '.', 1)", "CRC32('x')"]);
    assert_eq!(
        tpbed_tests::code(c.query_drop("SELECT LEFT('a')")),
        1582,
        "wrong argument count"
    );
}
