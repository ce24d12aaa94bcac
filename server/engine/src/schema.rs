//! Table definitions: columns, indexes (the clustered index first) and row filling.
//!
//! Clustered index choice follows InnoDB: the PRIMARY KEY; else the first UNIQUE index whose
//! columns are all NOT NULL; else a hidden 6-byte row id (`GEN_CLUST_INDEX`).

use crate::error::EngineError;
use crate::key::KeyColumn;
use crate::row::RowCodec;
use crate::types::ColumnType;
use crate::value::{DateTime, Value};

/// A column's DEFAULT.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnDefault {
    /// No DEFAULT clause: NULL for a nullable column, else the column must be given.
    None,
    /// A constant (already coerced to the column type).
    Value(Value),
    /// `DEFAULT CURRENT_TIMESTAMP` (or NOW()).
    CurrentTimestamp,
}

/// One column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Name as declared (compared case-insensitively).
    pub name: String,
    /// Type.
    pub ty: ColumnType,
    /// NULL allowed.
    pub nullable: bool,
    /// DEFAULT.
    pub default: ColumnDefault,
    /// AUTO_INCREMENT.
    pub auto_increment: bool,
    /// The collation a `CHARACTER SET` or `COLLATE` clause gave the column (None: the
    /// table's). Recorded and shown; the engine compares text the same way whatever it is.
    pub collation: Option<String>,
}

impl Column {
    /// A nullable column without default.
    pub fn new(name: &str, ty: ColumnType) -> Column {
        Column {
            name: name.to_string(),
            ty,
            nullable: true,
            default: ColumnDefault::None,
            auto_increment: false,
            collation: None,
        }
    }

    /// The same column, NOT NULL.
    pub fn not_null(mut self) -> Column {
        self.nullable = false;
        self
    }

    /// The same column, AUTO_INCREMENT.
    pub fn auto_increment(mut self) -> Column {
        self.auto_increment = true;
        self
    }

    /// The same column with a constant DEFAULT.
    pub fn default_value(mut self, v: Value) -> Column {
        self.default = ColumnDefault::Value(v);
        self
    }

    /// The key-encoding view of the column.
    pub(crate) fn key_column(&self) -> KeyColumn {
        KeyColumn {
            ty: self.ty,
            nullable: self.nullable,
        }
    }
}

/// Kinds of index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// PRIMARY KEY.
    Primary,
    /// UNIQUE KEY.
    Unique,
    /// KEY / INDEX.
    NonUnique,
    /// The hidden row-id clustered index of a table without a usable unique key.
    HiddenRowId,
}

/// One index: a name and the columns it orders by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// `PRIMARY`, the declared name, or `GEN_CLUST_INDEX`.
    pub name: String,
    /// Kind.
    pub kind: IndexKind,
    /// Column positions in key order (empty for the hidden row id).
    pub columns: Vec<usize>,
}

impl IndexDef {
    /// An index over `columns`.
    pub fn new(name: &str, kind: IndexKind, columns: Vec<usize>) -> IndexDef {
        IndexDef {
            name: name.to_string(),
            kind,
            columns,
        }
    }

    /// PRIMARY or UNIQUE.
    pub fn is_unique(&self) -> bool {
        matches!(
            self.kind,
            IndexKind::Primary | IndexKind::Unique | IndexKind::HiddenRowId
        )
    }
}

/// A CHECK constraint: its name and expression text (the SQL layer binds and evaluates it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckDef {
    /// Name, declared or MySQL's `<table>_chk_<n>`.
    pub name: String,
    /// The expression as SQL text.
    pub expr: String,
    /// False for `NOT ENFORCED`: kept and shown, not checked.
    pub enforced: bool,
}

/// What a foreign key does to the child rows when their parent row is deleted or its key
/// changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    /// RESTRICT (refuse, 1451).
    Restrict,
    /// NO ACTION (InnoDB: as RESTRICT).
    NoAction,
    /// CASCADE (delete the child rows, or change their key too).
    Cascade,
    /// SET NULL (the child rows' foreign key columns become NULL).
    SetNull,
}

