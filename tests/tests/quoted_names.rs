//! Backquoted and mixed-case names resolve wherever a column or table is named, write targets
//! included (what ORMs and `mariadb-dump --complete-insert` send); in every connection-handling
//! mode, with the `mysql` crate and PyMySQL.

use std::process::Command;

use mysql::prelude::*;
use tpbed_tests::{each_mode, has_python_module, mysql_error, require_tool};

/// Every statement form with quoted names: reserved words as column names (`order`,
/// `key`), mixed case, and a quoted database and table.
const SWEEP: &[&str] = &[
    "CREATE DATABASE `Shop`",
    "CREATE TABLE `Shop`.`Jobs` (`id` INT NOT NULL AUTO_INCREMENT, `Order` INT NOT NULL, \
     `key` VARCHAR(16), `App` VARCHAR(16), PRIMARY KEY (`id`), UNIQUE KEY `uk` (`key`))",
    "CREATE INDEX `by_order` ON `Shop`.`Jobs` (`ORDER`)",
    "USE `Shop`",
    "INSERT INTO `Jobs` (`id`, `order`, `KEY`, `app`) VALUES (1, 10, 'a', 'x'), (2, 20, 'b', 'y')",
    "INSERT INTO `Shop`.`Jobs` (`Order`, `key`, `App`) VALUES (30, 'c', 'x')",
    "INSERT INTO `Jobs` (`id`, `order`, `key`, `app`) VALUES (1, 11, 'a', 'x') \
     ON DUPLICATE KEY UPDATE `Order` = `order` + 1, `APP` = VALUES(`app`)",
    "REPLACE INTO `Jobs` (`id`, `Order`, `key`, `app`) VALUES (2, 21, 'b', 'z')",
    "UPDATE `Jobs` SET `App` = 'w', `order` = `ORDER` + 100 WHERE `Key` = 'c'",
    "UPDATE `Shop`.`Jobs` AS `j` SET `j`.`app` = 'v' WHERE `j`.`id` = 3",
    "INSERT INTO `Jobs` SET `id` = 4, `order` = 40, `key` = 'd', `app` = 'q'",
    "DELETE FROM `Jobs` WHERE `ID` = 4",
    "DROP INDEX `by_order` ON `Jobs`",
];

each_mode! {
    fn every_statement_form_resolves_quoted_and_mixed_case_names(mode) {
        let srv = mode.start(&[]);
        let mut c = srv.connect();
        for sql in SWEEP {
            c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let rows: Vec<(i64, i64, String, String)> = c
            .query(
                "SELECT `j`.`ID`, `ORDER`, `j`.`KEY`, `j`.`App` FROM `Shop`.`Jobs` `j` \
                 WHERE `j`.`order` > 0 ORDER BY `Order`",
            )
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (1, 11, "a".into(), "x".into()),
                (2, 21, "b".into(), "z".into()),
                (3, 130, "c".into(), "v".into()),
            ]
        );
        let groups: Vec<(String, i64)> = c
            .query("SELECT `app`, COUNT(`Id`) FROM `Jobs` GROUP BY `APP` ORDER BY `app`")
            .unwrap();
        assert_eq!(groups, vec![("v".into(), 1), ("x".into(), 1), ("z".into(), 1)]);
        // The column keeps the case it was declared with.
        let (_, create): (String, String) =
            c.query_first("SHOW CREATE TABLE `Shop`.`Jobs`").unwrap().unwrap();
        assert!(create.contains("`Order` int NOT NULL"), "{create}");
        let tables: Vec<String> = c.query("SHOW TABLES FROM `Shop`").unwrap();
        assert_eq!(tables, vec!["Jobs".to_string()]);
        // Prepared statements resolve the same names.
        let n: i64 = c
            .exec_first("SELECT `Order` FROM `Jobs` WHERE `KEY` = ?", ("a",))
            .unwrap()
            .unwrap();
        assert_eq!(n, 11);
        c.exec_drop("UPDATE `Jobs` SET `app` = ? WHERE `ID` = ?", ("p", 1)).unwrap();
        // The remaining table statements.
        for sql in [
            "SHOW COLUMNS FROM `Jobs` FROM `Shop`",
            "DESCRIBE `Shop`.`Jobs`",
            "CREATE TABLE `Copy` (`Id` INT PRIMARY KEY, `Order` INT)",
            "INSERT INTO `Copy` (`ID`, `ORDER`) SELECT `j`.`id`, `j`.`Order` FROM `Jobs` AS `j`",
            "DELETE FROM `Copy` WHERE `order` > 20 ORDER BY `ID` LIMIT 1",
            "TRUNCATE TABLE `Shop`.`Copy`",
            "DROP TABLE `Shop`.`Copy`",
        ] {
            c.query_drop(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        let fields: Vec<String> = c
            .query_map("SHOW COLUMNS FROM `Shop`.`Jobs`", |row: mysql::Row| {
                row.get::<String, _>(0).unwrap_or_default()
            })
            .unwrap();
        assert_eq!(fields, ["id", "Order", "key", "App"]);
        // An unknown quoted column is reported without its quotes, as MySQL does.
        let e = mysql_error(c.query_drop("INSERT INTO `Jobs` (`nope`) VALUES (1)"));
        assert_eq!(
            (e.code, e.message.as_str()),
            (1054, "Unknown column 'nope' in 'field list'")
        );
        let e = mysql_error(c.query_drop("UPDATE `Jobs` SET `nope` = 1"));
        assert_eq!(
            (e.code, e.message.as_str()),
            (1054, "Unknown column 'nope' in 'field list'")
        );
    }

    fn pymysql_orm_style_writes_with_quoted_names(mode) {
        if !require_tool("PyMySQL", has_python_module("pymysql")) {
            return;
        }
        let srv = mode.start(&[]);
        let script = format!(
            r#"
import pymysql
c = pymysql.connect(host="127.0.0.1", port={port}, user="root", password="", autocommit=True)
cur = c.cursor()
cur.execute("CREATE DATABASE app")
cur.execute("USE app")
cur.execute("CREATE TABLE `queue_job` (`id` integer AUTO_INCREMENT NOT NULL PRIMARY KEY, "
            "`state` varchar(16) NOT NULL, `order` integer NOT NULL)")
cur.execute("INSERT INTO `queue_job` (`state`, `order`) VALUES (%s, %s)", ("ready", 1))
cur.execute("UPDATE `queue_job` SET `state` = %s WHERE `queue_job`.`id` = %s", ("done", 1))
cur.execute("SELECT `queue_job`.`id`, `queue_job`.`state`, `queue_job`.`order` FROM `queue_job`")
print(cur.fetchall())
"#,
            port = srv.port
        );
        let out = Command::new("python3").args(["-c", &script]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "((1, 'done', 1),)");
    }
}
