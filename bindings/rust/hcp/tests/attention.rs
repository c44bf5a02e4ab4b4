//! CP attention: attention_simulate against a plain attention written here, the per-rank API on 2 and 4 threads
//! (over a World, and over collectives written here through CallbackComm) against attention_simulate's rows, bf16
//! and fp16, and misuse giving the documented status.

mod common;

use common::thread_collectives::{Group, ThreadCollectives};
use hcp::{
    attention_simulate, attention_simulate_with_max_logit, packed_rank_indices, AttnBias, AttnMask, AttnShape, Bf16, CallbackComm, Collectives, CpComm, CpContext,
    Device, Element, Gradients, PackedBatch, ParallelConfig, SimulateOptions, Softmax, Status, World, F16,
};
use std::time::{Duration, Instant};

// B 1, S 16, H 4, Hkv 2, D 8 (grouped-query: two q heads per kv head).
const B: i64 = 1;
const S: i64 = 16;
const H: i64 = 4;
const HKV: i64 = 2;
const D: i64 = 8;

/// Deterministic values in [-1, 1).
fn values(n: i64, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

struct Inputs {
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    dout: Vec<f32>,
}

fn inputs() -> Inputs {
    Inputs {
        q: values(B * S * H * D, 1),
        k: values(B * S * HKV * D, 2),
        v: values(B * S * HKV * D, 3),
        dout: values(B * S * H * D, 4),
    }
}

fn full_shape() -> AttnShape {
    AttnShape::new(B, S, H, HKV, D)
}

/// Single-rank causal attention with the default scale 1/sqrt(D), straight from the definition.
fn reference(x: &Inputs) -> Vec<f32> {
    reference_dv(x, D as usize)
}

/// The same with v's head dim `dv` (MLA).
fn reference_dv(x: &Inputs, dv: usize) -> Vec<f32> {
    let (s, h, hkv, d) = (S as usize, H as usize, HKV as usize, D as usize);
    let mut out = vec![0.0f32; s * h * dv];
    for hh in 0..h {
        let g = hh / (h / hkv);
        for i in 0..s {
            let scores: Vec<f64> = (0..=i)
                .map(|j| {
                    let dot: f64 =
                        (0..d).map(|t| (x.q[(i * h + hh) * d + t] * x.k[(j * hkv + g) * d + t]) as f64).sum();
                    dot / (d as f64).sqrt()
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::MIN, f64::max);
            let w: Vec<f64> = scores.iter().map(|sc| (sc - max).exp()).collect();
            let total: f64 = w.iter().sum();
            for t in 0..dv {
                let acc: f64 = (0..=i).map(|j| w[j] * x.v[(j * hkv + g) * dv + t] as f64).sum();
                out[(i * h + hh) * dv + t] = (acc / total) as f32;
            }
        }
    }
    out
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

struct Simulated {
    out: Vec<f32>,
    lse: Vec<f32>,
    dq: Vec<f32>,
    dk: Vec<f32>,
    dv: Vec<f32>,
}

/// Zeroed outputs of a full-sequence run of `x`.
fn outputs_for(x: &Inputs) -> Simulated {
    Simulated {
        out: vec![0.0; x.q.len()],
        lse: vec![0.0; full_shape().lse_len().unwrap()],
        dq: vec![0.0; x.q.len()],
        dk: vec![0.0; x.k.len()],
        dv: vec![0.0; x.v.len()],
    }
}

fn simulate(x: &Inputs, options: &SimulateOptions) -> Simulated {
    let shape = full_shape();
    let mut r = outputs_for(x);
    let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv);
    attention_simulate(options, &shape, &x.q, &x.k, &x.v, &mut r.out, &mut r.lse, Some(grads)).unwrap();
    r
}

/// The four schemes: a2a on 2 ranks, the others on 4 (a2a+p2p [2, 2]).
fn every_scheme() -> [SimulateOptions; 4] {
    [
        SimulateOptions::new(4).cp_comm(CpComm::P2p),
        SimulateOptions::new(2).cp_comm(CpComm::A2a),
        SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]),
        SimulateOptions::new(4).cp_comm(CpComm::AllGather),
    ]
}

#[test]
fn every_scheme_matches_the_reference() {
    let x = inputs();
    let want = reference(&x);
    let schemes = every_scheme();
    for options in &schemes {
        let got = simulate(&x, options);
        assert!(max_diff(&got.out, &want) < 1e-5, "{:?}", options.cp_comm);
        assert!(got.dq.iter().any(|&g| g != 0.0));
    }
    // Not causal is something else.
    let mut out = vec![0.0; x.q.len()];
    let mut lse = vec![0.0; full_shape().lse_len().unwrap()];
    attention_simulate(
        &SimulateOptions::new(2).causal(false),
        &full_shape(),
        &x.q,
        &x.k,
        &x.v,
        &mut out,
        &mut lse,
        None,
    )
    .unwrap();
    assert!(max_diff(&out, &want) > 1e-3);
}

