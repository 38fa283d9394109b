//! Image memory objects: a [`Mem`] whose bytes are laid out as an [`ImageDesc`] says, with
//! the [`ImageArg`] kernels receive, and the work of the image commands (read, write, copy,
//! fill, map). Storage is like a buffer's: owned, the application's (CL_MEM_USE_HOST_PTR)
//! or, for images created from a buffer or from a 2D image, that memory object's.

use super::image::ImageDesc;
use super::raw::{self, HostPtr, ImageArgBox, Storage};
use super::rect::{self, RectLayout};
use super::{Backing, Mapping, Mem};
use crate::cl::*;
use crate::context::Context;
use crate::handle::{Header, ObjectKind};
use parking_lot::Mutex;
use softcl_compiler::abi::ImageArg;
use softcl_compiler::image::{Components, Dim};
use std::sync::Arc;

/// What an image memory object adds to a [`Mem`].
pub(super) struct ImageData {
    pub desc: ImageDesc,
    arg: ImageArgBox,
}

/// CL_MEM_TYPE of an image of kind `dim`.
pub fn object_type(dim: Dim) -> cl_mem_object_type {
    (match dim {
        Dim::D1 => CL_MEM_OBJECT_IMAGE1D,
        Dim::D1Buffer => CL_MEM_OBJECT_IMAGE1D_BUFFER,
        Dim::D1Array => CL_MEM_OBJECT_IMAGE1D_ARRAY,
        Dim::D2 => CL_MEM_OBJECT_IMAGE2D,
        Dim::D2Array => CL_MEM_OBJECT_IMAGE2D_ARRAY,
        Dim::D3 => CL_MEM_OBJECT_IMAGE3D,
    }) as cl_mem_object_type
}

/// Where a new image's bytes come from.
pub enum ImageInit {
    /// An owned allocation, zero-initialised.
    Zeroed,
    /// An owned allocation filled from the application's memory (CL_MEM_COPY_HOST_PTR), laid
    /// out with the descriptor's pitches.
    Copy(HostPtr),
    /// The application's memory itself (CL_MEM_USE_HOST_PTR).
    Use(Storage),
    /// The storage of another memory object: a buffer (1D buffer images; 2D images with
    /// cl_khr_image2d_from_buffer) or a 2D image (2D images from 2D images).
    Parent(Arc<Mem>),
}

/// The host side of clEnqueueReadImage / clEnqueueWriteImage: the layout of the host memory
/// for `region` (pixels; layers for arrays) of an image `desc`, its byte region, and the
/// bytes the host pointer must hold. `row_pitch`/`slice_pitch` as the application passed
/// them (0 = packed). CL_INVALID_VALUE for a row pitch shorter than a row, a slice pitch
/// shorter than a slice or not a multiple of the row pitch, or a slice pitch for an image
/// without slices (1D and 2D images).
pub fn host_layout(
    desc: &ImageDesc,
    region: [usize; 3],
    row_pitch: usize,
    slice_pitch: usize,
) -> Result<(RectLayout, [usize; 3], usize), cl_int> {
    let (_, bytes) = desc.rect([0; 3], region);
    let min_row = bytes[0];
    let row_pitch = match row_pitch {
        0 => min_row,
        p if p < min_row => return Err(CL_INVALID_VALUE),
        p => p,
    };
    let slice_pitch = match desc.dim {
        Dim::D1 | Dim::D1Buffer | Dim::D2 if slice_pitch != 0 => return Err(CL_INVALID_VALUE),
        Dim::D1 | Dim::D1Buffer | Dim::D2 => row_pitch.checked_mul(bytes[1]).ok_or(CL_INVALID_VALUE)?,
        // "slice_pitch ... of a 1D image array is the size of each 1D image in bytes".
        _ => {
            let min = row_pitch.checked_mul(bytes[1]).ok_or(CL_INVALID_VALUE)?;
            match slice_pitch {
                0 => min,
                p if p < min || !p.is_multiple_of(row_pitch) => return Err(CL_INVALID_VALUE),
                p => p,
            }
        }
    };
    let layout = RectLayout { origin: [0; 3], row_pitch, slice_pitch };
    let len = layout.end(bytes)?;
    Ok((layout, bytes, len))
}

impl ImageDesc {
    /// The layout of a region starting at `origin` for copies and fills between images and
    /// buffers, where the region is a box of (x, y, z) in which a 1D array's layers are its
    /// rows (so that 1D arrays and 2D images copy row for row), and its byte region.
    fn box_layout(&self, origin: [usize; 3], region: [usize; 3]) -> (RectLayout, [usize; 3]) {
        let ps = self.format.pixel_size();
        let bytes = [region[0] * ps, region[1], region[2]];
        let layout = match self.dim {
            Dim::D1Array => RectLayout {
                origin: [origin[0] * ps, origin[1], 0],
                row_pitch: self.slice_pitch,
                slice_pitch: self.slice_pitch.saturating_mul(self.size[1]),
            },
            _ => RectLayout {
                origin: [origin[0] * ps, origin[1], origin[2]],
                row_pitch: self.row_pitch,
                slice_pitch: self.slice_pitch,
            },
        };
        (layout, bytes)
    }
}

