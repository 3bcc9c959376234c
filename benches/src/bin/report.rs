//! Collects the results of one benchmark run into a markdown summary: the criterion
//! samples of benchmarks 1-3 (from `<target>/criterion`) and the JSON written by the
//! binaries of benchmarks 4-6 (from the directory given as the first argument, default
//! `<target>/bench-results`). Prints the summary and writes it to `summary.md` in that
//! directory.
//!
//! Criterion figures are per call: the median over samples of (sample time / iterations),
//! with the interquartile range as the spread.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use erp_tools_benches::stats::Summary;
use erp_tools_benches::{DRAFT_VARIANTS, READ_VARIANTS};
use serde_json::Value;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"))
}

/// Every criterion benchmark's per-iteration times in µs, by full id.
fn criterion_results(dir: &Path) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n == "new") {
                    if let Some((id, s)) = read_sample(&path) {
                        out.insert(id, s);
                    }
                } else {
                    stack.push(path);
                }
            }
        }
    }
    out
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn read_sample(dir: &Path) -> Option<(String, Summary)> {
    let bench = read_json(&dir.join("benchmark.json"))?;
    let sample = read_json(&dir.join("sample.json"))?;
    let id = bench["full_id"].as_str()?.to_string();
    let iters = sample["iters"].as_array()?;
    let times = sample["times"].as_array()?;
    let per_iter: Vec<f64> = iters
        .iter()
        .zip(times)
        .filter_map(|(n, t)| Some(t.as_f64()? / n.as_f64()? / 1000.0))
        .collect();
    Some((id, Summary::of(&per_iter)?))
}

/// `median [p25–p75]`, with fewer decimals the larger the median.
fn median_iqr(median: f64, p25: f64, p75: f64) -> String {
    let d = if median < 10.0 {
        2
    } else if median < 1000.0 {
        1
    } else {
        0
    };
    format!("{median:.d$} [{p25:.d$}–{p75:.d$}]")
}

fn fmt_us(s: &Summary) -> String {
    median_iqr(s.median, s.p25, s.p75)
}

fn spread(v: &Value, digits: usize) -> String {
    match (v["median"].as_f64(), v["min"].as_f64(), v["max"].as_f64()) {
        (Some(m), Some(lo), Some(hi)) => format!("{m:.digits$} ({lo:.digits$}–{hi:.digits$})"),
        _ => "n/a".into(),
    }
}

/// A table of every criterion result whose id starts with `prefix`: the rest of the id
/// in the column `column`, and the time.
fn criterion_table(md: &mut String, crit: &BTreeMap<String, Summary>, prefix: &str, column: &str) {
    writeln!(md, "| {column} | time |\n|---|---|").unwrap();
    for (id, s) in crit.range(prefix.to_string()..) {
        if let Some(name) = id.strip_prefix(prefix) {
            writeln!(md, "| {name} | {} |", fmt_us(s)).unwrap();
        }
    }
}

/// A table of one row: its `columns` (separated by ` | `), then `cells`.
fn one_row_table(md: &mut String, columns: &str, cells: &[String]) {
    let rule = "---|".repeat(cells.len());
    writeln!(md, "| {columns} |\n|{rule}\n| {} |", cells.join(" | ")).unwrap();
}

fn verdict(met: bool) -> &'static str {
    if met { "met" } else { "**missed**" }
}

/// The section `title` of the summary from `results/<file>`: its body written by `body`,
/// or why there is none (the benchmark was skipped, or not run).
fn section(
    md: &mut String,
    title: &str,
    results: &Path,
    file: &str,
    body: impl FnOnce(&mut String, &Value),
) {
    writeln!(md, "\n## {title}\n").unwrap();
    match read_json(&results.join(file)) {
        Some(v) if v.get("skipped").is_none() => body(md, &v),
        Some(_) => writeln!(md, "skipped: ERP_TOOLS_PG_URL not set").unwrap(),
        None => writeln!(md, "not run").unwrap(),
    }
}

