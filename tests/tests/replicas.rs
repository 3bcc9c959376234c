//! Running several replicas: durability chosen per backend, replica leases and the
//! recovery of a dead replica's calls.

use erp_tools_tests::db::TestDb;

/// SQLite commits with `synchronous = FULL` unless the option that names the risk relaxes
/// it, on the database file and on its audit file.
#[tokio::test]
async fn sqlite_commits_with_synchronous_full_by_default() {
    let full = TestDb::sqlite().await;
    let normal = TestDb::sqlite_with(|o| o.sqlite_synchronous_normal_risks_last_commits()).await;
    // 2 = FULL, 1 = NORMAL
    for (t, expected) in [(&full, 2i64), (&normal, 1)] {
        let main: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(t.db.pool())
            .await
            .unwrap();
        assert_eq!(main, expected, "main file");
    }
}
