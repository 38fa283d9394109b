//! Program objects: what the application gave (OpenCL C source, SPIR-V, a binary), and per
//! device the outcome of the last clBuildProgram / clCompileProgram / clLinkProgram: status,
//! options, log, binary type, the front end's result and the native code.
//!
//! Builds run synchronously on the calling thread. Devices whose compiler [`Target`]s are equal
//! share one front-end run and one code generation. Binaries are a versioned container
//! ([`encode_binary`]) holding the SPIR-V and the options it was compiled with and, for
//! executables, the device's native code with the driver's and device's identity: loading it
//! back links that code (no LLVM code generation) when both match, otherwise the SPIR-V is
//! compiled again and the build log says why. Builds from source or IL go through the
//! persistent kernel cache ([`program_cache`]).

use crate::cl::*;
use crate::context::Context;
use crate::device::Device;
use crate::handle::{ClObject, Header, ObjectKind};
use crate::program_cache;
use parking_lot::Mutex;
use softcl_compiler::{
    self as compiler, BuildError, BuildErrorKind, BuildOptions, KernelInfo, LinkOptions, NativeProgram, Target,
};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// What a program was created from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// clCreateProgramWithSource: the concatenated strings.
    Source(String),
    /// clCreateProgramWithIL: the bytes as given.
    Il(Vec<u8>),
    /// clCreateProgramWithBinary.
    Binary,
    /// clLinkProgram.
    Linked,
}

/// The state of one device of a program.
#[derive(Debug, Clone)]
pub struct DeviceBuild {
    /// CL_PROGRAM_BUILD_STATUS.
    pub status: cl_build_status,
    /// CL_PROGRAM_BUILD_OPTIONS: the options of the last build, compile or link.
    pub options: String,
    /// CL_PROGRAM_BUILD_LOG.
    pub log: String,
    /// CL_PROGRAM_BINARY_TYPE.
    pub binary_type: cl_program_binary_type,
    /// The front end's result (SPIR-V, IR, kernel metadata), for every binary type but NONE.
    pub front: Option<Arc<compiler::Program>>,
    /// Native code, for CL_PROGRAM_BINARY_TYPE_EXECUTABLE.
    pub native: Option<Arc<NativeProgram>>,
    /// The options the front end ran with (stored in binaries).
    pub compile_options: String,
    /// Whether every work-group of an NDRange must have the same size (OpenCL C before 2.0,
    /// or `-cl-uniform-work-group-size`).
    pub uniform_work_groups: bool,
    /// Native code a binary brought for this device (checked against the driver and the
    /// device when the binary was loaded): clBuildProgram links it instead of generating code.
    pub binary_image: Option<Arc<compiler::NativeImage>>,
    /// Why a binary's native code is not used (a line of every build log of the program).
    pub binary_note: String,
}

impl Default for DeviceBuild {
    fn default() -> Self {
        Self {
            status: CL_BUILD_NONE,
            options: String::new(),
            log: String::new(),
            binary_type: CL_PROGRAM_BINARY_TYPE_NONE,
            front: None,
            native: None,
            compile_options: String::new(),
            uniform_work_groups: true,
            binary_image: None,
            binary_note: String::new(),
        }
    }
}

impl DeviceBuild {
    fn is_executable(&self) -> bool {
        self.status == CL_BUILD_SUCCESS as cl_build_status
            && self.binary_type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE
            && self.native.is_some()
    }
}

#[repr(C)]
pub struct Program {
    header: Header,
    pub context: Arc<Context>,
    /// The devices associated with the program (CL_PROGRAM_DEVICES).
    pub devices: Vec<Arc<Device>>,
    pub origin: Origin,
    /// One entry per device, in the order of `devices`.
    builds: Mutex<Vec<DeviceBuild>>,
    /// Kernel objects created from the program and not yet destroyed.
    kernels_attached: AtomicUsize,
    /// clSetProgramSpecializationConstant values by SpecId (IL programs).
    spec_constants: Mutex<BTreeMap<u32, Vec<u8>>>,
    /// The IL parsed at creation (reused by builds while no specialization constant is set).
    il_front: Option<Result<Arc<compiler::Program>, BuildError>>,
}

impl ClObject for Program {
    const KIND: ObjectKind = ObjectKind::Program;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Program").field("origin", &self.origin).field("devices", &self.devices).finish()
    }
}

/// The OpenCL error for a failed front end or code generation in clBuildProgram.
fn build_error_code(kind: BuildErrorKind) -> cl_int {
    match kind {
        BuildErrorKind::InvalidOptions => CL_INVALID_BUILD_OPTIONS,
        BuildErrorKind::CompilerNotAvailable => CL_COMPILER_NOT_AVAILABLE,
        BuildErrorKind::CompileFailed | BuildErrorKind::InvalidIl => CL_BUILD_PROGRAM_FAILURE,
    }
}

/// The same for clCompileProgram.
fn compile_error_code(kind: BuildErrorKind) -> cl_int {
    match kind {
        BuildErrorKind::InvalidOptions => CL_INVALID_COMPILER_OPTIONS,
        BuildErrorKind::CompilerNotAvailable => CL_COMPILER_NOT_AVAILABLE,
        BuildErrorKind::CompileFailed | BuildErrorKind::InvalidIl => CL_COMPILE_PROGRAM_FAILURE,
    }
}

/// The most telling error of several devices' failures: option errors first (they are the
/// application's to fix and the same on every device), then a missing compiler.
fn worst(codes: impl IntoIterator<Item = cl_int>, failure: cl_int) -> Result<(), cl_int> {
    let codes: Vec<cl_int> = codes.into_iter().collect();
    if codes.is_empty() {
        return Ok(());
    }
    for preferred in [CL_INVALID_BUILD_OPTIONS, CL_INVALID_COMPILER_OPTIONS, CL_COMPILER_NOT_AVAILABLE] {
        if codes.contains(&preferred) {
            return Err(preferred);
        }
    }
    Err(failure)
}

