//! The schema model: what a tool's arguments are, for every target.

use std::borrow::Cow;

use super::bounds::Bounds;

/// The provider a schema or tool list is rendered for.
///
/// Optional fields are the one place the providers disagree:
///
/// | target | optional field |
/// |---|---|
/// | [`Target::OpenAi`], [`Target::Mcp`] | listed in `required`, typed `["T","null"]` (or `anyOf` with `{"type":"null"}` for enums and objects) |
/// | [`Target::Anthropic`] | left out of `required`, no null branch |
///
/// The server treats an absent optional field and an explicit `null` the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// OpenAI function calling with `strict: true`.
    OpenAi,
    /// Anthropic tool use with `strict: true`.
    Anthropic,
    /// MCP `tools/list` `inputSchema`.
    Mcp,
}

impl Target {
    /// Every target, in a stable order.
    pub const ALL: [Target; 3] = [Target::OpenAi, Target::Anthropic, Target::Mcp];

    /// Lower-case name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::OpenAi => "openai",
            Target::Anthropic => "anthropic",
            Target::Mcp => "mcp",
        }
    }
}

impl std::str::FromStr for Target {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "openai" => Ok(Target::OpenAi),
            "anthropic" => Ok(Target::Anthropic),
            "mcp" => Ok(Target::Mcp),
            other => Err(format!(
                "unknown target `{other}`; expected one of: openai, anthropic, mcp"
            )),
        }
    }
}

/// A `format` a string may carry in the strict subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StringFormat {
    /// `YYYY-MM-DD` (`chrono::NaiveDate`).
    Date,
    /// RFC 3339 date and time (`chrono::DateTime`).
    DateTime,
    /// `HH:MM:SS` (`chrono::NaiveTime`).
    Time,
    /// A UUID in its hyphenated form, `123e4567-e89b-12d3-a456-426614174000`
    /// (`uuid::Uuid`, feature `uuid`).
    Uuid,
}

impl StringFormat {
    /// The JSON Schema `format` keyword value.
    pub fn as_str(self) -> &'static str {
        match self {
            StringFormat::Date => "date",
            StringFormat::DateTime => "date-time",
            StringFormat::Time => "time",
            StringFormat::Uuid => "uuid",
        }
    }
}

/// The shape of one value in a tool's arguments.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaKind {
    /// Free text (`String`), optionally with a [`StringFormat`].
    String(Option<StringFormat>),
    /// A decimal number carried as a string, such as `"1234.50"` (`rust_decimal::Decimal`).
    /// Never a JSON float, so money keeps its exact value and hashes the same every time.
    Decimal,
    /// A whole number within `min..=max` (the Rust type's range).
    Integer {
        /// Smallest accepted value.
        min: i128,
        /// Largest accepted value.
        max: i128,
    },
    /// `true` or `false`.
    Boolean,
    /// One of a fixed list of strings (a Rust enum of unit variants).
    Enum(Vec<Cow<'static, str>>),
    /// A list of values of one shape.
    Array(Box<Schema>),
    /// A closed object: exactly these properties, nothing else.
    Object(Vec<Property>),
    /// The inner value or nothing (`Option<T>`).
    Optional(Box<Schema>),
}

/// A schema node: a shape plus the description shown to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Schema {
    /// The shape of the value.
    pub kind: SchemaKind,
    /// What the value means, usually the field's doc comment.
    pub description: Option<Cow<'static, str>>,
    /// Declared bounds (`#[erp(min = 1)]`, ...): stated in the description when rendered,
    /// enforced by validation. On an optional value they apply to the value when present.
    pub bounds: Bounds,
}

/// One property of an object schema.
#[derive(Clone, Debug, PartialEq)]
pub struct Property {
    /// The name on the wire (after `serde(rename)` / `rename_all`).
    pub name: Cow<'static, str>,
    /// The property's schema; [`SchemaKind::Optional`] marks an optional property.
    pub schema: Schema,
    /// The HTTP header an MCP client mirrors the value into (`Mcp-Param-{header}`, the
    /// schema's `x-mcp-header`, SEP-2243), from `#[erp(header = "..")]`; `None` for most
    /// fields. See [`Property::with_header`].
    pub header: Option<Cow<'static, str>>,
    /// The opt-in that lets a draft tool take this field although a rule refuses it
    /// (`#[erp(allow = "discount", reason = "..")]`): listed for reviewers by the surface
    /// report, never rendered into a schema the model reads. See [`Property::with_opt_in`].
    pub opt_in: Option<OptIn>,
    /// What the field is, declared for a draft tool's default deny
    /// (`#[erp(kind = "reference", of = "vendor")]`) when its name does not say it: listed
    /// for reviewers by the surface report and the lock file, never rendered into a schema
    /// the model reads. See [`Property::with_kind`].
    pub kind: Option<DeclaredKind>,
}

/// A field's kind, declared by the team: `#[erp(kind = "reference", of = "vendor")]` on
/// NetSuite's `entity`, `#[erp(kind = "choice")]` on a flag. A declaration says what the
/// field is when its name does not; it never lifts a refusal (a price, a status, a
/// company stay refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredKind {
    /// The kind (`reference`, `quantity`, `unit`, `currency`, `date`, `note`, `lines`,
    /// `choice`, `position`).
    pub kind: Cow<'static, str>,
    /// What a reference refers to (`vendor`), if declared.
    pub of: Option<Cow<'static, str>>,
}

