//! The name of a header an argument is mirrored into (`x-mcp-header`, SEP-2243).

/// Why `name` cannot be an `x-mcp-header` name, or `None` when it can: a header name is
/// a non-empty RFC 9110 token (ASCII letters, digits and ``!#$%&'*+-.^_`|~``), at most 64
/// characters, so that `Mcp-Param-{name}` is a valid header field name.
pub fn header_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the header name is empty".into());
    }
    if name.len() > 64 {
        return Some(format!(
            "the header name `{name}` is longer than 64 characters"
        ));
    }
    let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    name.chars().find(|c| !is_tchar(*c)).map(|c| {
        format!(
            "the header name `{}` contains {}, which an HTTP header name cannot hold (letters, \
             digits and `-` can)",
            name.escape_debug(),
            match c {
                ' ' => "a space".to_string(),
                c if c.is_control() => format!("the control character {:?}", c),
                c if !c.is_ascii() => format!("the non-ASCII character `{c}`"),
                c => format!("`{c}`"),
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::header_name_problem;

    #[test]
    fn tokens_are_accepted_and_everything_else_named() {
        for ok in ["Region", "Branch-Code", "x1", "a.b_c~"] {
            assert_eq!(header_name_problem(ok), None, "{ok}");
        }
        for (bad, says) in [
            ("", "empty"),
            ("My Region", "a space"),
            ("Region:Primary", "`:`"),
            ("Région", "non-ASCII"),
            ("Region\t1", "control character"),
        ] {
            let p = header_name_problem(bad).unwrap_or_default();
            assert!(p.contains(says), "{bad:?}: {p}");
        }
        assert!(header_name_problem(&"a".repeat(65)).is_some());
    }
}
