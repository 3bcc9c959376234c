//! The tool surface as a reviewed artifact: the example's and the fixture's surfaces are
//! their committed locks; a changed description, field or scope fails the check with a
//! diff a reviewer reads, a wrong `fingerprint` line with what it should say; the fingerprint is served in `tools/list` and in
//! `initialize` / `server/discover`, written on the audit rows of calls and agent events,
//! shown by the review console (with a change between two runs), and exported in the
//! metrics.

mod example;

use example::{app, buying, data, inventory, printing, purchasing};

use std::sync::Arc;

use erp_tools_core::lock::{self, FINGERPRINT_META_KEY, SurfaceLock};
use erp_tools_core::registry::ToolRegistryBuilder;
use erp_tools_core::{ToolRegistry, ToolRuntime};
use erp_tools_tests::app::arguments::{payment_request, po_draft};
use erp_tools_tests::app::seed::VENDOR;
use erp_tools_tests::app::tools::{
    CREATE_PAYMENT_REQUEST_DRAFT, CREATE_PO_DRAFT, GET_VENDOR_SUMMARY,
};
use erp_tools_tests::app::{App, namespaces};
use erp_tools_tests::db::TestDb;
use erp_tools_tests::http::{HttpServer, REVISIONS};
use erp_tools_tests::ids::new_run;
use erp_tools_tests::on_both_backends;
use erp_tools_tests::principals::{BUYER, REVIEWER};
use erp_tools_tests::review::{Browser, ReviewServer};
use serde_json::json;

#[test]
fn the_examples_surface_is_its_committed_lock() {
    let registry = app::registry().expect("the example's registry");
    lock::assert_matches_lock(
        &registry,
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../examples/distributor/tools.lock"
        ),
    );
}

#[test]
fn the_fixtures_surface_is_its_committed_lock() {
    lock::assert_matches_lock(
        &erp_tools_tests::app::registry(),
        concat!(env!("CARGO_MANIFEST_DIR"), "/locks/fixture.lock"),
    );
}

/// The same tool before and after a change a reviewer must see: another doc comment
/// (an instruction to the model), a new argument and a wider scope.
mod before {
    use erp_tools_core::prelude::*;

    #[tool_args]
    pub struct NoteArgs {
        /// The order number, e.g. PO-2026-0042
        pub number: String,
        /// Your own id for this note within the run. Reuse it when retrying.
        pub client_ref: String,
    }

    #[tool_output]
    pub struct Noted {
        /// The order number
        pub number: String,
    }

    /// Add a DRAFT note to one purchase order of the caller's branch. Nothing is sent.
    #[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
    pub async fn add_note(
        _ctx: &ToolContext,
        _tx: &mut DraftTx,
        args: NoteArgs,
    ) -> Result<Noted, ToolError> {
        Ok(Noted {
            number: args.number,
        })
    }
}

mod after {
    use erp_tools_core::prelude::*;

    #[tool_args]
    pub struct NoteArgs {
        /// The order number, e.g. PO-2026-0042
        pub number: String,
        /// Your own id for this note within the run. Reuse it when retrying.
        pub client_ref: String,
        /// Who should read the note, e.g. the vendor's sales desk
        #[erp(kind = "reference", of = "contact")]
        pub audience: String,
    }

    #[tool_output]
    pub struct Noted {
        /// The order number
        pub number: String,
    }

    /// Add a DRAFT note to one purchase order of the caller's branch. Also email it to
    /// the vendor.
    #[erp_tool(
        module = "purchasing",
        tier = "draft",
        scopes = ["purchasing:draft", "purchasing:email"]
    )]
    pub async fn add_note(
        _ctx: &ToolContext,
        _tx: &mut DraftTx,
        args: NoteArgs,
    ) -> Result<Noted, ToolError> {
        let _ = args.audience;
        Ok(Noted {
            number: args.number,
        })
    }
}

fn one_tool(build: impl FnOnce(ToolRegistryBuilder) -> ToolRegistryBuilder) -> ToolRegistry {
    build(ToolRegistry::builder().module("purchasing", "Purchase-order notes. Cannot send orders."))
        .build()
        .expect("a valid registry")
}

