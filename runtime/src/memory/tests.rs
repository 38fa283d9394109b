use super::*;
use std::ffi::c_void;

fn context() -> Arc<Context> {
    let devices = crate::platform::platform().devices.clone();
    Context::new(devices, Vec::new(), None).expect("the platform has devices")
}

fn buffer(size: usize) -> Arc<Mem> {
    Mem::new_buffer(context(), 0, size, BufferInit::Zeroed, None).unwrap()
}

const RW: cl_mem_flags = CL_MEM_READ_WRITE as cl_mem_flags;

#[test]
fn allocation_is_aligned_zeroed_and_read_write_by_default() {
    for size in [1, 7, 128, 4096, 1 << 20] {
        let b = buffer(size);
        assert_eq!(b.address() as usize % raw::BUFFER_ALIGN, 0);
        assert_eq!(b.flags, RW);
        let (s, base) = b.storage();
        assert!(s.to_vec(base, size).unwrap().iter().all(|&x| x == 0));
        assert_eq!(b.host_ptr(), 0);
    }
}

#[test]
fn copy_host_ptr_copies_and_use_host_ptr_aliases() {
    let mut host: Vec<u32> = (0..64).collect();
    let bytes = host.len() * 4;
    // SAFETY: `host` outlives the call (the copy happens at creation).
    let src = unsafe { HostPtr::new(host.as_ptr() as *const c_void, bytes) }.unwrap();
    let copied = Mem::new_buffer(context(), CL_MEM_COPY_HOST_PTR as u64, bytes, BufferInit::Copy(src), None).unwrap();
    assert_ne!(copied.address(), host.as_mut_ptr() as *mut u8);

    // SAFETY: `host` outlives `used` (dropped at the end of the test before `host`).
    let storage = unsafe { Storage::use_host(host.as_mut_ptr() as *mut c_void, bytes) }.unwrap();
    let used = Mem::new_buffer(context(), CL_MEM_USE_HOST_PTR as u64, bytes, BufferInit::Use(storage), None).unwrap();
    assert_eq!(used.address(), host.as_mut_ptr() as *mut u8);
    assert_eq!(used.host_ptr(), host.as_ptr() as usize);
    // Writes through the buffer land in the application's memory.
    used.fill(4, &[0xff; 4], 4).unwrap();
    copied.fill(0, &[0; 4], 4).unwrap();
    let mut out = [0u8; 8];
    // SAFETY: `out` outlives the call.
    let dst = unsafe { HostPtr::new(out.as_mut_ptr() as *const c_void, 8) }.unwrap();
    copied.read(0, &dst, 8).unwrap();
    assert_eq!(out, [0, 0, 0, 0, 1, 0, 0, 0]);
    drop(used);
    assert_eq!(host[1], u32::MAX);
    assert_eq!(host[2], 2);
}

#[test]
fn sub_buffer_address_arithmetic_and_flags() {
    let ctx = context();
    let align = ctx.devices.iter().map(|d| d.info().mem_base_addr_align_bits as usize / 8).min().unwrap();
    let parent =
        Mem::new_buffer(ctx, (CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) as u64, align * 4, BufferInit::Zeroed, None)
            .unwrap();
    let sub = Mem::new_sub_buffer(&parent, 0, align, align * 2).unwrap();
    assert_eq!(sub.address(), parent.address().wrapping_add(align));
    assert_eq!(sub.offset(), align);
    assert_eq!(sub.flags, (CL_MEM_READ_ONLY | CL_MEM_HOST_WRITE_ONLY) as u64);
    assert!(Arc::ptr_eq(sub.parent().unwrap(), &parent));
    assert!(!sub.host_readable() && sub.host_writable());
    assert_eq!(sub.storage().1, align);

    sub.fill(0, &[1, 2], 4).unwrap();
    let (s, _) = parent.storage();
    assert_eq!(s.to_vec(align, 4).unwrap(), vec![1, 2, 1, 2]);
    assert_eq!(sub.fill(align * 2 - 2, &[1, 2], 4), Err(CL_INVALID_VALUE), "sub-buffer bounds, not parent's");

    assert_eq!(Mem::new_sub_buffer(&sub, 0, 0, align).err(), Some(CL_INVALID_MEM_OBJECT));
    assert_eq!(Mem::new_sub_buffer(&parent, 0, 1, align).err(), Some(CL_MISALIGNED_SUB_BUFFER_OFFSET));
    assert_eq!(Mem::new_sub_buffer(&parent, 0, align, align * 4).err(), Some(CL_INVALID_VALUE));
    assert_eq!(Mem::new_sub_buffer(&parent, 0, usize::MAX - 1, 2).err(), Some(CL_INVALID_VALUE));
    assert_eq!(Mem::new_sub_buffer(&parent, 0, 0, 0).err(), Some(CL_INVALID_BUFFER_SIZE));
    let rw = CL_MEM_READ_WRITE as u64;
    assert_eq!(Mem::new_sub_buffer(&parent, rw, 0, align).err(), Some(CL_INVALID_VALUE));
    let host_ro = CL_MEM_HOST_READ_ONLY as u64;
    assert_eq!(Mem::new_sub_buffer(&parent, host_ro, 0, align).err(), Some(CL_INVALID_VALUE));
    let alloc = CL_MEM_ALLOC_HOST_PTR as u64;
    assert_eq!(Mem::new_sub_buffer(&parent, alloc, 0, align).err(), Some(CL_INVALID_VALUE));
}

