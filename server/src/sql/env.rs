//! The evaluation environment of a statement running in a session.

use std::time::Duration;

use crate::connections::KILL_NONE;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::eval::EvalEnv;
use crate::sql::expr::{SubqueryRef, VarScopeRef};
use crate::sql::functions::Func;
use crate::value::Value;
use crate::vars::{Scope, VarId, VarValue};

/// A statement's view of its session: parameters, the current row, the statement's clock.
#[derive(Debug)]
pub struct StmtEnv<'a> {
    /// The session.
    pub st: &'a Context,
    /// Parameter values.
    pub params: &'a [Value],
    /// The current row.
    pub row: &'a [Value],
    /// When the statement started (µs since the epoch).
    pub now: i64,
    /// Runs scalar subqueries (None: the statement has none it can run).
    pub subqueries: Option<&'a dyn SubqueryRunner>,
}

/// Runs the scalar subqueries of a statement's expressions.
pub trait SubqueryRunner {
    /// The subquery's value over the enclosing statement's current `row`.
    fn scalar(&self, q: &SubqueryRef, row: &[Value]) -> SqlResult<Value>;
}

impl std::fmt::Debug for dyn SubqueryRunner + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SubqueryRunner")
    }
}

impl<'a> StmtEnv<'a> {
    /// An environment with no current row.
    pub fn new(st: &'a Context, params: &'a [Value]) -> StmtEnv<'a> {
        StmtEnv {
            st,
            params,
            row: &[],
            now: crate::time::now_micros(),
            subqueries: None,
        }
    }
}

/// A variable value as `@@x` returns it.
pub fn var_to_value(v: &VarValue) -> Value {
    match v {
        VarValue::Bool(b) => Value::Int(i64::from(*b)),
        VarValue::Int(i) => Value::Int(*i),
        VarValue::Str(s) => Value::str(s),
    }
}

/// Reads `@@[scope.]name` for a session with MySQL's scope errors.
pub fn read_var(st: &Context, id: VarId, scope: VarScopeRef) -> SqlResult<Value> {
    let def = st.core.vars.def(id);
    let ro = |what: &str| {
        SqlError::new(
            crate::error::ErrorCode::IncorrectGlobalLocalVar,
            format!("Variable '{}' is a {what} variable", def.name),
        )
    };
    let ids = &st.core.ids;
    if id == ids.warning_count || id == ids.error_count {
        if matches!(scope, VarScopeRef::Global) {
            return Err(ro("SESSION"));
        }
        let (warnings, errors) = st.warnings.previous_counts();
        return Ok(Value::UInt(if id == ids.warning_count {
            warnings
        } else {
            errors
        }));
    }
    Ok(match (scope, def.scope) {
        (VarScopeRef::Global, Scope::Session) => return Err(ro("SESSION")),
        (VarScopeRef::Session, Scope::Global) => return Err(ro("GLOBAL")),
        (VarScopeRef::Global, _) | (VarScopeRef::Default, Scope::Global) => {
            var_to_value(&st.core.vars.global(id))
        }
        _ => var_to_value(st.vars.get(id)),
    })
}

impl EvalEnv for StmtEnv<'_> {
    fn scalar_subquery(&self, q: &SubqueryRef) -> SqlResult<Value> {
        match self.subqueries {
            Some(runner) => runner.scalar(q, self.row),
            None => Err(SqlError::unsupported("subqueries here")),
        }
    }

    fn param(&self, i: usize) -> SqlResult<Value> {
        Ok(self.params.get(i).cloned().unwrap_or(Value::Null))
    }

    fn sysvar(&self, id: VarId, scope: VarScopeRef) -> SqlResult<Value> {
        read_var(self.st, id, scope)
    }

    fn user_var(&self, name: &str) -> Option<&Value> {
        self.st.user_vars.get(name)
    }

    fn reserve(&self, bytes: usize) -> SqlResult<()> {
        self.st.core.memory.reserve_value(bytes)
    }

    fn row(&self) -> &[Value] {
        self.row
    }

    fn session_fact(&self, f: Func) -> Value {
        let st = self.st;
        match f {
            Func::Version => Value::str(crate::vars::system::SERVER_VERSION),
            Func::Database => st.db.as_deref().map_or(Value::Null, Value::str),
            Func::User => Value::str(&format!("{}@{}", st.user, st.conn.host)),
            Func::CurrentUser => Value::str(&format!("{}@{}", st.user, st.account_host)),
            Func::ConnectionId => Value::UInt(u64::from(st.conn.id)),
            Func::LastInsertId => Value::UInt(st.last_insert_id),
            Func::RowCount => Value::Int(st.row_count),
            _ => Value::Null,
        }
    }

    fn now_micros(&self) -> i64 {
        self.now
    }

    fn sleep(&self, seconds: f64) -> SqlResult<bool> {
        let _wait = pool_core::wait::begin(pool_core::WaitKind::Sleep);
        // At most about 31 years (NaN too): a wait only KILL ends, never an overflow.
        let secs = if seconds.is_finite() {
            seconds.clamp(0.0, 1e9)
        } else {
            1e9
        };
        let end = std::time::Instant::now() + Duration::from_secs_f64(secs);
        loop {
            if self.killed() {
                return Ok(true);
            }
            let now = std::time::Instant::now();
            if now >= end {
                return Ok(false);
            }
            std::thread::sleep((end - now).min(Duration::from_millis(10)));
        }
    }

    fn max_allowed_packet(&self) -> usize {
        let v = self
            .st
            .vars
            .get(self.st.core.ids.max_allowed_packet)
            .as_int();
        usize::try_from(v).unwrap_or(usize::MAX)
    }

    fn warn(&self, code: ErrorCode, message: String) {
        self.st.warn_shared(code.code(), message);
    }

    fn division_by_zero_warns(&self) -> bool {
        self.st.sql_modes().error_for_division_by_zero
    }

    fn killed(&self) -> bool {
        self.st
            .conn
            .killed
            .load(std::sync::atomic::Ordering::Relaxed)
            != KILL_NONE
    }
}