#[test]
fn a_changed_tool_fails_the_check_saying_what_changed() {
    let reviewed = one_tool(|b| b.tool::<before::add_note>());
    let changed = one_tool(|b| b.tool::<after::add_note>());
    assert_ne!(reviewed.fingerprint(), changed.fingerprint());

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.lock");
    std::fs::write(&path, SurfaceLock::new(&reviewed).to_text()).unwrap();
    assert!(lock::check_lock(&reviewed, &path).is_ok());

    let mismatch = lock::check_lock(&changed, &path).expect_err("the surface changed");
    let said: Vec<String> = mismatch.changes.iter().map(|c| c.to_string()).collect();
    assert_eq!(
        said,
        [
            "tool purchasing_add_note: scopes: `purchasing:draft` → \
             `purchasing:draft purchasing:email`",
            "tool purchasing_add_note: description changed\n    \
             - Add a DRAFT note to one purchase order of the caller's branch. Nothing is sent.\n    \
             + Add a DRAFT note to one purchase order of the caller's branch. Also email it to \
             the vendor.",
            "tool purchasing_add_note: kinds: (none) → `audience reference of contact`",
            "tool purchasing_add_note: schema (openai, anthropic, mcp): properties.audience \
             added: {\"type\":\"string\",\"description\":\"Who should read the note, e.g. \
             the vendor's sales desk\"}",
            "tool purchasing_add_note: schema (openai, anthropic, mcp): required changed: \
             [\"number\",\"client_ref\"] → [\"number\",\"client_ref\",\"audience\"]",
        ],
        "{said:#?}"
    );
    let text = mismatch.to_string();
    assert!(text.starts_with(&format!(
        "the compiled tool surface differs from the lock {} (5 changes):",
        path.display()
    )));
    assert!(
        text.contains("`ERP_TOOLS_UPDATE_LOCK=1 cargo test` rewrites"),
        "{text}"
    );

    // A missing lock says so, with the same way out.
    let missing = lock::check_lock(&reviewed, dir.path().join("none.lock")).unwrap_err();
    assert!(missing.to_string().contains("cannot be read"), "{missing}");
}

/// The lock's `fingerprint` line is checked too: a copy whose line was changed (or
/// dropped) while its blocks are still the compiled surface fails the check, naming the
/// line, what it says and what the blocks hash to, and so does the example's
/// `lock --check` (non-zero exit).
#[test]
fn a_wrong_fingerprint_line_fails_the_check() {
    let registry = app::registry().expect("the example's registry");
    let text = SurfaceLock::new(&registry).to_text();
    let real = registry.fingerprint().to_string();
    let zeros = format!("sha256:{}", "0".repeat(64));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.lock");
    std::fs::write(&path, text.replace(&real, &zeros)).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("fingerprint "))
        .unwrap()
        + 1;

    let mismatch = lock::check_lock(&registry, &path).expect_err("the line is wrong");
    assert!(mismatch.changes.is_empty(), "{mismatch}");
    let said = mismatch.to_string();
    println!("{said}");
    assert!(
        said.contains(&format!(
            "line {line} says `{zeros}`, but the lock's blocks hash to `{real}`"
        )),
        "{said}"
    );
    assert!(said.contains("ERP_TOOLS_UPDATE_LOCK=1"), "{said}");

    let out = std::process::Command::new(erp_tools_tests::example::binary())
        .args(["lock", "--check", path.to_str().unwrap()])
        .output()
        .unwrap();
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{errors}");
    assert!(errors.contains("fingerprint line"), "{errors}");

    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("fingerprint "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&path, without).unwrap();
    let mismatch = lock::check_lock(&registry, &path).expect_err("no line");
    assert!(
        mismatch.to_string().contains("has no `fingerprint` line"),
        "{mismatch}"
    );
    std::fs::write(&path, text).unwrap();
    assert!(lock::check_lock(&registry, &path).is_ok());
}

/// `tools/list` and the server's self-description (`initialize` on 2025-11-25,
/// `server/discover` on 2026-07-28) carry the fingerprint in `_meta`, the same for every
/// caller whatever tools it may list.
async fn the_fingerprint_is_served(t: &TestDb) {
    let server = HttpServer::on(t).await;
    let fingerprint = server.runtime.registry().fingerprint().to_string();
    assert!(fingerprint.starts_with("sha256:") && fingerprint.len() == 7 + 64);
    for revision in &REVISIONS {
        let client = server
            .client(&server.token(&BUYER.principal()), revision, None)
            .await;
        let info = client.peer_info().expect("the server's description");
        let meta = info
            .meta
            .as_ref()
            .expect("_meta in the server's description");
        assert_eq!(
            meta.get(FINGERPRINT_META_KEY),
            Some(&json!(fingerprint)),
            "{revision}"
        );
        let list = client.list_tools(None).await.unwrap();
        let meta = list.meta.as_ref().expect("_meta in tools/list");
        assert_eq!(
            meta.get(FINGERPRINT_META_KEY),
            Some(&json!(fingerprint)),
            "{revision}"
        );
        client.cancel().await.unwrap();
    }
}
on_both_backends!(
    the_fingerprint_is_served_in_list_and_discover,
    crate::the_fingerprint_is_served
);

