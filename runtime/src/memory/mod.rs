//! Memory objects: buffers and sub-buffers, their storage, maps and destructor callbacks.
//!
//! A buffer's storage is an owned allocation aligned to 128 bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN
//! is 1024 bits), zero-initialised or (2 MiB and more) possibly a released buffer's memory
//! (OpenCL leaves a new buffer's contents undefined), or the application's own memory for
//! CL_MEM_USE_HOST_PTR,
//! which kernels, commands and maps use directly (host and devices share one address space, so
//! nothing is ever copied back and forth). A sub-buffer has no storage of its own: it is a
//! window of its parent's. All raw memory handling lives in [`raw`].

pub mod image;
pub mod image_mem;
pub mod raw;
pub mod rect;

use crate::cl::*;
use crate::context::{Context, DestructorCallback};
use crate::handle::{ClObject, Header, ObjectKind};
use parking_lot::Mutex;
use raw::{HostPtr, Storage};
use rect::RectLayout;
use std::sync::Arc;

/// The flags valid for a buffer (the "Memory Flags" table; CL_MEM_KERNEL_READ_AND_WRITE is for
/// images only).
pub const BUFFER_FLAGS: cl_mem_flags = (CL_MEM_READ_WRITE
    | CL_MEM_WRITE_ONLY
    | CL_MEM_READ_ONLY
    | CL_MEM_USE_HOST_PTR
    | CL_MEM_ALLOC_HOST_PTR
    | CL_MEM_COPY_HOST_PTR
    | CL_MEM_HOST_WRITE_ONLY
    | CL_MEM_HOST_READ_ONLY
    | CL_MEM_HOST_NO_ACCESS) as cl_mem_flags;
/// How kernels may access the buffer.
pub const DEVICE_ACCESS: cl_mem_flags = (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY) as cl_mem_flags;
/// Where the storage comes from.
pub const HOST_PTR_FLAGS: cl_mem_flags =
    (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) as cl_mem_flags;
/// How the host may access the buffer.
pub const HOST_ACCESS: cl_mem_flags =
    (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS) as cl_mem_flags;

fn has(flags: cl_mem_flags, flag: u32) -> bool {
    flags & flag as cl_mem_flags != 0
}

/// How a new buffer's storage starts.
pub enum BufferInit {
    /// An owned allocation whose contents OpenCL leaves undefined (no host pointer, or
    /// CL_MEM_ALLOC_HOST_PTR): zeroed, except that a buffer of 2 MiB or more may get a
    /// released buffer's memory and its old bytes (`raw::Storage::alloc_reused`).
    Zeroed,
    /// An owned allocation filled from the application's memory (CL_MEM_COPY_HOST_PTR).
    Copy(HostPtr),
    /// The application's memory itself (CL_MEM_USE_HOST_PTR).
    Use(Storage),
}

/// One outstanding clEnqueueMapBuffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// The address returned to the application.
    pub address: usize,
    pub offset: usize,
    pub size: usize,
    pub flags: cl_map_flags,
}

enum Backing {
    /// A buffer's own storage.
    Storage(Storage),
    /// A sub-buffer: a window of its parent's storage starting at `origin`; an image created
    /// from a buffer or a 2D image: its parent's storage (origin 0).
    Parent { parent: Arc<Mem>, origin: usize },
}

#[repr(C)]
pub struct Mem {
    header: Header,
    pub context: Arc<Context>,
    /// The flags as created (CL_MEM_READ_WRITE for 0), with inherited flags filled in for
    /// sub-buffers.
    pub flags: cl_mem_flags,
    pub size: usize,
    /// CL_MEM_PROPERTIES: the list given to clCreateBufferWithProperties (without the 0);
    /// None when created without a list (then the query returns nothing).
    pub properties: Option<Vec<cl_mem_properties>>,
    backing: Backing,
    maps: Mutex<Vec<Mapping>>,
    destructor_callbacks: Mutex<Vec<DestructorCallback>>,
    /// An image's description and kernel argument (None for buffers).
    image: Option<image_mem::ImageData>,
}

impl ClObject for Mem {
    const KIND: ObjectKind = ObjectKind::Mem;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl std::fmt::Debug for Mem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mem")
            .field("flags", &self.flags)
            .field("size", &self.size)
            .field("address", &self.address())
            .field("offset", &self.offset())
            .finish()
    }
}

