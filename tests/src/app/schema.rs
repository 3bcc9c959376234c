//! The fixture application's tables, and the migrations that create and seed them on top
//! of the framework's. One text serves both backends (see [`ddl`]).

use erp_tools_core::Database;

use crate::db::ddl;

/// The versions of the application's migrations, in order.
pub const MIGRATIONS: [&str; 2] = ["0001_fixture_tables", "0002_fixture_seed"];

/// The tables, as a [`ddl`] template.
const TABLES: &str = "
CREATE TABLE vendors (
    code TEXT PRIMARY KEY,
    branch_id {int} NOT NULL,
    name TEXT NOT NULL,
    note TEXT NOT NULL,
    blocked_for_payments {int} NOT NULL
);
CREATE TABLE stock (
    item_code TEXT NOT NULL,
    branch_id {int} NOT NULL,
    on_hand TEXT NOT NULL,
    uom TEXT NOT NULL,
    PRIMARY KEY (branch_id, item_code)
);
CREATE TABLE purchase_orders (
    id {id},
    number TEXT NOT NULL UNIQUE,
    branch_id {int} NOT NULL,
    vendor_code TEXT NOT NULL,
    needed_by TEXT NOT NULL,
    note TEXT,
    status TEXT NOT NULL CHECK (status = 'draft'),
    total_qty TEXT NOT NULL,
    drafted_by_agent_run TEXT NOT NULL,
    drafted_on_behalf_of TEXT NOT NULL
);
CREATE TABLE po_lines (
    id {id},
    po_id {int} NOT NULL REFERENCES purchase_orders (id),
    item_code TEXT NOT NULL,
    qty TEXT NOT NULL,
    uom TEXT NOT NULL
);
CREATE TABLE payment_requests (
    id {id},
    number TEXT NOT NULL UNIQUE,
    branch_id {int} NOT NULL,
    vendor_code TEXT NOT NULL,
    amount TEXT NOT NULL,
    note TEXT,
    status TEXT NOT NULL CHECK (status = 'draft'),
    drafted_by_agent_run TEXT NOT NULL,
    drafted_on_behalf_of TEXT NOT NULL
)";

/// Creates the application's tables on `db` and seeds them, once: applying them again
/// (another [`App`](super::App) on the same database) changes nothing.
pub async fn migrate(db: &Database) {
    let tables = ddl(db.backend(), TABLES);
    db.apply_migrations(&[
        (MIGRATIONS[0], &tables),
        (MIGRATIONS[1], &super::seed::sql()),
    ])
    .await
    .expect("fixture migrations");
}
