//! [`WebhookSender`]: the built-in [`Delivery`]: a JSON POST to the team's webhook, signed
//! the [Standard Webhooks](https://www.standardwebhooks.com/) way.
//!
//! ```text
//! POST <url>
//! Content-Type: application/json
//! webhook-id: approval-7-waiting                  (the same on every attempt: deduplicate)
//! webhook-timestamp: 1764912345                   (this attempt, unix seconds)
//! webhook-signature: v1,<base64 HMAC-SHA256(key, "approval-7-waiting.1764912345." + body)>
//!
//! <the Notification as JSON>
//! ```
//!
//! The key is the secret's bytes: a secret reads `whsec_` and their base64. During a key
//! rotation the sender signs with both keys and sends both signatures, space-separated, so
//! a receiver holding either verifies. Any Standard Webhooks verifier checks a delivery
//! (PyPI and npm `standardwebhooks`): it recomputes the HMAC, compares it in constant time
//! and refuses a timestamp more than five minutes away. The receiver answers 2xx once it
//! has the notification (any other answer, or none within 10 s, is a failed attempt,
//! retried).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};

use super::clock::{Clock, SystemClock};
use super::notice::Notification;
use super::outbox::Delivery;

/// Standard base64 that reads a secret with or without its `=` padding.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A Standard Webhooks signing key, written `whsec_<base64 of the key bytes>`.
///
/// ```
/// # #[cfg(feature = "webhook")] {
/// use erp_tools_core::agent::WebhookSecret;
///
/// let secret: WebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".parse().unwrap();
/// assert_eq!(secret.to_whsec(), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
/// assert!("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".parse::<WebhookSecret>().is_err());
/// # }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret {
    key: Vec<u8>,
}

impl WebhookSecret {
    /// The secret of these key bytes (at least 16; Standard Webhooks suggests 24 to 64
    /// random bytes). A secret of the old `X-Erp-Tools-Signature` scheme keeps its key:
    /// `WebhookSecret::from_bytes(old_secret)`, and [`to_whsec`](Self::to_whsec) gives the
    /// text to hand the receiver.
    pub fn from_bytes(key: impl Into<Vec<u8>>) -> Result<Self, String> {
        let key = key.into();
        if key.len() < 16 {
            return Err(format!(
                "the webhook secret has {} bytes; use at least 16 random bytes (24 to 64 is \
                 what Standard Webhooks suggests)",
                key.len()
            ));
        }
        Ok(WebhookSecret { key })
    }

    /// The secret as a receiver's verifier takes it: `whsec_` and the key's base64.
    pub fn to_whsec(&self) -> String {
        format!("whsec_{}", general_purpose::STANDARD.encode(&self.key))
    }
}

impl std::str::FromStr for WebhookSecret {
    type Err = String;

    /// Reads `whsec_<base64>` (padded or not).
    fn from_str(text: &str) -> Result<Self, String> {
        let Some(encoded) = text.trim().strip_prefix("whsec_") else {
            return Err(
                "a webhook secret reads `whsec_` and the base64 of its key bytes \
                 (e.g. `whsec_$(openssl rand -base64 32)`); a raw secret of the old scheme \
                 converts with WebhookSecret::from_bytes"
                    .to_string(),
            );
        };
        let key = LENIENT.decode(encoded).map_err(|e| {
            format!("the webhook secret after `whsec_` is not standard base64: {e}")
        })?;
        Self::from_bytes(key)
    }
}

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WebhookSecret({} bytes)", self.key.len())
    }
}

/// Posts notifications to one webhook URL, signed with one secret, or two during a key
/// rotation.
#[derive(Clone)]
pub struct WebhookSender {
    url: String,
    secrets: Vec<WebhookSecret>,
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for WebhookSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSender")
            .field("url", &self.url)
            .field("secrets", &self.secrets.len())
            .finish_non_exhaustive()
    }
}

