//! The Tryton example's modules, compiled into each suite that runs them against a real
//! Tryton. A suite declares `mod tryton_example;` and imports the modules at its root
//! (`use tryton_example::{purchasing, review, tryton};`), where the modules' own
//! `crate::tryton` paths find them.

// Each suite uses part of the example.
#![allow(dead_code)]

#[path = "../../../examples/tryton/purchasing.rs"]
pub mod purchasing;
#[path = "../../../examples/tryton/review.rs"]
pub mod review;
#[path = "../../../examples/tryton/tryton.rs"]
pub mod tryton;

use std::sync::Arc;

use erp_tools_core::{ToolDef, ToolRegistry};

/// A registry of the example's purchasing module with `tools` (`erp_tools_core::tools![..]`).
pub fn registry(tools: Vec<&'static ToolDef>) -> Arc<ToolRegistry> {
    Arc::new(
        ToolRegistry::builder()
            .module("purchasing", purchasing::DESCRIPTION)
            .tools(tools)
            .build()
            .expect("the example's registry is valid"),
    )
}
