//! Error values (status, message, Display, std::error::Error), statuses this binding does not know, the version
//! check, and the Send / Sync of every handle as hcp.h's thread rules allow (the "not Sync" half is in the
//! compile_fail examples of the crate documentation).

use hcp::{Comm, CpContext, Error, LintReport, LogScanner, ParallelConfig, ScanReport, Status, Topology, World};

#[test]
fn an_error_carries_status_and_message() {
    let e = Topology::new(&ParallelConfig::new(8).pp(2).cp(3)).err().unwrap();
    assert_eq!(e.status, Status::InvalidConfig);
    assert_eq!(e.status.raw(), hcp::sys::HCP_ERR_INVALID_CONFIG);
    assert!(e.message.starts_with("hcp_topology_create"), "{}", e.message);
    let shown = e.to_string();
    assert!(shown.contains(&e.message) && shown.contains(e.status.description()), "{}", shown);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(e.clone());
    assert_eq!(boxed.to_string(), shown);
    // The message was copied: a later failure on this thread does not change it.
    let _ = Topology::new(&ParallelConfig::new(0));
    assert!(e.message.contains("world_size (8)"), "{}", e.message);
}

#[test]
fn statuses_round_trip_and_unknown_values_are_kept() {
    for code in 1..=12 {
        let status = Status::from_raw(code);
        assert!(!matches!(status, Status::Unknown(_)), "{} is a known status", code);
        assert_eq!(status.raw(), code);
        assert!(!status.description().is_empty());
    }
    assert_eq!(Status::from_raw(0), Status::Unknown(0));
    assert_eq!(Status::from_raw(4242), Status::Unknown(4242));
    assert_eq!(Status::Unknown(4242).raw(), 4242);
    assert!(!Status::Unknown(-7).description().is_empty(), "hcp describes unknown values too");
    assert_eq!(Error::new(Status::Unknown(99), "").to_string(), Status::Unknown(99).description());
}

#[test]
fn the_loaded_library_is_the_headers_version() {
    let loaded = hcp::version();
    assert_eq!(loaded, hcp::header_version());
    assert_eq!(loaded.to_string(), hcp::sys::HCP_VERSION_STRING);
    assert_eq!((loaded.major, loaded.minor), (0, 7));
}

/// Fails `times` times with `config` and returns the messages that do not mention `expected`.
fn wrong_messages(config: ParallelConfig, expected: &str, times: usize) -> Vec<String> {
    (0..times).map(|_| Topology::new(&config).err().unwrap().message).filter(|m| !m.contains(expected)).collect()
}

#[test]
fn messages_are_read_on_the_thread_that_failed() {
    // Two threads fail at once with different messages; each Error has its own thread's, every time.
    let wrong: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(|| wrong_messages(ParallelConfig::new(8).pp(2).cp(3), "not divisible", 300));
        let b = s.spawn(|| wrong_messages(ParallelConfig::new(8).cp(2).ep(2), "expert-model-parallel", 300));
        a.join().unwrap().into_iter().chain(b.join().unwrap()).collect()
    });
    assert!(wrong.is_empty(), "messages of the other thread's failure: {:?}", wrong);
}

fn send<T: Send>() {}
fn sync<T: Sync>() {}

#[test]
fn send_and_sync_follow_the_thread_rules() {
    // Immutable handles: "any number of threads".
    send::<Topology>();
    sync::<Topology>();
    send::<LintReport>();
    sync::<LintReport>();
    send::<ScanReport>();
    sync::<ScanReport>();
    // "Any thread may fetch" a rank's communicator: the world is shared by the ranks' threads.
    send::<World>();
    sync::<World>();
    // One thread at a time: these move between threads but are not shared.
    send::<LogScanner>();
    send::<Comm<'static>>();
    send::<CpContext<'static>>();
    send::<Error>();
    sync::<Error>();
}
