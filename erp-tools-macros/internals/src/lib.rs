//! Internal support crate for [erp-tools](https://docs.rs/erp-tools-core): the
//! argument-name rules.
//!
//! It holds, as plain functions over strings, the rules that decide which wire names
//! may be tool arguments (no branch, tenant, company, user, run or authority names in any
//! tier; no status, price, total or posting-date names in a draft tool), together with
//! serde's renaming rules and the splitting of a name into words that those rules rely
//! on. The same code is used by two crates:
//!
//! - `erp-tools-macros`, whose `#[derive(ToolArgs)]` and `#[erp_tool]` reject a forbidden
//!   name at compile time with the messages produced here;
//! - `erp-tools-core`, whose registry and surface report re-check a finished schema
//!   against the very same lists, whatever produced the schema.
//!
//! Keeping the rules in one small crate without dependencies lets both use them with no
//! second copy of the lists (a proc-macro crate cannot export ordinary functions).
//!
//! **This is not a public API.** It is published only because the two crates above depend
//! on it. Use `erp-tools-core` instead; this crate is exempt from semver: any release may
//! change or remove any item, and only the version required by the matching
//! `erp-tools-macros` and `erp-tools-core` is supported.

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

pub mod names;
