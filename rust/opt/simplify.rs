//! simplify pass.