/// Runs `f` once per distinct target of `devices` and hands each device its target's result.
fn per_target<R: Clone>(devices: &[Arc<Device>], mut f: impl FnMut(&Target) -> R) -> Vec<R> {
    let mut done: HashMap<Target, R> = HashMap::new();
    devices
        .iter()
        .map(|d| {
            let target = d.model.target();
            if let Some(r) = done.get(target) {
                return r.clone();
            }
            let r = f(target);
            done.insert(target.clone(), r.clone());
            r
        })
        .collect()
}

/// Runs a compiler step, turning a panic (a compiler bug) into a failed build so that the
/// program never stays CL_BUILD_IN_PROGRESS.
fn guarded<T>(f: impl FnOnce() -> Result<T, BuildError>) -> Result<T, BuildError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(BuildError { kind: BuildErrorKind::CompileFailed, log: format!("internal compiler error: {what}") })
    })
}

/// What a build of one device produced.
type Built = Result<(Arc<compiler::Program>, Arc<NativeProgram>), BuildError>;

impl Program {
    fn new(context: Arc<Context>, devices: Vec<Arc<Device>>, origin: Origin, builds: Vec<DeviceBuild>) -> Arc<Self> {
        debug_assert_eq!(devices.len(), builds.len());
        let il_front = match &origin {
            Origin::Il(bytes) => Some(guarded(|| compiler::load_spirv(bytes)).map(Arc::new)),
            _ => None,
        };
        Arc::new(Self {
            header: Header::new(ObjectKind::Program),
            context,
            devices,
            origin,
            builds: Mutex::new(builds),
            kernels_attached: AtomicUsize::new(0),
            spec_constants: Mutex::new(BTreeMap::new()),
            il_front,
        })
    }

    /// clCreateProgramWithSource: the program's devices are the context's.
    pub fn with_source(context: Arc<Context>, source: String) -> Arc<Self> {
        let devices = context.devices.clone();
        let builds = vec![DeviceBuild::default(); devices.len()];
        Self::new(context, devices, Origin::Source(source), builds)
    }

    /// clCreateProgramWithIL: SPIR-V for the context's devices.
    pub fn with_il(context: Arc<Context>, il: Vec<u8>) -> Result<Arc<Self>, cl_int> {
        // "CL_INVALID_VALUE if il is NULL or if length is zero."
        if il.is_empty() {
            return Err(CL_INVALID_VALUE);
        }
        let devices = context.devices.clone();
        let builds = vec![DeviceBuild::default(); devices.len()];
        let program = Self::new(context, devices, Origin::Il(il), builds);
        match &program.il_front {
            // "CL_INVALID_VALUE if the length-byte memory pointed to by il does not contain
            // well-formed intermediate language input appropriate for the deployment
            // environment in which the OpenCL platform is running."
            Some(Err(e)) if e.kind == BuildErrorKind::InvalidIl => Err(CL_INVALID_VALUE),
            Some(Err(e)) if e.kind == BuildErrorKind::CompilerNotAvailable => Err(CL_COMPILER_NOT_AVAILABLE),
            // Well-formed IL that does not translate (an undefined function) fails at build
            // time, with the reason in the build log.
            _ => Ok(program),
        }
    }

    /// clCreateProgramWithBinary: one binary per device. Returns the program, or
    /// CL_INVALID_BINARY, and the per-device status either way.
    pub fn with_binaries(
        context: Arc<Context>,
        devices: Vec<Arc<Device>>,
        binaries: &[&[u8]],
    ) -> (Result<Arc<Self>, cl_int>, Vec<cl_int>) {
        let mut status = Vec::with_capacity(binaries.len());
        let mut builds = Vec::with_capacity(binaries.len());
        for (bytes, device) in binaries.iter().zip(&devices) {
            match decode_binary(bytes, device.model.target()) {
                Ok(b) => {
                    status.push(CL_SUCCESS as cl_int);
                    builds.push(b);
                }
                Err(e) => {
                    status.push(e);
                    builds.push(DeviceBuild::default());
                }
            }
        }
        // "CL_INVALID_BINARY if an invalid program binary was encountered for any device.
        // binary_status will return specific status for each device."
        if status.iter().any(|&s| s != CL_SUCCESS as cl_int) {
            return (Err(CL_INVALID_BINARY), status);
        }
        (Ok(Self::new(context, devices, Origin::Binary, builds)), status)
    }

    /// The index of `device` among the program's devices.
    pub fn device_index(&self, device: &Device) -> Option<usize> {
        self.devices.iter().position(|d| std::ptr::eq(d.as_ref(), device))
    }

    /// The state of one device (a snapshot).
    pub fn build_of(&self, device: &Device) -> Option<DeviceBuild> {
        let i = self.device_index(device)?;
        Some(self.builds.lock()[i].clone())
    }

    pub fn kernels_attached(&self) -> usize {
        self.kernels_attached.load(Ordering::Acquire)
    }

    pub(crate) fn attach_kernel(&self) {
        self.kernels_attached.fetch_add(1, Ordering::AcqRel);
    }

    pub(crate) fn detach_kernel(&self) {
        self.kernels_attached.fetch_sub(1, Ordering::AcqRel);
    }

    /// The indices of `devices` in the program (all of them for an empty list).
    fn indices(&self, devices: &[Arc<Device>]) -> Result<Vec<usize>, cl_int> {
        if devices.is_empty() {
            return Ok((0..self.devices.len()).collect());
        }
        // "CL_INVALID_DEVICE if any device in device_list is not in the list of devices
        // associated with program."
        devices.iter().map(|d| self.device_index(d).ok_or(CL_INVALID_DEVICE)).collect()
    }