#[test]
fn sub_buffer_flag_inheritance() {
    let p = (CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR) as u64;
    assert_eq!(sub_buffer_flags(p, 0), Ok(p));
    let ro = CL_MEM_READ_ONLY as u64;
    assert_eq!(sub_buffer_flags(p, ro), Ok(ro | CL_MEM_USE_HOST_PTR as u64));
    let p = (CL_MEM_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS) as u64;
    assert_eq!(sub_buffer_flags(p, CL_MEM_HOST_WRITE_ONLY as u64), Err(CL_INVALID_VALUE));
    assert_eq!(sub_buffer_flags(p, CL_MEM_HOST_NO_ACCESS as u64), Ok(p));
}

#[test]
fn destructor_callbacks_run_in_reverse_order_before_storage_release() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let b = buffer(16);
    let sub_parent = b.clone();
    for i in 0..3 {
        let order = order.clone();
        b.add_destructor_callback(Box::new(move || order.lock().push(i)));
    }
    drop(b);
    assert!(order.lock().is_empty(), "still referenced");
    drop(sub_parent);
    assert_eq!(*order.lock(), vec![2, 1, 0]);
}

#[test]
fn sub_buffer_keeps_parent_alive() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let parent = buffer(1024);
    let o = order.clone();
    parent.add_destructor_callback(Box::new(move || o.lock().push("parent")));
    let sub = Mem::new_sub_buffer(&parent, 0, 0, 16).unwrap();
    let o = order.clone();
    sub.add_destructor_callback(Box::new(move || o.lock().push("sub")));
    drop(parent);
    assert!(order.lock().is_empty());
    drop(sub);
    assert_eq!(*order.lock(), vec!["sub", "parent"]);
}

#[test]
fn maps_count_and_unmap_checks_the_pointer() {
    let b = buffer(256);
    let p = b.map(16, 32, CL_MAP_READ as u64).unwrap();
    assert_eq!(p, b.address().wrapping_add(16));
    let q = b.map(16, 8, CL_MAP_WRITE as u64).unwrap();
    assert_eq!(b.map_count(), 2);
    assert_eq!(b.map(250, 8, CL_MAP_READ as u64), Err(CL_INVALID_VALUE));
    assert_eq!(b.unmap(b.address()), Err(CL_INVALID_VALUE));
    assert_eq!(b.unmap(q).unwrap().size, 8, "latest map of the address first");
    assert_eq!(b.unmap(p).unwrap().size, 32);
    assert_eq!(b.map_count(), 0);
    assert_eq!(b.unmap(p), Err(CL_INVALID_VALUE));
}

