//! The system-variable registry: each variable's MySQL metadata (scope, dynamic or read-only,
//! type, default, range, required privilege) and the global values.
//!
//! Sessions copy the session-scoped globals when they connect, as MySQL does, so a `SET GLOBAL`
//! affects new connections only; `@@global.x` always reads the shared value.
//!
//! A subsystem whose running state a variable controls (purge, the lock system, the redo log,
//! the thread pool, the thread cache) registers a typed on-set hook for it with
//! [`Registry::on_set`]; [`Registry::set_global`] runs the hook, which may refuse the value,
//! before it stores the value. Variables without a hook are read from the registry where they
//! are used.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use crate::error::{ErrorCode, SqlError, SqlResult};

/// Where a variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Only `@@global`: one server-wide value.
    Global,
    /// Only `@@session` (e.g. `timestamp`).
    Session,
    /// Both: the session copy starts as the global value at connect.
    Both,
}

/// A variable's value type and the values it accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VarType {
    /// ON/OFF, 1/0, TRUE/FALSE.
    Bool,
    /// An integer clamped to `min..=max` (out-of-range values are clamped with a warning,
    /// as MySQL does).
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// One of a fixed list of names (case-insensitive).
    Enum(&'static [&'static str]),
    /// A comma-separated subset of names (case-insensitive), e.g. `sql_mode`.
    Set(&'static [&'static str]),
    /// Free text.
    Str,
    /// Seconds with microseconds, clamped to `0..=max` (e.g. `long_query_time`); kept as
    /// text with six decimals, as SHOW VARIABLES prints it.
    Seconds {
        /// Largest accepted value.
        max: i64,
    },
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum VarValue {
    /// Booleans: shown as ON/OFF by SHOW VARIABLES, 1/0 by `@@x`.
    Bool(bool),
    /// Integers.
    Int(i64),
    /// Text, enum and set values.
    Str(String),
}

impl VarValue {
    /// The value as SHOW VARIABLES prints it.
    pub fn show(&self) -> String {
        match self {
            VarValue::Bool(true) => "ON".into(),
            VarValue::Bool(false) => "OFF".into(),
            VarValue::Int(i) => i.to_string(),
            VarValue::Str(s) => s.clone(),
        }
    }

    /// The value as an integer (booleans 1/0); text parses or is 0.
    pub fn as_int(&self) -> i64 {
        match self {
            VarValue::Bool(b) => i64::from(*b),
            VarValue::Int(i) => *i,
            VarValue::Str(s) => s.parse().unwrap_or(0),
        }
    }

    /// The value as a boolean.
    pub fn as_bool(&self) -> bool {
        self.as_int() != 0
    }

    /// The text of a string value ("" for others).
    pub fn as_str(&self) -> &str {
        match self {
            VarValue::Str(s) => s,
            _ => "",
        }
    }
}

/// The privilege needed to change a variable globally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarPrivilege {
    /// `SYSTEM_VARIABLES_ADMIN` or `SUPER` (MySQL's rule for SET GLOBAL).
    SystemVariablesAdmin,
}

/// Metadata for one system variable.
#[derive(Debug, Clone)]
pub struct VarDef {
    /// The name, lower case with underscores, as MySQL spells it.
    pub name: &'static str,
    /// Global, session or both.
    pub scope: Scope,
    /// Settable at run time (otherwise only at start-up: 1238 on SET).
    pub dynamic: bool,
    /// The session value may be read but not set (e.g. `max_allowed_packet`: 1621).
    pub session_read_only: bool,
    /// Value type and range.
    pub ty: VarType,
    /// The compiled-in default.
    pub default: VarValue,
    /// Which feature the variable belongs to (a variable exists only while its feature is on).
    pub feature: Feature,
}

impl VarDef {
    /// A dynamic variable that always exists (see [`VarDef::read_only`]).
    pub fn new(name: &'static str, scope: Scope, ty: VarType, default: VarValue) -> VarDef {
        VarDef {
            name,
            scope,
            dynamic: true,
            session_read_only: false,
            ty,
            default,
            feature: Feature::Core,
        }
    }

    /// The same variable, settable only at start-up.
    pub fn read_only(mut self) -> VarDef {
        self.dynamic = false;
        self
    }
}

/// Groups of variables that exist only in some configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// Always present.
    Core,
    /// Present only when the thread pool is loaded (`thread_pool_*`, as MySQL's plugin).
    ThreadPool,
}

/// Index of a variable in the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u16);

