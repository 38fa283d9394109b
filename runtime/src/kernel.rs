//! Kernel objects: a kernel of a built program, its argument values, and everything an
//! NDRange launch needs: the argument block, the NDRange checks of clEnqueueNDRangeKernel and
//! the command that runs it on a device.

use crate::cl::*;
use crate::context::Context;
use crate::device::Device;
use crate::event::Event;
use crate::handle::{ClObject, Header, ObjectKind};
use crate::memory::Mem;
use crate::program::Program;
use crate::queue::{Queue, Work};
use crate::sampler::SamplerObject;
use crate::svm::SvmAlloc;
use parking_lot::Mutex;
use softcl_compiler::image::{ChannelOrder, Dim};
use softcl_compiler::{AccessQualifier, AddressSpace, ArgKind, KernelArg, KernelInfo, NativeKernel};
use softcl_device_model::{Launch, LaunchError};
use std::sync::{Arc, Weak};

/// The value of one kernel argument, as clSetKernelArg set it.
#[derive(Debug, Clone)]
pub enum ArgValue {
    /// A `__global` / `__constant` pointer: a buffer, or NULL.
    Buffer(Option<Arc<Mem>>),
    /// A `__local` pointer: the size of the allocation each work-group gets.
    Local(usize),
    /// A value passed by its bytes.
    Bytes(Vec<u8>),
    /// A `__global` / `__constant` pointer set with clSetKernelArgSVMPointer: an address in an
    /// SVM allocation or, with fine-grain system SVM, any host address (or NULL).
    Svm(usize),
    /// An image (`image2d_t` ...): the slot receives the address of its `abi::ImageArg`.
    Image(Arc<Mem>),
    /// A `sampler_t`: the slot receives its bits (`abi::SAMPLER_ARG_BYTES`).
    Sampler(Arc<SamplerObject>),
}

/// An argument value as the kernel keeps it. A buffer is held weakly: setting it as an
/// argument does not keep it alive. "After the memobj reference count becomes zero and
/// commands queued for execution on a command-queue(s) that use memobj have finished, the
/// memory object is deleted" (clReleaseMemObject), and its destructor callbacks run then,
/// even while a kernel still names it (the CTS api test retain_mem_object_set_kernel_arg
/// waits for that callback). A launch holds its buffers strongly until it has finished.
#[derive(Debug, Clone)]
enum StoredArg {
    Buffer(Option<Weak<Mem>>),
    Local(usize),
    Bytes(Vec<u8>),
    Svm(usize),
    /// Held weakly like a buffer.
    Image(Weak<Mem>),
}

impl From<ArgValue> for StoredArg {
    fn from(v: ArgValue) -> Self {
        match v {
            ArgValue::Buffer(m) => StoredArg::Buffer(m.as_ref().map(Arc::downgrade)),
            ArgValue::Local(n) => StoredArg::Local(n),
            ArgValue::Bytes(b) => StoredArg::Bytes(b),
            ArgValue::Svm(p) => StoredArg::Svm(p),
            ArgValue::Image(m) => StoredArg::Image(Arc::downgrade(&m)),
            ArgValue::Sampler(s) => StoredArg::Bytes(s.arg_bytes().to_vec()),
        }
    }
}

/// The buffer a stored argument names, if the application still holds it: a buffer the
/// application has released (API reference count 0) is no longer a valid memory object,
/// even while a command still running keeps its storage.
fn live_buffer(weak: &Weak<Mem>) -> Result<Arc<Mem>, cl_int> {
    match weak.upgrade() {
        Some(mem) if mem.header().api_ref_count() > 0 => Ok(mem),
        _ => Err(CL_INVALID_MEM_OBJECT),
    }
}

/// The checks of an image argument value: an image of the kernel's context of the declared
/// kind (CL_INVALID_MEM_OBJECT otherwise), not written by the kernel if created read-only nor
/// read if created write-only ("CL_INVALID_ARG_VALUE if the argument is an image declared with
/// the read_only qualifier and arg_value refers to an image object created with cl_mem_flags
/// of CL_MEM_WRITE_ONLY or if the image argument is declared with the write_only qualifier
/// and arg_value refers to an image object created with cl_mem_flags of CL_MEM_READ_ONLY").
fn check_image_arg(arg: &KernelArg, mem: &Mem, context: &Arc<Context>) -> Result<(), cl_int> {
    let desc = mem.image_desc().ok_or(CL_INVALID_MEM_OBJECT)?;
    if !Arc::ptr_eq(&mem.context, context) {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    // The declared type ("image2d_array_depth_t" ...) against the image's kind and format.
    let t = arg.type_name.as_str();
    let kind = match desc.dim {
        Dim::D1 => "image1d_",
        Dim::D1Buffer => "image1d_buffer_",
        Dim::D1Array => "image1d_array_",
        Dim::D2 => "image2d_",
        Dim::D2Array => "image2d_array_",
        Dim::D3 => "image3d_",
    };
    let depth = desc.format.order == ChannelOrder::Depth;
    let expected = format!("{kind}{}t", if depth { "depth_" } else { "" });
    // Type names the front end could not resolve ("image_t") are not checked.
    if t.starts_with("image") && t != "image_t" && t != expected {
        return Err(CL_INVALID_MEM_OBJECT);
    }
    match arg.access {
        AccessQualifier::ReadOnly | AccessQualifier::None if mem.has_flag(CL_MEM_WRITE_ONLY) => {
            Err(CL_INVALID_ARG_VALUE)
        }
        AccessQualifier::WriteOnly if mem.has_flag(CL_MEM_READ_ONLY) => Err(CL_INVALID_ARG_VALUE),
        _ => Ok(()),
    }
}

/// What clSetKernelArg must read from `arg_value` once the size and NULL checks passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRequest {
    /// A `cl_mem` (if `arg_value` is not NULL; a NULL value or a NULL handle means a NULL
    /// buffer).
    Buffer,
    /// Nothing: a `__local` argument of this size.
    Local(usize),
    /// `arg_size` bytes.
    Bytes,
    /// A `cl_mem` that must be an image.
    Image,
    /// A `cl_sampler`.
    Sampler,
}

