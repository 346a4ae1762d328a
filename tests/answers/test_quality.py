"""Answer quality: the right paragraph, the right sentence, and no answer when there is none.

Everything runs through the real add and ask paths with the real model. The SQuAD floors sit
well below what these articles measure (noted beside each), so they catch a regression, not
noise; the full figures come from `articlebot eval` (see the README).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from exports import ALL_EMBEDDINGS
from sample_facts import MISSPELT_FACTS, SAMPLE_FACTS

from index import Library
from index.cli import main
from index.embedding.embedder import Embedder
from index.ingest.readers import read_path
from index.ingest.terms import tokenize
from index.ops.evaluate import (
    AbstentionReport,
    Report,
    answer_contains,
    ask_all,
    build,
    evaluate,
    load_squad,
    plan,
    score,
)

# Four short SQuAD v1.1 dev articles (Sky (United Kingdom), 1973 oil crisis, Packet switching,
# Black Death): 92 paragraphs, 426 questions.
ARTICLES = [8, 13, 19, 20]

OFF_TOPIC = ["What is the recipe for banana bread?", "Who won the 1998 World Cup?"]


@pytest.fixture
def sample_library(library: Library, sample_path: Path) -> Library:
    library.collection().add(read_path(sample_path))
    return library


@pytest.fixture(scope="module", params=ALL_EMBEDDINGS)
def any_embedding(
    request: pytest.FixtureRequest, load_embedding: Callable[[str], Embedder]
) -> Embedder:
    """Each int8 export this kind of CPU runs, and torch fp32: answers must not depend on it."""
    return load_embedding(request.param)


@pytest.fixture(scope="module")
def sample_on_any_cpu(
    any_embedding: Embedder, sample_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Library]:
    library = Library(tmp_path_factory.mktemp("sample"), embedder=any_embedding)
    library.collection().add(read_path(sample_path))
    yield library
    library.close()


@pytest.mark.parametrize(("question", "fact"), SAMPLE_FACTS)
def test_sample_article_answers_with_the_fact_and_cites_it(
    sample_on_any_cpu: Library, question: str, fact: str
) -> None:
    answer = sample_on_any_cpu.collection().ask(question, top_k=5)
    assert not answer.abstained
    assert fact.casefold() in answer.answer.casefold()
    assert any(fact.casefold() in c.text.casefold() for c in answer.citations[:3])


@pytest.mark.parametrize(("question", "fact"), MISSPELT_FACTS)
def test_misspelt_questions_are_answered_as_if_spelt_right(
    sample_on_any_cpu: Library, question: str, fact: str
) -> None:
    answer = sample_on_any_cpu.collection().ask(question, top_k=5)
    assert not answer.abstained
    assert fact.casefold() in answer.answer.casefold()
    assert answer.question == question  # shown as it was asked


def test_only_english_questions_are_respelt(sample_library: Library) -> None:
    retriever = sample_library.collection().retriever
    assert retriever.corrected("who announced the lawsuts") == "who announced the lawsuits"
    spanish = "¿Quién anunció las demandas y los lawsuts contra Nueva York?"
    assert retriever.corrected(spanish) == spanish  # its words are not English typos


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_sample_article_declines_off_topic_questions(
    sample_library: Library, question: str
) -> None:
    answer = sample_library.collection().ask(question)
    assert answer.abstained
    # The closest passages, shown as such: as many as asked for, or all the article has.
    assert len(answer.citations) == min(5, sample_library.collection().stats().passages)


def test_answer_cites_each_sentence_and_stays_short(sample_library: Library) -> None:
    answer = sample_library.collection().ask("Who announced the lawsuits?")
    assert answer.answer.endswith("[1]")
    assert answer.answer.count("[") <= 2
    assert answer.citations[0].quote in answer.answer


def test_squad_articles_find_the_paragraph_and_quote_the_answer(
    any_embedding: Embedder, make_library: Callable[..., Library], squad_dev: Path
) -> None:
    dataset = load_squad(squad_dev).subset(ARTICLES)
    collection = make_library(embedder=any_embedding).collection("squad")
    report = evaluate(collection, dataset, file=str(squad_dev), questions=150, seed=1)
    assert isinstance(report, Report)
    assert report.questions == 150
    assert report.recall[1] >= 0.85  # measured 0.95
    assert report.recall[5] >= 0.95  # measured 0.99
    assert report.containment >= 0.72  # measured 0.82
    assert report.abstained <= 0.05  # measured 0.00


def test_questions_about_articles_not_indexed_are_declined(
    make_library: Callable[..., Library], squad_dev: Path
) -> None:
    dataset = load_squad(squad_dev).subset(ARTICLES)
    collection = make_library().collection("half")
    report = evaluate(
        collection, dataset, file=str(squad_dev), abstention=True, questions=80, seed=1
    )
    assert isinstance(report, AbstentionReport)
    assert report.indexed_articles == 2 and report.held_out_articles == 2
    assert report.abstained >= 0.70  # measured 0.83
    assert report.answered >= 0.93  # measured 1.00


def test_each_question_asked_without_its_own_article_is_declined_or_cites_others(
    make_library: Callable[..., Library], squad_dev: Path
) -> None:
    dataset = load_squad(squad_dev).subset(ARTICLES)
    collection = make_library().collection("all")
    the_plan = plan(dataset, leave_one_out=True, questions=200, seed=1)
    ids = build(collection, the_plan.indexed)
    scopes = the_plan.scopes(ids)
    answers = ask_all(collection, the_plan.questions, top_k=5, scopes=scopes)
    own = [ids[q.article] for q in the_plan.questions]
    without = slice(len(the_plan.answer), None)
    # asked again without its article, no answer may cite it: the other three are all there is
    for answer, article_id in zip(answers[without], own[without], strict=True):
        assert article_id not in {cited for cited, _ in answer.cited}
    assert all(len(scope or ()) == 3 for scope in scopes[without])

    report = score(collection, the_plan, ids, answers, file=str(squad_dev))
    assert isinstance(report, AbstentionReport) and report.leave_one_out
    assert report.indexed_articles == 4 and report.answerable_questions == 200
    # Three articles searched, fewer passages than the judgement reads a crowd or a size from:
    # measured 0.99 / 0.82; over 400 questions 0.995 / 0.835, the release before's 1.00 / 0.85.
    # The bound was 0.80 until the commit that fitted the judgement again (bccd01d), which
    # lowered it to 0.78 as it lowered the share: said so in docs/development.md, "Tests".
    assert report.answered >= 0.90
    assert report.abstained >= 0.78


def test_eval_command_leaves_one_out_in_the_plain_runs_collection(
    library: Library, squad_dev: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--articles", "19:21", "--questions", "30", "--json"]
    assert main(["eval", str(squad_dev), *common, "--leave-one-out"], library=library) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["leave_one_out"] is True
    assert report["collection"] == "eval-squad-v1.1-dev-19-21"  # the plain run's: no re-embedding
    assert report["indexed_articles"] == 2 and report["answerable_questions"] == 30
    assert report["answered"] >= 0.9  # measured 0.97
    assert report["abstained"] >= 0.9  # measured 1.00: packet switching is not the Black Death


def test_eval_leaves_one_out_only_when_it_asks_itself(
    library: Library, squad_dev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = ["--leave-one-out", "--write-batch", str(tmp_path / "q.jsonl")]
    assert main(["eval", str(squad_dev), *batch], library=library) == 1
    assert "without --write-batch or --answers" in capsys.readouterr().err
    assert not (tmp_path / "q.jsonl").exists()
    both = ["--leave-one-out", "--abstention"]
    assert main(["eval", str(squad_dev), "--articles", "19", *both], library=library) == 1
    assert "Choose --abstention or --leave-one-out" in capsys.readouterr().err


def test_eval_command_scores_ask_batch_output_like_its_own_asking(
    library: Library, squad_dev: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--articles", "19", "--questions", "15", "--json"]
    assert main(["eval", str(squad_dev), *common], library=library) == 0
    direct = json.loads(capsys.readouterr().out)

    batch = tmp_path / "questions.jsonl"
    assert (
        main(["eval", str(squad_dev), *common, "--write-batch", str(batch)], library=library) == 0
    )
    capsys.readouterr()
    assert len(batch.read_text().splitlines()) == 15
    assert main(["ask", "--batch", str(batch), "--json", "--top-k", "10"], library=library) == 0
    answers = tmp_path / "answers.jsonl"
    answers.write_text(capsys.readouterr().out)
    assert main(["eval", str(squad_dev), *common, "--answers", str(answers)], library=library) == 0
    scored = json.loads(capsys.readouterr().out)

    assert scored["collection"] == direct["collection"] == "eval-squad-v1.1-dev-19-20"
    assert scored["questions"] == direct["questions"] == 15
    for key in ("recall", "mrr", "containment", "abstained"):
        assert scored[key] == direct[key]


def test_eval_refuses_a_collection_that_holds_other_articles(
    sample_library: Library, squad_dev: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["eval", str(squad_dev), "--articles", "19", "--questions", "5", "--collection", "default"],
        library=sample_library,
    )
    assert code == 1
    assert "fresh one with --collection" in capsys.readouterr().err


def test_answer_containment_ignores_case_punctuation_and_articles() -> None:
    assert answer_contains("It was won by the Denver Broncos. [1]", ["Denver Broncos"])
    assert answer_contains("A $60 million judgment [1]", ["$60 million"])
    assert answer_contains("In 1973, prices rose.", ["1973"])
    assert not answer_contains("In 19734 prices rose.", ["1973"])
    assert not answer_contains("I could not find an answer", ["Broncos"])


def test_keywords_keep_numbers_and_drop_question_words() -> None:
    assert tokenize("Which team won Super Bowl 5 in 1970?") == [
        "team",
        "win",
        "super",
        "bowl",
        "5",
        "1970",
    ]


def test_keywords_join_irregular_forms_but_not_words_of_their_own() -> None:
    assert tokenize("said took women left won") == tokenize("say take woman leave win")
    # "a bit", "the Fed", "Rose" and "won't" are not forms of "bite", "feed", "rise" and "win"
    for word, other in [("bit", "bite"), ("Fed", "feed"), ("Rose", "rise"), ("won't", "win")]:
        assert tokenize(word) != tokenize(other)
