//! The review console over the fixture application, served on 127.0.0.1, and a reviewer's
//! browser without a browser: one cookie jar, the CSRF token read from each page, forms
//! posted as `application/x-www-form-urlencoded`, redirects not followed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use erp_tools_core::agent::{Agent, ApprovalQueue};
use erp_tools_core::auth::{self, TokenConfig};
use erp_tools_core::mcp::{HttpConfig, serve_listener};
use erp_tools_core::review::{self, ReviewConfig};
use erp_tools_core::{Principal, ToolRuntime};
use tokio_util::sync::CancellationToken;

use crate::agent::policy;
use crate::app::App;
use crate::db::TestDb;

/// The console of the fixture application on one database, mounted at `/review`.
pub struct ReviewServer {
    /// `http://<addr>/review`.
    pub base: String,
    /// The tokens it accepts.
    pub tokens: TokenConfig,
    /// The application.
    pub app: App,
    /// The queue the console decides on.
    pub queue: ApprovalQueue,
    /// An agent over the application that stores its pauses in [`ReviewServer::queue`].
    pub agent: Arc<Agent>,
    /// How often the console's approval hook ran.
    pub hook_calls: Arc<AtomicUsize>,
    stop: CancellationToken,
}

impl ReviewServer {
    /// The console on `t`'s database, `page_size` runs a page, its approval hook counting
    /// its calls.
    pub async fn on(t: &TestDb, page_size: u32) -> ReviewServer {
        Self::configured(t, page_size, |c| c).await
    }

    /// [`on`](Self::on), with the console's settings changed by `configure` (document
    /// views, names of people).
    pub async fn configured(
        t: &TestDb,
        page_size: u32,
        configure: impl FnOnce(ReviewConfig) -> ReviewConfig,
    ) -> ReviewServer {
        Self::serving(App::new(&t.db).await, page_size, configure).await
    }

    /// The console on `t`'s database where another application keeps its tables (an
    /// example's): the fixture application's tables are not created, so its tools are
    /// not to be called.
    pub async fn beside(t: &TestDb, page_size: u32) -> ReviewServer {
        let app = App {
            runtime: ToolRuntime::new(crate::app::registry(), t.db.clone()),
        };
        Self::serving(app, page_size, |c| c).await
    }

    async fn serving(
        app: App,
        page_size: u32,
        configure: impl FnOnce(ReviewConfig) -> ReviewConfig,
    ) -> ReviewServer {
        let db = app.runtime.database().clone();
        let queue = ApprovalQueue::new(db);
        let agent = Arc::new(
            Agent::new(app.runtime.clone(), policy())
                .expect("the test policy names registered tools")
                .approval_queue(queue.clone()),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().unwrap();
        let tokens = TokenConfig::development().for_resource(format!("http://{addr}/mcp"));
        let hook_calls = Arc::new(AtomicUsize::new(0));
        let calls = hook_calls.clone();
        let config = ReviewConfig::new(
            auth::Authenticator::shared_secret(tokens.clone()),
            queue.clone(),
        )
        .insecure_http()
        .page_size(page_size)
        .on_approved(move |approved| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok(format!("Hook saw approval {}.", approved.id)) }
        });
        let config = configure(config);
        let options = HttpConfig::new(tokens.clone()).serve_options();
        let stop = options.cancellation().clone();
        let router = axum_router(review::router(config));
        tokio::spawn(serve_listener(listener, router, options));
        ReviewServer {
            base: format!("http://{addr}/review"),
            tokens,
            app,
            queue,
            agent,
            hook_calls,
            stop,
        }
    }

    /// A token for `principal`, valid for ten minutes.
    pub fn token(&self, principal: &Principal) -> String {
        auth::mint(&self.tokens, principal, Duration::from_secs(600))
    }

    /// A runtime of the fixture application (for MCP-like calls).
    pub fn runtime(&self) -> &ToolRuntime {
        &self.app.runtime
    }
}

