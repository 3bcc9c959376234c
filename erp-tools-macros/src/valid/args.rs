//! Rules on argument types, checked by `#[derive(ToolArgs)]` on every struct, so nested,
//! listed, optional and flattened types are all covered by their own derive.

use erp_tools_internals::names::{self, DraftForbidden, Kind};
use proc_macro2::TokenStream;
use syn::Type;

use erp_tools_internals::names::valid_key;

use super::kinds::{KindCheck, declared_kind, kind_check, newtype_name};
use super::types::type_string;
use crate::ast::{ArgsInput, Field, Shape, last_ident, type_args};
use crate::errors::Errors;

/// Wire name of the idempotency field every draft tool's arguments carry.
pub(crate) const CLIENT_REF: &str = "client_ref";

/// What the derive generates beyond the schema: the draft-only field checks.
pub(crate) struct ArgsPlan {
    /// For each field a draft tool may not take: where to report it, the message, and
    /// the field's Rust name.
    pub draft_checks: Vec<(TokenStream, String, String)>,
    /// Whether the struct itself has a `client_ref` field.
    pub own_client_ref: bool,
    /// Fields named for a unit or currency whose type is not spelled as text: the
    /// expansion checks what the type is (an enum, or for a qualifying word a number).
    pub unit_fields: Vec<UnitField>,
    /// Fields a draft tool may take although a rule refuses them, by the field's wire
    /// name: `(wire name, category, reason)` from `#[erp(allow = "..", reason = "..")]`.
    pub opt_ins: Vec<(String, String, String)>,
    /// The draft tier's default deny: for each field, the shapes its kind may have.
    pub kind_checks: Vec<KindCheck>,
    /// Kinds declared with `#[erp(kind = "..", of = "..")]`: `(wire name, kind, of)`.
    pub declared_kinds: Vec<(String, String, Option<String>)>,
    /// For a newtype: the kinds its own name says it is (a bit a kind), 0 for none.
    pub newtype_kinds: u16,
}

/// A field named for a unit or currency, checked on its type's `ToolArgs` constants.
pub(crate) struct UnitField {
    /// The field's Rust name.
    pub ident: syn::Ident,
    /// The field's type.
    pub ty: Type,
    /// Whether the name's last word is the unit word (then only an enum is allowed).
    pub head: bool,
    /// The compile error.
    pub message: String,
}

/// Checks a type deriving `ToolArgs`.
pub(crate) fn check_args(input: &ArgsInput, errors: &mut Errors) -> ArgsPlan {
    let mut plan = ArgsPlan {
        draft_checks: Vec::new(),
        own_client_ref: false,
        unit_fields: Vec::new(),
        opt_ins: Vec::new(),
        kind_checks: Vec::new(),
        declared_kinds: Vec::new(),
        newtype_kinds: 0,
    };
    super::serde::check_serde(input, errors);
    let generics = &input.original.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        errors.spanned(
            generics,
            format!(
                "tool argument types cannot be generic; the schema is built once per type, \
                 write `{}` with concrete field types",
                input.ident
            ),
        );
    }
    match &input.shape {
        Shape::Newtype(field) => {
            check_self_reference(input, field.ty, &field.member, errors);
            check_free_form(field.ty, errors);
            let (kinds, refusal) = newtype_name(input);
            plan.newtype_kinds = kinds;
            plan.draft_checks.extend(refusal);
        }
        Shape::Struct(fields) => {
            let mut seen: Vec<&str> = Vec::new();
            let mut headers: Vec<String> = Vec::new();
            for field in fields {
                if field.serde.skip {
                    continue;
                }
                super::bounds::check_bounds(field, errors);
                super::bounds::check_header(field, &mut headers, errors);
                check_self_reference(input, field.ty, field.ident, errors);
                check_free_form(field.ty, errors);
                if field.serde.flatten.is_some() {
                    if last_ident(field.ty).as_deref() == Some("Option") {
                        errors.spanned(
                            field.ty,
                            "a flattened field cannot be an `Option`; flatten a struct whose own fields are \
                             `Option<T>` instead",
                        );
                    }
                    continue;
                }
                if seen.contains(&field.wire.as_str()) {
                    errors.spanned(
                        field.name_tokens(),
                        format!(
                            "two fields are sent as `{}`; give each field its own wire name",
                            field.wire
                        ),
                    );
                }
                seen.push(&field.wire);
                check_field_name(field, errors, &mut plan);
            }
        }
        Shape::Enum(variants) => {
            if !variants.is_empty() && variants.iter().all(|v| v.skip) {
                errors.spanned(
                    input.ident,
                    "every variant is skipped, so no value is accepted; keep at least one",
                );
            }
            let own = input.ident.to_string();
            if let Some(why) = names::classify_draft(&own)
                && why.category() == names::vocab::Category::Status
            {
                plan.draft_checks.push((
                    quote::ToTokens::to_token_stream(input.ident),
                    format!(
                        "`{own}` names a status, so it cannot be a value a draft tool takes: a draft is always \
                         created in status draft and only a person moves it on; remove the field that takes it"
                    ),
                    own.clone(),
                ));
            }
            for v in variants.iter().filter(|v| !v.skip) {
                if v.wire.is_empty() || v.wire.chars().count() > 200 {
                    errors.spanned(
                        &v.original.ident,
                        "an enum value must be a non-empty name of at most 200 characters",
                    );
                }
                if let Some(verb) =
                    names::post_tier_verb(&v.wire).or_else(|| names::status_value(&v.wire))
                {
                    let at = match &v.rename {
                        Some(lit) => quote::ToTokens::to_token_stream(lit),
                        None => quote::ToTokens::to_token_stream(&v.original.ident),
                    };
                    plan.draft_checks.push((
                        at,
                        if names::post_tier_verb(&v.wire).is_some() {
                            names::verb_message(&input.ident.to_string(), &v.wire, verb)
                        } else {
                            format!(
                                "`{}` cannot be a value of `{}` in a draft tool's arguments: it is a status \
                                 (`{verb}`), and a draft is always created in status draft, only a person moves \
                                 it on; remove the value, or keep the enum to the document's own choices",
                                v.wire, input.ident
                            )
                        },
                        v.original.ident.to_string(),
                    ));
                }
            }
        }
        Shape::Unsupported => {}
    }
    plan
}

