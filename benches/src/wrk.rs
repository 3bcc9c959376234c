//! The HTTP benchmark's load generator: Debian's `wrk` (`apt-get install wrk`), run as a
//! child process with a Lua script that sends one fixed MCP request, and its report read
//! back: requests per second, latency percentiles, failed requests.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde::Serialize;

/// One fixed HTTP POST that `wrk` repeats on every connection.
pub struct Request<'a> {
    /// The URL, e.g. `http://127.0.0.1:8765/mcp`.
    pub url: &'a str,
    /// Header names and values.
    pub headers: &'a [(&'a str, String)],
    /// The body.
    pub body: &'a str,
}

/// What one `wrk` run measured.
#[derive(Clone, Debug, Serialize)]
pub struct Measured {
    /// Open connections.
    pub connections: usize,
    /// Seconds of load.
    pub seconds: f64,
    /// Requests answered.
    pub requests: u64,
    /// Requests answered per second.
    pub per_second: f64,
    /// Median latency, milliseconds.
    pub p50_ms: f64,
    /// 90th percentile latency, milliseconds.
    pub p90_ms: f64,
    /// 99th percentile latency, milliseconds.
    pub p99_ms: f64,
    /// Answers with a status other than 2xx or 3xx.
    pub non_2xx: u64,
    /// Connect, read, write errors and timeouts.
    pub socket_errors: u64,
    /// The server's CPU time (every thread, user and system) per request answered, in
    /// microseconds, when the caller measured it (`wrk` does not).
    pub server_cpu_us: Option<f64>,
}

/// Whether `wrk` is on the `PATH`.
pub fn available() -> bool {
    Command::new("wrk").arg("-v").output().is_ok()
}

/// A Lua string literal of `s` (long brackets cannot hold `]]`, so escaped quotes).
fn lua_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Lua script that makes every request of a `wrk` run `request`.
pub fn script(request: &Request<'_>) -> String {
    let mut lua = String::from("wrk.method = \"POST\"\n");
    lua.push_str(&format!("wrk.body = {}\n", lua_string(request.body)));
    for (name, value) in request.headers {
        lua.push_str(&format!(
            "wrk.headers[{}] = {}\n",
            lua_string(name),
            lua_string(value)
        ));
    }
    lua
}

/// Runs `wrk` with the script at `script` against `url` for `duration` (whole seconds,
/// at least one) with `connections` connections (on at most two threads) and reads its
/// report.
pub fn run(
    script: &Path,
    url: &str,
    connections: usize,
    duration: Duration,
) -> Result<Measured, String> {
    let threads = connections.clamp(1, 2);
    let output = Command::new("wrk")
        .args(["--latency", "--timeout", "10s"])
        .arg(format!("-t{threads}"))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{}s", duration.as_secs().max(1)))
        .arg("-s")
        .arg(script)
        .arg(url)
        .output()
        .map_err(|e| format!("cannot run wrk (apt-get install wrk): {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "wrk failed ({}): {}{}",
            output.status,
            text,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    parse(&text, connections).map_err(|e| format!("{e}; wrk printed:\n{text}"))
}

/// A `wrk` latency such as `812.00us`, `1.25ms` or `1.02s`, in milliseconds.
fn millis(value: &str) -> Option<f64> {
    let (number, scale) = if let Some(n) = value.strip_suffix("us") {
        (n, 0.001)
    } else if let Some(n) = value.strip_suffix("ms") {
        (n, 1.0)
    } else if let Some(n) = value.strip_suffix("m") {
        (n, 60_000.0)
    } else if let Some(n) = value.strip_suffix('s') {
        (n, 1000.0)
    } else {
        return None;
    };
    number.parse::<f64>().ok().map(|n| n * scale)
}

/// Reads `wrk --latency`'s report.
pub fn parse(text: &str, connections: usize) -> Result<Measured, String> {
    let mut measured = Measured {
        connections,
        seconds: 0.0,
        requests: 0,
        per_second: f64::NAN,
        p50_ms: f64::NAN,
        p90_ms: f64::NAN,
        p99_ms: f64::NAN,
        non_2xx: 0,
        socket_errors: 0,
        server_cpu_us: None,
    };
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", v] => measured.p50_ms = millis(v).unwrap_or(f64::NAN),
            ["90%", v] => measured.p90_ms = millis(v).unwrap_or(f64::NAN),
            ["99%", v] => measured.p99_ms = millis(v).unwrap_or(f64::NAN),
            ["Requests/sec:", v] => measured.per_second = v.parse().unwrap_or(f64::NAN),
            [n, "requests", "in", secs, ..] => {
                measured.requests = n.parse().unwrap_or(0);
                measured.seconds = millis(secs.trim_end_matches(',')).unwrap_or(0.0) / 1000.0;
            }
            ["Non-2xx", "or", "3xx", "responses:", n] => measured.non_2xx = n.parse().unwrap_or(0),
            ["Socket", "errors:", rest @ ..] => {
                measured.socket_errors = rest
                    .iter()
                    .filter_map(|w| w.trim_end_matches(',').parse::<u64>().ok())
                    .sum();
            }
            _ => {}
        }
    }
    if measured.per_second.is_nan() || measured.p99_ms.is_nan() {
        return Err("no Requests/sec or 99% line in wrk's report".into());
    }
    Ok(measured)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "Running 2s test @ http://127.0.0.1:1/mcp
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.10ms    1.20ms  31.02ms   80.00%
    Req/Sec     1.57k   100.00     1.80k    70.00%
  Latency Distribution
     50%  812.00us
     75%    5.50ms
     90%    6.20ms
     99%    1.02s
  6290 requests in 2.00s, 9.17MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 4
Requests/sec:   3140.12
Transfer/sec:      4.58MB
";

    #[test]
    fn reads_wrk_report() {
        let m = parse(REPORT, 16).expect("parsed");
        assert_eq!(m.requests, 6290);
        assert!((m.seconds - 2.0).abs() < 1e-9);
        assert!((m.per_second - 3140.12).abs() < 1e-9);
        assert!((m.p50_ms - 0.812).abs() < 1e-9);
        assert!((m.p90_ms - 6.2).abs() < 1e-9);
        assert!((m.p99_ms - 1020.0).abs() < 1e-9);
        assert_eq!((m.non_2xx, m.socket_errors), (4, 3));
    }

    #[test]
    fn refuses_a_report_without_figures() {
        assert!(parse("unable to connect to 127.0.0.1:1 Connection refused", 1).is_err());
    }

    #[test]
    fn script_quotes_body_and_headers() {
        let headers = [("Authorization", "Bearer a\"b".to_string())];
        let lua = script(&Request {
            url: "http://x/mcp",
            headers: &headers,
            body: "{\"a\":\"\\n\"}",
        });
        assert!(lua.contains(r#"wrk.body = "{\"a\":\"\\n\"}""#), "{lua}");
        assert!(
            lua.contains(r#"wrk.headers["Authorization"] = "Bearer a\"b""#),
            "{lua}"
        );
    }
}
