//! The one generic writer behind every clGet*Info query: the size query, the size check and
//! the copy for every value type (strings with their NUL, cl_bool, arrays, handles).

use softcl_runtime::cl::*;
use std::ffi::c_void;

/// Where a query's answer goes: the application's buffer and size pointer.
pub struct InfoOut {
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
}

impl InfoOut {
    pub fn new(size: usize, value: *mut c_void, size_ret: *mut usize) -> Self {
        Self { size, value, size_ret }
    }

    /// Writes `bytes`: CL_INVALID_VALUE if a buffer is given that is too small.
    pub fn bytes(self, bytes: &[u8]) -> Result<(), cl_int> {
        if !self.value.is_null() {
            if self.size < bytes.len() {
                return Err(CL_INVALID_VALUE);
            }
            // SAFETY: the application promises `value` points at `size` writable bytes; we
            // write only bytes.len() <= size of them.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.value as *mut u8, bytes.len()) };
        }
        if !self.size_ret.is_null() {
            // SAFETY: a non-null size_ret points at a size_t owned by the caller.
            unsafe { self.size_ret.write_unaligned(bytes.len()) };
        }
        Ok(())
    }

    pub fn write<T: InfoValue + ?Sized>(self, v: &T) -> Result<(), cl_int> {
        let mut buf = Vec::new();
        v.encode(&mut buf);
        self.bytes(&buf)
    }
}

/// A value a query can answer with, encoded as the C type the specification names.
pub trait InfoValue {
    fn encode(&self, out: &mut Vec<u8>);
}

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl InfoValue for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
plain!(u8, u16, u32, u64, i32, i64, usize, isize);

/// A cl_bool.
impl InfoValue for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        let v: cl_bool = if *self { CL_TRUE } else { CL_FALSE };
        out.extend_from_slice(&v.to_ne_bytes());
    }
}

/// A NUL-terminated string.
impl InfoValue for str {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.as_bytes());
        out.push(0);
    }
}

impl InfoValue for String {
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_str().encode(out)
    }
}

/// An array of values (size_t[3], property lists, handle lists ...).
impl<T: InfoValue> InfoValue for [T] {
    fn encode(&self, out: &mut Vec<u8>) {
        for v in self {
            v.encode(out);
        }
    }
}

impl<T: InfoValue, const N: usize> InfoValue for [T; N] {
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_slice().encode(out)
    }
}

impl<T: InfoValue> InfoValue for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.as_slice().encode(out)
    }
}

/// A handle or other pointer.
impl InfoValue for *mut c_void {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(*self as usize).to_ne_bytes());
    }
}

/// cl_name_version: a version and a 64-byte NUL-padded name.
impl InfoValue for softcl_device_model::NameVersion {
    fn encode(&self, out: &mut Vec<u8>) {
        let (major, minor, patch) = self.version;
        let v: cl_version = (major << 22) | (minor << 12) | patch;
        out.extend_from_slice(&v.to_ne_bytes());
        let mut name = [0u8; CL_NAME_VERSION_MAX_NAME_SIZE as usize];
        let n = self.name.len().min(name.len() - 1);
        name[..n].copy_from_slice(&self.name.as_bytes()[..n]);
        out.extend_from_slice(&name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query<T: InfoValue + ?Sized>(v: &T, size: usize) -> (Result<(), cl_int>, Vec<u8>, usize) {
        let mut buf = vec![0xAAu8; size];
        let mut size_ret = 0usize;
        let ptr = if size == 0 { std::ptr::null_mut() } else { buf.as_mut_ptr() as *mut c_void };
        let r = InfoOut::new(size, ptr, &mut size_ret).write(v);
        (r, buf, size_ret)
    }

    #[test]
    fn string_has_nul_and_size_query_works() {
        let (r, _, n) = query("SoftCL", 0);
        assert_eq!((r, n), (Ok(()), 7));
        let (r, buf, _) = query("SoftCL", 7);
        assert_eq!(r, Ok(()));
        assert_eq!(&buf, b"SoftCL\0");
    }

    #[test]
    fn too_small_buffer_is_invalid_value() {
        let (r, buf, _) = query(&7u64, 4);
        assert_eq!(r, Err(CL_INVALID_VALUE));
        assert_eq!(buf, vec![0xAA; 4], "nothing written on failure");
    }

    #[test]
    fn bool_is_cl_bool_and_arrays_concatenate() {
        let (_, buf, n) = query(&true, 4);
        assert_eq!((u32::from_ne_bytes(buf.try_into().unwrap()), n), (CL_TRUE, 4));
        let (_, buf, n) = query(&[1usize, 2, 3], 24);
        assert_eq!(n, 24);
        assert_eq!(usize::from_ne_bytes(buf[8..16].try_into().unwrap()), 2);
    }

    #[test]
    fn name_version_layout() {
        let nv = softcl_device_model::NameVersion::new("cl_khr_icd", 1, 0, 0);
        let (_, buf, n) = query(&nv, 68);
        assert_eq!(n, 4 + 64);
        assert_eq!(u32::from_ne_bytes(buf[..4].try_into().unwrap()), 1 << 22);
        assert_eq!(&buf[4..15], b"cl_khr_icd\0");
    }
}