impl ReferentialAction {
    /// The clause as SHOW CREATE TABLE prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            ReferentialAction::Restrict => "RESTRICT",
            ReferentialAction::NoAction => "NO ACTION",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
        }
    }
}

/// A FOREIGN KEY constraint of a child table: columns by name, the parent by name (it may
/// not exist while `foreign_key_checks` is off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    /// Name, declared or InnoDB's `<table>_ibfk_<n>`.
    pub name: String,
    /// The child's columns.
    pub columns: Vec<String>,
    /// The parent's database.
    pub parent_db: String,
    /// The parent table.
    pub parent_table: String,
    /// The parent's columns, one per child column.
    pub parent_columns: Vec<String>,
    /// ON DELETE (None: not given, which is RESTRICT).
    pub on_delete: Option<ReferentialAction>,
    /// ON UPDATE (None: not given).
    pub on_update: Option<ReferentialAction>,
}

/// Name of InnoDB's hidden clustered index.
pub const GEN_CLUST_INDEX: &str = "GEN_CLUST_INDEX";

/// A validated table definition; `indexes[0]` is the clustered index.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    name: String,
    columns: Vec<Column>,
    indexes: Vec<IndexDef>,
    auto_increment: Option<usize>,
    checks: Vec<CheckDef>,
    foreign_keys: Vec<ForeignKeyDef>,
    collation: Option<String>,
}

