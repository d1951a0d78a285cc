"""memopt: find why an LLM memory system answered wrong, and fix the prompt that caused it.

Importing memopt is cheap: heavy libraries (DSPy, MLflow, LiteLLM, Optuna) are imported by the
modules and commands that need them.
"""

import os

# LiteLLM fetches a remote model-cost map at import time unless told not to; with no network it
# retries for 20+ seconds. This must run before anything imports LiteLLM (DSPy does).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from memopt.core import moved  # noqa: E402
from memopt.core.errors import MemoptError  # noqa: E402

moved.install()  # the import paths of modules that moved into folders keep working, with a FutureWarning

__version__ = "0.1.0"
__all__ = ["MemoptError", "__version__"]
