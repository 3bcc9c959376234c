//! Declared bounds (`#[erp(..)]`) on every kind of field: numbers and decimals (`min`,
//! `max`, `positive`), texts (`len`, `pattern`), lists (`len`, and number or pattern bounds
//! on each item), optional fields; stated in the description for every provider (strict
//! schemas have no bound keywords) and enforced by validation with the allowed range.

use erp_tools_core::Target;
use erp_tools_core::prelude::*;
use erp_tools_core::schema::check_strict;
use erp_tools_core::validate::validate as validate_arguments;
use serde_json::{Value, json};

#[derive(Debug, Deserialize, ToolArgs)]
#[allow(dead_code)]
pub struct Bounded {
    /// Quantity.
    #[erp(positive, max = 1000)]
    pub qty: Decimal,
    /// Discount percent.
    #[erp(min = 0, max = 100)]
    pub discount: Option<u8>,
    /// Temperature offset.
    #[erp(min = -40.5)]
    pub offset: i32,
    /// Vendor code.
    #[erp(len = 3..=12, pattern = "V-[0-9]+")]
    pub vendor_code: String,
    /// Tags.
    #[erp(len = ..=3, pattern = "[a-z]+")]
    pub tags: Vec<String>,
    /// Weights.
    #[erp(len = 1.., min = 0.001)]
    pub weights: Vec<Decimal>,
    /// A reference.
    #[erp(len = 2)]
    pub country: Option<String>,
}

fn valid() -> Value {
    json!({
        "qty": "10", "discount": null, "offset": -40, "vendor_code": "V-00231",
        "tags": ["red"], "weights": ["0.5"], "country": "ID",
    })
}

fn with(key: &str, value: Value) -> Value {
    let mut v = valid();
    v[key] = value;
    v
}

#[test]
fn every_bound_is_enforced_with_the_allowed_range() {
    let schema = Bounded::tool_schema();
    assert!(validate_arguments(&schema, &valid()).is_ok());
    let cases = [
        (
            "qty",
            json!("0"),
            "0 is not allowed here; send a value more than 0 and at most 1000",
        ),
        ("qty", json!(1000.01), "1000.01 is not allowed here"),
        ("qty", json!("-1"), "more than 0"),
        (
            "discount",
            json!(101),
            "101 is not allowed here; send a value from 0 to 100",
        ),
        (
            "offset",
            json!(-41),
            "-41 is not allowed here; send a value at least -40.5",
        ),
        (
            "vendor_code",
            json!("V-"),
            "2 characters, but 3 to 12 characters are allowed",
        ),
        (
            "vendor_code",
            json!("V-1234567890123"),
            "15 characters, but 3 to 12",
        ),
        (
            "vendor_code",
            json!("X-00231"),
            "does not match the pattern V-[0-9]+",
        ),
        ("vendor_code", json!("V-1x"), "does not match the pattern"),
        ("vendor_code", json!("aV-1"), "does not match the pattern"),
        (
            "tags",
            json!(["a", "b", "c", "d"]),
            "4 items, but at most 3 items are allowed",
        ),
        (
            "tags",
            json!(["Red"]),
            "`tags[0]`: \"Red\" does not match the pattern [a-z]+",
        ),
        (
            "weights",
            json!([]),
            "0 items, but at least 1 items are allowed",
        ),
        (
            "weights",
            json!(["0.0001"]),
            "`weights[0]`: 0.0001 is not allowed here; send a value at least 0.001",
        ),
        (
            "country",
            json!("IDN"),
            "3 characters, but exactly 2 characters are allowed",
        ),
    ];
    for (key, value, says) in cases {
        let e = validate_arguments(&schema, &with(key, value.clone()))
            .expect_err(&format!("{key} = {value}"))
            .to_string();
        assert!(e.contains(says), "{key} = {value}: {e}");
    }
    for (key, value) in [
        ("qty", json!("1000")),
        ("qty", json!(0.001)),
        ("discount", json!(0)),
        ("discount", json!(100)),
        ("offset", json!(2147483647)),
        ("country", Value::Null),
        ("tags", json!([])),
    ] {
        let r = validate_arguments(&schema, &with(key, value.clone()));
        assert!(r.is_ok(), "{key} = {value}: {r:?}");
    }
}

#[test]
fn bounds_are_stated_in_the_description_for_every_provider() {
    let schema = Bounded::tool_schema();
    for target in Target::ALL {
        let rendered = schema.render(target);
        assert_eq!(check_strict(&rendered, target), vec![], "{target:?}");
        let p = &rendered["properties"];
        let d = |k: &str| p[k]["description"].as_str().unwrap_or_default().to_string();
        assert!(
            d("qty").contains("more than 0 and at most 1000"),
            "{target:?} {}",
            d("qty")
        );
        assert!(
            d("discount").contains("whole number; from 0 to 100"),
            "{target:?} {}",
            d("discount")
        );
        assert!(d("offset").contains("at least -40.5"), "{}", d("offset"));
        assert!(
            d("vendor_code")
                .contains("3 to 12 characters, the whole text matching the pattern V-[0-9]+"),
            "{}",
            d("vendor_code")
        );
        assert!(
            d("tags")
                .contains("at most 3 items, each item the whole text matching the pattern [a-z]+"),
            "{}",
            d("tags")
        );
        assert!(
            d("weights").contains("at least 1 items, each item at least 0.001"),
            "{}",
            d("weights")
        );
        assert!(
            d("country").contains("exactly 2 characters"),
            "{target:?} {}",
            d("country")
        );
        let text = rendered.to_string();
        for keyword in [
            "minimum",
            "maximum",
            "maxLength",
            "minLength",
            "minItems",
            "maxItems",
        ] {
            assert!(!text.contains(keyword), "{target:?} has {keyword}");
        }
        // `pattern` is JSON Schema's too, anchored to the whole text, except for Anthropic
        // (there the description states it).
        if target == Target::Anthropic {
            assert!(!text.contains("pattern\":"), "{target:?} has pattern");
        } else {
            assert_eq!(
                p["vendor_code"]["pattern"],
                json!("^(?:V-[0-9]+)$"),
                "{target:?}"
            );
            assert_eq!(
                p["tags"]["items"]["pattern"],
                json!("^(?:[a-z]+)$"),
                "{target:?}"
            );
        }
    }
}
