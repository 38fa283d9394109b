//! The SoftCL compiler: OpenCL C -> SPIR-V (clang-15 | llvm-spirv-15) -> SoftCL IR (rspirv)
//! -> passes -> LLVM 22 (inkwell) -> native code for the host.
//!
//! It knows nothing of the OpenCL runtime or the C ABI. Entry points:
//! - [`compile_source_with`]: OpenCL C source + parsed build options ([`BuildOptions`]) ->
//!   [`Program`] (SPIR-V, IR, kernels); [`compile_source`] parses an options string first.
//! - [`load_spirv`]: SPIR-V binary (clCreateProgramWithIL) -> [`Program`].
//! - [`compile_object`], [`load_spirv_object`], [`link`]: separate compilation and linking.
//! - [`Program::codegen`]: a built program -> [`NativeProgram`] of callable kernels.

pub mod abi;
pub mod analysis;
pub mod back;
pub mod front;
pub mod gen_abi;
pub mod image;
pub mod ir;
pub mod kernel_info;
pub mod native_image;
pub mod passes;
pub mod printf;
pub mod program_globals;
pub mod vectorize;

pub use abi::{WorkGroupContext, WorkGroupEntry, FINISHED};
pub use front::{BuildOptions, LinkOptions};
pub use kernel_info::{AccessQualifier, AddressSpace, ArgKind, KernelArg, KernelInfo, TypeQualifiers};

use std::sync::Arc;

/// What the code is generated for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// LLVM CPU name ("skylake-avx512"); `None` = the host's.
    pub cpu: Option<String>,
    /// LLVM feature string ("+avx2,+fma"); `None` = the host's.
    pub features: Option<String>,
    /// Optional OpenCL C features the device does not have, as clang `-cl-ext` names
    /// ("cl_khr_fp64", "__opencl_c_fp64", "__opencl_c_images", ...): using them is a build
    /// error.
    pub disabled_features: Vec<String>,
    /// The OpenCL C versions `-cl-std` may name, as "CL1.2", "CL3.0" ...: the device's
    /// CL_DEVICE_OPENCL_C_ALL_VERSIONS. "Calls to clBuildProgram ... with the -cl-std=CLx.y
    /// option will fail to compile the program for any devices [whose]
    /// CL_DEVICE_OPENCL_C_ALL_VERSIONS does not include OpenCL C x.y."
    pub cl_std_versions: Vec<String>,
    /// The device's OpenCL version as `__OPENCL_VERSION__` gives it (300 for OpenCL 3.0).
    pub opencl_version: u32,
    /// Whether and at which width work-items are packed into SIMD lanes (the CPU device's
    /// `CL_CONFIG_USE_VECTORIZER` / `CL_CONFIG_CPU_VECTORIZER_MODE`); `Off` runs one
    /// work-item per call.
    pub vectorizer: Vectorizer,
    /// Build with line tables (clang's `-gline-tables-only`): every IR instruction gets its
    /// source line (`ir::Function::inst_locs`) for the Gen model's per-line report. Off by
    /// default: llvm-spirv-15 then gives loops with debug locations dedicated forwarding
    /// blocks, so the IR, not only its locations, differs (compiler/tests/source_lines.rs).
    pub line_tables: bool,
    /// The Gen device's builds (`None` elsewhere): see [`GenBuild`].
    pub gen: Option<GenBuild>,
    /// The largest work-group the device runs (CL_DEVICE_MAX_WORK_GROUP_SIZE): the
    /// work-group collectives' `__local` array has a word per work-item
    /// (`passes::collectives`).
    pub max_work_group_size: u64,
    /// The code-generation knobs of the environment: see [`CodegenKnobs`].
    pub knobs: CodegenKnobs,
}

/// Code-generation choices a user may change through the environment (README's table of
/// variables). The compiler reads no variable for them: a device reads them once, when it
/// builds its target (device-model's `target_for`), so that everything a build depends on is
/// in the [`Target`] (which the kernel cache keys by). The defaults are those of unset
/// variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CodegenKnobs {
    /// Vector code prefetches the streams of its consecutive loads
    /// (`vectorize::prefetch`); `SOFTCL_PREFETCH=0` turns it off.
    pub prefetch: bool,
    /// The bytes a store writes over the ND-range from which it streams past the caches
    /// (non-temporal stores, `back::vector`; `None`: never): [`back::vector::STREAMING_BYTES`];
    /// `SOFTCL_STREAMING_STORES=0` is `None`, `all` is 0 (every full aligned packet, for tests).
    pub streaming_stores: Option<u64>,
    /// Math built-ins on vectors call SLEEF's vector functions (`back::vecmath`);
    /// `SOFTCL_VECMATH=0` calls libm once per lane instead (for comparisons).
    pub vector_math: bool,
}