#[test]
fn rect_copies() {
    // A 4x3 rectangle at (1,1) of a 8-byte-pitch buffer, to a tightly packed host array.
    let b = buffer(64);
    let pattern: Vec<u8> = (0..64).collect();
    // SAFETY: `pattern` outlives the call.
    let src = unsafe { HostPtr::new(pattern.as_ptr() as *const c_void, 64) }.unwrap();
    b.write(0, &src, 64).unwrap();
    let region = [4, 3, 1];
    let buf = RectLayout::new([1, 1, 0], region, 8, 0).unwrap();
    let host = RectLayout::new([0; 3], region, 0, 0).unwrap();
    let mut out = [0u8; 12];
    // SAFETY: `out` outlives the call.
    let dst = unsafe { HostPtr::new(out.as_mut_ptr() as *const c_void, 12) }.unwrap();
    b.read_rect(&buf, &dst, &host, region).unwrap();
    assert_eq!(out, [9, 10, 11, 12, 17, 18, 19, 20, 25, 26, 27, 28]);

    let other = buffer(64);
    b.copy_rect_to(&buf, &other, &host, region).unwrap();
    let (s, _) = other.storage();
    assert_eq!(s.to_vec(0, 12).unwrap(), out.to_vec());

    let too_far = RectLayout::new([5, 7, 0], region, 8, 0).unwrap();
    assert_eq!(b.read_rect(&too_far, &dst, &host, region), Err(CL_INVALID_VALUE));
}

mod images {
    use super::*;
    use crate::memory::image::{describe, ImageLimits, Source};
    use crate::memory::image_mem::{check_create, host_layout, ImageInit};

    const LIMITS: ImageLimits = ImageLimits {
        max_2d: [16384; 2],
        max_3d: [2048; 3],
        max_array_size: 2048,
        max_buffer_size: 1 << 27,
        pitch_alignment: 1,
        base_address_alignment: 1,
    };

    fn image(ty: u32, order: u32, data_type: u32, size: [usize; 3], layers: usize) -> Arc<Mem> {
        let f = cl_image_format { image_channel_order: order, image_channel_data_type: data_type };
        let d = cl_image_desc {
            image_type: ty as cl_mem_object_type,
            image_width: size[0],
            image_height: size[1],
            image_depth: size[2],
            image_array_size: layers,
            ..Default::default()
        };
        let desc = describe(Some(&f), Some(&d), Source::Own { host_ptr: false }, &LIMITS, |_, _| true).unwrap();
        Mem::new_image(context(), 0, desc, ImageInit::Zeroed, None).unwrap()
    }