fn check_field_name(field: &Field, errors: &mut Errors, plan: &mut ArgsPlan) {
    let wire = field.wire.as_str();
    if !valid_key(wire) {
        errors.spanned(
            field.name_tokens(),
            format!(
                "`{wire}` is not a valid property key; keys must match ^[a-zA-Z0-9_-]{{1,64}}$ on every provider, \
                 rename the field"
            ),
        );
    }
    let declared = declared_kind(field, errors);
    let mut refused = false;
    if let Some(why) = names::classify(wire) {
        let counterparty = declared.as_ref().is_some_and(|(k, of)| {
            *k == Kind::Reference && of.as_deref().is_some_and(names::judge::is_counterparty)
        });
        if !(matches!(why, names::Forbidden::Ambiguous(_)) && counterparty) {
            refused = true;
            let mut msg = names::forbidden_message(wire, why);
            if field.renamed() {
                msg = msg.replacen(&format!("`{wire}`"), &field.describe(), 1);
            }
            errors.spanned(field.name_tokens(), msg);
        }
    }
    for alias in &field.serde.aliases {
        if let Some(why) = names::classify(&alias.value()) {
            errors.spanned(alias, names::forbidden_message(&alias.value(), why));
        }
    }
    let checks_before = plan.draft_checks.len();
    check_opt_in(field, refused, errors, plan);
    let draft_refused = plan.draft_checks.len() > checks_before;
    let opted_in = plan.opt_ins.iter().any(|(w, _, _)| w == wire);
    if let Some((kind, of)) = &declared {
        plan.declared_kinds
            .push((wire.to_string(), kind.key().to_string(), of.clone()));
    }
    if !refused && !draft_refused && !opted_in && wire != CLIENT_REF {
        plan.kind_checks
            .push(kind_check(field, declared.map(|(k, _)| k)));
    }
    if wire == CLIENT_REF {
        plan.own_client_ref = true;
        if !is_plain_string(field.ty) {
            errors.spanned(
                field.ty,
                "`client_ref` must be typed `String`: it is the model's own id for this write, required and reused \
                 on retry, write `client_ref: String`",
            );
        }
    }
    if let Some(word) = names::unit_word(wire) {
        let (ty, values, what) = match word.kind {
            names::UnitKind::Currency => ("Currency", "IDR, USD, EUR", "currency"),
            names::UnitKind::Unit => ("Uom", "PCS, BOX, KG", "unit"),
        };
        let fix = format!(
            "declare `#[derive(Deserialize, ToolArgs)] enum {ty} {{ {values} }}` and use `{ty}` (or \
             `Option<{ty}>`, `Vec<{ty}>`)"
        );
        if is_text(field.ty) {
            errors.spanned(
                field.ty,
                format!(
                    "{} names a {what} but is free text; units and currencies must be an enum of the allowed \
                     values so the model cannot invent one, {fix}",
                    field.describe()
                ),
            );
        } else {
            let message = if word.head {
                format!(
                    "{} names a {what}, so its type must be an enum of the allowed values (a unit-only enum deriving \
                     ToolArgs), not free text, a number or an object; {fix}",
                    field.describe()
                )
            } else {
                format!(
                    "{} names a {what}, so its type must be an enum of the allowed values or a number (a factor, a \
                     count), never free text or an object the model could fill with an invented {what}; {fix}",
                    field.describe()
                )
            };
            plan.unit_fields.push(UnitField {
                ident: field.ident.clone(),
                ty: field.ty.clone(),
                head: word.head,
                message,
            });
        }
    }
}

