//! [`ToolArgs`]: the types a tool may take as arguments.
//!
//! Derive it with `#[derive(Deserialize, ToolArgs)]` on your own structs and unit enums.
//! The derive checks every field on its wire name and type (see the crate docs for the
//! rules) and describes the type as a strict [`Schema`]. It is implemented here for the
//! scalar types a tool may take: `String` (and `Box<str>`, `Arc<str>`, `Cow<'static, str>`,
//! which read and render exactly as `String` does), `bool`, the integer types,
//! `rust_decimal::Decimal`, `chrono::NaiveDate`, `NaiveTime`, `NaiveDateTime` and
//! `DateTime<Utc>`, `uuid::Uuid` (feature `uuid`), and for `Option<T>` and `Vec<T>` of
//! those.
//!
//! It is deliberately *not* implemented for `serde_json::Value`, maps or floats: a tool
//! argument is never free-form JSON, and money is never a binary float.

use crate::schema::{Schema, SchemaKind, StringFormat};

/// A type that may appear in a tool's arguments.
///
/// Derive it; do not implement it by hand. The derive enforces the forbidden-field rules
/// at compile time, and `#[erp_tool]` requires it of the argument type.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in tool arguments",
    label = "`{Self}` does not implement `ToolArgs`",
    note = "add `#[derive(Deserialize, ToolArgs)]` to your own argument types (structs and unit enums)",
    note = "free-form JSON (`serde_json::Value`), maps (`HashMap`, `BTreeMap`) and floats (`f32`, `f64`) are not allowed in tool arguments: declare a struct with typed fields, an enum, or use `rust_decimal::Decimal` for amounts"
)]
pub trait ToolArgs {
    /// The strict schema of this type.
    fn tool_schema() -> Schema;
}

/// What the derive and `#[erp_tool]` know of an argument type beyond its schema: the
/// compile-time facts they check and the value of `client_ref`. Implemented by
/// `#[derive(ToolArgs)]` next to [`ToolArgs`], and here for the types that implement it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in tool arguments",
    label = "`{Self}` does not implement `ToolArgs`",
    note = "add `#[derive(Deserialize, ToolArgs)]` to your own argument types (structs and unit enums)",
    note = "free-form JSON (`serde_json::Value`), maps (`HashMap`, `BTreeMap`) and floats (`f32`, `f64`) are not allowed in tool arguments: declare a struct with typed fields, an enum, or use `rust_decimal::Decimal` for amounts",
    note = "`uuid::Uuid` is a tool argument with erp-tools-core's feature `uuid`: `erp-tools-core = {{ version = \"..\", features = [\"uuid\"] }}`"
)]
pub trait DerivedToolArgs: ToolArgs {
    /// The strict schema of this type ([`ToolArgs::tool_schema`]), so generated code
    /// names one trait per type.
    fn schema() -> Schema {
        <Self as ToolArgs>::tool_schema()
    }

    /// Whether the type has a top-level `client_ref: String` field (directly or through
    /// `#[serde(flatten)]`). Draft tools require one.
    const HAS_CLIENT_REF: bool = false;

    /// Nesting depth, computed at compile time (a scalar is 1, a struct is one more than
    /// its deepest field, a `Vec` one more than its item). A recursive type makes this
    /// constant cyclic, which is a compile error: tool arguments cannot be recursive.
    const DEPTH: usize = 1;

    /// Whether the type is an object (a struct with named fields), so that it may be
    /// `#[serde(flatten)]`ed into another argument struct.
    const IS_OBJECT: bool = false;

    /// What the value is on the wire, one of [`shape`]'s constants (`Option` and `Box`
    /// look through to their inner type; a `Vec` is a list). The derive checks declared
    /// bounds and unit/currency fields against it at compile time.
    const SHAPE: u16 = shape::OTHER;

    /// The shape of the innermost item: a list's items, through any nesting of lists.
    const ITEM_SHAPE: u16 = Self::SHAPE;

