//! [`Identity`]: a verified caller, as every way of verifying a token returns it.

use std::time::SystemTime;

use crate::tool::context::Principal;

/// A verified caller and until when their token is valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// Who calls.
    pub principal: Principal,
    /// When the token expires (`None`: a principal from trusted configuration).
    pub expires_at: Option<SystemTime>,
}

impl From<Principal> for Identity {
    /// A principal from trusted configuration, without expiry.
    fn from(principal: Principal) -> Self {
        Identity {
            principal,
            expires_at: None,
        }
    }
}