    /// Marks the devices as being built; fails if a build of one of them is under way or
    /// kernels are attached.
    fn begin(&self, indices: &[usize], options: &str) -> Result<Vec<DeviceBuild>, cl_int> {
        // "CL_INVALID_OPERATION if there are kernel objects attached to program."
        if self.kernels_attached() > 0 {
            return Err(CL_INVALID_OPERATION);
        }
        let mut builds = self.builds.lock();
        // "CL_INVALID_OPERATION if the build of a program executable for any of the devices
        // listed in device_list by a previous call to clBuildProgram for program has not
        // completed."
        if indices.iter().any(|&i| builds[i].status == CL_BUILD_IN_PROGRESS) {
            return Err(CL_INVALID_OPERATION);
        }
        let previous = indices.iter().map(|&i| builds[i].clone()).collect();
        for &i in indices {
            builds[i].status = CL_BUILD_IN_PROGRESS;
            builds[i].options = options.to_string();
        }
        Ok(previous)
    }

    fn finish(&self, indices: &[usize], results: Vec<DeviceBuild>) {
        let mut builds = self.builds.lock();
        for (&i, mut r) in indices.iter().zip(results) {
            note_unrunnable_kernels(&self.devices[i], &mut r);
            builds[i] = r;
        }
    }

    /// The IL with the application's specialization constants applied, parsed: as a program
    /// to build, or as a compiled `object` whose imports are resolved at link time.
    fn il_program(&self, object: bool) -> Result<Arc<compiler::Program>, BuildError> {
        let Origin::Il(bytes) = &self.origin else {
            unreachable!("il_program on a program without IL");
        };
        let spec = self.spec_constants.lock().clone();
        if spec.is_empty() {
            match &self.il_front {
                Some(Ok(cached)) => return Ok(cached.clone()),
                Some(Err(e)) if !object || e.kind != BuildErrorKind::CompileFailed => return Err(e.clone()),
                _ => {}
            }
        }
        let words = compiler::front::specialize::specialize(bytes, &spec)
            .map_err(|log| BuildError { kind: BuildErrorKind::InvalidIl, log })?;
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        if object {
            guarded(|| compiler::load_spirv_object(&bytes)).map(Arc::new)
        } else {
            guarded(|| compiler::load_spirv(&bytes)).map(Arc::new)
        }
    }

    /// clBuildProgram for `devices` (all of the program's when empty).
    pub fn build(&self, devices: &[Arc<Device>], options: &str) -> Result<(), cl_int> {
        let mut indices = self.indices(devices)?;
        // A program from source or IL built for a device is built for the program's
        // sub-devices of it too (sub-devices run the parent's code; the CTS device_partition
        // suite builds for the parent and launches on the sub-devices, as PoCL and Intel's CPU
        // runtime allow).
        if matches!(self.origin, Origin::Source(_) | Origin::Il(_)) && !devices.is_empty() {
            for (i, d) in self.devices.iter().enumerate() {
                if !indices.contains(&i) && devices.iter().any(|p| d.descends_from(p)) {
                    indices.push(i);
                }
            }
        }
        // "CL_INVALID_OPERATION if program was not created with clCreateProgramWithSource,
        // clCreateProgramWithIL or clCreateProgramWithBinary."
        if self.origin == Origin::Linked {
            return Err(CL_INVALID_OPERATION);
        }
        if self.origin == Origin::Binary {
            let builds = self.builds.lock();
            // "CL_INVALID_BINARY if program is created with clCreateProgramWithBinary and
            // devices listed in device_list do not have a valid program binary loaded."
            if indices.iter().any(|&i| builds[i].front.is_none()) {
                return Err(CL_INVALID_BINARY);
            }
        }
        let previous = self.begin(&indices, options)?;
        // Parsed once; an invalid string fails every device's build with its log line.
        let parsed = BuildOptions::parse(options);
        let devs: Vec<Arc<Device>> = indices.iter().map(|&i| self.devices[i].clone()).collect();
        let results: Vec<Outcome> = match &self.origin {
            Origin::Source(source) => {
                let built = per_target(&devs, |target| -> Built {
                    let parsed = parsed.as_ref().map_err(Clone::clone)?;
                    guarded(|| build_source(source, parsed, target))
                });
                devs.iter()
                    .zip(built)
                    .map(|(d, b)| {
                        let target = d.model.target();
                        let uniform = parsed.as_ref().map_or(true, |o| o.requires_uniform_work_groups(target));
                        executable(b, options, options, uniform)
                    })
                    .collect()
            }
            Origin::Il(_) => {
                let front = self.il_program(false);
                let built = per_target(&devs, |target| -> Built {
                    // The options are checked even though SPIR-V needs none of them.
                    let parsed = parsed.as_ref().map_err(Clone::clone)?;
                    parsed.cl_std_for(target)?;
                    let front = front.clone()?;
                    let native = guarded(|| codegen_il(&front, parsed, target))?;
                    Ok((front, native))
                });
                // SPIR-V kernels may run in non-uniform work-groups unless the build asks for
                // uniform ones.
                let uniform = parsed.as_ref().map_or(true, |o| o.uniform_work_group_size);
                built.into_iter().map(|b| executable(b, options, options, uniform)).collect()
            }
            Origin::Binary => devs
                .iter()
                .zip(previous)
                .map(|(d, prev)| {
                    let target = d.model.target();
                    let front = prev.front.clone().expect("checked above");
                    let checked = parsed.as_ref().map_err(Clone::clone).and_then(|o| o.cl_std_for(target).map(|_| o));
                    // The binary's own options decide uniformity; the build may only add to it.
                    let uniform = prev.uniform_work_groups || checked.as_ref().is_ok_and(|o| o.uniform_work_group_size);
                    let built: Built =
                        checked.and_then(|_| Ok((front.clone(), guarded(|| binary_codegen(&front, &prev, target))?)));
                    let mut outcome = executable(built, options, &prev.compile_options, uniform);
                    // The note of a binary whose native code could not be used comes first.
                    outcome.build.log = format!("{}{}", prev.binary_note, outcome.build.log);
                    outcome.build.binary_image = prev.binary_image.clone();
                    outcome.build.binary_note = prev.binary_note.clone();
                    if outcome.failure.is_some() {
                        // A failed build keeps the binary, so that the program can be built
                        // again (with other options).
                        outcome.build = DeviceBuild { status: CL_BUILD_ERROR, log: outcome.build.log, ..prev };
                        outcome.build.options = options.to_string();
                    }
                    outcome
                })
                .collect(),
            Origin::Linked => unreachable!("rejected above"),
        };
        let failures: Vec<cl_int> = results.iter().filter_map(|r| r.failure.map(build_error_code)).collect();
        self.finish(&indices, results.into_iter().map(|r| r.build).collect());
        worst(failures, CL_BUILD_PROGRAM_FAILURE)
    }