    /// The kinds the type says it is, one bit a kind (`VendorCode(String)` a reference),
    /// 0 for none: a draft field whose name says no kind may still be of this type.
    const KIND: u16 = 0;

    /// The value of the top-level `client_ref` field, if the type has one (directly or
    /// through `#[serde(flatten)]`). Reading it here also keeps the compiler from calling
    /// the field unused in handlers that leave it to the runtime.
    fn client_ref(&self) -> Option<&str> {
        None
    }
}

/// `#[erp_tool(tier = "draft")]`'s check that the arguments carry `client_ref`: it
/// requires `HasClientRef<{ Args::HAS_CLIENT_REF }>: ClientRefIn<Args>`, which holds only
/// for `HasClientRef<true>`, so a draft tool without the field is one error naming the
/// arguments type.
#[diagnostic::on_unimplemented(
    message = "draft tools need `client_ref: String` in their arguments: the model's own id for this write, reused on retry so the draft is created once; add `client_ref: String` to `{Args}`",
    label = "`{Args}` has no `client_ref` field"
)]
pub trait ClientRefIn<Args> {
    /// Named by `#[erp_tool]` to require the bound.
    const PRESENT: () = ();
}

/// Whether a draft tool's arguments carry `client_ref` (see [`ClientRefIn`]).
#[derive(Debug)]
pub struct HasClientRef<const YES: bool>;

impl<Args> ClientRefIn<Args> for HasClientRef<true> {}

/// The tier a draft tool's arguments are checked under: [`DraftTier`] turns the checks of
/// [`DraftGuard`] on.
pub trait CheckTier {
    /// Whether the draft-only rules apply.
    const DRAFT: bool;
}

/// The draft tier, for [`DraftGuard`].
#[derive(Debug)]
pub struct DraftTier;

impl CheckTier for DraftTier {
    const DRAFT: bool = true;
}

/// The draft tier's field checks, evaluated at compile time when
/// `#[erp_tool(tier = "draft")]` names `<Args as DraftGuard<DraftTier>>::CHECK`: the
/// derive's `CHECK` panics, spanned on the offending field, for a field a draft tool may
/// not take (`status`, `unit_price`, a field of no kind), and evaluates the `CHECK` of
/// every field's type, so nested lines are judged too. A read tool never names it, and a
/// constant of a generic impl is evaluated only when named, so read tools may filter on
/// `status`. Derived by `ToolArgs`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be used in tool arguments",
    label = "`{Self}` does not implement `ToolArgs`",
    note = "add `#[derive(Deserialize, ToolArgs)]` to your own argument types (structs and unit enums)"
)]
pub trait DraftGuard<M: CheckTier> {
    /// The checks; naming it evaluates them.
    const CHECK: () = ();
}

/// What a value is on the wire, for the compile-time checks of the derive.
#[doc(hidden)]
pub mod shape {
    pub use erp_tools_internals::names::shape::*;
}

macro_rules! scalar {
    ($($ty:ty => $kind:expr, $shape:expr);* $(;)?) => {$(
        impl ToolArgs for $ty {
            fn tool_schema() -> Schema {
                Schema::new($kind)
            }
        }
        impl DerivedToolArgs for $ty {
            const SHAPE: u16 = $shape;
        }
        impl<M: CheckTier> DraftGuard<M> for $ty {}
    )*};
}

macro_rules! integer {
    ($($ty:ty),* $(,)?) => {$(
        impl ToolArgs for $ty {
            fn tool_schema() -> Schema {
                Schema::new(SchemaKind::Integer { min: <$ty>::MIN as i128, max: <$ty>::MAX as i128 })
            }
        }
        impl DerivedToolArgs for $ty {
            const SHAPE: u16 = shape::NUMBER;
        }
        impl<M: CheckTier> DraftGuard<M> for $ty {}
    )*};
}

