//! Every `HCP_API` function of hcp.h is declared in hcp-sys with the same parameter and return types, and nothing
//! else is: a function added to the header without a Rust declaration fails here.

mod common;

use common::header::{self, squash};
use std::collections::BTreeSet;

#[test]
fn declared_functions_equal_the_header() {
    let h = header::read();
    let declared = hcp_sys::declared_functions();
    let c_names: BTreeSet<&str> = h.functions.iter().map(|f| f.name.as_str()).collect();
    let rust_names: BTreeSet<&str> = declared.iter().map(|f| f.name).collect();
    let missing: Vec<_> = c_names.difference(&rust_names).collect();
    let extra: Vec<_> = rust_names.difference(&c_names).collect();
    assert!(missing.is_empty() && extra.is_empty(), "in hcp.h only: {:?}; in hcp-sys only: {:?}", missing, extra);
    assert_eq!(declared.len(), rust_names.len(), "a function is declared twice");

    let mut problems = Vec::new();
    for c in &h.functions {
        let rust = declared.iter().find(|r| r.name == c.name).unwrap();
        let rust_params: Vec<String> = rust.params.iter().map(|p| squash(p)).collect();
        let c_params: Vec<String> = c.params.iter().map(|p| squash(p)).collect();
        if rust_params != c_params || squash(rust.ret) != squash(&c.ret) {
            problems.push(format!(
                "{}: Rust ({}) -> {:?}, hcp.h ({}) -> {:?}",
                c.name,
                rust.params.join(", "),
                rust.ret,
                c.params.join(", "),
                c.ret
            ));
        }
        // Taking the address made the linker resolve the symbol in libhcp.
        assert!(!rust.address.is_null(), "{} has no address", c.name);
    }
    assert!(problems.is_empty(), "signatures differ:\n  {}", problems.join("\n  "));
}

#[test]
fn the_reader_sees_every_hcp_api_line() {
    // A second, plainer count: declarations start a line with `HCP_API <ret> <name>(`; the #define of HCP_API
    // itself starts with '#'.
    let text = std::fs::read_to_string(header::include_dir().join("hcp/hcp.h")).unwrap();
    let lines: BTreeSet<String> = text
        .lines()
        .filter(|l| l.starts_with("HCP_API "))
        .map(|l| {
            let head = &l[..l.find('(').expect("HCP_API line without '('")];
            head.rsplit(&[' ', '*'][..]).next().unwrap().to_string()
        })
        .collect();
    let parsed: BTreeSet<String> = header::read().functions.into_iter().map(|f| f.name).collect();
    assert_eq!(lines, parsed);
    assert!(lines.len() >= 60, "only {} functions found in hcp.h", lines.len());
}
