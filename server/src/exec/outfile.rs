//! SELECT ... INTO OUTFILE / INTO DUMPFILE: the SELECT's rows written to a new file on the
//! server (FILE privilege, `secure_file_priv`, 1086 if the file exists), each value in its
//! text-protocol form, escaped and enclosed as MySQL writes them; DUMPFILE writes one row's
//! values raw. The statement answers OK with the rows written as affected rows.

use std::io::Write;

use protocol::ColumnType;

use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::exec::data_file::Writer;
use crate::exec::file_access;
use crate::sql::load_syntax::ExportClause;
use crate::sql::output::{Output, ResultSet};
use crate::sql::text_cell::text_cell;
use crate::value::Value;

/// Whether a column's values are strings for `OPTIONALLY ENCLOSED BY` (numbers, BIT and
/// YEAR are not; dates, JSON, ENUM and SET are).
fn is_string(ty: ColumnType) -> bool {
    !matches!(
        ty,
        ColumnType::Tiny
            | ColumnType::Short
            | ColumnType::Long
            | ColumnType::LongLong
            | ColumnType::Int24
            | ColumnType::Float
            | ColumnType::Double
            | ColumnType::Decimal
            | ColumnType::NewDecimal
            | ColumnType::Year
            | ColumnType::Bit
            | ColumnType::Null
    )
}

/// The rows of `rs` in the clause's format (or raw, for DUMPFILE).
fn encode(st: &Context, clause: &ExportClause, rs: &ResultSet) -> SqlResult<Vec<u8>> {
    let mut out = Vec::new();
    let mut cell = Vec::new();
    if clause.dump {
        if rs.rows.len() > 1 {
            return Err(SqlError::new(
                ErrorCode::TooManyRows,
                "Result consisted of more than one row",
            ));
        }
        for row in &rs.rows {
            for (v, col) in row.iter().zip(rs.columns.iter()) {
                text_cell(v, col, &mut out);
            }
        }
        return Ok(out);
    }
    let format = clause
        .format
        .for_session(st.sql_modes().no_backslash_escapes);
    if format.fixed_width() {
        return Err(SqlError::unsupported(
            "INTO OUTFILE with empty FIELDS TERMINATED BY and ENCLOSED BY (fixed-width rows)",
        ));
    }
    let w = Writer::new(&format);
    let mut bounds = Vec::with_capacity(rs.columns.len());
    for row in &rs.rows {
        cell.clear();
        bounds.clear();
        for (v, col) in row.iter().zip(rs.columns.iter()) {
            let start = cell.len();
            if !matches!(v, Value::Null) {
                text_cell(v, col, &mut cell);
            }
            bounds.push((start, cell.len(), matches!(v, Value::Null)));
        }
        let cells = bounds
            .iter()
            .zip(rs.columns.iter())
            .map(|(&(a, b, null), col)| {
                let text = (!null).then(|| &cell[a..b]);
                (text, is_string(col.column_type))
            });
        w.write_row(&mut out, cells);
    }
    Ok(out)
}

/// Checks what MySQL checks before running the SELECT: the FILE privilege,
/// `secure_file_priv`, and that the file does not exist (1086).
pub(crate) fn check_target(st: &Context, clause: &ExportClause) -> SqlResult<()> {
    file_access::require_file_privilege(st)?;
    let path = file_access::resolve(st, &clause.file);
    file_access::check_secure(st, &path)?;
    if path.exists() {
        return Err(exists(&path));
    }
    Ok(())
}

fn exists(path: &std::path::Path) -> SqlError {
    SqlError::new(
        ErrorCode::FileExists,
        format!("File '{}' already exists", path.display()),
    )
}

/// Runs the SELECT through `select` and writes its rows to the clause's file.
pub(crate) fn execute(
    st: &mut Context,
    clause: &ExportClause,
    select: impl FnOnce(&mut Context) -> SqlResult<Output>,
) -> SqlResult<Output> {
    check_target(st, clause)?;
    let rs = match select(st)? {
        Output::Rows(rs) => rs,
        Output::Ok { .. } => return Err(SqlError::parse("INTO OUTFILE")),
    };
    let bytes = encode(st, clause, &rs)?;
    let path = file_access::resolve(st, &clause.file);
    // Created exclusively, so a file made meanwhile is not overwritten.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path);
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(exists(&path)),
        Err(e) => {
            return Err(SqlError::new(
                ErrorCode::CantCreateFile,
                format!(
                    "Can't create/write to file '{}' {}",
                    path.display(),
                    file_access::os_error(&e)
                ),
            ))
        }
    };
    file.write_all(&bytes).map_err(|e| {
        SqlError::new(
            ErrorCode::CantCreateFile,
            format!(
                "Can't create/write to file '{}' {}",
                path.display(),
                file_access::os_error(&e)
            ),
        )
    })?;
    Ok(Output::affected(rs.rows.len() as u64))
}
