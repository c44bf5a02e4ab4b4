//! lint_text and lint_file: a config with a known finding, options that change the findings, renderings, and the
//! errors of unreadable or unparsable inputs.

mod common;

use hcp::{lint_file, lint_text, LintOptions, Severity, Status};

/// a2a+p2p without hierarchical sizes: CP is silently off (HCP001 on line 3).
const SILENTLY_OFF: &str = "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\n";

#[test]
fn text_gives_the_known_finding() {
    let options = LintOptions { te_version: Some("2.4.0".into()), ..LintOptions::default() };
    let report = lint_text(SILENTLY_OFF, Some("cfg.toml"), &options).unwrap();
    let diags = report.diagnostics().unwrap();
    let first = diags.iter().find(|d| d.code == "HCP001").expect("HCP001");
    assert_eq!((first.severity, first.file.as_str(), first.line, first.col), (Severity::Error, "cfg.toml", 3, 1));
    assert!(first.message.contains("silently"), "{}", first.message);
    assert_eq!(first.rule, "a2a-p2p-without-sizes");
    assert!(!first.hint.is_empty());
    assert!(first.to_string().starts_with("cfg.toml:3:1: error[HCP001]:"), "{}", first);
    assert_eq!(report.len().unwrap(), diags.len());
}

#[test]
fn a_broken_example_file() {
    let path = common::repo_root().join("examples/configs/broken/cp_silently_off.yaml");
    let diags = lint_file(&path, &LintOptions::default()).unwrap().diagnostics().unwrap();
    let codes: Vec<&str> = diags.iter().filter(|d| d.severity == Severity::Error).map(|d| d.code.as_str()).collect();
    assert_eq!(codes, ["HCP001"]);
    assert_eq!((diags[0].line, diags[0].col), (5, 3));
    assert!(diags[0].file.ends_with("cp_silently_off.yaml"));
}

#[test]
fn options_select_override_and_change_severities() {
    let good = common::repo_root().join("examples/configs/good/hcp_bridge.toml");
    let clean = lint_file(&good, &LintOptions::default()).unwrap().diagnostics().unwrap();
    assert!(clean.iter().all(|d| d.severity == Severity::Info), "{:?}", clean);

    let overridden = LintOptions {
        overrides: vec!["model.hierarchical_context_parallel_sizes=[2,2]".into()],
        select: Some("HCP002".into()),
        ..LintOptions::default()
    };
    let codes: Vec<String> =
        lint_file(&good, &overridden).unwrap().diagnostics().unwrap().into_iter().map(|d| d.code).collect();
    assert_eq!(codes, ["HCP002"]);

    let demoted = LintOptions {
        severities: Some("HCP001=warning".into()),
        select: Some("HCP001".into()),
        ..LintOptions::default()
    };
    let diags = lint_text(SILENTLY_OFF, Some("x.toml"), &demoted).unwrap().diagnostics().unwrap();
    assert_eq!(diags.iter().map(|d| d.severity).collect::<Vec<_>>(), [Severity::Warning]);

    let megatron = LintOptions { input_format: Some("megatron".into()), ..LintOptions::default() };
    let diags = lint_text("--context-parallel-size 4 --cp-comm-type a2a+p2p\n", None, &megatron).unwrap();
    assert!(diags.diagnostics().unwrap().iter().any(|d| d.code == "HCP001"));
}

#[test]
fn renderings() {
    let report = lint_text(SILENTLY_OFF, Some("cfg.toml"), &LintOptions::default()).unwrap();
    assert!(report.render("json").unwrap().contains("\"code\": \"HCP001\""));
    assert!(report.render("sarif").unwrap().contains("\"version\": \"2.1.0\""));
    assert!(report.render("github").unwrap().contains("::error file=cfg.toml,line=3,col=1"));
    assert!(report.render("text").unwrap().contains("HCP001"));
    let e = report.render("xml").unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    // A failure on a report is left on it, and readable from another thread (LintReport is Sync).
    let on_handle = std::thread::scope(|s| s.spawn(|| report.last_error().unwrap()).join().unwrap());
    assert_eq!(on_handle, e.message);
}

#[test]
fn unreadable_unparsable_and_invalid_inputs() {
    let none = LintOptions::default();
    assert_eq!(lint_file("/no/such/file.toml", &none).err().unwrap().status, Status::Io);
    assert_eq!(lint_file(std::env::temp_dir(), &none).err().unwrap().status, Status::Io); // a directory
    let parse = lint_text("[model\n", Some("bad.toml"), &none).err().unwrap();
    assert_eq!(parse.status, Status::Parse);
    assert!(parse.message.contains("bad.toml:1:"), "{}", parse.message);
    let unknown_rule = LintOptions { select: Some("HCP999".into()), ..LintOptions::default() };
    assert_eq!(lint_text(SILENTLY_OFF, None, &unknown_rule).err().unwrap().status, Status::InvalidArgument);
    let negative = LintOptions { gpus_per_node: Some(-1), ..LintOptions::default() };
    assert_eq!(lint_text(SILENTLY_OFF, None, &negative).err().unwrap().status, Status::InvalidArgument);
    // A NUL inside a C string argument is refused by the binding, which says which argument.
    let nul = LintOptions { gpu: Some("h1\0".into()), ..LintOptions::default() };
    let e = lint_text(SILENTLY_OFF, None, &nul).err().unwrap();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("gpu"), "{}", e.message);
}
