//! Conformance helpers.