#[test]
fn mla_head_dims_match_the_reference_under_every_scheme() {
    // v, out, dout and dv with head dim 4 beside q and k with 8: out against the reference, gradients against one
    // rank; lengths of q's head dim for v are refused before the library.
    const DV: i64 = 4;
    let mut x = inputs();
    x.v = values(B * S * HKV * DV, 3);
    x.dout = values(B * S * H * DV, 4);
    let want = reference_dv(&x, DV as usize);
    let shape = full_shape().with_head_dim_v(DV);
    assert_eq!(shape.value_dim(), DV);
    assert_eq!(full_shape().value_dim(), D);
    let run = |options: &SimulateOptions| {
        let mut r = Simulated {
            out: vec![0.0; shape.out_len().unwrap()],
            lse: vec![0.0; shape.lse_len().unwrap()],
            dq: vec![0.0; shape.q_len().unwrap()],
            dk: vec![0.0; shape.kv_len().unwrap()],
            dv: vec![0.0; shape.v_len().unwrap()],
        };
        let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv);
        attention_simulate(options, &shape, &x.q, &x.k, &x.v, &mut r.out, &mut r.lse, Some(grads)).unwrap();
        r
    };
    let one = run(&SimulateOptions::new(1));
    assert!(max_diff(&one.out, &want) < 1e-5);
    let schemes = every_scheme();
    for options in &schemes {
        let got = run(options);
        assert!(max_diff(&got.out, &want) < 1e-5, "{:?}", options.cp_comm);
        for (a, b) in [(&got.dq, &one.dq), (&got.dk, &one.dk), (&got.dv, &one.dv)] {
            assert!(max_diff(a, b) < 1e-5, "{:?}", options.cp_comm);
        }
    }
    let wide_v = values(B * S * HKV * D, 3);
    let mut out = vec![0.0; shape.out_len().unwrap()];
    let mut lse = vec![0.0; shape.lse_len().unwrap()];
    let err = attention_simulate(&SimulateOptions::new(1), &shape, &x.q, &x.k, &wide_v, &mut out, &mut lse, None)
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("v has 256 elements"), "{}", err.message);
}

