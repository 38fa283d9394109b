//! The CPU device.
