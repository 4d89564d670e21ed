//! Devices, buffers, executables, streams and the caches.
pub mod buffer;
