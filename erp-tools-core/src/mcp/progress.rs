//! A handler's progress reports ([`ToolContext::progress`](crate::ToolContext::progress))
//! as MCP `notifications/progress`, for a request that carries a `progressToken`.
//!
//! Reports go through a small queue to one task per call that sends them in order; the
//! call's result is sent only after the reports made before it (so a client sees them on
//! the request's stream, before the response). A handler is never slowed by a client
//! that does not keep up: when the queue is full, a report is dropped.

use rmcp::RoleServer;
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use tokio::sync::{mpsc, oneshot};

use crate::tool::progress::{ProgressNote, ProgressSink};

/// Reports queued per call before new ones are dropped.
const QUEUE: usize = 64;

/// One call's progress forwarding.
pub(super) struct Forwarder {
    sink: ProgressSink,
    done: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarder {
    /// Forwarding for the `tools/call` `request` of `context`, if it asked for progress.
    pub(super) fn of(
        context: &RequestContext<RoleServer>,
        request: &CallToolRequestParams,
    ) -> Option<Forwarder> {
        let token = context
            .meta
            .get_progress_token()
            .or_else(|| request.meta.as_ref()?.get_progress_token())?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let (done, finished) = oneshot::channel();
        let task = tokio::spawn(forward(context.peer.clone(), token, rx, finished));
        let sink = ProgressSink::new(move |note| {
            if tx.try_send(note).is_err() {
                tracing::debug!("a progress report was dropped: the client is not keeping up");
            }
        });
        Some(Forwarder { sink, done, task })
    }

    /// The sink a call's context reports to.
    pub(super) fn sink(&self) -> ProgressSink {
        self.sink.clone()
    }

    /// Sends what the call reported and stops (a handler that kept its context beyond
    /// the call reports to no one).
    pub(super) async fn finish(self) {
        let _ = self.done.send(());
        let _ = self.task.await;
    }
}

async fn forward(
    peer: rmcp::Peer<RoleServer>,
    token: ProgressToken,
    mut rx: mpsc::Receiver<ProgressNote>,
    mut finished: oneshot::Receiver<()>,
) {
    let send = |note: ProgressNote| {
        let mut param = ProgressNotificationParam::new(token.clone(), note.done);
        if let Some(total) = note.total {
            param = param.with_total(total);
        }
        if let Some(message) = note.message {
            param = param.with_message(message);
        }
        let peer = peer.clone();
        async move { peer.notify_progress(param).await.is_ok() }
    };
    loop {
        tokio::select! {
            biased;
            note = rx.recv() => match note {
                Some(note) => {
                    if !send(note).await {
                        return;
                    }
                }
                None => return,
            },
            _ = &mut finished => {
                while let Ok(note) = rx.try_recv() {
                    if !send(note).await {
                        return;
                    }
                }
                return;
            }
        }
    }
}

/// Sends what a call reported (if it reports) before its result goes out.
pub(super) async fn finish_progress(progress: Option<Forwarder>) {
    if let Some(progress) = progress {
        progress.finish().await;
    }
}
