//! The PostgreSQL schemas of the store's tests: a new schema per test on the server
//! `ERP_TOOLS_PG_URL` names, dropped at the end.

use sqlx::{AnyConnection, Connection};

/// A database opened on a schema of its own, with the schema's URL (for more connections
/// to it) and a connection outside it (`admin`).
pub(crate) struct PgSchema {
    pub db: crate::Database,
    pub url: String,
    pub admin: AnyConnection,
    schema: String,
}

impl PgSchema {
    /// A new schema `<prefix>_<unique>` and the database opened on it; `None`, after
    /// printing `skipped: ERP_TOOLS_PG_URL not set`, when the variable is not set.
    pub(crate) async fn new(prefix: &str) -> Option<PgSchema> {
        let Ok(base) = std::env::var("ERP_TOOLS_PG_URL") else {
            println!("skipped: ERP_TOOLS_PG_URL not set");
            return None;
        };
        sqlx::any::install_default_drivers();
        let schema = format!(
            "{prefix}_{}",
            crate::runtime::run_id::fresh("s").replace('-', "_")
        );
        let mut admin = AnyConnection::connect(&base).await.expect("connect");
        let create = format!("CREATE SCHEMA {schema}");
        sqlx::raw_sql(sqlx::AssertSqlSafe(create))
            .execute(&mut admin)
            .await
            .expect("create the schema");
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = format!("{base}{sep}options=-c%20search_path%3D{schema}");
        let db = crate::Database::connect(crate::DatabaseOptions::new(url.clone()))
            .await
            .expect("open postgres");
        Some(PgSchema {
            db,
            url,
            admin,
            schema,
        })
    }

    /// Closes the database and drops the schema.
    pub(crate) async fn drop_schema(mut self) {
        self.db.close().await;
        let drop = format!("DROP SCHEMA {} CASCADE", self.schema);
        sqlx::raw_sql(sqlx::AssertSqlSafe(drop))
            .execute(&mut self.admin)
            .await
            .expect("drop the schema");
    }
}
