//! The example's audit commands: `verify` and `chain-heads`, on the audit log opened
//! read-only ([`AuditReader`]): nothing is migrated, recovered or linked first, so
//! `verify` sees the log as it is on disk.

use std::path::Path;

use erp_tools_core::{AuditReader, ChainHead, DigestPublicKey};

use crate::print_out;

/// The audit log of the database at `url`, opened read-only.
async fn open_audit(url: &str) -> Result<AuditReader, String> {
    AuditReader::open(url)
        .await
        .map_err(|e| format!("cannot open the audit log of {url}: {e}"))
}

/// `verify [--heads FILE]`: every finding on stdout, an error (exit status 1) if any.
pub async fn verify(url: &str, heads: Option<&Path>) -> Result<(), String> {
    let known: Vec<ChainHead> = match heads {
        None => Vec::new(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{} is not a list of chain heads as `chain-heads` prints them: {e}",
                    path.display()
                )
            })?
        }
    };
    let reader = open_audit(url).await?;
    let report = reader.verify(&known).await.map_err(|e| e.to_string())?;
    reader.close().await;
    print_out(&format!(
        "{} chain(s), {} row(s) checked; {} row(s) from before the chain; {} open call(s), \
         {} row(s) waiting for their link",
        report.chains, report.rows, report.before_chain, report.open, report.pending
    ));
    for call in &report.open_calls {
        print_out(&format!(
            "open call: row {} since {} ({} s ago), not yet in a chain",
            call.audit_id, call.at, call.age_secs
        ));
    }
    for problem in &report.problems {
        print_out(&format!("TAMPERED: {problem}"));
    }
    if report.is_intact() {
        print_out("intact: no row altered, inserted or removed");
        Ok(())
    } else {
        Err(format!(
            "the audit log was tampered with ({} finding(s))",
            report.problems.len()
        ))
    }
}

/// `verify --digests DIR --public-key FILE`: the log checked against its signed digests;
/// every finding on stdout, an error (exit status 1) if any.
pub async fn verify_digests(
    url: &str,
    dir: &Path,
    key: &Path,
    archives: Option<&Path>,
) -> Result<(), String> {
    let key = DigestPublicKey::from_file(key).map_err(|e| e.to_string())?;
    let reader = open_audit(url).await?;
    let report = reader
        .verify_digests(dir, &key, archives)
        .await
        .map_err(|e| e.to_string())?;
    reader.close().await;
    let newest = report
        .newest
        .as_ref()
        .map_or("none".to_string(), |(file, at)| format!("{file} at {at}"));
    print_out(&format!(
        "{} digest(s) of {} replica(s), newest {newest}; {} chain(s), {} row(s) checked; {} \
         row(s) newer than the newest digest (not yet vouched for); {} open call(s)",
        report.digests,
        report.replicas,
        report.chain.chains,
        report.chain.rows,
        report.newer_rows,
        report.chain.open
    ));
    for problem in &report.chain.problems {
        print_out(&format!("TAMPERED: {problem}"));
    }
    for finding in &report.findings {
        print_out(&format!("TAMPERED: {finding}"));
    }
    if report.is_intact() {
        print_out("intact: the log matches its signed digests");
        Ok(())
    } else {
        Err(format!(
            "the audit log or its digests were tampered with ({} finding(s))",
            report.chain.problems.len() + report.findings.len()
        ))
    }
}

/// `chain-heads`: the last link of every chain, as JSON.
pub async fn chain_heads(url: &str) -> Result<(), String> {
    let reader = open_audit(url).await?;
    let heads = reader.chain_heads().await.map_err(|e| e.to_string())?;
    reader.close().await;
    let text = serde_json::to_string_pretty(&heads).map_err(|e| e.to_string())?;
    print_out(&text);
    Ok(())
}