/// The argument block of one launch, with the buffers it points into kept alive.
#[derive(Debug, Clone)]
pub struct LaunchArgs {
    pub block: Vec<u8>,
    /// (argument index, size) of every `__local` argument.
    pub local_sizes: Vec<(usize, usize)>,
    pub buffers: Vec<Arc<Mem>>,
    /// The SVM allocations the SVM pointer arguments and CL_KERNEL_EXEC_INFO_SVM_PTRS point
    /// into, kept alive until the launch has run.
    pub svm: Vec<Arc<SvmAlloc>>,
    /// The non-NULL pointers set with clSetKernelArgSVMPointer.
    pub svm_args: Vec<usize>,
}

/// What clSetKernelExecInfo set.
#[derive(Debug, Clone, Default)]
pub struct ExecInfo {
    /// CL_KERNEL_EXEC_INFO_SVM_PTRS: the complete set, as last given.
    pub svm_ptrs: Vec<usize>,
    /// CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM.
    pub fine_grain_system: bool,
}

/// A checked NDRange: unused dimensions have size 1 and offset 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdRange {
    pub work_dim: u32,
    pub offset: [usize; 3],
    pub global: [usize; 3],
    pub local: [usize; 3],
}

#[repr(C)]
pub struct Kernel {
    header: Header,
    pub program: Arc<Program>,
    pub name: String,
    /// The kernel's metadata from the front end (arguments and their layout, attributes).
    pub info: KernelInfo,
    args: Mutex<Vec<Option<StoredArg>>>,
    exec_info: Mutex<ExecInfo>,
}

impl ClObject for Kernel {
    const KIND: ObjectKind = ObjectKind::Kernel;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).finish()
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        self.program.detach_kernel();
    }
}

/// The spec's size_t of a handle (cl_mem, cl_sampler).
const HANDLE_SIZE: usize = std::mem::size_of::<*mut std::ffi::c_void>();

impl Kernel {
    /// clCreateKernel.
    pub fn new(program: Arc<Program>, name: &str) -> Result<Arc<Self>, cl_int> {
        let info = program.kernel_info(name)?;
        Ok(Self::with_args(program, name.to_string(), info, Vec::new(), ExecInfo::default()))
    }

    fn with_args(
        program: Arc<Program>,
        name: String,
        info: KernelInfo,
        mut args: Vec<Option<StoredArg>>,
        exec_info: ExecInfo,
    ) -> Arc<Self> {
        args.resize(info.args.len(), None);
        program.attach_kernel();
        Arc::new(Self {
            header: Header::new(ObjectKind::Kernel),
            program,
            name,
            info,
            args: Mutex::new(args),
            exec_info: Mutex::new(exec_info),
        })
    }

    /// clCloneKernel: a new kernel with the same argument values and execution information
    /// ("the SVM pointers set with clSetKernelExecInfo" included).
    pub fn clone_kernel(&self) -> Arc<Self> {
        let args = self.args.lock().clone();
        let exec_info = self.exec_info.lock().clone();
        Self::with_args(self.program.clone(), self.name.clone(), self.info.clone(), args, exec_info)
    }

