//! PostgreSQL: the audit log's monthly partitions (`erp_audit_log_pYYYY_MM`), and the
//! month arithmetic the archive shares.

use chrono::{Datelike, NaiveDate};
use sqlx::AnyPool;

/// `erp_audit_log_pYYYY_MM`: the partition of `month` (`YYYY-MM`).
pub(crate) fn partition_name(month: NaiveDate) -> String {
    format!("erp_audit_log_p{}", month.format("%Y_%m"))
}

pub(crate) fn month_text(month: NaiveDate) -> String {
    month.format("%Y-%m").to_string()
}

pub(crate) fn next_month(month: NaiveDate) -> NaiveDate {
    month
        .checked_add_months(chrono::Months::new(1))
        .expect("a month within chrono's range")
}

pub(crate) fn first_of_month(day: NaiveDate) -> NaiveDate {
    day.with_day(1).expect("every month has a first day")
}

/// Parses `YYYY-MM`.
pub(crate) fn parse_month(text: &str) -> Option<NaiveDate> {
    if text.len() != 7 {
        return None;
    }
    NaiveDate::parse_from_str(&format!("{text}-01"), "%Y-%m-%d").ok()
}

/// PostgreSQL: creates the partitions of this month and the next unless they exist.
pub(crate) async fn ensure_partitions(pool: &AnyPool) -> Result<(), sqlx::Error> {
    let this = first_of_month(chrono::Utc::now().date_naive());
    create_partition(pool, this).await?;
    create_partition(pool, next_month(this)).await
}

/// PostgreSQL: creates the partition of `month` unless it exists.
pub(crate) async fn create_partition(pool: &AnyPool, month: NaiveDate) -> Result<(), sqlx::Error> {
    let name = partition_name(month);
    let exists = || async {
        let found: Option<String> = sqlx::query_scalar("SELECT to_regclass($1)::text")
            .bind(name.clone())
            .fetch_one(pool)
            .await?;
        Ok::<bool, sqlx::Error>(found.is_some())
    };
    if exists().await? {
        return Ok(());
    }
    let sql = format!(
        "CREATE TABLE IF NOT EXISTS {name} PARTITION OF erp_audit_log \
         FOR VALUES FROM ('{}') TO ('{}')",
        month_text(month),
        month_text(next_month(month))
    );
    match sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(pool).await {
        Ok(_) => Ok(()),
        // Another replica may have created it at the same time.
        Err(_) if exists().await? => Ok(()),
        Err(e) => Err(e),
    }
}
