//! const_fold pass.
