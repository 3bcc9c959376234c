//! Text helpers: "did you mean" suggestions, titles and doc-comment descriptions.

use super::rename::segments;

/// Edit distance between two short strings, counting a swap of neighbours as one edit
/// (for "did you mean" suggestions: `titel` is one edit from `title`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3) || c.starts_with(word) || word.starts_with(c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// A function name as a title: `create_po_draft` → `Create po draft`.
pub fn humanise(ident: &str) -> String {
    let words = segments(ident).join(" ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

/// Joins doc-comment lines into a description: a common leading space is dropped, lines of
/// one paragraph are joined with a space, paragraphs with a blank line, and list items
/// (`- `, `* `, `1. `) keep their own line.
pub fn join_doc(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = false;
    for raw in lines.iter().flat_map(|l| l.split('\n')) {
        let line = raw.trim();
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            if blank {
                out.push_str("\n\n");
            } else if is_list_item(line) {
                out.push('\n');
            } else {
                out.push(' ');
            }
        }
        blank = false;
        out.push_str(line);
    }
    out
}

fn is_list_item(line: &str) -> bool {
    line.starts_with("- ")
        || line.starts_with("* ")
        || line
            .split_once(". ")
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
