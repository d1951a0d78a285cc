"""The four memory systems memopt ships, written as DSPy modules, one file each.

Each registers itself with `memopt.systems.memory_system` and is declared as an entry point of the
``memopt.memory_systems`` group in memopt's ``pyproject.toml``, exactly as a plug-in would be; build
one with ``memopt.systems.make_system(name)``.
"""

__all__: list[str] = []
