//! The one read every handler of the fixture starts with: a row of the caller's branch,
//! found by its code or number.

use erp_tools_core::prelude::*;
use erp_tools_core::sqlx::any::AnyRow;

/// The row `sql` selects for `key` (its `$1`) in the caller's branch (its `$2`), if there
/// is one.
pub(super) async fn in_branch<'c, T, E>(
    ctx: &ToolContext,
    executor: E,
    sql: &'static str,
    key: &str,
) -> Result<Option<T>, ToolError>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    E: sqlx::Executor<'c, Database = sqlx::Any>,
{
    let row = sqlx::query_as(sql)
        .bind(key.to_string())
        .bind(ctx.branch_id())
        .fetch_optional(executor)
        .await?;
    Ok(row)
}
