"""The in-tree study families, each declared as a lab's own package would declare it: a :class:`config.registry.Family`
named by an entry point in the group ``hedgelab.families`` (pyproject.toml). The declarations name their
contributions by ``"module:attribute"`` references, where the code lives today (issue 34.1 moves it here)."""