    /// clCompileProgram: the front end only. `headers` are (include name, source) pairs
    /// made available to `#include`.
    pub fn compile(&self, devices: &[Arc<Device>], options: &str, headers: &[(String, String)]) -> Result<(), cl_int> {
        let indices = self.indices(devices)?;
        // "CL_INVALID_OPERATION if program has no source or IL available, i.e. it has not
        // been created with clCreateProgramWithSource or clCreateProgramWithIL."
        if !matches!(self.origin, Origin::Source(_) | Origin::Il(_)) {
            return Err(CL_INVALID_OPERATION);
        }
        self.begin(&indices, options)?;
        let devs: Vec<Arc<Device>> = indices.iter().map(|&i| self.devices[i].clone()).collect();
        let header_dir = match HeaderDir::new(headers) {
            Ok(dir) => dir,
            Err(e) => {
                let failed = DeviceBuild {
                    status: CL_BUILD_ERROR,
                    options: options.to_string(),
                    log: format!("cannot provide the input headers: {e}"),
                    ..DeviceBuild::default()
                };
                self.finish(&indices, vec![failed; indices.len()]);
                return Err(CL_COMPILE_PROGRAM_FAILURE);
            }
        };
        // Parsed once; the input headers' directory comes after the application's `-I`s.
        let parsed = BuildOptions::parse(options);
        let front_options = parsed.clone().and_then(|mut o| {
            if let Some(dir) = &header_dir {
                o.add_include_dir(&dir.path.to_string_lossy())?;
            }
            Ok(o)
        });
        let compiled: Vec<Result<Arc<compiler::Program>, BuildError>> = match &self.origin {
            Origin::Source(source) => per_target(&devs, |target| {
                let front_options = front_options.as_ref().map_err(Clone::clone)?;
                guarded(|| compiler::compile_object(source, front_options, target)).map(Arc::new)
            }),
            Origin::Il(_) => {
                let front = self.il_program(true);
                per_target(&devs, |target| {
                    parsed.as_ref().map_err(Clone::clone)?.cl_std_for(target)?;
                    front.clone()
                })
            }
            _ => unreachable!("checked above"),
        };
        drop(header_dir);
        let mut failures = Vec::new();
        let results = devs
            .iter()
            .zip(compiled)
            .map(|(d, c)| match c {
                Ok(front) => {
                    let uniform = match (&self.origin, &parsed) {
                        (Origin::Source(_), Ok(o)) => o.requires_uniform_work_groups(d.model.target()),
                        (_, Ok(o)) => o.uniform_work_group_size,
                        (_, Err(_)) => true,
                    };
                    DeviceBuild {
                        status: CL_BUILD_SUCCESS as cl_build_status,
                        options: options.to_string(),
                        log: front.log.clone(),
                        binary_type: CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT,
                        front: Some(front),
                        native: None,
                        compile_options: options.to_string(),
                        uniform_work_groups: uniform,
                        ..DeviceBuild::default()
                    }
                }
                Err(e) => {
                    failures.push(compile_error_code(e.kind));
                    DeviceBuild {
                        status: CL_BUILD_ERROR,
                        options: options.to_string(),
                        log: e.log,
                        ..DeviceBuild::default()
                    }
                }
            })
            .collect();
        self.finish(&indices, results);
        worst(failures, CL_COMPILE_PROGRAM_FAILURE)
    }

    /// clLinkProgram. Returns the new program and CL_SUCCESS or CL_LINK_PROGRAM_FAILURE (the
    /// program exists either way so that its build log can be read), or an error without a
    /// program.
    ///
    /// Per device, the compiled objects and libraries of every input are linked at the SPIR-V
    /// level (`compiler::link`): into a library with `-create-library`, otherwise into an
    /// executable whose imports must all resolve. Devices with equal targets and the same
    /// inputs share one link and one code generation.
    pub fn link(
        context: Arc<Context>,
        devices: Vec<Arc<Device>>,
        options: &str,
        inputs: &[Arc<Program>],
    ) -> Result<(Arc<Program>, cl_int), cl_int> {
        let link = LinkOptions::parse(options).map_err(|_| CL_INVALID_LINKER_OPTIONS)?;
        // "The devices associated with the returned program object will be the list of
        // devices specified by device_list or if device_list is NULL it will be the list of
        // devices associated with context."
        let devices = if devices.is_empty() { context.devices.clone() } else { devices };
        // Per device: the inputs' compiled objects, or None when no input has one.
        let mut per_device: Vec<Option<Vec<DeviceBuild>>> = Vec::with_capacity(devices.len());
        for device in &devices {
            let mut objects = Vec::new();
            for input in inputs {
                let b = input.build_of(device).unwrap_or_default();
                // "CL_INVALID_OPERATION if the compilation or build of a program executable
                // for any of the devices listed in device_list by a previous call to
                // clCompileProgram or clBuildProgram for program has not completed."
                if b.status == CL_BUILD_IN_PROGRESS {
                    return Err(CL_INVALID_OPERATION);
                }
                // A compiled object or library: compiled here, or loaded from a binary (whose
                // status stays CL_BUILD_NONE until it is built).
                let is_object = (b.status == CL_BUILD_SUCCESS as cl_build_status || b.status == CL_BUILD_NONE)
                    && b.front.is_some()
                    && matches!(b.binary_type, CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT | CL_PROGRAM_BINARY_TYPE_LIBRARY);
                if is_object {
                    objects.push(b);
                }
            }
            // "None of the programs contain a compiled binary or library for that device. In
            // this case, no link is performed and there will be no program executable
            // generated for this device. All other cases will return a CL_INVALID_OPERATION
            // error."
            if objects.is_empty() {
                per_device.push(None);
                continue;
            }
            if objects.len() != inputs.len() {
                return Err(CL_INVALID_OPERATION);
            }
            per_device.push(Some(objects));
        }
        if per_device.iter().all(Option::is_none) {
            // No device has a compiled object in every input program.
            return Err(CL_INVALID_OPERATION);
        }
        // (target, the inputs' front-end results) -> the link's outcome.
        type Key = (Target, Vec<usize>);
        let mut done: HashMap<Key, Outcome> = HashMap::new();
        let mut failed = false;
        let mut builds = Vec::with_capacity(devices.len());
        for (device, objects) in devices.iter().zip(per_device) {
            let Some(objects) = objects else {
                builds.push(DeviceBuild { options: options.to_string(), ..DeviceBuild::default() });
                continue;
            };
            let target = device.model.target();
            let fronts: Vec<Arc<compiler::Program>> =
                objects.iter().map(|o| o.front.clone().expect("checked above")).collect();
            let key = (target.clone(), fronts.iter().map(|f| Arc::as_ptr(f) as usize).collect());
            let outcome = match done.get(&key) {
                Some(o) => Outcome { build: o.build.clone(), failure: o.failure },
                None => {
                    let o = link_one(&objects, &fronts, target, options, link.create_library);
                    done.insert(key, Outcome { build: o.build.clone(), failure: o.failure });
                    o
                }
            };
            failed |= outcome.failure.is_some();
            let mut build = outcome.build;
            note_unrunnable_kernels(device, &mut build);
            builds.push(build);
        }
        let program = Self::new(context, devices, Origin::Linked, builds);
        Ok((program, if failed { CL_LINK_PROGRAM_FAILURE } else { CL_SUCCESS as cl_int }))
    }

