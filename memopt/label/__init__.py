"""The labelling page (`memopt label DIR`): a reviewer walks the attributed failures of a directory one by one and
accepts, corrects or flags each; labels are MemTraceBench annotations in ``DIR/labels.jsonl``
(`memopt.attribution.labels`). The page reads attributions and graphs; it never runs a system.
"""

from memopt.label.app import label_app, serve
from memopt.label.review import ReviewItem, ReviewSet, describe

__all__ = ["ReviewItem", "ReviewSet", "describe", "label_app", "serve"]
