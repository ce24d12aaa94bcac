//! How MySQL describes a table's columns and keys in text: `SHOW CREATE TABLE`,
//! `SHOW COLUMNS` / `DESCRIBE` and the `information_schema` rows share these spellings.

use crate::engine::{Column, ColumnDefault, ColumnType, ForeignKeyDef, IndexKind, Table};
use crate::sql::collations::{charset_of, is_default, SERVER_COLLATION};
use crate::value::Value;

/// A table's default collation (the server's when it was created with none).
pub fn table_collation(t: &Table) -> &str {
    t.def().collation().unwrap_or(SERVER_COLLATION)
}

/// A text column's collation (its own, else its table's); None for other columns.
pub fn column_collation<'a>(t: &'a Table, c: &'a Column) -> Option<&'a str> {
    c.ty.has_collation()
        .then(|| c.collation.as_deref().unwrap_or(table_collation(t)))
}

/// A database's default collation as SHOW CREATE DATABASE and SCHEMATA give it.
pub fn database_collation(catalog: &crate::engine::Catalog, db: &str) -> String {
    catalog
        .database(db)
        .ok()
        .and_then(|d| d.collation().map(str::to_string))
        .unwrap_or_else(|| SERVER_COLLATION.to_string())
}

/// Whether MySQL 8.0 names a table's or database's default collation after its character
/// set: when it is not the character set's default, or is utf8mb4's.
pub fn collation_named(collation: &str) -> bool {
    !is_default(collation) || collation == SERVER_COLLATION
}

/// A table's `DEFAULT CHARSET=...` clause as SHOW CREATE TABLE prints it.
fn charset_clause(collation: &str) -> String {
    let cs = charset_of(collation);
    if collation_named(collation) {
        format!(" DEFAULT CHARSET={cs} COLLATE={collation}")
    } else {
        format!(" DEFAULT CHARSET={cs}")
    }
}

/// A column's default as SHOW COLUMNS prints it (None = NULL).
pub fn default_text(c: &Column) -> Option<String> {
    match &c.default {
        ColumnDefault::None => None,
        ColumnDefault::CurrentTimestamp => Some("CURRENT_TIMESTAMP".into()),
        ColumnDefault::Value(Value::Null) => None,
        ColumnDefault::Value(v) => Some(typed_text(c.ty, v)),
    }
}

/// A stored value as MySQL spells a default of its column type: TIME with the column's
/// fractional digits, YEAR with four digits, BIT as a `b'..'` literal.
fn typed_text(ty: ColumnType, v: &Value) -> String {
    match (ty, v) {
        (ColumnType::Time { fsp }, Value::Time(t, _)) => {
            crate::engine::time_value::format_time(*t, Some(fsp))
        }
        (ColumnType::Year, Value::UInt(y)) => format!("{y:04}"),
        (ColumnType::Bit(_), Value::UInt(bits)) => format!("b'{bits:b}'"),
        _ => crate::engine::table::display_value(v),
    }
}

/// `PRI`, `UNI`, `MUL` or empty, as SHOW COLUMNS' `Key` column says.
pub fn column_key(t: &Table, col: usize) -> &'static str {
    let def = t.def();
    let mut key = "";
    for ix in def.indexes() {
        if ix.columns.first() != Some(&col) {
            if ix.kind == IndexKind::Primary && ix.columns.contains(&col) {
                return "PRI";
            }
            continue;
        }
        match ix.kind {
            IndexKind::Primary => return "PRI",
            IndexKind::Unique if ix.columns.len() == 1 && key.is_empty() => key = "UNI",
            IndexKind::HiddenRowId => {}
            _ if key.is_empty() => key = "MUL",
            _ => {}
        }
    }
    key
}

/// `auto_increment`, `DEFAULT_GENERATED` or empty (SHOW COLUMNS' `Extra`).
pub fn extra(c: &Column) -> &'static str {
    if c.auto_increment {
        "auto_increment"
    } else if c.default == ColumnDefault::CurrentTimestamp {
        "DEFAULT_GENERATED"
    } else {
        ""
    }
}

/// The DATA_TYPE word of information_schema.COLUMNS.
pub fn data_type(ty: ColumnType) -> String {
    let full = ty.sql_name();
    full.split(['(', ' ']).next().unwrap_or(&full).to_string()
}

