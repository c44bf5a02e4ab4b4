//! The runtime's log lines reach a Rust closure; a closure may replace itself; the default comes back. One test
//! in its own binary, because the callback is process-wide.

use hcp::{CpComm, CpContext, LogLevel, ParallelConfig, World};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Creates a CP context on each of two ranks, which logs one CONTEXT_PARALLEL_GROUP line per rank.
fn create_contexts() {
    let world = World::new(2, Duration::from_secs(20)).unwrap();
    std::thread::scope(|s| {
        for r in 0..2 {
            let world = &world;
            s.spawn(move || {
                let comm = world.comm(r).unwrap();
                CpContext::new(&comm, &ParallelConfig::new(2).cp(2), CpComm::P2p).unwrap();
            });
        }
    });
}

#[test]
fn log_lines_reach_the_closure() {
    let lines = Arc::new(Mutex::new(Vec::<(LogLevel, String)>::new()));
    let sink = Arc::clone(&lines);
    hcp::set_log_callback(move |level, line| sink.lock().unwrap().push((level, line.to_string()))).unwrap();
    create_contexts();
    let got = lines.lock().unwrap().clone();
    let groups: Vec<&(LogLevel, String)> =
        got.iter().filter(|(_, l)| l.contains("created CONTEXT_PARALLEL_GROUP")).collect();
    assert_eq!(groups.len(), 2, "{:?}", got);
    assert!(groups.iter().all(|(level, line)| *level == LogLevel::Info && !line.ends_with('\n')));

    // A closure that replaces itself from inside the callback, as hcp.h allows: the first line goes to it, the
    // rest to its replacement.
    let first = Arc::new(Mutex::new(Vec::<String>::new()));
    let second = Arc::new(Mutex::new(Vec::<String>::new()));
    let (f, s2) = (Arc::clone(&first), Arc::clone(&second));
    hcp::set_log_callback(move |_, line| {
        f.lock().unwrap().push(line.to_string());
        let s3 = Arc::clone(&s2);
        hcp::set_log_callback(move |_, line| s3.lock().unwrap().push(line.to_string())).unwrap();
    })
    .unwrap();
    create_contexts();
    assert_eq!(first.lock().unwrap().len(), 1, "{:?}", first.lock().unwrap());
    assert_eq!(second.lock().unwrap().len(), 1, "{:?}", second.lock().unwrap());

    // A panicking closure is caught at the boundary; the process goes on.
    hcp::set_log_callback(|_, _| panic!("a callback that panics")).unwrap();
    create_contexts();

    // Back to stderr: the earlier closures see nothing more.
    hcp::reset_log_callback().unwrap();
    let before = lines.lock().unwrap().len();
    create_contexts();
    assert_eq!(lines.lock().unwrap().len(), before);
    assert_eq!(second.lock().unwrap().len(), 1);
}
