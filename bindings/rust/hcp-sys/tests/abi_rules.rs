//! The raw declarations called as C would call them: the loaded library is the header's version, init functions
//! fill the declared structs, and misuse the safe crate cannot express (sizes inside a field, reserved fields,
//! feeding a finished scanner) gives the status hcp.h documents.

use hcp_sys::*;
use std::ffi::CStr;
use std::mem::{size_of, MaybeUninit};
use std::ptr;

fn last_error() -> String {
    unsafe { CStr::from_ptr(hcp_last_error()) }.to_string_lossy().into_owned()
}

fn config() -> hcp_parallel_config {
    let mut c = MaybeUninit::<hcp_parallel_config>::uninit();
    assert_eq!(unsafe { hcp_parallel_config_init(c.as_mut_ptr(), size_of::<hcp_parallel_config>()) }, HCP_OK);
    let mut c = unsafe { c.assume_init() };
    c.world_size = 8;
    c.cp = 8;
    c
}

#[test]
fn the_loaded_library_is_the_headers_version() {
    assert_eq!(unsafe { hcp_version_number() }, HCP_VERSION_NUMBER);
    let s = unsafe { CStr::from_ptr(hcp_version_string()) };
    assert_eq!(s.to_str().unwrap(), HCP_VERSION_STRING);
    // Never NULL, also for a value no version defines.
    let unknown = unsafe { CStr::from_ptr(hcp_status_string(1234)) };
    assert!(!unknown.to_bytes().is_empty());
}

#[test]
fn init_fills_the_defaults_of_the_init_macro() {
    let c = config();
    assert_eq!(c.struct_size, size_of::<hcp_parallel_config>());
    assert_eq!((c.tp, c.pp, c.ep, c.order, c.gpus_per_node), (1, 1, 1, HCP_ORDER_TP_CP_EP_DP_PP, 8));
    assert!(c.hcp_sizes.is_null());
    let mut o = MaybeUninit::<hcp_attn_simulate_options>::uninit();
    assert_eq!(
        unsafe { hcp_attn_simulate_options_init(o.as_mut_ptr(), size_of::<hcp_attn_simulate_options>()) },
        HCP_OK
    );
    let o = unsafe { o.assume_init() };
    assert_eq!((o.cp, o.causal, o.timeout_ms, o.device, o.reserved1), (1, 1, 60000, HCP_DEVICE_CPU, 0));
    // A size inside the last field is not a version of the struct.
    let mut t = MaybeUninit::<hcp_tensor>::uninit();
    assert_eq!(unsafe { hcp_tensor_init(t.as_mut_ptr(), size_of::<hcp_tensor>() - 4) }, HCP_ERR_INVALID_ARGUMENT);
    assert_eq!(unsafe { hcp_tensor_init(ptr::null_mut(), size_of::<hcp_tensor>()) }, HCP_ERR_INVALID_ARGUMENT);
}

#[test]
fn struct_sizes_must_be_versions_and_unknown_tails_zero() {
    let mut t: *mut hcp_topology = ptr::null_mut();
    let mut c = config();
    assert_eq!(unsafe { hcp_topology_create(&mut t, &c) }, HCP_OK, "{}", last_error());
    unsafe { hcp_topology_destroy(t) };

    c.struct_size = size_of::<hcp_parallel_config>() - 4; // half of gpus_per_node
    assert_eq!(unsafe { hcp_topology_create(&mut t, &c) }, HCP_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("is not a version of this struct"), "{}", last_error());

    // A newer caller's larger struct: accepted with a zero tail, refused with a non-zero one.
    #[repr(C)]
    struct Newer {
        known: hcp_parallel_config,
        added: i64,
    }
    let mut newer = Newer { known: config(), added: 0 };
    newer.known.struct_size = size_of::<Newer>();
    assert_eq!(unsafe { hcp_topology_create(&mut t, &newer.known) }, HCP_OK, "{}", last_error());
    unsafe { hcp_topology_destroy(t) };
    newer.added = 1;
    assert_eq!(unsafe { hcp_topology_create(&mut t, &newer.known) }, HCP_ERR_UNSUPPORTED);
}

#[test]
fn reserved_fields_must_be_zero() {
    let mut options = MaybeUninit::<hcp_attn_options>::uninit();
    assert_eq!(unsafe { hcp_attn_options_init(options.as_mut_ptr(), size_of::<hcp_attn_options>()) }, HCP_OK);
    let mut options = unsafe { options.assume_init() };
    options.reserved0 = 1;
    let mut world: *mut hcp_world = ptr::null_mut();
    assert_eq!(unsafe { hcp_world_create(&mut world, 1, 0) }, HCP_OK);
    let mut comm: *mut hcp_comm = ptr::null_mut();
    assert_eq!(unsafe { hcp_world_comm(&mut comm, world, 0) }, HCP_OK);
    let mut one = config();
    one.world_size = 1;
    one.cp = 1;
    let mut ctx: *mut hcp_cp_context = ptr::null_mut();
    assert_eq!(unsafe { hcp_cp_context_create(&mut ctx, &one, comm, HCP_CP_COMM_P2P) }, HCP_OK, "{}", last_error());

    let mut data = [0.0f32; 16];
    let mut lse = [0.0f32; 2];
    let mut q = MaybeUninit::<hcp_tensor>::uninit();
    assert_eq!(unsafe { hcp_tensor_init(q.as_mut_ptr(), size_of::<hcp_tensor>()) }, HCP_OK);
    let mut q = unsafe { q.assume_init() };
    q.data = data.as_mut_ptr().cast();
    q.ndim = 4;
    q.shape = [1, 2, 1, 8];
    let mut l = q;
    l.data = lse.as_mut_ptr().cast();
    l.ndim = 3;
    l.shape = [1, 1, 2, 0];
    let status = unsafe { hcp_attn_forward(ctx, &options, &q, &q, &q, &q, &l) };
    assert_eq!(status, HCP_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("reserved"), "{}", last_error());
    // The same failure is left on the context, readable through the handle.
    let mut message: *mut std::os::raw::c_char = ptr::null_mut();
    assert_eq!(unsafe { hcp_cp_context_last_error(&mut message, ctx) }, HCP_OK);
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    unsafe { hcp_free(message.cast()) };
    assert!(text.contains("hcp_attn_forward"), "{}", text);
    unsafe {
        hcp_cp_context_destroy(ctx);
        hcp_world_destroy(world);
    }
}

#[test]
fn a_finished_scanner_refuses_more_input() {
    let mut s: *mut hcp_logscanner = ptr::null_mut();
    assert_eq!(unsafe { hcp_logscan_create(&mut s, ptr::null()) }, HCP_OK);
    let mut r: *mut hcp_logscan_report = ptr::null_mut();
    assert_eq!(unsafe { hcp_logscan_finish(&mut r, s) }, HCP_OK);
    assert_eq!(unsafe { hcp_logscan_feed(s, b"x".as_ptr().cast(), 1) }, HCP_ERR_INVALID_ARGUMENT);
    assert!(last_error().contains("already finished"), "{}", last_error());
    let mut again: *mut hcp_logscan_report = ptr::null_mut();
    assert_eq!(unsafe { hcp_logscan_finish(&mut again, s) }, HCP_ERR_INVALID_ARGUMENT);
    unsafe {
        hcp_logscan_report_destroy(r);
        hcp_logscan_destroy(s);
    }
}
