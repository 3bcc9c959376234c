//! Who may call the distributor, as an ERP knows it: a users table mapping the identity
//! provider's subjects to users, their role and branch, and what each role may do.
//!
//! With `ERP_TOOLS_ISSUER` set, tokens come from the team's identity provider and name
//! the person only (`sub`) plus coarse scopes; [`ErpUsers`] looks the subject up here and
//! keeps only the token's scopes that the user's role grants. A warehouse clerk never
//! gets `purchasing:draft`, whatever the token says; an unknown subject is refused.

use erp_tools_core::auth::{
    AuthError, BoxFuture, PrincipalResolver, TokenClaims, effective_scopes,
};
use erp_tools_core::{Database, Principal};

/// The example's users: id, the identity provider's subject, role, branch id.
pub const USERS: &[(i64, &str, &str, i64)] = &[
    (7, "7", "buyer", 1),
    (8, "8", "warehouse", 1),
    (9, "9", "buyer", 2),
];

/// The scopes a role grants.
pub fn granted(role: &str) -> &'static [&'static str] {
    match role {
        "buyer" => &["purchasing:read", "purchasing:draft", "inventory:read"],
        "warehouse" => &["inventory:read"],
        _ => &[],
    }
}

/// Creates the users table (if missing) and seeds it on first start.
pub async fn prepare(db: &Database) -> Result<(), sqlx::Error> {
    let pool = db.pool();
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS users (
            id BIGINT PRIMARY KEY, subject TEXT NOT NULL UNIQUE, role TEXT NOT NULL,
            branch_id BIGINT NOT NULL REFERENCES branches(id))",
    )
    .execute(pool)
    .await?;
    let seeded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users")
        .fetch_one(pool)
        .await?;
    if seeded == 0 {
        for (id, subject, role, branch_id) in USERS {
            sqlx::query("INSERT INTO users (id, subject, role, branch_id) VALUES ($1, $2, $3, $4)")
                .bind(id)
                .bind(subject)
                .bind(role)
                .bind(branch_id)
                .execute(pool)
                .await?;
        }
    }
    Ok(())
}

/// Every branch, id and code: development tokens must pair them as the ERP does.
pub async fn branches(db: &Database) -> Result<Vec<(i64, String)>, sqlx::Error> {
    sqlx::query_as("SELECT id, code FROM branches ORDER BY id")
        .fetch_all(db.pool())
        .await
}

/// Resolves the identity provider's subject to the ERP user.
#[derive(Clone)]
pub struct ErpUsers {
    db: Database,
}

impl ErpUsers {
    /// Users looked up in `db`.
    pub fn new(db: Database) -> Self {
        ErpUsers { db }
    }

    async fn principal(&self, claims: &TokenClaims) -> Result<Principal, AuthError> {
        let row: Option<(i64, String, i64, String)> = sqlx::query_as(
            "SELECT u.id, u.role, b.id, b.code FROM users u JOIN branches b ON b.id = u.branch_id
             WHERE u.subject = $1",
        )
        .bind(&claims.subject)
        .fetch_optional(self.db.pool())
        .await
        .map_err(|e| AuthError::Config(format!("cannot look the user up: {e}")))?;
        let Some((user_id, role, branch_id, branch_code)) = row else {
            return Err(AuthError::UnknownSubject(claims.subject.clone()));
        };
        let scopes = effective_scopes(&claims.scopes, granted(&role).iter().copied());
        let mut builder = Principal::builder(user_id.to_string(), branch_id, branch_code)
            .role(role)
            .scopes(scopes);
        if let Some(run) = claims.str_claim("run") {
            builder = builder.agent_run_id(run);
        }
        Ok(builder.build())
    }
}

impl PrincipalResolver for ErpUsers {
    fn resolve<'a>(
        &'a self,
        claims: &'a TokenClaims,
    ) -> BoxFuture<'a, Result<Principal, AuthError>> {
        Box::pin(self.principal(claims))
    }
}
