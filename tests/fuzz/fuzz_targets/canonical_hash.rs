//! Canonical JSON and the request hash: canonicalising twice changes nothing, and the
//! order of keys never changes the text or the hash.
#![no_main]

use erp_tools_core::validate::{canonical_hash, canonical_json};
use erp_tools_fuzz::reversed;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let text = canonical_json(&value);
    let back: Value = serde_json::from_str(&text).expect("canonical JSON is JSON");
    assert_eq!(back, value, "canonical JSON reads back as the same value");
    assert_eq!(
        canonical_json(&back),
        text,
        "canonicalising twice changes nothing"
    );
    assert_eq!(
        canonical_json(&reversed(&value)),
        text,
        "key order changed the text"
    );
    assert_eq!(canonical_hash(&reversed(&value)), canonical_hash(&value));
});
