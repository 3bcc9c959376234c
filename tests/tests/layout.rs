//! The source tree's layout rules, checked on the tree itself: no file of the crates'
//! sources is over 600 lines (a file's unit tests may live in a sibling `tests.rs`, which
//! is held to the same bound), and no file imports a file that (directly or through
//! others) imports it back.
//!
//! An import is any path a file names that leads into another file of its crate:
//! `use crate::a::b::Item;`, `use super::c;`, or `crate::a::b::f(..)` written inline.
//! A path is resolved to the longest prefix that is a module file (`a/b.rs` or
//! `a/b/mod.rs`). The crate root (`lib.rs`), which only declares modules and re-exports,
//! takes no part: every file reaches it through `crate::Item`. A module's inline
//! `#[cfg(test)] mod tests` block is left out (its `super::` is the module itself).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 600;

/// The source folders the rules hold for, relative to the workspace root.
const SOURCE_DIRS: &[&str] = &[
    "erp-tools-core/src",
    "erp-tools-macros/src",
    "erp-tools-macros/internals/src",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace root")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of `file` under the crate's `src`: `agent/step.rs` is
/// `["agent", "step"]`, `agent/mod.rs` is `["agent"]`, `lib.rs` is `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The file of the longest prefix of `path` that is a module of the crate.
fn file_of(modules: &BTreeMap<Vec<String>, PathBuf>, path: &[String]) -> Option<PathBuf> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get(&path[..n]).cloned())
}

/// The text of `source` that counts: comments and the inline test module left out.
fn code_of(source: &str) -> String {
    let mut code = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests {"))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// Every path in `code` that starts with `crate::`, `super::`, `self::` or one of
/// `children::` (the module's own child modules, named without `self::`), as segments,
/// with `use` groups (`use super::{a, b::c}`) expanded one level. A child's path comes
/// back as `self::child::...`.
fn paths_in(code: &str, children: &[String]) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut starts: Vec<String> = ["crate::", "super::", "self::"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    starts.extend(children.iter().map(|c| format!("{c}::")));
    for start in &starts {
        let start = start.as_str();
        let child = !matches!(start, "crate::" | "super::" | "self::");
        let mut from = 0;
        while let Some(found) = code[from..].find(start) {
            let at = from + found;
            from = at + start.len();
            let before = at.checked_sub(1).map(|i| bytes[i] as char);
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let rest = &code[at..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(rest.len());
            let mut head: Vec<String> = rest[..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if child {
                head.insert(0, "self".to_string());
            }
            if rest[end..].starts_with('{') {
                let group_end = rest[end..].find('}').map_or(rest.len(), |i| end + i);
                for item in rest[end + 1..group_end].split(',') {
                    let mut path = head.clone();
                    path.extend(
                        item.trim()
                            .split("::")
                            .map(|s| s.trim().trim_start_matches('{').to_string())
                            .filter(|s| !s.is_empty() && s != "*" && !s.starts_with("self")),
                    );
                    out.push(path);
                }
            } else {
                out.push(head);
            }
        }
    }
    out
}

/// Resolves `path` named in the module `here` to a module path of the crate.
fn absolute(here: &[String], path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = Vec::new();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => rest = &path[1..],
        Some("self") => {
            base = here.to_vec();
            rest = &path[1..];
        }
        Some("super") => {
            base = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    base.extend(rest.iter().cloned());
    base
}

struct Crate {
    src: PathBuf,
    files: Vec<PathBuf>,
}

fn crates() -> Vec<Crate> {
    let root = workspace_root();
    SOURCE_DIRS
        .iter()
        .map(|dir| {
            let src = root.join(dir);
            let mut files = Vec::new();
            rust_files(&src, &mut files);
            Crate { src, files }
        })
        .collect()
}

#[test]
fn no_source_file_is_over_600_lines() {
    let mut long = Vec::new();
    for krate in crates() {
        for file in &krate.files {
            let lines = std::fs::read_to_string(file)
                .expect("readable")
                .lines()
                .count();
            if lines > MAX_LINES {
                long.push(format!("{} ({lines} lines)", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_LINES} lines; split them by concept: {long:#?}"
    );
}

/// The files each file of `krate` imports (the crate root excluded).
fn import_graph(krate: &Crate) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let modules: BTreeMap<Vec<String>, PathBuf> = krate
        .files
        .iter()
        .map(|f| (module_of(&krate.src, f), f.clone()))
        .collect();
    let root = krate.src.join("lib.rs");
    let mut graph = BTreeMap::new();
    for file in &krate.files {
        if *file == root {
            continue;
        }
        let here = module_of(&krate.src, file);
        let children: Vec<String> = modules
            .keys()
            .filter(|m| m.len() == here.len() + 1 && m.starts_with(&here))
            .map(|m| m[here.len()].clone())
            .collect();
        let source = std::fs::read_to_string(file).expect("readable");
        let mut targets = BTreeSet::new();
        for path in paths_in(&code_of(&source), &children) {
            let path = absolute(&here, &path);
            if let Some(target) = file_of(&modules, &path)
                && target != *file
                && target != root
            {
                targets.insert(target);
            }
        }
        graph.insert(file.clone(), targets);
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on_stack: BTreeSet<&'g PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g PathBuf) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let mut all = Vec::new();
    for krate in crates() {
        let graph = import_graph(&krate);
        for circle in circles(&graph) {
            let names: Vec<String> = circle
                .iter()
                .map(|f| {
                    let imports: Vec<String> = graph[f]
                        .iter()
                        .filter(|t| circle.contains(t))
                        .map(|t| t.strip_prefix(&krate.src).unwrap().display().to_string())
                        .collect();
                    format!(
                        "{} -> {}",
                        f.strip_prefix(&krate.src).unwrap().display(),
                        imports.join(", ")
                    )
                })
                .collect();
            all.push(format!("{}: {names:#?}", krate.src.display()));
        }
    }
    assert!(
        all.is_empty(),
        "import circles (move what both sides need into a file of its own): {all:#?}"
    );
}

#[test]
fn the_checker_finds_a_circle_and_resolves_paths() {
    // The parser sees grouped, nested and inline paths.
    let code = "use super::{a, b::C};\nfn f() { crate::x::y(); }\npub use child::D;\n";
    let paths = paths_in(code, &["child".to_string()]);
    assert!(
        paths.contains(&vec!["self".into(), "child".into(), "D".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["super".into(), "a".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["super".into(), "b".into(), "C".into()]),
        "{paths:?}"
    );
    assert!(
        paths.contains(&vec!["crate".into(), "x".into(), "y".into()]),
        "{paths:?}"
    );
    // `super::` from `a/b.rs` is `a`.
    let here = vec!["a".to_string(), "b".to_string()];
    assert_eq!(absolute(&here, &["super".into(), "c".into()]), ["a", "c"]);
    // A two-file circle is found, a chain is not.
    let a = PathBuf::from("a.rs");
    let b = PathBuf::from("b.rs");
    let c = PathBuf::from("c.rs");
    let mut graph = BTreeMap::new();
    graph.insert(a.clone(), BTreeSet::from([b.clone()]));
    graph.insert(b.clone(), BTreeSet::from([c.clone()]));
    graph.insert(c.clone(), BTreeSet::new());
    assert!(circles(&graph).is_empty());
    graph.insert(c.clone(), BTreeSet::from([a.clone()]));
    assert_eq!(circles(&graph), vec![vec![a, b, c]]);
}
