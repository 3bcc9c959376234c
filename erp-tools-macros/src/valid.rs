//! The safety rules. Every rule reports through [`Errors`], spanned on the offending key,
//! field or type, so one pass reports every mistake in a declaration.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::{ReturnType, Type};

use crate::ast::{
    ArgsInput, Field, Param, ParamKind, RuntimeType, Shape, ToolFn, last_ident, type_args,
};
use crate::attr::ToolAttr;
use crate::errors::Errors;
use crate::json;
use crate::names::{self, DraftForbidden};

/// The tier of a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// `tier = "read"`
    Read,
    /// `tier = "draft"`
    Draft,
}

/// Wire name of the idempotency field every draft tool's arguments carry.
pub const CLIENT_REF: &str = "client_ref";

/// What the derive generates beyond the schema: the draft-only field checks.
pub struct ArgsPlan {
    /// For each field a draft tool may not take: where to report it and the message.
    pub draft_checks: Vec<(TokenStream, String)>,
    /// Whether the struct itself has a `client_ref` field.
    pub own_client_ref: bool,
}

/// Checks a type deriving `ToolArgs`.
pub fn check_args(input: &ArgsInput, errors: &mut Errors) -> ArgsPlan {
    let mut plan = ArgsPlan {
        draft_checks: Vec::new(),
        own_client_ref: false,
    };
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
    if let Some(span) = input.container.transparent {
        errors.at(
            span,
            "`#[serde(transparent)]` is not supported on tool argument types; use the inner type directly",
        );
    }
    match &input.shape {
        Shape::Struct(fields) => {
            let mut seen: Vec<&str> = Vec::new();
            for field in fields {
                if field.serde.skip {
                    continue;
                }
                check_self_reference(input, field, errors);
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
            for v in variants.iter().filter(|v| !v.skip) {
                if v.wire.is_empty() || v.wire.chars().count() > 200 {
                    errors.spanned(
                        &v.original.ident,
                        "an enum value must be a non-empty name of at most 200 characters",
                    );
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
    if let Some(why) = names::classify(wire) {
        let mut msg = names::forbidden_message(wire, why);
        if field.renamed() {
            msg = msg.replacen(&format!("`{wire}`"), &field.describe(), 1);
        }
        errors.spanned(field.name_tokens(), msg);
    }
    for alias in &field.serde.aliases {
        if let Some(why) = names::classify(&alias.value()) {
            errors.spanned(alias, names::forbidden_message(&alias.value(), why));
        }
    }
    if let Some(why) = names::classify_draft(wire) {
        plan.draft_checks
            .push((field.name_tokens(), draft_message(field, why)));
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
    if names::is_unit_like(wire) && is_text(field.ty) {
        let last = names::segments(wire).pop().unwrap_or_default();
        let (ty, values) = match last.trim_end_matches('s') {
            "currencie" | "currency" => ("Currency", "IDR, USD, EUR"),
            "unit" => ("Unit", "PCS, BOX, KG"),
            _ => ("Uom", "PCS, BOX, KG"),
        };
        errors.spanned(
            field.ty,
            format!(
                "{} is free text; units and currencies must be an enum of the allowed values so the model cannot \
                 invent one, declare `#[derive(Deserialize, ToolArgs)] enum {ty} {{ {values} }}` and use `{ty}`",
                field.describe()
            ),
        );
    }
}

fn draft_message(field: &Field, why: DraftForbidden) -> String {
    let msg = names::draft_message(&field.wire, why);
    if !field.renamed() {
        msg
    } else {
        msg.replacen(&format!("`{}`", field.wire), &field.describe(), 1)
    }
}

/// Whether a property key is safe on every provider: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn valid_key(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_plain_string(ty: &Type) -> bool {
    last_ident(ty).as_deref() == Some("String") && type_args(ty).is_empty()
}

/// `String`, `&str`, `str`, `Box<str>`, `Cow<str>`, or an `Option`/`Vec` of one.
fn is_text(ty: &Type) -> bool {
    match ty {
        Type::Reference(r) => is_text(&r.elem),
        Type::Group(g) => is_text(&g.elem),
        Type::Paren(p) => is_text(&p.elem),
        _ => match last_ident(ty).as_deref() {
            Some("String" | "str") => true,
            Some("Option" | "Vec" | "Box" | "Cow") => {
                type_args(ty).first().is_some_and(|t| is_text(t))
            }
            _ => false,
        },
    }
}

fn check_self_reference(input: &ArgsInput, field: &Field, errors: &mut Errors) {
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
    if mentions(field.ty, input.ident) {
        errors.spanned(
            field.ty,
            format!(
                "`{}` contains itself through field `{}`; tool arguments cannot be recursive (strict schemas have \
                 no `$ref`), give each level its own type",
                input.ident, field.ident
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
            let segs: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
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

fn is_json_value(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    match segs.as_slice() {
        [only] => only == "Value" && type_args(ty).is_empty(),
        [.., module, last] => last == "Value" && module == "serde_json",
        [] => false,
    }
}

/// A type as the user wrote it, for messages.
pub fn type_string(ty: &Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        (" < ", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
    ] {
        s = s.replace(from, to);
    }
    s
}

/// Everything `#[erp_tool]` needs to generate, once the rules hold.
pub struct ToolPlan<'a> {
    /// Module (namespace).
    pub module: String,
    /// Tier.
    pub tier: Tier,
    /// Scopes.
    pub scopes: Vec<String>,
    /// Tool name.
    pub name: String,
    /// Title.
    pub title: String,
    /// Description (the doc comment).
    pub description: String,
    /// Example call.
    pub example: Option<String>,
    /// Destructive flag.
    pub destructive: bool,
    /// `(path, max)` per limit.
    pub limits: Vec<(String, String)>,
    /// Whether the handler takes the database handle.
    pub takes_db: bool,
    /// The arguments type, if the handler takes one.
    pub args: Option<&'a Type>,
    /// The `T` of `Result<T, ToolError>`.
    pub output: &'a Type,
}

const WRITE_VERBS: &[&str] = &[
    "post",
    "posting",
    "posted",
    "approve",
    "approval",
    "approved",
    "send",
    "sending",
    "cancel",
    "cancellation",
    "submit",
    "submission",
    "delete",
    "remove",
    "pay",
    "payment",
    "write",
    "update",
    "void",
    "reverse",
    "release",
    "confirm",
    "execute",
    "commit",
    "close",
    "book",
    "transfer",
];

/// Checks the attribute and the function; returns the plan when every rule holds.
pub fn check_tool<'a>(
    attr: &ToolAttr,
    f: &ToolFn<'a>,
    errors: &mut Errors,
) -> Option<ToolPlan<'a>> {
    let call_site = Span::call_site();
    let fn_name = syn::ext::IdentExt::unraw(f.ident).to_string();

    let module = match &attr.module {
        Some(lit) => {
            let m = lit.value();
            if !valid_module(&m) {
                errors.spanned(
                    lit,
                    format!(
                        "module `{m}` must be a snake_case name like `purchasing` (lower-case letters, digits and \
                         single `_`, starting with a letter, at most 32 characters)"
                    ),
                );
            }
            Some(m)
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"module") {
                errors.at(
                    call_site,
                    "missing `module`: every tool belongs to a module (its namespace), write `module = \"purchasing\"`",
                );
            }
            None
        }
    };

    let tier = match &attr.tier {
        Some(lit) => {
            let t = lit.value();
            match t.as_str() {
                "read" => Some(Tier::Read),
                "draft" => Some(Tier::Draft),
                other if WRITE_VERBS.contains(&other.to_ascii_lowercase().as_str()) => {
                    errors.spanned(
                        lit,
                        format!(
                            "tier `{other}` is not allowed: posting, approving, sending, paying and cancelling belong \
                             to a person in the ERP; expose a draft tool that prepares the document for them to \
                             review, write `tier = \"draft\"`"
                        ),
                    );
                    None
                }
                other => {
                    errors.spanned(
                        lit,
                        format!("unknown tier `{other}`; expected one of: read, draft"),
                    );
                    None
                }
            }
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"tier") {
                errors.at(
                    call_site,
                    "missing `tier`: write `tier = \"read\"` for look-ups or `tier = \"draft\"` for tools that \
                     create a draft document",
                );
            }
            None
        }
    };

    let scope_example = format!(
        "{}:{}",
        module
            .as_deref()
            .filter(|m| valid_module(m))
            .unwrap_or("purchasing"),
        match tier {
            Some(Tier::Draft) => "draft",
            _ => "read",
        }
    );
    let mut scopes = Vec::new();
    match &attr.scopes {
        Some(list) => {
            if list.items.is_empty() && list.tokens.to_string().replace(' ', "") == "[]" {
                errors.spanned(
                    &list.tokens,
                    format!(
                        "`scopes` is empty; every tool needs at least one scope the caller must hold (default \
                         deny), write `scopes = [\"{scope_example}\"]`"
                    ),
                );
            }
            for lit in &list.items {
                let s = lit.value();
                if !valid_scope(&s) {
                    errors.spanned(
                        lit,
                        format!(
                            "scope `{s}` is malformed; write `module:action` like `purchasing:read`: letters, digits, \
                             `_`, `-` or `.` in each part, parts separated by `:`, no spaces"
                        ),
                    );
                } else if scopes.contains(&s) {
                    errors.spanned(
                        lit,
                        format!("scope `{s}` is listed twice; list each scope once"),
                    );
                }
                scopes.push(s);
            }
        }
        None => {
            if !attr.unreadable && !attr.mentioned.contains(&"scopes") {
                errors.at(
                    call_site,
                    format!(
                        "missing `scopes`: every tool needs at least one scope the caller's token must hold \
                         (default deny), write `scopes = [\"{scope_example}\"]`"
                    ),
                );
            }
        }
    }

    let name = match (&attr.name, &module) {
        (Some(lit), Some(m)) => {
            let n = lit.value();
            let prefix = format!("{m}_");
            if !valid_key(&n) {
                errors.spanned(
                    lit,
                    format!("tool name `{n}` must match ^[a-zA-Z0-9_-]{{1,64}}$ (safe on every provider), e.g. `{prefix}{fn_name}`"),
                );
            } else if !n.starts_with(&prefix) || n.len() == prefix.len() {
                errors.spanned(
                    lit,
                    format!("tool name `{n}` must start with the module prefix `{prefix}`, e.g. `{prefix}{fn_name}`"),
                );
            }
            n
        }
        (None, Some(m)) => {
            let n = format!("{m}_{fn_name}");
            if !valid_key(&n) {
                errors.spanned(
                    f.ident,
                    format!(
                        "tool name `{n}` is longer than 64 characters (or has characters outside [a-zA-Z0-9_-]); \
                         shorten the fn name or set `name = \"{m}_...\"`"
                    ),
                );
            }
            n
        }
        (_, None) => String::new(),
    };

    if let Some(lit) = &attr.title
        && lit.value().trim().is_empty()
    {
        errors.spanned(
            lit,
            "`title` is empty; write a short human-readable title or leave the key out",
        );
    }
    let title = attr
        .title
        .as_ref()
        .map(|l| l.value().trim().to_string())
        .unwrap_or_else(|| names::humanise(&fn_name));

    if let Some(lit) = &attr.example
        && let Err(e) = json::check_object(&lit.value())
    {
        errors.spanned(lit, format!("`example` is not a JSON object: {e}; write `example = r#\"{{\"field\": \"value\"}}\"#`"));
    }

    let mut limits = Vec::new();
    for lit in &attr.limits {
        match parse_limit(&lit.value()) {
            Some(l) => limits.push(l),
            None => errors.spanned(
                lit,
                format!(
                    "limit `{}` is malformed; write `<path> <= <number>`, e.g. `lines[].qty <= 1000` or \
                     `amount <= 5000000` (path segments are field names, `[]` after a list)",
                    lit.value()
                ),
            ),
        }
    }

    if let (Some(b), Some(Tier::Read)) = (&attr.destructive, tier)
        && b.value
    {
        errors.spanned(
            b,
            "a read tool cannot be destructive: it only looks things up, remove `destructive = true` or make it a \
             draft tool",
        );
    }

    if f.doc.trim().is_empty() {
        let what = if f.original.attrs.iter().any(|a| a.path().is_ident("doc")) {
            "an empty doc comment"
        } else {
            "no doc comment"
        };
        errors.spanned(
            f.ident,
            format!(
                "tool `{fn_name}` has {what}; the doc comment is the description the model reads, write \
                 `/// <what the tool does>` above the fn, first sentence first"
            ),
        );
    }

    let (takes_db, args, output) = check_signature(f, tier, errors);

    if !errors.is_empty() {
        return None;
    }
    Some(ToolPlan {
        module: module?,
        tier: tier?,
        scopes,
        name,
        title,
        description: f.doc.clone(),
        example: attr.example.as_ref().map(|l| l.value().trim().to_string()),
        destructive: attr.destructive.as_ref().is_some_and(|b| b.value),
        limits,
        takes_db,
        args,
        output: output?,
    })
}

fn check_signature<'a>(
    f: &ToolFn<'a>,
    tier: Option<Tier>,
    errors: &mut Errors,
) -> (bool, Option<&'a Type>, Option<&'a Type>) {
    let sig = &f.original.sig;
    let fn_name = f.ident;
    if sig.asyncness.is_none() {
        errors.spanned(
            sig.fn_token,
            format!("a tool handler must be an `async fn`; write `async fn {fn_name}(..)`"),
        );
    }
    if let Some(u) = &sig.unsafety {
        errors.spanned(u, "a tool handler cannot be `unsafe`; remove `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "a tool handler cannot declare an ABI; remove it");
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        errors.spanned(
            &sig.generics,
            "a tool handler cannot be generic or name lifetimes; the framework calls it with concrete types, \
             remove `<..>` and leave lifetimes elided (`ctx: &ToolContext`)",
        );
    }
    if let Some(v) = &sig.variadic {
        errors.spanned(v, "a tool handler cannot be variadic");
    }

    const SHAPE: &str = "a tool handler takes `ctx: &ToolContext`, then `db: &ReadDb` (read tier) or \
                         `tx: &mut DraftTx` (draft tier), then one arguments type";
    let db_fix = |t: Option<Tier>| match t {
        Some(Tier::Draft) => "`tx: &mut DraftTx`",
        _ => "`db: &ReadDb`",
    };

    let mut takes_db = false;
    let mut args: Option<&'a Type> = None;
    for p in f
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Receiver))
    {
        errors.spanned(
            p.original,
            "a tool handler cannot take `self`; write a free `async fn` at module level with \
             `ctx: &ToolContext` first",
        );
    }
    let rest: Vec<&Param> = f
        .params
        .iter()
        .filter(|p| !matches!(p.kind, ParamKind::Receiver))
        .collect();
    let is_ctx = |p: &Param| {
        matches!(
            p.kind,
            ParamKind::Runtime {
                which: RuntimeType::Context,
                ..
            }
        )
    };
    match rest.iter().position(|p| is_ctx(p)) {
        None => match rest.first() {
            None => errors.spanned(
                &sig.ident,
                format!(
                    "`{fn_name}` takes no parameters; the first parameter must be `ctx: &ToolContext` (the \
                     caller, from the token)"
                ),
            ),
            Some(p) => errors.spanned(
                p.original,
                format!("the first parameter of a tool handler must be `ctx: &ToolContext` (the caller, from the token); {SHAPE}"),
            ),
        },
        Some(i) => {
            if let ParamKind::Runtime { reference, ty, .. } = &rest[i].kind {
                if i != 0 {
                    errors.spanned(ty, format!("`ToolContext` must be the first parameter; {SHAPE}"));
                } else if *reference != Some(false) {
                    errors.spanned(ty, "write `ctx: &ToolContext`: the context is borrowed");
                }
            }
        }
    }
    let mut seen_ctx = false;
    for p in rest {
        if is_ctx(p) && !seen_ctx {
            seen_ctx = true;
            continue;
        }
        match &p.kind {
            ParamKind::Receiver => {}
            ParamKind::Runtime {
                which: RuntimeType::Context,
                ty,
                ..
            } => errors.spanned(ty, format!("only one parameter is the context; {SHAPE}")),
            ParamKind::Runtime {
                which,
                reference,
                ty,
            } => {
                let wanted = match tier {
                    Some(Tier::Draft) => RuntimeType::DraftTx,
                    _ => RuntimeType::ReadDb,
                };
                if takes_db {
                    errors.spanned(ty, format!("too many parameters; {SHAPE}"));
                } else if args.is_some() {
                    errors.spanned(
                        ty,
                        format!("the database handle comes before the arguments; {SHAPE}"),
                    );
                } else if tier.is_some() && *which != wanted {
                    let msg = match which {
                        RuntimeType::DraftTx => {
                            "read tools get `&ReadDb`, never a write handle; write `db: &ReadDb` \
                                                  or make it a draft tool with `tier = \"draft\"`"
                        }
                        _ => {
                            "draft tools write through the transaction that claims the idempotency key; write \
                              `tx: &mut DraftTx` instead of `&ReadDb`"
                        }
                    };
                    errors.spanned(ty, msg);
                } else if tier.is_some() && *reference != Some(*which == RuntimeType::DraftTx) {
                    errors.spanned(
                        ty,
                        format!("write {} for the database handle", db_fix(tier)),
                    );
                }
                takes_db = true;
            }
            ParamKind::Value(ty) => {
                if args.is_some() {
                    errors.spanned(p.original, format!("too many parameters; {SHAPE}"));
                } else if let Type::Reference(r) = ty {
                    errors.spanned(
                        ty,
                        format!(
                            "the arguments are taken by value; write `args: {}`",
                            type_string(&r.elem)
                        ),
                    );
                } else if let Type::ImplTrait(_) = ty {
                    errors.spanned(
                        ty,
                        "the arguments type must be a concrete struct deriving ToolArgs",
                    );
                }
                args = Some(ty);
            }
        }
    }
    if tier == Some(Tier::Draft) {
        if !takes_db {
            errors.spanned(
                &sig.ident,
                format!(
                    "a draft tool takes `tx: &mut DraftTx` after the context: the draft is written in the transaction \
                     that claims the idempotency key; write `async fn {fn_name}(ctx: &ToolContext, tx: &mut DraftTx, args: ..)`"
                ),
            );
        }
        if args.is_none() {
            errors.spanned(
                &sig.ident,
                "a draft tool needs an arguments struct with `client_ref: String` (the model's own id for this write, \
                 reused on retry); add `args: YourArgs`",
            );
        }
    }

    let output = match &sig.output {
        ReturnType::Type(_, ty) => match result_ok_type(ty) {
            Some(t) => Some(t),
            None => {
                errors.spanned(
                    ty,
                    "a tool handler returns `Result<T, ToolError>` where `T` is the output (Serialize + JsonSchema); \
                     write `-> Result<YourOutput, ToolError>`",
                );
                None
            }
        },
        ReturnType::Default => {
            errors.spanned(
                &sig.ident,
                format!("`{fn_name}` returns nothing; a tool handler returns `Result<T, ToolError>`, write `-> Result<YourOutput, ToolError>`"),
            );
            None
        }
    };
    (takes_db, args, output)
}

fn result_ok_type(ty: &Type) -> Option<&Type> {
    if last_ident(ty).as_deref() != Some("Result") {
        return None;
    }
    match type_args(ty).as_slice() {
        [ok, err] if last_ident(err).as_deref() == Some("ToolError") => Some(ok),
        _ => None,
    }
}

fn valid_module(m: &str) -> bool {
    let b = m.as_bytes();
    !b.is_empty()
        && b.len() <= 32
        && b[0].is_ascii_lowercase()
        && !m.ends_with('_')
        && !m.contains("__")
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

fn valid_scope(s: &str) -> bool {
    let parts: Vec<&str> = s.split(':').collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        })
}

/// Parses `"<path> <= <decimal>"`.
pub fn parse_limit(text: &str) -> Option<(String, String)> {
    let (path, max) = text.split_once("<=")?;
    let (path, max) = (path.trim(), max.trim());
    let segment_ok = |seg: &str| {
        let name = seg.strip_suffix("[]").unwrap_or(seg);
        let mut chars = name.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    if path.is_empty() || !path.split('.').all(segment_ok) {
        return None;
    }
    let (int, frac) = match max.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (max, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || frac.is_some_and(|f| !digits(f)) {
        return None;
    }
    Some((path.to_string(), max.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_grammar() {
        assert_eq!(
            parse_limit("lines[].qty <= 1000"),
            Some(("lines[].qty".into(), "1000".into()))
        );
        assert_eq!(
            parse_limit("amount<=5000000.50"),
            Some(("amount".into(), "5000000.50".into()))
        );
        for bad in [
            "lines[].qty < 1000",
            "<= 5",
            "qty <= ",
            "qty <= -1",
            "qty <= 1e3",
            "li nes <= 3",
            "a..b <= 1",
            "a[0] <= 1",
        ] {
            assert_eq!(parse_limit(bad), None, "{bad}");
        }
    }

    #[test]
    fn module_and_scope_shapes() {
        assert!(
            valid_module("purchasing") && valid_module("sales2") && valid_module("stock_moves")
        );
        for bad in [
            "Purchasing",
            "2sales",
            "stock-moves",
            "a__b",
            "trailing_",
            "",
        ] {
            assert!(!valid_module(bad), "{bad}");
        }
        assert!(
            valid_scope("purchasing:read")
                && valid_scope("purchasing:po.draft")
                && valid_scope("a:b:c")
        );
        for bad in ["purchasing", "purchasing: read", ":read", "purchasing:", ""] {
            assert!(!valid_scope(bad), "{bad}");
        }
    }
}