fn axum_router(console: axum::Router) -> axum::Router {
    axum::Router::new().nest("/review", console)
}

impl Drop for ReviewServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A page as the reviewer's browser received it.
#[derive(Debug)]
pub struct Page {
    /// The HTTP status.
    pub status: u16,
    /// Where a redirect points (`Location`), if it is one.
    pub location: Option<String>,
    /// Every `Set-Cookie` header.
    pub set_cookies: Vec<String>,
    /// The body.
    pub html: String,
    /// The body's bytes as received (a download).
    pub bytes: Vec<u8>,
}

impl Page {
    /// The value of the first hidden `csrf` field on the page.
    pub fn csrf(&self) -> Option<String> {
        let at = self.html.find("name=\"csrf\" value=\"")?;
        let rest = &self.html[at + "name=\"csrf\" value=\"".len()..];
        rest.split('"').next().map(str::to_string)
    }
}

/// A reviewer's browser: keeps the cookies the console sets, follows no redirect.
pub struct Browser {
    base: String,
    client: reqwest::Client,
    cookies: std::collections::BTreeMap<String, String>,
}

impl Browser {
    /// A browser with no cookies, on the console at `base`.
    pub fn new(server: &ReviewServer) -> Browser {
        Browser::at(&server.base)
    }

    /// A browser with no cookies, on the console mounted at `base` (e.g.
    /// `http://127.0.0.1:8765/review`).
    pub fn at(base: &str) -> Browser {
        Browser {
            base: base.to_string(),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: Default::default(),
        }
    }

    /// Points the browser at the console mounted at `base`, keeping its cookies (the same
    /// reviewer on another replica).
    pub fn go_to(&mut self, base: &str) {
        self.base = base.to_string();
    }

    fn cookie_header(&self) -> String {
        self.cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }

    async fn receive(&mut self, response: reqwest::Response) -> Page {
        let status = response.status().as_u16();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let set_cookies: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .map(str::to_string)
            .collect();
        for c in &set_cookies {
            let pair = c.split(';').next().unwrap_or_default();
            if let Some((k, v)) = pair.split_once('=') {
                if v.is_empty() || c.contains("Max-Age=0") {
                    self.cookies.remove(k);
                } else {
                    self.cookies.insert(k.to_string(), v.to_string());
                }
            }
        }
        let bytes = response.bytes().await.unwrap_or_default().to_vec();
        let html = String::from_utf8_lossy(&bytes).into_owned();
        Page {
            status,
            location,
            set_cookies,
            html,
            bytes,
        }
    }

    /// `GET <base><path>`.
    pub async fn get(&mut self, path: &str) -> Page {
        let response = self
            .client
            .get(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .send()
            .await
            .expect("the console answers");
        self.receive(response).await
    }

    /// `POST <base><path>` of a form with `fields`.
    pub async fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Page {
        self.post_with(path, fields, &[]).await
    }

    /// [`post`](Self::post) with extra request `headers` (`Origin`, `Sec-Fetch-Site`).
    pub async fn post_with(
        &mut self,
        path: &str,
        fields: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Page {
        let body = fields
            .iter()
            .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
            .collect::<Vec<_>>()
            .join("&");
        let mut request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("cookie", self.cookie_header())
            .header("content-type", "application/x-www-form-urlencoded");
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request
            .body(body)
            .send()
            .await
            .expect("the console answers");
        self.receive(response).await
    }

    /// Opens the sign-in form and submits `token` with the form's CSRF token.
    pub async fn sign_in(&mut self, token: &str) -> Page {
        let form = self.get("/sign-in").await;
        let csrf = form.csrf().expect("the sign-in form carries a CSRF token");
        self.post("/sign-in", &[("token", token), ("csrf", &csrf)])
            .await
    }
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(value: &str) -> String {
    let mut out = String::new();
    for b in value.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
