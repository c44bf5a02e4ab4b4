//! What this crate declares, recorded by the same macros that declare it, so that the tests can compare every
//! declaration with hcp.h (and with a C compiler's view of it) without a second hand-kept list that could drift.

/// A `#[repr(C)]` struct: its size and alignment and, per field, the Rust type as written, offset and size.
#[derive(Debug, Clone)]
pub struct DeclaredStruct {
    pub name: &'static str,
    pub size: usize,
    pub align: usize,
    pub fields: Vec<DeclaredField>,
}

#[derive(Debug, Clone)]
pub struct DeclaredField {
    pub name: &'static str,
    pub ty: &'static str,
    pub offset: usize,
    pub size: usize,
}

/// A constant: an enumerator or a numeric `#define` of hcp.h, widened to i64.
#[derive(Debug, Clone, Copy)]
pub struct DeclaredConstant {
    pub name: &'static str,
    pub ty: &'static str,
    pub value: i64,
}

/// A type alias (`typedef int32_t hcp_status;` is `pub type hcp_status = i32;`).
#[derive(Debug, Clone, Copy)]
pub struct DeclaredTypedef {
    pub name: &'static str,
    pub ty: &'static str,
    pub size: usize,
}

/// An `extern "C"` function: parameter and return types as written (`ret` is "" for none), and its address,
/// which makes the linker resolve every declared symbol against libhcp.
#[derive(Debug, Clone)]
pub struct DeclaredFunction {
    pub name: &'static str,
    pub params: Vec<&'static str>,
    pub ret: &'static str,
    pub address: *const (),
}

// The byte offset of a field; `std::mem::offset_of!` is newer than this crate's minimum Rust (1.63).
macro_rules! field_offset {
    ($ty:ident, $field:ident) => {{
        let probe = ::core::mem::MaybeUninit::<$ty>::uninit();
        let base = probe.as_ptr();
        // addr_of! computes the address without making a reference to the uninitialised memory.
        #[allow(unused_unsafe)]
        let field = unsafe { ::core::ptr::addr_of!((*base).$field) };
        (field as usize) - (base as usize)
    }};
}

/// The size of what a pointer points to, to measure a field through `addr_of!` without reading it.
#[doc(hidden)]
pub fn pointee_size<T>(_: *const T) -> usize {
    ::core::mem::size_of::<T>()
}

// The size of a field, read through a pointer to it (no value is made).
macro_rules! field_size {
    ($ty:ident, $field:ident) => {{
        let probe = ::core::mem::MaybeUninit::<$ty>::uninit();
        let base = probe.as_ptr();
        #[allow(unused_unsafe)]
        let field = unsafe { ::core::ptr::addr_of!((*base).$field) };
        $crate::declared::pointee_size(field)
    }};
}