impl WebhookSender {
    /// Posts to `url`, signing with `secret` (`whsec_<base64>`, see [`WebhookSecret`]).
    pub fn new(url: impl Into<String>, secret: &str) -> Result<Self, String> {
        let url = url.into();
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(format!(
                "the webhook URL `{url}` must start with https:// (or http:// for a relay on \
                 the same host)"
            ));
        }
        let secret = secret.parse()?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))?;
        Ok(WebhookSender {
            url,
            secrets: vec![secret],
            client,
            clock: Arc::new(SystemClock::new()),
        })
    }

    /// Signs with `secret` too, for a key rotation: every delivery then carries one
    /// signature per secret, space-separated, and a receiver holding either verifies.
    /// Once every receiver has the new secret, build the sender with it alone.
    pub fn also_sign_with(mut self, secret: &str) -> Result<Self, String> {
        let secret: WebhookSecret = secret.parse()?;
        if !self.secrets.contains(&secret) {
            self.secrets.push(secret);
        }
        Ok(self)
    }

    /// The clock whose wall time stamps each attempt (`webhook-timestamp`); the system
    /// clock unless a test sets one.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

impl Delivery for WebhookSender {
    fn deliver<'a>(
        &'a self,
        notification: &'a Notification,
        body: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let t = self.clock.utc().timestamp();
            let signature = signature(&self.secrets, &notification.id, t, body);
            let answer = self
                .client
                .post(&self.url)
                .header("content-type", "application/json")
                .header("webhook-id", &notification.id)
                .header("webhook-timestamp", t.to_string())
                .header("webhook-signature", signature)
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

/// The `webhook-signature` value of message `id` with `body`, sent at unix time
/// `timestamp`: `v1,<base64 HMAC-SHA256(key, "{id}.{timestamp}.{body}")>` for each secret,
/// space-separated.
pub fn signature(secrets: &[WebhookSecret], id: &str, timestamp: i64, body: &str) -> String {
    let signed = format!("{id}.{timestamp}.{body}");
    secrets
        .iter()
        .map(|s| {
            let mac = hmac_sha256(&s.key, signed.as_bytes());
            format!("v1,{}", general_purpose::STANDARD.encode(mac))
        })
        .collect::<Vec<_>>()
        .join(" ")
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

    /// The value PyPI `standardwebhooks` 1.1.0's `Webhook.sign` gives for the same
    /// secret, id, timestamp and body.
    #[test]
    fn signature_matches_the_standard_webhooks_example() {
        let secret: WebhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".parse().unwrap();
        let s = signature(
            &[secret],
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            r#"{"test": 2432232314}"#,
        );
        assert_eq!(s, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn a_rotation_sends_one_signature_per_secret() {
        let old = WebhookSecret::from_bytes(*b"0123456789abcdef").unwrap();
        let new = WebhookSecret::from_bytes(*b"fedcba9876543210").unwrap();
        let both = signature(&[new.clone(), old.clone()], "a", 1, "{}");
        let parts: Vec<&str> = both.split(' ').collect();
        assert_eq!(
            parts,
            [
                signature(&[new], "a", 1, "{}"),
                signature(&[old], "a", 1, "{}")
            ]
        );
    }

    #[test]
    fn a_secret_must_be_whsec_base64_of_16_bytes_or_more() {
        let e = "0123456789abcdef".parse::<WebhookSecret>().unwrap_err();
        assert!(e.contains("`whsec_`"), "{e}");
        let e = "whsec_not base64!".parse::<WebhookSecret>().unwrap_err();
        assert!(e.contains("not standard base64"), "{e}");
        let e = "whsec_c2hvcnQ=".parse::<WebhookSecret>().unwrap_err();
        assert!(e.contains("5 bytes"), "{e}");
        let unpadded: WebhookSecret = "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OQ".parse().unwrap();
        assert_eq!(
            unpadded.to_whsec(),
            "whsec_dGVzdC1zZWNyZXQtMDEyMzQ1Njc4OQ=="
        );
        assert_eq!(format!("{unpadded:?}"), "WebhookSecret(22 bytes)");
    }
}