    /// clSetKernelArgSVMPointer (the API edge has checked that the context has SVM).
    pub fn set_arg_svm(&self, index: u32, ptr: usize) -> Result<(), cl_int> {
        // "CL_INVALID_ARG_INDEX if arg_index is not a valid argument index."
        let arg = self.info.args.get(index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        // "The SVM pointer can only be used for arguments that are declared to be a pointer to
        // global or constant memory." Anything else: "CL_INVALID_ARG_VALUE if arg_value
        // specified is not a valid value."
        if !matches!(arg.kind, ArgKind::Buffer { .. }) {
            return Err(CL_INVALID_ARG_VALUE);
        }
        self.args.lock()[index as usize] = Some(StoredArg::Svm(ptr));
        Ok(())
    }

    /// clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_PTRS): replaces the set.
    pub fn set_exec_svm_ptrs(&self, ptrs: Vec<usize>) {
        self.exec_info.lock().svm_ptrs = ptrs;
    }

    /// clSetKernelExecInfo(CL_KERNEL_EXEC_INFO_SVM_FINE_GRAIN_SYSTEM).
    pub fn set_exec_fine_grain_system(&self, on: bool) {
        self.exec_info.lock().fine_grain_system = on;
    }

    pub fn exec_info(&self) -> ExecInfo {
        self.exec_info.lock().clone()
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.program.context
    }

    pub fn num_args(&self) -> usize {
        self.info.args.len()
    }

    /// The checks of clSetKernelArg that need no memory read: returns what to read.
    pub fn check_arg(&self, index: u32, size: usize, value_is_null: bool) -> Result<ArgRequest, cl_int> {
        // "CL_INVALID_ARG_INDEX if arg_index is not a valid argument index."
        let arg = self.info.args.get(index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        match arg.kind {
            ArgKind::Buffer { .. } => {
                // "CL_INVALID_ARG_SIZE if ... the argument is a memory object and arg_size !=
                // sizeof(cl_mem)."
                if size != HANDLE_SIZE {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // "If the argument is a buffer object, the arg_value pointer can be NULL or
                // point to a NULL value in which case a NULL value will be used as the value
                // for the argument declared as a pointer to global or constant memory in the
                // kernel."
                Ok(ArgRequest::Buffer)
            }
            ArgKind::Local => {
                // "CL_INVALID_ARG_SIZE if ... arg_size is zero and the argument is declared
                // with the local qualifier."
                if size == 0 {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // "If the argument is declared with the local qualifier, the arg_value entry
                // must be NULL."
                if !value_is_null {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                Ok(ArgRequest::Local(size))
            }
            ArgKind::Value => {
                // "CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type
                // for an argument that is not a memory object."
                if size != arg.size {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // "CL_INVALID_ARG_VALUE if arg_value specified is not a valid value."
                if value_is_null {
                    return Err(CL_INVALID_ARG_VALUE);
                }
                Ok(ArgRequest::Bytes)
            }
            ArgKind::Sampler | ArgKind::Image => {
                // "CL_INVALID_ARG_SIZE if arg_size does not match the size of the data type
                // ... the argument is a memory object and arg_size != sizeof(cl_mem) ... the
                // argument is a sampler and arg_size != sizeof(cl_sampler)."
                if size != HANDLE_SIZE {
                    return Err(CL_INVALID_ARG_SIZE);
                }
                // An image or sampler argument needs an object: NULL is not a valid value. For a
                // sampler it is "not a valid sampler object" (CL_INVALID_SAMPLER, which the
                // CTS's api negative_invalid_arg_sampler asks for).
                if value_is_null {
                    return Err(if arg.kind == ArgKind::Sampler { CL_INVALID_SAMPLER } else { CL_INVALID_ARG_VALUE });
                }
                Ok(if arg.kind == ArgKind::Image { ArgRequest::Image } else { ArgRequest::Sampler })
            }
        }
    }

    /// Stores an argument value (checked against the argument's kind).
    pub fn set_arg(&self, index: u32, value: ArgValue) -> Result<(), cl_int> {
        let arg = self.info.args.get(index as usize).ok_or(CL_INVALID_ARG_INDEX)?;
        match (&arg.kind, &value) {
            (ArgKind::Buffer { .. }, ArgValue::Buffer(mem)) => {
                if let Some(mem) = mem {
                    // A buffer of another context is not a valid memory object for this kernel.
                    if !Arc::ptr_eq(&mem.context, self.context()) || mem.mem_type() != CL_MEM_OBJECT_BUFFER {
                        return Err(CL_INVALID_MEM_OBJECT);
                    }
                }
            }
            (ArgKind::Local, ArgValue::Local(n)) if *n > 0 => {}
            (ArgKind::Local, ArgValue::Local(_)) => return Err(CL_INVALID_ARG_SIZE),
            (ArgKind::Value, ArgValue::Bytes(b)) if b.len() == arg.size => {}
            (ArgKind::Value, ArgValue::Bytes(_)) => return Err(CL_INVALID_ARG_SIZE),
            (ArgKind::Image, ArgValue::Image(mem)) => check_image_arg(arg, mem, self.context())?,
            // "CL_INVALID_SAMPLER for an argument declared to be of type sampler_t when the
            // specified arg_value is not a valid sampler object" (one of another context is not
            // one for this kernel).
            (ArgKind::Sampler, ArgValue::Sampler(s)) if Arc::ptr_eq(&s.context, self.context()) => {}
            (ArgKind::Sampler, ArgValue::Sampler(_)) => return Err(CL_INVALID_SAMPLER),
            (ArgKind::Image, _) => return Err(CL_INVALID_MEM_OBJECT),
            _ => return Err(CL_INVALID_ARG_VALUE),
        }
        self.args.lock()[index as usize] = Some(value.into());
        Ok(())
    }

    /// Whether every argument has a value.
    pub fn all_args_set(&self) -> bool {
        self.args.lock().iter().all(Option::is_some)
    }

    /// Bytes of `__local` memory a work-group uses: the kernel's own variables plus the
    /// `__local` arguments set so far (CL_KERNEL_LOCAL_MEM_SIZE).
    pub fn local_mem_size(&self, device: &Device) -> u64 {
        let fixed = self.with_device_info(device, |info| info.static_local_mem_size);
        let args: u64 = self
            .args
            .lock()
            .iter()
            .map(|a| match a {
                Some(StoredArg::Local(n)) => *n as u64,
                _ => 0,
            })
            .sum();
        fixed + args
    }

    /// The kernel's metadata as compiled for `device` (barrier count, private size ...), or
    /// the front end's when the device has no executable.
    pub fn device_info(&self, device: &Device) -> KernelInfo {
        self.with_device_info(device, KernelInfo::clone)
    }

    fn with_device_info<R>(&self, device: &Device, f: impl FnOnce(&KernelInfo) -> R) -> R {
        match self.program.executable_for(device) {
            Some((native, _)) => match native.kernel(&self.name) {
                Some(k) => f(&k.info),
                None => f(&self.info),
            },
            None => f(&self.info),
        }
    }

    /// The number of `__constant` pointer arguments and the bytes of the buffers set for them.
    fn constant_args(&self) -> (usize, u64) {
        let values = self.args.lock();
        let constant = self
            .info
            .args
            .iter()
            .zip(values.iter())
            .filter(|(a, _)| matches!(a.kind, ArgKind::Buffer { address_space: AddressSpace::Constant }));
        let mut count = 0;
        let mut bytes = 0u64;
        for (_, value) in constant {
            count += 1;
            if let Some(StoredArg::Buffer(Some(mem))) = value {
                bytes = bytes.saturating_add(mem.upgrade().map_or(0, |m| m.size as u64));
            }
        }
        (count, bytes)
    }

    /// CL_KERNEL_WORK_GROUP_SIZE: the largest work-group a launch of the kernel as compiled for
    /// `device` can use: the device's maximum, less when the kernel requires a work-group size
    /// or keeps so much state across barriers that its work-groups must be smaller
    /// (`softcl_device_model::limits`).
    pub fn work_group_size(&self, device: &Device) -> usize {
        self.with_device_info(device, |info| device.model.kernel_work_group_size(info))
    }

    /// The sub-groups of a work-group of `local` work-items on `device`: (the largest
    /// sub-group, how many), for clGetKernelSubGroupInfo.
    pub fn sub_groups(&self, device: &Device, local: [usize; 3]) -> (usize, usize) {
        self.with_device_info(device, |info| device.model.sub_groups(info, local))
    }

    /// The argument block of a launch (CL_INVALID_KERNEL_ARGS if an argument is not set).
    pub fn launch_args(&self, info: &KernelInfo) -> Result<LaunchArgs, cl_int> {
        let values = self.args.lock();
        let mut out = LaunchArgs {
            block: vec![0u8; info.arg_block_size],
            local_sizes: Vec::new(),
            buffers: Vec::new(),
            svm: Vec::new(),
            svm_args: Vec::new(),
        };
        let mut svm_ptrs = self.exec_info.lock().svm_ptrs.clone();
        for (i, (arg, value)) in info.args.iter().zip(values.iter()).enumerate() {
            // "CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified."
            let value = value.as_ref().ok_or(CL_INVALID_KERNEL_ARGS)?;
            let slot = out.block.get_mut(arg.offset..arg.offset + arg.size).ok_or(CL_INVALID_KERNEL_DEFINITION)?;
            match value {
                StoredArg::Buffer(Some(weak)) => {
                    // A buffer released by the application since clSetKernelArg: using it is
                    // undefined by the spec; SoftCL refuses the launch instead of touching
                    // freed memory.
                    let mem = live_buffer(weak)?;
                    let address = (mem.address() as u64).to_ne_bytes();
                    slot.get_mut(..8).ok_or(CL_INVALID_KERNEL_DEFINITION)?.copy_from_slice(&address);
                    out.buffers.push(mem);
                }
                StoredArg::Buffer(None) => {}
                StoredArg::Image(weak) => {
                    let mem = live_buffer(weak)?;
                    let address = mem.image_arg_address().ok_or(CL_INVALID_MEM_OBJECT)? as u64;
                    slot.get_mut(..8).ok_or(CL_INVALID_KERNEL_DEFINITION)?.copy_from_slice(&address.to_ne_bytes());
                    out.buffers.push(mem);
                }
                StoredArg::Svm(p) => {
                    let address = (*p as u64).to_ne_bytes();
                    slot.get_mut(..8).ok_or(CL_INVALID_KERNEL_DEFINITION)?.copy_from_slice(&address);
                    svm_ptrs.push(*p);
                    if *p != 0 {
                        out.svm_args.push(*p);
                    }
                }
                StoredArg::Local(n) => out.local_sizes.push((i, *n)),
                StoredArg::Bytes(b) => {
                    let n = b.len().min(slot.len());
                    slot[..n].copy_from_slice(&b[..n]);
                }
            }
        }
        if values.len() < info.args.len() {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        out.svm = self.context().svm.find_all(&svm_ptrs);
        Ok(out)
    }

    /// The semantic checks of clEnqueueNDRangeKernel for `device`, with the pointer
    /// arguments already read (`global`, `offset` and `local` hold `work_dim` values when
    /// given). Returns None for an NDRange with no work-items, which completes without
    /// running.
    pub fn check_ndrange(
        &self,
        device: &Device,
        work_dim: u32,
        offset: Option<&[usize]>,
        global: Option<&[usize]>,
        local: Option<&[usize]>,
    ) -> Result<Option<NdRange>, cl_int> {
        // "CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built program executable
        // available for device associated with command_queue."
        let (native, uniform) = self.program.executable_for(device).ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        let kinfo: &KernelInfo = native.kernel(&self.name).map_or(&self.info, |k| &k.info);
        // "CL_INVALID_KERNEL_ARGS if the kernel argument values have not been specified."
        if !self.all_args_set() {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        // "CL_INVALID_WORK_DIMENSION if work_dim is not a valid value (i.e. a value between 1
        // and CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)."
        if !(1..=3).contains(&work_dim) {
            return Err(CL_INVALID_WORK_DIMENSION);
        }
        let dims = work_dim as usize;
        let info = device.info();
        // "If global_work_size is NULL, or the value in any passed dimension is 0 then the
        // kernel command will trivially succeed after its event dependencies are satisfied".
        let Some(global) = global else { return Ok(None) };
        if global[..dims].contains(&0) {
            return Ok(None);
        }
        let mut nd = NdRange { work_dim, offset: [0; 3], global: [1; 3], local: [1; 3] };
        nd.global[..dims].copy_from_slice(&global[..dims]);
        if let Some(offset) = offset {
            nd.offset[..dims].copy_from_slice(&offset[..dims]);
        }
        let size_max: u128 = if info.address_bits >= 64 { u64::MAX as u128 } else { (1u128 << info.address_bits) - 1 };
        for d in 0..dims {
            // "CL_INVALID_GLOBAL_WORK_SIZE if any of the values specified in
            // global_work_size[0], ... global_work_size[work_dim - 1] exceed the maximum value
            // representable by size_t on the device on which the kernel-instance will be
            // enqueued."
            if nd.global[d] as u128 > size_max {
                return Err(CL_INVALID_GLOBAL_WORK_SIZE);
            }
            // "CL_INVALID_GLOBAL_OFFSET if the value specified in global_work_size + the
            // corresponding values in global_work_offset for any dimensions is greater than
            // the maximum value representable by size t on the device".
            if nd.global[d] as u128 + nd.offset[d] as u128 > size_max {
                return Err(CL_INVALID_GLOBAL_OFFSET);
            }
        }
        match local {
            Some(local) => {
                nd.local[..dims].copy_from_slice(&local[..dims]);
                if nd.local[..dims].contains(&0) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                // "CL_INVALID_WORK_ITEM_SIZE if the number of work-items specified in any of
                // local_work_size[0], ... local_work_size[work_dim - 1] is greater than the
                // corresponding values specified by CL_DEVICE_MAX_WORK_ITEM_SIZES".
                if (0..dims).any(|d| nd.local[d] > info.max_work_item_sizes[d]) {
                    return Err(CL_INVALID_WORK_ITEM_SIZE);
                }
                // "CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and the total
                // number of work-items in the work-group computed as local_work_size[0] x ...
                // local_work_size[work_dim - 1] is greater than the value specified by
                // CL_KERNEL_WORK_GROUP_SIZE".
                let items = nd.local.iter().try_fold(1usize, |a, &l| a.checked_mul(l));
                if items.is_none_or(|n| n > self.work_group_size(device)) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
                // "CL_INVALID_WORK_GROUP_SIZE if local_work_size is specified and does not
                // match the required work-group size for kernel in the program source."
                if kinfo.reqd_work_group_size.is_some_and(|r| r != nd.local) {
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
            }
            None => {
                let non_uniform = !uniform && info.non_uniform_work_group_support;
                nd.local = device.model.pick_local_size(kinfo, work_dim, nd.global, non_uniform);
                let items = nd.local.iter().try_fold(1usize, |a, &l| a.checked_mul(l));
                if nd.local.contains(&0)
                    || (0..3).any(|d| nd.local[d] > info.max_work_item_sizes[d])
                    || items.is_none_or(|n| n > info.max_work_group_size)
                {
                    // A required work-group size the device cannot run.
                    return Err(CL_INVALID_WORK_GROUP_SIZE);
                }
            }
        }
        // "CL_INVALID_WORK_GROUP_SIZE if the work-group size must be uniform and the
        // local_work_size is not NULL, is not equal to the required work-group size specified
        // in the kernel source, or the global_work_size is not evenly divisible by the
        // local_work_size." Work-groups may be non-uniform only for programs built for
        // OpenCL C 2.0 or newer (or SPIR-V) without -cl-uniform-work-group-size, on devices
        // that support them.
        let divisible = (0..3).all(|d| nd.global[d].is_multiple_of(nd.local[d]));
        if !divisible && (uniform || !info.non_uniform_work_group_support) {
            return Err(CL_INVALID_WORK_GROUP_SIZE);
        }
        // "CL_OUT_OF_RESOURCES if there is a failure to queue the execution instance of kernel
        // on the command-queue because of insufficient resources needed to execute the kernel.
        // For example, the explicitly specified local_work_size causes a failure to execute
        // the kernel because of insufficient resources such as registers or local memory."
        // A kernel that cannot run on this device whatever the launch: its own `__local`
        // variables exceed the device's local memory, or its private memory a worker's stack
        // (the build log said so too). The context's callback is told why.
        if let Some(why) = device.model.kernel_refusal(kinfo) {
            self.context().notify(&format!("kernel {} cannot run on {}: {why}", self.name, info.name));
            return Err(CL_OUT_OF_RESOURCES);
        }
        let local_bytes = self.local_mem_size(device);
        if local_bytes > info.local_mem_size {
            self.context().notify(&format!(
                "kernel {} needs {local_bytes} bytes of __local memory ({} of its own variables, the rest \
                 __local arguments), more than the {} bytes of {} (CL_DEVICE_LOCAL_MEM_SIZE)",
                self.name, kinfo.static_local_mem_size, info.local_mem_size, info.name
            ));
            return Err(CL_OUT_OF_RESOURCES);
        }
        // The same for `__constant` memory: more `__constant` pointer arguments than
        // CL_DEVICE_MAX_CONSTANT_ARGS, or buffers adding up to more than
        // CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, cannot run.
        let (count, bytes) = self.constant_args();
        if count > info.max_constant_args as usize || bytes > info.max_constant_buffer_size {
            return Err(CL_OUT_OF_RESOURCES);
        }
        Ok(Some(nd))
    }

    /// The command of a checked NDRange: runs it on `device` and reports the device's time.
    /// The argument values are captured now (later clSetKernelArg calls do not affect it).
    /// Also says whether the command may run on any thread: false for a kernel whose
    /// work-items need more private memory than [`ANY_THREAD_PRIVATE_BYTES`].
    fn launch_command(&self, device: Arc<Device>, nd: Option<NdRange>) -> Result<(Work, bool), cl_int> {
        let Some(nd) = nd else {
            return Ok((Box::new(|| Ok(None)), true));
        };
        let (native, _) = self.program.executable_for(&device).ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        let index = native.kernels.iter().position(|k| k.info.name == self.name).ok_or(CL_INVALID_KERNEL_NAME)?;
        let info = &native.kernels[index].info;
        let args = self.launch_args(info)?;
        // On a device without fine-grain system SVM an SVM pointer argument must point into
        // (or just past) a live clSVMAlloc allocation of the context. One that does not (freed
        // since clSetKernelArgSVMPointer, or never allocated) would have the kernel touch
        // memory that may be unmapped: the specification leaves that undefined, and SoftCL
        // refuses the launch, as it does for a released buffer.
        if !device.info().svm.fine_grain_system && !args.svm_args.iter().all(|&p| args.svm.iter().any(|a| a.holds(p))) {
            return Err(CL_INVALID_KERNEL_ARGS);
        }
        let any_thread = info.private_mem_size <= ANY_THREAD_PRIVATE_BYTES;
        // What the kernel can touch: its buffers, images and SVM allocations, unless it may
        // follow pointers anywhere in the host's memory (fine-grain system SVM).
        let footprint = (!self.exec_info.lock().fine_grain_system).then(|| {
            let buffers = args.buffers.iter().map(|m| (m.address() as u64, m.size as u64));
            let svm = args.svm.iter().map(|a| (a.address() as u64, a.size() as u64));
            softcl_device_model::footprint_of(buffers.chain(svm))
        });
        Ok((Box::new(move || run_launch(&device, &native.kernels[index], &args, nd, footprint)), any_thread))
    }

    /// Enqueues a checked NDRange on `queue` (clEnqueueNDRangeKernel, clEnqueueTask). A kernel
    /// whose work-items need more private memory than [`ANY_THREAD_PRIVATE_BYTES`] runs only on
    /// the queue's worker, never on an application thread waiting in clFinish.
    pub fn enqueue_ndrange(
        &self,
        queue: &Arc<Queue>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        nd: Option<NdRange>,
    ) -> Result<Arc<Event>, cl_int> {
        let (work, any_thread) = self.launch_command(queue.device.clone(), nd)?;
        Ok(queue.enqueue_command(command_type, wait_for, work, any_thread))
    }
}

/// The private memory per work-item up to which a kernel may run on an application thread
/// (one blocked in clFinish, see `queue.rs`): with 16 work-items per SIMD packet that is
/// 128 KiB of stack, a small part of the usual thread stacks (glibc's 8 MiB, Rust's 2 MiB).
pub const ANY_THREAD_PRIVATE_BYTES: u64 = 8 << 10;

fn run_launch(
    device: &Device,
    kernel: &NativeKernel,
    args: &LaunchArgs,
    nd: NdRange,
    footprint: Option<u64>,
) -> Result<Option<u64>, cl_int> {
    let name = kernel.info.name.as_str();
    // SAFETY: `args.block` was laid out for this kernel's arguments when it was enqueued
    // (every argument set and checked against `kernel.info.args`); the buffers, images and SVM
    // allocations its addresses point into are held by `args` until the launch returns. What
    // the kernel does within them is bounded by the OpenCL C program, as on any device.
    let launch =
        unsafe { Launch::new(kernel, &args.block, &args.local_sizes, nd.work_dim, nd.offset, nd.global, nd.local) }
            .with_footprint(footprint);
    // The device prints or writes its own report where its settings say (the Gen model:
    // SOFTCL_GEN_REPORT); the runtime only takes the device time.
    match device.model.launch(&launch) {
        Ok(report) => Ok(report.device_time_ns),
        Err(LaunchError::OutOfResources(why)) => {
            eprintln!("SoftCL: kernel {name} could not run: {why}");
            Err(CL_OUT_OF_RESOURCES)
        }
        Err(LaunchError::Invalid(why)) => {
            eprintln!("SoftCL: internal error launching kernel {name}: {why}");
            Err(CL_OUT_OF_RESOURCES)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::BufferInit;
    use softcl_compiler::{AccessQualifier, KernelArg, TypeQualifiers};

    fn arg(name: &str, kind: ArgKind, offset: usize, size: usize) -> KernelArg {
        let address_space = match &kind {
            ArgKind::Buffer { address_space } => *address_space,
            ArgKind::Local => AddressSpace::Local,
            _ => AddressSpace::Private,
        };
        KernelArg {
            name: name.into(),
            type_name: "t".into(),
            address_space,
            access: AccessQualifier::None,
            qualifiers: TypeQualifiers::default(),
            kind,
            offset,
            size,
            align: size.min(8),
        }
    }

    /// `k(__global float* a, __local int* l, int4 v, __constant int* c, sampler_t s)`.
    fn info() -> KernelInfo {
        KernelInfo {
            name: "k".into(),
            args: vec![
                arg("a", ArgKind::Buffer { address_space: AddressSpace::Global }, 0, 8),
                arg("l", ArgKind::Local, 8, 8),
                arg("v", ArgKind::Value, 16, 16),
                arg("c", ArgKind::Buffer { address_space: AddressSpace::Constant }, 32, 8),
                arg("s", ArgKind::Sampler, 40, 8),
            ],
            arg_block_size: 48,
            ..Default::default()
        }
    }

    fn context() -> Arc<Context> {
        Context::new(crate::platform::platform().devices.clone(), Vec::new(), None).unwrap()
    }

    fn kernel(ctx: &Arc<Context>) -> Arc<Kernel> {
        let program = Program::with_source(ctx.clone(), "kernel void k() {}".into());
        Kernel::with_args(program, "k".into(), info(), Vec::new(), ExecInfo::default())
    }

    #[test]
    fn set_arg_checks() {
        let ctx = context();
        let k = kernel(&ctx);
        assert_eq!(k.program.kernels_attached(), 1);
        assert_eq!(k.check_arg(5, 8, false), Err(CL_INVALID_ARG_INDEX));
        // Buffers: sizeof(cl_mem); a NULL value is a NULL buffer.
        assert_eq!(k.check_arg(0, 4, false), Err(CL_INVALID_ARG_SIZE));
        assert_eq!(k.check_arg(0, 8, true), Ok(ArgRequest::Buffer));
        assert_eq!(k.check_arg(3, 8, false), Ok(ArgRequest::Buffer));
        // __local: NULL value, non-zero size.
        assert_eq!(k.check_arg(1, 0, true), Err(CL_INVALID_ARG_SIZE));
        assert_eq!(k.check_arg(1, 64, false), Err(CL_INVALID_ARG_VALUE));
        assert_eq!(k.check_arg(1, 64, true), Ok(ArgRequest::Local(64)));
        // Values: exact size, non-NULL.
        assert_eq!(k.check_arg(2, 4, false), Err(CL_INVALID_ARG_SIZE));
        assert_eq!(k.check_arg(2, 16, true), Err(CL_INVALID_ARG_VALUE));
        assert_eq!(k.check_arg(2, 16, false), Ok(ArgRequest::Bytes));
        // Samplers: sizeof(cl_sampler), not NULL.
        assert_eq!(k.check_arg(4, 4, false), Err(CL_INVALID_ARG_SIZE));
        assert_eq!(k.check_arg(4, 8, true), Err(CL_INVALID_SAMPLER));
        assert_eq!(k.check_arg(4, 8, false), Ok(ArgRequest::Sampler));
        let sampler = crate::sampler::from_args(CL_TRUE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR).unwrap();
        let foreign = SamplerObject::new_unchecked(context(), sampler, None);
        assert_eq!(k.set_arg(4, ArgValue::Sampler(foreign)), Err(CL_INVALID_SAMPLER));
        // set_arg re-checks the kind.
        assert_eq!(k.set_arg(2, ArgValue::Local(4)), Err(CL_INVALID_ARG_VALUE));
        assert_eq!(k.set_arg(2, ArgValue::Bytes(vec![0; 3])), Err(CL_INVALID_ARG_SIZE));
        assert_eq!(k.set_arg(1, ArgValue::Local(0)), Err(CL_INVALID_ARG_SIZE));
        // A buffer of another context is rejected.
        let other = context();
        let foreign = Mem::new_buffer(other, 0, 16, BufferInit::Zeroed, None).unwrap();
        assert_eq!(k.set_arg(0, ArgValue::Buffer(Some(foreign))), Err(CL_INVALID_MEM_OBJECT));
        drop(k);
    }

    #[test]
    fn argument_block_layout() {
        let ctx = context();
        let k = kernel(&ctx);
        assert_eq!(k.launch_args(&k.info).unwrap_err(), CL_INVALID_KERNEL_ARGS);
        let buf = Mem::new_buffer(ctx.clone(), 0, 64, BufferInit::Zeroed, None).unwrap();
        k.set_arg(0, ArgValue::Buffer(Some(buf.clone()))).unwrap();
        k.set_arg(1, ArgValue::Local(256)).unwrap();
        let v: Vec<u8> = (1..=16).collect();
        k.set_arg(2, ArgValue::Bytes(v.clone())).unwrap();
        k.set_arg(3, ArgValue::Buffer(None)).unwrap();
        // The sampler slot is not set yet: the kernel cannot launch.
        assert!(!k.all_args_set());
        assert_eq!(k.launch_args(&k.info).unwrap_err(), CL_INVALID_KERNEL_ARGS);
        let sampler = crate::sampler::from_args(CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_LINEAR).unwrap();
        k.set_arg(4, ArgValue::Sampler(SamplerObject::new_unchecked(ctx.clone(), sampler, None))).unwrap();
        let info = k.info.clone();
        let args = k.launch_args(&info).unwrap();
        assert_eq!(u64::from_ne_bytes(args.block[40..48].try_into().unwrap()), u64::from(sampler.bits()));
        assert_eq!(args.block.len(), 48);
        assert_eq!(u64::from_ne_bytes(args.block[0..8].try_into().unwrap()), buf.address() as u64);
        assert_eq!(&args.block[8..16], &[0; 8], "__local slots are filled by the device");
        assert_eq!(&args.block[16..32], &v[..]);
        assert_eq!(&args.block[32..40], &[0; 8], "NULL buffer");
        assert_eq!(args.local_sizes, vec![(1, 256)]);
        assert_eq!(args.buffers.len(), 1);
        assert!(Arc::ptr_eq(&args.buffers[0], &buf));
        // Cloning keeps the values; later changes are independent.
        let c = k.clone_kernel();
        assert_eq!(k.program.kernels_attached(), 2);
        c.set_arg(1, ArgValue::Local(8)).unwrap();
        assert_eq!(k.launch_args(&info).unwrap().local_sizes, vec![(1, 256)]);
        assert_eq!(c.launch_args(&info).unwrap().local_sizes, vec![(1, 8)]);
        let program = k.program.clone();
        drop((k, c));
        assert_eq!(program.kernels_attached(), 0);
    }

    #[test]
    fn image_arguments_point_at_the_image_arg() {
        use crate::memory::image::{describe, ImageLimits, Source};
        use crate::memory::image_mem::ImageInit;
        let ctx = context();
        let program = Program::with_source(ctx.clone(), "kernel void k() {}".into());
        let mut img_arg = arg("img", ArgKind::Image, 0, 8);
        img_arg.type_name = "image2d_t".into();
        img_arg.access = AccessQualifier::ReadOnly;
        let info = KernelInfo { name: "k".into(), args: vec![img_arg], arg_block_size: 8, ..Default::default() };
        let k = Kernel::with_args(program, "k".into(), info, Vec::new(), ExecInfo::default());
        let limits = ImageLimits {
            max_2d: [16384; 2],
            max_3d: [2048; 3],
            max_array_size: 2048,
            max_buffer_size: 1 << 27,
            pitch_alignment: 1,
            base_address_alignment: 1,
        };
        let image = |ty: u32, flags: u32| {
            let f = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNORM_INT8 };
            let d = cl_image_desc {
                image_type: ty as cl_mem_object_type,
                image_width: 5,
                image_height: 3,
                image_depth: 2,
                ..Default::default()
            };
            let desc = describe(Some(&f), Some(&d), Source::Own { host_ptr: false }, &limits, |_, _| true).unwrap();
            Mem::new_image(ctx.clone(), flags as cl_mem_flags, desc, ImageInit::Zeroed, None).unwrap()
        };
        assert_eq!(k.check_arg(0, 8, true), Err(CL_INVALID_ARG_VALUE));
        assert_eq!(k.check_arg(0, 8, false), Ok(ArgRequest::Image));
        let buf = Mem::new_buffer(ctx.clone(), 0, 64, BufferInit::Zeroed, None).unwrap();
        assert_eq!(k.set_arg(0, ArgValue::Image(buf)), Err(CL_INVALID_MEM_OBJECT), "a buffer");
        assert_eq!(
            k.set_arg(0, ArgValue::Image(image(CL_MEM_OBJECT_IMAGE3D, 0))),
            Err(CL_INVALID_MEM_OBJECT),
            "an image3d for an image2d_t"
        );
        assert_eq!(
            k.set_arg(0, ArgValue::Image(image(CL_MEM_OBJECT_IMAGE2D, CL_MEM_WRITE_ONLY))),
            Err(CL_INVALID_ARG_VALUE),
            "a write-only image for a read_only argument"
        );
        let img = image(CL_MEM_OBJECT_IMAGE2D, CL_MEM_READ_ONLY);
        k.set_arg(0, ArgValue::Image(img.clone())).unwrap();
        let args = k.launch_args(&k.info).unwrap();
        let slot = u64::from_ne_bytes(args.block[0..8].try_into().unwrap()) as usize;
        assert_eq!(Some(slot), img.image_arg_address());
        assert!(Arc::ptr_eq(&args.buffers[0], &img), "the launch holds the image");
        let a = img.image_arg().unwrap();
        assert_eq!(a.data, img.address());
        assert_eq!((a.row_pitch, a.slice_pitch, a.size), (20, 20, [5, 3, 1]));
        assert_eq!((a.dim, a.channel_order, a.channel_type), (3, CL_RGBA, CL_UNORM_INT8));
    }

    #[test]
    fn svm_pointer_arguments_and_exec_info() {
        let ctx = context();
        let k = kernel(&ctx);
        let rw = CL_MEM_READ_WRITE as cl_svm_mem_flags;
        let a = crate::svm::alloc(&ctx, rw, 256, 0).unwrap();
        let b = crate::svm::alloc(&ctx, rw, 64, 0).unwrap();
        assert_eq!(k.set_arg_svm(9, a), Err(CL_INVALID_ARG_INDEX));
        assert_eq!(k.set_arg_svm(1, a), Err(CL_INVALID_ARG_VALUE), "__local");
        assert_eq!(k.set_arg_svm(2, a), Err(CL_INVALID_ARG_VALUE), "by value");
        k.set_arg_svm(0, a + 16).unwrap();
        k.set_arg(1, ArgValue::Local(8)).unwrap();
        k.set_arg(2, ArgValue::Bytes(vec![0; 16])).unwrap();
        k.set_arg_svm(3, 0).unwrap();
        k.set_exec_svm_ptrs(vec![b + 4]);
        let mut info = k.info.clone();
        info.args.pop();
        let args = k.launch_args(&info).unwrap();
        assert_eq!(u64::from_ne_bytes(args.block[0..8].try_into().unwrap()), (a + 16) as u64);
        assert_eq!(&args.block[32..40], &[0; 8]);
        let mut held: Vec<usize> = args.svm.iter().map(|s| s.address()).collect();
        held.sort();
        let mut want = vec![a, b];
        want.sort();
        assert_eq!(held, want, "the launch holds both allocations");
        // A clone keeps the SVM argument and the exec info.
        let c = k.clone_kernel();
        assert_eq!(c.exec_info().svm_ptrs, vec![b + 4]);
        assert_eq!(c.launch_args(&info).unwrap().svm.len(), 2);
        // Freed while the launch holds it: the bytes stay until the launch goes.
        let freed = crate::svm::free(&ctx, a).unwrap();
        assert_eq!(Arc::strong_count(&freed), 2);
        drop(args);
        assert_eq!(Arc::strong_count(&freed), 1);
    }

    #[test]
    fn local_memory_counts_static_and_arguments() {
        let ctx = context();
        let k = kernel(&ctx);
        let dev = &ctx.devices[0];
        assert_eq!(k.local_mem_size(dev), 0);
        k.set_arg(1, ArgValue::Local(1000)).unwrap();
        assert_eq!(k.local_mem_size(dev), 1000);
    }
}
