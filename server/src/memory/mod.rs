//! Memory that fails a statement, not the process: a counting global allocator
//! ([`CountingAlloc`], installed by the `tpbed-server` binary) and the [`MemoryBudget`] that
//! writes (1114) and large values (1037) are checked against before they are built, with the
//! `tpbed_max_memory` variable that sets its limit; and the [`categories`] performance_schema
//! attributes that memory to.

mod alloc;
mod budget;
pub(crate) mod categories;

use std::sync::Arc;

pub(crate) use alloc::release_thread_memory;
pub use alloc::{release_free_memory, CountingAlloc};
pub use budget::MemoryBudget;
pub(crate) use budget::{out_of_memory, CHECKED_VALUE};

use crate::error::SqlResult;
use crate::vars::registry::{Scope, VarDef, VarType};
use crate::vars::{Registry, VarValue};

/// `tpbed_max_memory`: the heap bytes the server may hold (0: no limit beyond the one the
/// address-space limit implies); a write past it gets 1114, a large value 1037.
pub(crate) fn definitions() -> Vec<VarDef> {
    vec![VarDef::new(
        "tpbed_max_memory",
        Scope::Global,
        VarType::Int {
            min: 0,
            max: i64::MAX,
        },
        VarValue::Int(0),
    )]
}

/// The server's budget: its address-space ceiling read from the process now, its limit from
/// `tpbed_max_memory` as set at start-up, and an on-set hook that carries `SET GLOBAL
/// tpbed_max_memory` to it.
pub(crate) fn start(vars: &Registry) -> SqlResult<Arc<MemoryBudget>> {
    let budget = Arc::new(MemoryBudget::from_process());
    let bytes = vars.global_by_name("tpbed_max_memory").as_int();
    budget.set_max_memory(u64::try_from(bytes).unwrap_or(0));
    let b = Arc::clone(&budget);
    vars.on_set("tpbed_max_memory", move |bytes: u64| {
        b.set_max_memory(bytes);
        Ok(())
    })?;
    Ok(budget)
}

/// An empty buffer with room for `len` bytes, or 1037 when the allocator refuses it (the
/// budget is checked by the caller, which knows the statement's budget).
pub(crate) fn try_buffer(len: usize) -> SqlResult<Vec<u8>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| out_of_memory(len))?;
    Ok(out)
}

/// A copy of `bytes` made fallibly: 1037 when the allocator refuses it.
pub(crate) fn try_copy(bytes: &[u8]) -> SqlResult<Vec<u8>> {
    let mut out = try_buffer(bytes.len())?;
    out.extend_from_slice(bytes);
    Ok(out)
}

/// Appends `bytes` to `out`, growing it to exactly the length needed, fallibly (1037).
pub(crate) fn try_extend(out: &mut Vec<u8>, bytes: &[u8]) -> SqlResult<()> {
    out.try_reserve_exact(bytes.len())
        .map_err(|_| out_of_memory(out.len().saturating_add(bytes.len())))?;
    out.extend_from_slice(bytes);
    Ok(())
}

/// The bytes a write of `row` adds to the store, as the budget counts them: its encoded
/// size (string bytes plus a length prefix; 16 for any other value), twice over, since a row
/// is encoded into a buffer and then copied into its shared allocation.
pub(crate) fn row_bytes(row: &[crate::value::Value]) -> usize {
    let encoded = row
        .iter()
        .map(|v| match v {
            crate::value::Value::Bytes(b) => b.len().saturating_add(10),
            _ => 16,
        })
        .fold(0usize, usize::saturating_add);
    encoded.saturating_mul(2)
}