/// A field a draft tool takes although the argument rules refuse its name, declared by
/// the team with the category that refuses it and the reason: `#[erp(allow = "discount",
/// reason = "the buyer asks for the discount the vendor quoted; the approver confirms it")]`.
///
/// Identity and company fields cannot be allowed. The surface report lists every opt-in
/// with its tool, field and reason; the model never sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptIn {
    /// The category the rules refuse the field as (`discount`, `price`, `status`,
    /// `workflow`, `tax`, `exchange_rate`, `amount`).
    pub category: Cow<'static, str>,
    /// Why a person may accept the value the model sends.
    pub reason: Cow<'static, str>,
}

impl Property {
    /// A property named `name` (its wire name) with `schema`, mirrored into no header.
    pub fn new(name: impl Into<Cow<'static, str>>, schema: Schema) -> Self {
        Property {
            name: name.into(),
            schema,
            header: None,
            opt_in: None,
            kind: None,
        }
    }

    /// Declares what the field is (see [`DeclaredKind`]); `#[erp(kind = "..", of = "..")]`
    /// writes this.
    pub fn with_kind(
        mut self,
        kind: impl Into<Cow<'static, str>>,
        of: Option<&'static str>,
    ) -> Self {
        self.kind = Some(DeclaredKind {
            kind: kind.into(),
            of: of.map(Cow::Borrowed),
        });
        self
    }

    /// Allows a draft tool to take this field although the argument rules refuse it as
    /// `category`, for `reason` (see [`OptIn`]). `#[erp(allow = "..", reason = "..")]`
    /// writes this; the registry accepts the field in a draft tool only when `category` is
    /// the one that refuses it.
    pub fn with_opt_in(
        mut self,
        category: impl Into<Cow<'static, str>>,
        reason: impl Into<Cow<'static, str>>,
    ) -> Self {
        self.opt_in = Some(OptIn {
            category: category.into(),
            reason: reason.into(),
        });
        self
    }

    /// Asks MCP clients to send the value in the header `Mcp-Param-{header}` too, so that
    /// a gateway or load balancer can route on it without reading the body (SEP-2243).
    ///
    /// The MCP rendering gains `"x-mcp-header": header`; the OpenAI and Anthropic ones are
    /// unchanged. On streamable HTTP a request of protocol `2026-07-28` or later whose
    /// header is missing or differs from the body is refused with HTTP 400 and JSON-RPC
    /// error `-32020` before the tool runs. The registry refuses a header that is not an
    /// HTTP token, is given twice (case-insensitively), or sits on a value that is not
    /// required text, a whole number, a decimal, an enum or a boolean.
    pub fn with_header(mut self, header: impl Into<Cow<'static, str>>) -> Self {
        self.header = Some(header.into());
        self
    }
}

impl Schema {
    /// A schema of the given kind without a description.
    pub fn new(kind: SchemaKind) -> Self {
        Schema {
            kind,
            description: None,
            bounds: Bounds::default(),
        }
    }

    /// Sets the declared bounds of the value (a field's `#[erp(..)]`).
    pub fn with_bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// An object with these properties, closed to any other.
    pub fn object(properties: Vec<Property>) -> Self {
        Schema::new(SchemaKind::Object(properties))
    }

    /// The schema of a tool that takes no arguments.
    pub fn empty_object() -> Self {
        Schema::object(Vec::new())
    }

    /// Sets the description (a field's doc comment). An empty text clears it.
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        let d = description.into();
        self.description = if d.trim().is_empty() { None } else { Some(d) };
        self
    }

    /// Whether the value may be absent or `null`.
    pub fn is_optional(&self) -> bool {
        matches!(self.kind, SchemaKind::Optional(_))
    }

    /// Nesting depth: a scalar is 1, an object of scalars is 2, and so on.
    pub fn depth(&self) -> usize {
        match &self.kind {
            SchemaKind::Object(props) => {
                1 + props.iter().map(|p| p.schema.depth()).max().unwrap_or(0)
            }
            SchemaKind::Array(item) => 1 + item.depth(),
            SchemaKind::Optional(inner) => inner.depth(),
            _ => 1,
        }
    }

    /// Every enum's number of values, for the budget check.
    pub fn max_enum_values(&self) -> usize {
        match &self.kind {
            SchemaKind::Enum(values) => values.len(),
            SchemaKind::Object(props) => props
                .iter()
                .map(|p| p.schema.max_enum_values())
                .max()
                .unwrap_or(0),
            SchemaKind::Array(item) | SchemaKind::Optional(item) => item.max_enum_values(),
            _ => 0,
        }
    }

    /// The properties of an object schema (empty for anything else).
    pub fn properties(&self) -> &[Property] {
        match &self.kind {
            SchemaKind::Object(props) => props,
            SchemaKind::Optional(inner) => inner.properties(),
            _ => &[],
        }
    }
}

/// Deepest nesting a tool's arguments may have.
pub const MAX_DEPTH: usize = 5;
/// Most values one enum may have.
pub const MAX_ENUM_VALUES: usize = 1000;