    /// The devices with a program executable, with their builds.
    fn executables(&self) -> Vec<(usize, DeviceBuild)> {
        self.builds.lock().iter().enumerate().filter(|(_, b)| b.is_executable()).map(|(i, b)| (i, b.clone())).collect()
    }

    /// CL_PROGRAM_KERNEL_NAMES as a list, in source order.
    pub fn kernel_names(&self) -> Result<Vec<String>, cl_int> {
        let exes = self.executables();
        // "CL_INVALID_PROGRAM_EXECUTABLE if param_name is CL_PROGRAM_NUM_KERNELS or
        // CL_PROGRAM_KERNEL_NAMES and a successful program executable has not been built for
        // at least one device in the list of devices associated with program."
        let (_, first) = exes.first().ok_or(CL_INVALID_PROGRAM_EXECUTABLE)?;
        let front = first.front.as_ref().expect("an executable has a front-end result");
        Ok(front.kernels().map(|k| k.name.clone()).collect())
    }

    /// Whether some device has a program executable.
    pub fn has_executable(&self) -> bool {
        !self.executables().is_empty()
    }

    /// The metadata of kernel `name` (for clCreateKernel).
    pub fn kernel_info(&self, name: &str) -> Result<KernelInfo, cl_int> {
        let exes = self.executables();
        // "CL_INVALID_PROGRAM_EXECUTABLE if there is no successfully built executable for
        // program."
        if exes.is_empty() {
            return Err(CL_INVALID_PROGRAM_EXECUTABLE);
        }
        let mut found: Option<KernelInfo> = None;
        for (_, b) in &exes {
            let front = b.front.as_ref().expect("an executable has a front-end result");
            // "CL_INVALID_KERNEL_NAME if kernel_name is not found in program."
            let info = front.kernel(name).ok_or(CL_INVALID_KERNEL_NAME)?;
            match &found {
                None => found = Some(info.clone()),
                // "CL_INVALID_KERNEL_DEFINITION if the function definition for __kernel
                // function given by kernel_name such as the number of arguments, the argument
                // types are not the same for all devices for which the program executable has
                // been built."
                Some(f) if f.args != info.args => return Err(CL_INVALID_KERNEL_DEFINITION),
                Some(_) => {}
            }
        }
        found.ok_or(CL_INVALID_KERNEL_NAME)
    }

    /// The native code and uniformity requirement of `device`'s executable.
    pub fn executable_for(&self, device: &Device) -> Option<(Arc<NativeProgram>, bool)> {
        let i = self.device_index(device)?;
        let builds = self.builds.lock();
        let b = &builds[i];
        if !b.is_executable() {
            return None;
        }
        Some((b.native.clone()?, b.uniform_work_groups))
    }

    /// Whether kernel argument information came with the program: always for OpenCL C
    /// (the front end always keeps it); for IL and binaries only when the module names its
    /// kernel parameters.
    pub fn arg_info_available(&self, info: &KernelInfo) -> bool {
        matches!(self.origin, Origin::Source(_)) || info.args.iter().all(|a| !a.name.is_empty())
    }

    /// CL_PROGRAM_BINARIES: the container of every device that has a binary (empty
    /// otherwise).
    ///
    /// An executable's binary also holds its native code for the device (with the driver's and
    /// the device's identity: [`native_block`]), so that clCreateProgramWithBinary +
    /// clBuildProgram in a later run link it without LLVM.
    pub fn binaries(&self) -> Vec<Vec<u8>> {
        self.builds
            .lock()
            .iter()
            .zip(&self.devices)
            .map(|(b, device)| match (&b.front, b.binary_type, b.status) {
                // Built here, or loaded from a binary and not built again yet.
                (Some(front), ty, status)
                    if ty != CL_PROGRAM_BINARY_TYPE_NONE
                        && (status == CL_BUILD_SUCCESS as cl_build_status || status == CL_BUILD_NONE) =>
                {
                    let image = b.native.as_ref().and_then(|n| n.image.as_ref()).or(b.binary_image.as_deref());
                    let native = match ty {
                        CL_PROGRAM_BINARY_TYPE_EXECUTABLE => image.and_then(|i| native_block(i, device.model.target())),
                        _ => None,
                    };
                    encode_binary(ty, &b.compile_options, b.uniform_work_groups, &front.spirv, native.as_deref())
                }
                _ => Vec::new(),
            })
            .collect()
    }

