//! `#[erp_tool]`: the user's function, its marker type, the compile-time checks on its
//! arguments type, the type-erased handler entry and the `'static` `ToolDef`.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, Type};

use super::paths::{private, respan};
use crate::ast::ToolFn;
use crate::attr::parse_tool_attr;
use crate::errors::Errors;
use crate::valid::{self, TaskKind, Tier, ToolPlan};

/// Deepest schema (the root object counts as 1) a tool's arguments may have: the root plus
/// five levels.
const MAX_SCHEMA_DEPTH: usize = 6;

/// `#[erp_tool(..)]`.
pub(crate) fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
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
        _ => tool_fallback(
            &func,
            errors.to_compile_errors(),
            &private(tool_attr.krate.as_ref()),
        ),
    }
}

/// After an error: keep the user's function (silencing "never used"), and declare the
/// marker type so registrations naming it do not fail as well.
fn tool_fallback(func: &ItemFn, errors: TokenStream, private: &TokenStream) -> TokenStream {
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
        impl #private::ErpTool for #ident {
            fn definition() -> &'static #private::ToolDef {
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
    let private = private(plan.krate.as_ref());
    let no_args: Type = syn::parse_quote!(#private::NoArgs);
    let args_ty = plan.args.unwrap_or(&no_args);
    let args_span = plan.args.map(|t| t.span()).unwrap_or_else(|| ident.span());
    let private_at = respan(&private, args_span);
    let as_args = quote_spanned!(args_span=> <#args_ty as #private_at::DerivedToolArgs>);
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
        const _: () = if #as_args::DEPTH > #max_depth { ::core::panic!(#depth_msg) };
    ));
    let object_msg = format!(
        "the arguments of `{fn_name}` must be a struct with named fields deriving ToolArgs (the model sends a JSON \
         object); wrap the value in a struct"
    );
    checks.push(quote_spanned!(args_span=>
        const _: () = if !#as_args::IS_OBJECT { ::core::panic!(#object_msg) };
    ));
    if plan.tier == Tier::Draft {
        // The message is `ClientRefIn`'s `on_unimplemented`, naming the arguments type.
        let present = quote_spanned!(args_span=>
            <#private_at::HasClientRef<{ #as_args::HAS_CLIENT_REF }> as #private_at::ClientRefIn<#args_ty>>::PRESENT
        );
        checks.push(quote! {
            const _: () = #present;
        });
        // The draft-only field rules (see the derive's `draft_check`): naming the constant
        // evaluates it, and a field a draft tool may not take panics there, spanned on the
        // field; this line is the last "erroneous constant" note, on the arguments type.
        let required = quote_spanned!(args_span=>
            <#args_ty as #private_at::DraftGuard<#private_at::DraftTier>>::CHECK
        );
        checks.push(quote! {
            const _: () = #required;
        });
    }

    let serde_json = quote!(#private::serde_json);
    let tier = match plan.tier {
        Tier::Read => quote!(#private::Tier::Read),
        Tier::Draft => quote!(#private::Tier::Draft),
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
                    #private::undecodable_arguments(__erp_tool_error, #tier),
                );
            }
        };
    };
    // The tier is not written into the definition: the runtime derives it from the
    // handler's kind, so a definition cannot claim one tier and run another.
    let (db_param, handler_variant) = match plan.tier {
        Tier::Read => (
            quote!(__erp_tool_db: &'__erp_tool #private::ReadDb),
            quote!(#private::Handler::Read),
        ),
        Tier::Draft if plan.remote => (
            quote!(__erp_tool_db: &'__erp_tool mut #private::RemoteDraft),
            quote!(#private::Handler::Remote),
        ),
        Tier::Draft => (
            quote!(__erp_tool_db: &'__erp_tool mut #private::DraftTx),
            quote!(#private::Handler::Draft),
        ),
    };
    let mut call_args = vec![quote!(__erp_tool_ctx)];
    if plan.takes_db {
        call_args.push(quote!(__erp_tool_db));
    }
    if plan.args.is_some() {
        call_args.push(quote!(__erp_tool_args));
    }
    let page_spec = plan
        .page
        .map(|(size, max)| quote!(#private::PageSpec { default_size: #size, max_size: #max }));
    let page_request = page_spec.as_ref().map(|spec| {
        call_args.push(quote!(__erp_tool_page));
        quote!(let __erp_tool_page = #private::page_request(__erp_tool_ctx, #spec);)
    });
    let page_def = match &page_spec {
        Some(spec) => quote!(::core::option::Option::Some(#spec)),
        None => quote!(::core::option::Option::None),
    };
    let unused_db = (!plan.takes_db).then(|| quote!(let _ = __erp_tool_db;));
    let future_span = ident.span();
    let boxed = if page_spec.is_some() {
        quote_spanned! {future_span=>
            ::std::boxed::Box::pin(async move {
                #unused_db
                #decode
                #page_request
                match #ident(#(#call_args),*).await {
                    ::core::result::Result::Ok(__erp_tool_output) => #private::page_output(
                        __erp_tool_output,
                        |__erp_tool_item| {
                            #[allow(unused_imports)]
                            use #private::{Rendered as _, Unrendered as _};
                            #[allow(clippy::needless_borrow)]
                            (&#private::TextOf(__erp_tool_item)).__erp_model_text()
                        },
                    ),
                    ::core::result::Result::Err(__erp_tool_error) => ::core::result::Result::Err(__erp_tool_error),
                }
            })
        }
    } else {
        quote_spanned! {future_span=>
        ::std::boxed::Box::pin(async move {
            #unused_db
            #decode
            match #ident(#(#call_args),*).await {
                ::core::result::Result::Ok(__erp_tool_output) => {
                    #[allow(unused_imports)]
                    use #private::{Rendered as _, Unrendered as _};
                    #[allow(clippy::needless_borrow)]
                    let __erp_tool_text = (&#private::TextOf(&__erp_tool_output)).__erp_model_text();
                    match #serde_json::to_value(&__erp_tool_output) {
                        ::core::result::Result::Ok(__erp_tool_value) => ::core::result::Result::Ok(
                            #private::HandlerOutput {
                                value: __erp_tool_value,
                                text: __erp_tool_text,
                                page: ::core::option::Option::None,
                            },
                        ),
                        ::core::result::Result::Err(__erp_tool_error) => ::core::result::Result::Err(
                            #private::ToolError::internal(__erp_tool_error),
                        ),
                    }
                }
                ::core::result::Result::Err(__erp_tool_error) => ::core::result::Result::Err(__erp_tool_error),
            }
        })
        }
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
        .map(|(path, max)| quote!(#private::Limit { path: #path, max: #max }));
    let args_type = match plan.args {
        Some(t) => valid::type_string(t),
        None => "NoArgs".to_string(),
    };
    let task = match plan.task {
        TaskKind::Forbidden => quote!(#private::TaskSupport::Forbidden),
        TaskKind::Optional => quote!(#private::TaskSupport::Optional),
        TaskKind::Required => quote!(#private::TaskSupport::Required),
    };
    let rerun = plan.rerun;
    let out_span = out_ty.span();
    let private_out = respan(&private, out_span);
    let output_schema = quote_spanned!(out_span=> #private_out::output_schema_for::<#out_ty>);

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
                __erp_tool_ctx: &'__erp_tool #private::ToolContext,
                #db_param,
                __erp_tool_args: #serde_json::Value,
            ) -> #private::HandlerFuture<'__erp_tool> {
                #boxed
            }

            static __ERP_TOOL_DEF: #private::ToolDef = #private::tool_def(#private::ToolDefParts {
                name: #name,
                fn_name: #fn_name,
                module: #module,
                scopes: &[#(#scopes),*],
                title: #title,
                description: #description,
                example: #example,
                destructive: #destructive,
                limits: &[#(#limits),*],
                args_type: #args_type,
                input_schema: #as_args::schema,
                output_schema: #output_schema,
                handler: #handler_variant(__erp_tool_handler),
                page: #page_def,
                task: #task,
                rerun: #rerun,
            });

            #[automatically_derived]
            impl #private::ErpTool for #ident {
                fn definition() -> &'static #private::ToolDef {
                    &__ERP_TOOL_DEF
                }
            }
        };
    }
}
