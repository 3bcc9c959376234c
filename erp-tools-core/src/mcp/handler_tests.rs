//! Unit tests of the handler: the served tool definitions and the result shapes.

use super::*;
use crate::Attachment;
use crate::runtime::CallOutcome;
use crate::schema::{Property, Schema, SchemaKind};
use crate::tool::handler::{Handler, HandlerFuture};
use crate::tool::{ToolDef, ToolDefParts};
use crate::{DraftTx, ToolContext};

fn args() -> Schema {
    Schema::object(vec![Property::new(
        "client_ref",
        Schema::new(SchemaKind::String(None)),
    )])
}
fn output() -> Value {
    json!({"type": "object", "properties": {"number": {"type": "string"}}, "required": ["number"]})
}
fn draft<'a>(_: &'a ToolContext, _: &'a mut DraftTx, _: Value) -> HandlerFuture<'a> {
    Box::pin(async { Ok(json!({"number": "PO-1"}).into()) })
}
static DRAFT: ToolDef = crate::__private_0_1_0::tool_def(ToolDefParts {
    name: "purchasing_create_po_draft",
    fn_name: "create_po_draft",
    module: "purchasing",
    scopes: &["purchasing:draft"],
    title: "Create a purchase order draft",
    description: "Create a DRAFT purchase order.",
    example: None,
    destructive: false,
    limits: &[],
    args_type: "Args",
    input_schema: args,
    output_schema: output,
    handler: Handler::Draft(draft),
    page: None,
    task: crate::TaskSupport::Forbidden,
    rerun: true,
});

#[test]
fn draft_tools_are_annotated_and_declare_replayed() {
    let registry = ToolRegistry::builder()
        .module("purchasing", "Purchase orders. Cannot approve or post.")
        .tools([&DRAFT])
        .build()
        .unwrap();
    let tool = mcp_tool(&registry.tools()[0]);
    let v = serde_json::to_value(&tool).unwrap();
    assert_eq!(
        v["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
    assert_eq!(v["title"], json!("Create a purchase order draft"));
    assert_eq!(v["inputSchema"]["additionalProperties"], json!(false));
    assert_eq!(
        v["outputSchema"]["properties"]["replayed"]["type"],
        json!("boolean")
    );
    assert!(instructions(&registry).contains("- purchasing: Purchase orders. Cannot approve"));
    // The served definition is the exported one.
    assert_eq!(v, crate::export::mcp_tool(&registry.tools()[0]));
}

#[test]
fn errors_keep_text_and_move_structure_to_meta() {
    let r = call_tool_result(CallOutcome {
        outcome: Outcome::Denied,
        structured: json!({"error": "denied"}),
        text: "You lack purchasing:draft.".into(),
        document: None,
        error: None,
    });
    assert_eq!(r.is_error, Some(true));
    assert_eq!(r.structured_content, None);
    assert_eq!(
        r.meta.as_ref().map(|m| m.0[ERROR_META_KEY].clone()),
        Some(json!({"error": "denied"}))
    );
    assert_eq!(
        r.content[0].as_text().map(|t| t.text.as_str()),
        Some("You lack purchasing:draft.")
    );
    let ok = call_tool_result(CallOutcome {
        outcome: Outcome::Replayed,
        structured: json!({"number": "PO-1", "replayed": true}),
        text: "PO-1".into(),
        document: None,
        error: None,
    });
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(
        ok.structured_content,
        Some(json!({"number": "PO-1", "replayed": true}))
    );
}

#[test]
fn attachments_follow_the_text_of_a_successful_result_only() {
    let outcome = |outcome| CallOutcome {
        outcome,
        structured: json!({"total": "12.50"}),
        text: "Total 12.50; the CSV is attached.".into(),
        document: None,
        error: None,
    };
    let attachments = || {
        vec![
            Attachment::text("erp://r/a.csv", "text/csv", "a,b\n1,2\n"),
            Attachment::bytes("erp://r/a.pdf", "application/pdf", b"%PDF-1.7".to_vec()),
            Attachment::bytes("erp://r/p.png", "image/png", vec![0x89, 0x50]),
        ]
    };
    let ok =
        crate::mcp::result::with_attachments(call_tool_result(outcome(Outcome::Ok)), attachments());
    let content = serde_json::to_value(&ok.content).unwrap();
    assert_eq!(content[0]["text"], "Total 12.50; the CSV is attached.");
    assert_eq!(
        content[1],
        json!({"type": "resource", "resource": {"uri": "erp://r/a.csv", "mimeType": "text/csv", "text": "a,b\n1,2\n"}})
    );
    assert_eq!(content[2]["resource"]["blob"], "JVBERi0xLjc=");
    assert_eq!(content[2]["resource"]["mimeType"], "application/pdf");
    assert_eq!(
        content[3],
        json!({"type": "image", "data": "iVA=", "mimeType": "image/png"})
    );
    let failed = crate::mcp::result::with_attachments(
        call_tool_result(outcome(Outcome::ToolError)),
        attachments(),
    );
    assert_eq!(failed.content.len(), 1, "a failed call sends no document");
}

#[test]
fn an_attachment_without_scheme_or_type_or_over_the_bound_is_refused() {
    let ctx = ToolContext::new(
        std::sync::Arc::new(crate::Principal::builder("u", 1, "B").build()),
        "run",
        "call",
        "reports_x",
    );
    let no_scheme = ctx.attach(Attachment::text("report.csv", "text/csv", "x"));
    assert!(no_scheme.unwrap_err().message().contains("has no scheme"));
    let no_type = ctx.attach(Attachment::text("erp://r.csv", "csv", "x"));
    assert!(no_type.unwrap_err().message().contains("no media type"));
    let big = vec![0u8; crate::MAX_ATTACHMENT_BYTES + 1];
    let too_big = ctx.attach(Attachment::bytes(
        "erp://r.bin",
        "application/octet-stream",
        big,
    ));
    assert!(too_big.unwrap_err().message().contains("may hold"));
    assert!(
        ctx.attach(Attachment::text("erp://r.csv", "text/csv", "x"))
            .is_ok()
    );
}