    /// clSetProgramSpecializationConstant.
    pub fn set_spec_constant(&self, spec_id: u32, value: &[u8]) -> Result<(), cl_int> {
        // "CL_INVALID_PROGRAM if program is not a valid program object created from an
        // intermediate language (e.g. SPIR-V)."
        let Origin::Il(il) = &self.origin else {
            return Err(CL_INVALID_PROGRAM);
        };
        let constants = compiler::front::specialize::spec_constants(il).map_err(|_| CL_INVALID_PROGRAM)?;
        // "CL_INVALID_SPEC_ID if spec_id is not a valid specialization constant identifier."
        let c = constants.iter().find(|c| c.spec_id == spec_id).ok_or(CL_INVALID_SPEC_ID)?;
        // "CL_INVALID_VALUE if spec_size does not correctly match the size of the
        // specialization constant or if spec_value is NULL."
        if c.size != value.len() {
            return Err(CL_INVALID_VALUE);
        }
        self.spec_constants.lock().insert(spec_id, value.to_vec());
        Ok(())
    }
}

/// Adds a build-log line for each kernel of an executable `build` that cannot run on `device`
/// whatever the launch (its `__local` variables exceed the device's local memory, its private
/// memory a worker's stack: `Device::kernel_refusal`). The build succeeds, since the program's
/// other kernels may run; clEnqueueNDRangeKernel refuses such a kernel with
/// CL_OUT_OF_RESOURCES.
fn note_unrunnable_kernels(device: &Device, build: &mut DeviceBuild) {
    let Some(native) = build.native.as_ref().filter(|_| build.status == CL_BUILD_SUCCESS as cl_build_status) else {
        return;
    };
    for k in &native.kernels {
        if let Some(why) = device.model.kernel_refusal(&k.info) {
            build.log.push_str(&format!(
                "warning: kernel `{}` cannot run on this device: {why}; clEnqueueNDRangeKernel returns \
                 CL_OUT_OF_RESOURCES\n",
                k.info.name
            ));
        }
    }
}

/// clBuildProgram of OpenCL C `source` for `target`: from the kernel cache when it has the
/// build (no toolchain, no LLVM code generation: the SPIR-V is translated again and the cached
/// object linked), otherwise compiled and stored there.
fn build_source(
    source: &str,
    options: &BuildOptions,
    target: &Target,
) -> Result<(Arc<compiler::Program>, Arc<NativeProgram>), BuildError> {
    let key = program_cache::key_for_source(source, options, target);
    if let Some(entry) = key.as_ref().and_then(program_cache::lookup) {
        let hit = compiler::source_program_from_spirv(entry.spirv, entry.front_log, source)
            .and_then(|front| Ok((compiler::load_native(entry.image, &front, target)?, front)));
        // An entry that does not load (a host function missing here) is rebuilt and replaced.
        match hit {
            Ok((native, front)) => {
                program_cache::trace(|| format!("hit {}", key.map(|k| k.hex()).unwrap_or_default()));
                return Ok((Arc::new(front), native));
            }
            Err(e) => program_cache::trace(|| format!("entry does not load ({}): rebuilt", e.log)),
        }
    }
    let front = Arc::new(compiler::compile_source_with(source, options, target)?);
    let native = front.codegen(target)?;
    if let (Some(key), Some(image)) = (key, &native.image) {
        program_cache::store(&key, &front.log, &front.spirv, image);
    }
    Ok((front, native))
}

/// Code generation of an IL program's `front` for `target`, through the kernel cache.
fn codegen_il(
    front: &compiler::Program,
    options: &BuildOptions,
    target: &Target,
) -> Result<Arc<NativeProgram>, BuildError> {
    if !front.unresolved.is_empty() {
        return front.codegen(target);
    }
    let key = program_cache::key_for_il(&front.spirv, options, target);
    if let Some(entry) = key.as_ref().and_then(program_cache::lookup) {
        match compiler::load_native(entry.image, front, target) {
            Ok(native) => {
                program_cache::trace(|| format!("hit {}", key.map(|k| k.hex()).unwrap_or_default()));
                return Ok(native);
            }
            Err(e) => program_cache::trace(|| format!("entry does not load ({}): rebuilt", e.log)),
        }
    }
    let native = front.codegen(target)?;
    if let (Some(key), Some(image)) = (key, &native.image) {
        program_cache::store(&key, "", &[], image);
    }
    Ok(native)
}

/// Native code of a program loaded from a binary: the binary's own native code when it has
/// some for this device and driver (no LLVM code generation), otherwise generated from its
/// SPIR-V.
fn binary_codegen(
    front: &compiler::Program,
    prev: &DeviceBuild,
    target: &Target,
) -> Result<Arc<NativeProgram>, BuildError> {
    if let Some(image) = &prev.binary_image {
        if let Ok(native) = compiler::load_native((**image).clone(), front, target) {
            return Ok(native);
        }
    }
    front.codegen(target)
}

/// A device's outcome of a build that ends in native code.
struct Outcome {
    build: DeviceBuild,
    failure: Option<BuildErrorKind>,
}

fn executable(built: Built, options: &str, compile_options: &str, uniform: bool) -> Outcome {
    match built {
        Ok((front, native)) => Outcome {
            build: DeviceBuild {
                status: CL_BUILD_SUCCESS as cl_build_status,
                options: options.to_string(),
                log: format!("{}{}", front.log, native.log),
                binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
                front: Some(front),
                native: Some(native),
                compile_options: compile_options.to_string(),
                uniform_work_groups: uniform,
                ..DeviceBuild::default()
            },
            failure: None,
        },
        Err(e) => Outcome {
            build: DeviceBuild {
                status: CL_BUILD_ERROR,
                options: options.to_string(),
                log: e.log,
                ..DeviceBuild::default()
            },
            failure: Some(e.kind),
        },
    }
}

