//! `information_schema.TRIGGERS`: tpbed has no triggers, so the table is empty; dump tools
//! (mariadb-dump, mysqldump) read it for every table they dump.

use crate::introspection::vtables::{VType, VirtualTable};
use crate::introspection::ServerView;
use crate::value::Value;

/// `information_schema.TRIGGERS` (always empty).
#[derive(Debug)]
pub struct Triggers;

impl VirtualTable for Triggers {
    fn name(&self) -> &'static str {
        "TRIGGERS"
    }
    fn columns(&self) -> &'static [(&'static str, VType)] {
        use VType::*;
        &[
            ("TRIGGER_CATALOG", Text),
            ("TRIGGER_SCHEMA", Text),
            ("TRIGGER_NAME", Text),
            ("EVENT_MANIPULATION", Text),
            ("EVENT_OBJECT_CATALOG", Text),
            ("EVENT_OBJECT_SCHEMA", Text),
            ("EVENT_OBJECT_TABLE", Text),
            ("ACTION_ORDER", UInt),
            ("ACTION_CONDITION", Text),
            ("ACTION_STATEMENT", Text),
            ("ACTION_ORIENTATION", Text),
            ("ACTION_TIMING", Text),
            ("CREATED", Text),
            ("SQL_MODE", Text),
            ("DEFINER", Text),
            ("CHARACTER_SET_CLIENT", Text),
            ("COLLATION_CONNECTION", Text),
            ("DATABASE_COLLATION", Text),
        ]
    }
    fn rows(&self, _server: &dyn ServerView) -> Vec<Vec<Value>> {
        Vec::new()
    }
}
