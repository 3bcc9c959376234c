//! Typed models of the macros' input: the argument type of `#[derive(ToolArgs)]` and the
//! handler function of `#[erp_tool]`. Each keeps the original syntax for spans.

use erp_tools_internals::names::join_doc;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Data, DeriveInput, Fields, FnArg, Ident, ItemFn, Type};

use crate::attr::{
    FieldBounds, SerdeContainer, SerdeField, container_crate, doc_lines, field_bounds,
};
use crate::errors::Errors;

/// A type deriving `ToolArgs`.
pub(crate) struct ArgsInput<'a> {
    /// The derive input.
    pub original: &'a DeriveInput,
    /// The type's name.
    pub ident: &'a Ident,
    /// Container-level serde attributes.
    pub container: SerdeContainer,
    /// `#[erp(crate = "..")]`: the path to erp-tools-core, when not `::erp_tools_core`.
    pub krate: Option<syn::Path>,
    /// The type's doc comment, joined (an enum's becomes its schema's description).
    pub doc: String,
    /// Struct fields or enum variants.
    pub shape: Shape<'a>,
}

/// What kind of argument type it is.
pub(crate) enum Shape<'a> {
    /// A struct with named fields (possibly none).
    Struct(Vec<Field<'a>>),
    /// An enum of unit variants.
    Enum(Vec<Variant<'a>>),
    /// A newtype read as its inner value: a tuple struct with one field
    /// (`struct VendorCode(String)`) or a `#[serde(transparent)]` struct with one field.
    Newtype(Newtype<'a>),
    /// Something no schema can describe; the error has been reported.
    Unsupported,
}

/// A named field of an argument struct.
pub(crate) struct Field<'a> {
    /// The Rust name.
    pub ident: &'a Ident,
    /// The field's type.
    pub ty: &'a Type,
    /// The name on the wire (after `rename` / `rename_all`).
    pub wire: String,
    /// Field-level serde attributes.
    pub serde: SerdeField,
    /// The doc comment, joined.
    pub doc: String,
    /// The bounds declared with `#[erp(..)]`.
    pub bounds: FieldBounds,
}

impl Field<'_> {
    /// Where a problem with the field's *name* is reported: the `rename = ".."` string if
    /// there is one, else the field's name.
    pub(crate) fn name_tokens(&self) -> TokenStream {
        match &self.serde.rename {
            Some(lit) => lit.to_token_stream(),
            None => self.ident.to_token_stream(),
        }
    }

    /// Whether the wire name differs from the Rust name.
    pub(crate) fn renamed(&self) -> bool {
        self.ident.unraw() != self.wire.as_str()
    }

    /// How to refer to the field in a message: its wire name, and its Rust name when the
    /// two differ.
    pub(crate) fn describe(&self) -> String {
        if self.renamed() {
            format!("`{}` (field `{}`)", self.wire, self.ident.unraw())
        } else {
            format!("`{}`", self.wire)
        }
    }
}

/// The one field of a newtype.
pub(crate) struct Newtype<'a> {
    /// The field as written.
    pub original: &'a syn::Field,
    /// The field's type: the newtype reads, renders and is checked as this type.
    pub ty: &'a Type,
    /// How the generated code reads the field (`0` or its name).
    pub member: syn::Member,
}

/// A unit variant of an argument enum.
pub(crate) struct Variant<'a> {
    /// The variant as written.
    pub original: &'a syn::Variant,
    /// The value on the wire.
    pub wire: String,
    /// `#[serde(skip)]`, `skip_deserializing` or `other`: not offered in the schema.
    pub skip: bool,
    /// `#[serde(rename = "..")]`, where a problem with the value is reported.
    pub rename: Option<syn::LitStr>,
}

