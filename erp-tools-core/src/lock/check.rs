//! The check a team puts in its own test suite: the compiled surface must be the
//! committed lock ([`assert_matches_lock`]).

use std::fmt;
use std::path::{Path, PathBuf};

use super::diff::Change;
use super::surface::SurfaceLock;
use crate::registry::ToolRegistry;

/// Set to `1` to make [`assert_matches_lock`] write the compiled surface to the lock
/// instead of failing: `ERP_TOOLS_UPDATE_LOCK=1 cargo test`. Review the lock's diff
/// before committing it.
pub const LOCK_UPDATE_VAR: &str = "ERP_TOOLS_UPDATE_LOCK";

/// The compiled surface differs from the committed lock (or the lock cannot be read):
/// what changed, tool by tool, and how to update the lock once the change is reviewed.
#[derive(Clone, Debug)]
pub struct LockMismatch {
    /// The lock file.
    pub path: PathBuf,
    /// What changed; empty when the lock is missing or unreadable.
    pub changes: Vec<Change>,
    /// Why the lock could not be read, if it could not.
    pub unreadable: Option<String>,
    /// What is wrong with the lock's `fingerprint` line (the line a host pins), if it
    /// does not state the hash of the lock's own blocks or is missing.
    pub fingerprint: Option<String>,
}

impl fmt::Display for LockMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.unreadable {
            Some(why) => writeln!(f, "the tool surface lock {path} cannot be read: {why}")?,
            None if self.changes.is_empty() => {}
            None => {
                writeln!(
                    f,
                    "the compiled tool surface differs from the lock {path} ({} change{}):",
                    self.changes.len(),
                    if self.changes.len() == 1 { "" } else { "s" }
                )?;
                for change in &self.changes {
                    writeln!(f, "  {change}")?;
                }
            }
        }
        if let Some(wrong) = &self.fingerprint {
            writeln!(
                f,
                "the fingerprint line of the lock {path} is wrong: {wrong}"
            )?;
        }
        if self.unreadable.is_none() && self.changes.is_empty() {
            // Only the line is wrong: the blocks are the compiled surface.
            return write!(
                f,
                "The blocks are the compiled surface, so hosts pinning the line would pin a \
                 wrong value. Write the lock again and commit it: `{LOCK_UPDATE_VAR}=1 cargo \
                 test` rewrites {path}."
            );
        }
        write!(
            f,
            "What a model is told and may do changed. Once the change is reviewed, update \
             the lock and commit it with the change: `{LOCK_UPDATE_VAR}=1 cargo test` \
             rewrites {path}."
        )
    }
}

impl std::error::Error for LockMismatch {}

/// Compares `registry`'s surface with the lock at `path`: `Ok` when they are the same,
/// else what changed ([`LockMismatch`], whose text is the readable diff).
pub fn check_lock(registry: &ToolRegistry, path: impl AsRef<Path>) -> Result<(), LockMismatch> {
    let path = path.as_ref();
    let mismatch = |changes, unreadable, fingerprint| LockMismatch {
        path: path.to_path_buf(),
        changes,
        unreadable,
        fingerprint,
    };
    let unreadable = |why: String| mismatch(Vec::new(), Some(why), None);
    let text = std::fs::read_to_string(path).map_err(|e| unreadable(e.to_string()))?;
    let locked = SurfaceLock::parse(&text).map_err(|e| unreadable(e.to_string()))?;
    let changes = locked.diff(&SurfaceLock::new(registry));
    let fingerprint = wrong_fingerprint(&text, &locked);
    if changes.is_empty() && fingerprint.is_none() {
        Ok(())
    } else {
        Err(mismatch(changes, None, fingerprint))
    }
}

/// What is wrong with `text`'s `fingerprint` line, which must state the hash of the
/// lock's own blocks (`locked`): `None` when it does.
fn wrong_fingerprint(text: &str, locked: &SurfaceLock) -> Option<String> {
    let blocks = locked.fingerprint();
    match super::text::stated_fingerprint(text) {
        Some((_, stated)) if stated == blocks.as_str() => None,
        Some((line, stated)) => Some(format!(
            "line {line} says `{stated}`, but the lock's blocks hash to `{blocks}` (the line \
             was edited, or the blocks were edited by hand)"
        )),
        None => Some(format!(
            "the lock has no `fingerprint` line; its blocks hash to `{blocks}`"
        )),
    }
}

/// For a team's test suite: panics, printing what changed tool by tool (a description's
/// lines, a schema field, a scope) and the command that updates the lock, when
/// `registry`'s compiled surface differs from the lock committed at `path`. With
/// [`LOCK_UPDATE_VAR`]`=1` it writes the lock instead (creating it the first time).
///
/// ```no_run
/// # fn registry() -> erp_tools_core::ToolRegistry {
/// #     erp_tools_core::ToolRegistry::builder().build().expect("the application's tools")
/// # }
/// #[test]
/// fn the_tool_surface_is_the_reviewed_one() {
///     erp_tools_core::lock::assert_matches_lock(
///         &registry(),
///         concat!(env!("CARGO_MANIFEST_DIR"), "/tools.lock"),
///     );
/// }
/// ```
#[track_caller]
pub fn assert_matches_lock(registry: &ToolRegistry, path: impl AsRef<Path>) {
    let path = path.as_ref();
    if std::env::var(LOCK_UPDATE_VAR).is_ok_and(|v| v == "1") {
        let text = SurfaceLock::new(registry).to_text();
        if let Err(e) = std::fs::write(path, text) {
            panic!("cannot write the tool surface lock {}: {e}", path.display());
        }
        return;
    }
    if let Err(mismatch) = check_lock(registry, path) {
        panic!("{mismatch}");
    }
}
