//! Rules on the handler's signature: `async fn`, not generic, no `self`; parameters
//! `&ToolContext`, then `&ReadDb` (read) or `&mut DraftTx` / `&mut RemoteDraft` (draft),
//! then the arguments by value; returns `Result<T, ToolError>`.

use syn::{ReturnType, Type};

use super::tier::Tier;
use super::types::type_string;
use crate::ast::{Param, ParamKind, RuntimeType, ToolFn, last_ident, type_args};
use crate::errors::Errors;

/// What the signature says, once checked.
pub(super) struct Signature<'a> {
    /// Whether the handler takes the database handle.
    pub takes_db: bool,
    /// Whether that handle is a [`RuntimeType::RemoteDraft`].
    pub remote: bool,
    /// The arguments type.
    pub args: Option<&'a Type>,
    /// The output type (the `T` of `Result<T, ToolError>`).
    pub output: Option<&'a Type>,
    /// The `page: PageRequest` parameter, last.
    pub page: Option<&'a Type>,
}

/// Checks the signature (the page parameter's own rules are `page.rs`'s).
pub(super) fn check_signature<'a>(
    f: &ToolFn<'a>,
    tier: Option<Tier>,
    errors: &mut Errors,
) -> Signature<'a> {
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
                         `tx: &mut DraftTx` or `erp: &mut RemoteDraft` (draft tier), then one arguments type";
    let db_fix = |t: Option<Tier>| match t {
        Some(Tier::Draft) => "`tx: &mut DraftTx`",
        _ => "`db: &ReadDb`",
    };

    let mut takes_db = false;
    let mut remote = false;
    let mut args: Option<&'a Type> = None;
    let mut page: Option<&'a Type> = None;
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
        if page.is_some() {
            errors.spanned(
                p.original,
                "`page: PageRequest` is the last parameter of a page tool; move it after the arguments",
            );
        }
        match &p.kind {
            ParamKind::Receiver => {}
            ParamKind::Page { reference, ty } => {
                if reference.is_some() {
                    errors.spanned(
                        ty,
                        "the page request is taken by value; write `page: PageRequest`",
                    );
                }
                if page.is_some() {
                    errors.spanned(
                        ty,
                        format!("only one parameter is the page request; {SHAPE}"),
                    );
                }
                page = Some(ty);
            }
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
                // A draft writes either locally (`DraftTx`) or in another system
                // (`RemoteDraft`); both are `&mut`.
                let wanted = match (tier, which) {
                    (Some(Tier::Draft), RuntimeType::RemoteDraft) => RuntimeType::RemoteDraft,
                    (Some(Tier::Draft), _) => RuntimeType::DraftTx,
                    _ => RuntimeType::ReadDb,
                };
                let is_write = matches!(which, RuntimeType::DraftTx | RuntimeType::RemoteDraft);
                if takes_db {
                    errors.spanned(ty, format!("too many parameters; {SHAPE}"));
                } else if args.is_some() {
                    errors.spanned(
                        ty,
                        format!("the database handle comes before the arguments; {SHAPE}"),
                    );
                } else if tier.is_some() && *which != wanted {
                    let msg = match which {
                        RuntimeType::RemoteDraft => {
                            "read tools get `&ReadDb`, never a handle that writes to another system; write \
                             `db: &ReadDb` or make it a draft tool with `tier = \"draft\"`"
                        }
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
                } else if tier.is_some() && *reference != Some(is_write) {
                    let fix = match which {
                        RuntimeType::RemoteDraft => "`erp: &mut RemoteDraft`",
                        _ => db_fix(tier),
                    };
                    errors.spanned(ty, format!("write {fix} for the database handle"));
                }
                takes_db = true;
                remote = *which == RuntimeType::RemoteDraft;
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
                     that claims the idempotency key; write `async fn {fn_name}(ctx: &ToolContext, tx: &mut DraftTx, args: ..)` \
                     (or `erp: &mut RemoteDraft` for a document written in another system over its API)"
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
    Signature {
        takes_db,
        remote,
        args,
        output,
        page,
    }
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
