//! Whole-function vectorization of work-items (CPU device): W consecutive work-items of
//! dimension 0 run as the lanes of one call of a vector work-item function.
//!
//! - [`width`]: the width W of a kernel (knobs, hints, host registers).

pub mod width;
