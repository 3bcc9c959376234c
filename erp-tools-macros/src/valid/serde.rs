//! The serde attributes a tool argument type may carry.
//!
//! The strict schema is built from the fields as the derive sees them; serde reads the
//! wire with its own attributes. Any attribute that makes serde read a different shape
//! than the schema shows (a tag, an untagged enum, a custom deserializer, a conversion
//! through another type, a default for a field the schema calls required, an alias the
//! schema does not list...) would let the two disagree, so the rule is an allow-list:
//! the attributes below are modelled exactly (`rename`, `rename_all`, `flatten`, `skip`)
//! or have no effect on reading; every other one is refused with what to write instead,
//! including attributes this crate does not know yet.

use crate::ast::{ArgsInput, Shape, last_ident};
use crate::attr::{SerdeField, SerdeItem};
use crate::errors::Errors;

/// Container keys that are modelled or do not change what is read.
const CONTAINER_OK: &[&str] = &[
    "rename",
    "rename_all",
    "rename_all_fields",
    "deny_unknown_fields",
    "bound",
    "crate",
    "expecting",
    "into",
];

/// Field keys that are modelled or do not change what is read.
const FIELD_OK: &[&str] = &[
    "rename",
    "flatten",
    "skip",
    "skip_deserializing",
    "skip_serializing",
    "skip_serializing_if",
    "serialize_with",
    "bound",
    "borrow",
    "getter",
];

/// Variant keys that are modelled or do not change what is read.
const VARIANT_OK: &[&str] = &[
    "rename",
    "skip",
    "skip_deserializing",
    "skip_serializing",
    "serialize_with",
    "bound",
];

/// Checks every serde attribute of the type, its fields and its variants.
pub(super) fn check_serde(input: &ArgsInput, errors: &mut Errors) {
    let is_enum = matches!(input.original.data, syn::Data::Enum(_));
    for item in &input.container.items {
        if CONTAINER_OK.contains(&item.key.as_str()) || item.key == "transparent" {
            // `transparent` makes a newtype (see `ast::newtype`).
            continue;
        }
        errors.at(item.span, container_message(item, is_enum));
    }
    match &input.shape {
        Shape::Struct(fields) => {
            for field in fields {
                let skipped = field.serde.skip;
                let optional = last_ident(field.ty).as_deref() == Some("Option");
                for item in &field.serde.items {
                    if FIELD_OK.contains(&item.key.as_str()) {
                        continue;
                    }
                    if item.key == "default" && (skipped || (optional && item.is_flag())) {
                        // A skipped field is filled from its default; an absent `Option`
                        // is `None` with or without the flag.
                        continue;
                    }
                    errors.at(item.span, field_message(item, &field.wire, optional));
                }
            }
        }
        Shape::Enum(variants) => {
            for v in variants {
                for item in SerdeField::from_attrs(&v.original.attrs).items {
                    if VARIANT_OK.contains(&item.key.as_str()) {
                        continue;
                    }
                    errors.at(item.span, variant_message(&item, &v.wire));
                }
            }
        }
        Shape::Newtype(field) => {
            for item in SerdeField::from_attrs(&field.original.attrs).items {
                if FIELD_OK.contains(&item.key.as_str()) {
                    continue;
                }
                errors.at(
                    item.span,
                    field_message(&item, &input.ident.to_string(), false),
                );
            }
        }
        Shape::Unsupported => {}
    }
}

