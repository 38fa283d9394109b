//! Image entry points: creation (clCreateImage and its variants), queries, supported formats
//! and the image commands (read, write, copy, fill, map). The checks and the work are the
//! runtime's (`softcl_runtime::memory::image`, `image_mem`); this layer reads the
//! application's pointers and handles. In a context without a device that supports images
//! (none today: both devices do) creation fails with CL_INVALID_OPERATION and no format is
//! listed.

use crate::api::enqueue::{triple, Enqueue, HostAccess};
use crate::api::memory::check_mem_flags;
use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_compiler::image::Dim;
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::memory::image::{self, ImageDesc};
use softcl_runtime::memory::image_mem::{self, ImageInit};
use softcl_runtime::memory::raw::{HostPtr, Storage};
use softcl_runtime::memory::{Mem, BUFFER_FLAGS};
use std::ffi::c_void;
use std::sync::Arc;

/// The flags valid for an image: a buffer's plus CL_MEM_KERNEL_READ_AND_WRITE.
const IMAGE_FLAGS: cl_mem_flags = BUFFER_FLAGS | CL_MEM_KERNEL_READ_AND_WRITE as cl_mem_flags;

fn has(flags: cl_mem_flags, flag: u32) -> bool {
    flags & flag as cl_mem_flags != 0
}

fn create_image(
    context: cl_context,
    properties: Option<Vec<cl_mem_properties>>,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
) -> Result<cl_mem, cl_int> {
    let ctx: Arc<Context> = handles::arc(context)?;
    // "CL_INVALID_PROPERTY if a property name in properties is not a supported property
    // name": no image property is supported.
    if properties.as_ref().is_some_and(|p| !p.is_empty()) {
        return Err(CL_INVALID_PROPERTY);
    }
    // "CL_INVALID_VALUE if values specified in flags are not valid."
    check_mem_flags(flags, IMAGE_FLAGS)?;
    // SAFETY: the application passes NULL or a pointer to a cl_image_format / cl_image_desc
    // valid for the call (API contract); read unaligned as plain data.
    let format = (!format.is_null()).then(|| unsafe { format.read_unaligned() });
    // SAFETY: as above.
    let desc = (!desc.is_null()).then(|| unsafe { desc.read_unaligned() });
    // SAFETY: both members of the union (`buffer`, `mem_object`) are a cl_mem; reading
    // either reads the same plain pointer value.
    let mem_object = match desc.as_ref().map(|d| unsafe { d.__bindgen_anon_1.mem_object }) {
        Some(m) if !m.is_null() => {
            // "CL_INVALID_IMAGE_DESCRIPTOR if ... mem_object is not a valid memory object" (the
            // descriptor's values are not valid).
            Some(handles::arc::<Mem, _>(m).map_err(|_| CL_INVALID_IMAGE_DESCRIPTOR)?)
        }
        _ => None,
    };
    let (d, flags) =
        image_mem::check_create(&ctx, flags, format.as_ref(), desc.as_ref(), !host_ptr.is_null(), mem_object.as_ref())?;
    let init = match mem_object {
        Some(m) => ImageInit::Parent(m),
        None if has(flags, CL_MEM_USE_HOST_PTR) => {
            // SAFETY: OpenCL requires host_ptr of CL_MEM_USE_HOST_PTR to hold the image as the
            // descriptor lays it out (d.bytes(): rows and slices with their pitches) and to
            // stay valid while the memory object exists.
            ImageInit::Use(unsafe { Storage::use_host(host_ptr, d.bytes()) }?)
        }
        // SAFETY: for CL_MEM_COPY_HOST_PTR host_ptr must hold the image's d.bytes() for the
        // call, during which the copy is made.
        None if has(flags, CL_MEM_COPY_HOST_PTR) => ImageInit::Copy(unsafe { HostPtr::new(host_ptr, d.bytes()) }?),
        None => ImageInit::Zeroed,
    };
    Ok(handles::new_handle(Mem::new_image(ctx, flags, d, init, properties)?))
}

pub extern "C" fn clCreateImage(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateImage", errcode_ret, || {
        create_image(context, None, flags, image_format, image_desc, host_ptr)
    })
}

pub extern "C" fn clCreateImageWithProperties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateImageWithProperties", errcode_ret, || {
        let props = if properties.is_null() { None } else { Some(ptr::property_list(properties)?) };
        create_image(context, props, flags, image_format, image_desc, host_ptr)
    })
}

