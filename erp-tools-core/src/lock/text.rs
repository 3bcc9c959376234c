//! The lock's text: a comment header, the fingerprint, then blocks.
//!
//! ```text
//! tool purchasing_get_po
//! module purchasing
//! tier read
//! description
//! | Get one purchase order of the caller's branch by its number.
//! | ...
//! ```
//!
//! A block starts with `module NAME` or `tool NAME` and ends at a blank line. A field is
//! `key value` on one line, or `key` alone followed by its lines, each written `| line`
//! (`|` alone for an empty line). Lines starting with `#` are comments.

use std::fmt;

use super::entry::Entry;
use super::fingerprint::Fingerprint;

/// The first lines of every lock.
const HEADER: &str = "\
# erp-tools tool surface lock (format 1): every module and tool a model can be given,
# with what it is told (descriptions, schemas) and what it may do (tier, scopes).
# Review a change to this file as you review code: a description is an instruction to
# the model. Written by erp_tools_core::lock::SurfaceLock; do not edit by hand.
";

/// Why a lock's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LockParseError {
    /// The line (from 1) where reading stopped.
    pub line: usize,
    /// What was wrong there.
    pub problem: String,
}

impl fmt::Display for LockParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {}; write the lock again with SurfaceLock::to_text rather than by hand",
            self.line, self.problem
        )
    }
}

impl std::error::Error for LockParseError {}

/// The blocks of `entries`, as the fingerprint hashes them and the lock writes them.
pub(crate) fn body(entries: &[Entry]) -> String {
    let mut out = String::new();
    for entry in entries {
        out.push_str(&format!("{} {}\n", entry.kind, entry.name));
        for (key, value) in &entry.fields {
            if value.contains('\n') || is_block(key) {
                out.push_str(key);
                out.push('\n');
                for line in value.lines() {
                    if line.is_empty() {
                        out.push_str("|\n");
                    } else {
                        out.push_str("| ");
                        out.push_str(line);
                        out.push('\n');
                    }
                }
            } else if value.is_empty() {
                out.push_str(key);
                out.push('\n');
            } else {
                out.push_str(&format!("{key} {value}\n"));
            }
        }
        out.push('\n');
    }
    out
}

/// Fields always written as a block, so adding a line to them is a one-line diff.
fn is_block(key: &str) -> bool {
    key == "description"
        || key == "opt_ins"
        || key == "kinds"
        || key.starts_with("schema ")
        || key == "output_schema"
}

/// The whole lock: header, fingerprint, blocks.
pub(super) fn write(entries: &[Entry]) -> String {
    let body = body(entries);
    format!("{HEADER}fingerprint {}\n\n{body}", Fingerprint::of(&body))
}

/// The value of the lock's `fingerprint` line outside any block, and its line number
/// (from 1), if it has one.
pub(super) fn stated_fingerprint(text: &str) -> Option<(usize, &str)> {
    text.lines()
        .enumerate()
        .find_map(|(i, line)| Some((i + 1, line.strip_prefix("fingerprint ")?.trim())))
}

/// Reads the blocks of a lock's text.
pub(super) fn parse(text: &str) -> Result<Vec<Entry>, LockParseError> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut open: Option<Entry> = None;
    // The block field being read: its key and lines.
    let mut block: Option<(String, Vec<String>)> = None;
    let fail = |line: usize, problem: String| Err(LockParseError { line, problem });
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(rest) = line.strip_prefix('|') {
            let Some((_, lines)) = block.as_mut() else {
                return fail(n, "a `|` line outside a block field".into());
            };
            lines.push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
            continue;
        }
        if let (Some((key, lines)), Some(entry)) = (block.take(), open.as_mut()) {
            entry.fields.push((key, lines.join("\n")));
        }
        if line.starts_with('#') || line.starts_with("fingerprint ") {
            continue;
        }
        if line.is_empty() {
            entries.extend(open.take());
            continue;
        }
        let (key, value) = split_key(line);
        if open.is_none() {
            let kind = match key {
                "module" => "module",
                "tool" => "tool",
                _ => {
                    return fail(
                        n,
                        format!("expected `module NAME` or `tool NAME`, found `{line}`"),
                    );
                }
            };
            if value.is_empty() {
                return fail(n, format!("`{kind}` without a name"));
            }
            open = Some(Entry::new(kind, value));
            continue;
        }
        let entry = open.as_mut().unwrap_or_else(|| unreachable!());
        if value.is_empty() {
            // A block field, or an empty single-line one: its `|` lines say which.
            block = Some((key.to_string(), Vec::new()));
        } else {
            entry.fields.push((key.to_string(), value.to_string()));
        }
    }
    if let (Some((key, lines)), Some(entry)) = (block.take(), open.as_mut()) {
        entry.fields.push((key, lines.join("\n")));
    }
    entries.extend(open.take());
    if entries.is_empty() {
        return fail(
            text.lines().count().max(1),
            "no `module` or `tool` block".into(),
        );
    }
    Ok(entries)
}

/// `schema mcp {...}` keys have two words; every other key one.
fn split_key(line: &str) -> (&str, &str) {
    let two_words = line.starts_with("schema ");
    let mut at = line.find(' ');
    if two_words {
        at = at.and_then(|first| line[first + 1..].find(' ').map(|second| first + 1 + second));
    }
    match at {
        Some(at) => (&line[..at], &line[at + 1..]),
        None => (line, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry::new("tool", "inventory_get_stock")
            .field("tier", "read")
            .field("title", "")
            .field("opt_ins", "")
            .field("description", "Get stock.\n\nOne item.")
            .field("schema mcp", "{\n  \"type\": \"object\"\n}")
    }

    #[test]
    fn the_text_reads_back_as_written() {
        let entries = vec![
            Entry::new("module", "inventory").field("description", "Stock. Read only."),
            entry(),
        ];
        let text = write(&entries);
        for block in [
            "\ndescription\n| Get stock.\n|\n| One item.\n",
            "\nschema mcp\n| {\n|   \"type\": \"object\"\n| }\n",
        ] {
            assert!(text.contains(block), "{block:?} in {text}");
        }
        assert_eq!(parse(&text).unwrap(), entries);
    }

    #[test]
    fn bad_text_names_its_line() {
        let err = parse("# lock\n\nwidget x\n").unwrap_err();
        assert_eq!(err.line, 3);
        assert!(
            err.to_string()
                .contains("expected `module NAME` or `tool NAME`"),
            "{err}"
        );
        assert_eq!(parse("| stray\n").unwrap_err().line, 1);
        assert!(parse("# only comments\n").is_err());
    }
}