impl TableDef {
    /// Validates columns and indexes (names unique, one PRIMARY, one AUTO_INCREMENT column that
    /// starts an index) and picks the clustered index. PRIMARY KEY columns become NOT NULL, as
    /// in MySQL.
    pub fn new(
        name: &str,
        mut columns: Vec<Column>,
        indexes: Vec<IndexDef>,
    ) -> Result<TableDef, EngineError> {
        for (i, c) in columns.iter().enumerate() {
            c.ty.validate(&c.name)?;
            if columns[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&c.name))
            {
                return Err(EngineError::DuplicateColumn(c.name.clone()));
            }
        }
        let mut primary = None;
        for (i, ix) in indexes.iter().enumerate() {
            if indexes[..i]
                .iter()
                .any(|o| o.name.eq_ignore_ascii_case(&ix.name))
            {
                return Err(EngineError::DuplicateKeyName(ix.name.clone()));
            }
            if ix.columns.is_empty() || ix.columns.iter().any(|&c| c >= columns.len()) {
                return Err(EngineError::BadColumnDefinition {
                    column: ix.name.clone(),
                    reason: "index names no or unknown columns".into(),
                });
            }
            if let Some(&c) = ix
                .columns
                .iter()
                .find(|&&c| columns[c].ty == ColumnType::Json)
            {
                return Err(EngineError::JsonUsedAsKey {
                    column: columns[c].name.clone(),
                });
            }
            if ix.kind == IndexKind::HiddenRowId {
                return Err(EngineError::BadColumnDefinition {
                    column: ix.name.clone(),
                    reason: "the hidden row id is not declared".into(),
                });
            }
            if ix.kind == IndexKind::Primary {
                if primary.is_some() {
                    return Err(EngineError::MultiplePrimaryKey);
                }
                primary = Some(i);
            }
        }
        if let Some(p) = primary {
            for &c in &indexes[p].columns {
                columns[c].nullable = false;
            }
        }
        let clustered = primary.or_else(|| {
            indexes.iter().position(|ix| {
                ix.kind == IndexKind::Unique && ix.columns.iter().all(|&c| !columns[c].nullable)
            })
        });
        let mut ordered = Vec::with_capacity(indexes.len() + 1);
        match clustered {
            Some(c) => ordered.push(indexes[c].clone()),
            None => ordered.push(IndexDef::new(
                GEN_CLUST_INDEX,
                IndexKind::HiddenRowId,
                Vec::new(),
            )),
        }
        ordered.extend(
            indexes
                .into_iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != clustered)
                .map(|(_, ix)| ix),
        );
        let autos: Vec<usize> = (0..columns.len())
            .filter(|&i| columns[i].auto_increment)
            .collect();
        let auto_increment = match autos.as_slice() {
            [] => None,
            [c] => {
                let integer = matches!(columns[*c].ty, ColumnType::Integer { .. });
                if !integer || !ordered.iter().any(|ix| ix.columns.first() == Some(c)) {
                    return Err(EngineError::WrongAutoKey);
                }
                Some(*c)
            }
            _ => return Err(EngineError::WrongAutoKey),
        };
        Ok(TableDef {
            name: name.to_string(),
            columns,
            indexes: ordered,
            auto_increment,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            collation: None,
        })
    }

    /// The same definition with these FOREIGN KEY constraints.
    pub fn with_foreign_keys(mut self, foreign_keys: Vec<ForeignKeyDef>) -> TableDef {
        self.foreign_keys = foreign_keys;
        self
    }

    /// The same definition with this default collation (`DEFAULT CHARSET` / `COLLATE`).
    pub fn with_collation(mut self, collation: Option<String>) -> TableDef {
        self.collation = collation;
        self
    }

    /// The table's default collation as declared or inherited from its database (None:
    /// the server's).
    pub fn collation(&self) -> Option<&str> {
        self.collation.as_deref()
    }

    /// FOREIGN KEY constraints in declaration order.
    pub fn foreign_keys(&self) -> &[ForeignKeyDef] {
        &self.foreign_keys
    }

    /// The same definition with these CHECK constraints.
    pub fn with_checks(mut self, checks: Vec<CheckDef>) -> TableDef {
        self.checks = checks;
        self
    }

    /// CHECK constraints in declaration order.
    pub fn checks(&self) -> &[CheckDef] {
        &self.checks
    }

    /// Table name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Columns in declaration order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// Indexes, clustered first.
    pub fn indexes(&self) -> &[IndexDef] {
        &self.indexes
    }

    /// The clustered index.
    pub fn clustered(&self) -> &IndexDef {
        &self.indexes[0]
    }

    /// True when the clustered index is the hidden row id.
    pub fn has_hidden_primary(&self) -> bool {
        self.indexes[0].kind == IndexKind::HiddenRowId
    }

    /// Position of a column, by case-insensitive name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Position of an index, by case-insensitive name.
    pub fn index_position(&self, name: &str) -> Option<usize> {
        self.indexes
            .iter()
            .position(|ix| ix.name.eq_ignore_ascii_case(name))
    }

    /// The AUTO_INCREMENT column.
    pub fn auto_increment_column(&self) -> Option<usize> {
        self.auto_increment
    }

    /// The row codec for this layout.
    pub(crate) fn row_codec(&self) -> RowCodec {
        RowCodec::new(self.columns.iter().map(|c| (c.ty, c.nullable)))
    }

    /// Builds a full row from the values given for some columns: the others get their
    /// DEFAULT (`now` for CURRENT_TIMESTAMP), NULL if nullable, NULL for the AUTO_INCREMENT
    /// column (to be generated); a NOT NULL column with none of these is an error (1364).
    pub fn fill_row(
        &self,
        given: Vec<(usize, Value)>,
        now: DateTime,
    ) -> Result<Vec<Value>, EngineError> {
        let mut row: Vec<Option<Value>> = vec![None; self.columns.len()];
        for (i, v) in given {
            row[i] = Some(v);
        }
        row.into_iter()
            .zip(&self.columns)
            .enumerate()
            .map(|(i, (v, c))| match (v, &c.default) {
                (Some(v), _) => Ok(v),
                (None, ColumnDefault::Value(d)) => Ok(d.clone()),
                (None, ColumnDefault::CurrentTimestamp) => Ok(Value::DateTime(now)),
                (None, ColumnDefault::None) if c.nullable || Some(i) == self.auto_increment => {
                    Ok(Value::Null)
                }
                (None, ColumnDefault::None) => Err(EngineError::NoDefault {
                    column: c.name.clone(),
                }),
            })
            .collect()
    }

    /// The value an existing row gets in column `i` when ALTER TABLE adds it: its constant
    /// DEFAULT (`now` for CURRENT_TIMESTAMP), NULL when nullable or AUTO_INCREMENT (to be
    /// generated), else the type's implicit default (0, '', the zero date), as MySQL fills it.
    pub fn added_column_value(&self, i: usize, now: DateTime) -> Value {
        let c = &self.columns[i];
        match &c.default {
            ColumnDefault::Value(v) => v.clone(),
            ColumnDefault::CurrentTimestamp => Value::DateTime(now),
            _ if c.nullable || Some(i) == self.auto_increment => Value::Null,
            _ => c.ty.implicit_default(),
        }
    }

    /// The error with its column named `table.column` where MySQL names it so (JSON).
    fn qualify(&self, e: EngineError) -> EngineError {
        match e {
            EngineError::InvalidJson {
                reason,
                position,
                column,
            } => EngineError::InvalidJson {
                reason,
                position,
                column: format!("{}.{column}", self.name),
            },
            e => e,
        }
    }

    /// Coerces every value to its column's type and checks NOT NULL.
    pub fn coerce_row(&self, row: Vec<Value>) -> Result<Vec<Value>, EngineError> {
        self.coerce_row_except(row, None)
    }

    /// [`Self::coerce_row`] with column `keep`'s value left as it is.
    pub fn coerce_row_except(
        &self,
        row: Vec<Value>,
        keep: Option<usize>,
    ) -> Result<Vec<Value>, EngineError> {
        row.into_iter()
            .enumerate()
            .map(|(i, v)| {
                if Some(i) == keep {
                    Ok(v)
                } else {
                    self.coerce_value(i, v)
                }
            })
            .collect()
    }

    /// Value `v` of column `i` converted to the column's type; NULL in a NOT NULL column is
    /// an error.
    pub fn coerce_value(&self, i: usize, v: Value) -> Result<Value, EngineError> {
        let c = &self.columns[i];
        let v = c.ty.coerce(v, &c.name).map_err(|e| self.qualify(e))?;
        if v.is_null() && !c.nullable {
            return Err(EngineError::NullNotAllowed {
                column: c.name.clone(),
            });
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::IntKind;

    fn int() -> ColumnType {
        ColumnType::Integer {
            kind: IntKind::Int,
            unsigned: false,
        }
    }

    #[test]
    fn clustered_index_choice() {
        let cols = || vec![Column::new("a", int()), Column::new("b", int()).not_null()];
        let t = TableDef::new(
            "t",
            cols(),
            vec![IndexDef::new("k", IndexKind::NonUnique, vec![0])],
        )
        .unwrap();
        assert_eq!(t.clustered().name, GEN_CLUST_INDEX);
        let t = TableDef::new(
            "t",
            cols(),
            vec![IndexDef::new("u", IndexKind::Unique, vec![1])],
        )
        .unwrap();
        assert_eq!(t.clustered().name, "u");
        let t = TableDef::new(
            "t",
            cols(),
            vec![
                IndexDef::new("k", IndexKind::NonUnique, vec![1]),
                IndexDef::new("PRIMARY", IndexKind::Primary, vec![0, 1]),
            ],
        )
        .unwrap();
        assert_eq!(t.clustered().name, "PRIMARY");
        assert!(!t.columns()[0].nullable);
        assert_eq!(t.indexes()[1].name, "k");
    }

    #[test]
    fn definition_errors() {
        let c = Column::new("a", int()).auto_increment();
        assert_eq!(
            TableDef::new("t", vec![c.clone()], vec![])
                .unwrap_err()
                .code()
                .code(),
            1075
        );
        let pk = || IndexDef::new("PRIMARY", IndexKind::Primary, vec![0]);
        assert!(TableDef::new("t", vec![c.clone()], vec![pk()]).is_ok());
        assert_eq!(
            TableDef::new("t", vec![c.clone()], vec![pk(), pk()])
                .unwrap_err()
                .code()
                .code(),
            1061
        );
        assert_eq!(
            TableDef::new("t", vec![c.clone(), c], vec![])
                .unwrap_err()
                .code()
                .code(),
            1060
        );
    }
}
