//! [`RemoteDraft`], the handle a draft tool gets when its document lives in another
//! system, and [`RemoteWrite`], what the application implements for that system.

use std::time::Duration;

use futures::future::BoxFuture;

use super::error::{RemoteError, unknown_outcome};
use crate::tool::error::ToolError;
use crate::tool::handles::DocumentRef;

/// What the application implements to write one document into another system: look it up
/// by its marker, or create it carrying the marker. Both run as the calling person in that
/// system (their own credentials), inside their branch.
///
/// Two methods, so any API with a create and a search fits: Tryton's REST API
/// (`POST /rest/model/purchase.purchase`, `GET ...?d=[["reference","=",marker]]`), Odoo's
/// JSON-2 API (`/json/2/purchase.order/create`, `/search_read`), ERPNext's REST
/// (`POST /api/resource/Purchase Order`, `GET ...?filters=`).
pub trait RemoteWrite: Send + Sync {
    /// The system's name, for model-facing text ("Tryton").
    fn system(&self) -> &str;

    /// The document that carries `marker`, if the system has one the caller may see.
    /// Must not create anything.
    fn find_by_marker<'a>(
        &'a self,
        marker: &'a str,
    ) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>>;

    /// Creates the document, with `marker` in the field the tool named for it.
    fn create<'a>(&'a self, marker: &'a str) -> BoxFuture<'a, Result<DocumentRef, RemoteError>>;
}

/// How the call's key stood when its handler started.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) enum Start {
    /// A new key: nothing was ever sent for it.
    Fresh,
    /// A key an earlier call claimed and did not settle: its create may have reached the
    /// system, so the document is looked up by its marker before anything is created.
    MaybeSent,
    /// The document is known (found by the recovery pass); nothing is sent.
    Known(DocumentRef),
}

