//! `SET` with MySQL's rules: scope errors 1228/1229, read-only 1238 (and 1621 for
//! session-read-only), unknown 1193, wrong value 1231, wrong type 1232, privileges 1227 for
//! SET GLOBAL; `DEFAULT` resets; all assignments are checked before any is applied.

use sqlparser::ast::{self, ContextModifier, Expr};

use crate::accounts::Privilege;
use crate::context::Context;
use crate::error::{ErrorCode, SqlError, SqlResult};
use crate::sql::env::StmtEnv;
use crate::sql::eval::eval;
use crate::sql::expr::{Binder, BoundExpr, Resolver};
use crate::sql::output::Output;
use crate::stmt::plan::{Plan, PreparedStmt};
use crate::value::Value;
use crate::vars::registry::RawValue;
use crate::vars::{Counter, Registry, Scope, VarId, VarValue};

/// What `SET TRANSACTION` changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxScope {
    /// No keyword: only the next transaction.
    Next,
    /// SESSION.
    Session,
    /// GLOBAL.
    Global,
}

/// Where a SET assignment goes.
#[derive(Debug, Clone, PartialEq)]
pub enum SetTarget {
    /// A system variable; `global` for SET GLOBAL / `@@global.`.
    SysVar {
        /// The variable.
        id: VarId,
        /// Global scope.
        global: bool,
    },
    /// A user variable `@name`.
    UserVar(String),
}

/// One assignment of a SET statement.
#[derive(Debug, Clone, PartialEq)]
pub struct SetItem {
    /// The target.
    pub target: SetTarget,
    /// The value expression; `None` is `DEFAULT`.
    pub value: Option<BoundExpr>,
}

struct NoColumns<'a>(&'a Registry);

impl Resolver for NoColumns<'_> {
    fn column(&self, _q: Option<&str>, name: &str) -> SqlResult<usize> {
        Err(SqlError::new(
            ErrorCode::BadField,
            format!("Unknown column '{name}' in 'field list'"),
        ))
    }
    fn registry(&self) -> &Registry {
        self.0
    }
}

fn target(
    st: &Context,
    scope: Option<&ContextModifier>,
    name: &ast::ObjectName,
) -> SqlResult<SetTarget> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect();
    let mut global = matches!(scope, Some(ContextModifier::Global));
    let var = match parts.as_slice() {
        [one] if one.starts_with("@@") => one[2..].to_string(),
        [one] if one.starts_with('@') => {
            return Ok(SetTarget::UserVar(one[1..].to_ascii_lowercase()))
        }
        [one] => one.clone(),
        [s, v] if s.eq_ignore_ascii_case("@@global") => {
            global = true;
            v.clone()
        }
        [s, v] if s.eq_ignore_ascii_case("@@session") || s.eq_ignore_ascii_case("@@local") => {
            v.clone()
        }
        [s, v] if s.eq_ignore_ascii_case("global") => {
            global = true;
            v.clone()
        }
        [s, v] if s.eq_ignore_ascii_case("session") || s.eq_ignore_ascii_case("local") => v.clone(),
        _ => return Err(SqlError::parse(&name.to_string())),
    };
    let id = st.core.vars.require(&var)?;
    Ok(SetTarget::SysVar { id, global })
}

fn value<R: Resolver>(binder: &mut Binder<'_, R>, e: &Expr) -> SqlResult<Option<BoundExpr>> {
    // Bare words are values in SET (`SET autocommit = ON`, `SET sql_mode = ANSI`).
    if let Expr::Identifier(i) = e {
        if i.quote_style.is_none() && !i.value.starts_with('@') {
            if i.value.eq_ignore_ascii_case("default") {
                return Ok(None);
            }
            return Ok(Some(BoundExpr::Literal(Value::str(&i.value))));
        }
    }
    binder.bind(e).map(Some)
}

