"""English words whose forms a stemmer cannot join: irregular verbs and plurals.

The Snowball stemmer joins "killed" with "kill" but leaves "said" apart from "say", "took" from
"take" and "women" from "woman", so "What did the mayor say?" shared no word with "the mayor
said". The keyword tokenizer (bm25_index.py) reads each word's base form here before stemming it:
news tuning half R@5 0.737 -> 0.744, questions about missing stories declined 0.765 -> 0.772;
SQuAD v1.1 pooled containment 0.809 -> 0.811 (`articlebot eval`, docs/quality.md).

Left out on purpose: forms that are also common words or names of their own ("bit", "fed",
"lent", "rose", "drew", "ground", "lives", "leaves", "bore", "bound", "wound", "lay", "the
Met", "LED", "Sat."), and
participles mostly read as adjectives ("a broken system" is not about breaking anything:
"broken", "frozen", "hidden", "given", "fallen", "mistaken", "forbidden", "torn", "worn").
"left" stays: in news it is far more often the verb than the side.
"""

from __future__ import annotations

__all__ = ["base_form"]

# Each entry: the base form, then its irregular forms; entries end with a comma.
_FORMS = """
arise arose arisen, become became, begin began begun, bite bitten, bleed bled, break broke,
bring brought, build built, buy bought, catch caught, choose chose chosen, cling clung,
come came, creep crept, deal dealt, dig dug, drive drove driven, eat ate eaten, fall fell,
feel felt, fight fought, find found, flee fled, fly flew flown, forbid forbade,
forget forgot forgotten, forgive forgave forgiven, freeze froze, get got gotten, give gave,
go went gone, grow grew grown, hang hung, hear heard, hide hid, hold held, keep kept,
know knew known, leave left, lose lost, make made, mean meant, mistake mistook,
overcome overcame, overtake overtook overtaken, pay paid, prove proven, ride rode ridden,
ring rang rung, rise risen, run ran, say said, see saw seen, seek sought, sell sold, send sent,
shake shook shaken, shoot shot, shrink shrank shrunk, sing sang sung, sink sank sunk,
sleep slept, speak spoke spoken, spend spent, stand stood, steal stole stolen, stick stuck,
strike struck, swear swore sworn, sweep swept, swim swam swum, take took taken, teach taught,
tear tore, tell told, think thought, throw threw thrown, undergo underwent undergone,
understand understood, undertake undertook undertaken, uphold upheld, wake woke woken,
wear wore, win won, withdraw withdrew withdrawn, withhold withheld, write wrote written,
child children, crisis crises, criterion criteria, foot feet, goose geese, half halves,
knife knives, man men, mouse mice, phenomenon phenomena, thief thieves, tooth teeth, wife wives,
wolf wolves, woman women
"""
_BASE = {form: entry.split()[0] for entry in _FORMS.split(",") for form in entry.split()[1:]}


def base_form(word: str) -> str:
    """The word's base form when it is an irregular one ("said" -> "say"), else the word."""
    return _BASE.get(word, word)
