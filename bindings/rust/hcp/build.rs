// Embeds the directory of libhcp.so that hcp-sys found as an rpath of this crate's tests and examples, so that
// they run without LD_LIBRARY_PATH: cargo passes a dependency's link-search on, but not its link arguments.
fn main() {
    println!("cargo:rerun-if-env-changed=DEP_HCP_LIB_DIR");
    if let Ok(dirs) = std::env::var("DEP_HCP_LIB_DIR") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
    }
}