/// Plans a sqlparser SET statement.
pub fn plan(st: &Context, set: &ast::Set) -> SqlResult<PreparedStmt> {
    let resolver = NoColumns(&st.core.vars);
    let mut binder = Binder::new(&resolver);
    let plan = match set {
        ast::Set::SingleAssignment {
            scope,
            variable,
            values,
            ..
        } => {
            if values.len() != 1 {
                return Err(SqlError::parse(&set.to_string()));
            }
            let t = target(st, scope.as_ref(), variable)?;
            Plan::Set(vec![SetItem {
                target: t,
                value: value(&mut binder, &values[0])?,
            }])
        }
        ast::Set::MultipleAssignments { assignments } => {
            let mut items = Vec::new();
            for a in assignments {
                let t = target(st, a.scope.as_ref(), &a.name)?;
                items.push(SetItem {
                    target: t,
                    value: value(&mut binder, &a.value)?,
                });
            }
            Plan::Set(items)
        }
        ast::Set::SetNames {
            charset_name,
            collation_name,
        } => Plan::SetNames {
            charset: charset_name.value.clone(),
            collation: collation_name.clone(),
        },
        ast::Set::SetNamesDefault {} => Plan::SetNames {
            charset: "utf8mb4".into(),
            collation: None,
        },
        other => return Err(SqlError::unsupported(&other.to_string())),
    };
    Ok(PreparedStmt {
        plan,
        params: binder.params,
        columns: Vec::new(),
    })
}

fn raw_of(v: Value) -> RawValue {
    match v {
        Value::Null => RawValue::Null,
        Value::Int(i) => RawValue::Int(i),
        Value::UInt(u) => RawValue::Int(i64::try_from(u).unwrap_or(i64::MAX)),
        Value::Double(d) => RawValue::Float(d),
        Value::Decimal(d) => {
            if d.scale == 0 {
                RawValue::Int(i64::try_from(d.unscaled()).unwrap_or(i64::MAX))
            } else {
                RawValue::Float(d.to_f64())
            }
        }
        Value::Bytes(b) => RawValue::Text(String::from_utf8_lossy(&b).into_owned()),
        other => RawValue::Text(crate::sql::format::text(&other)),
    }
}

/// Checks that `st` may change `id` in the given scope.
pub fn check_settable(st: &Context, id: VarId, global: bool) -> SqlResult<()> {
    let def = st.core.vars.def(id);
    let err = |code, msg: String| Err(SqlError::new(code, msg));
    if !def.dynamic {
        return err(
            ErrorCode::IncorrectGlobalLocalVar,
            format!("Variable '{}' is a read only variable", def.name),
        );
    }
    if global {
        if def.scope == Scope::Session {
            return err(
                ErrorCode::LocalVariable,
                format!(
                    "Variable '{}' is a SESSION variable and can't be used with SET GLOBAL",
                    def.name
                ),
            );
        }
        if !(st.privileges.has(Privilege::SystemVariablesAdmin)
            || st.privileges.has(Privilege::SUPER))
        {
            return Err(SqlError::need_privilege("SUPER or SYSTEM_VARIABLES_ADMIN"));
        }
    } else {
        if def.scope == Scope::Global {
            return err(
                ErrorCode::GlobalVariable,
                format!(
                    "Variable '{}' is a GLOBAL variable and should be set with SET GLOBAL",
                    def.name
                ),
            );
        }
        if def.session_read_only {
            return err(
                ErrorCode::VariableIsReadonly,
                format!(
                    "SESSION variable '{}' is read-only. Use SET GLOBAL to assign the value",
                    def.name
                ),
            );
        }
    }
    Ok(())
}

