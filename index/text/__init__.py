"""What the project knows of languages and scripts, in one package: each language's `Profile`
(its analyzer, sentences, question words, script and direction), and what a text is made of
(`normalize`, `is_right_to_left`).

Ingest, search, answers and the Discord renderer ask a `Profile`, or the functions of this
face, and keep no table of languages or scripts of their own: one anywhere else would be a
second answer to the same question. Nothing outside the package imports its modules: only
this face (tests/test_layout.py looks for both).
"""

from __future__ import annotations

from index.text.analysis import ENGLISH, ENGLISH_STOPWORDS, Analyzer, analyze, analyzer, stem
from index.text.characters import BIDIRECTIONAL, KEPT_SPACES, normalize
from index.text.languages import (
    ENGLISH_QUESTION_WORDS,
    WIDELY_WRITTEN,
    article_language,
    identify,
    likelihoods,
    rank_among,
)
from index.text.profile import Profile, profile
from index.text.question_language import question_language, traditional_chinese
from index.text.scripts import UNSPACED, is_right_to_left, language_script, script_of
from index.text.word_forms import base_form

__all__ = [
    "BIDIRECTIONAL",
    "ENGLISH",
    "ENGLISH_QUESTION_WORDS",
    "ENGLISH_STOPWORDS",
    "KEPT_SPACES",
    "UNSPACED",
    "WIDELY_WRITTEN",
    "Analyzer",
    "Profile",
    "analyze",
    "analyzer",
    "article_language",
    "base_form",
    "identify",
    "likelihoods",
    "is_right_to_left",
    "language_script",
    "normalize",
    "profile",
    "question_language",
    "rank_among",
    "script_of",
    "stem",
    "traditional_chinese",
]
