//! Code generation for `#[derive(ToolArgs)]` and `#[erp_tool]`.
//!
//! Generated code names the runtime only by absolute paths (`::erp_tools_core::..`,
//! `::core::..`, `::std::..`), prefixes its own items `__erp_tool_` and hides them from docs,
//! so it compiles next to any user code (see the hygiene test).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{DeriveInput, ItemFn, Type};

use crate::ast::{ArgsInput, Shape, ToolFn};
use crate::attr::parse_tool_attr;
use crate::errors::Errors;
use crate::valid::{self, ArgsPlan, Tier, ToolPlan};

/// Deepest schema (the root object counts as 1) a tool's arguments may have: the root plus
/// five levels.
const MAX_SCHEMA_DEPTH: usize = 6;

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
    let mut nested = Vec::new();
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
        let as_args = quote_spanned!(span=> <#ty as ::erp_tools_core::ToolArgs>);
        nested.push(
            quote_spanned!(span=> <#ty as ::erp_tools_core::__private::DraftCheck<__ErpM>>::CHECK),
        );
        bounds.push(quote_spanned!(span=> #ty: ::erp_tools_core::__private::DraftCheck<__ErpM>));
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
                __erp_tool_props.push(::erp_tools_core::schema::Property {
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

    let slots = draft_slots(plan, nested);
    let slot_names: Vec<_> = (0..DRAFT_SLOTS)
        .map(|i| format_ident!("SLOT_{}", i))
        .collect();
    quote! {
        #[automatically_derived]
        impl ::erp_tools_core::ToolArgs for #ident {
            fn tool_schema() -> ::erp_tools_core::schema::Schema {
                #[allow(unused_mut)]
                let mut __erp_tool_props: ::std::vec::Vec<::erp_tools_core::schema::Property> = ::std::vec::Vec::new();
                #(#props)*
                ::erp_tools_core::schema::Schema::object(__erp_tool_props)
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

        #[doc(hidden)]
        #[automatically_derived]
        impl<__ErpM> ::erp_tools_core::__private::DraftCheck<__ErpM> for #ident
        where
            #(#bounds,)*
        {
            const CHECK: () = {
                #(let () = <Self as ::erp_tools_core::__private::DraftCheck<__ErpM>>::#slot_names;)*
            };
            #slots
        }
    }
}

/// Number of `DraftCheck` slots (`erp_tools_core::args::DRAFT_CHECK_SLOTS`).
const DRAFT_SLOTS: usize = 8;

/// Spreads the draft-only checks over the slots, one check a slot so each failing one is
/// reported on its own: first the struct's own offending fields (a panic spanned on the
/// field), then each field type's nested checks. Beyond the last slot, checks share it.
fn draft_slots(plan: &ArgsPlan, nested: Vec<TokenStream>) -> TokenStream {
    let mut items: Vec<TokenStream> = plan
        .draft_checks
        .iter()
        .map(|(at, msg)| {
            let span = first_span(at);
            let msg = msg.replace('{', "{{").replace('}', "}}");
            quote_spanned!(span=> if true { ::core::panic!(#msg) })
        })
        .collect();
    items.extend(nested);
    let mut out = TokenStream::new();
    let shared = items.split_off(items.len().min(DRAFT_SLOTS - 1));
    for (i, item) in items.into_iter().enumerate() {
        let name = format_ident!("SLOT_{}", i);
        out.extend(quote!(const #name: () = #item;));
    }
    if !shared.is_empty() {
        let name = format_ident!("SLOT_{}", DRAFT_SLOTS - 1);
        out.extend(quote!(const #name: () = { #(let () = #shared;)* };));
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

fn derive_enum(model: &ArgsInput) -> TokenStream {
    let Shape::Enum(variants) = &model.shape else {
        unreachable!("derive_enum on an enum")
    };
    let ident = model.ident;
    let values = variants.iter().filter(|v| !v.skip).map(|v| &v.wire);
    quote! {
        #[automatically_derived]
        impl ::erp_tools_core::ToolArgs for #ident {
            fn tool_schema() -> ::erp_tools_core::schema::Schema {
                ::erp_tools_core::schema::Schema::new(::erp_tools_core::schema::SchemaKind::Enum(::std::vec![
                    #(::std::borrow::Cow::Borrowed(#values)),*
                ]))
            }
        }
        #[doc(hidden)]
        #[automatically_derived]
        impl<__ErpM> ::erp_tools_core::__private::DraftCheck<__ErpM> for #ident {
            const CHECK: () = ();
        }
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
        impl #impl_generics ::erp_tools_core::ToolArgs for #ident #ty_generics #where_clause {
            fn tool_schema() -> ::erp_tools_core::schema::Schema {
                ::core::unreachable!()
            }
            const __ERP_HAS_CLIENT_REF: ::core::primitive::bool = true;
            const __ERP_IS_OBJECT: ::core::primitive::bool = true;
        }
        impl #impl_m ::erp_tools_core::__private::DraftCheck<__ErpM> for #ident #ty_generics #where_clause {
            const CHECK: () = ();
        }
    }
}

/// `#[erp_tool(..)]`.
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let err = syn::Error::new(
                Span::call_site(),
                "#[erp_tool] goes on an `async fn` handler: `async fn name(ctx: &ToolContext, ..) -> Result<T, ToolError>`",
            )
            .to_compile_error();
            return quote! { #err #item };
        }
    };
    let mut errors = Errors::default();
    let tool_attr = parse_tool_attr(attr, &mut errors);
    let model = ToolFn::from_syn(&func);
    match valid::check_tool(&tool_attr, &model, &mut errors) {
        Some(plan) if errors.is_empty() => expand_tool(&func, &plan),
        _ => tool_fallback(&func, errors.to_compile_errors()),
    }
}

/// After an error: keep the user's function (silencing "never used"), and declare the
/// marker type so registrations naming it do not fail as well.
fn tool_fallback(func: &ItemFn, errors: TokenStream) -> TokenStream {
    let ident = &func.sig.ident;
    let vis = &func.vis;
    if func.sig.receiver().is_some() {
        // A method: the marker type cannot be declared inside an `impl` block.
        return quote! {
            #errors
            #[allow(dead_code)]
            #func
        };
    }
    quote! {
        #errors
        #[allow(dead_code)]
        #func
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}
        impl ::erp_tools_core::ErpTool for #ident {
            fn definition() -> &'static ::erp_tools_core::ToolDef {
                ::core::unreachable!()
            }
        }
    }
}

fn expand_tool(func: &ItemFn, plan: &ToolPlan) -> TokenStream {
    let ident = &func.sig.ident;
    let vis = &func.vis;
    // `#[cfg(..)]` on the handler applies to everything generated for it.
    let cfgs: Vec<_> = func
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    let fn_name = syn::ext::IdentExt::unraw(ident).to_string();
    let no_args: Type = syn::parse_quote!(::erp_tools_core::NoArgs);
    let args_ty = plan.args.unwrap_or(&no_args);
    let args_span = plan.args.map(|t| t.span()).unwrap_or_else(|| ident.span());
    let as_args = quote_spanned!(args_span=> <#args_ty as ::erp_tools_core::ToolArgs>);
    let out_ty = plan.output;

    let mut checks = Vec::new();
    let max_depth = MAX_SCHEMA_DEPTH;
    let depth_msg = format!(
        "the arguments of `{fn_name}` nest more than {} levels below the root object; strict schemas allow {}, \
         flatten the structure",
        max_depth - 1,
        max_depth - 1
    );
    checks.push(quote_spanned!(args_span=>
        const _: () = if #as_args::__ERP_DEPTH > #max_depth { ::core::panic!(#depth_msg) };
    ));
    let object_msg = format!(
        "the arguments of `{fn_name}` must be a struct with named fields deriving ToolArgs (the model sends a JSON \
         object); wrap the value in a struct"
    );
    checks.push(quote_spanned!(args_span=>
        const _: () = if !#as_args::__ERP_IS_OBJECT { ::core::panic!(#object_msg) };
    ));
    if plan.tier == Tier::Draft {
        let args_name = valid::type_string(args_ty);
        let msg = format!(
            "draft tools need `client_ref: String` in their arguments: the model's own id for this write, reused on \
             retry so the draft is created once; add `client_ref: String` to `{args_name}`"
        );
        checks.push(quote_spanned!(args_span=>
            const _: () = if !#as_args::__ERP_HAS_CLIENT_REF { ::core::panic!(#msg) };
        ));
        for i in 0..DRAFT_SLOTS {
            let slot = format_ident!("SLOT_{}", i, span = args_span);
            checks.push(quote_spanned!(args_span=>
                const _: () = <#args_ty as ::erp_tools_core::__private::DraftCheck<()>>::#slot;
            ));
        }
    }

    let serde_json = quote!(::erp_tools_core::__private::serde_json);
    let not_done = match plan.tier {
        Tier::Read => "Nothing was looked up.",
        Tier::Draft => "No draft was created.",
    };
    let binding = if plan.args.is_some() {
        quote!(__erp_tool_args)
    } else {
        quote!(_)
    };
    let decode = quote! {
        let #binding: #args_ty = match #serde_json::from_value(__erp_tool_args) {
            ::core::result::Result::Ok(__erp_tool_args) => __erp_tool_args,
            ::core::result::Result::Err(__erp_tool_error) => {
                return ::core::result::Result::Err(
                    ::erp_tools_core::ToolError::invalid_arguments(::std::format!(
                        "The arguments could not be read: {}.",
                        __erp_tool_error
                    ))
                    .next_step("Send arguments that match the tool's input schema.")
                    .not_done(#not_done),
                );
            }
        };
    };
    let (db_param, tier_path, handler_variant) = match plan.tier {
        Tier::Read => (
            quote!(__erp_tool_db: &'__erp_tool ::erp_tools_core::ReadDb),
            quote!(::erp_tools_core::Tier::Read),
            quote!(::erp_tools_core::Handler::Read),
        ),
        Tier::Draft => (
            quote!(__erp_tool_db: &'__erp_tool mut ::erp_tools_core::DraftTx),
            quote!(::erp_tools_core::Tier::Draft),
            quote!(::erp_tools_core::Handler::Draft),
        ),
    };
    let mut call_args = vec![quote!(__erp_tool_ctx)];
    if plan.takes_db {
        call_args.push(quote!(__erp_tool_db));
    }
    if plan.args.is_some() {
        call_args.push(quote!(__erp_tool_args));
    }
    let unused_db = (!plan.takes_db).then(|| quote!(let _ = __erp_tool_db;));
    let future_span = ident.span();
    let boxed = quote_spanned! {future_span=>
        ::std::boxed::Box::pin(async move {
            #unused_db
            #decode
            match #ident(#(#call_args),*).await {
                ::core::result::Result::Ok(__erp_tool_output) => {
                    #serde_json::to_value(&__erp_tool_output).map_err(::erp_tools_core::ToolError::internal)
                }
                ::core::result::Result::Err(__erp_tool_error) => ::core::result::Result::Err(__erp_tool_error),
            }
        })
    };

    let name = &plan.name;
    let module = &plan.module;
    let scopes = &plan.scopes;
    let title = &plan.title;
    let description = &plan.description;
    let example = match &plan.example {
        Some(e) => quote!(::core::option::Option::Some(#e)),
        None => quote!(::core::option::Option::None),
    };
    let destructive = plan.destructive;
    let limits = plan
        .limits
        .iter()
        .map(|(path, max)| quote!(::erp_tools_core::Limit { path: #path, max: #max }));
    let args_type = match plan.args {
        Some(t) => valid::type_string(t),
        None => "NoArgs".to_string(),
    };
    let out_span = out_ty.span();
    let output_schema =
        quote_spanned!(out_span=> ::erp_tools_core::schema::output_schema_for::<#out_ty>);

    quote! {
        #func

        #(#cfgs)*
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #ident {}

        #(#cfgs)*
        #[doc(hidden)]
        const _: () = {
            #(#checks)*

            fn __erp_tool_handler<'__erp_tool>(
                __erp_tool_ctx: &'__erp_tool ::erp_tools_core::ToolContext,
                #db_param,
                __erp_tool_args: #serde_json::Value,
            ) -> ::erp_tools_core::tool::HandlerFuture<'__erp_tool> {
                #boxed
            }

            static __ERP_TOOL_DEF: ::erp_tools_core::ToolDef = ::erp_tools_core::ToolDef {
                name: #name,
                fn_name: #fn_name,
                module: #module,
                tier: #tier_path,
                scopes: &[#(#scopes),*],
                title: #title,
                description: #description,
                example: #example,
                destructive: #destructive,
                limits: &[#(#limits),*],
                args_type: #args_type,
                input_schema: #as_args::tool_schema,
                output_schema: #output_schema,
                handler: #handler_variant(__erp_tool_handler),
            };

            #[automatically_derived]
            impl ::erp_tools_core::ErpTool for #ident {
                fn definition() -> &'static ::erp_tools_core::ToolDef {
                    &__ERP_TOOL_DEF
                }
            }
        };
    }
}
