//! Signed digests of the audit log, kept outside the database (the CloudTrail model):
//! [`AuditDigest`] names every chain's head, the rows not yet linked and the archive
//! claims, chained to the digest before it, signed with Ed25519 ([`DigestKey`]) and
//! written to a [`DigestSink`] (a directory by default, [`DirectorySink`]). Written by a
//! [`Database`](super::Database) opened with [`DatabaseOptions::audit_digests`](super::DatabaseOptions::audit_digests);
//! checked by [`AuditReader::verify_digests`](super::AuditReader::verify_digests).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ed25519_dalek::{Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use super::archive_record::AuditArchive;
use super::chain_head::ChainHead;
use super::error::StoreError;
use crate::audit::AuditId;

/// The `format` of the digests this version writes.
pub const DIGEST_FORMAT: &str = "erp-tools audit digest v1";

/// What one digest says about the audit log at the time it was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditDigest {
    /// [`DIGEST_FORMAT`].
    pub format: String,
    /// The replica that wrote it: its digests form one chain (`seq` from 1).
    pub replica: String,
    /// Its position in the replica's digest chain, from 1.
    pub seq: u64,
    /// When it was written.
    pub at: String,
    /// How often its replica writes one, in seconds.
    pub every_secs: u64,
    /// Written as its replica shut down: that replica's chains end at the heads named here.
    pub last: bool,
    /// SHA-256 (hex) of the digest before it in the chain (its signed bytes); `None` for
    /// the first.
    pub previous_sha256: Option<String>,
    /// `erp_audit_chain_origin` (rows up to it predate the chain).
    pub origin: AuditId,
    /// The highest row id in the log when it was written.
    pub max_audit_id: AuditId,
    /// The head of every chain of every replica.
    pub chains: Vec<ChainHead>,
    /// The rows in no chain yet (calls open, rows waiting for their link), with a hash of
    /// their columns.
    pub unlinked: Vec<UnlinkedRow>,
    /// The archive claims (`erp_audit_archives`), with their files' SHA-256.
    pub archives: Vec<AuditArchive>,
}

/// A row in no chain when a digest was written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlinkedRow {
    /// The row.
    pub audit_id: AuditId,
    /// Its outcome then (`attempt` for a call still open).
    pub outcome: String,
    /// SHA-256 of its chained columns (for an open call, its `attempt_hash`).
    pub hash: String,
}

/// A digest and its signature, as a digest file holds them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedDigest {
    /// The digest.
    pub digest: AuditDigest,
    /// Ed25519 signature (hex) of the digest's signed bytes ([`AuditDigest::signed_bytes`]).
    pub signature: String,
}

impl AuditDigest {
    /// The bytes that are signed and hashed: the digest as compact JSON.
    pub fn signed_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a digest serialises")
    }

    /// SHA-256 (hex) of [`AuditDigest::signed_bytes`]: what the next digest names.
    pub fn sha256(&self) -> String {
        hex::encode(Sha256::digest(self.signed_bytes()))
    }

    /// The file name it is written under: `digest-<replica>-<seq, 8 digits>.json`.
    pub fn file_name(&self) -> String {
        let replica: String = self
            .replica
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("digest-{replica}-{:08}.json", self.seq)
    }
}

impl SignedDigest {
    /// Whether the signature is `key`'s over the digest.
    pub fn signed_by(&self, key: &DigestPublicKey) -> bool {
        let Ok(bytes) = hex::decode(&self.signature) else {
            return false;
        };
        let Ok(signature) = ed25519_dalek::Signature::from_slice(&bytes) else {
            return false;
        };
        key.0
            .verify(&self.digest.signed_bytes(), &signature)
            .is_ok()
    }
}

/// The Ed25519 key digests are signed with. Keep it where the database's users cannot
/// read it: a file readable by the server alone, or an environment variable set by the
/// service manager. The key file holds the 32-byte secret as 64 hex digits.
#[derive(Clone)]
pub struct DigestKey {
    key: SigningKey,
}

impl std::fmt::Debug for DigestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigestKey")
            .field("public", &self.public_key_hex())
            .finish_non_exhaustive()
    }
}

