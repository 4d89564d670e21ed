//! Devices, buffers, executables, streams and the caches.
pub mod buffer;
pub mod pending;
pub mod stream;
pub mod device;
pub mod executable;
pub mod cache;

pub use buffer::Buffer;
pub use cache::{global as executable_cache, ExecutableCache};
pub use device::{devices, Device, DeviceKind};
pub use executable::Executable;
pub use pending::{Pending, Value};
pub use stream::Stream;
