//! [`Fingerprint`]: the hash of a tool surface's lock, and where MCP results carry it.

use std::fmt;

/// The `_meta` key under which the MCP server serves the surface's fingerprint, in
/// `tools/list`, `initialize` and `server/discover` results.
pub const FINGERPRINT_META_KEY: &str = "erp-tools/surface";

/// The hash of a lock (`sha256:` and 64 hexadecimal digits): the same for the same
/// surface on every machine, different when anything in the lock differs.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint(String);

impl Fingerprint {
    /// The fingerprint of a lock's blocks (its text after the header).
    pub(crate) fn of(body: &str) -> Fingerprint {
        use sha2::Digest as _;
        Fingerprint(format!(
            "sha256:{}",
            hex::encode(sha2::Sha256::digest(body.as_bytes()))
        ))
    }

    /// `sha256:` and the hash in hexadecimal.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hexadecimal digits, for a person to compare at a glance.
    pub fn short(&self) -> &str {
        let hex = self.0.strip_prefix("sha256:").unwrap_or(&self.0);
        &hex[..hex.len().min(12)]
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
