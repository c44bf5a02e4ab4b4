//! Topology against known layouts: the issue's example, Megatron's own groups (shared/fixtures), locality, JSON,
//! queries from several threads at once, and the errors of bad configs and queries.

mod common;

use common::json::Json;
use hcp::{GroupKind, Order, ParallelConfig, Status, Topology};

fn issue_example() -> Topology {
    Topology::new(&ParallelConfig::new(16).tp(2).cp(4).hcp_sizes(&[2, 2])).unwrap()
}

#[test]
fn the_issue_example() {
    let t = issue_example();
    assert_eq!(t.dp().unwrap(), 2);
    assert_eq!(t.num_levels().unwrap(), 2);
    assert_eq!(
        t.groups(GroupKind::Cp, 0).unwrap(),
        vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7], vec![8, 10, 12, 14], vec![9, 11, 13, 15]]
    );
    assert_eq!(t.group_of(5, GroupKind::Hcp, 0).unwrap(), vec![5, 7]);
    assert_eq!(t.group_of(5, GroupKind::Hcp, 1).unwrap(), vec![1, 5]);
    let m = t.membership(5, GroupKind::Hcp, 1).unwrap();
    assert_eq!((m.group_index, m.rank_in_group), (2, 1));
    let c = t.coords(5).unwrap();
    assert_eq!((c.tp, c.cp, c.dp, c.pp), (1, 2, 0, 0));
    let size = t.group_size(GroupKind::Cp, 0).unwrap();
    assert_eq!((size.size, size.count), (4, 4));
}

#[test]
fn json_of_the_layout_and_of_a_rank() {
    let t = issue_example();
    let whole = Json::parse(&t.to_json(None).unwrap());
    assert_eq!(whole.get("hcp_groups").as_array()[0].int_lists(), t.groups(GroupKind::Hcp, 0).unwrap());
    assert_eq!(whole.get("locality").as_array()[0].get("intra_node"), &Json::Bool(true));
    let rank5 = Json::parse(&t.to_json(Some(5)).unwrap());
    assert_eq!(rank5.get("groups").get("hcp").as_array()[0].get("ranks").ints(), vec![5, 7]);
    assert_eq!(t.to_json(Some(-1)).unwrap_err().status, Status::InvalidArgument);
}

fn order_of(name: &str) -> Order {
    match name {
        "tp-cp-ep-dp-pp" => Order::TpCpEpDpPp,
        "tp-cp-ep-pp-dp" => Order::TpCpEpPpDp,
        other => panic!("unknown order {}", other),
    }
}

const FLAT_KINDS: [(&str, GroupKind); 8] = [
    ("cp_groups", GroupKind::Cp),
    ("tp_groups", GroupKind::Tp),
    ("dp_groups", GroupKind::Dp),
    ("pp_groups", GroupKind::Pp),
    ("dp_cp_groups", GroupKind::DpCp),
    ("tp_cp_groups", GroupKind::TpCp),
    ("mp_groups", GroupKind::Mp),
    ("tp_dp_cp_groups", GroupKind::TpDpCp),
];