/// The draft-tier rules of a field's name, and `#[erp(allow = "..", reason = "..")]`: a
/// field a draft rule refuses is checked in draft tools unless it is allowed by the very
/// category that refuses it, with a reason; identity and company fields, refused in every
/// tier, cannot be allowed.
fn check_opt_in(field: &Field, every_tier: bool, errors: &mut Errors, plan: &mut ArgsPlan) {
    let wire = field.wire.as_str();
    let (allow, reason) = (&field.bounds.allow, &field.bounds.reason);
    let example = |category: &str| {
        format!(
            "`#[erp(allow = \"{category}\", reason = \"<why a person may accept this value; the reviewer reads it>\")]`"
        )
    };
    match (allow, reason) {
        (Some(a), None) => errors.spanned(
            a,
            format!(
                "`allow` needs a `reason` saying why the field is safe to take; reviewers read it, write {}",
                example(&a.value())
            ),
        ),
        (None, Some(r)) => errors.spanned(
            r,
            "`reason` goes with `allow`: it explains a field a rule refuses; remove it, or name the category with \
             `allow = \"..\"`",
        ),
        (Some(_), Some(r)) if r.value().trim().is_empty() => errors.spanned(
            r,
            "`reason` is empty; say why a person may accept the value the model sends (reviewers read it)",
        ),
        _ => {}
    }
    if every_tier {
        if let Some(a) = allow {
            errors.spanned(
                a,
                format!(
                    "{} names a person, a company, a branch or the caller's authority, which come from the caller's \
                     token in every tool; such a field cannot be allowed, remove `allow` and the field",
                    field.describe()
                ),
            );
        }
        return;
    }
    let Some(why) = names::classify_draft(wire) else {
        if let Some(a) = allow {
            errors.spanned(
                a,
                format!(
                    "{} is not refused by any rule, so there is nothing to allow; remove `allow` and `reason`",
                    field.describe()
                ),
            );
        }
        return;
    };
    let category = why.category().key();
    match allow {
        None => plan.draft_checks.push((
            field.name_tokens(),
            draft_message(field, why),
            syn::ext::IdentExt::unraw(field.ident).to_string(),
        )),
        Some(a) if a.value() != category => errors.spanned(
            a,
            format!(
                "{} is refused in draft tools as {} `{category}`, not `{}`; an opt-in names the category that \
                 refuses the field, write {}",
                field.describe(),
                if category == "amount" || category == "exchange_rate" { "an" } else { "a" },
                a.value(),
                example(category)
            ),
        ),
        Some(_) => {
            if let Some(r) = reason {
                plan.opt_ins
                    .push((field.wire.clone(), category.to_string(), r.value().trim().to_string()));
            }
        }
    }
}

fn draft_message(field: &Field, why: DraftForbidden) -> String {
    let mut msg = names::draft_message(&field.wire, why);
    if field.renamed() {
        msg = msg.replacen(&format!("`{}`", field.wire), &field.describe(), 1);
    }
    let category = why.category();
    if category.may_opt_in() && !msg.contains("allow = ") {
        msg.push_str(&format!(
            "; if a person checks the value before the document goes on, a team may take it with \
             `#[erp(allow = \"{}\", reason = \"..\")]` (a kind declaration does not lift this)",
            category.key()
        ));
    }
    msg
}

fn is_plain_string(ty: &Type) -> bool {
    last_ident(ty).as_deref() == Some("String") && type_args(ty).is_empty()
}

