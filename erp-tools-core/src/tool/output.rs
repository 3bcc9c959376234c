//! [`ModelText`]: how a tool's result reads for the model.
//!
//! A successful call answers twice: `structuredContent` (the output as JSON, valid against
//! the tool's `outputSchema`) for programs, and text for the model. Most MCP clients, Claude
//! among them, show the model only the text. Without a rendering the text is the JSON;
//! implement [`ModelText`] on the output type to give the model a sentence with business
//! numbers, names and units instead, and leave internal ids to the structured result.

/// The text a model reads for a tool's output. Implement it on the type a handler returns;
/// `#[erp_tool]` picks it up (no attribute needed). Types that do not implement it are
/// shown to the model as JSON.
///
/// Write for the model that decides the next call from this text alone: the document
/// number, the names and codes a person would use, amounts with their currency, and what
/// did *not* happen ("not sent to the vendor"). Keep internal ids out: they stay in the
/// structured result. For a replayed draft the framework puts its replay sentence first.
///
/// ```
/// use erp_tools_core::prelude::*;
///
/// #[tool_output]
/// struct PoDraft {
///     /// Internal id, for programs.
///     po_id: i64,
///     /// Purchase order number.
///     number: String,
///     /// Vendor code.
///     vendor_code: String,
///     /// Total, IDR.
///     total: Decimal,
/// }
///
/// impl ModelText for PoDraft {
///     fn model_text(&self) -> String {
///         format!(
///             "Draft {} for {}, total {} IDR; not sent to the vendor.",
///             self.number, self.vendor_code, self.total
///         )
///     }
/// }
/// # let d = PoDraft { po_id: 7, number: "PO-2026-0042".into(), vendor_code: "V-00231".into(), total: Decimal::new(125000000, 2) };
/// # assert_eq!(d.model_text(), "Draft PO-2026-0042 for V-00231, total 1250000.00 IDR; not sent to the vendor.");
/// # let _ = d.po_id;
/// ```
pub trait ModelText {
    /// The result as the model reads it.
    fn model_text(&self) -> String;
}

/// Generated code asks `(&TextOf(&output)).__erp_model_text()`: the output's
/// [`ModelText`] if it has one (method resolution finds [`Rendered`] first), `None`
/// otherwise ([`Unrendered`], one auto-reference further).
#[doc(hidden)]
pub struct TextOf<'a, T>(pub &'a T);

impl<T> std::fmt::Debug for TextOf<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TextOf")
    }
}

#[doc(hidden)]
pub trait Rendered {
    fn __erp_model_text(&self) -> Option<String>;
}

impl<T: ModelText> Rendered for TextOf<'_, T> {
    fn __erp_model_text(&self) -> Option<String> {
        Some(self.0.model_text())
    }
}

#[doc(hidden)]
pub trait Unrendered {
    fn __erp_model_text(&self) -> Option<String>;
}

impl<T> Unrendered for &TextOf<'_, T> {
    fn __erp_model_text(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Plain;
    struct Spoken;
    impl ModelText for Spoken {
        fn model_text(&self) -> String {
            "spoken".into()
        }
    }

    #[test]
    #[allow(clippy::needless_borrow)] // the borrow is what picks the fallback
    fn the_rendering_is_found_when_implemented() {
        assert_eq!(
            (&TextOf(&Spoken)).__erp_model_text().as_deref(),
            Some("spoken")
        );
        assert_eq!((&TextOf(&Plain)).__erp_model_text(), None);
    }
}
