//! Code generation for `#[derive(ToolArgs)]` (`args.rs`) and `#[erp_tool]` (`tool.rs`).
//!
//! Generated code names the runtime only through its hidden, version-named module
//! (`::erp_tools_core::__private_0_1_0::..`, so a runtime of another version fails to
//! compile against it), prefixes its own items `__erp_tool_` and hides them from docs, so it
//! compiles next to any user code (see the hygiene test).

mod args;
mod derives;
mod paths;
mod tool;

pub(crate) use args::derive;
pub(crate) use derives::{tool_args, tool_output};
pub(crate) use tool::tool;

#[cfg(test)]
mod tests {
    /// Generated paths name `__private_0_1_0`: the module must follow the crate version
    /// (erp-tools-core checks the same on its side).
    #[test]
    fn private_module_follows_the_version() {
        let expected = format!(
            "__private_{}",
            env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_")
        );
        assert_eq!(expected, "__private_0_1_0", "rename the paths in expand/");
    }

    /// Under `crate = ".."`, no generated path names `erp_tools_core`.
    #[test]
    fn a_crate_override_replaces_every_path() {
        use quote::quote;
        let tool = super::tool(
            quote!(
                module = "purchasing",
                tier = "draft",
                scopes = ["purchasing:draft"],
                crate = "re::core"
            ),
            quote! {
                /// Create a draft.
                async fn create_draft(ctx: &ToolContext, tx: &mut DraftTx, args: DraftArgs) -> Result<Draft, ToolError> {
                    Ok(Draft { number: args.client_ref })
                }
            },
        );
        let args = super::derive(&syn::parse_quote! {
            #[erp(crate = "re::core")]
            struct DraftArgs {
                client_ref: String,
                #[erp(len = 1..=5)]
                lines: Vec<Line>,
                #[serde(flatten)]
                extra: Extra,
                unit_price: Decimal,
            }
        });
        let unit = super::derive(&syn::parse_quote! {
            #[erp(crate = "re::core")]
            enum Uom { Pcs }
        });
        let derives = [
            super::tool_args(
                quote!(crate = "re::core"),
                quote!(
                    struct A {
                        x: String,
                    }
                ),
            ),
            super::tool_output(
                quote!(crate = "re::core"),
                quote!(
                    struct B {
                        x: String,
                    }
                ),
            ),
        ];
        for out in [tool, args, unit].into_iter().chain(derives) {
            let text = out.to_string();
            assert!(!text.contains("erp_tools_core"), "{text}");
            assert!(!text.contains("compile_error"), "{text}");
            assert!(
                text.contains("re :: core :: __private_0_1_0")
                    || text.contains("re::core::__private_0_1_0"),
                "{text}"
            );
        }
    }
}
