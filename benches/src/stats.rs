//! Medians, percentiles and spreads of repeated measurements, and the JSON summaries the
//! benchmark binaries print.

use std::path::Path;

use serde::Serialize;

/// Summary of a set of measurements.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of measurements.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// 25th percentile.
    pub p25: f64,
    /// 75th percentile.
    pub p75: f64,
}

impl Summary {
    /// Summarises `values` (which need not be sorted). `None` for an empty set.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        Some(Summary {
            n: v.len(),
            median: percentile_sorted(&v, 50.0),
            min: v[0],
            max: v[v.len() - 1],
            p25: percentile_sorted(&v, 25.0),
            p75: percentile_sorted(&v, 75.0),
        })
    }

    /// `median (min–max)` with `digits` decimals.
    pub fn display(&self, digits: usize) -> String {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            self.median,
            self.min,
            self.max,
            d = digits
        )
    }
}

/// Prints a benchmark binary's summary `value` as pretty JSON and, when `path` is given,
/// writes it there too (creating its directory).
pub fn emit_json(value: &serde_json::Value, path: Option<&Path>) {
    let text = serde_json::to_string_pretty(value).expect("json");
    println!("{text}");
    if let Some(path) = path {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        std::fs::write(path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    }
}

/// The `p`th percentile (0–100) of sorted `values`, by linear interpolation.
pub fn percentile_sorted(values: &[f64], p: f64) -> f64 {
    match values.len() {
        0 => f64::NAN,
        1 => values[0],
        n => {
            let rank = (p / 100.0).clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = rank.floor() as usize;
            let hi = rank.ceil() as usize;
            values[lo] + (values[hi] - values[lo]) * (rank - lo as f64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_odd_and_even_sets() {
        let s = Summary::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert_eq!(s.p25, 1.75);
        assert_eq!(s.display(1), "2.5 (1.0–4.0)");
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn percentiles_interpolate() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.0), 1.0);
        assert_eq!(percentile_sorted(&v, 100.0), 100.0);
        assert!((percentile_sorted(&v, 99.0) - 99.01).abs() < 1e-9);
    }
}
