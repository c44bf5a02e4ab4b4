// Finds the directory holding libhcp.so and links it. In order: $HCP_LIB_DIR, `pkg-config --libs-only-L hcp` (an
// installed hcp), the build tree of this source checkout (<repo>/build/capi). The directory is also embedded as an
// rpath in this crate's tests, and passed to dependents as DEP_HCP_LIB_DIR (links = "hcp"), because cargo does not
// forward link arguments from a dependency's build script: the hcp crate adds the same rpath from it.
use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HCP_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-changed=build.rs");

    let dirs = lib_dirs();
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=hcp");
    // Joined with ':' like LD_LIBRARY_PATH; empty when the library is in the linker's default path.
    let joined: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:lib_dir={}", joined.join(":"));
}

fn lib_dirs() -> Vec<PathBuf> {
    if let Some(dir) = env::var_os("HCP_LIB_DIR") {
        if !dir.is_empty() {
            let dir = PathBuf::from(dir);
            if !dir.join("libhcp.so").exists() {
                println!("cargo:warning=HCP_LIB_DIR={} has no libhcp.so", dir.display());
            }
            return vec![absolute(dir)];
        }
    }
    if let Some(dirs) = pkg_config_dirs() {
        return dirs;
    }
    // hcp-sys sits at <repo>/bindings/rust/hcp-sys.
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let build_tree = manifest.join("../../../build/capi");
    if !build_tree.join("libhcp.so").exists() {
        println!(
            "cargo:warning=libhcp.so not found: set HCP_LIB_DIR, install hcp (pkg-config hcp), or build {}",
            build_tree.display()
        );
    }
    vec![absolute(build_tree)]
}

// The rpath must not depend on the directory a test runs in; without `..` it also reads better in errors.
fn absolute(dir: PathBuf) -> PathBuf {
    dir.canonicalize().unwrap_or(dir)
}

// The -L directories of an installed hcp; None when pkg-config is missing or does not know hcp. An installed hcp
// in the linker's default path gives Some(empty).
fn pkg_config_dirs() -> Option<Vec<PathBuf>> {
    let output = Command::new("pkg-config").args(["--libs-only-L", "hcp"]).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    Some(text.split_whitespace().filter_map(|flag| flag.strip_prefix("-L")).map(PathBuf::from).collect())
}
