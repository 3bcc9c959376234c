//! The REST ERP fixture (`erp_tools_tests::rest_erp`) as a process, for the guide's
//! remote-draft server check (`scripts/fresh_crate_check.sh`): listens on 127.0.0.1 (a free
//! port, or `--port N`), prints its base URL, serves until killed.

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let port = match (args.next().as_deref(), args.next()) {
        (Some("--port"), Some(p)) => p.parse().expect("--port N"),
        _ => 0,
    };
    let erp = erp_tools_tests::rest_erp::RestErp::start(port).await;
    println!("{}", erp.url());
    std::future::pending::<()>().await;
}
