"""A pytest plugin for nbval: a chapter's kernel that dies at start-up is started once more.

Loaded by `make test-notebooks` (``PYTHONPATH=scripts pytest -p nbval_retry ...``;
pytest-xdist passes the plugin to its workers). nbval starts one kernel per chapter and
gives up on the whole chapter if that kernel exits before its first reply ("Kernel died
before replying to kernel_info"). That happened once on a heavily loaded machine: `make
book` executing the chapters beside `make test`, with its kernels, nbval's and the student
check's starting side by side. A likely cause is the kernel's TCP ports: jupyter_client
picks five free ports and closes them before the kernel binds them, so another process can
take one in between and the new kernel exits at once. Nothing in the chapter has run yet,
so a second kernel, on other ports, is started once. A kernel that cannot start for any
other reason fails twice and is reported as before.
"""

from __future__ import annotations

import nbval.kernel

_start_new_kernel = nbval.kernel.start_new_kernel


def start_new_kernel_with_one_retry(*args, **kwargs):
    """``nbval.kernel.start_new_kernel``, started a second time if the first kernel dies at start-up."""
    try:
        return _start_new_kernel(*args, **kwargs)
    except RuntimeError:  # nbval has logged it and shut that kernel down
        return _start_new_kernel(*args, **kwargs)


nbval.kernel.start_new_kernel = start_new_kernel_with_one_retry
