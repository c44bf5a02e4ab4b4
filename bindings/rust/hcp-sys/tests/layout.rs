//! The Rust declarations against hcp.h as a C compiler sees it: a C program generated from the header's own
//! structs, typedefs, enumerators and macros prints every size, alignment, offset and value; each must equal the
//! Rust one, and each name must exist on both sides. A field, struct, typedef or constant added to hcp.h without its
//! Rust counterpart fails here, as does a Rust type whose spelling does not match the C type.

mod common;

use common::header::{self, squash, Header};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

/// Lines the C program prints, by kind then name: "struct S" -> [size, align], "field S.f" -> [offset, size], ...
type CFacts = BTreeMap<String, Vec<String>>;

fn c_program(h: &Header) -> String {
    let mut p = String::from("#include <stddef.h>\n#include <stdio.h>\n#include \"hcp/hcp.h\"\n\nint main(void) {\n");
    for s in &h.structs {
        p += &format!("  printf(\"struct {0} %zu %zu\\n\", sizeof({0}), (size_t)_Alignof({0}));\n", s.name);
        for (field, _) in &s.fields {
            p += &format!(
                "  printf(\"field {0}.{1} %zu %zu\\n\", offsetof({0}, {1}), sizeof((({0}*)0)->{1}));\n",
                s.name, field
            );
        }
    }
    for (name, _) in &h.typedefs {
        p += &format!("  printf(\"typedef {0} %zu\\n\", sizeof({0}));\n", name);
    }
    for (name, _) in &h.enumerators {
        p += &format!("  printf(\"constant {0} %lld\\n\", (long long)({0}));\n", name);
    }
    for (name, value) in &h.macros {
        if value.contains('"') {
            p += &format!("  printf(\"string {0} %s\\n\", {0});\n", name);
        } else {
            p += &format!("  printf(\"constant {0} %lld\\n\", (long long)({0}));\n", name);
        }
    }
    p + "  return 0;\n}\n"
}

fn run_c_program(source: &str) -> CFacts {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hcp-sys-layout");
    std::fs::create_dir_all(&dir).unwrap();
    let c_file = dir.join("layout.c");
    let exe = dir.join("layout");
    std::fs::write(&c_file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let include = header::include_dir();
    let compiled = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(&include)
        .arg(&c_file)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {}", cc, e));
    assert!(
        compiled.status.success(),
        "{} failed on {}:\n{}",
        cc,
        c_file.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );
    let ran = Command::new(&exe).output().unwrap();
    assert!(ran.status.success());
    let mut facts = CFacts::new();
    for line in String::from_utf8(ran.stdout).unwrap().lines() {
        let words: Vec<&str> = line.split(' ').collect();
        let key = format!("{} {}", words[0], words[1]);
        facts.insert(key, words[2..].iter().map(|w| w.to_string()).collect());
    }
    facts
}

fn number(facts: &CFacts, key: &str, index: usize) -> i64 {
    let values = facts.get(key).unwrap_or_else(|| panic!("the C program printed no {:?}", key));
    values[index].parse().unwrap()
}

fn same_names<'a>(
    what: &str,
    c: impl IntoIterator<Item = &'a str>,
    rust: impl IntoIterator<Item = &'a str>,
) -> Vec<String> {
    let c: BTreeSet<&str> = c.into_iter().collect();
    let rust: BTreeSet<&str> = rust.into_iter().collect();
    let mut problems = Vec::new();
    for missing in c.difference(&rust) {
        problems.push(format!("{} {} is in hcp.h but not declared in hcp-sys", what, missing));
    }
    for extra in rust.difference(&c) {
        problems.push(format!("{} {} is declared in hcp-sys but not in hcp.h", what, extra));
    }
    problems
}

