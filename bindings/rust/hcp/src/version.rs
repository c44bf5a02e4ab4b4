//! The version of the loaded libhcp.

use hcp_sys as sys;
use std::fmt;

/// A version of the C ABI. `hcp_sys::HCP_VERSION_NUMBER` is the one these crates were written against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    /// From hcp's MAJOR * 10000 + MINOR * 100 + PATCH.
    pub fn from_number(number: u32) -> Version {
        Version { major: number / 10000, minor: number / 100 % 100, patch: number % 100 }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version of the library actually loaded.
pub fn version() -> Version {
    Version::from_number(unsafe { sys::hcp_version_number() })
}

/// The version these bindings were written against (hcp.h's HCP_VERSION_NUMBER).
pub fn header_version() -> Version {
    Version::from_number(sys::HCP_VERSION_NUMBER)
}