/// What the handle did with the other system, for the key and the audit row.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "runtime"), allow(dead_code))]
pub(crate) enum Sent {
    /// Nothing was sent (the handler refused, or never wrote).
    Nothing,
    /// About to send: the key row says so, its lease covers the request.
    Sending,
    /// The document was created by this call.
    Created(DocumentRef),
    /// The document was found by its marker (an earlier attempt had created it).
    Found(DocumentRef),
    /// The system certainly created nothing.
    Refused(RemoteError),
    /// Sent; no definite answer: the error, and which request it was (`draft`, or the
    /// lookup of an earlier attempt).
    Unknown(RemoteError, &'static str),
}

/// Called just before the create is sent, so the key records that a request may be in
/// flight (and how long its lease lasts) before it is.
pub(crate) type BeforeSend = Box<dyn FnMut() -> BoxFuture<'static, Result<(), String>> + Send>;

/// The handle of a draft whose document lives in another system (an ERP reached over its
/// API). A draft tool takes it instead of [`DraftTx`](crate::DraftTx):
///
/// ```no_run
/// use erp_tools_core::prelude::*;
/// use erp_tools_core::remote::{RemoteDraft, RemoteWrite};
///
/// # #[tool_args] struct Args { client_ref: String }
/// # #[tool_output] struct Out { number: String }
/// # use erp_tools_core::remote::RemoteError;
/// # use futures::future::BoxFuture;
/// # struct Purchases; // the ERP client: finds by marker, creates with the marker
/// # impl RemoteWrite for Purchases {
/// #     fn system(&self) -> &str { "ERP" }
/// #     fn find_by_marker<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<Option<DocumentRef>, RemoteError>> {
/// #         Box::pin(async { Ok(None) })
/// #     }
/// #     fn create<'a>(&'a self, marker: &'a str) -> BoxFuture<'a, Result<DocumentRef, RemoteError>> {
/// #         Box::pin(async move { Ok(DocumentRef::new("purchase", 1, marker)) })
/// #     }
/// # }
/// # fn purchases(_: &ToolContext, _: &Args) -> Box<dyn RemoteWrite> { Box::new(Purchases) }
/// /// Drafts a purchase in the ERP.
/// #[erp_tool(module = "purchasing", tier = "draft", scopes = ["purchasing:draft"])]
/// async fn draft_purchase(ctx: &ToolContext, erp: &mut RemoteDraft, args: Args) -> Result<Out, ToolError> {
///     let writer = purchases(ctx, &args); // reads, prices, the body to send
///     let doc = erp.write(writer.as_ref()).await?;
///     Ok(Out { number: doc.number })
/// }
/// ```
///
/// # The protocol (SPEC R11)
///
/// 1. Before the handler runs, the key `agent_run_id:client_ref` is claimed as *pending* in
///    erp-tools' store with the hash of the normalised arguments and a lease; nothing has
///    been sent yet. A settled key replays its stored result without running the handler;
///    other arguments or another caller are refused, as for local drafts.
/// 2. [`write`](Self::write) sends the create with a [`marker`](Self::marker) derived from
///    the key, which the document carries in a field the tool names (Tryton:
///    `purchase.purchase.reference`). Just before sending, the key is marked *sending*.
/// 3. On an answer with the document, the key is *settled* with the document's id and
///    number and the handler's output; a retry replays it. The document is a
///    [`DocumentRef`] like a local draft's, so the audit log and the review console list it.
/// 4. A retry of a key that is still pending (an earlier call timed out, lost its answer,
///    or its process was killed) first looks the document up by its marker: found → settle
///    and replay; not found → create. The lookup waits until the earlier call's lease has
///    run out (a create in flight: [`sending_lease`](super::sending_lease)), so a request
///    still in flight is not raced, at most [`retry_wait`](super::retry_wait) (the bound
///    the model is told); two concurrent retries never both create (the lease is taken by
///    one conditional `UPDATE`; the other waits for it too and replays the settled key, or
///    is told the call is in progress).
/// 5. No definite answer after sending (timed out, answered without a result such as a
///    502, connection lost): the model is told which it was, that nothing is confirmed and
///    to retry with the same `client_ref`; the key stays pending. A refusal (validation,
///    access) or a request that never left frees the key: nothing was created.
/// 6. At start-up, [`reconcile`](crate::remote::reconcile) does step 4 for the pending keys
///    of interrupted calls (bounded, logged, audited), or
///    [`reconcile_in_background`](crate::remote::reconcile_in_background) beside the
///    serving server.
///
/// Each step of the create and the lookup is bounded by [`timeout`](Self::timeout)
/// (default [`RemoteDraft::DEFAULT_TIMEOUT`], set with `ERP_TOOLS_REMOTE_TIMEOUT_MS`).
pub struct RemoteDraft {
    pub(crate) marker: String,
    pub(crate) start: Start,
    pub(crate) sent: Sent,
    pub(crate) timeout: Duration,
    pub(crate) agent_run_id: String,
    pub(crate) user_id: String,
    pub(crate) before_send: Option<BeforeSend>,
    pub(crate) system: Option<String>,
}

impl std::fmt::Debug for RemoteDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteDraft")
            .field("marker", &self.marker)
            .field("start", &self.start)
            .field("sent", &self.sent)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl RemoteDraft {
    /// How long one request to the other system may take before its outcome is unknown.
    pub const DEFAULT_TIMEOUT: Duration = super::timeout::DEFAULT_TIMEOUT;

    /// The marker the document must carry (derived from the idempotency key): write it to
    /// the field the tool names, and search that field for it in
    /// [`RemoteWrite::find_by_marker`].
    pub fn marker(&self) -> &str {
        &self.marker
    }
    /// The agent run drafting the document.
    pub fn agent_run_id(&self) -> &str {
        &self.agent_run_id
    }
    /// The person on whose behalf it is drafted.
    pub fn user_id(&self) -> &str {
        &self.user_id
    }
    /// How long one request may take before its outcome is unknown.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
    /// The document written (created or found), once [`write`](Self::write) returned it.
    pub fn document(&self) -> Option<&DocumentRef> {
        match &self.sent {
            Sent::Created(d) | Sent::Found(d) => Some(d),
            _ => match &self.start {
                Start::Known(d) => Some(d),
                _ => None,
            },
        }
    }

    /// Writes the document through `writer`, exactly once per key: returns the document
    /// already known for this key, or the one found by its marker, or creates it.
    ///
    /// On error the model-facing text says whether anything may exist: a refusal or an
    /// unreachable system says no draft was created; a request without an answer says
    /// nothing is confirmed and to retry with the same `client_ref`. Return the error as
    /// it is (`?`); the framework keeps the key pending when the outcome is unknown, and
    /// tells the model so even if the handler words its error otherwise.
    pub async fn write<W: RemoteWrite + ?Sized>(
        &mut self,
        writer: &W,
    ) -> Result<DocumentRef, ToolError> {
        self.system = Some(writer.system().to_string());
        if let Some(doc) = self.document() {
            return Ok(doc.clone());
        }
        let system = writer.system().to_string();
        if self.start == Start::MaybeSent {
            match bounded(self.timeout, writer.find_by_marker(&self.marker)).await {
                Ok(Some(doc)) => {
                    self.sent = Sent::Found(doc.clone());
                    return Ok(doc);
                }
                Ok(None) => {}
                Err(e) => {
                    // The earlier attempt's outcome is still unknown, whatever the lookup's
                    // failure was (even a refusal: the create may have gone through).
                    let err = unknown_outcome(&system, Some(&e), LOOKUP);
                    self.sent = Sent::Unknown(e, LOOKUP);
                    return Err(err);
                }
            }
        }
        if let Some(before) = self.before_send.as_mut()
            && let Err(e) = before().await
        {
            return Err(
                ToolError::internal(format!("could not mark the key as sending: {e}"))
                    .not_done(format!("No draft was created in {system}.")),
            );
        }
        self.sent = Sent::Sending;
        match bounded(self.timeout, writer.create(&self.marker)).await {
            Ok(doc) => {
                self.sent = Sent::Created(doc.clone());
                Ok(doc)
            }
            Err(e) => {
                let err = e.to_tool_error(&system);
                // A refusal also settles an earlier attempt of this key: the lookup did
                // not find its document, and the system refused this one.
                self.sent = if e.nothing_created() {
                    Sent::Refused(e)
                } else {
                    Sent::Unknown(e, "draft")
                };
                Err(err)
            }
        }
    }
}

/// What the model is told a failed lookup by marker was.
pub(crate) const LOOKUP: &str = "lookup of the earlier attempt by its marker";

/// `future` bounded by `timeout`: past it, the outcome is unknown.
async fn bounded<T>(
    timeout: Duration,
    future: BoxFuture<'_, Result<T, RemoteError>>,
) -> Result<T, RemoteError> {
    #[cfg(feature = "runtime")]
    {
        match tokio::time::timeout(timeout, future).await {
            Ok(r) => r,
            Err(_) => Err(RemoteError::timed_out(timeout)),
        }
    }
    #[cfg(not(feature = "runtime"))]
    {
        let _ = timeout;
        future.await
    }
}
