//! Image descriptors: what clCreateImage's `image_format`, `image_desc`, flags and host
//! pointer describe, checked against the rules and limits of the OpenCL 3.0 specification
//! ("Image Descriptor", "Image Format Descriptor", clCreateImage's errors), with the pitches
//! worked out. Pure logic: the entry points (not yet there: no device reports image support)
//! pass what they read from the application here; pixels are `softcl_compiler::image`'s.

use super::rect::RectLayout;
use crate::cl::*;
use softcl_compiler::image::{ChannelOrder, ChannelType, Dim, Format};

/// The kind of image (`image_type` of `cl_image_desc`).
pub fn dim_of(image_type: cl_mem_object_type) -> Option<Dim> {
    Some(match image_type {
        CL_MEM_OBJECT_IMAGE1D => Dim::D1,
        CL_MEM_OBJECT_IMAGE1D_BUFFER => Dim::D1Buffer,
        CL_MEM_OBJECT_IMAGE1D_ARRAY => Dim::D1Array,
        CL_MEM_OBJECT_IMAGE2D => Dim::D2,
        CL_MEM_OBJECT_IMAGE2D_ARRAY => Dim::D2Array,
        CL_MEM_OBJECT_IMAGE3D => Dim::D3,
        _ => return None,
    })
}

/// The image limits of the devices of a context (the smallest of each over the devices
/// that support images): CL_DEVICE_IMAGE2D_MAX_WIDTH and so on.
#[derive(Clone, Copy, Debug)]
pub struct ImageLimits {
    pub max_2d: [usize; 2],
    pub max_3d: [usize; 3],
    pub max_array_size: usize,
    /// CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, in pixels.
    pub max_buffer_size: usize,
    /// CL_DEVICE_IMAGE_PITCH_ALIGNMENT and CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, in pixels
    /// (2D images from buffers).
    pub pitch_alignment: usize,
    pub base_address_alignment: usize,
}

/// The memory object an image is created from (`mem_object` of `cl_image_desc`).
#[derive(Clone, Copy, Debug)]
pub enum Source {
    /// None: the image has its own storage.
    Own { host_ptr: bool },
    /// A buffer of `size` bytes (1D buffer images, and 2D images with
    /// cl_khr_image2d_from_buffer); `host_ptr` its address when it was created with
    /// CL_MEM_USE_HOST_PTR (the application's memory, whose alignment is checked), else None.
    Buffer { size: usize, host_ptr: Option<usize> },
    /// A 2D image described by this (2D images from 2D images: a view of its pixels with a
    /// compatible channel order).
    Image(ImageDesc),
}

/// A checked image: its format, kind, size in pixels (width, height, depth; the layers of
/// an array in the dimension after its spatial ones) and pitches in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageDesc {
    pub format: Format,
    pub dim: Dim,
    pub size: [usize; 3],
    pub row_pitch: usize,
    pub slice_pitch: usize,
}

impl ImageDesc {
    /// Bytes the image occupies (rows and slices with their pitches).
    pub fn bytes(&self) -> usize {
        self.checked_bytes().unwrap_or(usize::MAX)
    }

    fn checked_bytes(&self) -> Option<usize> {
        let ps = self.format.pixel_size();
        match self.dim {
            Dim::D1 | Dim::D1Buffer => self.size[0].checked_mul(ps),
            Dim::D1Array => self.slice_pitch.checked_mul(self.size[1]),
            Dim::D2 => self.row_pitch.checked_mul(self.size[1]),
            Dim::D2Array | Dim::D3 => self.slice_pitch.checked_mul(self.size[2]),
        }
    }

    /// CL_IMAGE_ARRAY_SIZE, CL_IMAGE_HEIGHT, CL_IMAGE_DEPTH as clGetImageInfo reports them
    /// (0 where the kind of image has no such dimension).
    pub fn info_sizes(&self) -> (usize, usize, usize, usize) {
        let [w, h, d] = self.size;
        match self.dim {
            Dim::D1 | Dim::D1Buffer => (w, 0, 0, 0),
            Dim::D1Array => (w, 0, 0, h),
            Dim::D2 => (w, h, 0, 0),
            Dim::D2Array => (w, h, 0, d),
            Dim::D3 => (w, h, d, 0),
        }
    }

