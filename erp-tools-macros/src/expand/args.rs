//! `#[derive(ToolArgs)]`: the schema, the nesting depth, the `client_ref` flags and the
//! draft-only checks of an argument type.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use super::paths::{private, respan};
use crate::ast::{ArgsInput, Field, Newtype, Shape};
use crate::attr::FieldBounds;
use crate::errors::Errors;
use crate::valid::{self, ArgsPlan};

/// `#[derive(ToolArgs)]`.
pub(crate) fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ArgsInput::from_syn(input, &mut errors);
    let plan = valid::check_args(&model, &mut errors);
    if !errors.is_empty() {
        let fallback = derive_fallback(input, model.krate.as_ref(), &plan);
        let errors = errors.to_compile_errors();
        return quote! { #errors #fallback };
    }
    match &model.shape {
        Shape::Struct(_) => derive_struct(&model, &plan),
        Shape::Enum(_) => derive_enum(&model, &plan),
        Shape::Newtype(field) => derive_newtype(&model, field, &plan),
        Shape::Unsupported => derive_fallback(input, model.krate.as_ref(), &plan),
    }
}

fn derive_struct(model: &ArgsInput, plan: &ArgsPlan) -> TokenStream {
    let Shape::Struct(fields) = &model.shape else {
        unreachable!("derive_struct on a struct")
    };
    let ident = model.ident;
    let private = private(model.krate.as_ref());
    let mut props = Vec::new();
    let mut depth = Vec::new();
    let mut bounds = Vec::new();
    let mut client_ref = vec![if plan.own_client_ref {
        quote!(true)
    } else {
        quote!(false)
    }];
    let mut client_ref_value = Vec::new();
    let mut object_asserts = Vec::new();
    for field in fields.iter().filter(|f| !f.serde.skip) {
        let ty = field.ty;
        let span = ty.span();
        let private_at = respan(&private, span);
        let as_args = quote_spanned!(span=> <#ty as #private_at::DerivedToolArgs>);
        bounds.push(quote_spanned!(span=>
            let () = <#ty as #private_at::DraftGuard<__ErpM>>::CHECK;
        ));
        if field.serde.flatten.is_some() {
            props.push(quote! {
                __erp_tool_props.extend(::core::iter::IntoIterator::into_iter(
                    ::std::vec::Vec::from(#as_args::schema().properties()),
                ));
            });
            depth.push(quote! { #as_args::DEPTH - 1 });
            client_ref.push(quote! { #as_args::HAS_CLIENT_REF });
            let member = field.ident;
            client_ref_value.push(quote! {
                if let ::core::option::Option::Some(__erp_tool_ref) = #as_args::client_ref(&self.#member) {
                    return ::core::option::Option::Some(__erp_tool_ref);
                }
            });
            let msg = format!(
                "`{}` is flattened, so it must be a struct with named fields deriving ToolArgs; remove \
                 `#[serde(flatten)]` or flatten a struct",
                field.ident
            );
            object_asserts.push(quote_spanned!(span=>
                const _: () = if !#as_args::IS_OBJECT { ::core::panic!(#msg) };
            ));
        } else {
            let wire = &field.wire;
            let doc = (!field.doc.is_empty()).then(|| {
                let doc = &field.doc;
                quote!(.with_description(#doc))
            });
            let bounds = bounds_tokens(&field.bounds, &private);
            object_asserts.extend(bound_asserts(field, &as_args, &private));
            let header = field
                .bounds
                .header
                .as_ref()
                .map(|h| quote!(.with_header(#h)));
            let opt_in = plan
                .opt_ins
                .iter()
                .find(|(w, _, _)| *w == field.wire)
                .map(|(_, category, reason)| quote!(.with_opt_in(#category, #reason)));
            let kind = plan
                .declared_kinds
                .iter()
                .find(|(w, _, _)| *w == field.wire)
                .map(|(_, kind, of)| match of {
                    Some(of) => quote!(.with_kind(#kind, ::core::option::Option::Some(#of))),
                    None => quote!(.with_kind(#kind, ::core::option::Option::None)),
                });
            props.push(quote! {
                __erp_tool_props.push(#private::Property::new(
                    ::std::borrow::Cow::Borrowed(#wire),
                    #as_args::schema() #doc #bounds,
                ) #header #opt_in #kind);
            });
            depth.push(quote! { #as_args::DEPTH });
            if field.wire == valid::CLIENT_REF {
                let member = field.ident;
                client_ref_value.insert(
                    0,
                    quote! {
                        return ::core::option::Option::Some(::std::string::String::as_str(&self.#member));
                    },
                );
            }
        }
    }
    let client_ref_fn = (!client_ref_value.is_empty()).then(|| {
        quote! {
            #[allow(unreachable_code)]
            fn client_ref(&self) -> ::core::option::Option<&::core::primitive::str> {
                #(#client_ref_value)*
                ::core::option::Option::None
            }
        }
    });

    for unit in &plan.unit_fields {
        let ty = &unit.ty;
        let span = ty.span();
        let msg = unit.message.replace('{', "{{").replace('}', "}}");
        let shape = quote!(#private::shape);
        let private_at = respan(&private, span);
        let item = quote_spanned!(span=> <#ty as #private_at::DerivedToolArgs>::ITEM_SHAPE);
        let refused = if unit.head {
            quote!(#item != #shape::ENUM)
        } else {
            quote!(#item == #shape::TEXT || #item == #shape::OBJECT)
        };
        let _ = &unit.ident;
        object_asserts.push(quote_spanned!(span=>
            const _: () = if #refused { ::core::panic!(#msg) };
        ));
    }
    let draft_check = draft_check(ident, plan, &bounds, &private);
    quote! {
        #[automatically_derived]
        impl #private::ToolArgs for #ident {
            fn tool_schema() -> #private::Schema {
                #[allow(unused_mut)]
                let mut __erp_tool_props: ::std::vec::Vec<#private::Property> = ::std::vec::Vec::new();
                #(#props)*
                #private::Schema::object(__erp_tool_props)
            }
        }

        #[automatically_derived]
        impl #private::DerivedToolArgs for #ident {
            const HAS_CLIENT_REF: ::core::primitive::bool = #(#client_ref)||*;
            const DEPTH: ::core::primitive::usize = {
                #[allow(unused_mut)]
                let mut __erp_tool_depth: ::core::primitive::usize = 0;
                #(
                    let __erp_tool_d: ::core::primitive::usize = #depth;
                    if __erp_tool_d > __erp_tool_depth {
                        __erp_tool_depth = __erp_tool_d;
                    }
                )*
                1 + __erp_tool_depth
            };
            const IS_OBJECT: ::core::primitive::bool = true;
            const SHAPE: ::core::primitive::u16 = #private::shape::OBJECT;
            #client_ref_fn
        }

        #(#object_asserts)*

        #draft_check
    }
}

/// The draft tier's checks, as the constant `DraftGuard<M>::CHECK` of a generic impl:
/// evaluated only when `#[erp_tool(tier = "draft")]` names it with `M = DraftTier`, so a
/// read tool never pays for them. Each refusal is a `panic!` spanned on the offending
/// field (the compiler reports it there, with the path of "erroneous constant" notes from
/// the tool down); the kind checks test the field type's shape against the kinds its
/// name or declaration allows; `nested` evaluates every field type's own `CHECK`.
fn draft_check(
    ident: &syn::Ident,
    plan: &ArgsPlan,
    nested: &[TokenStream],
    private: &TokenStream,
) -> TokenStream {
    let draft = quote!(<__ErpM as #private::CheckTier>::DRAFT);
    let mut checks = Vec::new();
    let others: Vec<String> = plan
        .draft_checks
        .iter()
        .map(|(_, _, f)| format!("`{f}`"))
        .collect();
    for (i, (at, msg, _)) in plan.draft_checks.iter().enumerate() {
        let span = first_span(at);
        let mut msg = msg.clone();
        if i == 0 && others.len() > 1 {
            msg.push_str(&format!(
                " (also refused in `{ident}`: {})",
                others[1..].join(", ")
            ));
        }
        let message = msg.replace('{', "{{").replace('}', "}}");
        checks.push(quote_spanned!(span=> if #draft { ::core::panic!(#message) }));
    }
    for k in &plan.kind_checks {
        let span = first_span(&k.at);
        let ty = &k.ty;
        let private_at = respan(private, ty.span());
        let as_args = quote_spanned!(ty.span()=> <#ty as #private_at::DerivedToolArgs>);
        let mask = k.mask;
        let own_kind = if k.declared {
            quote!(true)
        } else {
            quote!(#as_args::KIND == 0)
        };
        let message = k.message.replace('{', "{{").replace('}', "}}");
        checks.push(quote_spanned!(span=>
            if #draft && (#mask & #as_args::ITEM_SHAPE) == 0 && #own_kind { ::core::panic!(#message) }
        ));
    }
    // The impl is spanned on the type (not on the derive): the compiler then points at the
    // type in the notes, not at the derive.
    let private = respan(private, ident.span());
    let impl_block = quote_spanned! {ident.span()=>
        impl<__ErpM: #private::CheckTier> #private::DraftGuard<__ErpM> for #ident {
            const CHECK: () = {
                #(#checks)*
                #(#nested)*
            };
        }
    };
    quote! {
        #[doc(hidden)]
        const _: () = {
            #impl_block
        };
    }
}

/// `.with_bounds(..)` for a field's `#[erp(..)]`, or nothing.
fn bounds_tokens(b: &FieldBounds, private: &TokenStream) -> Option<TokenStream> {
    if b.is_empty() {
        return None;
    }
    let mut calls = Vec::new();
    if let Some(min) = &b.min {
        let t = &min.text;
        calls.push(quote!(.with_min(#t)));
    }
    if let Some(max) = &b.max {
        let t = &max.text;
        calls.push(quote!(.with_max(#t)));
    }
    if b.positive.is_some() {
        calls.push(quote!(.positive()));
    }
    if let Some((lo, hi, _)) = &b.len {
        let hi = match hi {
            Some(h) => quote!(::core::option::Option::Some(#h)),
            None => quote!(::core::option::Option::None),
        };
        calls.push(quote!(.with_len(#lo, #hi)));
    }
    if let Some(p) = &b.pattern {
        calls.push(quote!(.with_pattern(#p)));
    }
    Some(quote! {
        .with_bounds(#private::Bounds::new() #(#calls)*)
    })
}

/// Compile-time checks that each declared bound fits what the field's type is on the
/// wire (judged on the type's `ToolArgs` constants, so aliases and wrappers count as what
/// they are).
fn bound_asserts(field: &Field, as_args: &TokenStream, private: &TokenStream) -> Vec<TokenStream> {
    let b = &field.bounds;
    let shape = quote!(#private::shape);
    let name = field.ident.to_string();
    let mut out = Vec::new();
    let mut push = |span: Span, refused: TokenStream, msg: String| {
        let msg = msg.replace('{', "{{").replace('}', "}}");
        out.push(quote_spanned!(span=>
            const _: () = if #refused { ::core::panic!(#msg) };
        ));
    };
    let number_span = b
        .min
        .as_ref()
        .map(|m| m.span)
        .or(b.positive)
        .or(b.max.as_ref().map(|m| m.span));
    if let Some(span) = number_span {
        push(
            span,
            quote!(#as_args::ITEM_SHAPE != #shape::NUMBER),
            format!(
                "`min`, `max` and `positive` bound numbers, but `{name}` is not an integer or a decimal (or a list \
                 of them); bound text with `len = 1..=40` or `pattern = \"..\"`, or change the field's type"
            ),
        );
    }
    if let Some(p) = &b.pattern {
        push(
            p.span(),
            quote!(#as_args::ITEM_SHAPE != #shape::TEXT),
            format!(
                "`pattern` bounds text, but `{name}` is not a `String` (or a list of them); bound numbers with \
                 `min`/`max`, or remove the pattern (an enum already lists its values)"
            ),
        );
    }
    if let Some(h) = &b.header {
        push(
            h.span(),
            quote!(#as_args::SHAPE == #shape::OBJECT || #as_args::SHAPE == #shape::LIST),
            format!(
                "`header` sends one value as an HTTP header, but `{name}` is a struct or a list; put \
                 `header = \"..\"` on a text, number, enum or boolean field"
            ),
        );
    }
    if let Some((_, _, span)) = &b.len {
        push(
            *span,
            quote!(#as_args::SHAPE != #shape::TEXT && #as_args::SHAPE != #shape::LIST),
            format!(
                "`len` bounds the characters of a text or the items of a list, but `{name}` is neither; bound \
                 numbers with `min`/`max`, or remove `len`"
            ),
        );
    }
    out
}

fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site)
}

fn derive_enum(model: &ArgsInput, plan: &ArgsPlan) -> TokenStream {
    let Shape::Enum(variants) = &model.shape else {
        unreachable!("derive_enum on an enum")
    };
    let ident = model.ident;
    let private = private(model.krate.as_ref());
    let values = variants.iter().filter(|v| !v.skip).map(|v| &v.wire);
    // The enum's doc comment describes every field of this type that has none of its own
    // (a field's doc comment replaces it).
    let doc = (!model.doc.is_empty()).then(|| {
        let doc = &model.doc;
        quote!(.with_description(#doc))
    });
    let draft_check = draft_check(ident, plan, &[], &private);
    quote! {
        #[automatically_derived]
        impl #private::ToolArgs for #ident {
            fn tool_schema() -> #private::Schema {
                #private::Schema::new(#private::SchemaKind::Enum(::std::vec![
                    #(::std::borrow::Cow::Borrowed(#values)),*
                ])) #doc
            }
        }
        #[automatically_derived]
        impl #private::DerivedToolArgs for #ident {
            const SHAPE: ::core::primitive::u16 = #private::shape::ENUM;
        }
        #draft_check
    }
}

/// A newtype: read, rendered and checked as its one field's type (the name it is checked
/// under is the name of the field that holds the newtype).
fn derive_newtype(model: &ArgsInput, field: &Newtype, plan: &ArgsPlan) -> TokenStream {
    let ident = model.ident;
    let private = private(model.krate.as_ref());
    let ty = field.ty;
    let member = &field.member;
    let span = ty.span();
    let private_at = respan(&private, span);
    let inner = quote_spanned!(span=> <#ty as #private_at::DerivedToolArgs>);
    let doc = (!model.doc.is_empty()).then(|| {
        let doc = &model.doc;
        quote! {
            if __erp_tool_schema.description.is_none() {
                __erp_tool_schema = __erp_tool_schema.with_description(#doc);
            }
        }
    });
    let nested = quote_spanned!(span=> let () = <#ty as #private_at::DraftGuard<__ErpM>>::CHECK;);
    let draft = draft_check(ident, plan, &[nested], &private);
    let newtype_kinds = plan.newtype_kinds;
    quote! {
        #[automatically_derived]
        impl #private::ToolArgs for #ident {
            fn tool_schema() -> #private::Schema {
                #[allow(unused_mut)]
                let mut __erp_tool_schema = #inner::schema();
                #doc
                __erp_tool_schema
            }
        }

        #[automatically_derived]
        impl #private::DerivedToolArgs for #ident {
            const HAS_CLIENT_REF: ::core::primitive::bool = #inner::HAS_CLIENT_REF;
            const DEPTH: ::core::primitive::usize = #inner::DEPTH;
            const IS_OBJECT: ::core::primitive::bool = #inner::IS_OBJECT;
            const SHAPE: ::core::primitive::u16 = #inner::SHAPE;
            const ITEM_SHAPE: ::core::primitive::u16 = #inner::ITEM_SHAPE;
            const KIND: ::core::primitive::u16 = #newtype_kinds | #inner::KIND;
            fn client_ref(&self) -> ::core::option::Option<&::core::primitive::str> {
                #inner::client_ref(&self.#member)
            }
        }

        #draft
    }
}

/// After an error: implement the traits anyway so that uses of the type do not add a
/// second wave of errors. The impls are never run (the crate does not compile).
fn derive_fallback(input: &DeriveInput, krate: Option<&syn::Path>, plan: &ArgsPlan) -> TokenStream {
    let ident = &input.ident;
    let private = private(krate);
    // The type's own draft-only fields are still reported by a draft tool that takes it,
    // so one build shows every refused field (nested types are judged by their own
    // derive).
    let draft = if plan.draft_checks.is_empty() || !input.generics.params.is_empty() {
        let mut with_m = input.generics.clone();
        with_m
            .params
            .push(syn::parse_quote!(__ErpM: #private::CheckTier));
        let (impl_m, _, _) = with_m.split_for_impl();
        let (_, ty_generics, where_clause) = input.generics.split_for_impl();
        quote!(impl #impl_m #private::DraftGuard<__ErpM> for #ident #ty_generics #where_clause {})
    } else {
        draft_check(ident, plan, &[], &private)
    };
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        impl #impl_generics #private::ToolArgs for #ident #ty_generics #where_clause {
            fn tool_schema() -> #private::Schema {
                ::core::unreachable!()
            }
        }
        impl #impl_generics #private::DerivedToolArgs for #ident #ty_generics #where_clause {
            const HAS_CLIENT_REF: ::core::primitive::bool = true;
            const IS_OBJECT: ::core::primitive::bool = true;
        }
        #draft
    }
}
