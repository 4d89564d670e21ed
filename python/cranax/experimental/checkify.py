"""``cranax.experimental.checkify``: JAX's ``jax.experimental.checkify`` namespace, its public names only
(``dir`` shows what JAX's does). The implementation, with the exception classes (``FailedCheckError``,
``NaNError``, ``OOBError``, ``DivisionByZeroError``, ``BatchedError``, ``JaxException``) that JAX keeps in
``jax._src.checkify``, is :mod:`cranax.experimental._checkify`."""
from ._checkify import (Error, ErrorCategory, JaxRuntimeError, all_checks, automatic_checks, check,  # noqa: F401
                        check_error, checkify, debug_check, div_checks, float_checks, index_checks, init_error,
                        nan_checks, user_checks)
