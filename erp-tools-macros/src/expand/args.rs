//! `#[derive(ToolArgs)]`: the schema, the nesting depth, the `client_ref` flags and the
//! draft-only checks of an argument type.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::DeriveInput;
use syn::spanned::Spanned;

use crate::ast::{ArgsInput, Shape};
use crate::errors::Errors;
use crate::valid::{self, ArgsPlan};

/// `#[derive(ToolArgs)]`.
pub fn derive(input: &DeriveInput) -> TokenStream {
    let mut errors = Errors::default();
    let model = ArgsInput::from_syn(input, &mut errors);
    let plan = valid::check_args(&model, &mut errors);
    if !errors.is_empty() {
        let fallback = derive_fallback(input);
        let errors = errors.to_compile_errors();
        return quote! { #errors #fallback };
    }
    match &model.shape {
        Shape::Struct(_) => derive_struct(&model, &plan),
        Shape::Enum(_) => derive_enum(&model),
        Shape::Unsupported => derive_fallback(input),
    }
}

fn derive_struct(model: &ArgsInput, plan: &ArgsPlan) -> TokenStream {
    let Shape::Struct(fields) = &model.shape else {
        unreachable!("derive_struct on a struct")
    };
    let ident = model.ident;
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
        let as_args = quote_spanned!(span=> <#ty as ::erp_tools_core::__private_0_1_0::ToolArgs>);
        bounds.push(
            quote_spanned!(span=> #ty: ::erp_tools_core::__private_0_1_0::DraftCheck<__ErpM>),
        );
        if field.serde.flatten.is_some() {
            props.push(quote! {
                __erp_tool_props.extend(::core::iter::IntoIterator::into_iter(
                    ::std::vec::Vec::from(#as_args::tool_schema().properties()),
                ));
            });
            depth.push(quote! { #as_args::__ERP_DEPTH - 1 });
            client_ref.push(quote! { #as_args::__ERP_HAS_CLIENT_REF });
            let member = field.ident;
            client_ref_value.push(quote! {
                if let ::core::option::Option::Some(__erp_tool_ref) = #as_args::__erp_client_ref(&self.#member) {
                    return ::core::option::Option::Some(__erp_tool_ref);
                }
            });
            let msg = format!(
                "`{}` is flattened, so it must be a struct with named fields deriving ToolArgs; remove \
                 `#[serde(flatten)]` or flatten a struct",
                field.ident
            );
            object_asserts.push(quote_spanned!(span=>
                const _: () = if !#as_args::__ERP_IS_OBJECT { ::core::panic!(#msg) };
            ));
        } else {
            let wire = &field.wire;
            let doc = (!field.doc.is_empty()).then(|| {
                let doc = &field.doc;
                quote!(.with_description(#doc))
            });
            props.push(quote! {
                __erp_tool_props.push(::erp_tools_core::__private_0_1_0::Property {
                    name: ::std::borrow::Cow::Borrowed(#wire),
                    schema: #as_args::tool_schema() #doc,
                });
            });
            depth.push(quote! { #as_args::__ERP_DEPTH });
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
            fn __erp_client_ref(&self) -> ::core::option::Option<&::core::primitive::str> {
                #(#client_ref_value)*
                ::core::option::Option::None
            }
        }
    });

    let draft_check = draft_check(ident, plan, &bounds);
    quote! {
        #[automatically_derived]
        impl ::erp_tools_core::__private_0_1_0::ToolArgs for #ident {
            fn tool_schema() -> ::erp_tools_core::__private_0_1_0::Schema {
                #[allow(unused_mut)]
                let mut __erp_tool_props: ::std::vec::Vec<::erp_tools_core::__private_0_1_0::Property> = ::std::vec::Vec::new();
                #(#props)*
                ::erp_tools_core::__private_0_1_0::Schema::object(__erp_tool_props)
            }
            const __ERP_HAS_CLIENT_REF: ::core::primitive::bool = #(#client_ref)||*;
            const __ERP_DEPTH: ::core::primitive::usize = {
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
            const __ERP_IS_OBJECT: ::core::primitive::bool = true;
            #client_ref_fn
        }

        #(#object_asserts)*

        #draft_check
    }
}

/// The draft-tier field check, as trait bounds: `Self: DraftCheck<M>` holds for every `M`
/// only if each field type's does and the struct has no field a draft tool may not take.
/// Each such field gets a trait of its own whose `on_unimplemented` message is that
/// field's compile error, required of `M` in a bound spanned on the field. `#[erp_tool]`
/// asks for `DraftCheck<Self>` inside a trait's provided method (`Self` is a type
/// parameter there, which no such trait holds), so a draft tool reports one error per
/// offending field, worded by the rule; a read tool never asks.
fn draft_check(ident: &syn::Ident, plan: &ArgsPlan, bounds: &[TokenStream]) -> TokenStream {
    let mut traits = Vec::new();
    let mut rules = Vec::new();
    for (i, (at, msg, field)) in plan.draft_checks.iter().enumerate() {
        let span = first_span(at);
        let name = format_ident!("__ErpDraftField{}", i, span = span);
        let message = msg.replace('{', "{{").replace('}', "}}");
        let label = format!("these arguments contain `{ident}.{field}`");
        traits.push(quote! {
            #[diagnostic::on_unimplemented(message = #message, label = #label)]
            #[doc(hidden)]
            pub trait #name {}
        });
        rules.push(quote_spanned!(span=> __ErpM: #name));
    }
    // The impl is spanned on the type (not on the derive), and not marked
    // `#[automatically_derived]`: the compiler then reports a failed bound as "required for
    // `T`", pointing at the field, instead of suggesting to implement the trait by hand.
    let impl_block = quote_spanned! {ident.span()=>
        impl<__ErpM> ::erp_tools_core::__private_0_1_0::DraftCheck<__ErpM> for #ident
        where
            #(#bounds,)*
            #(#rules,)*
        {
        }
    };
    quote! {
        #[doc(hidden)]
        const _: () = {
            #(#traits)*
            #impl_block
        };
    }
}

fn first_span(tokens: &TokenStream) -> Span {
    tokens
        .clone()
        .into_iter()
        .next()
        .map(|t| t.span())
        .unwrap_or_else(Span::call_site)
}

fn derive_enum(model: &ArgsInput) -> TokenStream {
    let Shape::Enum(variants) = &model.shape else {
        unreachable!("derive_enum on an enum")
    };
    let ident = model.ident;
    let values = variants.iter().filter(|v| !v.skip).map(|v| &v.wire);
    quote! {
        #[automatically_derived]
        impl ::erp_tools_core::__private_0_1_0::ToolArgs for #ident {
            fn tool_schema() -> ::erp_tools_core::__private_0_1_0::Schema {
                ::erp_tools_core::__private_0_1_0::Schema::new(::erp_tools_core::__private_0_1_0::SchemaKind::Enum(::std::vec![
                    #(::std::borrow::Cow::Borrowed(#values)),*
                ]))
            }
        }
        #[doc(hidden)]
        #[automatically_derived]
        impl<__ErpM> ::erp_tools_core::__private_0_1_0::DraftCheck<__ErpM> for #ident {}
    }
}

/// After an error: implement the traits anyway so that uses of the type do not add a
/// second wave of errors. The impls are never run (the crate does not compile).
fn derive_fallback(input: &DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut with_m = input.generics.clone();
    with_m.params.push(syn::parse_quote!(__ErpM));
    let (impl_m, _, _) = with_m.split_for_impl();
    quote! {
        impl #impl_generics ::erp_tools_core::__private_0_1_0::ToolArgs for #ident #ty_generics #where_clause {
            fn tool_schema() -> ::erp_tools_core::__private_0_1_0::Schema {
                ::core::unreachable!()
            }
            const __ERP_HAS_CLIENT_REF: ::core::primitive::bool = true;
            const __ERP_IS_OBJECT: ::core::primitive::bool = true;
        }
        impl #impl_m ::erp_tools_core::__private_0_1_0::DraftCheck<__ErpM> for #ident #ty_generics #where_clause {}
    }
}
