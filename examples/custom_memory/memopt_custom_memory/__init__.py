"""A summary-buffer memory system for memopt, installed as a plug-in (see `summary_buffer`)."""

from memopt_custom_memory.summary_buffer import SummarizeSession, SummaryBuffer

__all__ = ["SummaryBuffer", "SummarizeSession"]
