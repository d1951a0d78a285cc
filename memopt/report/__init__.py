"""Diagnostic reports: the recurring failure mechanisms of a set of attributed failures, as a page and Markdown.

`load_diagnosis` (a trace or MemTraceBench directory with its ``attributions.jsonl``) or `diagnosis_of_cases` (an
optimize round) gives a `Diagnosis`; `build_report` turns it into the report's data; `report_files` into its
files (`write_report` writes them). Reports read attributions, graphs and prompts; they never run a system.
"""

from memopt.report.build import SCHEMA, build_report, case_link
from memopt.report.output import read_report, report_files, write_report
from memopt.report.sources import DiagnosedCase, Diagnosis, diagnosis_of_cases, load_diagnosis

__all__ = ["SCHEMA", "DiagnosedCase", "Diagnosis", "build_report", "case_link", "diagnosis_of_cases",
           "load_diagnosis", "read_report", "report_files", "write_report"]