/// Executes SET: evaluate and validate every assignment, then apply them in order.
pub fn execute(st: &mut Context, items: &[SetItem], params: &[Value]) -> SqlResult<Output> {
    st.count(Counter::ComSetOption);
    enum Apply {
        Sys(VarId, bool, VarValue, Option<String>),
        User(String, Value),
    }
    let mut plan = Vec::with_capacity(items.len());
    {
        let env = StmtEnv::new(st, params);
        for item in items {
            match &item.target {
                SetTarget::UserVar(name) => {
                    let v = match &item.value {
                        Some(e) => eval(e, &env)?,
                        None => Value::Null,
                    };
                    plan.push(Apply::User(name.clone(), v));
                }
                SetTarget::SysVar { id, global } => {
                    check_settable(st, *id, *global)?;
                    let (v, warning) = match &item.value {
                        None if *global => (st.core.vars.def(*id).default.clone(), None),
                        None => (st.core.vars.global(*id), None),
                        Some(e) => {
                            let raw = raw_of(eval(e, &env)?);
                            let v = st.core.vars.parse_value(*id, &raw)?;
                            let warning = match (&raw, &v) {
                                (RawValue::Int(asked), VarValue::Int(got)) if asked != got => {
                                    Some(format!(
                                        "Truncated incorrect {} value: '{asked}'",
                                        st.core.vars.def(*id).name
                                    ))
                                }
                                _ => None,
                            };
                            (v, warning)
                        }
                    };
                    plan.push(Apply::Sys(*id, *global, v, warning));
                }
            }
        }
    }
    for a in plan {
        match a {
            Apply::User(name, v) => {
                st.user_vars.insert(name, v);
            }
            Apply::Sys(id, global, v, warning) => {
                if let Some(w) = warning {
                    st.warn(1292, w);
                }
                apply(st, id, global, v)?;
            }
        }
    }
    Ok(Output::ok())
}

/// Stores a validated value and runs the variable's side effects.
pub fn apply(st: &mut Context, id: VarId, global: bool, v: VarValue) -> SqlResult<()> {
    if global {
        st.core.set_global(id, v)?;
        return Ok(());
    }
    if id == st.core.ids.autocommit && v.as_bool() && !st.autocommit() {
        // Turning autocommit on commits the open transaction, as MySQL does.
        crate::stmt::transaction::commit(st);
    }
    st.set_var(id, v);
    Ok(())
}

/// `SET NAMES`: character_set_client, _connection and _results, and collation_connection.
pub fn set_names(st: &mut Context, charset: &str, collation: Option<&str>) -> SqlResult<Output> {
    st.count(Counter::ComSetOption);
    let (name, default_coll) = crate::sql::collations::charset(charset)?;
    let coll = match collation {
        Some(c) => crate::sql::collations::resolve(Some(charset), Some(c))?
            .unwrap_or_else(|| default_coll.to_string()),
        None => default_coll.to_string(),
    };
    for var in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        let id = st.core.vars.require(var)?;
        st.set_var(id, VarValue::Str(name.to_string()));
    }
    let id = st.core.vars.require("collation_connection")?;
    st.set_var(id, VarValue::Str(coll));
    Ok(Output::ok())
}

/// `SET [GLOBAL|SESSION] TRANSACTION ...`.
pub fn set_transaction(
    st: &mut Context,
    scope: TxScope,
    isolation: Option<&'static str>,
    read_only: Option<bool>,
) -> SqlResult<Output> {
    st.count(Counter::ComSetOption);
    if scope == TxScope::Next && st.in_transaction {
        return Err(SqlError::new(
            ErrorCode::CantChangeTxCharacteristics,
            "Transaction characteristics can't be changed while a transaction is in progress",
        ));
    }
    let mut changes = Vec::new();
    if let Some(level) = isolation {
        changes.push((
            st.core.vars.require("transaction_isolation")?,
            VarValue::Str(level.to_string()),
        ));
    }
    if let Some(ro) = read_only {
        changes.push((
            st.core.vars.require("transaction_read_only")?,
            VarValue::Bool(ro),
        ));
    }
    for (id, v) in changes {
        match scope {
            TxScope::Global => {
                check_settable(st, id, true)?;
                st.core.set_global(id, v)?;
            }
            TxScope::Session => st.set_var(id, v),
            TxScope::Next => {
                st.next_transaction.push((id, v));
            }
        }
    }
    Ok(Output::ok())
}
