//! How long one request to another system may take before its outcome is unknown.

/// [`RemoteDraft::DEFAULT_TIMEOUT`](super::RemoteDraft::DEFAULT_TIMEOUT): 10 s.
pub(crate) const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The timeout [`set_request_timeout`] set, in milliseconds (0: not set).
static TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Sets how long one request to another system may take in this process (the create and
/// the lookup by marker each), before its outcome is unknown; it also sizes the keys'
/// leases. Without it: `ERP_TOOLS_REMOTE_TIMEOUT_MS`, else [`RemoteDraft::DEFAULT_TIMEOUT`](super::RemoteDraft::DEFAULT_TIMEOUT).
pub fn set_request_timeout(timeout: std::time::Duration) {
    let ms = u64::try_from(timeout.as_millis())
        .unwrap_or(u64::MAX)
        .max(1);
    TIMEOUT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

/// How long one request to another system may take: [`set_request_timeout`],
/// `ERP_TOOLS_REMOTE_TIMEOUT_MS`, or [`RemoteDraft::DEFAULT_TIMEOUT`](super::RemoteDraft::DEFAULT_TIMEOUT).
pub fn request_timeout() -> std::time::Duration {
    let set = TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed);
    if set > 0 {
        return std::time::Duration::from_millis(set);
    }
    std::env::var("ERP_TOOLS_REMOTE_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(std::time::Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// How long a create may be in flight once its key is marked `sending`: the lease of
/// that mark, one and a half request timeouts and a second of slack (16 s by default).
pub fn sending_lease(timeout: std::time::Duration) -> std::time::Duration {
    timeout + timeout / 2 + std::time::Duration::from_secs(1)
}

/// The longest a retry waits for the lease of an earlier call with the same key (a create
/// that may still be in flight, a process killed while sending) before it looks the
/// draft up by its marker: two request timeouts (20 s by default), longer than
/// [`sending_lease`]. A lease still running after that is answered "still writing".
pub fn retry_wait(timeout: std::time::Duration) -> std::time::Duration {
    timeout * 2
}

#[cfg(feature = "runtime")]
pub(crate) fn remote_timeout() -> std::time::Duration {
    request_timeout()
}
