"""The masking rule of secrets, at the path the modules of memopt import it from: this name is
`memopt.core.redaction` itself (one module, one set of remembered passwords). The rule lives in ``core`` so that
every file memopt writes (`memopt.core.files`) passes through it."""

import sys

from memopt.core import redaction

sys.modules[__name__] = redaction
