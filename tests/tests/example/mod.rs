//! The distributor example's tool modules, compiled into each test suite that runs the
//! example's tools. A suite declares `mod example;` and imports the six modules at its
//! root (`use example::{app, buying, data, inventory, printing, purchasing};`), where the
//! modules' own `crate::data` paths find them.

// Each suite uses part of the example; `open_db` and `branch_id` serve the binary only.
#![allow(dead_code)]

#[path = "../../../examples/distributor/app.rs"]
pub mod app;
#[path = "../../../examples/distributor/buying.rs"]
pub mod buying;
#[path = "../../../examples/distributor/data.rs"]
pub mod data;
#[path = "../../../examples/distributor/inventory.rs"]
pub mod inventory;
#[path = "../../../examples/distributor/printing.rs"]
pub mod printing;
#[path = "../../../examples/distributor/purchasing.rs"]
pub mod purchasing;
#[path = "../../../examples/distributor/scale.rs"]
pub mod scale;