fn main() {
    let target = target_dir();
    let crit = criterion_results(&target.join("criterion"));
    let results = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("bench-results"));
    let get = |id: &str| crit.get(id);
    let mut md = String::new();
    let mut targets: Vec<(String, String, String)> = Vec::new();

    // 1. Read calls.
    writeln!(
        md,
        "## 1. Read-tool call overhead (µs per call, median [IQR])\n"
    )
    .unwrap();
    writeln!(
        md,
        "| body | (a) direct | (b) pipeline | (c) MCP erp-tools | (d) MCP rmcp | (b)−(a) | (b)/(a) | (c)/(d) |\n|---|---|---|---|---|---|---|---|"
    )
    .unwrap();
    for body in ["memory", "sqlite"] {
        let ids = READ_VARIANTS.map(|f| get(&format!("read_call/{body}/{f}")));
        if let [Some(a), Some(b), Some(c), Some(d)] = ids {
            writeln!(
                md,
                "| {body} | {} | {} | {} | {} | {:.1} | {:.2} | {:.2} |",
                fmt_us(a),
                fmt_us(b),
                fmt_us(c),
                fmt_us(d),
                b.median - a.median,
                b.median / a.median,
                c.median / d.median
            )
            .unwrap();
            targets.push((
                format!("(b)−(a) < 2 µs ({body} body)"),
                format!("{:.1} µs", b.median - a.median),
                verdict(b.median - a.median < 2.0).into(),
            ));
            targets.push((
                format!("(c)/(d) ≤ 1.10 ({body} body)"),
                format!("{:.2}", c.median / d.median),
                verdict(c.median / d.median <= 1.10).into(),
            ));
        }
    }
    writeln!(
        md,
        "\nPipeline stages, timed alone (µs per call, median [IQR]):\n"
    )
    .unwrap();
    criterion_table(&mut md, &crit, "read_stages/", "stage");

    // 2. Draft calls.
    writeln!(md, "\n## 2. Draft-tool call (µs per call, median [IQR])\n").unwrap();
    writeln!(
        md,
        "| backend | floor (1 commit) | floor, pipeline's statements | erp-tools | erp-tools / floor | shape / floor | erp-tools / shape |\n|---|---|---|---|---|---|---|"
    )
    .unwrap();
    for backend in ["sqlite", "postgres"] {
        let ids = ["floor", "floor_pipeline_shape", "erp_tools"]
            .map(|f| get(&format!("draft_call/{backend}/{f}")));
        match ids {
            [Some(f), Some(s), Some(e)] => {
                writeln!(
                    md,
                    "| {backend} | {} | {} | {} | {:.2} | {:.2} | {:.2} |",
                    fmt_us(f),
                    fmt_us(s),
                    fmt_us(e),
                    e.median / f.median,
                    s.median / f.median,
                    e.median / s.median
                )
                .unwrap();
                targets.push((
                    format!("draft ≤ 1.3× floor ({backend})"),
                    format!("{:.2}×", e.median / f.median),
                    verdict(e.median / f.median <= 1.3).into(),
                ));
            }
            _ => writeln!(md, "| {backend} | not run | | | | | |").unwrap(),
        }
    }

    // 3. tools/list.
    writeln!(
        md,
        "\n## 3. tools/list, 500 tools (µs per list, median [IQR])\n"
    )
    .unwrap();
    criterion_table(&mut md, &crit, "tools_list/", "measurement");
    if let (Some(e), Some(r)) = (
        get("tools_list/erp_tools_filtered"),
        get("tools_list/rmcp_router_all"),
    ) {
        writeln!(
            md,
            "\nerp-tools (filtered, 90 of 500) / rmcp router (all 500): {:.2}",
            e.median / r.median
        )
        .unwrap();
        if let (Some(me), Some(mr)) = (get("tools_list/mcp_erp"), get("tools_list/mcp_rmcp")) {
            writeln!(
                md,
                "over MCP (in-process pipe): erp-tools / rmcp = {:.2}",
                me.median / mr.median
            )
            .unwrap();
        }
        targets.push((
            "tools/list (500 tools) < 50 µs".into(),
            format!("{:.1} µs", e.median),
            verdict(e.median < 50.0).into(),
        ));
    }

    // 4. Concurrency.
    section(
        &mut md,
        "4. Concurrency storm on PostgreSQL",
        &results,
        "concurrency.json",
        |md, v| {
            writeln!(
                md,
                "{} agents × {} calls, {}% exact retries, pool {}; median (min–max) over {} reps.\n",
                v["agents"],
                v["calls_per_agent"],
                v["retry_pct"],
                v["pool"],
                v["reps"].as_array().map_or(0, Vec::len)
            )
            .unwrap();
            let columns = "throughput (calls/s) | p50 (ms) | p99 (ms) | exactly once every rep";
            let cells = [
                spread(&v["throughput_calls_per_s"], 0),
                spread(&v["p50_ms"], 1),
                spread(&v["p99_ms"], 1),
                v["exactly_once_every_rep"].to_string(),
            ];
            one_row_table(md, columns, &cells);
            writeln!(md, "\n| rep | calls | distinct keys sent | documents | key rows | ok | replayed | errors |\n|---|---|---|---|---|---|---|---|").unwrap();
            for (i, r) in v["reps"].as_array().into_iter().flatten().enumerate() {
                writeln!(
                    md,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    i + 1,
                    r["calls"],
                    r["distinct_keys_sent"],
                    r["documents"],
                    r["key_rows"],
                    r["ok"],
                    r["replayed"],
                    r["errors"]
                )
                .unwrap();
            }
            let once = v["exactly_once_every_rep"].as_bool() == Some(true);
            targets.push((
                "zero duplicates under the storm".into(),
                if once {
                    "0 duplicates"
                } else {
                    "duplicates found"
                }
                .into(),
                verdict(once).into(),
            ));
        },
    );

    // 5. Compile time.
    section(
        &mut md,
        "5. Compile time",
        &results,
        "compile_time.json",
        |md, v| {
            writeln!(
                md,
                "{} tools, `cargo {}` ({} profile) of the leaf crate only, {} reps; seconds, median (min–max).\n",
                v["tools"], v["command"].as_str().unwrap_or("build"), v["profile"].as_str().unwrap_or("dev"), v["reps"]
            )
            .unwrap();
            let ratio = v["ratio_of_medians"].as_f64().unwrap_or(f64::NAN);
            let columns = "#[erp_tool] | rmcp #[tool] | ratio of medians | ratio per rep";
            let cells = [
                spread(&v["erp_tools_s"], 2),
                spread(&v["rmcp_s"], 2),
                format!("{ratio:.2}"),
                spread(&v["ratio_per_rep"], 2),
            ];
            one_row_table(md, columns, &cells);
            targets.push((
                "compile time ≤ 1.5× rmcp".into(),
                format!("{ratio:.2}×"),
                verdict(ratio <= 1.5).into(),
            ));
        },
    );

    // 6. Memory.
    section(
        &mut md,
        "6. Memory of the distributor example",
        &results,
        "memory.json",
        |md, v| {
            writeln!(
                md,
                "{} calls over streamable HTTP from {} clients; MiB, median (min–max) over {} reps.\n",
                v["calls"],
                v["clients"],
                v["reps"].as_array().map_or(0, Vec::len)
            )
            .unwrap();
            let columns =
                "VmHWM idle | VmHWM after the calls (peak) | VmRSS after | calls/s | errors";
            let cells = [
                spread(&v["idle_hwm_mib"], 1),
                spread(&v["peak_hwm_mib"], 1),
                spread(&v["end_rss_mib"], 1),
                spread(&v["calls_per_s"], 0),
                v["errors"].to_string(),
            ];
            one_row_table(md, columns, &cells);
        },
    );

    // Interleaved rerun of the key ratios.
    if let Some(v) = read_json(&results.join("interleaved.json")) {
        interleaved(&mut md, &v);
    }

    writeln!(
        md,
        "\n## Targets\n\n| target | measured | verdict |\n|---|---|---|"
    )
    .unwrap();
    for (t, m, v) in &targets {
        writeln!(md, "| {t} | {m} | {v} |").unwrap();
    }

    print!("{md}");
    let _ = std::fs::create_dir_all(&results);
    let path = results.join("summary.md");
    std::fs::write(&path, &md).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    eprintln!("written to {}", path.display());
}

