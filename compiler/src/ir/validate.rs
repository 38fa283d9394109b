//! The IR validator: checks the structural invariants every pass must keep.
//! (Filled in by the front-end work; see `validate`.)

use super::Module;

/// A validation failure, naming the function and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub function: String,
    pub message: String,
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IR validation failed in {}: {}", self.function, self.message)
    }
}

/// Checks `module`; returns every problem found.
pub fn validate(module: &Module) -> Result<(), Vec<ValidationError>> {
    let _ = module;
    Ok(())
}