fn container_message(item: &SerdeItem, is_enum: bool) -> String {
    let key = item.key.as_str();
    match key {
        "untagged" => "`#[serde(untagged)]` is not supported on tool argument types: the value would be read by \
             trying each variant's shape in turn, which a strict schema cannot show; use an enum of unit \
             variants (sent as a string), or a struct with one optional field per case"
            .into(),
        "tag" | "content" if is_enum => format!(
            "`#[serde({key} = ..)]` is not supported on tool argument enums: a tagged enum is read as an object \
             (`{{\"type\": \"Variant\", ..}}`) while the schema shows a string; remove it, the enum is then sent \
             as the variant's name, or model the cases as a struct with an enum field and optional fields"
        ),
        "tag" => "`#[serde(tag = ..)]` on a struct adds a field the schema does not show; remove it, or add the \
             field as an enum of one value"
            .into(),
        "from" | "try_from" => format!(
            "`#[serde({key} = ..)]` is not supported on tool argument types: serde would read the other type's \
             shape while the schema shows this one's; derive `ToolArgs` on the type that is actually sent and \
             convert in the handler (`{key}` conversions belong in your code, after validation)"
        ),
        "default" => "`#[serde(default)]` on the type fills left-out fields the schema marks required; remove it \
             and make each field that may be left out an `Option<T>` (apply the default in the handler with \
             `unwrap_or`)"
            .into(),
        "remote" => "`#[serde(remote = ..)]` is not supported on tool argument types; declare the argument type \
             itself with `#[derive(Deserialize, ToolArgs)]` and convert to the remote type in the handler"
            .into(),
        "variant_identifier" | "field_identifier" => format!(
            "`#[serde({key})]` is not supported on tool argument types: it also accepts a variant's index as a \
             number, which the schema does not show; remove it"
        ),
        _ => format!(
            "`#[serde({key})]` is not supported on tool argument types: it may change how the value is read, so \
             the schema shown to the model could differ from what the server reads; remove it (the attributes \
             that are understood: {})",
            CONTAINER_OK.join(", ")
        ),
    }
}

fn field_message(item: &SerdeItem, wire: &str, optional: bool) -> String {
    let key = item.key.as_str();
    match key {
        "with" | "deserialize_with" => format!(
            "`#[serde({key} = ..)]` on `{wire}` is not supported: a custom deserializer reads a shape the schema \
             cannot show; declare the field with the type that is actually sent (a `ToolArgs` struct, enum or \
             scalar) and convert it in the handler"
        ),
        "default" if optional => format!(
            "`#[serde(default = ..)]` on `{wire}` is never used: validation sends a left-out optional field as \
             `null`, which is `None`; write `#[serde(default)]` or nothing, and apply the default in the handler \
             with `unwrap_or_else`"
        ),
        "default" => format!(
            "`#[serde(default)]` on `{wire}` makes the field one that may be left out, but the strict schema marks \
             it required; make it `Option<T>` and apply the default in the handler (`args.{wire}.unwrap_or(..)`)"
        ),
        "alias" => format!(
            "`#[serde(alias = ..)]` on `{wire}` is not supported: the schema shows one name per field and the \
             server refuses any other, so the alias would never be read; remove it (the model is shown `{wire}`)"
        ),
        _ => format!(
            "`#[serde({key})]` on `{wire}` is not supported on tool argument fields: it may change how the field \
             is read, so the schema shown to the model could differ from what the server reads; remove it (the \
             attributes that are understood: {})",
            FIELD_OK.join(", ")
        ),
    }
}

fn variant_message(item: &SerdeItem, wire: &str) -> String {
    let key = item.key.as_str();
    match key {
        "other" => format!(
            "`#[serde(other)]` on variant `{wire}` is not supported: it turns the closed enum into any string (every \
             value the schema does not list is read as `{wire}`), so the model could send a value nobody declared; \
             remove it, list every value the tool takes, and let the server refuse the rest"
        ),
        "alias" => format!(
            "`#[serde(alias = ..)]` on `{wire}` is not supported: the schema lists one value per variant and the \
             server refuses any other; remove it, or add a variant of its own for the other spelling"
        ),
        "untagged" => format!(
            "`#[serde(untagged)]` on variant `{wire}` is not supported: it reads any shape the variant accepts, \
             which the string enum in the schema cannot show; remove it"
        ),
        "with" | "deserialize_with" => format!(
            "`#[serde({key} = ..)]` on variant `{wire}` is not supported: a custom deserializer reads a shape the \
             schema cannot show; remove it"
        ),
        _ => format!(
            "`#[serde({key})]` on variant `{wire}` is not supported on tool argument enums: it may change how the \
             value is read; remove it (the attributes that are understood: {})",
            VARIANT_OK.join(", ")
        ),
    }
}
