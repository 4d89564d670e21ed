"""``python -m cranax.run SCRIPT [ARGS...]`` / ``python -m cranax.run -m MODULE [ARGS...]``: runs an unmodified
JAX program on cranax. ``cranax.install_as_jax()`` runs first, so every ``import jax...`` in the program and
the libraries it uses resolves to cranax; then the script (or module) runs as ``__main__`` with ``sys.argv`` as
Python would set it.
"""
import os
import runpy
import sys

from ._alias import install_as_jax

_USAGE = "usage: python -m cranax.run SCRIPT [ARGS...]  |  python -m cranax.run -m MODULE [ARGS...]"


def main(argv=None):
    """Runs the program named by ``argv`` (default ``sys.argv[1:]``) under the alias; returns the exit code
    (2 with a usage line for a missing program). Exceptions of the program propagate as under ``python``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    install_as_jax()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = argv[0]
    if not os.path.exists(script):
        print(f"cranax.run: can't open file {script!r}: No such file or directory", file=sys.stderr)
        return 2
    sys.argv = argv
    # As ``python SCRIPT``: the script's folder comes first on sys.path (in place of this runner's).
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    # by its absolute path, as ``python SCRIPT`` sets ``__file__`` and the code's file name (tracebacks and
    # the source positions of print_saved_residuals show it)
    runpy.run_path(os.path.abspath(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
