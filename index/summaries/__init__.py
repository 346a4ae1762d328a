"""What an article is about: its summary, a few of its own sentences chosen when it is added
(choose.py, under the rules in summary-rules.json), and whether a question asks for one
(overview.py)."""

from __future__ import annotations

from index.summaries.choose import ArticleText, one_line, render, summarize
from index.summaries.overview import OverviewReader
from index.summaries.rules import RULES, SummaryRules

__all__ = [
    "RULES",
    "ArticleText",
    "OverviewReader",
    "SummaryRules",
    "one_line",
    "render",
    "summarize",
]