impl DigestKey {
    /// A new random key (give [`DigestKey::secret_hex`] to a key file, and
    /// [`DigestKey::public_key_hex`] to the auditors).
    pub fn generate() -> DigestKey {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).expect("the operating system provides random bytes");
        DigestKey {
            key: SigningKey::from_bytes(&seed),
        }
    }

    /// The key written as 64 hex digits (`text` may have surrounding white space).
    pub fn from_hex(text: &str) -> Result<DigestKey, StoreError> {
        let seed = parse_32(text).ok_or_else(|| {
            StoreError::BadInput(
                "a digest signing key is 64 hex digits (32 bytes); make one with \
                 DigestKey::generate (the example: `distributor digest-key`)"
                    .into(),
            )
        })?;
        Ok(DigestKey {
            key: SigningKey::from_bytes(&seed),
        })
    }

    /// The key in the file `path` (64 hex digits).
    pub fn from_file(path: &Path) -> Result<DigestKey, StoreError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            StoreError::BadInput(format!(
                "cannot read the digest key {}: {e}",
                path.display()
            ))
        })?;
        Self::from_hex(&text).map_err(|e| StoreError::BadInput(format!("{}: {e}", path.display())))
    }

    /// The key in the environment variable `var` (64 hex digits).
    pub fn from_env(var: &str) -> Result<DigestKey, StoreError> {
        let text = std::env::var(var).map_err(|_| {
            StoreError::BadInput(format!(
                "the environment variable {var} (the digest key) is not set"
            ))
        })?;
        Self::from_hex(&text).map_err(|e| StoreError::BadInput(format!("{var}: {e}")))
    }

    /// The secret, as 64 hex digits (for a key file).
    pub fn secret_hex(&self) -> String {
        hex::encode(self.key.to_bytes())
    }

    /// The public key, as 64 hex digits: what verifiers are given.
    pub fn public_key_hex(&self) -> String {
        hex::encode(self.key.verifying_key().to_bytes())
    }

    /// `digest` signed with this key.
    pub fn sign(&self, digest: AuditDigest) -> SignedDigest {
        let signature = self.key.sign(&digest.signed_bytes());
        SignedDigest {
            digest,
            signature: hex::encode(signature.to_bytes()),
        }
    }
}

/// The public key verifiers check digests with ([`DigestKey::public_key_hex`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DigestPublicKey(pub(crate) VerifyingKey);

impl DigestPublicKey {
    /// The key written as 64 hex digits (`text` may have surrounding white space).
    pub fn from_hex(text: &str) -> Result<DigestPublicKey, StoreError> {
        let bad = || {
            StoreError::BadInput(
                "a digest public key is 64 hex digits (DigestKey::public_key_hex; the \
                 example prints it with `distributor digest-key`)"
                    .into(),
            )
        };
        let key = VerifyingKey::from_bytes(&parse_32(text).ok_or_else(bad)?).map_err(|_| bad())?;
        Ok(DigestPublicKey(key))
    }

    /// The key in the file `path` (64 hex digits).
    pub fn from_file(path: &Path) -> Result<DigestPublicKey, StoreError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            StoreError::BadInput(format!(
                "cannot read the public key {}: {e}",
                path.display()
            ))
        })?;
        Self::from_hex(&text).map_err(|e| StoreError::BadInput(format!("{}: {e}", path.display())))
    }
}

fn parse_32(text: &str) -> Option<[u8; 32]> {
    hex::decode(text.trim()).ok()?.try_into().ok()
}

/// Where digests go: outside the database. Called on a blocking thread; `put` must not
/// overwrite a digest already written under `name`.
pub trait DigestSink: Send + Sync + 'static {
    /// Stores the digest file `name` with `bytes`.
    fn put(&self, name: &str, bytes: &[u8]) -> Result<(), String>;
}

/// Digests as files of a directory (created if missing), each written once
/// (`create_new`) and flushed to disk.
#[derive(Clone, Debug)]
pub struct DirectorySink {
    dir: PathBuf,
}

impl DirectorySink {
    /// Digests in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> DirectorySink {
        DirectorySink { dir: dir.into() }
    }
}

impl DigestSink for DirectorySink {
    fn put(&self, name: &str, bytes: &[u8]) -> Result<(), String> {
        use std::io::Write;
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let path = self.dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }
}

/// How a [`Database`](super::Database) writes digests: signed with `key`, to `sink`,
/// every `every` (default 5 minutes), at shutdown, and on
/// [`Database::write_audit_digest`](super::Database::write_audit_digest).
#[derive(Clone)]
pub struct DigestOptions {
    pub(crate) key: DigestKey,
    pub(crate) sink: Arc<dyn DigestSink>,
    pub(crate) every: Duration,
}

impl std::fmt::Debug for DigestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigestOptions")
            .field("key", &self.key)
            .field("every", &self.every)
            .finish_non_exhaustive()
    }
}

impl DigestOptions {
    /// Digests signed with `key`, written to `sink`, every 5 minutes.
    pub fn new(key: DigestKey, sink: impl DigestSink) -> DigestOptions {
        DigestOptions {
            key,
            sink: Arc::new(sink),
            every: Duration::from_secs(300),
        }
    }

    /// Digests signed with `key`, as files of `dir`.
    pub fn to_dir(key: DigestKey, dir: impl Into<PathBuf>) -> DigestOptions {
        Self::new(key, DirectorySink::new(dir))
    }

    /// How often a digest is written (at least a second).
    pub fn every(mut self, every: Duration) -> DigestOptions {
        self.every = every.max(Duration::from_secs(1));
        self
    }
}

/// One [`Database`]'s digest chain: its options and the last digest written.
pub(crate) struct Digests {
    pub(crate) options: DigestOptions,
    /// `(seq, sha256)` of the last digest written.
    pub(crate) last: tokio::sync::Mutex<(u64, Option<String>)>,
    pub(crate) task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Digests {
    pub(crate) fn new(options: DigestOptions) -> Digests {
        Digests {
            options,
            last: tokio::sync::Mutex::new((0, None)),
            task: std::sync::Mutex::new(None),
        }
    }
}
