//! `JitCache`: the thread-safe signature cache used by `jit`. Keys are hashable Python objects (hash and
//! equality are Python's). `get_or_insert_with` calls the builder exactly once per key even when many
//! threads race: the first caller builds (holding the GIL, as Python code must), the others wait with the
//! GIL released, then read the result; if the builder raises, its caller gets the exception, the key stays
//! absent and the waiters retry.
use std::sync::Arc;
use std::thread::ThreadId;

use parking_lot::{Condvar, Mutex};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Marks a key being built; waiters block on it.
#[pyclass(frozen, module = "cranax._core")]
struct InFlight {
    state: Arc<(Mutex<bool>, Condvar)>,
    owner: ThreadId,
}

impl InFlight {
    fn finish(&self) {
        let (m, cv) = &*self.state;
        *m.lock() = true;
        cv.notify_all();
    }
}

#[pyclass(frozen, name = "JitCache", module = "cranax._core")]
pub struct JitCache {
    done: Py<PyDict>,
    inflight: Py<PyDict>,
    /// A lock safe to take while holding the GIL: contenders wait with the GIL released, so the holder
    /// (which may run Python `__hash__`/`__eq__` and need the GIL) always makes progress.
    busy: Mutex<bool>,
    cv: Condvar,
}

struct Held<'a>(&'a JitCache);
impl Drop for Held<'_> {
    fn drop(&mut self) {
        *self.0.busy.lock() = false;
        self.0.cv.notify_one();
    }
}

enum Probe<'py> {
    Found(Bound<'py, PyAny>),
    Wait(Arc<(Mutex<bool>, Condvar)>),
    Mine(Bound<'py, InFlight>),
}

impl JitCache {
    fn acquire(&self, py: Python<'_>) -> Held<'_> {
        {
            let mut g = self.busy.lock();
            if !*g {
                *g = true;
                return Held(self);
            }
        }
        py.detach(|| {
            let mut g = self.busy.lock();
            while *g {
                self.cv.wait(&mut g);
            }
            *g = true;
        });
        Held(self)
    }
}

#[pymethods]
impl JitCache {
    #[new]
    fn new(py: Python<'_>) -> JitCache {
        JitCache {
            done: PyDict::new(py).unbind(),
            inflight: PyDict::new(py).unbind(),
            busy: Mutex::new(false),
            cv: Condvar::new(),
        }
    }

    /// The cached value for `key`, or None.
    fn get<'py>(&self, py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.done.bind(py).get_item(key)
    }

    /// The cached value for `key`; on a miss calls `fn()` once (even under races) and caches its result.
    #[pyo3(signature = (key, fn_))]
    fn get_or_insert_with<'py>(
        &self,
        py: Python<'py>,
        key: &Bound<'py, PyAny>,
        fn_: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let done = self.done.bind(py);
        if let Some(v) = done.get_item(key)? {
            return Ok(v);
        }
        let inflight = self.inflight.bind(py);
        let me = std::thread::current().id();
        let marker = loop {
            let probe = {
                let _held = self.acquire(py);
                if let Some(v) = done.get_item(key)? {
                    Probe::Found(v)
                } else if let Some(m) = inflight.get_item(key)? {
                    let m = m.cast_into::<InFlight>()?;
                    if m.get().owner == me {
                        return Err(PyRuntimeError::new_err(
                            "JitCache.get_or_insert_with: the builder for this key re-entered itself",
                        ));
                    }
                    Probe::Wait(m.get().state.clone())
                } else {
                    let m = Bound::new(
                        py,
                        InFlight { state: Arc::new((Mutex::new(false), Condvar::new())), owner: me },
                    )?;
                    inflight.set_item(key, &m)?;
                    Probe::Mine(m)
                }
            };
            match probe {
                Probe::Found(v) => return Ok(v),
                Probe::Wait(st) => {
                    py.detach(|| {
                        let (m, cv) = &*st;
                        let mut g = m.lock();
                        while !*g {
                            cv.wait(&mut g);
                        }
                    });
                }
                Probe::Mine(m) => break m,
            }
        };
        let res = fn_.call0();
        let (stored, removed) = {
            let _held = self.acquire(py);
            let stored = match &res {
                Ok(v) => done.set_item(key, v),
                Err(_) => Ok(()),
            };
            (stored, inflight.del_item(key))
        };
        marker.get().finish();
        let v = res?;
        stored?;
        removed?;
        Ok(v)
    }

    /// Stores `value` under `key` (replacing any).
    fn insert(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let _held = self.acquire(py);
        self.done.bind(py).set_item(key, value)
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.done.bind(py).contains(key)
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.done.bind(py).len()
    }

    fn clear(&self, py: Python<'_>) {
        let _held = self.acquire(py);
        self.done.bind(py).clear();
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("JitCache({} entries)", self.done.bind(py).len())
    }
}