    /// Checks a region of an image command (`origin`, `region` in pixels, layers for
    /// arrays): CL_INVALID_VALUE when it is empty, outside the image, or non-zero in a
    /// dimension the image does not have (the specification's rules for
    /// clEnqueueReadImage and the others).
    pub fn check_region(&self, origin: [usize; 3], region: [usize; 3]) -> Result<(), cl_int> {
        let used = match self.dim {
            Dim::D1 | Dim::D1Buffer => 1,
            Dim::D1Array | Dim::D2 => 2,
            Dim::D2Array | Dim::D3 => 3,
        };
        for d in 0..3 {
            if d < used {
                let end = origin[d].checked_add(region[d]).ok_or(CL_INVALID_VALUE)?;
                if region[d] == 0 || end > self.size[d] {
                    return Err(CL_INVALID_VALUE);
                }
            } else if origin[d] != 0 || region[d] != 1 {
                return Err(CL_INVALID_VALUE);
            }
        }
        Ok(())
    }
}

impl ImageDesc {
    /// The bytes of image region `origin`/`region` (pixels; layers for arrays, already
    /// checked with [`ImageDesc::check_region`]) as a rectangle of [`super::rect`]: its
    /// layout in the image and its region in bytes. A 1D array's layers are its slices
    /// (as they are on the host side of clEnqueueReadImage: "slice_pitch ... of a 1D image
    /// array is the size of each 1D image").
    pub fn rect(&self, origin: [usize; 3], region: [usize; 3]) -> (RectLayout, [usize; 3]) {
        let ps = self.format.pixel_size();
        let (o, r) = match self.dim {
            Dim::D1Array => ([origin[0] * ps, 0, origin[1]], [region[0] * ps, 1, region[1]]),
            _ => ([origin[0] * ps, origin[1], origin[2]], [region[0] * ps, region[1], region[2]]),
        };
        (RectLayout { origin: o, row_pitch: self.row_pitch, slice_pitch: self.slice_pitch }, r)
    }
}

/// The formats clGetSupportedImageFormats lists for images of kind `dim` accessed as
/// `flags` says: every format [`Format::from_cl`] accepts (the minimum list of the
/// specification and the rest that `softcl_compiler::image` converts), except depth formats
/// outside 2D images and 2D arrays (cl_khr_depth_images), sRGB formats for writing
/// (cl_khr_srgb_image_writes is not offered) and the padded orders CL_Rx, CL_RGx, CL_RGBx
/// and CL_sRGBx: the specification gives their CLK_ADDRESS_CLAMP border alpha 0 (what
/// `softcl_compiler::image` returns), the Khronos CTS's reference alpha 1, so a device
/// listing them cannot pass both; they are optional.
pub fn supported_formats(dim: Dim, flags: cl_mem_flags) -> Vec<Format> {
    let writes = flags & (CL_MEM_WRITE_ONLY | CL_MEM_READ_WRITE | CL_MEM_KERNEL_READ_AND_WRITE) as cl_mem_flags != 0;
    let mut out = Vec::new();
    for order in 0x10B0..=0x10C3u32 {
        for ty in 0x10D0..=0x10E0u32 {
            let Some(f) = Format::from_cl(order, ty) else { continue };
            let depth = f.order == ChannelOrder::Depth;
            let srgb =
                matches!(f.order, ChannelOrder::Srgb | ChannelOrder::Srgbx | ChannelOrder::Srgba | ChannelOrder::Sbgra);
            let padded =
                matches!(f.order, ChannelOrder::Rx | ChannelOrder::Rgx | ChannelOrder::Rgbx | ChannelOrder::Srgbx);
            if depth && !matches!(dim, Dim::D2 | Dim::D2Array) || srgb && writes || padded {
                continue;
            }
            out.push(f);
        }
    }
    out
}

/// Whether `f` is in the specification's minimum list of formats for reading and writing
/// (OpenCL 3.0, "Supported Image Formats", when images are supported).
pub fn in_minimum_list(f: Format) -> bool {
    use ChannelType::*;
    match f.order {
        ChannelOrder::R | ChannelOrder::Rg | ChannelOrder::Rgba => matches!(
            f.ty,
            UnormInt8
                | UnormInt16
                | SnormInt8
                | SnormInt16
                | SignedInt8
                | SignedInt16
                | SignedInt32
                | UnsignedInt8
                | UnsignedInt16
                | UnsignedInt32
                | HalfFloat
                | Float
        ),
        ChannelOrder::Bgra => f.ty == UnormInt8,
        _ => false,
    }
}