/// All variables of one server: definitions and global values.
pub struct Registry {
    defs: Vec<VarDef>,
    by_name: HashMap<&'static str, VarId>,
    /// The global values; SET GLOBAL replaces the whole snapshot (copy on write), so a session
    /// keeps the one it connected with for nothing more than a reference count.
    globals: RwLock<Arc<Vec<VarValue>>>,
    /// On-set hooks by variable.
    hooks: RwLock<HashMap<VarId, Arc<Hook>>>,
    /// Serialises `SET GLOBAL` so a subsystem and the registry end with the same value.
    setting: Mutex<()>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut hooked: Vec<&str> = self
            .hooks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .map(|id| self.def(*id).name)
            .collect();
        hooked.sort_unstable();
        f.debug_struct("Registry")
            .field("variables", &self.defs.len())
            .field("hooked", &hooked)
            .finish()
    }
}

/// An on-set hook as the registry keeps it.
type Hook = dyn Fn(&VarValue) -> SqlResult<()> + Send + Sync;

/// A type an on-set hook takes its value as (the registry has validated it for the variable).
pub trait FromVar: Sized {
    /// The value as this type.
    fn from_var(v: &VarValue) -> Self;
}

impl FromVar for bool {
    fn from_var(v: &VarValue) -> bool {
        v.as_bool()
    }
}

/// Seconds (`VarType::Seconds`): the text as a number, 0 if it is none.
impl FromVar for f64 {
    fn from_var(v: &VarValue) -> f64 {
        match v {
            VarValue::Str(s) => s.parse().unwrap_or(0.0),
            other => other.as_int() as f64,
        }
    }
}

impl FromVar for i64 {
    fn from_var(v: &VarValue) -> i64 {
        v.as_int()
    }
}

/// Counts and durations: negative values (which no such variable's range admits) as 0.
impl FromVar for u64 {
    fn from_var(v: &VarValue) -> u64 {
        u64::try_from(v.as_int()).unwrap_or(0)
    }
}

/// Counts and durations, saturating at `u32::MAX`.
impl FromVar for u32 {
    fn from_var(v: &VarValue) -> u32 {
        v.as_int().clamp(0, i64::from(u32::MAX)) as u32
    }
}

impl FromVar for String {
    fn from_var(v: &VarValue) -> String {
        v.as_str().to_string()
    }
}

/// A session's variables: the global values at connect time (shared with every session that
/// connected under the same globals) plus the session's own `SET` values. Keeping only the
/// differences keeps an idle connection small.
#[derive(Debug, Clone)]
pub struct SessionVars {
    base: Arc<Vec<VarValue>>,
    overrides: Vec<(VarId, VarValue)>,
}

impl SessionVars {
    /// The session value of `id` (for global-only variables: the value at connect time).
    pub fn get(&self, id: VarId) -> &VarValue {
        match self.overrides.iter().find(|(i, _)| *i == id) {
            Some((_, v)) => v,
            None => &self.base[usize::from(id.0)],
        }
    }

    /// Sets the session value (the caller has validated it).
    pub fn set(&mut self, id: VarId, v: VarValue) {
        match self.overrides.iter_mut().find(|(i, _)| *i == id) {
            Some(slot) => slot.1 = v,
            None => self.overrides.push((id, v)),
        }
    }
}

/// Normalizes a variable name as mysqld does: case-insensitive, dashes equal underscores.
pub fn normalize_name(name: &str) -> String {
    name.trim().to_ascii_lowercase().replace('-', "_")
}

impl Registry {
    /// Builds a registry from definitions, keeping only those of enabled features.
    pub fn new(defs: Vec<VarDef>, features: &[Feature]) -> Registry {
        let defs: Vec<VarDef> = defs
            .into_iter()
            .filter(|d| features.contains(&d.feature))
            .collect();
        let by_name = defs
            .iter()
            .enumerate()
            .map(|(i, d)| (d.name, VarId(i as u16)))
            .collect();
        let globals = RwLock::new(Arc::new(defs.iter().map(|d| d.default.clone()).collect()));
        Registry {
            defs,
            by_name,
            globals,
            hooks: RwLock::new(HashMap::new()),
            setting: Mutex::new(()),
        }
    }

