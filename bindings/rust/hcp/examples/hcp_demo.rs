//! A tour of the binding: the hierarchical CP groups of a 16-GPU job, a config that silently disables CP, and
//! CP attention simulated on 4 in-process ranks.
//!
//!     cargo run --example hcp_demo

use hcp::{attention_simulate, AttnShape, CpComm, GroupKind, LintOptions, ParallelConfig, SimulateOptions, Topology};

const CONFIG: &str = "[model]\ncontext_parallel_size = 4\ncp_comm_type = \"a2a+p2p\"\n";

fn main() -> hcp::Result<()> {
    println!("libhcp {} (header {})", hcp::version(), hcp::header_version());

    let config = ParallelConfig::new(16).tp(2).cp(4).hcp_sizes(&[2, 2]);
    let topology = Topology::new(&config)?;
    println!("\nworld 16, tp 2, cp 4, hcp_sizes [2, 2]: dp {}", topology.dp()?);
    println!("  CP groups: {:?}", topology.groups(GroupKind::Cp, 0)?);
    for level in 0..topology.num_levels()? {
        let locality = topology.locality(GroupKind::Hcp, level)?;
        println!(
            "  level {} groups: {:?} ({})",
            level,
            topology.groups(GroupKind::Hcp, level)?,
            if locality.intra_node() { "inside one node" } else { "crossing nodes" }
        );
    }

    println!("\nlint of cfg.toml:");
    let report = hcp::lint_text(CONFIG, Some("cfg.toml"), &LintOptions::default())?;
    for d in report.diagnostics()? {
        println!("  {}", d);
        if !d.hint.is_empty() {
            println!("    help: {}", d.hint);
        }
    }

    // B 1, S 32, H 4, D 16 on 4 ranks with the hierarchical a2a+p2p scheme.
    let shape = AttnShape::new(1, 32, 4, 4, 16);
    let n = shape.q_len()?;
    let q: Vec<f32> = (0..n).map(|i| ((i * 7 % 13) as f32 / 13.0) - 0.5).collect();
    let k: Vec<f32> = (0..n).map(|i| ((i * 5 % 11) as f32 / 11.0) - 0.5).collect();
    let v: Vec<f32> = (0..n).map(|i| (i % 17) as f32 / 17.0).collect();
    let mut out = vec![0.0f32; n];
    let mut lse = vec![0.0f32; shape.lse_len()?];
    let options = SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]);
    attention_simulate(&options, &shape, &q, &k, &v, &mut out, &mut lse, None)?;
    let mean = out.iter().sum::<f32>() / n as f32;
    println!("\nCP attention on 4 ranks (a2a+p2p [2, 2]): out[0..4] = {:?}, mean {:.4}", &out[..4], mean);
    Ok(())
}
