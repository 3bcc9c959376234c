//! The ERP's branches as a token's claims are checked against them: a token whose
//! `branch_code` is not the code of its `branch_id`, or that names a branch not listed,
//! is refused.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::AuthError;

/// The branches of the ERP, id and code. Cheap to clone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Branches(Arc<BTreeMap<i64, String>>);

impl Branches {
    /// The branches `(id, code)`.
    pub(crate) fn new<I, S>(branches: I) -> Self
    where
        I: IntoIterator<Item = (i64, S)>,
        S: Into<String>,
    {
        Branches(Arc::new(
            branches.into_iter().map(|(id, c)| (id, c.into())).collect(),
        ))
    }

    /// Whether `branch_code` is the code of `branch_id`.
    pub(crate) fn check(&self, branch_id: i64, branch_code: &str) -> Result<(), AuthError> {
        match self.0.get(&branch_id) {
            Some(code) if code == branch_code => Ok(()),
            Some(code) => Err(AuthError::InvalidClaims(format!(
                "`branch_code` {branch_code} is not the code of `branch_id` {branch_id} ({code})"
            ))),
            None => Err(AuthError::InvalidClaims(format!(
                "`branch_id` {branch_id} names no branch of this ERP"
            ))),
        }
    }
}