    /// Registers what `SET GLOBAL name = v` does to the subsystem that owns `name`: `hook`
    /// gets the validated value as `T` and may refuse it with an error, in which case the
    /// registry keeps the old value. Fails with 1193 if the variable does not exist, and
    /// replaces an earlier hook of the same variable.
    pub fn on_set<T: FromVar>(
        &self,
        name: &str,
        hook: impl Fn(T) -> SqlResult<()> + Send + Sync + 'static,
    ) -> SqlResult<()> {
        let id = self.require(name)?;
        let hook: Arc<Hook> = Arc::new(move |v: &VarValue| hook(T::from_var(v)));
        self.hooks
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, hook);
        Ok(())
    }

    /// Whether a subsystem registered an on-set hook for `id`.
    pub fn has_hook(&self, id: VarId) -> bool {
        self.hooks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&id)
    }

    /// `SET GLOBAL` of a validated value: runs the variable's on-set hook (if any), then
    /// stores the value unless the hook refused it.
    pub fn set_global(&self, id: VarId, v: VarValue) -> SqlResult<()> {
        let _one_at_a_time = self.setting.lock().unwrap_or_else(|e| e.into_inner());
        let hook = self
            .hooks
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&id)
            .cloned();
        if let Some(hook) = hook {
            hook(&v)?;
        }
        self.set_global_unchecked(id, v);
        Ok(())
    }

    /// Looks a variable up by any spelling (case, dashes).
    pub fn lookup(&self, name: &str) -> Option<VarId> {
        let n = normalize_name(name);
        self.by_name.get(n.as_str()).copied()
    }

    /// Looks a variable up or fails with 1193.
    pub fn require(&self, name: &str) -> SqlResult<VarId> {
        self.lookup(name)
            .ok_or_else(|| SqlError::unknown_variable(&normalize_name(name)))
    }

    /// The definition of `id`.
    pub fn def(&self, id: VarId) -> &VarDef {
        &self.defs[usize::from(id.0)]
    }

    /// Every variable, in name order.
    pub fn sorted_ids(&self) -> Vec<VarId> {
        let mut ids: Vec<VarId> = (0..self.defs.len()).map(|i| VarId(i as u16)).collect();
        ids.sort_by_key(|id| self.def(*id).name);
        ids
    }

    /// The global value of `id`.
    pub fn global(&self, id: VarId) -> VarValue {
        self.globals.read().unwrap_or_else(|e| e.into_inner())[usize::from(id.0)].clone()
    }

    /// The global value of the variable `name`, which must exist (used for the server's own
    /// variables, named in code).
    pub fn global_by_name(&self, name: &str) -> VarValue {
        match self.lookup(name) {
            Some(id) => self.global(id),
            None => VarValue::Int(0),
        }
    }

    /// Sets a global value without checks (start-up configuration and derived values).
    pub fn set_global_unchecked(&self, id: VarId, v: VarValue) {
        let mut g = self.globals.write().unwrap_or_else(|e| e.into_inner());
        Arc::make_mut(&mut g)[usize::from(id.0)] = v;
    }

    /// A new session's copy of the variables.
    pub fn session_copy(&self) -> SessionVars {
        SessionVars {
            base: self
                .globals
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            overrides: Vec::new(),
        }
    }

    /// Parses and validates `raw` for variable `id`. Integers out of range are clamped, as
    /// MySQL does (with a warning the caller may report).
    pub fn parse_value(&self, id: VarId, raw: &RawValue) -> SqlResult<VarValue> {
        let def = self.def(id);
        let wrong = |shown: &str| {
            SqlError::new(
                ErrorCode::WrongValueForVar,
                format!(
                    "Variable '{}' can't be set to the value of '{}'",
                    def.name, shown
                ),
            )
        };
        let wrong_type = || {
            SqlError::new(
                ErrorCode::WrongTypeForVar,
                format!("Incorrect argument type to variable '{}'", def.name),
            )
        };
        match (def.ty, raw) {
            (_, RawValue::Null) => match def.ty {
                VarType::Str => Ok(VarValue::Str(String::new())),
                _ => Err(wrong("NULL")),
            },
            (VarType::Bool, RawValue::Int(i)) => match i {
                0 => Ok(VarValue::Bool(false)),
                1 => Ok(VarValue::Bool(true)),
                _ => Err(wrong(&i.to_string())),
            },
            (VarType::Bool, RawValue::Text(s)) => match s.to_ascii_uppercase().as_str() {
                "ON" | "TRUE" | "1" | "YES" => Ok(VarValue::Bool(true)),
                "OFF" | "FALSE" | "0" | "NO" => Ok(VarValue::Bool(false)),
                _ => Err(wrong(s)),
            },
            (VarType::Bool, RawValue::Float(_)) => Err(wrong_type()),
            (VarType::Int { min, max }, RawValue::Int(i)) => {
                Ok(VarValue::Int((*i).clamp(min, max)))
            }
            (VarType::Int { min, max }, RawValue::Float(f)) => {
                Ok(VarValue::Int((f.round() as i64).clamp(min, max)))
            }
            (VarType::Int { min, max }, RawValue::Text(s)) => match parse_size(s) {
                Some(i) => Ok(VarValue::Int(i.clamp(min, max))),
                None => Err(wrong_type()),
            },
            (VarType::Enum(names), raw) => {
                let text = raw.text();
                if let RawValue::Int(i) = raw {
                    if let Some(n) = usize::try_from(*i).ok().and_then(|i| names.get(i)) {
                        return Ok(VarValue::Str((*n).to_string()));
                    }
                }
                names
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(&text))
                    .map(|n| VarValue::Str((*n).to_string()))
                    .ok_or_else(|| wrong(&text))
            }
            (VarType::Set(names), raw) => {
                let text = raw.text();
                let mut out: Vec<&str> = Vec::new();
                for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                    let n = names
                        .iter()
                        .find(|n| n.eq_ignore_ascii_case(part))
                        .ok_or_else(|| wrong(&text))?;
                    if !out.contains(n) {
                        out.push(n);
                    }
                }
                // Keep the registry's canonical order, as MySQL prints sets.
                let ordered: Vec<&str> =
                    names.iter().copied().filter(|n| out.contains(n)).collect();
                Ok(VarValue::Str(ordered.join(",")))
            }
            (VarType::Str, raw) => Ok(VarValue::Str(raw.text())),
            (VarType::Seconds { max }, raw) => {
                let secs = match raw {
                    RawValue::Int(i) => *i as f64,
                    RawValue::Float(f) => *f,
                    RawValue::Text(s) => s.trim().parse().map_err(|_| wrong_type())?,
                    RawValue::Null => return Err(wrong("NULL")),
                };
                Ok(VarValue::Str(format!("{:.6}", secs.clamp(0.0, max as f64))))
            }
        }
    }
}

