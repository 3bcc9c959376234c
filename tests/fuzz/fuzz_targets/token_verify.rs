//! Bearer token parsing and verification: any text is refused or accepted without a
//! panic; a token accepted is one the development key signed, for its audience.
#![no_main]

use std::sync::LazyLock;
use std::time::Duration;

use erp_tools_core::Principal;
use erp_tools_core::auth::{TokenConfig, mint, verify};
use libfuzzer_sys::fuzz_target;

static CONFIG: LazyLock<TokenConfig> = LazyLock::new(TokenConfig::development);
static GOOD: LazyLock<String> = LazyLock::new(|| {
    let p = Principal::builder("7", 1, "SBY-01")
        .scopes(["purchasing:read"])
        .build();
    mint(&CONFIG, &p, Duration::from_secs(3600))
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = verify(&CONFIG, text);
    // The good token with the input spliced in: still never a panic, and any change to
    // the signed part is refused.
    let good = GOOD.as_str();
    let at = data.first().map_or(0, |b| *b as usize % good.len());
    let mut spliced = String::with_capacity(good.len() + text.len());
    spliced.push_str(&good[..at]);
    spliced.push_str(text);
    spliced.push_str(&good[at..]);
    if let Ok(p) = verify(&CONFIG, &spliced) {
        assert_eq!(
            p.user_id(),
            "7",
            "a changed token was accepted for another user: {spliced}"
        );
    }
});
