//! A small JSON syntax check for `example = r#"{..}"#`, so a typo in an example call is a
//! compile error rather than a registry error at start-up. (The registry still checks the
//! example against the argument schema.)

/// Checks that `text` is one JSON object; on failure says what is wrong and where.
pub(crate) fn check_object(text: &str) -> Result<(), String> {
    let mut p = JsonParser {
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    p.ws();
    if p.peek() != Some(b'{') {
        return Err("an example call is a JSON object of arguments, starting with `{`".into());
    }
    p.value()?;
    p.ws();
    if p.pos != p.bytes.len() {
        return Err(format!(
            "unexpected text after the JSON object at byte {}",
            p.pos
        ));
    }
    Ok(())
}

struct JsonParser<'a> {
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
}

impl JsonParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        match self.peek() {
            Some(c) => Err(format!(
                "expected {what} at byte {}, found `{}`",
                self.pos, c as char
            )),
            None => Err(format!(
                "expected {what} at byte {}, found the end of the text",
                self.pos
            )),
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self) -> Result<(), String> {
        self.ws();
        self.depth += 1;
        if self.depth > 64 {
            return Err("the example nests too deeply".into());
        }
        let out = match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string(),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => self.fail("a JSON value"),
        };
        self.depth -= 1;
        out
    }

    fn object(&mut self) -> Result<(), String> {
        self.pos += 1;
        self.ws();
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.fail("a quoted key");
            }
            self.string()?;
            self.ws();
            if !self.eat(b':') {
                return self.fail("`:`");
            }
            self.value()?;
            if self.list_end(b'}', "`,` or `}`")? {
                return Ok(());
            }
        }
    }

    fn array(&mut self) -> Result<(), String> {
        self.pos += 1;
        self.ws();
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            self.value()?;
            if self.list_end(b']', "`,` or `]`")? {
                return Ok(());
            }
        }
    }

    /// After an item of an object or array: `,` (more follow, `false`) or `close` (the
    /// list ends, `true`).
    fn list_end(&mut self, close: u8, expected: &str) -> Result<bool, String> {
        self.ws();
        if self.eat(b',') {
            return Ok(false);
        }
        if self.eat(close) {
            return Ok(true);
        }
        self.fail(expected)
    }

    fn string(&mut self) -> Result<(), String> {
        self.pos += 1;
        loop {
            match self.peek() {
                None => return self.fail("a closing `\"`"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                                    return self.fail("four hex digits after `\\u`");
                                }
                                self.pos += 1;
                            }
                        }
                        _ => return self.fail("a valid escape"),
                    }
                }
                Some(c) if c < 0x20 => return self.fail("no control characters inside a string"),
                Some(_) => self.pos += 1,
            }
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            self.fail("a JSON value")
        }
    }

    fn number(&mut self) -> Result<(), String> {
        self.eat(b'-');
        let digits = |p: &mut Self| {
            let start = p.pos;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.pos += 1;
            }
            p.pos > start
        };
        if !digits(self) {
            return self.fail("a digit");
        }
        if self.eat(b'.') && !digits(self) {
            return self.fail("a digit after `.`");
        }
        if self.peek().is_some_and(|c| c == b'e' || c == b'E') {
            self.pos += 1;
            if !self.eat(b'+') {
                self.eat(b'-');
            }
            if !digits(self) {
                return self.fail("a digit in the exponent");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::check_object;

    #[test]
    fn accepts_objects() {
        for ok in [
            "{}",
            r#" {"a": 1, "b": [true, false, null], "c": {"d": "x\"y\u00e9"}, "e": -1.5e3} "#,
            r#"{"lines":[{"item_code":"BRG-0042","qty":"24","uom":"BOX"}]}"#,
        ] {
            assert_eq!(check_object(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn rejects_non_objects_and_typos() {
        for bad in [
            "[]",
            "\"x\"",
            "",
            "{",
            "{a: 1}",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "{\"a\": tru}",
            "{} x",
            "{\"a\": 01x}",
        ] {
            assert!(check_object(bad).is_err(), "{bad}");
        }
    }
}