fn cell(x: &Value) -> String {
    match (x["median"].as_f64(), x["p25"].as_f64(), x["p75"].as_f64()) {
        (Some(m), Some(a), Some(b)) => median_iqr(m, a, b),
        _ => "n/a".into(),
    }
}

/// A row of an interleaved table: `name`, the rounds, the times of the `variants`, and
/// the `ratios` (key, decimals).
fn interleaved_row(name: &str, r: &Value, variants: &[&str], ratios: &[(&str, usize)]) -> String {
    let mut row = format!("| {name} | {} |", r["rounds"]);
    for variant in variants {
        row += &format!(" {} |", cell(&r["us"][variant]));
    }
    for (key, digits) in ratios {
        row += &format!(" {:.digits$} |", r[*key].as_f64().unwrap_or(f64::NAN));
    }
    row
}

fn interleaved(md: &mut String, v: &Value) {
    writeln!(
        md,
        "\n## Key ratios, interleaved rerun (µs per call, median [IQR])\n"
    )
    .unwrap();
    writeln!(
        md,
        "| body | rounds | (a) direct | (b) pipeline | (c) MCP erp-tools | (d) MCP rmcp | (b)−(a) | (c)/(d) |\n|---|---|---|---|---|---|---|---|"
    )
    .unwrap();
    for body in ["memory", "sqlite"] {
        let r = &v["read"][body];
        if r.is_null() {
            continue;
        }
        let ratios = [("b_minus_a_us", 1), ("c_over_d", 2)];
        writeln!(md, "{}", interleaved_row(body, r, &READ_VARIANTS, &ratios)).unwrap();
    }
    writeln!(
        md,
        "\n| backend | rounds | floor | pipeline's statements | same, async attempt commit | same, final updates merged | merged + attempt overlapped | erp-tools | erp-tools / floor |\n|---|---|---|---|---|---|---|---|---|"
    )
    .unwrap();
    for backend in ["sqlite", "postgres"] {
        let r = &v["draft"][backend];
        if r.get("rounds").is_none() {
            writeln!(md, "| {backend} | not run | | | | | | | |").unwrap();
            continue;
        }
        let ratios = [("erp_over_floor", 2)];
        writeln!(
            md,
            "{}",
            interleaved_row(backend, r, &DRAFT_VARIANTS, &ratios)
        )
        .unwrap();
    }
    let r = &v["draft"]["sqlite"];
    if r.get("full_over_normal").is_some() {
        writeln!(
            md,
            "
| SQLite draft | rounds | erp-tools, synchronous = FULL (default) | erp-tools, synchronous = NORMAL | FULL / NORMAL |\n|---|---|---|---|---|"
        )
        .unwrap();
        let ratios = [("full_over_normal", 2)];
        let variants = ["erp_tools", "erp_tools_sync_normal"];
        writeln!(md, "{}", interleaved_row("sqlite", r, &variants, &ratios)).unwrap();
    }
}