impl Mem {
    /// Creates an image described by `desc` (checked by [`super::image::describe`]) with
    /// `flags` (checked by the caller; 0 means CL_MEM_READ_WRITE).
    pub fn new_image(
        context: Arc<Context>,
        flags: cl_mem_flags,
        desc: ImageDesc,
        init: ImageInit,
        properties: Option<Vec<cl_mem_properties>>,
    ) -> Result<Arc<Self>, cl_int> {
        let size = desc.bytes();
        let backing = match init {
            ImageInit::Zeroed => Backing::Storage(Storage::alloc(size)?),
            ImageInit::Copy(src) => {
                let s = Storage::alloc(size)?;
                raw::write(&s, 0, &src, 0, size)?;
                Backing::Storage(s)
            }
            ImageInit::Use(s) => {
                if s.len() < size {
                    return Err(CL_INVALID_HOST_PTR);
                }
                Backing::Storage(s)
            }
            ImageInit::Parent(parent) => {
                if size > parent.size {
                    return Err(CL_INVALID_IMAGE_SIZE);
                }
                Backing::Parent { parent, origin: 0 }
            }
        };
        let data = match &backing {
            Backing::Storage(s) => s.as_ptr(),
            Backing::Parent { parent, .. } => parent.address(),
        };
        let arg = ImageArg {
            data,
            row_pitch: desc.row_pitch as u64,
            slice_pitch: desc.slice_pitch as u64,
            size: desc.size.map(|s| s as u32),
            dim: ImageArg::dim_code(desc.dim),
            channel_order: desc.format.order.to_cl(),
            channel_type: desc.format.ty.to_cl(),
        };
        let flags = if flags == 0 { CL_MEM_READ_WRITE as cl_mem_flags } else { flags };
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Mem),
            context,
            flags,
            size,
            properties,
            backing,
            maps: Mutex::new(Vec::new()),
            destructor_callbacks: Mutex::new(Vec::new()),
            image: Some(ImageData { desc, arg: ImageArgBox::new(arg) }),
        }))
    }

    /// The description of an image (None for a buffer).
    pub fn image_desc(&self) -> Option<&ImageDesc> {
        self.image.as_ref().map(|i| &i.desc)
    }

    /// The kernel argument of an image: what an image argument's slot points at.
    pub fn image_arg(&self) -> Option<&ImageArg> {
        self.image.as_ref().map(|i| i.arg.get())
    }

    /// The address of [`Mem::image_arg`], fixed for the image's life.
    pub fn image_arg_address(&self) -> Option<usize> {
        self.image.as_ref().map(|i| i.arg.address())
    }

    /// CL_IMAGE_BUFFER / the buffer an image was created from (None for an image created
    /// from an image: [`Mem::parent`] is that image).
    pub fn image_buffer(&self) -> Option<&Arc<Mem>> {
        match (&self.image, &self.backing) {
            (Some(_), Backing::Parent { parent, .. }) if parent.image.is_none() => Some(parent),
            _ => None,
        }
    }

    fn desc_or_err(&self) -> Result<&ImageDesc, cl_int> {
        self.image_desc().ok_or(CL_INVALID_MEM_OBJECT)
    }

    /// Image region `origin`/`region`, checked, as the layout and byte region of its
    /// rectangle in the image.
    fn checked_rect(&self, origin: [usize; 3], region: [usize; 3]) -> Result<(RectLayout, [usize; 3]), cl_int> {
        let d = self.desc_or_err()?;
        d.check_region(origin, region)?;
        Ok(d.rect(origin, region))
    }

    /// clEnqueueReadImage's work: `region` at `origin` (checked) to the host memory laid out
    /// as [`host_layout`] says.
    pub fn read_image(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        host_ptr: &HostPtr,
        host: &RectLayout,
    ) -> Result<(), cl_int> {
        let (layout, bytes) = self.checked_rect(origin, region)?;
        self.read_rect(&layout, host_ptr, host, bytes)
    }

    /// clEnqueueWriteImage's work.
    pub fn write_image(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        host_ptr: &HostPtr,
        host: &RectLayout,
    ) -> Result<(), cl_int> {
        let (layout, bytes) = self.checked_rect(origin, region)?;
        self.write_rect(&layout, host_ptr, host, bytes)
    }

    /// The checks of clEnqueueCopyImage: CL_IMAGE_FORMAT_MISMATCH for different formats,
    /// CL_INVALID_VALUE for regions outside either image, CL_MEM_COPY_OVERLAP for
    /// overlapping regions of one image.
    pub fn check_copy_image(
        &self,
        src_origin: [usize; 3],
        dst: &Mem,
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        let (s, d) = (self.desc_or_err()?, dst.desc_or_err()?);
        // "CL_IMAGE_FORMAT_MISMATCH if src_image and dst_image do not use the same image
        // format."
        if s.format != d.format {
            return Err(CL_IMAGE_FORMAT_MISMATCH);
        }
        s.check_region(src_origin, region)?;
        d.check_region(dst_origin, region)?;
        // "CL_MEM_COPY_OVERLAP if src_image and dst_image are the same image object and the
        // source and destination regions overlap."
        if std::ptr::eq(self.storage().0, dst.storage().0) {
            let (sl, bytes) = s.box_layout(src_origin, region);
            let (dl, _) = d.box_layout(dst_origin, region);
            if rect::overlaps(&sl, self.storage().1, &dl, dst.storage().1, bytes) {
                return Err(CL_MEM_COPY_OVERLAP);
            }
        }
        Ok(())
    }

    /// clEnqueueCopyImage's work (checked with [`Mem::check_copy_image`]).
    pub fn copy_image_to(
        &self,
        src_origin: [usize; 3],
        dst: &Mem,
        dst_origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        self.check_copy_image(src_origin, dst, dst_origin, region)?;
        let (sl, bytes) = self.desc_or_err()?.box_layout(src_origin, region);
        let (dl, _) = dst.desc_or_err()?.box_layout(dst_origin, region);
        self.copy_rect_to(&sl, dst, &dl, bytes)
    }

    /// The checks of clEnqueueCopyImageToBuffer / clEnqueueCopyBufferToImage: the image
    /// region, and the packed bytes of the region from `offset` within `buffer`
    /// (CL_INVALID_VALUE otherwise). Returns the image's layout, the buffer's and the byte
    /// region.
    pub fn image_buffer_layouts(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        buffer: &Mem,
        offset: usize,
    ) -> Result<(RectLayout, RectLayout, [usize; 3]), cl_int> {
        let d = self.desc_or_err()?;
        d.check_region(origin, region)?;
        let (il, bytes) = d.box_layout(origin, region);
        let row = bytes[0];
        let slice = row.checked_mul(bytes[1]).ok_or(CL_INVALID_VALUE)?;
        let total = slice.checked_mul(bytes[2]).ok_or(CL_INVALID_VALUE)?;
        buffer.check_range(offset, total)?;
        let bl = RectLayout { origin: [offset, 0, 0], row_pitch: row, slice_pitch: slice };
        Ok((il, bl, bytes))
    }

    /// clEnqueueCopyImageToBuffer's work: the region packed into `dst` from `dst_offset`.
    pub fn copy_image_to_buffer(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        dst: &Mem,
        dst_offset: usize,
    ) -> Result<(), cl_int> {
        let (il, bl, bytes) = self.image_buffer_layouts(origin, region, dst, dst_offset)?;
        self.copy_rect_to(&il, dst, &bl, bytes)
    }

    /// clEnqueueCopyBufferToImage's work: packed bytes of `src` from `src_offset` into the
    /// region of this image.
    pub fn copy_buffer_to_image(
        &self,
        src: &Mem,
        src_offset: usize,
        origin: [usize; 3],
        region: [usize; 3],
    ) -> Result<(), cl_int> {
        let (il, bl, bytes) = self.image_buffer_layouts(origin, region, src, src_offset)?;
        src.copy_rect_to(&bl, self, &il, bytes)
    }

    /// clEnqueueFillImage's work: every pixel of the region set to `color` (components in the
    /// representation of the format's kind: float bits, or integers) converted to the format.
    pub fn fill_image(&self, color: Components, origin: [usize; 3], region: [usize; 3]) -> Result<(), cl_int> {
        let d = self.desc_or_err()?;
        d.check_region(origin, region)?;
        let mut px = vec![0u8; d.format.pixel_size()];
        d.format.encode(color, &mut px);
        let (layout, bytes) = d.box_layout(origin, region);
        let (s, base) = self.storage();
        rect::for_each_row(&layout, &layout, bytes, |o, _, n| {
            self.check_range(o, n)?;
            raw::fill(s, base + o, &px, n)
        })
    }

    /// clEnqueueMapImage: records a map of the region and returns its address (the pixel at
    /// `origin` in the image's own storage), row pitch and slice pitch (0 for images without
    /// slices).
    pub fn map_image(
        &self,
        origin: [usize; 3],
        region: [usize; 3],
        flags: cl_map_flags,
    ) -> Result<(*mut u8, usize, usize), cl_int> {
        let d = *self.desc_or_err()?;
        d.check_region(origin, region)?;
        let (layout, bytes) = d.rect(origin, region);
        let offset = layout.row_offset(0, 0).ok_or(CL_INVALID_VALUE)?;
        let size = layout.end(bytes)? - offset;
        self.check_range(offset, size)?;
        let address = self.address().wrapping_add(offset);
        self.maps.lock().push(Mapping { address: address as usize, offset, size, flags });
        let slice_pitch = match d.dim {
            Dim::D1 | Dim::D1Buffer | Dim::D2 => 0,
            _ => d.slice_pitch,
        };
        Ok((address, d.row_pitch, slice_pitch))
    }
}

