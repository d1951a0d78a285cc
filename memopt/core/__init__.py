"""Plain utilities every stage of the loop may use: errors, text, files, threads, signals, progress, statistics.

What it may import: the standard library and small third-party libraries only, never another part of memopt
(a test checks it). Import the modules themselves (``from memopt.core.files import read_json``): this face
re-exports nothing, so ``import memopt`` stays cheap.

- `errors`: the exception hierarchy (`MemoptError` and its kinds) and `one_line`;
- `text`: plain NLP shared by metrics, the generator and SimLM (dates, stems, sentences, answer items);
- `files`: reading inputs with one clear error, atomic writes, safe names from data, locks;
- `parallel`: ordered maps over threads, each task in a copy of its caller's context;
- `interrupts`: Ctrl-C and SIGTERM end every command alike; steps that hold both signals;
- `progress`: the live progress line within a round;
- `stats`: paired tests, intervals and seed counts for the benches;
- `lazy`: names a package exports but loads on first use.
"""

__all__: list[str] = []