impl Default for CodegenKnobs {
    fn default() -> Self {
        Self { prefetch: true, streaming_stores: Some(back::vector::STREAMING_BYTES), vector_math: true }
    }
}

/// A build for the modelled Gen GPU. With `simd` = 0 (the device's program build) kernels are
/// compiled scalar and keep what a Gen-instrumented build needs ([`NativeKernel::gen_variant`]
/// compiles one lazily, at the first launch that needs its width). With `simd` = 8, 16 or 32
/// the kernel is vectorized at exactly that width, one call of the work-group entry per
/// hardware thread, and counts its messages and blocks in generated code
/// ([`crate::gen_abi`], `passes/gen_instrument.rs`, `back/gen/`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct GenBuild {
    pub simd: u32,
    /// Lanes are consecutive *linear* local ids (a work-group whose `local_size[0]` is not a
    /// multiple of `simd`: a hardware thread spans rows): every id dimension varies between
    /// lanes, so accesses become gathers with every lane's address at hand. Otherwise lanes
    /// are consecutive ids of dimension 0 in one row, as on the CPU device.
    pub linear_lanes: bool,
    /// With `linear_lanes`, not 0: built for work-groups whose `local_size[0]` is this width,
    /// which divides `simd`, and whose planes (`local_size[0] * local_size[1]`) fill whole
    /// hardware threads, so that each thread is whole rows of one plane: the lanes' addresses
    /// are then known row by row (`vectorize::analysis::Shape::Rows`), so that a row's
    /// elements are one vector access and their lines and banks have closed forms.
    pub row_width: u32,
}

/// How the code generator packs work-items of dimension 0 into SIMD lanes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Vectorizer {
    /// One work-item per call of the work-item function (the Gen device; the knobs off).
    #[default]
    Off,
    /// The width follows from the host's vector registers (`register_bytes`, e.g. 64 for
    /// AVX-512) and the kernel's widest data type, `vec_type_hint` and
    /// `intel_reqd_sub_group_size`.
    Auto { register_bytes: u32 },
    /// `CL_CONFIG_CPU_VECTORIZER_MODE=4|8|16`: this width, also where it is wider than the
    /// registers (a packet's value then takes two or four of them, as in the Gen device's
    /// SIMD32 build).
    Forced { width: u32, register_bytes: u32 },
    /// A knob value that is not understood: every build fails with this log line.
    Invalid(String),
}

impl Target {
    /// Whether the target offers optional feature or extension `name` (the compiler turns
    /// off what it does not: [`Target::disabled_features`]).
    pub fn offers(&self, name: &str) -> bool {
        !self.disabled_features.iter().any(|f| f.trim().trim_start_matches(['+', '-']) == name)
    }
}

impl Default for Target {
    fn default() -> Self {
        Self {
            cpu: None,
            features: None,
            disabled_features: Vec::new(),
            cl_std_versions: ["CL1.0", "CL1.1", "CL1.2", "CL2.0", "CL3.0"].map(String::from).to_vec(),
            opencl_version: 300,
            vectorizer: Vectorizer::Off,
            line_tables: false,
            gen: None,
            max_work_group_size: 4096,
            knobs: CodegenKnobs::default(),
        }
    }
}

/// A failed build: the log the application reads through CL_PROGRAM_BUILD_LOG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildError {
    pub kind: BuildErrorKind,
    pub log: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildErrorKind {
    /// The options string is malformed (CL_INVALID_BUILD_OPTIONS).
    InvalidOptions,
    /// The source or IL does not compile (CL_BUILD_PROGRAM_FAILURE).
    CompileFailed,
    /// The IL is not valid SPIR-V for OpenCL (CL_INVALID_VALUE from clCreateProgramWithIL).
    InvalidIl,
    /// The toolchain could not be run (CL_COMPILER_NOT_AVAILABLE).
    CompilerNotAvailable,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.log)
    }
}