/// A value as written in `SET` or a configuration file, before it is typed for a variable.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    /// `NULL`.
    Null,
    /// An integer literal or integer expression result.
    Int(i64),
    /// A non-integer number.
    Float(f64),
    /// A string or identifier (`ON`, `'REPEATABLE-READ'`, `utf8mb4`).
    Text(String),
}

impl RawValue {
    fn text(&self) -> String {
        match self {
            RawValue::Null => "NULL".into(),
            RawValue::Int(i) => i.to_string(),
            RawValue::Float(f) => f.to_string(),
            RawValue::Text(s) => s.clone(),
        }
    }
}

/// Parses an integer with mysqld's optional size suffix (K, M, G, T; case-insensitive), as
/// accepted in option files and on the command line.
pub fn parse_size(s: &str) -> Option<i64> {
    let s = s.trim();
    let (digits, mult) = match s.chars().last()?.to_ascii_uppercase() {
        'K' => (&s[..s.len() - 1], 1i64 << 10),
        'M' => (&s[..s.len() - 1], 1i64 << 20),
        'G' => (&s[..s.len() - 1], 1i64 << 30),
        'T' => (&s[..s.len() - 1], 1i64 << 40),
        _ => (s, 1),
    };
    digits.trim().parse::<i64>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> Registry {
        Registry::new(crate::vars::system::definitions(), &[Feature::Core])
    }

    #[test]
    fn lookup_accepts_dashes_and_case() {
        let r = reg();
        assert_eq!(r.lookup("Max-Connections"), r.lookup("max_connections"));
        assert!(r.lookup("no_such_thing").is_none());
    }

    #[test]
    fn values_are_validated_like_mysql() {
        let r = reg();
        let mc = r.lookup("max_connections").unwrap();
        assert_eq!(
            r.parse_value(mc, &RawValue::Int(0)).unwrap(),
            VarValue::Int(1)
        );
        assert_eq!(
            r.parse_value(mc, &RawValue::Text("1K".into())).unwrap(),
            VarValue::Int(1024)
        );
        assert_eq!(
            r.parse_value(mc, &RawValue::Text("x".into()))
                .unwrap_err()
                .code,
            ErrorCode::WrongTypeForVar
        );
        let ac = r.lookup("autocommit").unwrap();
        assert_eq!(
            r.parse_value(ac, &RawValue::Text("off".into())).unwrap(),
            VarValue::Bool(false)
        );
        assert_eq!(
            r.parse_value(ac, &RawValue::Int(2)).unwrap_err().code,
            ErrorCode::WrongValueForVar
        );
        let iso = r.lookup("transaction_isolation").unwrap();
        assert_eq!(
            r.parse_value(iso, &RawValue::Text("read-committed".into()))
                .unwrap(),
            VarValue::Str("READ-COMMITTED".into())
        );
        let mode = r.lookup("sql_mode").unwrap();
        assert_eq!(
            r.parse_value(
                mode,
                &RawValue::Text("strict_trans_tables,ansi_quotes".into())
            )
            .unwrap(),
            VarValue::Str("ANSI_QUOTES,STRICT_TRANS_TABLES".into())
        );
        assert!(r.parse_value(mode, &RawValue::Text("NOPE".into())).is_err());
    }
}
