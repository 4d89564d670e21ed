//! cse pass.
