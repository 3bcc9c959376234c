//! The `#[erp(..)]` bounds on an argument field.

use erp_tools_internals::names::{self, closest};
use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, ExprLit, Lit, LitStr, Token};

use super::entry::{Entry, SpanOf, lit_str};
use crate::errors::Errors;

/// Every key `#[erp(..)]` accepts on an argument field.
pub(super) const BOUND_KEYS: &[&str] = &[
    "min", "max", "positive", "len", "pattern", "header", "allow", "reason", "kind", "of",
];

/// A number written in a bound, as its decimal text (`-5`, `0.01`, `1000`).
pub(crate) struct BoundNumber {
    /// The decimal text, without underscores.
    pub text: String,
    /// Where it was written.
    pub span: Span,
}

/// The declared bounds of one field: `#[erp(min = 1, max = 1000)]`,
/// `#[erp(positive)]`, `#[erp(len = 1..=40, pattern = "^[A-Z]+$")]`.
#[derive(Default)]
pub(crate) struct FieldBounds {
    /// `min = <number>`: the smallest value allowed.
    pub min: Option<BoundNumber>,
    /// `max = <number>`: the largest value allowed.
    pub max: Option<BoundNumber>,
    /// `positive`: more than zero.
    pub positive: Option<Span>,
    /// `len = a..=b`, `a..`, `..=b` or `n`: characters of a text, items of a list.
    pub len: Option<(usize, Option<usize>, Span)>,
    /// `pattern = ".."`: a regular expression the whole text must match.
    pub pattern: Option<LitStr>,
    /// `header = ".."`: the HTTP header MCP clients mirror the value into
    /// (`Mcp-Param-{header}`, SEP-2243). Not a bound: [`FieldBounds::is_empty`] ignores it.
    pub header: Option<LitStr>,
    /// `allow = ".."`: the category of a field a draft tool may take although the ERPs'
    /// vocabulary refuses it (`"discount"`), with [`FieldBounds::reason`]. Not a bound.
    pub allow: Option<LitStr>,
    /// `reason = ".."`: why the field is allowed, shown to reviewers (never to the model).
    pub reason: Option<LitStr>,
    /// `kind = ".."`: what the field is, for a draft tool's default deny (`"reference"`,
    /// `"quantity"`, ...), when its name does not say it. Not a bound.
    pub kind: Option<LitStr>,
    /// `of = ".."`: what a declared reference refers to (`"vendor"`). Not a bound.
    pub of: Option<LitStr>,
    /// Where the first `#[erp]` was written.
    pub span: Option<Span>,
}

impl FieldBounds {
    /// Whether any bound was declared.
    pub(crate) fn is_empty(&self) -> bool {
        self.min.is_none()
            && self.max.is_none()
            && self.positive.is_none()
            && self.len.is_none()
            && self.pattern.is_none()
    }
}

const BOUND_EXAMPLE: &str = "`#[erp(min = 1, max = 1000)]`, `#[erp(positive)]` or \
     `#[erp(len = 1..=40, pattern = \"^[A-Z0-9-]+$\")]`";

/// Reads every `#[erp(..)]` on a field, reporting malformed ones.
pub(crate) fn field_bounds(attrs: &[Attribute], errors: &mut Errors) -> FieldBounds {
    let mut out = FieldBounds::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("erp")) {
        out.span.get_or_insert(attr.path().span_of());
        let syn::Meta::List(list) = &attr.meta else {
            errors.spanned(
                attr,
                format!("`#[erp]` needs its bounds in parentheses: write {BOUND_EXAMPLE}"),
            );
            continue;
        };
        let entries = match Punctuated::<Entry, Token![,]>::parse_terminated
            .parse2(list.tokens.clone())
        {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(syn::Error::new(
                    e.span(),
                    format!("{e}; write the bounds as `key = value` separated by commas, e.g. {BOUND_EXAMPLE}"),
                ));
                continue;
            }
        };
        if entries.is_empty() {
            errors.spanned(
                attr,
                format!("`#[erp()]` declares no bound: write {BOUND_EXAMPLE}"),
            );
        }
        for Entry { key, value } in entries {
            let name = key.unraw().to_string();
            let Some(known) = BOUND_KEYS.iter().copied().find(|k| *k == name) else {
                let hint = match closest(&name, BOUND_KEYS) {
                    Some(best) => format!("did you mean `{best}`? "),
                    None => String::new(),
                };
                errors.spanned(
                    &key,
                    format!(
                        "unknown bound `{name}` in #[erp]; {hint}valid bounds: {} (e.g. {BOUND_EXAMPLE})",
                        BOUND_KEYS.join(", ")
                    ),
                );
                continue;
            };
            let taken = match known {
                "min" => out.min.is_some(),
                "max" => out.max.is_some(),
                "positive" => out.positive.is_some(),
                "len" => out.len.is_some(),
                "header" => out.header.is_some(),
                "allow" => out.allow.is_some(),
                "reason" => out.reason.is_some(),
                "kind" => out.kind.is_some(),
                "of" => out.of.is_some(),
                _ => out.pattern.is_some(),
            };
            if taken {
                errors.spanned(
                    &key,
                    format!("duplicate bound `{name}`; give each bound once"),
                );
                continue;
            }
            match (known, value) {
                ("positive", None) => out.positive = Some(key.span()),
                ("positive", Some(v)) => errors.spanned(
                    v,
                    "`positive` is a flag and takes no value: write `#[erp(positive)]` (more than 0), or \
                     `min = 0` to allow zero",
                ),
                (_, None) => errors.spanned(
                    &key,
                    format!("`{name}` needs a value: write {}", bound_example(known)),
                ),
                ("min" | "max", Some(v)) => match bound_number(&v) {
                    Ok(n) => {
                        if known == "min" {
                            out.min = Some(n);
                        } else {
                            out.max = Some(n);
                        }
                    }
                    Err(why) => errors.spanned(
                        &v,
                        format!("`{name}` takes a number {why}: write {}", bound_example(known)),
                    ),
                },
                ("header", Some(v)) => match lit_str(&v) {
                    Some(s) => match names::header_name_problem(&s.value()) {
                        None => out.header = Some(s),
                        Some(why) => errors.spanned(
                            &s,
                            format!("{why}: write {}", bound_example("header")),
                        ),
                    },
                    None => errors.spanned(
                        &v,
                        format!("`header` takes a string: write {}", bound_example("header")),
                    ),
                },
                ("kind" | "of", Some(v)) => match lit_str(&v) {
                    Some(s) if known == "kind" => out.kind = Some(s),
                    Some(s) => out.of = Some(s),
                    None => errors.spanned(
                        &v,
                        format!("`{known}` takes a string: write {}", bound_example("kind")),
                    ),
                },
                ("allow" | "reason", Some(v)) => match lit_str(&v) {
                    Some(s) if known == "allow" => out.allow = Some(s),
                    Some(s) => out.reason = Some(s),
                    None => errors.spanned(
                        &v,
                        format!("`{known}` takes a string: write {}", bound_example("allow")),
                    ),
                },
                ("len", Some(v)) => match bound_len(&v) {
                    Ok((lo, hi)) => out.len = Some((lo, hi, v_span(&v))),
                    Err(why) => errors.spanned(&v, format!("{why}: write {}", bound_example("len"))),
                },
                (_, Some(v)) => match lit_str(&v) {
                    Some(s) => out.pattern = Some(s),
                    None => errors.spanned(
                        &v,
                        format!("`pattern` takes a string: write {}", bound_example("pattern")),
                    ),
                },
            }
        }
    }
    out
}

