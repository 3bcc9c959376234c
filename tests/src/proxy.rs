//! A round-robin TCP proxy on 127.0.0.1 in front of several servers, as a load balancer
//! in front of replicas: each new connection goes to the next backend in turn; a backend
//! that refuses the connection (stopped, draining, dead) is skipped for the next one, as
//! a load balancer's health checks would take it out. Bytes are copied both ways
//! unchanged; a backend that dies mid-request resets its client's connection.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A running proxy; stops when dropped.
pub struct RoundRobin {
    addr: SocketAddr,
    counts: Arc<Vec<AtomicU64>>,
    task: JoinHandle<()>,
}

impl RoundRobin {
    /// Listens on a free loopback port and forwards to `backends` in turn.
    pub async fn start(backends: Vec<SocketAddr>) -> RoundRobin {
        assert!(!backends.is_empty(), "a proxy needs at least one backend");
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let counts: Arc<Vec<AtomicU64>> =
            Arc::new(backends.iter().map(|_| AtomicU64::new(0)).collect());
        let next = Arc::new(AtomicUsize::new(0));
        let backends = Arc::new(backends);
        let task = {
            let counts = counts.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    let (backends, counts, next) = (backends.clone(), counts.clone(), next.clone());
                    tokio::spawn(async move {
                        let _ = client.set_nodelay(true);
                        let first = next.fetch_add(1, Ordering::Relaxed);
                        for i in 0..backends.len() {
                            let n = (first + i) % backends.len();
                            if let Ok(server) = TcpStream::connect(backends[n]).await {
                                let _ = server.set_nodelay(true);
                                counts[n].fetch_add(1, Ordering::Relaxed);
                                pipe(client, server).await;
                                return;
                            }
                        }
                        // Every backend refused: the client's connection is closed.
                    });
                }
            })
        };
        RoundRobin { addr, counts, task }
    }

    /// The proxy's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections forwarded to each backend so far, in the order they were given.
    pub fn forwarded(&self) -> Vec<u64> {
        self.counts
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }
}

impl Drop for RoundRobin {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Copies both ways until either side closes.
async fn pipe(mut client: TcpStream, mut server: TcpStream) {
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}
