//! The OTLP exporters' HTTP client: reqwest on a Tokio runtime of its own thread, so the
//! exporters' threads (the SDK's batch span processor and periodic metric reader) can
//! send without the application's runtime, and a slow collector only ever holds them.

use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use tokio::runtime::Handle;

/// Sends OTLP requests on the exporter's own runtime.
#[derive(Clone, Debug)]
pub(super) struct OtlpHttpClient {
    client: reqwest::Client,
    runtime: Handle,
}

impl OtlpHttpClient {
    /// Starts the runtime thread (`erp-tools-otlp`); it lives as long as the process.
    pub(super) fn start(timeout: Duration) -> std::io::Result<OtlpHttpClient> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("erp-tools-otlp".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))?;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(2)))
            .build()
            .map_err(std::io::Error::other)?;
        Ok(OtlpHttpClient {
            client,
            runtime: handle,
        })
    }
}

#[async_trait::async_trait]
impl HttpClient for OtlpHttpClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let client = self.client.clone();
        let sent = self.runtime.spawn(async move {
            let request = reqwest::Request::try_from(request)?;
            let response = client.execute(request).await?;
            let status = response.status();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            let mut out = Response::new(body);
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            Ok::<_, reqwest::Error>(out)
        });
        Ok(sent.await??)
    }
}
