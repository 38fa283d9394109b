//! Program-scope `__global` variables (`global int counter = 1;` at file scope).
//!
//! Their values belong to the program object on a device and last from its build to its
//! release: every kernel of the program, every launch and every build of a kernel (the Gen
//! device's SIMD variants, compiled later and shared between programs of the same source) sees
//! the same storage. The variables are therefore one block, laid out here: the program's
//! native code defines it as the initialised global [`STORAGE_SYMBOL`] (so that the JIT's
//! linker resolves initializers that hold addresses, `global int *p = &counter;`), the loaded
//! program records its address ([`crate::NativeKernel::program_globals`]), and compiled code
//! reaches a variable at its offset from `WorkGroupContext::program_globals`, which the
//! devices fill in at each launch.

use crate::ir::{self, GlobalVar};
use crate::kernel_info::AddressSpace;
use crate::passes::align::global_align;

/// The name of the storage block in a program's object code.
pub const STORAGE_SYMBOL: &str = "softcl_program_globals";

/// Whether `g` is a program-scope `__global` variable (kept in the program's storage).
pub fn is_program_global(g: &ir::GlobalVarData) -> bool {
    g.space == AddressSpace::Global && g.builtin.is_none()
}

/// Where each program-scope variable lies in the storage block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Each variable and its byte offset, in variable order.
    pub vars: Vec<(GlobalVar, u64)>,
    /// The block's size (CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE): each variable's OpenCL C
    /// size, with the padding their alignments need.
    pub size: u64,
    /// The block's alignment: the largest of its variables'.
    pub align: u64,
}

impl Layout {
    pub fn offset_of(&self, g: GlobalVar) -> Option<u64> {
        self.vars.iter().find(|(v, _)| *v == g).map(|(_, off)| *off)
    }
}

/// The storage layout of `m`'s program-scope variables (empty when it has none).
pub fn layout(m: &ir::Module) -> Layout {
    let mut layout = Layout { align: 1, ..Layout::default() };
    for (g, data) in m.globals.iter().filter(|(_, d)| is_program_global(d)) {
        let align = global_align(&m.types, data).max(1);
        let offset = layout.size.next_multiple_of(align);
        layout.vars.push((g, offset));
        layout.size = offset + m.types.size_of(data.ty);
        layout.align = layout.align.max(align);
    }
    layout
}