#[test]
fn attention_bias_under_every_scheme_equals_one_rank_and_the_per_rank_api() {
    // A [1, H, S, S] bias (TE's 1hss): every scheme against one rank with its gradient; the per-rank API on two
    // threads with each rank's query rows of it; a gradient without a bias is refused.
    let x = inputs();
    let (s, h) = (S as usize, H as usize);
    let bias = AttnBias::new(values(H * S * S, 9).iter().map(|b| 2.0 * b).collect(), [1, H, S, S]);
    let run = |options: SimulateOptions| {
        let mut r = outputs_for(&x);
        let mut d_bias = vec![0.0f32; h * s * s];
        let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv).with_bias_gradient(&mut d_bias);
        attention_simulate(&options.bias(bias.clone()), &full_shape(), &x.q, &x.k, &x.v, &mut r.out, &mut r.lse,
                           Some(grads))
        .unwrap();
        (r, d_bias)
    };
    let (one, one_bias) = run(SimulateOptions::new(1));
    assert!(max_diff(&one.out, &reference(&x)) > 1e-3, "the bias changes the output");
    assert!(one_bias.iter().any(|&g| g != 0.0));
    let schemes = every_scheme();
    for options in schemes {
        let comm = options.cp_comm;
        let (got, got_bias) = run(options);
        for (a, b) in [(&got.out, &one.out), (&got.dq, &one.dq), (&got.dk, &one.dk), (&got.dv, &one.dv)] {
            assert!(max_diff(a, b) < 1e-5, "{:?}", comm);
        }
        assert!(max_diff(&got_bias, &one_bias) < 1e-5, "{:?}", comm);
    }
    // Per rank, p2p on two threads: each rank's rows of the bias, of its outputs and of the bias's gradient.
    let world = World::new(2, Duration::from_secs(20)).unwrap();
    let config = ParallelConfig::new(2).cp(2);
    let results: Vec<(Vec<usize>, Vec<f32>, Vec<f32>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2usize)
            .map(|r| {
                let (world, config, x, bias) = (&world, &config, &x, &bias);
                scope.spawn(move || {
                    let comm = world.comm(r as i32).unwrap();
                    let mut ctx = CpContext::new(&comm, config, CpComm::P2p).unwrap();
                    let rows = dual_chunk_rows(ctx.rank().unwrap().rank as usize, 2);
                    let mine: Vec<f32> = (0..h)
                        .flat_map(|hh| rows.iter().flat_map(move |&i| (0..s).map(move |j| (hh, i, j))))
                        .map(|(hh, i, j)| bias.values[(hh * s + i) * s + j])
                        .collect();
                    let n = rows.len() as i64;
                    let mask = AttnMask::causal(true).bias(AttnBias::new(mine, [1, H, n, S]));
                    let shape = AttnShape::new(B, n, H, HKV, D);
                    let (q, k, v) = (take_rows(&x.q, &rows, H), take_rows(&x.k, &rows, HKV), take_rows(&x.v, &rows, HKV));
                    let dout = take_rows(&x.dout, &rows, H);
                    let mut out = vec![0.0f32; q.len()];
                    let mut lse = vec![0.0f32; shape.lse_len().unwrap()];
                    ctx.forward_with(&shape, &mask, &q, &k, &v, &mut out, &mut lse).unwrap();
                    let (mut dq, mut dk, mut dv) = (vec![0.0f32; q.len()], vec![0.0f32; k.len()], vec![0.0f32; v.len()]);
                    let mut d_bias = vec![0.0f32; h * rows.len() * s];
                    ctx.backward_with_bias_gradient(&shape, &mask, &q, &k, &v, &out, &lse, &dout, &mut dq, &mut dk, &mut dv,
                                                    &mut d_bias)
                    .unwrap();
                    (rows, out, d_bias)
                })
            })
            .collect();
        handles.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (rows, out, d_bias) in &results {
        assert!(max_diff(out, &take_rows(&one.out, rows, H)) < 1e-5);
        for hh in 0..h {
            for (li, &gi) in rows.iter().enumerate() {
                for j in 0..s {
                    let (got, want) = (d_bias[(hh * rows.len() + li) * s + j], one_bias[(hh * s + gi) * s + j]);
                    assert!((got - want).abs() < 1e-5, "rank rows {:?} head {} row {} key {}", rows, hh, gi, j);
                }
            }
        }
    }
    let mut r = outputs_for(&x);
    let mut stray = vec![0.0f32; h * s * s];
    let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv).with_bias_gradient(&mut stray);
    let err = attention_simulate(&SimulateOptions::new(1), &full_shape(), &x.q, &x.k, &x.v, &mut r.out, &mut r.lse,
                                 Some(grads))
    .unwrap_err();
    assert!(err.message.contains("a bias gradient needs a bias"), "{}", err.message);
}

/// The global rows of rank r's dual chunks on `world` ranks: chunks r and 2W-1-r of length S/(2W).
fn dual_chunk_rows(r: usize, world: usize) -> Vec<usize> {
    let chunk = S as usize / (2 * world);
    let second = 2 * world - 1 - r;
    (r * chunk..(r + 1) * chunk).chain(second * chunk..(second + 1) * chunk).collect()
}

/// Rows of a [1, S, heads, D] tensor.
fn take_rows(t: &[f32], rows: &[usize], heads: i64) -> Vec<f32> {
    let width = (heads * D) as usize;
    rows.iter().flat_map(|&i| t[i * width..(i + 1) * width].iter().copied()).collect()
}

/// Columns of a [1, H, S] lse.
fn take_lse(lse: &[f32], rows: &[usize]) -> Vec<f32> {
    (0..H as usize).flat_map(|hh| rows.iter().map(move |&i| lse[hh * S as usize + i])).collect()
}

struct RankResult {
    rows: Vec<usize>,
    out: Vec<f32>,
    lse: Vec<f32>,
    dq: Vec<f32>,
    dk: Vec<f32>,
    dv: Vec<f32>,
    /// The learnable sinks' gradient (empty without them).
    d_sink: Vec<f32>,
}

/// Forward and backward on `ranks` threads of one World, each rank with its own CpContext.
fn run_ranks(x: &Inputs, ranks: usize, config: &ParallelConfig, scheme: CpComm) -> Vec<RankResult> {
    run_ranks_masked(x, ranks, config, scheme, &AttnMask::causal(true))
}