impl<'a> ArgsInput<'a> {
    /// Builds the model, reporting shapes no strict schema can describe.
    pub(crate) fn from_syn(input: &'a DeriveInput, errors: &mut Errors) -> Self {
        let container = SerdeContainer::from_attrs(&input.attrs);
        let ident = &input.ident;
        let krate = container_crate(&input.attrs, errors);
        if let Data::Enum(data) = &input.data {
            for v in &data.variants {
                misplaced_bounds(&v.attrs, "on an enum variant", errors);
            }
        }
        let shape = match &input.data {
            Data::Struct(data) if container.transparent.is_some() => {
                newtype(ident, &data.fields, true, errors)
            }
            Data::Struct(data) if matches!(data.fields, Fields::Unnamed(_)) => {
                newtype(ident, &data.fields, false, errors)
            }
            Data::Struct(data) => match &data.fields {
                Fields::Named(named) => Shape::Struct(
                    named
                        .named
                        .iter()
                        .map(|f| {
                            let field_ident = f.ident.as_ref().expect("named field");
                            let serde = SerdeField::from_attrs(&f.attrs);
                            let base = field_ident.unraw().to_string();
                            let wire = match (&serde.rename, container.rename_all) {
                                (Some(lit), _) => lit.value(),
                                (None, Some(rule)) => rule.apply_to_field(&base),
                                (None, None) => base,
                            };
                            Field {
                                ident: field_ident,
                                ty: &f.ty,
                                wire,
                                serde,
                                doc: join_doc(&doc_lines(&f.attrs)),
                                bounds: field_bounds(&f.attrs, errors),
                            }
                        })
                        .collect(),
                ),
                Fields::Unnamed(_) => unreachable!("tuple structs are newtypes or refused above"),
                Fields::Unit => {
                    errors.spanned(
                        ident,
                        format!(
                            "unit struct `{ident}` cannot be a tool argument type; for a tool without arguments \
                             leave the arguments parameter out (or use `NoArgs`), otherwise write `struct {ident} {{}}`"
                        ),
                    );
                    Shape::Unsupported
                }
            },
            Data::Enum(data) => {
                let mut variants = Vec::new();
                for v in &data.variants {
                    if !matches!(v.fields, Fields::Unit) {
                        errors.spanned(
                            &v.fields,
                            format!(
                                "variant `{}` carries data; tool argument enums are unit-only (rendered as a string enum), \
                                 move the data into struct fields next to the enum",
                                v.ident
                            ),
                        );
                        continue;
                    }
                    let serde = SerdeField::from_attrs(&v.attrs);
                    let base = v.ident.unraw().to_string();
                    let wire = match (&serde.rename, container.rename_all) {
                        (Some(lit), _) => lit.value(),
                        (None, Some(rule)) => rule.apply_to_variant(&base),
                        (None, None) => base,
                    };
                    variants.push(Variant {
                        original: v,
                        wire,
                        skip: serde.skip,
                        rename: serde.rename.clone(),
                    });
                }
                if data.variants.is_empty() {
                    errors.spanned(
                        ident,
                        format!("enum `{ident}` has no variants, so no value is accepted; list the allowed values as unit variants"),
                    );
                }
                if variants.len() == data.variants.len() {
                    Shape::Enum(variants)
                } else {
                    Shape::Unsupported
                }
            }
            Data::Union(data) => {
                errors.spanned(
                    data.union_token,
                    format!("union `{ident}` cannot be a tool argument type; use a struct with named fields or an enum of unit variants"),
                );
                Shape::Unsupported
            }
        };
        ArgsInput {
            original: input,
            ident,
            container,
            krate,
            doc: join_doc(&doc_lines(&input.attrs)),
            shape,
        }
    }
}

/// A tuple struct of one field, or a `#[serde(transparent)]` struct of one field: the
/// value on the wire is the field's.
fn newtype<'a>(
    ident: &Ident,
    fields: &'a Fields,
    transparent: bool,
    errors: &mut Errors,
) -> Shape<'a> {
    let kept: Vec<(usize, &syn::Field)> = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !SerdeField::from_attrs(&f.attrs).skip)
        .collect();
    for f in fields {
        misplaced_bounds(&f.attrs, "on a newtype's field", errors);
    }
    match kept.as_slice() {
        [(i, f)] => Shape::Newtype(Newtype {
            original: f,
            ty: &f.ty,
            member: match &f.ident {
                Some(name) => syn::Member::Named(name.clone()),
                None => syn::Member::Unnamed(syn::Index::from(*i)),
            },
        }),
        _ if transparent => {
            errors.spanned(
                ident,
                format!(
                    "`#[serde(transparent)]` struct `{ident}` must have exactly one field that is not skipped; the \
                     value on the wire is that field's"
                ),
            );
            Shape::Unsupported
        }
        _ => {
            errors.spanned(
                fields,
                format!(
                    "tuple struct `{ident}` cannot be a tool argument type; the model sends an object, so give the \
                     fields names: `struct {ident} {{ name: Type }}` (a tuple struct of one field, a newtype such as \
                     `struct VendorCode(String)`, is read as its field)"
                ),
            );
            Shape::Unsupported
        }
    }
}

