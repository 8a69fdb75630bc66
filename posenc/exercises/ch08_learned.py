r"""The checker of chapter 8's exercise: the backward pass of a learned position table.

:func:`check_learned_backward` checks ``fn(grad_output, max_len) -> (grad_X, grad_E)`` for
:math:`Y = X + E_{:L}` (``grad_E`` is the batch sum, zero beyond ``L``, as
:meth:`~posenc.learned.LearnedPositionalEncoding.backward`) and names the known mistakes:
the gradient of one batch element, the mean instead of the sum, only ``L`` rows,
``grad_X`` summed over the batch, a gradient accumulated across calls, ``grad_output``
modified in place.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._runner import (
    Case,
    ExerciseError,
    call_student,
    check_fn,
    describe_type,
    is_close,
    largest_difference,
    mistake_error,
    register_mistakes,
    result_array,
    result_problem,
    wrong_shape_error,
)

_LEARNED = register_mistakes(
    "check_learned_backward",
    first=(
        "gradient of only the first batch element",
        "row p of E is used by all B sequences, so its gradient is the sum over the batch, "
        "grad_output.sum(axis=0), not grad_output[0]. A test with B = 1 cannot see this.",
    ),
    last=(
        "gradient of only the last batch element",
        "the loop over the batch overwrites instead of adding: sum over the batch axis.",
    ),
    mean=(
        "mean instead of sum over the batch",
        "the loss already contains whatever averaging it wants; the chain rule sums the "
        "contributions of the B sequences, it does not average them.",
    ),
    rows=(
        "only L rows returned",
        "grad_E has the shape of the whole table, (max_len, d); the rows p >= L were not used and "
        "their gradient is zero.",
    ),
    grad_x_summed=(
        "grad_X summed over the batch",
        "only grad_E is summed over the batch; every sequence has its own X. Y = X + E[:L] so "
        "dL/dX = dL/dY: return grad_output itself (a copy), shape (B, L, d).",
    ),
    accumulated=(
        "gradient accumulated across calls",
        "the same grad_output gave a grad_E that grows by the same amount at every call; recompute "
        "grad_E from zeros in every call instead of adding to a stored array.",
    ),
    in_place=(
        "grad_output modified in place",
        "the upstream gradient belongs to the caller; build grad_E in a new array "
        "(np.zeros((max_len, d))) and return a copy of grad_output as grad_X.",
    ),
)


def check_learned_backward(fn: Callable) -> str:
    r"""Check ``fn(grad_output, max_len) -> (grad_X, grad_E)`` for :math:`Y = X + E_{:L}`.

    ``grad_output`` has shape ``(B, L, d)``; the reference is ``grad_X = grad_output`` and
    ``grad_E`` of shape ``(max_len, d)`` with rows ``:L`` the batch **sum** of
    ``grad_output`` and rows ``L:`` zero (as :meth:`~posenc.learned.LearnedPositionalEncoding.backward`),
    both float64 arrays, returned as a tuple. Inputs: ``B`` from 1 to 6, ``L`` up to
    ``max_len``. Each input is passed twice (three times if the results differ), to catch
    state kept between calls, and ``grad_output`` must not be modified.

    Recognised mistakes: gradient of the first (or last) batch element only, mean instead
    of sum over the batch, only ``L`` rows
    returned (rows ``L:`` missing), ``grad_X`` summed over the batch, gradient accumulated
    across calls, ``grad_output`` modified in place.
    """
    checker = "check_learned_backward"
    check_fn(checker, fn)
    rng = np.random.default_rng(8)
    specs = [
        (1, 5, 8, 3),
        (2, 5, 8, 3),
        (3, 4, 4, 2),
        (4, 7, 10, 5),
        (6, 3, 3, 1),
        (2, 1, 6, 4),
        (5, 16, 32, 8),
    ]
    specs += [
        (int(rng.integers(2, 6)), int(L), int(L + rng.integers(0, 5)), int(rng.integers(1, 7)))
        for L in rng.integers(1, 12, size=8)
    ]
    cases = []
    for B, L, max_len, d in specs:
        g = rng.normal(size=(B, L, d))
        grad_E = np.zeros((max_len, d))
        grad_E[:L] = g.sum(axis=0)
        cases.append(
            Case(
                (g, max_len),
                {},
                (g.copy(), grad_E),
                1e-12,
                f"grad_output of shape {(B, L, d)}, max_len={max_len}",
            )
        )

    label = "your backward"

    def call(case: Case) -> tuple[np.ndarray, np.ndarray]:
        g, max_len = case.args
        given = g.copy()
        out = call_student(fn, (given, max_len), {}, label, case.label)
        if not np.array_equal(given, g):
            raise mistake_error(label, _LEARNED, ("in_place",))
        if not (isinstance(out, tuple) and len(out) == 2):
            raise result_problem(
                f"{label} must return a tuple (grad_X, grad_E) of two numpy arrays, got "
                f"{describe_type(out)}\n  on input {case.label}",
                "not an array",
            )
        # copies: a function that returns its own accumulator would change the first result
        # while it is called again, hiding the accumulation this loop looks for
        return tuple(
            result_array(
                value, expected, label=label, what=what, where=case.label, kind="float", tol=case.tol
            ).copy()
            for value, expected, what in zip(out, case.expected, ("grad_X", "grad_E"), strict=True)
        )

    results = []
    for case in cases:
        first = call(case)
        second = call(case)
        if second[1].shape == first[1].shape and not is_close(second[1], first[1], 1e-12):
            third = call(case)
            step = second[1] - first[1]
            if third[1].shape == first[1].shape and is_close(third[1] - second[1], step, 1e-9):
                raise mistake_error(label, _LEARNED, ("accumulated",))
            raise result_problem(
                f"{label} returned a different grad_E when called again with the same grad_output "
                f"(largest change {float(np.max(np.abs(step))):.3g}); the gradient must depend on the "
                f"arguments only, not on random numbers or state kept between calls\n  on input {case.label}",
                "different results for the same input",
            )
        results.append(first)

    def all_close(index: int, target: Callable[[Case], np.ndarray]) -> bool:
        return all(is_close(r[index], target(c), 1e-12) for r, c in zip(results, cases, strict=True))

    if all_close(0, lambda c: c.expected[0]) and all_close(1, lambda c: c.expected[1]):
        return f"correct on {len(cases)} inputs"

    def padded(rows: Callable[[np.ndarray], np.ndarray]) -> Callable[[Case], np.ndarray]:
        def target(case: Case) -> np.ndarray:
            g, max_len = case.args
            out = np.zeros((max_len, g.shape[2]))
            out[: g.shape[1]] = rows(g)
            return out

        return target

    for key, rows in (
        ("first", lambda g: g[0]),
        ("last", lambda g: g[-1]),
        ("mean", lambda g: g.mean(axis=0)),
    ):
        if all_close(1, padded(rows)):
            raise mistake_error(label, _LEARNED, (key,))
    if all_close(1, lambda c: c.args[0].sum(axis=0)):
        raise mistake_error(label, _LEARNED, ("rows",))
    grad_e_right = all_close(1, lambda c: c.expected[1])
    if grad_e_right and all_close(0, lambda c: c.args[0].sum(axis=0)):
        raise mistake_error(label, _LEARNED, ("grad_x_summed",))
    shape_docs = (" = grad_output.shape", " = (max_len, d)")
    for r, c in zip(results, cases, strict=True):
        for index, what in enumerate(("grad_X", "grad_E")):
            if r[index].shape != c.expected[index].shape:
                raise wrong_shape_error(label, what, r[index], c.expected[index], shape_docs[index], c.label)
    index = 0 if grad_e_right else 1
    which = ("grad_X", "grad_E")[index]
    wrong = [
        i
        for i, (r, c) in enumerate(zip(results, cases, strict=True))
        if not is_close(r[index], c.expected[index], 1e-12)
    ]
    r, c = results[wrong[0]], cases[wrong[0]]
    note = (
        "grad_E is right on every input, grad_X is not: Y = X + E[:L] so dL/dX = dL/dY, i.e. grad_output.\n  "
        if grad_e_right
        else ""
    )
    raise ExerciseError(
        f"{label} is wrong (no known mistake matches): {which} is wrong on {len(wrong)} of {len(cases)} "
        f"inputs.\n  {note}First failing input: {c.label}\n  "
        f"{which}: {largest_difference(r[index], c.expected[index])}",
        mistake=None,
    )