/// run_ranks with a window or packed documents (each rank's rows from packed_rank_indices).
fn run_ranks_masked(
    x: &Inputs,
    ranks: usize,
    config: &ParallelConfig,
    scheme: CpComm,
    mask: &AttnMask,
) -> Vec<RankResult> {
    let world = World::new(ranks as i32, Duration::from_secs(20)).unwrap();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|r| {
                let world = &world;
                s.spawn(move || {
                    let comm = world.comm(r as i32).unwrap();
                    let mut ctx = CpContext::new(&comm, config, scheme).unwrap();
                    rank_work(&mut ctx, x, ranks, mask)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// One rank's forward and backward on its rows (its dual chunks, or its packed rows).
fn rank_work(ctx: &mut CpContext, x: &Inputs, ranks: usize, mask: &AttnMask) -> RankResult {
    let local = AttnShape::new(B, S / ranks as i64, H, HKV, D);
    assert_eq!(ctx.rank().unwrap().size, ranks as i32);
    let rank = ctx.rank().unwrap().rank;
    let rows: Vec<usize> = match &mask.packed {
        Some(batch) => {
            packed_rank_indices(batch, ranks as i32, rank).unwrap().into_iter().map(|i| i as usize).collect()
        }
        None => dual_chunk_rows(rank as usize, ranks),
    };
    let (q, k, v) = (take_rows(&x.q, &rows, H), take_rows(&x.k, &rows, HKV), take_rows(&x.v, &rows, HKV));
    let dout = take_rows(&x.dout, &rows, H);
    let mut out = vec![0.0; q.len()];
    let mut lse = vec![0.0; local.lse_len().unwrap()];
    ctx.forward_with(&local, mask, &q, &k, &v, &mut out, &mut lse).unwrap();
    let (mut dq, mut dk, mut dv) = (vec![0.0; q.len()], vec![0.0; k.len()], vec![0.0; v.len()]);
    let mut d_sink = Vec::new();
    if let Softmax::Learnable(_) = mask.softmax {
        d_sink = vec![f32::NAN; H as usize];
        ctx.backward_with_sink_gradient(&local, mask, &q, &k, &v, &out, &lse, &dout, &mut dq, &mut dk, &mut dv, &mut d_sink)
            .unwrap();
    } else {
        ctx.backward_with(&local, mask, &q, &k, &v, &out, &lse, &dout, &mut dq, &mut dk, &mut dv).unwrap();
    }
    RankResult { rows, out, lse, dq, dk, dv, d_sink }
}

/// run_ranks over hcp::Collectives written in the tests (common/thread_collectives.rs) instead of a World.
fn run_ranks_over_callbacks(x: &Inputs, ranks: usize, config: &ParallelConfig, scheme: CpComm) -> Vec<RankResult> {
    let group = Group::new(ranks as i32);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..ranks)
            .map(|r| {
                let group = group.clone();
                s.spawn(move || {
                    let comm = CallbackComm::new(ThreadCollectives::new(group, r as i32, None)).unwrap();
                    let mut ctx = CpContext::on(&comm, config, scheme).unwrap();
                    rank_work(&mut ctx, x, ranks, &AttnMask::causal(true))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn compare_with_simulate(results: &[RankResult], full: &Simulated) {
    for r in results {
        let what = format!("rows {:?}", r.rows);
        assert!(max_diff(&r.out, &take_rows(&full.out, &r.rows, H)) < 1e-5, "out of {}", what);
        assert!(max_diff(&r.lse, &take_lse(&full.lse, &r.rows)) < 1e-5, "lse of {}", what);
        assert!(max_diff(&r.dq, &take_rows(&full.dq, &r.rows, H)) < 1e-5, "dq of {}", what);
        assert!(max_diff(&r.dk, &take_rows(&full.dk, &r.rows, HKV)) < 1e-5, "dk of {}", what);
        assert!(max_diff(&r.dv, &take_rows(&full.dv, &r.rows, HKV)) < 1e-5, "dv of {}", what);
    }
}

#[test]
fn learnable_sinks_and_max_logit_equal_one_rank_and_the_per_rank_api() {
    let x = inputs();
    let sinks = Softmax::Learnable(vec![0.5, -1.0, 2.0, 0.0]);
    let shape = full_shape();
    let run = |options: &SimulateOptions| {
        let mut r = outputs_for(&x);
        let mut d_sink = vec![f32::NAN; H as usize];
        let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv).with_sink_gradient(&mut d_sink);
        attention_simulate(options, &shape, &x.q, &x.k, &x.v, &mut r.out, &mut r.lse, Some(grads)).unwrap();
        (r, d_sink)
    };
    let (one, d_one) = run(&SimulateOptions::new(1).softmax(sinks.clone()));
    let (full, d_full) = run(&SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]).softmax(sinks.clone()));
    for (got, want) in [(&full.out, &one.out), (&full.lse, &one.lse), (&full.dq, &one.dq), (&full.dk, &one.dk)] {
        assert!(max_diff(got, want) < 1e-5);
    }
    assert!(max_diff(&d_full, &d_one) < 1e-5, "{:?} {:?}", d_full, d_one);
    assert!(d_one.iter().all(|g| g.is_finite() && *g != 0.0), "{:?}", d_one);
    // A sink only takes mass: the outputs differ from plain attention.
    assert!(max_diff(&one.out, &reference(&x)) > 1e-3);

    let config = ParallelConfig::new(4).cp(4).hcp_sizes(&[2, 2]);
    let results = run_ranks_masked(&x, 4, &config, CpComm::A2aP2p, &AttnMask::causal(true).softmax(sinks));
    compare_with_simulate(&results, &full);
    for r in &results {
        assert!(max_diff(&r.d_sink, &d_full) < 1e-5, "every rank gets the whole batch's gradient");
    }

    // Each head's largest logit: the simulation's equals the per-rank API's on every rank, and the reference's.
    let mut max_full = vec![f32::NAN; H as usize];
    let mut sim = outputs_for(&x);
    attention_simulate_with_max_logit(
        &SimulateOptions::new(4).cp_comm(CpComm::P2p),
        &shape,
        &x.q,
        &x.k,
        &x.v,
        &mut sim.out,
        &mut sim.lse,
        None,
        &mut max_full,
    )
    .unwrap();
    for (hh, &m) in max_full.iter().enumerate() {
        let g = hh / (H / HKV) as usize;
        let want = (0..S as usize)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .map(|(i, j)| {
                (0..D as usize).map(|t| x.q[(i * H as usize + hh) * D as usize + t] * x.k[(j * HKV as usize + g) * D as usize + t]).sum::<f32>()
                    / (D as f32).sqrt()
            })
            .fold(f32::MIN, f32::max);
        assert!((m - want).abs() < 1e-5, "head {}: {} vs {}", hh, m, want);
    }
    let world = World::new(2, Duration::from_secs(20)).unwrap();
    std::thread::scope(|s| {
        for r in 0..2usize {
            let (world, x, max_full) = (&world, &x, &max_full);
            s.spawn(move || {
                let comm = world.comm(r as i32).unwrap();
                let mut ctx = CpContext::new(&comm, &ParallelConfig::new(2).cp(2), CpComm::P2p).unwrap();
                let rows = dual_chunk_rows(r, 2);
                let local = AttnShape::new(B, S / 2, H, HKV, D);
                let (q, k, v) = (take_rows(&x.q, &rows, H), take_rows(&x.k, &rows, HKV), take_rows(&x.v, &rows, HKV));
                let (mut out, mut lse, mut mx) = (vec![0.0; q.len()], vec![0.0; local.lse_len().unwrap()], vec![0.0; H as usize]);
                ctx.forward_with_max_logit(&local, &AttnMask::causal(true), &q, &k, &v, &mut out, &mut lse, &mut mx).unwrap();
                assert!(max_diff(&mx, max_full) < 1e-6, "rank {}: {:?} vs {:?}", r, mx, max_full);
            });
        }
    });

    // A gradient slot without learnable sinks is misuse.
    let mut r = simulate(&x, &SimulateOptions::new(1));
    let mut d_sink = vec![0.0; H as usize];
    let grads = Gradients::new(&x.dout, &mut r.dq, &mut r.dk, &mut r.dv).with_sink_gradient(&mut d_sink);
    let err = attention_simulate(&SimulateOptions::new(1), &shape, &x.q, &x.k, &x.v, &mut r.out, &mut r.lse, Some(grads))
        .unwrap_err();
    assert_eq!(err.status, Status::InvalidArgument);
}

#[test]
fn two_ranks_on_threads_equal_simulate() {
    let x = inputs();
    let full = simulate(&x, &SimulateOptions::new(2));
    let results = run_ranks(&x, 2, &ParallelConfig::new(2).cp(2), CpComm::P2p);
    assert_eq!(results.len(), 2);
    compare_with_simulate(&results, &full);
}

#[test]
fn packed_ranks_with_a_window_on_threads_equal_simulate() {
    let x = inputs();
    // Two documents of 8 tokens, and documents of none first, between them and last.
    let batch = PackedBatch { cu_seqlens: vec![0, 0, 8, 8, 16, 16], cu_seqlens_padded: None };
    let full = simulate(
        &x,
        &SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]).packed(batch.clone()).window(5, 0),
    );
    let config = ParallelConfig::new(4).cp(4).hcp_sizes(&[2, 2]);
    let mask = AttnMask::causal(true).packed(batch).window(5, 0);
    let results = run_ranks_masked(&x, 4, &config, CpComm::A2aP2p, &mask);
    compare_with_simulate(&results, &full);
}

#[test]
fn four_ranks_hierarchical_on_threads_equal_simulate() {
    let x = inputs();
    let full = simulate(&x, &SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]));
    let config = ParallelConfig::new(4).cp(4).hcp_sizes(&[2, 2]);
    let results = run_ranks(&x, 4, &config, CpComm::A2aP2p);
    compare_with_simulate(&results, &full);
}

fn half_precision<T: Element>(to: fn(f32) -> T, from: fn(T) -> f32, tolerance: f32) {
    let x = inputs();
    let round = |t: &[f32]| t.iter().map(|&v| from(to(v))).collect::<Vec<f32>>();
    let rounded = Inputs { q: round(&x.q), k: round(&x.k), v: round(&x.v), dout: round(&x.dout) };
    let want = reference(&rounded);
    let (q, k, v): (Vec<T>, Vec<T>, Vec<T>) = (
        x.q.iter().map(|&a| to(a)).collect(),
        x.k.iter().map(|&a| to(a)).collect(),
        x.v.iter().map(|&a| to(a)).collect(),
    );
    let mut out = vec![T::default(); q.len()];
    let mut lse = vec![0.0; full_shape().lse_len().unwrap()];
    attention_simulate(&SimulateOptions::new(2), &full_shape(), &q, &k, &v, &mut out, &mut lse, None).unwrap();
    let got: Vec<f32> = out.iter().map(|&o| from(o)).collect();
    assert!(max_diff(&got, &want) < tolerance, "{}", max_diff(&got, &want));
}

#[test]
fn bf16_and_fp16_tensors() {
    half_precision(Bf16::from_f32, Bf16::to_f32, 2e-2);
    half_precision(F16::from_f32, F16::to_f32, 2e-3);
}

#[test]
fn lengths_that_do_not_fit_the_shape_never_reach_the_library() {
    let world = World::new(1, Duration::from_secs(5)).unwrap();
    let comm = world.comm(0).unwrap();
    let mut ctx = CpContext::new(&comm, &ParallelConfig::new(1), CpComm::P2p).unwrap();
    let shape = AttnShape::new(1, 4, 2, 2, 8);
    let ok = vec![0.0f32; 64];
    let mut out = vec![0.0f32; 64];
    let mut lse = vec![0.0f32; 8];
    ctx.forward(&shape, true, &ok, &ok, &ok, &mut out, &mut lse).unwrap();
    let short = vec![0.0f32; 63];
    let e = ctx.forward(&shape, true, &ok, &short, &ok, &mut out, &mut lse).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
    assert!(e.message.contains("k has 63 elements"), "{}", e.message);
    let mut long_lse = vec![0.0f32; 9];
    assert_eq!(
        ctx.forward(&shape, true, &ok, &ok, &ok, &mut out, &mut long_lse).unwrap_err().status,
        Status::InvalidArgument
    );
    let (mut dq, mut dk, mut dv) = (vec![0.0f32; 64], vec![0.0f32; 64], vec![0.0f32; 64]);
    let e = ctx.backward(&shape, true, &ok, &ok, &ok, &out, &lse, &short, &mut dq, &mut dk, &mut dv).unwrap_err();
    assert!(e.message.contains("dout"), "{}", e.message);
    let negative = AttnShape::new(1, -4, 2, 2, 8);
    assert_eq!(
        ctx.forward(&negative, true, &ok, &ok, &ok, &mut out, &mut lse).unwrap_err().status,
        Status::InvalidArgument
    );
    // A failed C call would have left its message on the context: there is none.
    assert_eq!(ctx.last_error().unwrap(), "");
    let mut small = vec![0.0f32; 8];
    let e =
        attention_simulate(&SimulateOptions::new(1), &shape, &ok, &ok, &ok, &mut small, &mut lse, None).unwrap_err();
    assert_eq!(e.status, Status::InvalidArgument);
}

#[test]
fn the_library_checks_what_lengths_cannot_say() {
    let x = inputs();
    let mut out = vec![0.0; x.q.len()];
    let mut lse = vec![0.0; full_shape().lse_len().unwrap()];
    // 16 tokens do not split into 6 chunks.
    let e = attention_simulate(&SimulateOptions::new(3), &full_shape(), &x.q, &x.k, &x.v, &mut out, &mut lse, None)
        .unwrap_err();
    assert_eq!(e.status, Status::Shape);
    let e = attention_simulate(&SimulateOptions::new(0), &full_shape(), &x.q, &x.k, &x.v, &mut out, &mut lse, None)
        .unwrap_err();
    assert_eq!(
        (e.status, e.message.as_str()),
        (Status::InvalidConfig, "hcp_attn_simulate: cp must be in [1, 4096], got 0")
    );
    let nan = SimulateOptions::new(2).softmax_scale(f32::NAN);
    assert_eq!(
        attention_simulate(&nan, &full_shape(), &x.q, &x.k, &x.v, &mut out, &mut lse, None).unwrap_err().status,
        Status::InvalidArgument
    );
    // On a GPU the ranks compute there; elsewhere the library says why not.
    match attention_simulate(
        &SimulateOptions::new(2).device(Device::Cuda),
        &full_shape(),
        &x.q,
        &x.k,
        &x.v,
        &mut out,
        &mut lse,
        None,
    ) {
        Ok(()) => {}
        Err(e) => assert_eq!(e.status, Status::Unsupported, "{}", e),
    }
}

#[test]
fn each_rank_is_lent_once_and_failures_stay_on_handles() {
    let world = World::new(2, Duration::from_millis(300)).unwrap();
    assert_eq!(world.size(), 2);
    let comm0 = world.comm(0).unwrap();
    let again = world.comm(0).err().unwrap();
    assert_eq!(again.status, Status::InvalidArgument);
    drop(comm0);
    let comm0 = world.comm(0).unwrap(); // returned, lent again
    let bad = world.comm(5).err().unwrap();
    assert_eq!(bad.status, Status::InvalidArgument);
    let on_world = std::thread::scope(|s| s.spawn(|| world.last_error().unwrap()).join().unwrap());
    assert!(on_world.contains("hcp_world_comm"), "{}", on_world);

    // The config's world_size must be the world's; the failure is left on the communicator too.
    let e = CpContext::new(&comm0, &ParallelConfig::new(4).cp(4), CpComm::P2p).err().unwrap();
    assert_eq!(e.status, Status::InvalidConfig);
    assert!(e.message.contains("world_size 4 != communicator size 2"), "{}", e);
    let on_comm = comm0.last_error().unwrap();
    assert!(on_comm.contains("hcp_cp_context_create") && on_comm.contains("world_size 4"), "{}", on_comm);
}

#[test]
fn a_rank_that_never_joins_times_out_the_others() {
    let world = World::new(2, Duration::from_millis(300)).unwrap();
    let comm0 = world.comm(0).unwrap();
    let e = CpContext::new(&comm0, &ParallelConfig::new(2).cp(2), CpComm::P2p).err().unwrap();
    assert_eq!(e.status, Status::Timeout, "{}", e);
}

#[test]
fn an_aborted_rank_fails_the_others() {
    let world = World::new(2, Duration::from_secs(20)).unwrap();
    let (comm0, comm1) = (world.comm(0).unwrap(), world.comm(1).unwrap());
    comm1.abort("rank 1 gives up").unwrap();
    let e = CpContext::new(&comm0, &ParallelConfig::new(2).cp(2), CpComm::P2p).err().unwrap();
    assert_eq!(e.status, Status::Comm, "{}", e);
}

#[test]
fn world_arguments_the_library_refuses() {
    assert_eq!(World::new(0, Duration::ZERO).err().unwrap().status, Status::InvalidArgument);
    // hcp takes timeouts below 2^31 ms.
    assert_eq!(World::new(1, Duration::from_secs(1 << 32)).err().unwrap().status, Status::InvalidArgument);
    match hcp::nccl_unique_id() {
        Ok(id) => assert_eq!(id.len(), 128),
        Err(e) => assert_eq!(e.status, Status::Unsupported, "{}", e),
    }
}

/// Two packed documents give, row for row, what each gives alone: nothing crosses a document boundary.
#[test]
fn packed_documents_equal_separate_runs() {
    let (h, hkv, d) = (H as usize, HKV as usize, D as usize);
    let x = inputs(); // S = 16 rows: documents of 8 and 8
    let batch = PackedBatch { cu_seqlens: vec![0, 8, 16], cu_seqlens_padded: None };
    assert_eq!(packed_rank_indices(&batch, 2, 1).unwrap(), vec![2, 3, 4, 5, 10, 11, 12, 13]);
    let mut packed = vec![0.0; S as usize * h * d];
    let mut lse = vec![0.0; (H * S) as usize];
    let options = SimulateOptions::new(2).cp_comm(CpComm::A2a).packed(batch.clone()).window(5, 0);
    attention_simulate(&options, &AttnShape::new(1, S, H, HKV, D), &x.q, &x.k, &x.v, &mut packed, &mut lse, None)
        .unwrap();
    for doc in 0..2usize {
        let rows = |t: &[f32], width: usize| t[doc * 8 * width..(doc + 1) * 8 * width].to_vec();
        let (q, k, v) = (rows(&x.q, h * d), rows(&x.k, hkv * d), rows(&x.v, hkv * d));
        let mut alone = vec![0.0; 8 * h * d];
        let mut lse = vec![0.0; 8 * h];
        let options = SimulateOptions::new(2).window(5, 0);
        attention_simulate(&options, &AttnShape::new(1, 8, H, HKV, D), &q, &k, &v, &mut alone, &mut lse, None).unwrap();
        assert!(max_diff(&rows(&packed, h * d), &alone) < 1e-6);
    }
    let unpadded = PackedBatch { cu_seqlens: vec![0, 7, 16], cu_seqlens_padded: None };
    let err = packed_rank_indices(&unpadded, 2, 0).unwrap_err();
    assert!(err.message.contains("not divisible by 2 x cp"), "{}", err.message);
}

#[test]
fn every_scheme_over_the_callers_collectives_equals_simulate() {
    let x = inputs();
    for (scheme, sizes) in
        [(CpComm::P2p, None), (CpComm::A2a, None), (CpComm::AllGather, None), (CpComm::A2aP2p, Some([2i64, 2]))]
    {
        let mut options = SimulateOptions::new(4).cp_comm(scheme);
        let mut config = ParallelConfig::new(4).cp(4);
        if let Some(sizes) = sizes {
            options = options.hcp_sizes(&sizes);
            config = config.hcp_sizes(&sizes);
        }
        let full = simulate(&x, &options);
        compare_with_simulate(&run_ranks_over_callbacks(&x, 4, &config, scheme), &full);
    }
}

#[test]
fn a_collective_failing_on_one_rank_fails_every_rank() {
    let group = Group::new(4);
    let start = Instant::now();
    let errors: Vec<hcp::Error> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|r| {
                let group = group.clone();
                s.spawn(move || {
                    let fail_on = if r == 1 { Some("send_recv") } else { None };
                    let comm = CallbackComm::new(ThreadCollectives::new(group, r, fail_on)).unwrap();
                    let mut ctx = CpContext::on(&comm, &ParallelConfig::new(4).cp(4), CpComm::P2p).unwrap();
                    let shape = AttnShape::new(1, 4, H, HKV, D);
                    let (q, kv) = (vec![0.5f32; (4 * H * D) as usize], vec![0.25f32; (4 * HKV * D) as usize]);
                    let (mut out, mut lse) = (vec![0.0f32; q.len()], vec![0.0f32; (4 * H) as usize]);
                    ctx.forward(&shape, true, &q, &kv, &kv, &mut out, &mut lse).unwrap_err()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(start.elapsed() < Duration::from_secs(10));
    for e in &errors {
        assert!(e.status == Status::Comm || e.status == Status::Timeout, "{}", e);
    }
    assert_eq!(errors[1].status, Status::Comm);
    assert!(errors[1].message.contains("send_recv: injected failure in send_recv"), "{}", errors[1]);
}

#[test]
fn collectives_that_cannot_split_make_no_context() {
    struct Alone;
    impl Collectives for Alone {
        fn rank(&self) -> i32 {
            0
        }
        fn size(&self) -> i32 {
            1
        }
        fn send_recv(&self, _: &[u8], _: i32, _: &mut [u8], _: i32) -> Result<(), String> {
            Ok(())
        }
        fn all_to_all(&self, s: &[u8], r: &mut [u8]) -> Result<(), String> {
            r.copy_from_slice(s);
            Ok(())
        }
        fn all_gather(&self, s: &[u8], r: &mut [u8]) -> Result<(), String> {
            r.copy_from_slice(s);
            Ok(())
        }
        fn reduce_scatter_sum_f32(&self, s: &[f32], r: &mut [f32]) -> Result<(), String> {
            r.copy_from_slice(s);
            Ok(())
        }
        fn barrier(&self) -> Result<(), String> {
            Ok(())
        }
        fn abort(&self, _: &str) {}
    }
    let comm = CallbackComm::new(Alone).unwrap();
    let e = CpContext::on(&comm, &ParallelConfig::new(1), CpComm::P2p).err().unwrap();
    assert_eq!(e.status, Status::Comm);
    assert!(e.message.contains("cannot be split"), "{}", e);
    assert!(comm.last_error().unwrap().contains("cannot be split"));
}

#[test]
fn contexts_on_the_callers_own_groups_equal_simulate() {
    // The test's collectives as the CP group and, split by the test itself in Megatron's layout (a2a: consecutive
    // ranks, p2p: strided), the level groups: nothing is split by hcp.
    let x = inputs();
    let full = simulate(&x, &SimulateOptions::new(4).cp_comm(CpComm::A2aP2p).hcp_sizes(&[2, 2]));
    let group = Group::new(4);
    let results: Vec<RankResult> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|r| {
                let (group, x) = (group.clone(), &x);
                s.spawn(move || {
                    let member = ThreadCollectives::new(group, r, None);
                    let a2a = member.split(r / 2, r % 2).unwrap().unwrap();
                    let p2p = member.split(r % 2, r / 2).unwrap().unwrap();
                    let (a2a, p2p) = (CallbackComm::from_box(a2a).unwrap(), CallbackComm::from_box(p2p).unwrap());
                    let cp = CallbackComm::new(member).unwrap();
                    let mut ctx = CpContext::on_groups(&cp, &[&a2a, &p2p], CpComm::A2aP2p).unwrap();
                    rank_work(&mut ctx, x, 4, &AttnMask::causal(true))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    compare_with_simulate(&results, &full);
}
