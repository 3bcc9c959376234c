//! Argument validation against the example tools' strict schemas. For any input:
//! validation never panics; what it accepts, serde reads into the tool's argument type
//! (the schema and the deserialiser agree); normalising twice changes nothing; the hash of
//! the normalised arguments does not depend on key order.
#![no_main]

use std::sync::{LazyLock, Once};

use erp_tools_core::Target;
use erp_tools_core::validate::{canonical_hash, canonical_json, validate as validate_arguments};
use erp_tools_fuzz::{Tool, rendered, reversed, tools};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

static SAME_SCHEMAS: Once = Once::new();
/// The tools' MCP input schemas, in the order of `tools()`.
static WIRE: LazyLock<Vec<Value>> = LazyLock::new(|| {
    TOOLS
        .iter()
        .map(|(_, schema, _)| schema.render(Target::Mcp))
        .collect()
});
static TOOLS: LazyLock<Vec<Tool>> = LazyLock::new(tools);

/// Every decimal field's value (a property the schema describes as a "decimal number as a
/// string") written with trailing zeros; every other string left as it is.
/// With `as_number`, a decimal that is a whole number of at most 15 digits is written as a
/// JSON number instead (`"48"` as `48`).
fn respell(v: &Value, schema: &Value, as_number: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), respell(v, &schema["properties"][k], as_number)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|v| respell(v, &schema["items"], as_number))
                .collect(),
        ),
        Value::String(s) if is_decimal(s) && is_decimal_field(schema) => {
            let whole = s.trim_start_matches('-').len() <= 15 && !s.contains('.');
            match s.parse::<i64>() {
                Ok(n) if as_number && whole => Value::from(n),
                _ if s.contains('.') => Value::String(format!("{s}00")),
                _ => Value::String(format!("{s}.000")),
            }
        }
        other => other.clone(),
    }
}

fn is_decimal_field(schema: &Value) -> bool {
    schema["description"]
        .as_str()
        .is_some_and(|d| d.contains("decimal number as a string"))
}

fn is_decimal(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    let mut parts = body.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && parts
            .next()
            .is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
        && s.len() < 24
}

fuzz_target!(|data: &[u8]| {
    SAME_SCHEMAS.call_once(|| {
        let committed: Value = serde_json::from_str(include_str!("../example_schemas.json"))
            .expect("example_schemas.json");
        assert_eq!(
            rendered(),
            committed,
            "the fuzz crate's argument types drifted from the example's"
        );
    });
    let Some((&selector, json)) = data.split_first() else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let tool = selector as usize % TOOLS.len();
    let (_name, schema, read) = &TOOLS[tool];
    let wire = &WIRE[tool];
    if let Ok(normalised) = validate_arguments(schema, &value) {
        if let Err(e) = read(normalised.clone()) {
            panic!("validated arguments that serde cannot read: {e}\n{normalised}");
        }
        let again =
            validate_arguments(schema, &normalised).expect("normalised arguments stay valid");
        assert_eq!(again, normalised, "normalising twice changed the arguments");
        assert_eq!(canonical_hash(&reversed(&value)).len(), 64);
        let shuffled =
            validate_arguments(schema, &reversed(&value)).expect("key order does not matter");
        assert_eq!(canonical_json(&shuffled), canonical_json(&normalised));
        assert_eq!(canonical_hash(&shuffled), canonical_hash(&normalised));
        // Another spelling of every decimal (`"20"` as `"20.000"`, `"0.5"` as `"0.500"`, or
        // as a JSON number when it is one exactly) is the same argument with the same hash.
        for as_number in [false, true] {
            let respelled = respell(&normalised, wire, as_number);
            let again =
                validate_arguments(schema, &respelled).expect("a respelled decimal stays valid");
            assert_eq!(
                canonical_hash(&again),
                canonical_hash(&normalised),
                "{respelled}"
            );
        }
    } else if let Err(e) = validate_arguments(schema, &value) {
        let text = e.to_string();
        assert!(
            !text.is_empty() && text.len() < 64 * 1024,
            "a refusal of {} bytes",
            text.len()
        );
    }
});