#[test]
fn rust_declarations_match_the_c_compiler() {
    let h = header::read();
    let facts = run_c_program(&c_program(&h));
    let mut problems = Vec::new();

    let rust_structs = hcp_sys::declared_structs();
    problems.extend(same_names(
        "struct",
        h.structs.iter().map(|s| s.name.as_str()),
        rust_structs.iter().map(|s| s.name),
    ));
    for c in &h.structs {
        let rust = match rust_structs.iter().find(|r| r.name == c.name) {
            Some(r) => r,
            None => continue,
        };
        let key = format!("struct {}", c.name);
        if rust.size as i64 != number(&facts, &key, 0) || rust.align as i64 != number(&facts, &key, 1) {
            problems.push(format!("{}: Rust size/align {}/{}, C {:?}", c.name, rust.size, rust.align, facts[&key]));
        }
        let c_fields: Vec<&str> = c.fields.iter().map(|f| f.0.as_str()).collect();
        let rust_fields: Vec<&str> = rust.fields.iter().map(|f| f.name).collect();
        if c_fields != rust_fields {
            problems.push(format!("{}: fields in C {:?}, in Rust {:?}", c.name, c_fields, rust_fields));
            continue;
        }
        for ((name, c_type), r) in c.fields.iter().zip(&rust.fields) {
            let key = format!("field {}.{}", c.name, name);
            let (offset, size) = (number(&facts, &key, 0), number(&facts, &key, 1));
            if r.offset as i64 != offset || r.size as i64 != size {
                problems.push(format!(
                    "{}.{}: Rust offset/size {}/{}, C {}/{}",
                    c.name, name, r.offset, r.size, offset, size
                ));
            }
            if squash(r.ty) != squash(c_type) {
                problems.push(format!("{}.{}: Rust type {}, hcp.h says {}", c.name, name, r.ty, c_type));
            }
        }
    }

    let rust_typedefs = hcp_sys::declared_typedefs();
    problems.extend(same_names(
        "typedef",
        h.typedefs.iter().map(|t| t.0.as_str()),
        rust_typedefs.iter().map(|t| t.name),
    ));
    for (name, c_type) in &h.typedefs {
        if let Some(r) = rust_typedefs.iter().find(|r| r.name == name) {
            if squash(r.ty) != squash(c_type) {
                problems.push(format!("typedef {}: Rust {}, hcp.h says {}", name, r.ty, c_type));
            }
            if r.size as i64 != number(&facts, &format!("typedef {}", name), 0) {
                problems.push(format!("typedef {}: Rust size {} differs from C's", name, r.size));
            }
        }
    }

    problems.extend(same_names(
        "opaque type",
        h.opaque.iter().map(|s| s.as_str()),
        hcp_sys::DECLARED_OPAQUE_TYPES.iter().copied(),
    ));

    let rust_constants = hcp_sys::declared_constants();
    let numeric_macros: Vec<&str> = h.macros.iter().filter(|m| !m.1.contains('"')).map(|m| m.0.as_str()).collect();
    problems.extend(same_names(
        "constant",
        h.enumerators.iter().map(|e| e.0.as_str()).chain(numeric_macros.iter().copied()),
        rust_constants.iter().map(|c| c.name),
    ));
    for r in &rust_constants {
        let key = format!("constant {}", r.name);
        if facts.contains_key(&key) && r.value != number(&facts, &key, 0) {
            problems.push(format!("{} is {} in Rust, {} in C", r.name, r.value, facts[&key][0]));
        }
        // An enumerator has the type of its enum's int32_t typedef: hcp_status_code -> hcp_status.
        if let Some((_, enum_name)) = h.enumerators.iter().find(|e| e.0 == r.name) {
            let typedef = enum_name.trim_end_matches("_value").trim_end_matches("_code");
            if r.ty != typedef {
                problems.push(format!(
                    "{} has Rust type {}, its enum {} is passed as {}",
                    r.name, r.ty, enum_name, typedef
                ));
            }
        }
    }
    let c_version = facts.get("string HCP_VERSION_STRING").map(|v| v.join(" "));
    if c_version.as_deref() != Some(hcp_sys::HCP_VERSION_STRING) {
        problems.push(format!("HCP_VERSION_STRING is {:?} in Rust, {:?} in C", hcp_sys::HCP_VERSION_STRING, c_version));
    }

    assert!(problems.is_empty(), "hcp-sys differs from hcp.h:\n  {}", problems.join("\n  "));
    // The comparison saw the whole header (a reader that found nothing would pass the checks above vacuously).
    assert!(
        h.structs.len() >= 11 && h.enumerators.len() >= 40 && h.typedefs.len() >= 9,
        "header reader found too little"
    );
}

#[test]
fn the_header_reader_spells_pointers_like_rust() {
    let h = header::parse(
        "typedef struct x { const char* const* a; int64_t b[4]; void* c; } x;\n\
         HCP_API hcp_status f(char** out, const uint8_t id[16], const char** v);\n\
         HCP_API void g(void);\n",
    );
    let types: Vec<&str> = h.structs[0].fields.iter().map(|f| f.1.as_str()).collect();
    assert_eq!(types, ["*const *const c_char", "[i64; 4]", "*mut c_void"]);
    assert_eq!(h.functions[0].params, ["*mut *mut c_char", "*const u8", "*mut *const c_char"]);
    assert_eq!((h.functions[1].ret.as_str(), h.functions[1].params.len()), ("", 0));
}