/// Every audit row of a call, and of an agent-loop event, names the surface it ran under.
async fn audit_rows_name_the_surface(t: &TestDb) {
    let app = App::new(&t.db).await;
    let fingerprint = app.runtime.registry().fingerprint().to_string();
    let run = new_run();
    app.call(&BUYER.shared(), &run, CREATE_PO_DRAFT, po_draft("S-1"))
        .await;
    // Refused before it ran (no finance:draft): one finished row.
    let denied = app
        .call(
            &BUYER.shared(),
            &run,
            CREATE_PAYMENT_REQUEST_DRAFT,
            payment_request(VENDOR, "1000", "S-2"),
        )
        .await;
    assert!(denied.is_error(), "{}", denied.text);
    let log = app.audit(&run).await;
    assert_eq!(log.len(), 2, "{log:#?}");
    for row in &log {
        assert_eq!(
            row.surface.as_deref(),
            Some(fingerprint.as_str()),
            "{row:#?}"
        );
    }
}
on_both_backends!(
    audit_rows_name_the_surface_they_ran_under,
    crate::audit_rows_name_the_surface
);

/// Two runs under two surfaces (a tool was added between them): the console shows each
/// run's surface, and the change on the later run; its page names its surface.
async fn the_console_shows_a_changed_surface(t: &TestDb) {
    let s = ReviewServer::on(t, 25).await;
    let smaller = App {
        runtime: ToolRuntime::new(
            Arc::new(
                namespaces()
                    .tool::<erp_tools_tests::app::purchasing::get_vendor_summary>()
                    .build()
                    .unwrap(),
            ),
            t.db.clone(),
        ),
    };
    let (old, new) = (
        smaller.runtime.registry().fingerprint(),
        s.app.runtime.registry().fingerprint(),
    );
    assert_ne!(old, new);
    let vendor = json!({"vendor_code": VENDOR});
    for (app, run) in [(&smaller, "run-before"), (&s.app, "run-after")] {
        let out = app
            .call(&BUYER.shared(), run, GET_VENDOR_SUMMARY, vendor.clone())
            .await;
        assert!(!out.is_error(), "{}", out.text);
    }

    let mut b = Browser::new(&s);
    b.sign_in(&s.token(&REVIEWER.principal())).await;
    let runs = b.get("/runs").await;
    let row = |run: &str| {
        runs.html
            .split(&format!("{run}</span></th>"))
            .nth(1)
            .unwrap()
            .split("</tr>")
            .next()
            .unwrap()
            .to_string()
    };
    let (before, after) = (row("run-before"), row("run-after"));
    assert!(
        after.contains(&format!(">{}</code>", new.short())),
        "{after}"
    );
    assert!(
        after.contains(&format!(
            "tool surface changed since the run before (<code>{}</code>)",
            old.short()
        )),
        "{after}"
    );
    assert!(
        before.contains(&format!(">{}</code>", old.short())),
        "{before}"
    );
    assert!(!before.contains("changed"), "{before}");
    let page = b.get("/runs/run-after").await;
    assert!(
        page.html
            .contains(&format!("title=\"{new}\">{}</code>", new.short())),
        "{}",
        page.html
    );
}
on_both_backends!(
    the_console_shows_each_runs_surface_and_a_change,
    crate::the_console_shows_a_changed_surface
);

/// `/metrics` labels the served surface with its fingerprint.
#[test]
fn the_metrics_label_the_surface() {
    let registry = erp_tools_tests::app::registry();
    let fingerprint = registry.fingerprint().to_string();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let t = TestDb::sqlite().await;
        let _runtime = ToolRuntime::new(registry, t.db.clone());
        let text = erp_tools_core::telemetry::metrics::render();
        assert!(
            text.contains(&format!(
                "erp_tools_surface_info{{fingerprint=\"{fingerprint}\"}} 1"
            )),
            "{text}"
        );
    });
}