impl Mem {
    /// Creates a buffer. The caller (the API edge) has validated `flags` and `size` and built
    /// `init` from the application's host pointer.
    pub fn new_buffer(
        context: Arc<Context>,
        flags: cl_mem_flags,
        size: usize,
        init: BufferInit,
        properties: Option<Vec<cl_mem_properties>>,
    ) -> Result<Arc<Self>, cl_int> {
        let storage = match init {
            BufferInit::Zeroed => Storage::alloc_reused(size)?,
            BufferInit::Copy(src) => {
                let s = Storage::alloc_reused(size)?;
                raw::write(&s, 0, &src, 0, size)?;
                s
            }
            BufferInit::Use(s) => {
                if s.len() < size {
                    return Err(CL_INVALID_HOST_PTR);
                }
                s
            }
        };
        // "If the value specified for flags is 0, the default is used which is
        // CL_MEM_READ_WRITE." (Otherwise CL_MEM_FLAGS reports the flags as given.)
        let flags = if flags == 0 { CL_MEM_READ_WRITE as cl_mem_flags } else { flags };
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Mem),
            context,
            flags,
            size,
            properties,
            backing: Backing::Storage(storage),
            maps: Mutex::new(Vec::new()),
            destructor_callbacks: Mutex::new(Vec::new()),
            image: None,
        }))
    }

    /// clCreateSubBuffer with CL_BUFFER_CREATE_TYPE_REGION: a window of `parent` of `size` bytes
    /// at `origin`. `flags` were checked against the memory flags table by the caller.
    pub fn new_sub_buffer(
        parent: &Arc<Mem>,
        flags: cl_mem_flags,
        origin: usize,
        size: usize,
    ) -> Result<Arc<Self>, cl_int> {
        // "CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object or is a sub-buffer
        // object."
        if parent.is_sub_buffer() {
            return Err(CL_INVALID_MEM_OBJECT);
        }
        let flags = sub_buffer_flags(parent.flags, flags)?;
        // "CL_INVALID_BUFFER_SIZE if the size field of the cl_buffer_region structure passed
        // in buffer_create_info is 0."
        if size == 0 {
            return Err(CL_INVALID_BUFFER_SIZE);
        }
        // "CL_INVALID_VALUE if the region specified by the cl_buffer_region structure passed
        // in buffer_create_info is out of bounds in buffer."
        if origin.checked_add(size).is_none_or(|end| end > parent.size) {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_MISALIGNED_SUB_BUFFER_OFFSET if there are no devices in context associated with
        // buffer for which the origin field of the cl_buffer_region structure passed in
        // buffer_create_info is aligned to the CL_DEVICE_MEM_BASE_ADDR_ALIGN value."
        let aligned = parent.context.devices.iter().any(|d| {
            let align = (d.info().mem_base_addr_align_bits as usize / 8).max(1);
            origin.is_multiple_of(align)
        });
        if !aligned {
            return Err(CL_MISALIGNED_SUB_BUFFER_OFFSET);
        }
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Mem),
            context: parent.context.clone(),
            flags,
            size,
            properties: None,
            backing: Backing::Parent { parent: parent.clone(), origin },
            maps: Mutex::new(Vec::new()),
            destructor_callbacks: Mutex::new(Vec::new()),
            image: None,
        }))
    }

    /// The host address of byte 0 of this buffer (for a sub-buffer: its parent's address plus
    /// its origin). Kernels and maps use it directly.
    pub fn address(&self) -> *mut u8 {
        let (storage, offset) = self.storage();
        storage.as_ptr().wrapping_add(offset)
    }

    /// The storage holding this buffer's bytes and the offset of byte 0 in it.
    pub fn storage(&self) -> (&Storage, usize) {
        match &self.backing {
            Backing::Storage(s) => (s, 0),
            Backing::Parent { parent, origin } => {
                let (s, o) = parent.storage();
                (s, o + origin)
            }
        }
    }

    pub fn is_sub_buffer(&self) -> bool {
        self.image.is_none() && matches!(self.backing, Backing::Parent { .. })
    }

    /// CL_MEM_ASSOCIATED_MEMOBJECT: the parent of a sub-buffer, the buffer or 2D image an image
    /// was created from.
    pub fn parent(&self) -> Option<&Arc<Mem>> {
        match &self.backing {
            Backing::Parent { parent, .. } => Some(parent),
            Backing::Storage(_) => None,
        }
    }

    /// CL_MEM_OFFSET: a sub-buffer's origin in its parent, 0 for a buffer.
    pub fn offset(&self) -> usize {
        match &self.backing {
            Backing::Parent { origin, .. } => *origin,
            Backing::Storage(_) => 0,
        }
    }

    pub fn mem_type(&self) -> cl_mem_object_type {
        match &self.image {
            Some(i) => image_mem::object_type(i.desc.dim),
            None => CL_MEM_OBJECT_BUFFER as cl_mem_object_type,
        }
    }

    /// CL_MEM_HOST_PTR: the application's pointer for CL_MEM_USE_HOST_PTR (plus the origin for
    /// a sub-buffer of such a buffer), else NULL (0).
    pub fn host_ptr(&self) -> usize {
        if has(self.flags, CL_MEM_USE_HOST_PTR) {
            self.address() as usize
        } else {
            0
        }
    }

    pub fn has_flag(&self, flag: u32) -> bool {
        has(self.flags, flag)
    }

    /// Whether the host may read this buffer through commands and maps (not
    /// CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS).
    pub fn host_readable(&self) -> bool {
        !self.has_flag(CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS)
    }

    /// Whether the host may write this buffer (not CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS).
    pub fn host_writable(&self) -> bool {
        !self.has_flag(CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS)
    }

    /// Checks that `offset..offset+len` lies within the buffer.
    pub fn check_range(&self, offset: usize, len: usize) -> Result<(), cl_int> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => Err(CL_INVALID_VALUE),
        }
    }

    /// Copies `len` bytes at `offset` to the application pointer.
    pub fn read(&self, offset: usize, dst: &HostPtr, len: usize) -> Result<(), cl_int> {
        self.check_range(offset, len)?;
        let (s, base) = self.storage();
        raw::read(s, base + offset, dst, 0, len)
    }

    /// Copies `len` bytes from the application pointer to `offset`.
    pub fn write(&self, offset: usize, src: &HostPtr, len: usize) -> Result<(), cl_int> {
        self.check_range(offset, len)?;
        let (s, base) = self.storage();
        raw::write(s, base + offset, src, 0, len)
    }

    /// Copies `len` bytes at `src_offset` of this buffer to `dst_offset` of `dst`.
    pub fn copy_to(&self, src_offset: usize, dst: &Mem, dst_offset: usize, len: usize) -> Result<(), cl_int> {
        self.check_range(src_offset, len)?;
        dst.check_range(dst_offset, len)?;
        let (s, sb) = self.storage();
        let (d, db) = dst.storage();
        raw::copy(s, sb + src_offset, d, db + dst_offset, len)
    }

    /// Fills `len` bytes at `offset` with repeats of `pattern`.
    pub fn fill(&self, offset: usize, pattern: &[u8], len: usize) -> Result<(), cl_int> {
        self.check_range(offset, len)?;
        let (s, base) = self.storage();
        raw::fill(s, base + offset, pattern, len)
    }

    /// clEnqueueReadBufferRect: copies `region` from this buffer (laid out as `buf`) to the
    /// application's memory (laid out as `host`).
    pub fn read_rect(
        &self,
        buf: &RectLayout,
        host_ptr: &HostPtr,
        host: &RectLayout,
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        let (s, base) = self.storage();
        rect::for_each_row(buf, host, region, |b, h, n| {
            self.check_range(b, n)?;
            raw::read(s, base + b, host_ptr, h, n)
        })
    }

    /// clEnqueueWriteBufferRect.
    pub fn write_rect(
        &self,
        buf: &RectLayout,
        host_ptr: &HostPtr,
        host: &RectLayout,
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        let (s, base) = self.storage();
        rect::for_each_row(buf, host, region, |b, h, n| {
            self.check_range(b, n)?;
            raw::write(s, base + b, host_ptr, h, n)
        })
    }

    /// clEnqueueCopyBufferRect from this buffer to `dst`.
    pub fn copy_rect_to(
        &self,
        src: &RectLayout,
        dst: &Mem,
        dst_layout: &RectLayout,
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        let (s, sb) = self.storage();
        let (d, db) = dst.storage();
        rect::for_each_row(src, dst_layout, region, |so, dof, n| {
            self.check_range(so, n)?;
            dst.check_range(dof, n)?;
            raw::copy(s, sb + so, d, db + dof, n)
        })
    }

    /// Records a map of `size` bytes at `offset`; returns the mapped address, a pointer into the
    /// buffer's storage (for CL_MEM_USE_HOST_PTR: the host pointer plus the offset).
    pub fn map(&self, offset: usize, size: usize, flags: cl_map_flags) -> Result<*mut u8, cl_int> {
        self.check_range(offset, size)?;
        let address = self.address().wrapping_add(offset);
        self.maps.lock().push(Mapping { address: address as usize, offset, size, flags });
        Ok(address)
    }

    /// Removes the map that returned `address`: CL_INVALID_VALUE if there is none.
    pub fn unmap(&self, address: *mut u8) -> Result<Mapping, cl_int> {
        let mut maps = self.maps.lock();
        // The most recent map of that address is unmapped first.
        let i = maps.iter().rposition(|m| m.address == address as usize).ok_or(CL_INVALID_VALUE)?;
        Ok(maps.remove(i))
    }

    /// CL_MEM_MAP_COUNT.
    pub fn map_count(&self) -> usize {
        self.maps.lock().len()
    }

    /// clSetMemObjectDestructorCallback: callbacks run in reverse order of registration when
    /// the object is destroyed, before its storage is released.
    pub fn add_destructor_callback(&self, cb: DestructorCallback) {
        self.destructor_callbacks.lock().push(cb);
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // "The registered user callback functions are called in the reverse order in which
        // they were registered. The user callback functions are called and then the memory
        // object's resources are freed and the memory object is deleted." (Fields, including
        // the storage, drop after this body.)
        let callbacks = std::mem::take(&mut *self.destructor_callbacks.lock());
        for cb in callbacks.into_iter().rev() {
            cb();
        }
    }
}