/// The OpenCL 1.1 2D/3D creation calls: a descriptor of their arguments.
fn legacy_desc(ty: u32, size: [usize; 3], row_pitch: usize, slice_pitch: usize) -> cl_image_desc {
    cl_image_desc {
        image_type: ty as cl_mem_object_type,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_row_pitch: row_pitch,
        image_slice_pitch: slice_pitch,
        ..Default::default()
    }
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clCreateImage2D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateImage2D", errcode_ret, || {
        let d = legacy_desc(CL_MEM_OBJECT_IMAGE2D, [image_width, image_height, 0], image_row_pitch, 0);
        create_image(context, None, flags, image_format, &d, host_ptr)
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clCreateImage3D(
    context: cl_context,
    flags: cl_mem_flags,
    image_format: *const cl_image_format,
    image_width: usize,
    image_height: usize,
    image_depth: usize,
    image_row_pitch: usize,
    image_slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    entry::object("clCreateImage3D", errcode_ret, || {
        let d = legacy_desc(
            CL_MEM_OBJECT_IMAGE3D,
            [image_width, image_height, image_depth],
            image_row_pitch,
            image_slice_pitch,
        );
        create_image(context, None, flags, image_format, &d, host_ptr)
    })
}

/// An image argument: CL_INVALID_MEM_OBJECT if not an image.
fn image_of(mem: &Mem) -> Result<ImageDesc, cl_int> {
    mem.image_desc().copied().ok_or(CL_INVALID_MEM_OBJECT)
}

fn format_bytes(d: &ImageDesc) -> Vec<u8> {
    let mut b = d.format.order.to_cl().to_ne_bytes().to_vec();
    b.extend_from_slice(&d.format.ty.to_cl().to_ne_bytes());
    b
}

pub extern "C" fn clGetImageInfo(
    image: cl_mem,
    param_name: cl_image_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetImageInfo", || {
        let mem: Arc<Mem> = handles::arc(image)?;
        // "CL_INVALID_MEM_OBJECT if image is a not a valid image object."
        let d = image_of(&mem)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        let (width, height, depth, array_size) = d.info_sizes();
        match param_name {
            CL_IMAGE_FORMAT => out.bytes(&format_bytes(&d)),
            CL_IMAGE_ELEMENT_SIZE => out.write(&d.format.pixel_size()),
            CL_IMAGE_ROW_PITCH => out.write(&d.row_pitch),
            // "For a 1D image, 1D image buffer object and a 2D image object return 0."
            CL_IMAGE_SLICE_PITCH => out.write(&match d.dim {
                Dim::D1 | Dim::D1Buffer | Dim::D2 => 0,
                _ => d.slice_pitch,
            }),
            CL_IMAGE_WIDTH => out.write(&width),
            CL_IMAGE_HEIGHT => out.write(&height),
            CL_IMAGE_DEPTH => out.write(&depth),
            CL_IMAGE_ARRAY_SIZE => out.write(&array_size),
            CL_IMAGE_BUFFER => {
                let b = mem.image_buffer().map_or(std::ptr::null_mut(), handles::handle_of::<Mem, c_void>);
                out.write(&b)
            }
            CL_IMAGE_NUM_MIP_LEVELS | CL_IMAGE_NUM_SAMPLES => out.write(&0u32),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clGetSupportedImageFormats(
    context: cl_context,
    flags: cl_mem_flags,
    image_type: cl_mem_object_type,
    num_entries: cl_uint,
    image_formats: *mut cl_image_format,
    num_image_formats: *mut cl_uint,
) -> cl_int {
    entry::code("clGetSupportedImageFormats", || {
        let ctx: &Context = handles::borrow(context)?;
        // "CL_INVALID_VALUE if flags or image_type are not valid, or if num_entries is 0 and
        // image_formats is not NULL."
        check_mem_flags(flags, IMAGE_FLAGS)?;
        let dim = image::dim_of(image_type).ok_or(CL_INVALID_VALUE)?;
        if num_entries == 0 && !image_formats.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // Without a device that supports images the list is empty.
        let formats =
            if image_mem::context_limits(ctx).is_ok() { image::supported_formats(dim, flags) } else { vec![] };
        let list: Vec<cl_image_format> = formats
            .iter()
            .map(|f| cl_image_format { image_channel_order: f.order.to_cl(), image_channel_data_type: f.ty.to_cl() })
            .collect();
        ptr::write_array(image_formats, num_entries as usize, &list);
        ptr::write_opt(num_image_formats, list.len() as cl_uint);
        Ok(())
    })
}

impl Enqueue {
    /// An image argument of a command: an image of the queue's context, on a device that
    /// supports images, with the host access the command makes allowed.
    fn image(&self, mem: cl_mem, access: HostAccess) -> Result<Arc<Mem>, cl_int> {
        let mem: Arc<Mem> = handles::arc(mem)?;
        image_of(&mem)?;
        if !Arc::ptr_eq(&mem.context, &self.queue.context) {
            return Err(CL_INVALID_CONTEXT);
        }
        // "CL_INVALID_OPERATION if the device associated with command_queue does not support
        // images (i.e. CL_DEVICE_IMAGE_SUPPORT specified in the Device Queries table is
        // CL_FALSE)."
        if self.queue.device.info().images.is_none() {
            return Err(CL_INVALID_OPERATION);
        }
        // "CL_INVALID_OPERATION if clEnqueueReadImage is called on image which has been
        // created with CL_MEM_HOST_WRITE_ONLY or CL_MEM_HOST_NO_ACCESS" (and the like for
        // writes and maps).
        match access {
            HostAccess::Read if !mem.host_readable() => Err(CL_INVALID_OPERATION),
            HostAccess::Write if !mem.host_writable() => Err(CL_INVALID_OPERATION),
            _ => Ok(mem),
        }
    }
}

/// Origin and region of an image command: NULL is CL_INVALID_VALUE; checked against the
/// image (in range, non-empty, 0 / 1 in the dimensions it does not have).
fn region_of(d: &ImageDesc, origin: *const usize, region: *const usize) -> Result<([usize; 3], [usize; 3]), cl_int> {
    let (o, r) = (triple(origin)?, triple(region)?);
    d.check_region(o, r)?;
    Ok((o, r))
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments, forwarded
fn read_write_image(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    origin: *const usize,
    region: *const usize,
    pitches: (usize, usize),
    ptr: *const c_void,
    wait: (cl_uint, *const cl_event),
    event: *mut cl_event,
    write: bool,
) -> Result<(), cl_int> {
    let cmd = Enqueue::new(command_queue, wait.0, wait.1)?;
    let mem = cmd.image(image, if write { HostAccess::Write } else { HostAccess::Read })?;
    let d = image_of(&mem)?;
    let (o, r) = region_of(&d, origin, region)?;
    let (host, _, len) = image_mem::host_layout(&d, r, pitches.0, pitches.1)?;
    // SAFETY: OpenCL requires ptr to hold the host copy of the region (len bytes with the
    // given pitches) and to stay valid until the command completes.
    let host_ptr = unsafe { HostPtr::new(ptr, len) }?;
    if write {
        cmd.submit(CL_COMMAND_WRITE_IMAGE, blocking, event, move || mem.write_image(o, r, &host_ptr, &host))
    } else {
        cmd.submit(CL_COMMAND_READ_IMAGE, blocking, event, move || mem.read_image(o, r, &host_ptr, &host))
    }
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueReadImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_read: cl_bool,
    origin: *const usize,
    region: *const usize,
    row_pitch: usize,
    slice_pitch: usize,
    ptr: *mut c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueReadImage", || {
        let wait = (num_events_in_wait_list, event_wait_list);
        let pitches = (row_pitch, slice_pitch);
        read_write_image(command_queue, image, blocking_read, origin, region, pitches, ptr, wait, event, false)
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueWriteImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_write: cl_bool,
    origin: *const usize,
    region: *const usize,
    input_row_pitch: usize,
    input_slice_pitch: usize,
    ptr: *const c_void,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueWriteImage", || {
        let wait = (num_events_in_wait_list, event_wait_list);
        let pitches = (input_row_pitch, input_slice_pitch);
        read_write_image(command_queue, image, blocking_write, origin, region, pitches, ptr, wait, event, true)
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueCopyImage(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_image: cl_mem,
    src_origin: *const usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueCopyImage", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let src = cmd.image(src_image, HostAccess::None)?;
        let dst = cmd.image(dst_image, HostAccess::None)?;
        let (so, dof, r) = (triple(src_origin)?, triple(dst_origin)?, triple(region)?);
        src.check_copy_image(so, &dst, dof, r)?;
        cmd.submit(CL_COMMAND_COPY_IMAGE, CL_FALSE, event, move || src.copy_image_to(so, &dst, dof, r))
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueFillImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    fill_color: *const c_void,
    origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueFillImage", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let mem = cmd.image(image, HostAccess::None)?;
        let d = image_of(&mem)?;
        let (o, r) = region_of(&d, origin, region)?;
        // "CL_INVALID_VALUE if fill_color is NULL." The color is a float4, int4 or uint4 by
        // the format's kind: four 32-bit components in every case (float bits for float).
        if fill_color.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let mut color = [0u32; 4];
        // SAFETY: the application's fill_color points at a four-component 32-bit vector
        // (API contract); copied bytewise, so alignment does not matter.
        unsafe { std::ptr::copy_nonoverlapping(fill_color as *const u8, color.as_mut_ptr() as *mut u8, 16) };
        cmd.submit(CL_COMMAND_FILL_IMAGE, CL_FALSE, event, move || mem.fill_image(color, o, r))
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueCopyImageToBuffer(
    command_queue: cl_command_queue,
    src_image: cl_mem,
    dst_buffer: cl_mem,
    src_origin: *const usize,
    region: *const usize,
    dst_offset: usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueCopyImageToBuffer", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let src = cmd.image(src_image, HostAccess::None)?;
        let dst = cmd.buffer(dst_buffer, HostAccess::None)?;
        let (o, r) = (triple(src_origin)?, triple(region)?);
        // "CL_INVALID_VALUE if the 1D, 2D or 3D rectangular region specified by src_origin and
        // src_origin + region refers to a region outside src_image, or if the region specified
        // by dst_offset and dst_offset + dst_cb to a region outside dst_buffer."
        src.image_buffer_layouts(o, r, &dst, dst_offset)?;
        cmd.submit(CL_COMMAND_COPY_IMAGE_TO_BUFFER, CL_FALSE, event, move || {
            src.copy_image_to_buffer(o, r, &dst, dst_offset)
        })
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueCopyBufferToImage(
    command_queue: cl_command_queue,
    src_buffer: cl_mem,
    dst_image: cl_mem,
    src_offset: usize,
    dst_origin: *const usize,
    region: *const usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueCopyBufferToImage", || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let src = cmd.buffer(src_buffer, HostAccess::None)?;
        let dst = cmd.image(dst_image, HostAccess::None)?;
        let (o, r) = (triple(dst_origin)?, triple(region)?);
        dst.image_buffer_layouts(o, r, &src, src_offset)?;
        cmd.submit(CL_COMMAND_COPY_BUFFER_TO_IMAGE, CL_FALSE, event, move || {
            dst.copy_buffer_to_image(&src, src_offset, o, r)
        })
    })
}

#[allow(clippy::too_many_arguments)] // the entry point's arguments
pub extern "C" fn clEnqueueMapImage(
    command_queue: cl_command_queue,
    image: cl_mem,
    blocking_map: cl_bool,
    map_flags: cl_map_flags,
    origin: *const usize,
    region: *const usize,
    image_row_pitch: *mut usize,
    image_slice_pitch: *mut usize,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    entry::object("clEnqueueMapImage", errcode_ret, || {
        let cmd = Enqueue::new(command_queue, num_events_in_wait_list, event_wait_list)?;
        let read = map_flags & CL_MAP_READ as cl_map_flags != 0;
        let write = map_flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags != 0;
        let valid = (CL_MAP_READ | CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) as cl_map_flags;
        let invalidate = map_flags & CL_MAP_WRITE_INVALIDATE_REGION as cl_map_flags != 0;
        // "CL_INVALID_VALUE if ... values specified in map_flags are not valid."
        if map_flags & !valid != 0 || (invalidate && map_flags & (CL_MAP_READ | CL_MAP_WRITE) as cl_map_flags != 0) {
            return Err(CL_INVALID_VALUE);
        }
        let access = match (read, write) {
            (true, _) => HostAccess::Read,
            (false, true) => HostAccess::Write,
            _ => HostAccess::None,
        };
        let mem = cmd.image(image, access)?;
        // "CL_INVALID_OPERATION if image has been created with CL_MEM_HOST_READ_ONLY and
        // CL_MAP_WRITE or CL_MAP_WRITE_INVALIDATE_REGION is set in map_flags" (reads were
        // checked above).
        if write && !mem.host_writable() {
            return Err(CL_INVALID_OPERATION);
        }
        let d = image_of(&mem)?;
        let (o, r) = region_of(&d, origin, region)?;
        // "CL_INVALID_VALUE if image_row_pitch is NULL."
        if image_row_pitch.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_VALUE if image is a 3D image, 1D or 2D image array object and
        // image_slice_pitch is NULL."
        if matches!(d.dim, Dim::D1Array | Dim::D2Array | Dim::D3) && image_slice_pitch.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        let (address, row_pitch, slice_pitch) = mem.map_image(o, r, map_flags)?;
        if let Err(e) = cmd.submit(CL_COMMAND_MAP_IMAGE, blocking_map, event, || Ok(())) {
            let _ = mem.unmap(address);
            return Err(e);
        }
        ptr::write_opt(image_row_pitch, row_pitch);
        ptr::write_opt(image_slice_pitch, slice_pitch);
        Ok(address as *mut c_void)
    })
}