/// `String`, `&str`, `str`, `Box<str>`, `Arc<str>`, `Rc<str>`, `Cow<str>`, or an
/// `Option`/`Vec` of one.
fn is_text(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => is_text(&r.elem),
        Type::Group(g) => is_text(&g.elem),
        Type::Paren(p) => is_text(&p.elem),
        _ => match last_ident(ty).as_deref() {
            Some("String" | "str") => true,
            Some("Option" | "Vec" | "Box" | "Arc" | "Rc" | "Cow") => {
                type_args(ty).first().is_some_and(|t| is_text(t))
            }
            _ => false,
        },
    }
}

fn check_self_reference(
    input: &ArgsInput,
    ty: &Type,
    member: &dyn quote::ToTokens,
    errors: &mut Errors,
) {
    fn mentions(ty: &Type, name: &syn::Ident) -> bool {
        struct Finder<'n> {
            name: &'n syn::Ident,
            found: bool,
        }
        impl<'ast> syn::visit::Visit<'ast> for Finder<'_> {
            fn visit_path_segment(&mut self, seg: &'ast syn::PathSegment) {
                if seg.ident == *self.name || seg.ident == "Self" {
                    self.found = true;
                }
                syn::visit::visit_path_segment(self, seg);
            }
        }
        let mut f = Finder { name, found: false };
        syn::visit::Visit::visit_type(&mut f, ty);
        f.found
    }
    if mentions(ty, input.ident) {
        errors.spanned(
            ty,
            format!(
                "`{}` contains itself through field `{}`; tool arguments cannot be recursive (strict schemas have \
                 no `$ref`), give each level its own type",
                input.ident,
                member.to_token_stream()
            ),
        );
    }
}

/// Reports free-form JSON, maps and floats anywhere inside a field's type.
fn check_free_form(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Path(p) => {
            let Some(last) = p.path.segments.last() else {
                return;
            };
            let name = last.ident.to_string();
            let segs = path_segments(p);
            let from_serde_json = segs.len() >= 2 && segs[segs.len() - 2] == "serde_json";
            let shown = type_string(ty);
            let args = type_args(ty);
            if name == "Vec" && args.first().is_some_and(|t| is_json_value(t)) {
                errors.spanned(
                    ty,
                    format!(
                        "`{shown}` cannot be a tool argument type; a list of free-form json has no strict schema, \
                         declare the item as a struct deriving ToolArgs and write `Vec<YourItem>`"
                    ),
                );
                return;
            }
            if is_json_value(ty) {
                errors.spanned(
                    ty,
                    format!(
                        "`{shown}` cannot be a tool argument type; free-form json has no strict schema, declare a \
                         struct with typed fields (`#[derive(Deserialize, ToolArgs)]`) or an enum of the allowed values"
                    ),
                );
                return;
            }
            let is_map = matches!(
                name.as_str(),
                "HashMap" | "BTreeMap" | "IndexMap" | "HashTrieMap" | "FxHashMap"
            ) || (name == "Map" && (from_serde_json || segs.len() == 1));
            if is_map {
                errors.spanned(
                    ty,
                    format!(
                        "`{shown}` cannot be a tool argument type; a map has open keys, which strict schemas cannot \
                         describe, use a struct with named fields or `Vec<Entry>` with an entry struct deriving ToolArgs"
                    ),
                );
                return;
            }
            if (name == "f32" || name == "f64") && segs.len() == 1 {
                errors.spanned(
                    ty,
                    format!(
                        "`{shown}` cannot be a tool argument type; binary floats lose exact amounts and hash \
                         differently across formatters, use `rust_decimal::Decimal` (sent as a decimal string) or an \
                         integer of minor units"
                    ),
                );
                return;
            }
            for arg in args {
                check_free_form(arg, errors);
            }
        }
        Type::Reference(r) => check_free_form(&r.elem, errors),
        Type::Group(g) => check_free_form(&g.elem, errors),
        Type::Paren(p) => check_free_form(&p.elem, errors),
        Type::Slice(s) => check_free_form(&s.elem, errors),
        Type::Array(a) => check_free_form(&a.elem, errors),
        Type::Tuple(t) => t.elems.iter().for_each(|e| check_free_form(e, errors)),
        _ => {}
    }
}

/// The identifiers of a type path: `serde_json::Value` → `["serde_json", "Value"]`.
fn path_segments(p: &syn::TypePath) -> Vec<String> {
    p.path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect()
}

fn is_json_value(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let segs = path_segments(p);
    match segs.as_slice() {
        [only] => only == "Value" && type_args(ty).is_empty(),
        [.., module, last] => last == "Value" && module == "serde_json",
        [] => false,
    }
}