/// The descriptor of clCreateImage's arguments, or the error the specification gives.
/// `format`/`desc` are None for NULL pointers; `supported` says whether the context supports
/// a format for the image's kind and flags (clGetSupportedImageFormats).
pub fn describe(
    format: Option<&cl_image_format>,
    desc: Option<&cl_image_desc>,
    source: Source,
    limits: &ImageLimits,
    supported: impl Fn(Format, Dim) -> bool,
) -> Result<ImageDesc, cl_int> {
    // "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if values specified in image_format are not valid
    // or if image_format is NULL."
    let format = format
        .and_then(|f| Format::from_cl(f.image_channel_order, f.image_channel_data_type))
        .ok_or(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)?;
    // "CL_INVALID_IMAGE_DESCRIPTOR if values specified in image_desc are not valid or if
    // image_desc is NULL."
    let d = desc.ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    let dim = dim_of(d.image_type).ok_or(CL_INVALID_IMAGE_DESCRIPTOR)?;
    let bad = Err(CL_INVALID_IMAGE_DESCRIPTOR);
    // "num_mip_levels and num_samples must be 0."
    if d.num_mip_levels != 0 || d.num_samples != 0 {
        return bad;
    }
    if let Source::Image(parent) = source {
        let view = view_of(&parent, format, d, dim)?;
        return if supported(format, dim) { Ok(view) } else { Err(CL_IMAGE_FORMAT_NOT_SUPPORTED) };
    }
    let (w, h, depth, layers) = (d.image_width, d.image_height, d.image_depth, d.image_array_size);
    let size = match dim {
        Dim::D1 | Dim::D1Buffer => [w, 1, 1],
        Dim::D1Array => [w, layers, 1],
        Dim::D2 => [w, h, 1],
        Dim::D2Array => [w, h, layers],
        Dim::D3 => [w, h, depth],
    };
    if size.contains(&0) {
        return bad;
    }
    // Image sources: a 1D buffer image needs a buffer; a 2D image may take one; no other
    // kind may.
    let from_buffer = matches!(source, Source::Buffer { .. });
    if (dim == Dim::D1Buffer) != from_buffer && !(dim == Dim::D2 && from_buffer) {
        return bad;
    }
    // "CL_INVALID_IMAGE_SIZE if image dimensions specified in image_desc exceed the maximum
    // image dimensions ... for all devices in context."
    let too_big = match dim {
        Dim::D1 => w > limits.max_2d[0],
        Dim::D1Buffer => w > limits.max_buffer_size,
        Dim::D1Array => w > limits.max_2d[0] || layers > limits.max_array_size,
        Dim::D2 => w > limits.max_2d[0] || h > limits.max_2d[1],
        Dim::D2Array => w > limits.max_2d[0] || h > limits.max_2d[1] || layers > limits.max_array_size,
        Dim::D3 => w > limits.max_3d[0] || h > limits.max_3d[1] || depth > limits.max_3d[2],
    };
    if too_big {
        return Err(CL_INVALID_IMAGE_SIZE);
    }
    let ps = format.pixel_size();
    let min_row = w.checked_mul(ps).ok_or(CL_INVALID_IMAGE_SIZE)?;
    let rows_per_slice = match dim {
        Dim::D2Array | Dim::D3 => h,
        _ => 1,
    };
    // Pitches: "must be 0 if host_ptr is NULL" (own storage without a host pointer);
    // otherwise 0 (computed) or at least the packed size and a multiple of the pixel (row)
    // or of the row pitch (slice). Images from buffers take no host pointer: a 2D one takes
    // its pitch from image_row_pitch; a 1D one has one row and takes a row pitch that is
    // checked the same way and then has no effect (the CTS's `use_pitches` runs, one of
    // them in the conformance list, give 1D buffer images the row pitch of their buffer).
    let given_pitches = match source {
        Source::Own { host_ptr: false } => false,
        Source::Own { host_ptr: true } => true,
        // (Images from images took their pitches from the parent above.)
        Source::Buffer { .. } | Source::Image(_) => dim == Dim::D2,
    };
    let given_row_pitch = given_pitches || matches!(source, Source::Buffer { .. }) && dim == Dim::D1Buffer;
    if !given_row_pitch && d.image_row_pitch != 0 || !given_pitches && d.image_slice_pitch != 0 {
        return bad;
    }
    let mut row_pitch = if d.image_row_pitch == 0 { min_row } else { d.image_row_pitch };
    if row_pitch < min_row || !row_pitch.is_multiple_of(ps) {
        return bad;
    }
    if let Source::Buffer { size: buffer_size, host_ptr } = source {
        if dim == Dim::D2 {
            // cl_khr_image2d_from_buffer: the pitch a multiple of CL_DEVICE_IMAGE_PITCH_ALIGNMENT
            // pixels and, for a buffer created with CL_MEM_USE_HOST_PTR, its host_ptr aligned
            // to CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT pixels, else
            // CL_INVALID_IMAGE_FORMAT_DESCRIPTOR. (The specification asks the alignment of
            // the application's pointer only; SoftCL reads pixels at any address, and its own
            // buffers, or sub-buffers of them, cannot be aligned to a 3-byte pixel.)
            let pitch_px = row_pitch / ps;
            let unaligned = host_ptr.is_some_and(|a| !a.is_multiple_of(limits.base_address_alignment.max(1) * ps));
            if !pitch_px.is_multiple_of(limits.pitch_alignment.max(1)) || unaligned {
                return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
            }
        } else {
            row_pitch = min_row;
        }
        // "CL_INVALID_IMAGE_SIZE if ... the size of the buffer ... is too small."
        let need = row_pitch.checked_mul(size[1]).ok_or(CL_INVALID_IMAGE_SIZE)?;
        if dim == Dim::D1Buffer && min_row > buffer_size || dim == Dim::D2 && need > buffer_size {
            return Err(CL_INVALID_IMAGE_SIZE);
        }
    }
    let min_slice = row_pitch.checked_mul(rows_per_slice).ok_or(CL_INVALID_IMAGE_SIZE)?;
    let slice_pitch = match dim {
        Dim::D1Array | Dim::D2Array | Dim::D3 => {
            let s = if d.image_slice_pitch == 0 { min_slice } else { d.image_slice_pitch };
            if s < min_slice || !s.is_multiple_of(row_pitch) {
                return bad;
            }
            s
        }
        _ => min_slice,
    };
    let desc = ImageDesc { format, dim, size, row_pitch, slice_pitch };
    desc.checked_bytes().ok_or(CL_INVALID_IMAGE_SIZE)?;
    // "CL_IMAGE_FORMAT_NOT_SUPPORTED if the image_format is not supported."
    if !supported(format, dim) {
        return Err(CL_IMAGE_FORMAT_NOT_SUPPORTED);
    }
    Ok(desc)
}

