//! [`ToolError`]: the error a handler returns, written for the model that will read it.
//!
//! A good tool error says what failed, which values are allowed, what to do next, and
//! what did *not* happen ("No draft was created."). It uses business numbers
//! (`PO-2026-0042`, branch `SBY-01`), never internal ids; internal detail goes in
//! [`ToolError::details`], which the model does not see as text.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::input::InputRequest;
use crate::text::handler as text;

/// What kind of failure a [`ToolError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolErrorKind {
    /// The arguments do not match the tool's schema.
    InvalidArguments,
    /// The document does not exist in the caller's branch (or exists only in another:
    /// both give the same text, so branches cannot be probed).
    NotFound,
    /// A business rule refused the request (a unit the item is not stocked in, ...).
    Rejected,
    /// The `client_ref` was already used in this run with different arguments.
    IdempotencyMismatch,
    /// The caller may not use this tool.
    Denied,
    /// Something failed inside the server; the model is told only that and what to do.
    Internal,
    /// The handler needs a person's decision first (see [`ToolError::needs_input`]);
    /// nothing was changed.
    NeedsInput,
}

/// A model-facing tool failure: returned as an MCP result with `isError: true`, or as a
/// tool result in the agent loop. Not a protocol error.
///
/// ```
/// use erp_tools_core::ToolError;
///
/// let err = ToolError::rejected("Item BRG-0042 cannot be ordered in KG.")
///     .allowed(["PCS", "BOX"])
///     .next_step("1 BOX = 24 PCS. Resend the line with uom PCS or BOX.")
///     .not_done("No draft was created.");
/// assert_eq!(
///     err.to_string(),
///     "Item BRG-0042 cannot be ordered in KG. Allowed values: PCS, BOX. \
///      1 BOX = 24 PCS. Resend the line with uom PCS or BOX. No draft was created."
/// );
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolError {
    // Boxed so `Result<T, ToolError>` stays one pointer wide on the error side.
    inner: Box<Inner>,
}

#[derive(Clone, Debug, PartialEq)]
struct Inner {
    kind: ToolErrorKind,
    message: String,
    allowed: Vec<String>,
    next_step: Option<String>,
    not_done: Option<String>,
    details: Option<Value>,
    input: Option<InputRequest>,
}

/// The constructors whose sentences the framework words ([`ToolError::not_found`],
/// [`ToolError::internal`]) are defined with the framework's other model-facing text.
impl ToolError {
    /// An error of `kind` with the sentence that says what failed.
    pub fn new(kind: ToolErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            inner: Box::new(Inner {
                kind,
                message: message.into(),
                allowed: Vec::new(),
                next_step: None,
                not_done: None,
                details: None,
                input: None,
            }),
        }
    }

    /// A business rule refused the request.
    pub fn rejected(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::Rejected, message)
    }

    /// The arguments are invalid.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(ToolErrorKind::InvalidArguments, message)
    }

    /// The handler needs a person to decide before it can go on: `question` (for the
    /// person), answered with one of `choices`, read back on the repeated call with
    /// [`ToolContext::input`](crate::ToolContext::input)`(key)`. Nothing may be written
    /// before the answer: return this before any write (a draft's transaction is rolled
    /// back anyway).
    ///
    /// ```
    /// use erp_tools_core::{ToolError, ToolErrorKind};
    ///
    /// let err = ToolError::needs_input(
    ///     "vendor",
    ///     "Two vendors sell BRG-0042: V-00231 (Sinar Jaya) and V-00377 (Maju). Which one?",
    ///     ["V-00231", "V-00377"],
    /// );
    /// assert_eq!(err.kind(), ToolErrorKind::NeedsInput);
    /// assert_eq!(err.input_request().unwrap().choices, ["V-00231", "V-00377"]);
    /// assert!(err.to_string().contains("Allowed answers: V-00231, V-00377."));
    /// ```
    pub fn needs_input<I, S>(
        key: impl Into<String>,
        question: impl Into<String>,
        choices: I,
    ) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let question = question.into();
        let request = InputRequest {
            key: key.into(),
            question: question.clone(),
            choices: choices.into_iter().map(Into::into).collect(),
        };
        let mut err = Self::new(ToolErrorKind::NeedsInput, question)
            .next_step(text::NEEDS_INPUT_NEXT_STEP)
            .not_done(text::NOTHING_CHANGED);
        err.inner.input = Some(request);
        err
    }

    /// `what` (e.g. "Purchase order") numbered `number` is not visible to the caller.
    /// The same text whether it does not exist or belongs to another branch.
    pub fn not_found(what: &str, number: &str) -> Self {
        Self::new(ToolErrorKind::NotFound, text::not_found(what, number))
            .next_step(text::NOT_FOUND_NEXT_STEP)
    }

    /// An internal failure. `detail` is logged and kept in [`details`](Self::details),
    /// never shown to the model.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(ToolErrorKind::Internal, text::INTERNAL_ERROR)
            .next_step(text::INTERNAL_NEXT_STEP)
            .with_details(Value::String(detail.to_string()))
    }

    /// The question, if the handler needs a person's decision.
    pub fn input_request(&self) -> Option<&InputRequest> {
        self.inner.input.as_ref()
    }

    /// The values that would have been accepted.
    pub fn allowed<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.inner.allowed = values.into_iter().map(Into::into).collect();
        self
    }

    /// What the model should do next.
    pub fn next_step(mut self, text: impl Into<String>) -> Self {
        self.inner.next_step = Some(text.into());
        self
    }

    /// What did not happen because of the failure ("No draft was created.").
    pub fn not_done(mut self, text: impl Into<String>) -> Self {
        self.inner.not_done = Some(text.into());
        self
    }

    /// Structured detail for the caller's program (internal ids and the like).
    pub fn with_details(mut self, details: Value) -> Self {
        self.inner.details = Some(details);
        self
    }

    /// Sets the "what did not happen" sentence unless the handler already gave one.
    pub fn or_not_done(mut self, text: &str) -> Self {
        if self.inner.not_done.is_none() {
            self.inner.not_done = Some(text.to_string());
        }
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ToolErrorKind {
        self.inner.kind
    }
    /// The sentence saying what failed.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
    /// The allowed values, if any were given.
    pub fn allowed_values(&self) -> &[String] {
        &self.inner.allowed
    }
    /// What did not happen, if stated.
    pub fn not_done_text(&self) -> Option<&str> {
        self.inner.not_done.as_deref()
    }
    /// Structured detail (not part of the model-facing text).
    pub fn details(&self) -> Option<&Value> {
        self.inner.details.as_ref()
    }

    /// The structured form of the error, for `structuredContent` and audit rows.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::json!({
            "error": self.inner.kind,
            "message": self.to_string(),
        });
        if !self.inner.allowed.is_empty() {
            v["allowed"] = Value::from(self.inner.allowed.clone());
        }
        if let Some(d) = &self.inner.details
            && self.inner.kind != ToolErrorKind::Internal
        {
            v["details"] = d.clone();
        }
        if let Some(input) = &self.inner.input {
            v["input"] = serde_json::to_value(input).unwrap_or(Value::Null);
        }
        v
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.inner.message.trim_end())?;
        if let Some(input) = &self.inner.input {
            write!(f, " Allowed answers: {}.", input.choices.join(", "))?;
        }
        if !self.inner.allowed.is_empty() {
            write!(f, " Allowed values: {}.", self.inner.allowed.join(", "))?;
        }
        if let Some(n) = &self.inner.next_step {
            write!(f, " {}", n.trim_end())?;
        }
        if let Some(n) = &self.inner.not_done {
            write!(f, " {}", n.trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for ToolError {}