    #[test]
    fn host_layouts_of_read_and_write() {
        let img = image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT8, [8, 4, 0], 0);
        let d = *img.image_desc().unwrap();
        let (l, bytes, len) = host_layout(&d, [3, 2, 1], 0, 0).unwrap();
        assert_eq!((l.row_pitch, bytes, len), (12, [12, 2, 1], 24));
        let (_, _, len) = host_layout(&d, [3, 2, 1], 16, 0).unwrap();
        assert_eq!(len, 28, "the last row is not padded");
        assert_eq!(host_layout(&d, [3, 2, 1], 8, 0).unwrap_err(), CL_INVALID_VALUE, "row pitch too short");
        assert_eq!(host_layout(&d, [3, 2, 1], 0, 48).unwrap_err(), CL_INVALID_VALUE, "slice pitch of a 2D image");
        let arr = image(CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_R, CL_FLOAT, [8, 0, 0], 3);
        let d = *arr.image_desc().unwrap();
        let (l, bytes, len) = host_layout(&d, [2, 3, 1], 0, 16).unwrap();
        assert_eq!((l.slice_pitch, bytes, len), (16, [8, 1, 3], 40), "layers are slices");
        assert_eq!(host_layout(&d, [2, 3, 1], 0, 12).unwrap_err(), CL_INVALID_VALUE, "not a row multiple");
        assert_eq!(arr.mem_type(), CL_MEM_OBJECT_IMAGE1D_ARRAY as cl_mem_object_type);
        assert!(!arr.is_sub_buffer());
    }

    #[test]
    fn fill_copy_and_map() {
        let a = image(CL_MEM_OBJECT_IMAGE2D, CL_RGBA, CL_UNORM_INT8, [4, 4, 0], 0);
        a.fill_image([1.0f32.to_bits(), 0, 0.5f32.to_bits(), 0], [1, 1, 0], [2, 3, 1]).unwrap();
        let (s, base) = a.storage();
        let bytes = s.to_vec(base, 64).unwrap();
        for y in 0..4 {
            for x in 0..4 {
                let px = &bytes[(y * 4 + x) * 4..][..4];
                let inside = (1..3).contains(&x) && (1..4).contains(&y);
                assert_eq!(px, if inside { &[255u8, 0, 128, 0][..] } else { &[0; 4][..] }, "({x},{y})");
            }
        }
        // 2D -> 1D array: rows become layers.
        let arr = image(CL_MEM_OBJECT_IMAGE1D_ARRAY, CL_RGBA, CL_UNORM_INT8, [4, 0, 0], 4);
        a.check_copy_image([0, 1, 0], &arr, [0, 0, 0], [4, 3, 1]).unwrap();
        a.copy_image_to([0, 1, 0], &arr, [0, 0, 0], [4, 3, 1]).unwrap();
        let (s2, b2) = arr.storage();
        assert_eq!(s2.to_vec(b2, 48).unwrap(), bytes[16..64].to_vec());
        assert_eq!(a.check_copy_image([0, 0, 0], &a, [1, 1, 0], [2, 2, 1]), Err(CL_MEM_COPY_OVERLAP));
        assert_eq!(a.check_copy_image([0, 0, 0], &a, [2, 0, 0], [2, 2, 1]), Ok(()));
        let other = image(CL_MEM_OBJECT_IMAGE2D, CL_R, CL_FLOAT, [4, 4, 0], 0);
        assert_eq!(a.check_copy_image([0; 3], &other, [0; 3], [1, 1, 1]), Err(CL_IMAGE_FORMAT_MISMATCH));
        // Image <-> buffer.
        let buf = buffer(64);
        a.copy_image_to_buffer([1, 1, 0], [2, 2, 1], &buf, 8).unwrap();
        let (bs, bb) = buf.storage();
        assert_eq!(bs.to_vec(bb + 8, 16).unwrap(), [[255u8, 0, 128, 0]; 4].concat());
        assert_eq!(a.image_buffer_layouts([0; 3], [4, 4, 1], &buf, 4).unwrap_err(), CL_INVALID_VALUE);
        other.copy_buffer_to_image(&buf, 8, [0; 3], [4, 1, 1]).unwrap();
        // Map: the region's first pixel in the image's storage, with its pitches.
        let (p, rp, sp) = a.map_image([1, 2, 0], [2, 1, 1], CL_MAP_READ as cl_map_flags).unwrap();
        assert_eq!((p as usize - a.address() as usize, rp, sp), (2 * 16 + 4, 16, 0));
        assert_eq!(a.map_count(), 1);
        a.unmap(p).unwrap();
        assert_eq!(a.map_image([3, 0, 0], [2, 1, 1], 0).unwrap_err(), CL_INVALID_VALUE);
    }

    /// clCreateImage's work for a 2D image of `size` in `ctx`, created from `mem_object` (an
    /// image or a buffer) or with its own storage (None).
    fn image2d(
        ctx: &Arc<Context>,
        flags: cl_mem_flags,
        (order, ty): (u32, u32),
        size: [usize; 2],
        mem_object: Option<&Arc<Mem>>,
    ) -> Result<Arc<Mem>, cl_int> {
        let f = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
        let d = cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE2D as cl_mem_object_type,
            image_width: size[0],
            image_height: size[1],
            ..Default::default()
        };
        let (desc, flags) = check_create(ctx, flags, Some(&f), Some(&d), false, mem_object)?;
        let init = mem_object.map_or(ImageInit::Zeroed, |m| ImageInit::Parent(m.clone()));
        Mem::new_image(ctx.clone(), flags, desc, init, None)
    }

    /// [`image2d`] from `mem_object`.
    fn create_from(
        ctx: &Arc<Context>,
        flags: cl_mem_flags,
        order: u32,
        ty: u32,
        size: [usize; 2],
        mem_object: &Arc<Mem>,
    ) -> Result<Arc<Mem>, cl_int> {
        image2d(ctx, flags, (order, ty), size, Some(mem_object))
    }

    #[test]
    fn a_2d_image_from_a_2d_image_shares_its_pixels() {
        let ctx = context();
        let parent_flags = (CL_MEM_READ_WRITE | CL_MEM_HOST_WRITE_ONLY) as cl_mem_flags;
        let parent = image2d(&ctx, parent_flags, (CL_RGBA, CL_UNORM_INT8), [4, 2], None).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let o = order.clone();
        parent.add_destructor_callback(Box::new(move || o.lock().push("parent")));
        // sRGB is read-only: a view with the parent's CL_MEM_READ_WRITE is not a supported
        // format; CL_MEM_READ_ONLY is, with the host access inherited.
        let ro = CL_MEM_READ_ONLY as cl_mem_flags;
        assert_eq!(
            create_from(&ctx, 0, CL_sRGBA, CL_UNORM_INT8, [4, 2], &parent).err(),
            Some(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        );
        let view = create_from(&ctx, ro, CL_sRGBA, CL_UNORM_INT8, [4, 2], &parent).unwrap();
        assert_eq!(view.flags, ro | CL_MEM_HOST_WRITE_ONLY as cl_mem_flags);
        assert!(Arc::ptr_eq(view.parent().unwrap(), &parent), "CL_MEM_ASSOCIATED_MEMOBJECT");
        assert!(view.image_buffer().is_none(), "CL_IMAGE_BUFFER: not a buffer");
        assert_eq!((view.offset(), view.size, view.address()), (0, 32, parent.address()));
        assert_eq!(view.image_desc().unwrap().format.order.to_cl(), CL_sRGBA);
        assert_eq!(view.image_arg().unwrap().data, parent.address(), "kernels see the parent's pixels");
        assert_eq!(view.image_arg().unwrap().channel_order, CL_sRGBA);
        assert!(!view.is_sub_buffer());
        // Writes through the view are the parent's bytes, and the other way round.
        view.fill_image([1.0f32.to_bits(), 0, 0, 1.0f32.to_bits()], [1, 1, 0], [1, 1, 1]).unwrap();
        let (s, base) = parent.storage();
        assert_eq!(s.to_vec(base + 16 + 4, 4).unwrap(), vec![255, 0, 0, 255]);
        parent.fill_image([0, 0, 1.0f32.to_bits(), 0], [0, 0, 0], [1, 1, 1]).unwrap();
        let (s, base) = view.storage();
        assert_eq!(s.to_vec(base, 4).unwrap(), vec![0, 0, 255, 0]);
        // A view of a view, and a CL_DEPTH view of a CL_R image.
        let back = create_from(&ctx, 0, CL_RGBA, CL_UNORM_INT8, [4, 2], &view).unwrap();
        assert_eq!((back.address(), back.flags), (parent.address(), view.flags));
        let r = image2d(&ctx, 0, (CL_R, CL_FLOAT), [3, 3], None).unwrap();
        let depth = create_from(&ctx, 0, CL_DEPTH, CL_FLOAT, [3, 3], &r).unwrap();
        assert_eq!(depth.image_desc().unwrap().row_pitch, 12);
        // The flags rules of images from memory objects.
        let e = |flags: u32| create_from(&ctx, flags as cl_mem_flags, CL_sRGBA, CL_UNORM_INT8, [4, 2], &view).err();
        assert_eq!(e(CL_MEM_READ_WRITE), Some(CL_INVALID_VALUE), "read-write of a read-only image");
        assert_eq!(e(CL_MEM_HOST_READ_ONLY), Some(CL_INVALID_VALUE), "host read of host write-only");
        assert_eq!(e(CL_MEM_ALLOC_HOST_PTR), Some(CL_INVALID_VALUE), "host pointer flags");
        // Another context's image, a descriptor or a format that does not match.
        assert_eq!(
            create_from(&context(), ro, CL_sRGBA, CL_UNORM_INT8, [4, 2], &parent).err(),
            Some(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        assert_eq!(
            create_from(&ctx, ro, CL_sRGBA, CL_UNORM_INT8, [4, 1], &parent).err(),
            Some(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        assert_eq!(
            create_from(&ctx, ro, CL_BGRA, CL_UNORM_INT8, [4, 2], &parent).err(),
            Some(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        );
        // A 2D image from a buffer is a 2D image: it has views too, whose buffer is not theirs.
        let buf = Mem::new_buffer(ctx.clone(), 0, 4096, BufferInit::Zeroed, None).unwrap();
        let limits = crate::memory::image_mem::context_limits(&ctx).unwrap();
        let w = limits.pitch_alignment;
        let from_buf = image2d(&ctx, 0, (CL_RGBA, CL_UNORM_INT8), [w, 2], Some(&buf)).unwrap();
        assert!(Arc::ptr_eq(from_buf.image_buffer().unwrap(), &buf));
        let v = create_from(&ctx, ro, CL_sRGBA, CL_UNORM_INT8, [w, 2], &from_buf).unwrap();
        assert_eq!(v.address(), buf.address());
        assert!(v.image_buffer().is_none());
        // The parent lives as long as its views.
        drop((back, parent));
        assert!(order.lock().is_empty(), "the view holds its parent");
        drop(view);
        assert_eq!(*order.lock(), vec!["parent"]);
    }
}
