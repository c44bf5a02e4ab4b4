//! Just enough JSON for the fixtures and the library's JSON output: objects, arrays, strings, integers and
//! decimals, true, false, null. Malformed input panics with the position (a test input is wrong, not the code).

#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn parse(text: &str) -> Json {
        let mut p = Parser { bytes: text.as_bytes(), pos: 0 };
        let value = p.value();
        p.skip_space();
        assert_eq!(p.pos, p.bytes.len(), "text after the JSON value");
        value
    }

    /// The member `key` of an object; panics when there is none.
    pub fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(members) => {
                &members.iter().find(|(k, _)| k == key).unwrap_or_else(|| panic!("no key {:?}", key)).1
            }
            other => panic!("{:?} is not an object", other),
        }
    }

    pub fn has(&self, key: &str) -> bool {
        matches!(self, Json::Object(members) if members.iter().any(|(k, _)| k == key))
    }

    pub fn as_i64(&self) -> i64 {
        match self {
            Json::Number(n) if n.fract() == 0.0 => *n as i64,
            other => panic!("{:?} is not an integer", other),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            other => panic!("{:?} is not a string", other),
        }
    }

    pub fn as_array(&self) -> &[Json] {
        match self {
            Json::Array(items) => items,
            other => panic!("{:?} is not an array", other),
        }
    }

    /// [1, 2] as a Vec<i64>.
    pub fn ints(&self) -> Vec<i64> {
        self.as_array().iter().map(Json::as_i64).collect()
    }

    /// [[1, 2], [3, 4]] as nested Vecs.
    pub fn int_lists(&self) -> Vec<Vec<i64>> {
        self.as_array().iter().map(Json::ints).collect()
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn skip_space(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> u8 {
        self.skip_space();
        *self.bytes.get(self.pos).unwrap_or_else(|| panic!("JSON ends early"))
    }

    fn expect(&mut self, c: u8) {
        assert_eq!(self.peek(), c, "expected {:?} at {}", c as char, self.pos);
        self.pos += 1;
    }

    fn literal(&mut self, word: &str, value: Json) -> Json {
        assert!(self.bytes[self.pos..].starts_with(word.as_bytes()), "bad literal at {}", self.pos);
        self.pos += word.len();
        value
    }

    fn value(&mut self) -> Json {
        match self.peek() {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => Json::Str(self.string()),
            b't' => self.literal("true", Json::Bool(true)),
            b'f' => self.literal("false", Json::Bool(false)),
            b'n' => self.literal("null", Json::Null),
            _ => self.number(),
        }
    }

    fn object(&mut self) -> Json {
        self.expect(b'{');
        let mut members = Vec::new();
        if self.peek() == b'}' {
            self.pos += 1;
            return Json::Object(members);
        }
        loop {
            self.skip_space();
            let key = self.string();
            self.expect(b':');
            members.push((key, self.value()));
            match self.peek() {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Json::Object(members);
                }
                c => panic!("unexpected {:?} in an object at {}", c as char, self.pos),
            }
        }
    }

    fn array(&mut self) -> Json {
        self.expect(b'[');
        let mut items = Vec::new();
        if self.peek() == b']' {
            self.pos += 1;
            return Json::Array(items);
        }
        loop {
            items.push(self.value());
            match self.peek() {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Json::Array(items);
                }
                c => panic!("unexpected {:?} in an array at {}", c as char, self.pos),
            }
        }
    }

    fn string(&mut self) -> String {
        self.expect(b'"');
        let mut out = Vec::new();
        loop {
            let c = self.bytes[self.pos];
            self.pos += 1;
            match c {
                b'"' => return String::from_utf8(out).expect("UTF-8 in a JSON string"),
                b'\\' => {
                    let e = self.bytes[self.pos];
                    self.pos += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let hex = std::str::from_utf8(&self.bytes[self.pos..self.pos + 4]).unwrap();
                            self.pos += 4;
                            let code = u32::from_str_radix(hex, 16).expect("\\u escape");
                            // Surrogate pairs do not occur in these inputs; one would show as U+FFFD.
                            let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                            out.extend_from_slice(ch.to_string().as_bytes());
                        }
                        other => out.push(other), // \" \\ \/
                    }
                }
                other => out.push(other),
            }
        }
    }

    fn number(&mut self) -> Json {
        let start = self.pos;
        while self.pos < self.bytes.len()
            && matches!(self.bytes[self.pos], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).unwrap();
        Json::Number(text.parse().unwrap_or_else(|_| panic!("bad number {:?} at {}", text, start)))
    }
}
