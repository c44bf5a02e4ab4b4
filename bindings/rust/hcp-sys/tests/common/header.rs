//! A reader of hcp.h for the tests: its structs, typedefs, enumerators, numeric macros and functions, each type
//! spelled as this crate spells it in Rust. It knows the header's style only (one declaration per statement, no
//! nested structs); a statement it cannot read makes it panic, so that a new kind of declaration is looked at
//! rather than skipped.
#![allow(dead_code)] // each test binary uses part of it

use std::path::PathBuf;

pub struct Header {
    pub structs: Vec<CStruct>,
    /// `typedef int32_t hcp_status;` and the function pointer typedef: (name, Rust type).
    pub typedefs: Vec<(String, String)>,
    /// `typedef struct hcp_topology hcp_topology;`
    pub opaque: Vec<String>,
    /// Every enumerator, in order: (name, name of its enum).
    pub enumerators: Vec<(String, String)>,
    /// Numeric and string `#define`s that are neither function-like nor _INIT initialisers: (name, value text).
    pub macros: Vec<(String, String)>,
    pub functions: Vec<CFunction>,
}

pub struct CStruct {
    pub name: String,
    /// (field name, Rust type)
    pub fields: Vec<(String, String)>,
}

pub struct CFunction {
    pub name: String,
    /// Rust types of the parameters.
    pub params: Vec<String>,
    /// Rust return type, "" for void.
    pub ret: String,
}

/// `capi/include/hcp/hcp.h` of this checkout, or the one under $HCP_INCLUDE_DIR.
pub fn include_dir() -> PathBuf {
    match std::env::var_os("HCP_INCLUDE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../capi/include"),
    }
}

pub fn read() -> Header {
    let path = include_dir().join("hcp/hcp.h");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {}", path.display(), e));
    parse(&text)
}

pub fn parse(text: &str) -> Header {
    let mut header = Header {
        structs: Vec::new(),
        typedefs: Vec::new(),
        opaque: Vec::new(),
        enumerators: Vec::new(),
        macros: Vec::new(),
        functions: Vec::new(),
    };
    let (code, defines) = split_preprocessor(&strip_comments(text));
    for define in defines {
        read_define(&define, &mut header);
    }
    for statement in statements(&code) {
        read_statement(&statement, &mut header);
    }
    header
}

/// The text without /* */ and // comments (the header has no comment markers inside strings).
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.map_or(true, |l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b..].find("*/").expect("unterminated comment") + b + 2;
                out.push(' ');
                rest = &rest[end..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = &rest[l..];
                rest = &rest[rest.find('\n').unwrap_or(rest.len())..];
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

/// Code lines (outside `#ifdef __cplusplus` blocks, which only open and close `extern "C"`) and the
/// `#define` lines, continuation lines joined.
fn split_preprocessor(text: &str) -> (String, Vec<String>) {
    let joined = text.replace("\\\n", " ");
    let mut code = String::new();
    let mut defines = Vec::new();
    let mut in_cplusplus = false;
    for line in joined.lines() {
        let trimmed = line.trim();
        if trimmed == "#ifdef __cplusplus" {
            in_cplusplus = true;
        } else if in_cplusplus {
            if trimmed == "#endif" {
                in_cplusplus = false;
            }
        } else if let Some(define) = trimmed.strip_prefix("#define ") {
            defines.push(define.trim().to_string());
        } else if !trimmed.starts_with('#') {
            code.push_str(line);
            code.push('\n');
        }
    }
    (code, defines)
}

fn read_define(define: &str, header: &mut Header) {
    let (name, value) = match define.find(char::is_whitespace) {
        Some(i) => (&define[..i], define[i..].trim()),
        None => (define, ""),
    };
    let skipped = name.contains('(') || name.ends_with("_INIT") || name == "HCP_API" || name == "HCP_HCP_H";
    if !skipped && !value.is_empty() {
        header.macros.push((name.to_string(), value.to_string()));
    }
}

/// Top-level statements: the text split at ';' outside braces, whitespace collapsed.
fn statements(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut depth = 0;
    for c in code.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ => {}
        }
        if c == ';' && depth == 0 {
            out.push(collapse(&current));
            current.clear();
        } else {
            current.push(c);
        }
    }
    assert!(collapse(&current).is_empty(), "text after the last statement: {:?}", current.trim());
    out
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn read_statement(statement: &str, header: &mut Header) {
    if let Some(rest) = statement.strip_prefix("HCP_API ") {
        header.functions.push(read_function(rest));
    } else if let Some(rest) = statement.strip_prefix("enum ") {
        let enum_name = rest[..rest.find('{').expect("an enum body")].trim().to_string();
        for item in between(rest, '{', '}').split(',').map(str::trim).filter(|s| !s.is_empty()) {
            header.enumerators.push((item.split('=').next().unwrap().trim().to_string(), enum_name.clone()));
        }
    } else if let Some(rest) = statement.strip_prefix("typedef struct ") {
        if rest.contains('{') {
            header.structs.push(read_struct(rest));
        } else {
            let words: Vec<&str> = rest.split(' ').collect();
            assert!(words.len() == 2 && words[0] == words[1], "unexpected typedef: {}", statement);
            header.opaque.push(words[0].to_string());
        }
    } else if let Some(rest) = statement.strip_prefix("typedef ") {
        header.typedefs.push(read_typedef(rest));
    } else {
        panic!("a statement of hcp.h this reader does not know: {:?}", statement);
    }
}

