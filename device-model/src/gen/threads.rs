//! The code a Gen launch runs: the kernel vectorized at the launch's SIMD width with its
//! counters in generated code (`softcl_compiler::gen_abi`), one call per hardware thread.
//!
//! A hardware thread is `simd` consecutive linear local ids. When a work-group's
//! `local_size[0]` is a multiple of the width, or the work-group is one row (`local_size[1]`
//! and `local_size[2]` are 1, so linear ids are row ids and the row's last thread is its
//! masked tail packet), a thread is one packet of one row (the row layout the CPU device uses
//! too); otherwise a thread spans rows and runs the *linear-lanes* variant, whose every id
//! dimension varies between lanes. When `local_size[0]` divides the width and a plane of the
//! work-group (`local_size[0] * local_size[1]`) fills whole threads, each thread is whole
//! rows of one plane, and the *rows* variant built for that `local_size[0]`
//! (`GenBuild::row_width`) runs it: its accesses are known row by row, so that a row's
//! elements are one vector access and their counts have closed forms (a 16 x 16 tiled
//! matrix product at SIMD32, a stencil in 8 x 8 work-groups). Each variant is
//! compiled at the first launch that needs it and cached with the program
//! (`NativeKernel::gen_variant`). A kernel that cannot run vectorized at the width (a
//! construct the vectorizer refuses) runs its scalar build per hardware thread, uncounted.

use crate::exec::GroupKernel;
use softcl_compiler::{GenBuild, KernelInfo, NativeKernel, NativeProgram, WorkGroupContext};
use std::sync::Arc;

/// The kernel of one Gen launch.
pub(crate) struct GenThreads {
    simd: u32,
    /// Every work-group is one row: the row variant serves any `local_size[0]`.
    one_row: bool,
    /// The merged description: a vectorized variant's (with its `gen` sites and blocks), the
    /// largest work-item state of the builds in use.
    info: KernelInfo,
    scalar: NativeKernel,
    row: Option<NativeKernel>,
    linear: Option<NativeKernel>,
    /// The rows variant and the `local_size[0]` it was built for.
    rows: Option<(u64, NativeKernel)>,
    /// The builds of the variants in use, for [`GenThreads::builds`].
    builds: Vec<GenBuild>,
    /// Keeps the variants' code alive.
    _programs: Vec<Arc<NativeProgram>>,
}