/// Links one device's compiled objects (`fronts` are their front-end results).
fn link_one(
    objects: &[DeviceBuild],
    fronts: &[Arc<compiler::Program>],
    target: &Target,
    options: &str,
    create_library: bool,
) -> Outcome {
    let inputs: Vec<&compiler::Program> = fronts.iter().map(Arc::as_ref).collect();
    // Every input's uniformity requirement holds for the linked program.
    let uniform = objects.iter().any(|o| o.uniform_work_groups);
    let compile_options = objects.first().map(|o| o.compile_options.clone()).unwrap_or_default();
    let linked = guarded(|| compiler::link(&inputs, create_library)).map(Arc::new);
    if create_library {
        return match linked {
            Ok(front) => Outcome {
                build: DeviceBuild {
                    status: CL_BUILD_SUCCESS as cl_build_status,
                    options: options.to_string(),
                    log: String::new(),
                    binary_type: CL_PROGRAM_BINARY_TYPE_LIBRARY,
                    front: Some(front),
                    native: None,
                    compile_options,
                    uniform_work_groups: uniform,
                    ..DeviceBuild::default()
                },
                failure: None,
            },
            Err(e) => executable(Err(e), options, &compile_options, uniform),
        };
    }
    let built: Built = linked.and_then(|front| Ok((front.clone(), guarded(|| front.codegen(target))?)));
    executable(built, options, &compile_options, uniform)
}

/// Input headers of clCompileProgram written to a private directory for `-I`.
struct HeaderDir {
    path: std::path::PathBuf,
}

impl HeaderDir {
    fn new(headers: &[(String, String)]) -> std::io::Result<Option<Self>> {
        if headers.is_empty() {
            return Ok(None);
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "softcl-headers-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let dir = Self { path };
        std::fs::create_dir_all(&dir.path)?;
        for (name, text) in headers {
            let relative = std::path::Path::new(name);
            // Include names are relative paths ("dir/name.h"); nothing may escape the directory.
            if relative.is_absolute() || relative.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad include name {name}")));
            }
            let file = dir.path.join(relative);
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(file, text)?;
        }
        Ok(Some(dir))
    }
}

impl Drop for HeaderDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

// ---------------------------------------------------------------------------------------------
// Binaries.

/// The first bytes of every SoftCL program binary.
pub const BINARY_MAGIC: &[u8; 8] = b"SOFTCLB\0";
/// The container's format version. Version 2 adds native code; version 1 containers (SPIR-V
/// only) are still read. Others are rejected.
pub const BINARY_VERSION: u32 = 2;
const HEADER_LEN_V1: usize = 8 + 5 * 4;
const HEADER_LEN: usize = 8 + 6 * 4;
const FLAG_UNIFORM: u32 = 1;

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The identity native code in a binary must match to be used: the driver's build and the
/// device's target on this host (`program_cache`).
fn native_identity(target: &Target) -> String {
    format!("{}\n{}", program_cache::driver_identity(), program_cache::target_identity(target))
}

/// A binary's native section for `image` built for `target`: the identity's length (u32 little
/// endian) and text, then the encoded image (`compiler::native_image`). `None` when the image
/// is not encoded.
fn native_block(image: &compiler::NativeImage, target: &Target) -> Option<Vec<u8>> {
    let encoded = compiler::native_image::encode(image)?;
    let id = native_identity(target);
    let mut out = Vec::with_capacity(4 + id.len() + encoded.len());
    out.extend_from_slice(&(id.len() as u32).to_le_bytes());
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(&encoded);
    Some(out)
}

