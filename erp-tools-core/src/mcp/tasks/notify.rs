//! `notifications/tasks` (SEP-2663): the task as `tasks/get` would show it at that
//! moment, sent when its status or status message changes, to a client that asked for
//! them.
//!
//! A client asks by declaring the tasks extension when it opens a connection that stays
//! (stdio, an MCP session over HTTP: its `initialize` capabilities), and gets the
//! notifications of the tasks it starts or answers on that connection, from the replica
//! running them. A stateless request (2026-07-28 without a session) has no stream to
//! send them on; its client polls `tasks/get`, which is always enough. A task taken over
//! by another replica is not followed there (that replica has no connection to the
//! client): the client's next `tasks/get` shows it.

use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{ServerNotification, TaskStatusNotification, TaskStatusNotificationParams};
use rmcp::service::{Peer, RequestContext};

use super::wire;
use crate::store::Database;
use crate::store::tasks as store;

/// A task's status and status message, as last notified.
type Shown = Option<(String, Option<String>)>;

/// Where a task's status changes go: the connection that asked for them, if any.
#[derive(Clone, Default)]
pub(crate) struct Notifier {
    peer: Option<Peer<RoleServer>>,
    /// The status and message last sent, so an unchanged task is not sent again.
    last: Arc<Mutex<Shown>>,
}

impl Notifier {
    /// The notifier for a request: its connection, if the client declared the tasks
    /// extension when it opened it.
    pub(crate) fn of(context: &RequestContext<RoleServer>) -> Self {
        let asked = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks());
        Notifier {
            peer: asked.then(|| context.peer.clone()),
            last: Arc::default(),
        }
    }

    /// No connection: a task taken over, or a client that did not ask.
    pub(crate) fn none() -> Self {
        Self::default()
    }

    /// Sends task `id` as it stands, if it changed since the last notification.
    pub(crate) async fn changed(&self, db: &Database, id: &str) {
        let Some(peer) = &self.peer else {
            return;
        };
        let row = match store::get(db.pool(), id).await {
            Ok(Some(row)) => row,
            Ok(None) => return,
            Err(e) => {
                tracing::debug!(task = id, error = %e, "the task's notification was not sent");
                return;
            }
        };
        let now = (row.status.clone(), row.status_message.clone());
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.as_ref() == Some(&now) {
                return;
            }
            *last = Some(now);
        }
        let Ok(task) = wire::detailed(&row, wire::POLL_INTERVAL_MS) else {
            return;
        };
        let notification = TaskStatusNotification::new(TaskStatusNotificationParams::new(task));
        if let Err(e) = peer
            .send_notification(ServerNotification::TaskStatusNotification(notification))
            .await
        {
            tracing::debug!(task = id, error = %e, "the client's connection took no task notification");
        }
    }
}
