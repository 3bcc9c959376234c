//! Argument validation against the example tools' strict schemas. For any input:
//! validation never panics; what it accepts, serde reads into the tool's argument type
//! (the schema and the deserialiser agree); normalising twice changes nothing; the hash of
//! the normalised arguments does not depend on key order.
#![no_main]

use std::sync::Once;

use erp_tools_core::{canonical_hash, canonical_json, validate_arguments};
use erp_tools_fuzz::{rendered, tools};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

static SAME_SCHEMAS: Once = Once::new();

fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), reversed(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

/// Every decimal-looking string with trailing zeros added.
fn respell(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), respell(v))).collect()),
        Value::Array(a) => Value::Array(a.iter().map(respell).collect()),
        Value::String(s) if is_decimal(s) => {
            Value::String(if s.contains('.') { format!("{s}00") } else { format!("{s}.000") })
        }
        other => other.clone(),
    }
}

fn is_decimal(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    let mut parts = body.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && parts.next().is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        && s.len() < 24
}

fuzz_target!(|data: &[u8]| {
    SAME_SCHEMAS.call_once(|| {
        let committed: Value =
            serde_json::from_str(include_str!("../example_schemas.json")).expect("example_schemas.json");
        assert_eq!(rendered(), committed, "the fuzz crate's argument types drifted from the example's");
    });
    let Some((&selector, json)) = data.split_first() else { return };
    let Ok(value) = serde_json::from_slice::<Value>(json) else { return };
    let tools = tools();
    let (_name, schema, read) = &tools[selector as usize % tools.len()];
    if let Ok(normalised) = validate_arguments(schema, &value) {
        if let Err(e) = read(normalised.clone()) {
            panic!("validated arguments that serde cannot read: {e}\n{normalised}");
        }
        let again = validate_arguments(schema, &normalised).expect("normalised arguments stay valid");
        assert_eq!(again, normalised, "normalising twice changed the arguments");
        assert_eq!(canonical_hash(&reversed(&value)).len(), 64);
        let shuffled = validate_arguments(schema, &reversed(&value)).expect("key order does not matter");
        assert_eq!(canonical_json(&shuffled), canonical_json(&normalised));
        assert_eq!(canonical_hash(&shuffled), canonical_hash(&normalised));
        // Another spelling of every decimal (`"20"` as `"20.000"`, `"0.5"` as `"0.500"`, or
        // as a JSON number when it is one exactly) is the same argument with the same hash.
        let respelled = respell(&normalised);
        let again = validate_arguments(schema, &respelled).expect("a respelled decimal stays valid");
        assert_eq!(canonical_hash(&again), canonical_hash(&normalised), "{respelled}");
    } else if let Err(e) = validate_arguments(schema, &value) {
        let text = e.to_string();
        assert!(!text.is_empty() && text.len() < 64 * 1024, "a refusal of {} bytes", text.len());
    }
});