/// The native image of a native section, if it was built by this driver for `target`;
/// otherwise why not (the build log's note).
fn native_image_for(block: &[u8], target: &Target) -> Result<compiler::NativeImage, String> {
    let stale = "the binary's native code was built by another SoftCL build or for another device; \
                 clBuildProgram rebuilds it from the binary's SPIR-V";
    let id_len = block.get(..4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
    let id = id_len.and_then(|n| block.get(4..4usize.checked_add(n)?)).ok_or(stale)?;
    if id != native_identity(target).as_bytes() {
        return Err(stale.into());
    }
    compiler::native_image::decode(&block[4 + id.len()..]).map_err(|e| format!("{stale} ({e})"))
}

/// The binary container (version 2): magic, format version, binary type, flags, options
/// length, SPIR-V word count, native section length (all u32 little endian), the options
/// (UTF-8), the SPIR-V words (little endian), the native section ([`native_block`]; empty for
/// compiled objects and libraries), and an FNV-1a 64 checksum of everything before it.
pub fn encode_binary(
    binary_type: cl_program_binary_type,
    options: &str,
    uniform: bool,
    spirv: &[u32],
    native: Option<&[u8]>,
) -> Vec<u8> {
    let native = native.unwrap_or_default();
    let mut out = Vec::with_capacity(HEADER_LEN + options.len() + spirv.len() * 4 + native.len() + 8);
    out.extend_from_slice(BINARY_MAGIC);
    for v in [
        BINARY_VERSION,
        binary_type,
        if uniform { FLAG_UNIFORM } else { 0 },
        options.len() as u32,
        spirv.len() as u32,
        native.len() as u32,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(options.as_bytes());
    for w in spirv {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(native);
    let sum = fnv1a(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The contents of a binary container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinaryContents {
    pub binary_type: cl_program_binary_type,
    pub options: String,
    pub uniform: bool,
    pub spirv: Vec<u32>,
    /// The native section (empty when there is none).
    pub native: Vec<u8>,
}

/// Parses a container (CL_INVALID_BINARY for anything else).
pub fn parse_binary(bytes: &[u8]) -> Result<BinaryContents, cl_int> {
    let u32_at = |at: usize| -> Result<u32, cl_int> {
        let b = bytes.get(at..at + 4).ok_or(CL_INVALID_BINARY)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4 bytes")))
    };
    if bytes.len() < HEADER_LEN_V1 + 8 || &bytes[..8] != BINARY_MAGIC {
        return Err(CL_INVALID_BINARY);
    }
    let header = match u32_at(8)? {
        1 => HEADER_LEN_V1,
        2 => HEADER_LEN,
        _ => return Err(CL_INVALID_BINARY),
    };
    let binary_type = u32_at(12)?;
    if !matches!(
        binary_type,
        CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT | CL_PROGRAM_BINARY_TYPE_LIBRARY | CL_PROGRAM_BINARY_TYPE_EXECUTABLE
    ) {
        return Err(CL_INVALID_BINARY);
    }
    let flags = u32_at(16)?;
    let options_len = u32_at(20)? as usize;
    let words = u32_at(24)? as usize;
    let native_len = if header == HEADER_LEN { u32_at(28)? as usize } else { 0 };
    let spirv_end = header.checked_add(options_len).and_then(|n| n.checked_add(words.checked_mul(4)?));
    let end = spirv_end.and_then(|e| e.checked_add(native_len));
    if end.and_then(|e| e.checked_add(8)) != Some(bytes.len()) {
        return Err(CL_INVALID_BINARY);
    }
    let (spirv_end, end) = (spirv_end.expect("checked"), end.expect("checked"));
    let sum = u64::from_le_bytes(bytes[end..].try_into().expect("8 bytes"));
    if sum != fnv1a(&bytes[..end]) {
        return Err(CL_INVALID_BINARY);
    }
    let options = std::str::from_utf8(&bytes[header..header + options_len]).map_err(|_| CL_INVALID_BINARY)?.to_string();
    let spirv = bytes[header + options_len..spirv_end]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    Ok(BinaryContents {
        binary_type,
        options,
        uniform: flags & FLAG_UNIFORM != 0,
        spirv,
        native: bytes[spirv_end..end].to_vec(),
    })
}

/// A device's state loaded from a binary (status CL_BUILD_NONE until it is built). Native code
/// in the binary is kept when it was built by this driver for `target`; otherwise the build log
/// says that clBuildProgram generates it again from the binary's SPIR-V.
fn decode_binary(bytes: &[u8], target: &Target) -> Result<DeviceBuild, cl_int> {
    let contents = parse_binary(bytes)?;
    let spirv: Vec<u8> = contents.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
    // "CL_INVALID_BINARY in binary_status[i] if program binary is not a valid binary for the
    // specified device." Compiled objects and libraries may import symbols.
    let front = if contents.binary_type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE {
        guarded(|| compiler::load_spirv(&spirv))
    } else {
        guarded(|| compiler::load_spirv_object(&spirv))
    }
    .map_err(|_| CL_INVALID_BINARY)?;
    let (binary_image, binary_note) =
        if contents.native.is_empty() || contents.binary_type != CL_PROGRAM_BINARY_TYPE_EXECUTABLE {
            (None, String::new())
        } else {
            match native_image_for(&contents.native, target) {
                Ok(image) => (Some(Arc::new(image)), String::new()),
                Err(note) => (None, format!("{note}\n")),
            }
        };
    Ok(DeviceBuild {
        status: CL_BUILD_NONE,
        options: String::new(),
        log: String::new(),
        binary_type: contents.binary_type,
        front: Some(Arc::new(front)),
        native: None,
        compile_options: contents.options,
        uniform_work_groups: contents.uniform,
        binary_image,
        binary_note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use compiler::front::link::SPIRV_MAGIC;

    #[test]
    fn binary_round_trip_and_rejections() {
        let spirv = vec![SPIRV_MAGIC, 0x0001_0000, 0, 10, 0];
        let bin = encode_binary(CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "-cl-std=CL2.0", false, &spirv, Some(b"native"));
        assert_eq!(&bin[..8], BINARY_MAGIC);
        let c = parse_binary(&bin).unwrap();
        assert_eq!(
            c,
            BinaryContents {
                binary_type: CL_PROGRAM_BINARY_TYPE_EXECUTABLE,
                options: "-cl-std=CL2.0".into(),
                uniform: false,
                spirv: spirv.clone(),
                native: b"native".to_vec(),
            }
        );
        // A version 1 container (no native section) is still read.
        let mut v1 = Vec::new();
        v1.extend_from_slice(BINARY_MAGIC);
        for v in [1, CL_PROGRAM_BINARY_TYPE_EXECUTABLE, FLAG_UNIFORM, 0, spirv.len() as u32] {
            v1.extend_from_slice(&v.to_le_bytes());
        }
        spirv.iter().for_each(|w| v1.extend_from_slice(&w.to_le_bytes()));
        let sum = fnv1a(&v1);
        v1.extend_from_slice(&sum.to_le_bytes());
        let c1 = parse_binary(&v1).unwrap();
        assert_eq!((c1.spirv, c1.native, c1.uniform), (spirv.clone(), Vec::new(), true));
        // Garbage, truncation, a flipped byte, another version.
        assert_eq!(parse_binary(b"garbage garbage garbage garbage garbage"), Err(CL_INVALID_BINARY));
        assert_eq!(parse_binary(&bin[..bin.len() - 1]), Err(CL_INVALID_BINARY));
        let mut flipped = bin.clone();
        flipped[HEADER_LEN + 3] ^= 1;
        assert_eq!(parse_binary(&flipped), Err(CL_INVALID_BINARY));
        let mut v3 = bin.clone();
        v3[8] = 3;
        assert_eq!(parse_binary(&v3), Err(CL_INVALID_BINARY));
        assert_eq!(parse_binary(&[]), Err(CL_INVALID_BINARY));
    }

    #[test]
    fn headers_are_written_and_removed() {
        let dir = HeaderDir::new(&[("a.h".into(), "#define A 1\n".into()), ("sub/b.h".into(), "int b;\n".into())])
            .unwrap()
            .unwrap();
        let path = dir.path.clone();
        assert_eq!(std::fs::read_to_string(path.join("sub/b.h")).unwrap(), "int b;\n");
        drop(dir);
        assert!(!path.exists());
        assert!(HeaderDir::new(&[("../x.h".into(), String::new())]).is_err());
        assert!(HeaderDir::new(&[]).unwrap().is_none());
    }
}
