//! One entry of a lock ([`Entry`]): a module or a tool with its fields in order.

/// One entry of a lock: a module or a tool, with its fields in a fixed order. A field is
/// a single line (`tier draft`) or a block of lines (a description, a schema).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// `module` or `tool`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
    /// `(key, value)`; a value with line breaks is written as a block.
    pub fields: Vec<(String, String)>,
}

impl Entry {
    pub(crate) fn new(kind: &'static str, name: &str) -> Entry {
        Entry {
            kind,
            name: name.to_string(),
            fields: Vec::new(),
        }
    }

    /// Adds a field; trailing line breaks are dropped (the text keeps lines, not them).
    pub(crate) fn field(mut self, key: &str, value: impl Into<String>) -> Entry {
        let mut value = value.into();
        value.truncate(value.trim_end_matches('\n').len());
        self.fields.push((key.to_string(), value));
        self
    }

    /// The entry's label in a diff: `tool purchasing_create_po_draft`.
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.kind, self.name)
    }
}