#[test]
fn matches_megatrons_layouts() {
    let path = common::fixtures_dir().join("megatron_layouts.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e));
    let cases: Vec<Json> = text.lines().filter(|l| !l.trim().is_empty()).map(Json::parse).collect();
    assert!(cases.len() >= 10, "only {} layouts in {}", cases.len(), path.display());
    for case in &cases {
        let mut config = ParallelConfig::new(case.get("world_size").as_i64())
            .tp(case.get("tp").as_i64())
            .pp(case.get("pp").as_i64())
            .cp(case.get("cp").as_i64())
            .ep(case.get("ep").as_i64())
            .order(order_of(case.get("order").as_str()));
        if *case.get("hcp_sizes") != Json::Null {
            config = config.hcp_sizes(&case.get("hcp_sizes").ints());
        }
        let t = Topology::new(&config).unwrap_or_else(|e| panic!("{:?}: {}", config, e));
        assert_eq!(t.dp().unwrap(), case.get("dp").as_i64(), "{:?}", config);
        for (key, kind) in FLAT_KINDS {
            assert_eq!(t.groups(kind, 0).unwrap(), case.get(key).int_lists(), "{} of {:?}", key, config);
        }
        let levels: Vec<Vec<Vec<i64>>> =
            (0..t.num_levels().unwrap()).map(|l| t.groups(GroupKind::Hcp, l).unwrap()).collect();
        let expected: Vec<Vec<Vec<i64>>> = case.get("hcp_groups").as_array().iter().map(Json::int_lists).collect();
        assert_eq!(levels, expected, "hcp groups of {:?}", config);
    }
}

#[test]
fn locality_of_hierarchical_levels() {
    let big = Topology::new(&ParallelConfig::new(131072).tp(8).pp(8).cp(16).hcp_sizes(&[2, 8])).unwrap();
    let l = big.locality(GroupKind::Hcp, 0).unwrap();
    assert!(!l.intra_node());
    assert_eq!(l.groups_crossing_nodes, 65536);
    let small = Topology::new(&ParallelConfig::new(32).tp(2).cp(8).hcp_sizes(&[4, 2])).unwrap();
    assert!(small.locality(GroupKind::Hcp, 0).unwrap().intra_node());
    // gpus_per_node reaches the library: with nodes of 2, the same groups cross nodes.
    let narrow = Topology::new(&ParallelConfig::new(32).tp(2).cp(8).hcp_sizes(&[4, 2]).gpus_per_node(2)).unwrap();
    assert!(!narrow.locality(GroupKind::Hcp, 0).unwrap().intra_node());
}

#[test]
fn queries_from_several_threads_at_once() {
    // Topology is Sync: scoped threads share one.
    let t = Topology::new(&ParallelConfig::new(1024).tp(8).cp(16).hcp_sizes(&[2, 8])).unwrap();
    let wrong: Vec<i64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|offset| {
                let t = &t;
                s.spawn(move || {
                    (offset..1024)
                        .step_by(4)
                        .filter(|&r| !t.group_of(r, GroupKind::Hcp, 1).unwrap().contains(&r))
                        .collect::<Vec<i64>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(wrong.is_empty(), "ranks missing from their own group: {:?}", wrong);
}

#[test]
fn invalid_configs_name_the_condition() {
    let e = Topology::new(&ParallelConfig::new(8).pp(2).cp(3)).err().unwrap();
    assert_eq!(e.status, Status::InvalidConfig);
    assert!(e.message.contains("world_size (8) is not divisible by tp * pp * cp (1 * 2 * 3 = 6)"), "{}", e.message);
    let e = Topology::new(&ParallelConfig::new(8).cp(8).hcp_sizes(&[2, 2])).err().unwrap();
    assert!(e.message.contains("(=4) must equal context-parallel size (=8)"), "{}", e.message);
    let ep = Topology::new(&ParallelConfig::new(8).cp(2).ep(2)).err().unwrap();
    assert_eq!(ep.status, Status::InvalidConfig);
    let order = Topology::new(&ParallelConfig::new(16).pp(2).cp(2).order(Order::TpCpEpPpDp)).err().unwrap();
    assert_eq!(order.status, Status::InvalidConfig);
}

#[test]
fn bad_queries_give_their_status_and_stay_on_the_handle() {
    let flat = Topology::new(&ParallelConfig::new(4).cp(4)).unwrap();
    assert_eq!(flat.groups(GroupKind::Hcp, 0).unwrap_err().status, Status::NotFound);
    let t = Topology::new(&ParallelConfig::new(4).cp(4).hcp_sizes(&[2, 2])).unwrap();
    assert_eq!(t.last_error().unwrap(), "");
    let e = t.group_of(4, GroupKind::Cp, 0).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("rank 4 out of range [0, 4)"), "{}", e.message);
    assert_eq!(t.groups(GroupKind::Hcp, 2).unwrap_err().status, Status::InvalidArgument);
    assert_eq!(t.coords(-1).unwrap_err().status, Status::InvalidArgument);
    // The handle keeps the message of its last failure, readable from another thread.
    let on_handle = std::thread::scope(|s| s.spawn(|| t.last_error().unwrap()).join().unwrap());
    assert!(on_handle.contains("hcp_topology_coords"), "{}", on_handle);
}

#[test]
fn json_reader_of_these_tests() {
    let v = Json::parse(r#"{"a": [1, -2, 3.5e1], "b": {"c": "x\"y\u0041"}, "d": [true, false, null], "e": []}"#);
    assert_eq!(v.get("a").as_array()[1].as_i64(), -2);
    assert_eq!(v.get("a").as_array()[2], Json::Number(35.0));
    assert_eq!(v.get("b").get("c").as_str(), "x\"yA");
    assert_eq!(v.get("d").as_array(), &[Json::Bool(true), Json::Bool(false), Json::Null]);
    assert!(v.get("e").as_array().is_empty() && !v.has("z"));
}