fn between(text: &str, open: char, close: char) -> &str {
    let start = text.find(open).unwrap_or_else(|| panic!("no {:?} in {:?}", open, text)) + 1;
    let end = text.rfind(close).unwrap_or_else(|| panic!("no {:?} in {:?}", close, text));
    &text[start..end]
}

fn read_struct(rest: &str) -> CStruct {
    let name = rest[..rest.find('{').unwrap()].trim().to_string();
    let after = rest[rest.rfind('}').unwrap() + 1..].trim();
    assert_eq!(after, name, "typedef struct {} {{...}} names another type", name);
    let fields = between(rest, '{', '}')
        .split(';')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| declarator(f, false))
        .collect();
    CStruct { name, fields }
}

/// `int32_t hcp_status` or the function pointer `void (*hcp_log_fn)(int32_t level, ...)`.
fn read_typedef(rest: &str) -> (String, String) {
    if let Some(star) = rest.find("(*") {
        let ret = rust_return(rest[..star].trim());
        let name = rest[star + 2..rest.find(')').unwrap()].trim().to_string();
        let params = parameters(between(&rest[rest.find(')').unwrap() + 1..], '(', ')'));
        let arrow = if ret.is_empty() { String::new() } else { format!(" -> {}", ret) };
        return (name, format!("Option<unsafe extern \"C\" fn({}){}>", params.join(", "), arrow));
    }
    declarator(rest, false)
}

fn read_function(rest: &str) -> CFunction {
    let open = rest.find('(').unwrap_or_else(|| panic!("no parameter list: {}", rest));
    let head: Vec<&str> = tokens(&rest[..open]);
    let name = head.last().expect("a function name").to_string();
    let ret = rust_return(&head[..head.len() - 1].join(" "));
    CFunction { name, params: parameters(between(&rest[open..], '(', ')')), ret }
}

fn parameters(list: &str) -> Vec<String> {
    if list.trim() == "void" {
        return Vec::new();
    }
    list.split(',').map(|p| declarator(p.trim(), true).1).collect()
}

fn rust_return(c_type: &str) -> String {
    if c_type.trim() == "void" {
        String::new()
    } else {
        rust_type(&tokens(c_type), None)
    }
}

/// (name, Rust type) of `const char* const* overrides`, `int64_t shape[4]` or, as a parameter (where an array is
/// a pointer), `uint8_t out_id[HCP_NCCL_UNIQUE_ID_BYTES]`.
fn declarator(text: &str, parameter: bool) -> (String, String) {
    let (text, array) = match text.find('[') {
        Some(i) => (&text[..i], Some(text[i + 1..text.rfind(']').unwrap()].trim())),
        None => (text, None),
    };
    let toks = tokens(text);
    let (name, ty) = toks.split_last().unwrap_or_else(|| panic!("empty declaration"));
    let rust = match array {
        Some(_) if parameter => {
            let mut with_pointer = ty.to_vec();
            with_pointer.push("*");
            rust_type(&with_pointer, None)
        }
        Some(len) => rust_type(ty, Some(len)),
        None => rust_type(ty, None),
    };
    (name.to_string(), rust)
}

/// Words and '*' of a C type.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for word in text.split_whitespace() {
        let mut rest = word;
        while !rest.is_empty() {
            match rest.find('*') {
                Some(0) => {
                    out.push("*");
                    rest = &rest[1..];
                }
                Some(i) => {
                    out.push(&rest[..i]);
                    rest = &rest[i..];
                }
                None => {
                    out.push(rest);
                    rest = "";
                }
            }
        }
    }
    out
}

/// The Rust spelling of a C type given as tokens (`const char * const *` is `*const *const c_char`): a pointer is
/// `*const` when what it points to is const, so each '*' takes the const-ness written before it.
fn rust_type(toks: &[&str], array: Option<&str>) -> String {
    let mut base: Option<&str> = None;
    let mut pointee_const = false;
    let mut pointers: Vec<bool> = Vec::new(); // per '*': whether the pointer itself is const (the next pointee)
    for &t in toks {
        match t {
            "*" => pointers.push(false),
            "const" => match pointers.last_mut() {
                Some(last) => *last = true,
                None => pointee_const = true,
            },
            word => {
                assert!(base.is_none() && pointers.is_empty(), "unexpected type {:?}", toks);
                base = Some(word);
            }
        }
    }
    let base = base.unwrap_or_else(|| panic!("no base type in {:?}", toks));
    let mut ty = rust_base(base, !pointers.is_empty()).to_string();
    for pointer_const in pointers {
        ty = format!("*{} {}", if pointee_const { "const" } else { "mut" }, ty);
        pointee_const = pointer_const;
    }
    match array {
        Some(len) => format!("[{}; {}]", ty, len),
        None => ty,
    }
}

fn rust_base(c: &str, behind_pointer: bool) -> &str {
    match c {
        "void" if behind_pointer => "c_void",
        "char" => "c_char",
        "unsigned" => "c_uint",
        "float" => "f32",
        "double" => "f64",
        "size_t" => "usize",
        "int32_t" => "i32",
        "int64_t" => "i64",
        "uint8_t" => "u8",
        "uint32_t" => "u32",
        "uint64_t" => "u64",
        hcp if hcp.starts_with("hcp_") => hcp,
        other => panic!("no Rust spelling for the C type {:?}", other),
    }
}

/// A type as written in Rust, whitespace removed, to compare spellings that differ only in spacing.
pub fn squash(ty: &str) -> String {
    // Without whitespace, and without the trailing comma rustfmt leaves in a generic argument list it wrapped.
    let s: String = ty.chars().filter(|c| !c.is_whitespace()).collect();
    s.replace(",>", ">")
}