/// The descriptor of a 2D image created from the 2D image `parent` (`d` is the
/// application's descriptor of kind `dim`, `format` its format): the parent's layout with
/// `format`. "For a 2D image created from another 2D image object, the values specified in
/// the image descriptor except for mem_object must match the image descriptor information
/// associated with mem_object": the sizes and pitches clGetImageInfo reports for the parent
/// (width, height, depth 0, array size 0, its row pitch, slice pitch 0), a row pitch of 0
/// also taken as the parent's; else CL_INVALID_IMAGE_DESCRIPTOR. The format must keep the
/// parent's channel data type and use its channel order or a compatible one, else
/// CL_INVALID_IMAGE_FORMAT_DESCRIPTOR.
fn view_of(parent: &ImageDesc, format: Format, d: &cl_image_desc, dim: Dim) -> Result<ImageDesc, cl_int> {
    // "mem_object can be an image object if image_type is CL_MEM_OBJECT_IMAGE2D", and the
    // image is "another 2D image object".
    if dim != Dim::D2 || parent.dim != Dim::D2 {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    let (w, h, depth, layers) = parent.info_sizes();
    let same = d.image_width == w
        && d.image_height == h
        && d.image_depth == depth
        && d.image_array_size == layers
        && (d.image_row_pitch == 0 || d.image_row_pitch == parent.row_pitch)
        && d.image_slice_pitch == 0;
    if !same {
        return Err(CL_INVALID_IMAGE_DESCRIPTOR);
    }
    // "The image channel data type specified in image_format must match the image channel
    // data type associated with mem_object. The image channel order specified in
    // image_format must be compatible with the image channel order associated with
    // mem_object." (Compatible orders keep the pixel size; checked all the same.)
    if format.ty != parent.format.ty
        || !compatible_orders(format.order, parent.format.order)
        || format.pixel_size() != parent.format.pixel_size()
    {
        return Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    }
    Ok(ImageDesc { format, ..*parent })
}

/// Whether a 2D image of channel order `parent` may be viewed with channel order `view`:
/// the same order, or one of the specification's compatible pairs (sRGB and linear orders
/// both ways, CL_DEPTH for a CL_R image).
pub fn compatible_orders(view: ChannelOrder, parent: ChannelOrder) -> bool {
    use ChannelOrder::*;
    view == parent
        || matches!(
            (view, parent),
            (Sbgra, Bgra)
                | (Bgra, Sbgra)
                | (Srgba, Rgba)
                | (Rgba, Srgba)
                | (Srgb, Rgb)
                | (Rgb, Srgb)
                | (Srgbx, Rgbx)
                | (Rgbx, Srgbx)
                | (Depth, R)
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: ImageLimits = ImageLimits {
        max_2d: [16384, 16384],
        max_3d: [2048, 2048, 2048],
        max_array_size: 2048,
        max_buffer_size: 1 << 27,
        pitch_alignment: 16,
        base_address_alignment: 16,
    };

    fn rgba8() -> cl_image_format {
        cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNORM_INT8 }
    }

    fn desc(ty: u32, w: usize, h: usize, depth: usize, layers: usize) -> cl_image_desc {
        cl_image_desc {
            image_type: ty as cl_mem_object_type,
            image_width: w,
            image_height: h,
            image_depth: depth,
            image_array_size: layers,
            ..Default::default()
        }
    }

    fn own(host_ptr: bool) -> Source {
        Source::Own { host_ptr }
    }

    fn check(f: Option<&cl_image_format>, d: &cl_image_desc, src: Source) -> Result<ImageDesc, cl_int> {
        describe(f, Some(d), src, &LIMITS, |_, _| true)
    }

    #[test]
    fn pitches_are_computed_or_checked() {
        let d = check(Some(&rgba8()), &desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0), own(false)).unwrap();
        assert_eq!((d.size, d.row_pitch, d.slice_pitch, d.bytes()), ([10, 3, 1], 40, 40, 120));
        let mut with_pitch = desc(CL_MEM_OBJECT_IMAGE3D, 10, 3, 2, 0);
        with_pitch.image_row_pitch = 48;
        with_pitch.image_slice_pitch = 48 * 4;
        let d = check(Some(&rgba8()), &with_pitch, own(true)).unwrap();
        assert_eq!((d.row_pitch, d.slice_pitch, d.bytes()), (48, 192, 384));
        assert_eq!(
            check(Some(&rgba8()), &with_pitch, own(false)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "pitch without host_ptr"
        );
        with_pitch.image_row_pitch = 42;
        assert_eq!(
            check(Some(&rgba8()), &with_pitch, own(true)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "not a pixel multiple"
        );
        with_pitch.image_row_pitch = 36;
        assert_eq!(
            check(Some(&rgba8()), &with_pitch, own(true)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "shorter than a row"
        );
        let mut arr1 = desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 5, 0, 0, 4);
        let d = check(Some(&rgba8()), &arr1, own(false)).unwrap();
        assert_eq!((d.size, d.slice_pitch, d.info_sizes()), ([5, 4, 1], 20, (5, 0, 0, 4)));
        arr1.image_slice_pitch = 30;
        assert_eq!(
            check(Some(&rgba8()), &arr1, own(true)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "slice not a row multiple"
        );
    }

    #[test]
    fn descriptor_errors() {
        let f = rgba8();
        assert_eq!(
            check(None, &desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        );
        let bad_format = cl_image_format { image_channel_order: CL_BGRA, image_channel_data_type: CL_FLOAT };
        assert_eq!(
            check(Some(&bad_format), &desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        );
        assert_eq!(describe(Some(&f), None, own(false), &LIMITS, |_, _| true), Err(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_BUFFER, 4, 4, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_IMAGE2D, 4, 0, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 4, 4, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        let mut mips = desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0);
        mips.num_mip_levels = 1;
        assert_eq!(check(Some(&f), &mips, own(false)), Err(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_IMAGE2D, 16385, 4, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_SIZE)
        );
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 2049, 0), own(false)),
            Err(CL_INVALID_IMAGE_SIZE)
        );
        assert_eq!(
            check(Some(&f), &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 4, 0, 0, 0), own(false)),
            Err(CL_INVALID_IMAGE_DESCRIPTOR),
            "a 1D buffer image needs a buffer"
        );
        assert_eq!(
            describe(Some(&f), Some(&desc(CL_MEM_OBJECT_IMAGE2D, 4, 4, 0, 0)), own(false), &LIMITS, |_, _| false),
            Err(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        );
    }

    #[test]
    fn images_from_buffers() {
        let f = rgba8();
        let one_d = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 8, 0, 0, 0);
        let d = check(Some(&f), &one_d, Source::Buffer { size: 32, host_ptr: Some(4096) }).unwrap();
        assert_eq!((d.dim, d.bytes()), (Dim::D1Buffer, 32));
        assert_eq!(
            check(Some(&f), &one_d, Source::Buffer { size: 31, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_SIZE)
        );
        // A row pitch (the CTS's `use_pitches`) is checked, then the one row is packed.
        let mut pitched = one_d;
        pitched.image_row_pitch = 40;
        let d = check(Some(&f), &pitched, Source::Buffer { size: 40, host_ptr: Some(4096) }).unwrap();
        assert_eq!((d.row_pitch, d.bytes()), (32, 32));
        pitched.image_row_pitch = 30;
        assert_eq!(
            check(Some(&f), &pitched, Source::Buffer { size: 40, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        pitched.image_row_pitch = 34;
        assert_eq!(
            check(Some(&f), &pitched, Source::Buffer { size: 40, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        pitched.image_row_pitch = 0;
        pitched.image_slice_pitch = 32;
        assert_eq!(
            check(Some(&f), &pitched, Source::Buffer { size: 40, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
        let mut two_d = desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0);
        // Pitch 10 pixels is not a multiple of 16: refused; 16 pixels (64 bytes) is.
        assert_eq!(
            check(Some(&f), &two_d, Source::Buffer { size: 4096, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
        );
        two_d.image_row_pitch = 64;
        let d = check(Some(&f), &two_d, Source::Buffer { size: 192, host_ptr: Some(4096) }).unwrap();
        assert_eq!((d.row_pitch, d.bytes()), (64, 192));
        assert_eq!(
            check(Some(&f), &two_d, Source::Buffer { size: 191, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_SIZE)
        );
        assert_eq!(
            check(Some(&f), &two_d, Source::Buffer { size: 4096, host_ptr: Some(4100) }),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
            "base address alignment"
        );
        // Only the application's pointer (CL_MEM_USE_HOST_PTR) must be aligned: a buffer of
        // SoftCL's own, at any address, holds a 2D image of 3-byte pixels too.
        assert!(check(Some(&f), &two_d, Source::Buffer { size: 4096, host_ptr: None }).is_ok());
        let srgb = cl_image_format { image_channel_order: CL_sRGB, image_channel_data_type: CL_UNORM_INT8 };
        let mut rgb_d = desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0);
        rgb_d.image_row_pitch = 48;
        let d = check(Some(&srgb), &rgb_d, Source::Buffer { size: 144, host_ptr: None }).unwrap();
        assert_eq!((d.row_pitch, d.bytes()), (48, 144));
        assert_eq!(
            check(Some(&srgb), &rgb_d, Source::Buffer { size: 144, host_ptr: Some(4096) }),
            Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR),
            "4096 is not a multiple of 16 3-byte pixels"
        );
        assert!(check(Some(&srgb), &rgb_d, Source::Buffer { size: 144, host_ptr: Some(4800) }).is_ok());
        assert_eq!(
            check(
                Some(&f),
                &desc(CL_MEM_OBJECT_IMAGE3D, 4, 4, 4, 0),
                Source::Buffer { size: 4096, host_ptr: Some(4096) }
            ),
            Err(CL_INVALID_IMAGE_DESCRIPTOR)
        );
    }

    #[test]
    fn images_from_images() {
        let own2d = |order: u32, ty: u32, pitch: usize| {
            let mut d = desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0);
            d.image_row_pitch = pitch;
            let f = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
            check(Some(&f), &d, own(pitch != 0)).unwrap()
        };
        let view = |parent: ImageDesc, order: u32, ty: u32, d: &cl_image_desc| {
            let f = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
            check(Some(&f), d, Source::Image(parent))
        };
        let d2 = desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0);
        // Accepted: the same order and each compatible pair, with the parent's layout.
        let pairs =
            [(CL_RGBA, CL_sRGBA), (CL_sRGBA, CL_RGBA), (CL_BGRA, CL_sBGRA), (CL_sBGRA, CL_BGRA), (CL_RGBA, CL_RGBA)];
        for (parent, order) in pairs {
            let p = own2d(parent, CL_UNORM_INT8, 48);
            let mut pitched = d2;
            pitched.image_row_pitch = 48;
            for d in [&d2, &pitched] {
                let v = view(p, order, CL_UNORM_INT8, d).unwrap();
                assert_eq!((v.format.order.to_cl(), v.size, v.row_pitch, v.bytes()), (order, p.size, 48, 144));
            }
        }
        let r = own2d(CL_R, CL_FLOAT, 0);
        let depth = view(r, CL_DEPTH, CL_FLOAT, &d2).unwrap();
        assert_eq!((depth.format.order, depth.row_pitch), (ChannelOrder::Depth, 40));
        // Refused formats: another data type, an incompatible order, CL_R of a depth image.
        let rgba = own2d(CL_RGBA, CL_UNORM_INT8, 0);
        let bad_format = Err(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        assert_eq!(view(rgba, CL_RGBA, CL_SNORM_INT8, &d2), bad_format, "data type");
        assert_eq!(view(rgba, CL_BGRA, CL_UNORM_INT8, &d2), bad_format, "BGRA of RGBA");
        assert_eq!(view(rgba, CL_sBGRA, CL_UNORM_INT8, &d2), bad_format, "sBGRA of RGBA");
        assert_eq!(view(r, CL_A, CL_FLOAT, &d2), bad_format, "A of R");
        assert_eq!(view(depth, CL_R, CL_FLOAT, &d2), bad_format, "R of DEPTH");
        assert_eq!(view(rgba, CL_sRGBA, CL_FLOAT, &d2), bad_format, "not a valid format");
        // Refused descriptors: any value that is not the parent's.
        let bad = Err(CL_INVALID_IMAGE_DESCRIPTOR);
        type Change = (&'static str, fn(&mut cl_image_desc));
        let changes: [Change; 7] = [
            ("width", |d| d.image_width = 9),
            ("height", |d| d.image_height = 4),
            ("depth", |d| d.image_depth = 1),
            ("array size", |d| d.image_array_size = 1),
            ("row pitch", |d| d.image_row_pitch = 48),
            ("slice pitch", |d| d.image_slice_pitch = 120),
            ("type", |d| d.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY as cl_mem_object_type),
        ];
        for (what, change) in changes {
            let mut d = d2;
            change(&mut d);
            if what == "type" {
                d.image_array_size = 1;
            }
            assert_eq!(view(rgba, CL_sRGBA, CL_UNORM_INT8, &d), bad, "{what}");
        }
        let mut mips = d2;
        mips.num_mip_levels = 1;
        assert_eq!(view(rgba, CL_sRGBA, CL_UNORM_INT8, &mips), bad, "mip levels");
        // Only 2D images are viewed: not a 2D array, not a 1D buffer image.
        let arr = check(Some(&rgba8()), &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 10, 3, 0, 2), own(false)).unwrap();
        let mut arr_d = desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, 10, 3, 0, 2);
        assert_eq!(view(arr, CL_sRGBA, CL_UNORM_INT8, &arr_d), bad, "2D array");
        arr_d.image_type = CL_MEM_OBJECT_IMAGE2D as cl_mem_object_type;
        assert_eq!(view(arr, CL_sRGBA, CL_UNORM_INT8, &arr_d), bad, "2D image of a 2D array");
        let buf1d = check(
            Some(&rgba8()),
            &desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, 10, 0, 0, 0),
            Source::Buffer { size: 40, host_ptr: Some(4096) },
        )
        .unwrap();
        assert_eq!(view(buf1d, CL_sRGBA, CL_UNORM_INT8, &desc(CL_MEM_OBJECT_IMAGE2D, 10, 1, 0, 0)), bad, "1D buffer");
        // A supported format for the flags: refused when the context does not list it.
        let f = cl_image_format { image_channel_order: CL_sRGBA, image_channel_data_type: CL_UNORM_INT8 };
        assert_eq!(
            describe(Some(&f), Some(&d2), Source::Image(rgba), &LIMITS, |_, _| false),
            Err(CL_IMAGE_FORMAT_NOT_SUPPORTED)
        );
        assert!(compatible_orders(ChannelOrder::Srgbx, ChannelOrder::Rgbx));
        assert!(!compatible_orders(ChannelOrder::R, ChannelOrder::Depth));
    }

    #[test]
    fn the_supported_formats_hold_the_minimum_list() {
        let rw = supported_formats(Dim::D2, CL_MEM_READ_WRITE as cl_mem_flags);
        let minimum: Vec<Format> = rw.iter().copied().filter(|&f| in_minimum_list(f)).collect();
        assert_eq!(minimum.len(), 3 * 12 + 1, "R, RG, RGBA x 12 types and BGRA unorm8");
        assert!(rw.iter().any(|f| f.order == ChannelOrder::Depth), "depth formats on 2D images");
        assert!(!rw.iter().any(|f| f.order == ChannelOrder::Srgba), "no sRGB writes");
        let ro = supported_formats(Dim::D3, CL_MEM_READ_ONLY as cl_mem_flags);
        assert!(ro.iter().any(|f| f.order == ChannelOrder::Srgba), "sRGB reads");
        assert!(!ro.iter().any(|f| f.order == ChannelOrder::Depth), "no depth 3D images");
        assert!(ro.iter().any(|f| f.order == ChannelOrder::Intensity && f.ty == ChannelType::Float));
        let padded = [ChannelOrder::Rx, ChannelOrder::Rgx, ChannelOrder::Rgbx, ChannelOrder::Srgbx];
        assert!(!ro.iter().chain(&rw).any(|f| padded.contains(&f.order)), "no padded orders (border alpha)");
    }

    #[test]
    fn image_regions_as_byte_rectangles() {
        let mut d3 = desc(CL_MEM_OBJECT_IMAGE3D, 10, 3, 2, 0);
        d3.image_row_pitch = 48;
        d3.image_slice_pitch = 48 * 4;
        let d = check(Some(&rgba8()), &d3, own(true)).unwrap();
        let (layout, region) = d.rect([1, 2, 1], [2, 1, 1]);
        assert_eq!(region, [8, 1, 1]);
        assert_eq!(layout.row_offset(0, 0), Some(4 + 2 * 48 + 192));
        let arr = check(Some(&rgba8()), &desc(CL_MEM_OBJECT_IMAGE1D_ARRAY, 5, 0, 0, 4), own(false)).unwrap();
        let (layout, region) = arr.rect([1, 2, 0], [3, 2, 1]);
        assert_eq!(region, [12, 1, 2], "layers are slices");
        assert_eq!((layout.row_offset(0, 0), layout.row_offset(0, 1)), (Some(4 + 2 * 20), Some(4 + 3 * 20)));
    }

    #[test]
    fn regions_of_image_commands() {
        let d = check(Some(&rgba8()), &desc(CL_MEM_OBJECT_IMAGE2D, 10, 3, 0, 0), own(false)).unwrap();
        assert_eq!(d.check_region([0, 0, 0], [10, 3, 1]), Ok(()));
        assert_eq!(d.check_region([9, 2, 0], [1, 1, 1]), Ok(()));
        assert_eq!(d.check_region([9, 2, 0], [2, 1, 1]), Err(CL_INVALID_VALUE));
        assert_eq!(d.check_region([0, 0, 0], [0, 1, 1]), Err(CL_INVALID_VALUE), "empty");
        assert_eq!(d.check_region([0, 0, 1], [1, 1, 1]), Err(CL_INVALID_VALUE), "a 2D image has no z");
        assert_eq!(d.check_region([0, 0, 0], [1, 1, 2]), Err(CL_INVALID_VALUE));
        assert_eq!(d.check_region([usize::MAX, 0, 0], [2, 1, 1]), Err(CL_INVALID_VALUE));
    }
}