/// The smallest image limits over the devices of `context` that support images, or
/// CL_INVALID_OPERATION when none does ("if there are no devices in context that support
/// images").
pub fn context_limits(context: &Context) -> Result<super::image::ImageLimits, cl_int> {
    let mut out: Option<super::image::ImageLimits> = None;
    for d in &context.devices {
        let Some(i) = d.info().images else { continue };
        let l = super::image::ImageLimits {
            max_2d: [i.image2d_max_width, i.image2d_max_height],
            max_3d: [i.image3d_max_width, i.image3d_max_height, i.image3d_max_depth],
            max_array_size: i.image_max_array_size,
            max_buffer_size: i.image_max_buffer_size,
            pitch_alignment: i.image_pitch_alignment as usize,
            base_address_alignment: i.image_base_address_alignment as usize,
        };
        out = Some(match out {
            None => l,
            Some(o) => super::image::ImageLimits {
                max_2d: [o.max_2d[0].min(l.max_2d[0]), o.max_2d[1].min(l.max_2d[1])],
                max_3d: [o.max_3d[0].min(l.max_3d[0]), o.max_3d[1].min(l.max_3d[1]), o.max_3d[2].min(l.max_3d[2])],
                max_array_size: o.max_array_size.min(l.max_array_size),
                max_buffer_size: o.max_buffer_size.min(l.max_buffer_size),
                pitch_alignment: o.pitch_alignment.max(l.pitch_alignment),
                base_address_alignment: o.base_address_alignment.max(l.base_address_alignment),
            },
        });
    }
    out.ok_or(CL_INVALID_OPERATION)
}

