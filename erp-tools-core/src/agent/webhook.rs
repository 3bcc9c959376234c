//! [`WebhookSender`]: the built-in [`Delivery`]: a signed JSON POST to the team's webhook.
//!
//! ```text
//! POST <url>
//! Content-Type: application/json
//! X-Erp-Tools-Delivery: approval-7-waiting          (the id to deduplicate on)
//! X-Erp-Tools-Event: approval.waiting
//! X-Erp-Tools-Signature: t=1764912345,v1=<hex HMAC-SHA256(secret, "1764912345." + body)>
//!
//! <the Notification as JSON>
//! ```
//!
//! A receiver recomputes the HMAC over `t`, a dot and the raw body with the shared
//! secret, compares it in constant time, rejects a `t` older than a few minutes, and
//! answers 2xx once it has the notification (any other answer, or none within 10 s, is a
//! failed attempt, retried).

use std::time::Duration;

use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::notice::Notification;
use super::outbox::Delivery;

/// Posts notifications to one webhook URL, signed with a shared secret.
#[derive(Clone)]
pub struct WebhookSender {
    url: String,
    secret: Vec<u8>,
    client: reqwest::Client,
}

impl std::fmt::Debug for WebhookSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSender")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl WebhookSender {
    /// Posts to `url`, signing with `secret` (at least 16 bytes; a longer random one is
    /// better).
    pub fn new(url: impl Into<String>, secret: impl Into<Vec<u8>>) -> Result<Self, String> {
        let (url, secret) = (url.into(), secret.into());
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(format!(
                "the webhook URL `{url}` must start with https:// (or http:// for a relay on \
                 the same host)"
            ));
        }
        if secret.len() < 16 {
            return Err(format!(
                "the webhook secret has {} bytes; use at least 16 random bytes",
                secret.len()
            ));
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))?;
        Ok(WebhookSender {
            url,
            secret,
            client,
        })
    }
}

impl Delivery for WebhookSender {
    fn deliver<'a>(
        &'a self,
        notification: &'a Notification,
        body: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let t = chrono::Utc::now().timestamp();
            let signature = signature(&self.secret, t, body);
            let answer = self
                .client
                .post(&self.url)
                .header("content-type", "application/json")
                .header("x-erp-tools-delivery", &notification.id)
                .header("x-erp-tools-event", &notification.event)
                .header("x-erp-tools-signature", signature)
                .body(body.to_string())
                .send()
                .await
                .map_err(|e| format!("the webhook could not be reached: {e}"))?;
            let status = answer.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(format!("the webhook answered {status}"))
            }
        })
    }
}

/// The `X-Erp-Tools-Signature` value of `body` sent at unix time `t`.
pub fn signature(secret: &[u8], t: i64, body: &str) -> String {
    let mac = hmac_sha256(secret, format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac))
}

/// HMAC-SHA256 (RFC 2104).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let (mut inner, mut outer) = ([0x36u8; 64], [0x5cu8; 64]);
    for i in 0..64 {
        inner[i] ^= block[i];
        outer[i] ^= block[i];
    }
    let inner = Sha256::new()
        .chain_update(inner)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(outer)
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231, test cases 1 and 6 (a key longer than the block).
    #[test]
    fn hmac_matches_rfc_4231() {
        let one = hmac_sha256(&[0x0b; 20], b"Hi There");
        assert_eq!(
            hex::encode(one),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        let six = hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First",
        );
        assert_eq!(
            hex::encode(six),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn signature_names_its_time() {
        let s = signature(b"0123456789abcdef", 1_700_000_000, "{}");
        assert!(s.starts_with("t=1700000000,v1="), "{s}");
        assert_eq!(s.len(), "t=1700000000,v1=".len() + 64);
    }
}
