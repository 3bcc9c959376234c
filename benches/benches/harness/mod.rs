//! What the criterion benchmarks share: the tokio runtime their async code runs on, and
//! criterion's configuration.

use std::time::Duration;

use criterion::Criterion;

/// A multi-threaded tokio runtime with two workers.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// Criterion taking `samples` samples, after a 2 s warm-up, in `measurement_secs` seconds.
pub fn config(samples: usize, measurement_secs: u64) -> Criterion {
    Criterion::default()
        .sample_size(samples)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(measurement_secs))
}