/// The checks of clCreateImage after the flags were checked against the Memory Flags table:
/// image support, the host pointer rule, the flags of an image created from `mem_object`
/// (`desc`'s `mem_object`, already resolved: None when NULL; a buffer or a 2D image), and
/// the descriptor ([`super::image::describe`]). Returns the image's description and flags.
pub fn check_create(
    context: &Arc<Context>,
    flags: cl_mem_flags,
    format: Option<&cl_image_format>,
    desc: Option<&cl_image_desc>,
    host_ptr: bool,
    mem_object: Option<&Arc<Mem>>,
) -> Result<(ImageDesc, cl_mem_flags), cl_int> {
    // "CL_INVALID_OPERATION if there are no devices in context that support images."
    let limits = context_limits(context)?;
    // "CL_INVALID_HOST_PTR if host_ptr is NULL and CL_MEM_USE_HOST_PTR or CL_MEM_COPY_HOST_PTR
    // are set in flags or if host_ptr is not NULL but CL_MEM_COPY_HOST_PTR or
    // CL_MEM_USE_HOST_PTR are not set in flags."
    let wants_ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) as cl_mem_flags != 0;
    if host_ptr != wants_ptr {
        return Err(CL_INVALID_HOST_PTR);
    }
    let (source, flags) = match mem_object {
        Some(m) => {
            // mem_object must be a memory object of this context: "CL_INVALID_IMAGE_DESCRIPTOR
            // if values specified in image_desc are not valid". Which kinds of image it may
            // be the source of is the descriptor's check.
            if !Arc::ptr_eq(&m.context, context) {
                return Err(CL_INVALID_IMAGE_DESCRIPTOR);
            }
            // The flags of an image from a buffer or an image follow the sub-buffer rules: no
            // host pointer flags, no access the memory object forbids, the rest inherited
            // ("CL_INVALID_VALUE if an image is being created from another memory object
            // (buffer or image) under one of the following circumstances: ...").
            let f = super::sub_buffer_flags(m.flags, flags)?;
            let source = match m.image_desc() {
                Some(d) => super::image::Source::Image(*d),
                None => super::image::Source::Buffer {
                    size: m.size,
                    host_ptr: super::has(m.flags, CL_MEM_USE_HOST_PTR).then(|| m.address() as usize),
                },
            };
            (source, f)
        }
        None => (super::image::Source::Own { host_ptr }, flags),
    };
    let d = super::image::describe(format, desc, source, &limits, |f, dim| {
        super::image::supported_formats(dim, flags).contains(&f)
    })?;
    Ok((d, flags))
}
