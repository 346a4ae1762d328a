"""What the project knows of languages and scripts, in one package: each language's `Profile`
(its analyzer, sentences, question words, script and direction), and what a text is made of
(`normalize`, `is_right_to_left`).

Ingest, search, answers and the Discord renderer ask a `Profile`, or the few functions of this
face, and keep no table of languages or scripts of their own: one anywhere else would be a
second answer to the same question (tests/test_layout.py looks for one).
"""

from __future__ import annotations

from index.text.analysis import Analyzer
from index.text.characters import normalize
from index.text.profile import Profile, profile
from index.text.scripts import is_right_to_left

__all__ = ["Analyzer", "Profile", "is_right_to_left", "normalize", "profile"]
