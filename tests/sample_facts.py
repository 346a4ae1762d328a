"""The sample article's facts (../shared/samples): questions and the words that answer them,
shared by the answer-quality tests and the backend tests."""

SAMPLE_FACTS = [
    # "Which gang was targeted?" alone (two keywords, one of them in the article's words) finds
    # first a paragraph on gang members in general, not the one that names the gang.
    ("Which gang are federal authorities cracking down on?", "Tren de Aragua"),
    ("How much was the judgment against the Suffolk County Sheriff's Office?", "$60 million"),
    ("Who announced the lawsuits?", "Pam Bondi"),
    ("Where might ICE reopen an office?", "Rikers Island"),
    ("What did Hochul call the lawsuits?", "publicity stunt"),
    ("Which judge awarded the damages?", "William Kuntz"),
    ("What did Adams call broken?", "immigration system"),
]
# Typed in a hurry: each was declined before misspelt words were corrected (spelling.py).
MISSPELT_FACTS = [
    ("who anounced the lawsuts", "Pam Bondi"),
    ("what did adams call brokn?", "broken system"),
]
