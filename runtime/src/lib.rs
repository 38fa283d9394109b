//! SoftCL runtime.
