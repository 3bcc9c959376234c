//! What changed between a committed lock and the compiled surface, said per module and
//! tool: a description's lines, a schema's fields (by path, once for every target that
//! changed alike), a scope.

use std::fmt;

use serde_json::Value;

use super::entry::Entry;

/// One difference between the committed lock and the compiled surface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// `tool purchasing_create_po_draft` or `module purchasing`.
    pub entry: String,
    /// What changed, in a line or a few: `description`, `scopes: a → b`, `schema
    /// (openai, anthropic, mcp): properties.note.description changed`, or the whole entry
    /// added or removed.
    pub what: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.entry, self.what)
    }
}

/// The changes from `locked` to `compiled`.
pub(super) fn diff(locked: &[Entry], compiled: &[Entry]) -> Vec<Change> {
    let mut out = Vec::new();
    for old in locked {
        let label = old.label();
        match compiled.iter().find(|e| e.label() == label) {
            None => out.push(change(&label, "removed: in the lock, not compiled".into())),
            Some(new) => entry_changes(old, new, &mut out),
        }
    }
    for new in compiled {
        if !locked.iter().any(|e| e.label() == new.label()) {
            out.push(change(
                &new.label(),
                "added: compiled, not in the lock".into(),
            ));
        }
    }
    out
}

fn change(entry: &str, what: String) -> Change {
    Change {
        entry: entry.to_string(),
        what,
    }
}

/// The changes of one entry, field by field; schema changes found alike in several
/// targets are said once, naming the targets.
fn entry_changes(old: &Entry, new: &Entry, out: &mut Vec<Change>) {
    let label = old.label();
    // (what, targets) of the schemas' changes, in the order found.
    let mut schema: Vec<(String, Vec<String>)> = Vec::new();
    let keys = old
        .fields
        .iter()
        .map(|(k, _)| k)
        .chain(new.fields.iter().map(|(k, _)| k));
    let mut seen = Vec::new();
    for key in keys {
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let before = value_of(old, key);
        let after = value_of(new, key);
        if before == after {
            continue;
        }
        if let Some(target) = key.strip_prefix("schema ") {
            for what in json_changes(before.unwrap_or(""), after.unwrap_or("")) {
                match schema.iter_mut().find(|(w, _)| *w == what) {
                    Some((_, targets)) => targets.push(target.to_string()),
                    None => schema.push((what, vec![target.to_string()])),
                }
            }
        } else if key == "output_schema" {
            for what in json_changes(before.unwrap_or(""), after.unwrap_or("")) {
                out.push(change(&label, format!("output schema: {what}")));
            }
        } else {
            out.push(change(&label, field_change(key, before, after)));
        }
    }
    for (what, targets) in schema {
        out.push(change(
            &label,
            format!("schema ({}): {what}", targets.join(", ")),
        ));
    }
}

fn value_of<'e>(entry: &'e Entry, key: &str) -> Option<&'e str> {
    entry
        .fields
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// A text field's change: one line `key: old → new`, or the lines removed (`-`) and
/// added (`+`) for a field of several lines.
fn field_change(key: &str, before: Option<&str>, after: Option<&str>) -> String {
    let (before, after) = (before.unwrap_or(""), after.unwrap_or(""));
    if !before.contains('\n') && !after.contains('\n') && key != "description" {
        return format!("{key}: {} → {}", shown(before), shown(after));
    }
    let mut text = format!("{key} changed");
    for line in line_diff(before, after) {
        text.push_str("\n    ");
        text.push_str(&line);
    }
    text
}

fn shown(value: &str) -> String {
    if value.is_empty() {
        "(none)".into()
    } else {
        format!("`{value}`")
    }
}

/// The lines of `before` not in `after` (`- line`) and those of `after` not in `before`
/// (`+ line`), in order, by a longest common subsequence.
fn line_diff(before: &str, after: &str) -> Vec<String> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            out.push(format!("- {}", a[i]));
            i += 1;
        } else {
            out.push(format!("+ {}", b[j]));
            j += 1;
        }
    }
    out
}

/// The changes between two JSON texts, one per path: `properties.note.description
/// changed: "a" → "b"`, `properties.discount added`, `required[2] removed`.
fn json_changes(before: &str, after: &str) -> Vec<String> {
    match (
        serde_json::from_str::<Value>(before),
        serde_json::from_str::<Value>(after),
    ) {
        (Ok(a), Ok(b)) => {
            let mut out = Vec::new();
            walk("", &a, &b, &mut out);
            out
        }
        _ => vec!["changed (not JSON in the lock)".into()],
    }
}

fn walk(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    let at = |key: &str| {
        if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (key, va) in x {
                match y.get(key) {
                    Some(vb) => walk(&at(key), va, vb, out),
                    None => out.push(format!("{} removed", at(key))),
                }
            }
            for key in y.keys().filter(|k| !x.contains_key(*k)) {
                out.push(format!("{} added: {}", at(key), brief(&y[key])));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                walk(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if a != b => {
            let name = if path.is_empty() { "the schema" } else { path };
            out.push(format!("{name} changed: {} → {}", brief(a), brief(b)));
        }
        _ => {}
    }
}

/// A value in one line, cut at 160 characters.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= 160 {
        return text;
    }
    let cut: String = text.chars().take(160).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(description: &str, scopes: &str, schema: &str) -> Entry {
        Entry::new("tool", "purchasing_create_po_draft")
            .field("scopes", scopes)
            .field("description", description)
            .field("schema openai", schema)
            .field("schema mcp", schema)
    }

    const SCHEMA: &str = r#"{"type":"object","properties":{"note":{"type":"string","description":"Note"}},"required":["note"]}"#;

    #[test]
    fn a_description_change_shows_its_lines() {
        let old = tool(
            "Create a DRAFT order.\nNo order is sent.",
            "purchasing:draft",
            SCHEMA,
        );
        let new = tool(
            "Create a DRAFT order.\nOrder as much as you can.",
            "purchasing:draft",
            SCHEMA,
        );
        let changes = diff(&[old], &[new]);
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(
            changes[0].to_string(),
            "tool purchasing_create_po_draft: description changed\n    \
             - No order is sent.\n    + Order as much as you can."
        );
    }

    #[test]
    fn a_field_and_a_scope_are_named() {
        let wider = r#"{"type":"object","properties":{"note":{"type":"string","description":"Note"},"discount":{"type":"string"}},"required":["note"]}"#;
        let old = tool("Create.", "purchasing:draft", SCHEMA);
        let new = tool("Create.", "purchasing:draft purchasing:approve", wider);
        let said: Vec<String> = diff(&[old], &[new])
            .iter()
            .map(|c| c.what.clone())
            .collect();
        assert_eq!(
            said,
            [
                "scopes: `purchasing:draft` → `purchasing:draft purchasing:approve`",
                r#"schema (openai, mcp): properties.discount added: {"type":"string"}"#,
            ],
            "{said:?}"
        );
    }

    #[test]
    fn added_and_removed_entries() {
        let a = Entry::new("tool", "a").field("tier", "read");
        let b = Entry::new("tool", "b").field("tier", "read");
        let said: Vec<String> = diff(&[a], &[b]).iter().map(|c| c.to_string()).collect();
        assert_eq!(
            said,
            [
                "tool a: removed: in the lock, not compiled",
                "tool b: added: compiled, not in the lock"
            ]
        );
    }
}
