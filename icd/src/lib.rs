//! SoftCL ICD.
