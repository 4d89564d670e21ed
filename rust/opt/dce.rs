//! dce pass.
