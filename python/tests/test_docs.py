"""The examples in the package's docstrings run and print what they say (the README's
promise that each estimator and plot function has a working example)."""

import doctest
import importlib

import pytest

MODULES = ["kestrel", "kestrel._estimators", "kestrel._npkl", "kestrel._projection", "kestrel.online", "kestrel.plot"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name == "kestrel.plot":
        pytest.importorskip("matplotlib")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"
    assert result.attempted > 0, f"{name}: no example ran"