/// A program built to SPIR-V and translated into SoftCL IR.
#[derive(Debug, Clone)]
pub struct Program {
    /// The SPIR-V module (kept for clGetProgramInfo(CL_PROGRAM_IL) and binaries).
    pub spirv: Vec<u32>,
    pub module: ir::Module,
    /// Warnings and notes of a successful build.
    pub log: String,
    /// Symbols the module imports and nobody defined yet (a compiled object or library that
    /// still needs linking). While any remain, `module` is empty and there is no code.
    pub unresolved: Vec<String>,
    /// The OpenCL C sources the module was compiled from, in order: one for a program built
    /// from source, each input's for a linked one, none for IL (the report's source texts).
    pub sources: Vec<std::sync::Arc<str>>,
}

impl Program {
    pub fn kernels(&self) -> impl Iterator<Item = &KernelInfo> {
        self.module.kernels.iter().map(|k| &k.info)
    }
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.module.kernel(name).map(|k| &k.info)
    }
    /// The bytes of its program-scope `__global` variables on a device
    /// (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE).
    pub fn global_variable_total_size(&self) -> u64 {
        program_globals::layout(&self.module).size
    }
    /// Runs the passes and generates native code for every kernel.
    pub fn codegen(&self, target: &Target) -> Result<Arc<NativeProgram>, BuildError> {
        if !self.unresolved.is_empty() {
            return Err(front::undefined_symbols(&self.unresolved));
        }
        back::codegen(&self.module, target)
    }
    /// The optimised LLVM IR of the module as `codegen` would compile it.
    pub fn optimized_llvm_ir(&self, target: &Target) -> Result<String, BuildError> {
        if !self.unresolved.is_empty() {
            return Err(front::undefined_symbols(&self.unresolved));
        }
        back::optimized_llvm_ir(&self.module, target)
    }
}

/// OpenCL C source -> Program, with the application's build options (-D, -I, -cl-std ...),
/// parsed by the caller once ([`BuildOptions::parse`]: the runtime parses the string of
/// clBuildProgram where it receives it).
pub fn compile_source_with(source: &str, options: &BuildOptions, target: &Target) -> Result<Program, BuildError> {
    front::compile_source(source, options, target)
}

/// [`compile_source_with`] of an options string (tests and tools): an invalid string is a
/// [`BuildErrorKind::InvalidOptions`] error.
pub fn compile_source(source: &str, options: &str, target: &Target) -> Result<Program, BuildError> {
    front::compile_source(source, &BuildOptions::parse(options)?, target)
}

/// A SPIR-V binary (bytes, little or big endian) -> Program.
pub fn load_spirv(bytes: &[u8]) -> Result<Program, BuildError> {
    front::load_spirv(bytes)
}

/// The program [`compile_source`] made of `source`, from the SPIR-V and log that build
/// produced (a cache hit: the toolchain does not run; the SPIR-V is translated again).
pub fn source_program_from_spirv(spirv: Vec<u32>, log: String, source: &str) -> Result<Program, BuildError> {
    front::source_program_from_spirv(spirv, log, source)
}

/// Native code loaded from `image` (made by [`Program::codegen`] for `target`, in this process
/// or another) for `program`, without LLVM's optimiser and code generator.
pub fn load_native(image: NativeImage, program: &Program, target: &Target) -> Result<Arc<NativeProgram>, BuildError> {
    back::load(image, &program.module, target)
}

/// OpenCL C source -> a compiled object (clCompileProgram): `extern` functions and variables
/// may stay undefined until [`link`].
pub fn compile_object(source: &str, options: &BuildOptions, target: &Target) -> Result<Program, BuildError> {
    front::compile_object(source, options, target)
}

/// SPIR-V -> a compiled object or library: imports may stay unresolved until [`link`].
pub fn load_spirv_object(bytes: &[u8]) -> Result<Program, BuildError> {
    front::load_spirv_object(bytes)
}

/// Links compiled objects and libraries (clLinkProgram) into a library (`create_library`)
/// or a program whose imports are all resolved; errors name the symbol.
pub fn link(inputs: &[&Program], create_library: bool) -> Result<Program, BuildError> {
    front::link(inputs, create_library)
}

/// What native code is made of, enough to load it again without LLVM's code generation: the
/// object file (position independent of the compiling process: `back/host.rs`), the host
/// functions it calls by name, each kernel's compiled metadata (work-item state size, SIMD
/// width, printf use, ...) and the code generator's build-log notes. Serialized by
/// [`native_image`] for the kernel cache and program binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NativeImage {
    pub object: Vec<u8>,
    pub host_symbols: Vec<String>,
    pub kernels: Vec<KernelInfo>,
    pub log: String,
}