scalar! {
    String => SchemaKind::String(None), shape::TEXT;
    Box<str> => SchemaKind::String(None), shape::TEXT;
    std::sync::Arc<str> => SchemaKind::String(None), shape::TEXT;
    std::borrow::Cow<'static, str> => SchemaKind::String(None), shape::TEXT;
    bool => SchemaKind::Boolean, shape::BOOL;
    rust_decimal::Decimal => SchemaKind::Decimal, shape::NUMBER;
    chrono::NaiveDate => SchemaKind::String(Some(StringFormat::Date)), shape::DATE;
    chrono::NaiveTime => SchemaKind::String(Some(StringFormat::Time)), shape::OTHER;
    chrono::NaiveDateTime => SchemaKind::String(Some(StringFormat::DateTime)), shape::OTHER;
    chrono::DateTime<chrono::Utc> => SchemaKind::String(Some(StringFormat::DateTime)), shape::OTHER;
}

integer!(i8, i16, i32, i64, u8, u16, u32, u64);

#[cfg(feature = "uuid")]
scalar! {
    uuid::Uuid => SchemaKind::String(Some(StringFormat::Uuid)), shape::UUID;
}

impl<T: ToolArgs> ToolArgs for Option<T> {
    fn tool_schema() -> Schema {
        let inner = T::tool_schema();
        match inner.kind {
            // `Option<Option<T>>` carries no more information than `Option<T>`.
            SchemaKind::Optional(_) => inner,
            _ => {
                // The type's own description (an enum's doc comment) describes the optional
                // value too, unless the field gives its own.
                let description = inner.description.clone();
                let mut outer = Schema::new(SchemaKind::Optional(Box::new(inner)));
                outer.description = description;
                outer
            }
        }
    }
}

impl<T: DerivedToolArgs> DerivedToolArgs for Option<T> {
    const DEPTH: usize = T::DEPTH;
    const SHAPE: u16 = T::SHAPE;
    const ITEM_SHAPE: u16 = T::ITEM_SHAPE;
    const KIND: u16 = T::KIND;
}

impl<M: CheckTier, T: DraftGuard<M>> DraftGuard<M> for Option<T> {
    const CHECK: () = T::CHECK;
}

impl<T: ToolArgs> ToolArgs for Vec<T> {
    fn tool_schema() -> Schema {
        Schema::new(SchemaKind::Array(Box::new(T::tool_schema())))
    }
}

impl<T: DerivedToolArgs> DerivedToolArgs for Vec<T> {
    const DEPTH: usize = 1 + T::DEPTH;
    const SHAPE: u16 = shape::LIST;
    const ITEM_SHAPE: u16 = T::ITEM_SHAPE;
    const KIND: u16 = T::KIND;
}

impl<M: CheckTier, T: DraftGuard<M>> DraftGuard<M> for Vec<T> {
    const CHECK: () = T::CHECK;
}

impl<T: ToolArgs> ToolArgs for Box<T> {
    fn tool_schema() -> Schema {
        T::tool_schema()
    }
}

impl<T: DerivedToolArgs> DerivedToolArgs for Box<T> {
    const HAS_CLIENT_REF: bool = T::HAS_CLIENT_REF;
    const DEPTH: usize = T::DEPTH;
    const IS_OBJECT: bool = T::IS_OBJECT;
    const SHAPE: u16 = T::SHAPE;
    const ITEM_SHAPE: u16 = T::ITEM_SHAPE;
    const KIND: u16 = T::KIND;
    fn client_ref(&self) -> Option<&str> {
        T::client_ref(self)
    }
}

impl<M: CheckTier, T: DraftGuard<M>> DraftGuard<M> for Box<T> {
    const CHECK: () = T::CHECK;
}

/// The arguments of a tool that takes none: renders as a closed empty object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl ToolArgs for NoArgs {
    fn tool_schema() -> Schema {
        Schema::empty_object()
    }
}

impl DerivedToolArgs for NoArgs {
    const DEPTH: usize = 1;
    const IS_OBJECT: bool = true;
    const SHAPE: u16 = shape::OBJECT;
}

impl<M: CheckTier> DraftGuard<M> for NoArgs {}