/// Reports `#[erp(..)]` written where no value is read.
fn misplaced_bounds(attrs: &[syn::Attribute], place: &str, errors: &mut Errors) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("erp")) {
        errors.spanned(
            attr,
            format!(
                "`#[erp(..)]` {place} bounds nothing; bounds go on a field of an argument struct, \
                 e.g. `#[erp(min = 1, max = 1000)] qty: Decimal`"
            ),
        );
    }
}

/// The function `#[erp_tool]` is on.
pub(crate) struct ToolFn<'a> {
    /// The function as written.
    pub original: &'a ItemFn,
    /// The function's name.
    pub ident: &'a Ident,
    /// The doc comment, joined.
    pub doc: String,
    /// The parameters, classified.
    pub params: Vec<Param<'a>>,
}

/// A handler parameter.
pub(crate) struct Param<'a> {
    /// The parameter as written.
    pub original: &'a FnArg,
    /// What it is.
    pub kind: ParamKind<'a>,
}

/// What a handler parameter is, judged by its type.
pub(crate) enum ParamKind<'a> {
    /// `self`, `&self`, ...
    Receiver,
    /// `ToolContext`, `ReadDb`, `DraftTx` or `RemoteDraft`, by reference (`Some(mutable)`) or by value (`None`).
    Runtime {
        /// The type's name.
        which: RuntimeType,
        /// `Some(true)` for `&mut T`, `Some(false)` for `&T`, `None` for `T`.
        reference: Option<bool>,
        /// The parameter's type.
        ty: &'a Type,
    },
    /// `PageRequest`: the page a page tool's call asked for, by reference
    /// (`Some(mutable)`) or by value (`None`).
    Page {
        /// `Some(true)` for `&mut T`, `Some(false)` for `&T`, `None` for `T`.
        reference: Option<bool>,
        /// The parameter's type.
        ty: &'a Type,
    },
    /// Anything else: the arguments.
    Value(&'a Type),
}

/// The runtime types a handler may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RuntimeType {
    /// `ToolContext`
    Context,
    /// `ReadDb`
    ReadDb,
    /// `DraftTx`
    DraftTx,
    /// `RemoteDraft`: a draft whose document is written in another system.
    RemoteDraft,
}

impl<'a> ToolFn<'a> {
    /// Builds the model.
    pub(crate) fn from_syn(original: &'a ItemFn) -> Self {
        let params = original
            .sig
            .inputs
            .iter()
            .map(|arg| Param {
                original: arg,
                kind: match arg {
                    FnArg::Receiver(_) => ParamKind::Receiver,
                    FnArg::Typed(pat) => classify_param(&pat.ty),
                },
            })
            .collect();
        ToolFn {
            original,
            ident: &original.sig.ident,
            doc: join_doc(&doc_lines(&original.attrs)),
            params,
        }
    }
}

fn classify_param(ty: &Type) -> ParamKind<'_> {
    let (inner, reference) = match ty {
        Type::Reference(r) => (&*r.elem, Some(r.mutability.is_some())),
        other => (other, None),
    };
    let which = match last_ident(inner).as_deref() {
        Some("ToolContext") => RuntimeType::Context,
        Some("ReadDb") => RuntimeType::ReadDb,
        Some("DraftTx") => RuntimeType::DraftTx,
        Some("RemoteDraft") => RuntimeType::RemoteDraft,
        Some("PageRequest") => return ParamKind::Page { reference, ty },
        _ => return ParamKind::Value(ty),
    };
    ParamKind::Runtime {
        which,
        reference,
        ty,
    }
}

/// The last segment of a type path (`std::string::String` → `String`).
pub(crate) fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Group(g) => last_ident(&g.elem),
        Type::Paren(p) => last_ident(&p.elem),
        _ => None,
    }
}

/// The generic type arguments of a path type's last segment (`Vec<T>` → `[T]`).
pub(crate) fn type_args(ty: &Type) -> Vec<&Type> {
    match ty {
        Type::Path(p) => match p.path.segments.last().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(args)) => args
                .args
                .iter()
                .filter_map(|a| match a {
                    syn::GenericArgument::Type(t) => Some(t),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        Type::Group(g) => type_args(&g.elem),
        Type::Paren(p) => type_args(&p.elem),
        _ => Vec::new(),
    }
}
