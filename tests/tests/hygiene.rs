//! The generated code is hygienic: it compiles, warning-free, in a module that shadows the
//! prelude names (`Result`, `Ok`, `Err`, `Option`, `Some`, `None`, `String`, `Vec`, `Box`),
//! `usize`, and the names `core`, `std`, `serde_json` and `erp_tools_core`. (`bool` is not
//! shadowed: serde's own derive, used next to ours, refers to it unqualified.)
#![deny(warnings)]
#![allow(
    non_camel_case_types,
    non_upper_case_globals,
    clippy::upper_case_acronyms
)]

/// Output types live outside the shadowing module (their derives are not ours).
pub mod outputs {
    use erp_tools_core::prelude::*;

    #[derive(Serialize, JsonSchema)]
    pub struct Receipt {
        pub number: String,
    }
}

pub mod shadowed {
    use ::erp_tools_core::erp_tool;
    use ::erp_tools_core::prelude::{
        Decimal, Deserialize, DraftTx, NaiveDate, ReadDb, ToolArgs, ToolContext, ToolError,
    };

    use crate::outputs::Receipt;

    pub struct Result;
    pub struct Option;
    pub struct String;
    pub struct Vec;
    pub struct Box;
    pub struct Cow;
    pub struct usize;
    pub const Ok: () = ();
    pub const Err: () = ();
    pub const Some: () = ();
    pub const None: () = ();
    pub mod core {}
    pub mod std {}
    pub mod erp_tools_core {}
    pub mod serde_json {}

    #[derive(Deserialize, ToolArgs)]
    #[allow(clippy::upper_case_acronyms)]
    pub enum Uom {
        PCS,
        BOX,
    }

    #[derive(Deserialize, ToolArgs)]
    pub struct Line {
        /// Item code
        pub item_code: ::std::string::String,
        pub qty: Decimal,
        pub uom: Uom,
    }

    #[derive(Deserialize, ToolArgs)]
    pub struct Common {
        pub client_ref: ::std::string::String,
    }

    #[derive(Deserialize, ToolArgs)]
    #[serde(rename_all = "camelCase")]
    pub struct DraftArgs {
        pub vendor_code: ::std::string::String,
        pub needed_by: ::core::option::Option<NaiveDate>,
        pub lines: ::std::vec::Vec<Line>,
        #[serde(flatten)]
        pub common: Common,
    }

    /// Create a draft in a module that shadows the prelude.
    #[erp_tool(
        module = "hygiene",
        tier = "draft",
        scopes = ["hygiene:draft"],
        limit = "lines[].qty <= 10",
        example = r#"{"vendorCode": "V-1", "neededBy": null, "lines": [], "client_ref": "r"}"#
    )]
    pub async fn create_draft(
        ctx: &ToolContext,
        tx: &mut DraftTx,
        args: DraftArgs,
    ) -> ::core::result::Result<Receipt, ToolError> {
        let _ = (
            ctx.user_id(),
            tx.backend(),
            args.needed_by,
            args.lines.len(),
        );
        ::core::result::Result::Ok(Receipt {
            number: args.vendor_code + &args.common.client_ref,
        })
    }

    /// Look something up without arguments in a module that shadows the prelude.
    #[erp_tool(module = "hygiene", tier = "read", scopes = ["hygiene:read"])]
    pub async fn look_up(
        ctx: &ToolContext,
        _db: &ReadDb,
    ) -> ::core::result::Result<Receipt, ToolError> {
        ::core::result::Result::Ok(Receipt {
            number: ctx.branch_code().into(),
        })
    }

    /// Look something up with only the context in a module that shadows the prelude.
    #[erp_tool(module = "hygiene", tier = "read", scopes = ["hygiene:read"])]
    pub(crate) async fn whoami(
        ctx: &ToolContext,
        args: Line,
    ) -> ::core::result::Result<Receipt, ToolError> {
        let _ = (args.qty, args.uom);
        ::core::result::Result::Ok(Receipt {
            number: ::std::format!("{} {}", ctx.user_id(), args.item_code),
        })
    }
}

#[test]
fn shadowed_declarations_register() {
    let registry = erp_tools_core::ToolRegistry::builder()
        .module("hygiene", "Hygiene checks. Cannot do anything else.")
        .tool::<shadowed::create_draft>()
        .tool::<shadowed::look_up>()
        .tool::<shadowed::whoami>()
        .build()
        .expect("registry builds");
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        ["hygiene_create_draft", "hygiene_look_up", "hygiene_whoami"]
    );
    let schema = <shadowed::create_draft as erp_tools_core::ErpTool>::definition().input_schema();
    let keys: Vec<&str> = schema
        .properties()
        .iter()
        .map(|p| p.name.as_ref())
        .collect();
    assert_eq!(keys, ["vendorCode", "neededBy", "lines", "client_ref"]);
}