/// Native code for the kernels of a program; kernels stay valid while this lives.
pub struct NativeProgram {
    pub kernels: Vec<NativeKernel>,
    /// Notes of the code generator for the build log (the vectorizer report when
    /// `SOFTCL_VECTORIZER_REPORT=1`), one per line; empty otherwise.
    pub log: String,
    /// What the code was loaded from (kept for the kernel cache and program binaries).
    pub image: Option<NativeImage>,
    /// Keeps the JIT (and the memory holding the code) alive.
    pub(crate) _code: Box<dyn std::any::Any + Send + Sync>,
}

impl std::fmt::Debug for NativeProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeProgram").field("kernels", &self.kernels).finish()
    }
}

impl NativeProgram {
    pub fn kernel(&self, name: &str) -> Option<&NativeKernel> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
}

/// One compiled kernel: its metadata (with barrier count and state size filled in) and entry.
#[derive(Debug, Clone)]
pub struct NativeKernel {
    pub info: KernelInfo,
    pub(crate) entry: WorkGroupEntry,
    /// A Gen device's program build: what [`NativeKernel::gen_variant`] compiles from.
    pub(crate) gen_source: Option<Arc<back::gen::GenSource>>,
    /// The address of the program's program-scope variables on this device (0 when it has
    /// none): the storage of the build the program loaded, which its Gen variants share.
    pub(crate) program_globals: usize,
}

impl NativeKernel {
    /// Runs work-items `first..end` of the work-group `ctx` from `resume_at`; see [`abi`]
    /// (which says when the caller must fence the kernel's non-temporal stores).
    ///
    /// # Safety
    /// This jumps into the kernel's native code. `args` must be an argument block laid out
    /// as `self.info.args` says, whose pointers are valid for every access the kernel makes,
    /// and `ctx` must point at local memory and work-item state of the sizes `self.info`
    /// gives.
    pub unsafe fn run(&self, args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32 {
        assert!(args.len() >= self.info.arg_block_size, "argument block too small");
        // The entry declares its argument block `align 8` (abi::ARGS_ALIGN); a block that is
        // not aligned runs from an aligned copy.
        let copy: Vec<u64>;
        let block = if (args.as_ptr() as usize).is_multiple_of(abi::ARGS_ALIGN) {
            args.as_ptr()
        } else {
            copy = args
                .chunks(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    u64::from_ne_bytes(b)
                })
                .collect();
            copy.as_ptr().cast::<u8>()
        };
        // SAFETY: `entry` was produced by the code generator for exactly this signature and
        // the code it points at is kept alive by the `NativeProgram` owning this kernel. The
        // argument block (`block`: `args` or its aligned copy, alive until the call returns)
        // and context satisfy the layout contract stated above (the caller's promise).
        unsafe { (self.entry)(block, ctx, first, end, resume_at) }
    }

    /// The Gen-instrumented build of this kernel at `build.simd` (8, 16 or 32) for a launch
    /// of `items` work-items, compiled at the first call for that width and lane layout and
    /// cached with the program, in two tiers: quick to compile first, the default level once
    /// the kernel's runs ([`NativeKernel::gen_ran`]) have taken a quarter of that compile (a
    /// launch of `back::gen::QUICK_VARIANT_MAX_ITEMS` or more gets the default level at
    /// once). `None` when this kernel does not come from a Gen device's build. `Err` is the
    /// reason the kernel cannot run vectorized at that width (the device then runs this
    /// scalar build, uncounted). The returned kernel stays callable while the returned
    /// program lives.
    pub fn gen_variant(
        &self,
        build: GenBuild,
        items: u64,
    ) -> Option<Result<(NativeKernel, Arc<NativeProgram>), String>> {
        let variant = self.gen_source.as_ref().map(|s| s.variant(&self.info.name, build, items))?;
        // The variant may be another program's (built from the same source): the storage is
        // this program's.
        Some(variant.map(|(k, p)| (NativeKernel { program_globals: self.program_globals, ..k }, p)))
    }

    /// What `WorkGroupContext::program_globals` must hold for this kernel: its program's
    /// storage of program-scope variables, or null.
    pub fn program_globals(&self) -> *mut u8 {
        std::ptr::with_exposed_provenance_mut(self.program_globals)
    }

    /// Tells this kernel's Gen build that a launch ran `build`'s variant for `host_time`
    /// (what decides when its quick tier is compiled again at the default level).
    pub fn gen_ran(&self, build: GenBuild, host_time: std::time::Duration) {
        if let Some(s) = &self.gen_source {
            s.ran(&self.info.name, build, host_time);
        }
    }
}