impl GenThreads {
    /// The kernel for a launch of `items` work-items at `simd` whose work-groups have these
    /// sizes along dimensions 0 and 1 (and are each `one_row`, or not); the second value
    /// says how it runs (for the launch report). `rows`: the rows variant may run
    /// work-groups it fits.
    pub(crate) fn new(
        kernel: &NativeKernel,
        items: u64,
        simd: u32,
        x_sizes: &[usize],
        y_sizes: &[usize],
        one_row: bool,
        rows: bool,
    ) -> (Self, String) {
        let scalar_only = |why: String| {
            let me = GenThreads {
                simd,
                one_row,
                info: kernel.info.clone(),
                scalar: kernel.clone(),
                row: None,
                linear: None,
                rows: None,
                builds: Vec::new(),
                _programs: Vec::new(),
            };
            (me, why)
        };
        let need_row = one_row || x_sizes.iter().any(|&x| x.is_multiple_of(simd as usize));
        // The rows variant, for the enqueued `local_size[0]` when it suits the width.
        let row_width = x_sizes
            .first()
            .copied()
            .filter(|&x| rows && !one_row && x >= 2 && x < simd as usize && (simd as usize).is_multiple_of(x));
        let fits_rows =
            |x: usize, y: usize| row_width.is_some_and(|wx| whole_rows(wx as u64, x as u64, y as u64, simd));
        let need_rows = row_width.is_some() && y_sizes.iter().any(|&y| fits_rows(x_sizes[0], y));
        let need_linear = !one_row
            && x_sizes
                .iter()
                .any(|&x| !(x.is_multiple_of(simd as usize) || need_rows && y_sizes.iter().all(|&y| fits_rows(x, y))));
        let mut programs = Vec::new();
        let mut builds = Vec::new();
        let mut get = |linear_lanes: bool, row_width: usize| -> Result<Option<NativeKernel>, String> {
            let build = GenBuild { simd, linear_lanes, row_width: row_width as u32 };
            match kernel.gen_variant(build, items) {
                None => Err("not a Gen build".into()),
                Some(Err(e)) => Err(e),
                Some(Ok((k, p))) => {
                    programs.push(p);
                    builds.push(build);
                    Ok(Some(k))
                }
            }
        };
        let row = if need_row { get(false, 0) } else { Ok(None) };
        let linear = if need_linear { get(true, 0) } else { Ok(None) };
        let rows = match row_width.filter(|_| need_rows) {
            Some(wx) => get(true, wx).map(|k| k.map(|k| (wx as u64, k))),
            None => Ok(None),
        };
        let (row, linear, rows) = match (row, linear, rows) {
            (Ok(r), Ok(l), Ok(w)) => (r, l, w),
            (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                let first = e.lines().find(|l| !l.trim().is_empty()).unwrap_or("").to_string();
                return scalar_only(format!("scalar, uncounted: {first}"));
            }
        };
        let Some(base) = row.as_ref().or(linear.as_ref()).or(rows.as_ref().map(|r| &r.1)) else {
            return scalar_only("scalar, uncounted: no work-items".into());
        };
        let mut info = base.info.clone();
        info.work_item_state_size = [
            Some(&kernel.info),
            row.as_ref().map(|k| &k.info),
            linear.as_ref().map(|k| &k.info),
            rows.as_ref().map(|r| &r.1.info),
        ]
        .into_iter()
        .flatten()
        .map(|i| i.work_item_state_size)
        .max()
        .unwrap_or(0);
        let how = match (&row, &linear, &rows) {
            (_, Some(_), Some(_)) => "vectorized, linear lanes, whole rows where they fit",
            (Some(_), Some(_), None) => "vectorized, rows and linear lanes",
            (None, Some(_), None) => "vectorized, linear lanes",
            (_, None, Some(_)) => "vectorized, linear lanes of whole rows",
            _ => "vectorized",
        };
        let me =
            GenThreads { simd, one_row, info, scalar: kernel.clone(), row, linear, rows, builds, _programs: programs };
        (me, how.into())
    }
}

impl GenThreads {
    /// The builds of the variants this launch runs (none when it runs the scalar build).
    pub(crate) fn builds(&self) -> Vec<GenBuild> {
        self.builds.clone()
    }
}

/// Whether a work-group of `x` x `y` (per plane) is whole rows of the rows variant built for
/// `wx` at `simd`: its rows are that wide and a plane fills whole hardware threads.
fn whole_rows(wx: u64, x: u64, y: u64, simd: u32) -> bool {
    x == wx && (x * y).is_multiple_of(u64::from(simd))
}

impl GroupKernel for GenThreads {
    fn info(&self) -> &KernelInfo {
        &self.info
    }
    fn run(&self, args: &[u8], ctx: &WorkGroupContext, first: u32, end: u32, resume_at: u32) -> u32 {
        let simd = u64::from(self.simd);
        let k = if self.one_row || ctx.local_size[0].is_multiple_of(simd) {
            self.row.as_ref()
        } else {
            match &self.rows {
                Some((wx, k)) if whole_rows(*wx, ctx.local_size[0], ctx.local_size[1], self.simd) => Some(k),
                _ => self.linear.as_ref(),
            }
        };
        // SAFETY: as for `NativeKernel`'s `GroupKernel::run` (exec.rs): the executor's block
        // and context, sized by `self.info`, whose work-item state is the largest of the
        // scalar build's and the variants' (see `new`); the variants are built from the same
        // source, so they take the same argument block.
        unsafe { k.unwrap_or(&self.scalar).run(args, ctx, first, end, resume_at) }
    }
    fn program_globals(&self) -> *mut u8 {
        // The variants' and the scalar build's are the program's one storage.
        self.scalar.program_globals()
    }
}