/// The flags of a sub-buffer: the given ones, checked against the parent's, with what is not
/// given inherited from the parent.
pub fn sub_buffer_flags(parent: cl_mem_flags, flags: cl_mem_flags) -> Result<cl_mem_flags, cl_int> {
    // "CL_INVALID_VALUE if ... flags specifies CL_MEM_USE_HOST_PTR or CL_MEM_ALLOC_HOST_PTR or
    // CL_MEM_COPY_HOST_PTR."
    if flags & HOST_PTR_FLAGS != 0 {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if buffer was created with CL_MEM_WRITE_ONLY and flags specifies
    // CL_MEM_READ_WRITE or CL_MEM_READ_ONLY, or if buffer was created with CL_MEM_READ_ONLY and
    // flags specifies CL_MEM_READ_WRITE or CL_MEM_WRITE_ONLY"
    if (has(parent, CL_MEM_WRITE_ONLY) && has(flags, CL_MEM_READ_WRITE | CL_MEM_READ_ONLY))
        || (has(parent, CL_MEM_READ_ONLY) && has(flags, CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY))
    {
        return Err(CL_INVALID_VALUE);
    }
    // "CL_INVALID_VALUE if buffer was created with CL_MEM_HOST_WRITE_ONLY and flags specify
    // CL_MEM_HOST_READ_ONLY, or if buffer was created with CL_MEM_HOST_READ_ONLY and flags
    // specify CL_MEM_HOST_WRITE_ONLY, or if buffer was created with CL_MEM_HOST_NO_ACCESS and
    // flags specify CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_WRITE_ONLY."
    if (has(parent, CL_MEM_HOST_WRITE_ONLY) && has(flags, CL_MEM_HOST_READ_ONLY))
        || (has(parent, CL_MEM_HOST_READ_ONLY) && has(flags, CL_MEM_HOST_WRITE_ONLY))
        || (has(parent, CL_MEM_HOST_NO_ACCESS) && has(flags, CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY))
    {
        return Err(CL_INVALID_VALUE);
    }
    // "If the CL_MEM_READ_WRITE, CL_MEM_READ_ONLY or CL_MEM_WRITE_ONLY values are not specified
    // in flags, they are inherited ... The CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR and
    // CL_MEM_COPY_HOST_PTR values cannot be specified in flags but are inherited ... If the
    // CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_NO_ACCESS values are not
    // specified in flags, they are inherited".
    let mut out = flags | (parent & HOST_PTR_FLAGS);
    if flags & DEVICE_ACCESS == 0 {
        out |= parent & DEVICE_ACCESS;
    }
    if flags & HOST_ACCESS == 0 {
        out |= parent & HOST_ACCESS;
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
