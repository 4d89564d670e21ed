//! Devices, executables, streams and the caches (in memory, and on disk: `persistent`) (the buffers they move live below the backends, in
//! `crate::buffer`).
pub mod pending;
pub mod stream;
pub mod device;
pub mod executable;
pub mod cache;
pub mod persistent;
pub mod profiler;
pub mod ref_buffer;

pub use cache::{global as executable_cache, ExecutableCache};
pub use device::{devices, Device, DeviceKind};
pub use executable::Executable;
pub use pending::{Pending, Value};
pub use stream::Stream;