fn quote_ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn quote_str(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

/// A foreign key as SHOW CREATE TABLE and the 1451/1452 messages print it, for a child in
/// database `child_db`: `` CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `parent` (`id`) ``
/// and its ON DELETE / ON UPDATE actions.
pub fn foreign_key_text(fk: &ForeignKeyDef, child_db: &str) -> String {
    let list = |cols: &[String]| {
        cols.iter()
            .map(|c| quote_ident(c))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let parent = if fk.parent_db == child_db {
        quote_ident(&fk.parent_table)
    } else {
        format!(
            "{}.{}",
            quote_ident(&fk.parent_db),
            quote_ident(&fk.parent_table)
        )
    };
    let mut s = format!(
        "CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {parent} ({})",
        quote_ident(&fk.name),
        list(&fk.columns),
        list(&fk.parent_columns)
    );
    for (clause, a) in [(" ON DELETE ", fk.on_delete), (" ON UPDATE ", fk.on_update)] {
        if let Some(a) = a {
            s.push_str(clause);
            s.push_str(a.as_str());
        }
    }
    s
}

/// `SHOW CREATE TABLE` text of table `t` in database `db`.
pub fn create_table_text(t: &Table, db: &str) -> String {
    let def = t.def();
    let mut lines = Vec::new();
    for c in def.columns() {
        let mut l = format!("  {} {}", quote_ident(&c.name), c.ty.sql_name());
        // MySQL names a column's character set and collation where they differ from the
        // table's.
        if let Some(coll) = column_collation(t, c).filter(|cl| *cl != table_collation(t)) {
            l.push_str(&format!(
                " CHARACTER SET {} COLLATE {coll}",
                charset_of(coll)
            ));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        } else if matches!(c.ty, ColumnType::Timestamp { .. }) {
            // A nullable TIMESTAMP says so (explicit_defaults_for_timestamp).
            l.push_str(" NULL");
        }
        match &c.default {
            ColumnDefault::Value(Value::Null) | ColumnDefault::None
                if c.nullable && !c.auto_increment =>
            {
                l.push_str(" DEFAULT NULL")
            }
            ColumnDefault::Value(v) if !v.is_null() => {
                l.push_str(" DEFAULT ");
                let text = typed_text(c.ty, v);
                // MySQL prints a BIT default as the bare `b'..'` literal.
                if matches!(c.ty, ColumnType::Bit(_)) {
                    l.push_str(&text);
                } else {
                    l.push_str(&quote_str(&text));
                }
            }
            ColumnDefault::CurrentTimestamp => l.push_str(" DEFAULT CURRENT_TIMESTAMP"),
            _ => {}
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        lines.push(l);
    }
    let cols = |ix: &crate::engine::IndexDef| {
        ix.columns
            .iter()
            .map(|&i| quote_ident(&def.columns()[i].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    for ix in def.indexes() {
        match ix.kind {
            IndexKind::Primary => lines.push(format!("  PRIMARY KEY ({})", cols(ix))),
            IndexKind::Unique => lines.push(format!(
                "  UNIQUE KEY {} ({})",
                quote_ident(&ix.name),
                cols(ix)
            )),
            IndexKind::NonUnique => {
                lines.push(format!("  KEY {} ({})", quote_ident(&ix.name), cols(ix)))
            }
            IndexKind::HiddenRowId => {}
        }
    }
    for fk in def.foreign_keys() {
        lines.push(format!("  {}", foreign_key_text(fk, db)));
    }
    // MySQL lists check constraints by name.
    let mut checks: Vec<_> = def.checks().iter().collect();
    checks.sort_by(|a, b| a.name.cmp(&b.name));
    for c in checks {
        let not_enforced = if c.enforced {
            ""
        } else {
            " /*!80016 NOT ENFORCED */"
        };
        lines.push(format!(
            "  CONSTRAINT {} CHECK (({})){not_enforced}",
            quote_ident(&c.name),
            c.expr
        ));
    }
    let auto = match def.auto_increment_column() {
        Some(_) if t.auto_increment_value() > 1 => {
            format!(" AUTO_INCREMENT={}", t.auto_increment_value())
        }
        _ => String::new(),
    };
    format!(
        "CREATE TABLE {} (\n{}\n) ENGINE=InnoDB{auto}{}",
        quote_ident(t.name()),
        lines.join(",\n"),
        charset_clause(table_collation(t))
    )
}
