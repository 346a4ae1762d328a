"""The core as a user meets it: add articles, ask, list, remove, rebuild."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from index import ArticleNotFound, BadInput, Library
from index.ingest.readers import read_path, read_text

PROMO_MARKERS = (
    "BLUE CITY POLICE",
    "DOJ MOVES",
    "WEALTHY BEACH",
    "EXCLUSIVE BEHIND",
    "FOX NEWS APP",
)

QUESTIONS = [
    "Which gang was targeted?",
    "How much was the judgment against the sheriff's office?",
    "Who announced the lawsuits?",
    "What did Hochul call the lawsuits?",
    "Who is the border czar?",
    "Where is the migrant processing hub?",
    "Which police sergeants are paid less than subordinates?",
    "What app can I get?",
]


@pytest.fixture
def sample_library(library: Library, sample_text: str) -> Library:
    library.collection().add_text(sample_text)
    return library


def test_sample_paragraphs_are_numbered_as_a_reader_counts_them(sample_text: str) -> None:
    doc = read_text(sample_text)
    assert doc.title.startswith("Border czar Tom Homan meets")
    assert len(doc.paragraphs) == 14
    assert doc.paragraphs[0].startswith("President Donald Trump’s border czar")
    assert doc.paragraphs[9].startswith("A state sanctuary law in New York")
    # Four cross-promotion headlines, the app advert and the credit are not the article.
    assert len(doc.skipped) == 6
    assert any("contributed to this report" in line for line in doc.skipped)


def test_promo_lines_are_never_cited(sample_library: Library) -> None:
    collection = sample_library.collection()
    for question in QUESTIONS:
        answer = collection.ask(question, top_k=10)
        for citation in answer.citations:
            assert not any(m in citation.text for m in PROMO_MARKERS), (question, citation.text)
            assert "contributed to this report" not in citation.text
        assert not any(m in answer.answer for m in PROMO_MARKERS)


def test_answer_cites_the_paragraph_it_quotes(sample_library: Library) -> None:
    answer = sample_library.collection().ask("Who announced the lawsuits?")
    assert not answer.abstained
    assert "Pam Bondi" in answer.answer
    assert "[1]" in answer.answer
    first = answer.citations[0]
    assert first.paragraph == 11
    assert first.quote in first.text
    assert first.url is None and first.link is None  # pasted text has no URL


def test_off_topic_questions_abstain_and_show_closest_passages(sample_library: Library) -> None:
    for question in ("What is the recipe for banana bread?", "Who won the 1998 World Cup?"):
        answer = sample_library.collection().ask(question)
        assert answer.abstained, question
        assert "could not find" in answer.answer.lower()
        assert answer.citations, "the closest passages are still shown"


def test_adding_the_same_text_twice_changes_nothing(
    sample_library: Library, sample_text: str
) -> None:
    collection = sample_library.collection()
    again = collection.add_text(sample_text)
    assert not again.added
    # Extra blank lines and spaces do not make it a different article.
    assert not collection.add_text(sample_text.replace("\n\n", "\n\n\n  ")).added
    assert len(collection.articles()) == 1
    stats = collection.stats()
    assert stats.passages == stats.indexed == 14


def test_removing_an_article_removes_its_passages_from_answers(sample_library: Library) -> None:
    collection = sample_library.collection()
    other = collection.add_text(
        "Harbour bridge repainted\n\nThe harbour bridge was repainted green in June by a crew "
        "of forty painters.\n\nThe work took six weeks and cost two million dollars."
    )
    sample_id = next(a.id for a in collection.articles() if a.id != other.article.id)
    assert collection.ask("Who announced the lawsuits?").citations[0].article_id == sample_id
    collection.remove(sample_id)
    answer = collection.ask("Who announced the lawsuits?")
    assert all(c.article_id == other.article.id for c in answer.citations)
    assert "Bondi" not in answer.answer
    assert collection.stats().passages == collection.stats().indexed == 2
    with pytest.raises(ArticleNotFound, match="articlebot list"):
        collection.remove(sample_id)


def test_rebuild_gives_the_same_answers(
    sample_library: Library, make_library: Callable[..., Library]
) -> None:
    collection = sample_library.collection()
    before = [collection.ask(q).to_json() for q in QUESTIONS[:4]]
    result = collection.rebuild()
    assert result.passages == 14
    assert [collection.ask(q).to_json() for q in QUESTIONS[:4]] == before
    # A fresh process (a new Library on the same folder) answers the same from the saved index.
    reopened = make_library(sample_library.data_dir)
    assert [reopened.collection().ask(q).to_json() for q in QUESTIONS[:4]] == before


def test_a_missing_index_file_is_rebuilt_from_storage(
    sample_library: Library, make_library: Callable[..., Library]
) -> None:
    collection = sample_library.collection()
    expected = collection.ask("Which judge awarded the damages?").to_json()
    collection.backend.index_file.path.unlink()
    reopened = make_library(sample_library.data_dir).collection()
    assert reopened.ask("Which judge awarded the damages?").to_json() == expected
    assert reopened.backend.index_file.path.exists()


def test_collections_never_mix(library: Library, sample_text: str) -> None:
    library.collection("guild-1").add_text(sample_text)
    other = library.collection("guild-2")
    answer = other.ask("Who announced the lawsuits?")
    assert answer.abstained and answer.citations == []
    assert other.articles() == []
    assert library.collection("guild-1").stats().articles == 1


def test_one_article_questions_stay_inside_it(library: Library, sample_text: str) -> None:
    collection = library.collection()
    sample = collection.add_text(sample_text).article
    bridge = collection.add_text(
        "Harbour bridge repainted\n\nThe harbour bridge was repainted green in June.\n\n"
        "Mayor Eric Adams opened the bridge again after the work."
    ).article
    answer = collection.ask("What did Mayor Adams open?", article_ids={bridge.id})
    assert {c.article_id for c in answer.citations} == {bridge.id}
    answer = collection.ask("What did Mayor Adams open?", article_ids={sample.id})
    assert {c.article_id for c in answer.citations} == {sample.id}


def test_long_paragraphs_are_split_but_keep_their_number(library: Library) -> None:
    sentence = "The committee reviewed the annual budget for the regional water authority. "
    long_paragraph = sentence * 60  # far over the model's 256 tokens
    text = f"Water budget\n\nA short opening paragraph.\n\n{long_paragraph}\n\nA closing line here."
    result = library.collection().add_text(text)
    assert result.article.paragraphs == 3
    assert result.article.passages > 3
    passages = library.store.passages("default", result.article.id)
    assert {p.paragraph for p in passages} == {1, 2, 3}
    assert max(p.paragraph for p in passages if p.piece > 0) == 2


@pytest.mark.parametrize(
    ("question", "message"),
    [("", "empty"), ("   \n ", "empty"), ("x" * 10_000, "keep it under")],
)
def test_bad_questions_get_a_clear_message(
    sample_library: Library, question: str, message: str
) -> None:
    with pytest.raises(BadInput, match=message):
        sample_library.collection().ask(question)


def test_bad_files_fail_cleanly_and_keep_what_is_stored(
    sample_library: Library, tmp_path: Path
) -> None:
    collection = sample_library.collection()
    empty = tmp_path / "empty.txt"
    empty.write_text("   \n\n")
    binary = tmp_path / "image.txt"
    binary.write_bytes(bytes(range(256)) * 40)
    fake_pdf = tmp_path / "fake.pdf"
    fake_pdf.write_bytes(b"this is not a pdf at all")
    for path, message in [
        (empty, "empty"),
        (binary, "binary"),
        (fake_pdf, "not a real PDF"),
        (tmp_path / "missing.txt", "No such file"),
        (tmp_path, "folder"),
    ]:
        with pytest.raises(BadInput, match=message):
            collection.add(read_path(path))
    assert len(collection.articles()) == 1
    assert "Pam Bondi" in collection.ask("Who announced the lawsuits?").answer