fn v_span(v: &Expr) -> Span {
    v.to_token_stream()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site)
}

fn bound_example(key: &str) -> &'static str {
    match key {
        "min" => "`min = 1` or `min = 0.01`",
        "max" => "`max = 1000` or `max = 99.5`",
        "len" => "`len = 1..=40`, `len = 3`, `len = ..=40` or `len = 1..`",
        "header" => "`header = \"Region\"` (sent as `Mcp-Param-Region`)",
        "kind" | "of" => {
            "`#[erp(kind = \"reference\", of = \"vendor\")]` or `#[erp(kind = \"quantity\")]`"
        }
        "allow" | "reason" => {
            "`#[erp(allow = \"discount\", reason = \"the buyer asks for the discount the vendor quoted; the \
             approver confirms it\")]`"
        }
        _ => "`pattern = \"^[A-Z]{2}-[0-9]+$\"`",
    }
}

/// A plain decimal literal, possibly negative: `5`, `-5`, `0.25`, `1_000`.
fn bound_number(v: &Expr) -> Result<BoundNumber, &'static str> {
    let (neg, lit) = match v {
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => (true, &*u.expr),
        other => (false, other),
    };
    let Expr::Lit(ExprLit { lit, .. }) = lit else {
        return Err("written as a literal (no constant, expression or string)");
    };
    let (digits, suffix) = match lit {
        Lit::Int(i) => (i.base10_digits().to_string(), i.suffix().to_string()),
        Lit::Float(f) => (f.base10_digits().to_string(), f.suffix().to_string()),
        Lit::Str(_) => return Err("without quotes"),
        _ => return Err("written as a decimal literal"),
    };
    if !suffix.is_empty() {
        return Err("without a type suffix");
    }
    let ok = {
        let mut parts = digits.splitn(2, '.');
        let int = parts.next().unwrap_or("");
        let frac = parts.next();
        !int.is_empty()
            && int.bytes().all(|b| b.is_ascii_digit())
            && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
    };
    if !ok || digits.len() > 28 {
        return Err("in plain decimal notation (no exponent, at most 28 digits)");
    }
    Ok(BoundNumber {
        text: if neg { format!("-{digits}") } else { digits },
        span: v_span(v),
    })
}

fn len_value(e: &Expr) -> Result<usize, String> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) if i.suffix().is_empty() => i
            .base10_parse::<usize>()
            .map_err(|_| "`len` is too large".to_string()),
        _ => Err("`len` takes whole numbers".into()),
    }
}

fn bound_len(v: &Expr) -> Result<(usize, Option<usize>), String> {
    match v {
        Expr::Range(r) => {
            let lo = match &r.start {
                Some(s) => len_value(s)?,
                None => 0,
            };
            let hi = match (&r.end, &r.limits) {
                (None, _) => None,
                (Some(e), syn::RangeLimits::Closed(_)) => Some(len_value(e)?),
                (Some(e), syn::RangeLimits::HalfOpen(_)) => {
                    let end = len_value(e)?;
                    return Err(format!(
                        "`len` takes an inclusive range, so the largest length is visible: `..{end}` means at most \
                         {}; write `..=`",
                        end.saturating_sub(1)
                    ));
                }
            };
            if r.start.is_none() && hi.is_none() {
                return Err(
                    "`len = ..` allows every length; give a smallest or largest length".into(),
                );
            }
            if let Some(hi) = hi {
                if hi < lo {
                    return Err(format!(
                        "`len` runs from {lo} down to {hi}; write the smaller length first"
                    ));
                }
                if hi == 0 {
                    return Err(
                        "`len` allows only empty values; the largest length must be 1 or more"
                            .into(),
                    );
                }
            }
            Ok((lo, hi))
        }
        other => {
            let n = len_value(other)?;
            if n == 0 {
                return Err("`len = 0` allows only empty values".into());
            }
            Ok((n, Some(n)))
        }
    }
}
