//! [`ReviewConfig`]: what the console checks tokens with, where it reads, where it is
//! mounted, and what runs after an approval.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;

use crate::Database;
use crate::agent::{ApprovalQueue, StoredApproval};
use crate::auth::Authenticator;

use super::document::DocumentView;

/// The scope a token needs to sign in to the console and read it.
pub const REVIEW_READ: &str = "review:read";
/// The scope a token needs to approve or reject actions.
pub const REVIEW_APPROVE: &str = "review:approve";
/// Where the console expects to be mounted unless told otherwise.
pub const DEFAULT_MOUNT_PATH: &str = "/review";

/// Called after a reviewer approved an action, with the approval as stored: typically
/// resumes the run ([`ApprovalQueue::resume`]) as the person it acts for. Its text (or
/// error) is shown to the reviewer.
pub type ApprovedHook =
    Arc<dyn Fn(StoredApproval) -> BoxFuture<'static, Result<String, String>> + Send + Sync>;

/// Settings of the review console (see [`router`](super::router)).
#[derive(Clone)]
pub struct ReviewConfig {
    pub(super) authenticator: Authenticator,
    pub(super) queue: ApprovalQueue,
    pub(super) mount_path: String,
    pub(super) secure_cookie: bool,
    pub(super) on_approved: Option<ApprovedHook>,
    pub(super) page_size: i64,
    pub(super) views: Vec<DocumentView>,
    pub(super) people: Option<PeopleFn>,
    pub(super) origins: Vec<String>,
    pub(super) titles: std::collections::HashMap<String, String>,
}

pub use crate::agent::PeopleFn;

impl std::fmt::Debug for ReviewConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReviewConfig")
            .field("authenticator", &self.authenticator)
            .field("mount_path", &self.mount_path)
            .field("secure_cookie", &self.secure_cookie)
            .field("on_approved", &self.on_approved.is_some())
            .field("page_size", &self.page_size)
            .field("views", &self.views)
            .field("origins", &self.origins)
            .finish_non_exhaustive()
    }
}

impl ReviewConfig {
    /// A console that checks tokens with `authenticator` (the MCP endpoint's, so both accept
    /// and refuse the same tokens) and
    /// reads the audit log and approvals of `queue`'s database. Mounted at
    /// [`DEFAULT_MOUNT_PATH`], `Secure` cookies, 25 runs a page, no hook after approvals.
    pub fn new(authenticator: Authenticator, queue: ApprovalQueue) -> Self {
        ReviewConfig {
            authenticator,
            queue,
            mount_path: DEFAULT_MOUNT_PATH.to_string(),
            secure_cookie: true,
            on_approved: None,
            page_size: 25,
            views: Vec::new(),
            people: None,
            origins: Vec::new(),
            titles: std::collections::HashMap::new(),
        }
    }

    /// Shows documents of `view`'s type with it: their page, their line in Drafts, and
    /// the preview of a pending action that would create one. A document type without a
    /// view is shown as its JSON.
    pub fn document_view(mut self, view: DocumentView) -> Self {
        self.views.retain(|v| v.doc_type != view.doc_type);
        self.views.push(view);
        self
    }

    /// Names people by their user id (the ERP's user directory, the same one the
    /// principal resolver reads): the console shows the name, the id on hover. Without
    /// it, people are shown by id.
    pub fn people(
        mut self,
        name_of: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.people = Some(Arc::new(name_of));
        self
    }

    /// Also accepts forms posted from `origin` (`https://admin.example.com`), besides the
    /// console's own origin. A POST whose `Origin` is another, or whose
    /// `Sec-Fetch-Site` says it came from another site, is refused before its CSRF token
    /// is read.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.origins
            .push(origin.into().trim_end_matches('/').to_string());
        self
    }

    /// Names tools by the titles of `registry`'s tools ("Create purchase order draft"),
    /// with the tool's name beside them. Without it, tools are shown by name.
    pub fn tool_titles(mut self, registry: &crate::ToolRegistry) -> Self {
        self.titles = registry
            .tools()
            .iter()
            .map(|t| (t.name().to_string(), t.def.title().to_string()))
            .filter(|(_, title)| !title.is_empty())
            .collect();
        self
    }

    /// The title of tool `name`, when [`tool_titles`](Self::tool_titles) named it.
    pub(super) fn title_of(&self, name: &str) -> Option<&str> {
        self.titles.get(name).map(String::as_str)
    }

    pub(super) fn view(&self, doc_type: &str) -> Option<&DocumentView> {
        self.views.iter().find(|v| v.doc_type == doc_type)
    }

    pub(super) fn name_of(&self, user: &str) -> Option<String> {
        self.people.as_ref().and_then(|f| f(user))
    }

    /// The path the application nests the router at (links and the cookie's `Path`),
    /// e.g. `/review` or `/admin/review`. A trailing `/` is ignored.
    pub fn mount_path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        let trimmed = path.trim_end_matches('/');
        self.mount_path = if trimmed.starts_with('/') {
            trimmed.to_string()
        } else {
            format!("/{trimmed}")
        };
        self
    }

    /// Sends the session cookie without `Secure`, so it works over plain `http://`: for a
    /// console served on the loopback address in development only.
    pub fn insecure_http(mut self) -> Self {
        self.secure_cookie = false;
        self
    }

    /// Runs `hook` after every approval (see [`ApprovedHook`]); the reviewer is shown its
    /// text.
    pub fn on_approved<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(StoredApproval) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        self.on_approved = Some(Arc::new(move |a| Box::pin(hook(a))));
        self
    }

    /// How many runs or drafts one page lists (at least 1).
    pub fn page_size(mut self, n: u32) -> Self {
        self.page_size = i64::from(n.max(1));
        self
    }

    pub(super) fn database(&self) -> &Database {
        self.queue.database()
    }
}
