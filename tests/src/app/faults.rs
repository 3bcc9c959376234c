//! Faults the fixture's handlers inject on request, to test what the runtime does when a
//! handler misbehaves. Each is triggered by a value in the arguments, so a test asks for
//! it by sending that value; no other call is affected.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use erp_tools_core::agent::ManualClock;
use erp_tools_core::prelude::*;

/// Vendor whose drafts fail with a business error after their rows were inserted.
pub const VENDOR_FAILS_AFTER_INSERT: &str = "V-FAIL";
/// Vendor whose drafts panic after their rows were inserted.
pub const VENDOR_PANICS_AFTER_INSERT: &str = "V-PANIC";
/// Vendor whose drafts never finish: after inserting their rows they advance the run's
/// clock (see [`advance_when_hanging`]) and wait until cancelled.
pub const VENDOR_HANGS: &str = "V-HANG";
/// Purchase order number for which `purchasing_get_po` tries to write through its
/// read-only handle (the runtime must refuse the write).
pub const PO_WRITES_THROUGH_READ_HANDLE: &str = "PO-WRITE-ATTEMPT";

/// Clocks that hanging drafts advance, by agent run.
fn hang_clocks() -> &'static Mutex<HashMap<String, ManualClock>> {
    static CLOCKS: OnceLock<Mutex<HashMap<String, ManualClock>>> = OnceLock::new();
    CLOCKS.get_or_init(Default::default)
}

/// Makes a hanging draft of `run` advance `clock` by an hour before it waits, so that an
/// agent timing the run on `clock` sees its deadline pass while the call hangs.
pub fn advance_when_hanging(run: &str, clock: &ManualClock) {
    hang_clocks()
        .lock()
        .unwrap()
        .insert(run.to_string(), clock.clone());
}

/// What a draft handler does after inserting its rows for `vendor_code`, before it
/// records its document: nothing, or the fault that vendor asks for.
pub(super) async fn after_insert(
    ctx: &ToolContext,
    vendor_code: &str,
    number: &str,
) -> Result<(), ToolError> {
    match vendor_code {
        VENDOR_FAILS_AFTER_INSERT => Err(ToolError::rejected(format!(
            "Vendor {vendor_code} is blocked for new orders."
        ))),
        VENDOR_PANICS_AFTER_INSERT => panic!("simulated crash after inserting {number}"),
        VENDOR_HANGS => {
            let clock = hang_clocks()
                .lock()
                .unwrap()
                .get(ctx.agent_run_id())
                .cloned();
            if let Some(clock) = clock {
                clock.advance(Duration::from_secs(3600));
            }
            futures::future::pending().await
        }
        _ => Ok(()),
    }
}

/// Tries to insert a purchase order through the read-only handle `db`.
pub(super) async fn write_through(db: &ReadDb) -> Result<(), ToolError> {
    sqlx::query(
        "INSERT INTO purchase_orders (number, branch_id, vendor_code, needed_by, status, \
         total_qty, drafted_by_agent_run, drafted_on_behalf_of) \
         VALUES ('PO-SNEAKY', 1, 'V-00001', '2026-12-01', 'draft', '1', 'x', 'y')",
    )
    .execute(db.pool())
    .await?;
    Ok(())
}
