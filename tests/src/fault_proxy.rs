//! A fault-injecting HTTP proxy for the remote-draft tests: between erp-tools and the ERP,
//! it forwards every request, and for the next create (a `POST`, but not to one of Tryton's
//! actions such as `res.user/get_preferences`, its login step) it can make the answer
//! go missing after the ERP has done the work:
//!
//! - [`Fault::DropAnswer`]: the ERP answers, the proxy closes the client's connection
//!   without a byte;
//! - [`Fault::Hold`]: the ERP answers, the proxy holds the answer for a while (past the
//!   client's timeout) before sending it;
//! - [`Fault::BadGateway`]: the ERP answers, the proxy answers `502 Bad Gateway`.
//!
//! One request per connection (`Connection: close` both ways), so it needs no HTTP
//! parser beyond the head and `Content-Length`. Listens on 127.0.0.1 only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;

/// What happens to the answer of the next create.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Forward the answer.
    None,
    /// Close the client's connection without answering.
    DropAnswer,
    /// Send the answer after this long.
    Hold(Duration),
    /// Answer 502 instead.
    BadGateway,
    /// Close the client's connection without forwarding the request (the ERP never
    /// sees it; the client cannot tell this from a lost answer).
    DropRequest,
}

/// The running proxy.
#[derive(Clone, Debug)]
pub struct FaultProxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    next: Arc<Mutex<Fault>>,
    delay: Arc<Mutex<Duration>>,
    creates: Arc<AtomicU64>,
    faulted: Arc<AtomicU64>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` (a `127.0.0.1` port).
    pub async fn start(upstream: u16) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let proxy = FaultProxy {
            addr: listener.local_addr().expect("addr"),
            next: Arc::new(Mutex::new(Fault::None)),
            delay: Arc::new(Mutex::new(Duration::ZERO)),
            creates: Arc::new(AtomicU64::new(0)),
            faulted: Arc::new(AtomicU64::new(0)),
        };
        let p = proxy.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let p = p.clone();
                tokio::spawn(async move {
                    let _ = p.serve(client, upstream).await;
                });
            }
        });
        proxy
    }

    /// Applies `fault` to the next create only.
    pub async fn arm(&self, fault: Fault) {
        *self.next.lock().await = fault;
    }

    /// Delays the answer of every create by `d` after the ERP answered (the window in
    /// which the ERP has committed and the client does not know yet).
    pub async fn delay_creates(&self, d: Duration) {
        *self.delay.lock().await = d;
    }

    /// Creates (POSTs) forwarded to the ERP so far.
    pub fn creates(&self) -> u64 {
        self.creates.load(Ordering::SeqCst)
    }

    /// Answers the proxy withheld or replaced so far.
    pub fn faulted(&self) -> u64 {
        self.faulted.load(Ordering::SeqCst)
    }

    async fn serve(&self, mut client: TcpStream, upstream: u16) -> std::io::Result<()> {
        let request = read_message(&mut client).await?;
        let is_create = is_create(&request);
        let fault = if is_create {
            std::mem::replace(&mut *self.next.lock().await, Fault::None)
        } else {
            Fault::None
        };
        if fault == Fault::DropRequest {
            self.faulted.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        if is_create {
            self.creates.fetch_add(1, Ordering::SeqCst);
        }
        let mut erp = TcpStream::connect(("127.0.0.1", upstream)).await?;
        erp.write_all(&with_close(&request)).await?;
        let mut answer = Vec::new();
        erp.read_to_end(&mut answer).await?;
        if is_create {
            let delay = *self.delay.lock().await;
            if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
        }
        match fault {
            Fault::None | Fault::DropRequest => {}
            Fault::DropAnswer => {
                self.faulted.fetch_add(1, Ordering::SeqCst);
                return Ok(());
            }
            Fault::Hold(d) => {
                self.faulted.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(d).await;
            }
            Fault::BadGateway => {
                self.faulted.fetch_add(1, Ordering::SeqCst);
                answer = b"HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\
                    content-length: 11\r\nconnection: close\r\n\r\nBad Gateway"
                    .to_vec();
            }
        }
        let _ = client.write_all(&with_close(&answer)).await;
        let _ = client.shutdown().await;
        Ok(())
    }
}

/// Reads one request (head and `Content-Length` body).
async fn read_message(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(buf);
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find(&buf, b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = stream.read(&mut chunk).await?;
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return Ok(buf);
        }
    }
}

/// `message` with its `Connection` header replaced by `Connection: close`.
fn with_close(message: &[u8]) -> Vec<u8> {
    let Some(end) = find(message, b"\r\n\r\n") else {
        return message.to_vec();
    };
    let head = String::from_utf8_lossy(&message[..end]);
    let mut out = String::new();
    for (i, line) in head.split("\r\n").enumerate() {
        if i > 0 && line.to_lowercase().starts_with("connection:") {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&message[end + 4..]);
    bytes
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether a request is a create: a `POST`, except to a Tryton action
/// (`/rest/model/<model>/<action>`, e.g. the login step `res.user/get_preferences`).
fn is_create(request: &[u8]) -> bool {
    let Some(rest) = request.strip_prefix(b"POST ") else {
        return false;
    };
    let line = String::from_utf8_lossy(&rest[..rest.len().min(2000)]);
    let path = line.split([' ', '?']).next().unwrap_or_default();
    match path.split_once("/rest/model/") {
        Some((_, model)) => !model.contains('/'),
        None => true,
    }
}
