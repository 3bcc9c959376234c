//! Fixtures shared by the integration tests and their helper binaries.

pub mod mcp_fixture;
