use hcp::{plan, ParallelConfig, PlanOptions, Status, Topology};

fn llama70b() -> PlanOptions {
    PlanOptions {
        model: Some("llama3-70b".into()),
        seq: 131072,
        nodes: 16,
        gpu: Some("h100".into()),
        te_version: Some("2.4.0".into()),
        full_recompute: true,
        ..Default::default()
    }
}

#[test]
fn plan_ranks_and_explains() {
    let text = plan(&llama70b(), "text", 3).unwrap();
    assert!(text.contains("verdict: tp 2, pp 4, cp 16 p2p wins"), "{}", text);
    let json = plan(&llama70b(), "json", 0).unwrap();
    assert!(json.contains("\"code\": \"HCP009\""));
    let html = plan(&llama70b(), "html", 5).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
}

#[test]
fn plan_refuses_what_describes_no_problem() {
    let mut o = llama70b();
    o.seq = 0;
    let e = plan(&o, "text", 0).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("options.seq is required"), "{}", e.message);
    assert_eq!(plan(&llama70b(), "pdf", 0).unwrap_err().status, Status::InvalidArgument);
    let mut bad = llama70b();
    bad.gpu = Some("h9\0".into());
    assert_eq!(plan(&bad, "text", 0).unwrap_err().status, Status::InvalidArgument);
}

#[test]
fn topology_draws_its_layout() {
    let c = ParallelConfig::new(32).tp(2).cp(8).hcp_sizes(&[4, 2]);
    let t = Topology::new(&c).unwrap();
    let svg = t.to_svg(None).unwrap();
    assert_eq!(svg.matches("class=\"ring ").count(), 16);
    assert_eq!(svg.matches("class=\"a2a ").count(), 8);
}
