"""The models articlebot knows, each one record looked up by the id a collection stores: every
record resolves by its id with the files it names, an unknown id is refused in one sentence that
says what to do, and a collection reopens with the model whose id it stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from index import Library
from index.cli import main
from index.embedding.embedder import Embedder, default_model_path, model_dimension, model_name
from index.embedding.registry import MODELS, MULTILINGUAL_E5_SMALL, UnknownModel, get_model
from index.errors import BadInput, IndexMismatch

KNOWN = "one of multilingual-e5-small, all-MiniLM-L6-v2 or to a sentence-transformers model's"


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_every_model_resolves_by_its_id_with_the_data_it_names(model_id: str) -> None:
    model = get_model(model_id)
    assert model.id == model_id
    # What a library stores for a new collection, known without loading the model.
    assert model_name(model_id) == model_id and model_dimension(model_id) == 384
    calibration = model.calibration
    for data in (
        model.card,
        calibration.judgement_file,
        getattr(calibration.languages, "path", None),
    ):
        assert data is None or data.is_file(), data


def test_the_rules_model_reads_cosines_as_they_are_and_e5_has_its_fitted_judgement() -> None:
    """all-MiniLM-L6-v2 is the scale the rules were fitted on; multilingual-e5-small's cosines
    are mapped onto it (its figures and all-MiniLM-L6-v2's, from the calibration files) and its
    declines are judged by the fitted weights its record names."""
    assert get_model("all-MiniLM-L6-v2").calibration.cosine_scale == (1.0, 0.0)
    assert get_model("all-MiniLM-L6-v2").calibration.judgement_file is None
    e5 = MULTILINGUAL_E5_SMALL.calibration
    assert e5.cosine_scale == pytest.approx((10.0, 0.253 - 10.0 * 0.789 - 0.14))
    assert e5.judgement_file is not None
    assert e5.judgement_file.name == "multilingual-e5-small-declines.json"
    assert MULTILINGUAL_E5_SMALL.prefixes.prompts() == {"query": "query: ", "document": "passage: "}


def test_an_unknown_model_is_refused_in_one_sentence_that_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(
        BadInput, match=f"^No model is known as 'bert-base'; set ARTICLEBOT_MODEL to {KNOWN}"
    ):
        get_model("bert-base")
    # A path that is no folder is no model either, refused before anything is loaded.
    with pytest.raises(UnknownModel):
        model_name(str(tmp_path / "no-such-folder"))
    # From the command line: one line, exit 1.
    monkeypatch.setenv("ARTICLEBOT_MODEL", "bert-base")
    monkeypatch.setenv("ARTICLEBOT_DATA_DIR", str(tmp_path / "data"))
    (tmp_path / "story.txt").write_text("Title\n\nThe council approved the budget on Monday.\n")
    assert main(["add", str(tmp_path / "story.txt")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No model is known as 'bert-base'" in err, err


def test_a_local_sentence_transformers_folder_is_a_model_named_by_its_folder() -> None:
    folder = default_model_path()
    assert model_name(folder) == Path(folder).name
    assert model_dimension(folder) == 384  # read from its configuration


def test_a_collection_stored_with_an_id_no_model_has_asks_for_a_reembedding(
    tmp_path: Path,
) -> None:
    from fakes import HashingTestEmbedder

    retired = Library(tmp_path / "data", embedder=HashingTestEmbedder(name="retired-model"))  # type: ignore[arg-type]
    retired.collection().add_text("Bridge reopens\n\nThe river bridge reopened on Monday.")
    retired.close()
    library = Library(tmp_path / "data", embedder=HashingTestEmbedder())  # type: ignore[arg-type]
    try:
        with pytest.raises(IndexMismatch, match="embedded with retired-model.*rebuild --reembed"):
            library.collection().ask("When did the bridge reopen?")
    finally:
        library.close()


@pytest.mark.skipif(
    bool(MULTILINGUAL_E5_SMALL.unavailable_reason()), reason="multilingual-e5-small is not here"
)
def test_a_collection_reopens_with_the_model_whose_id_it_stored(
    embedder: Embedder, minilm_embedder: Embedder, models_cache: Path, tmp_path: Path
) -> None:
    """Embedded with multilingual-e5-small, opened by a library whose own model is
    all-MiniLM-L6-v2: the stored id loads e5 through its record, calibration included, and the
    collection answers in German as it did."""
    assert embedder.name == MULTILINGUAL_E5_SMALL.id
    story = (
        "Werkzeugbibliothek eröffnet\n\nDie Stadt eröffnete am Montag eine Werkzeugbibliothek. "
        "Der Stadtrat bewilligte dafür 18.000 Euro aus dem Haushalt."
    )
    question = "Wie viel Geld bewilligte der Stadtrat?"
    made = Library(tmp_path / "data", embedder=embedder)
    try:
        made.collection().add_text(story)
        before = made.collection().ask(question)
    finally:
        made.close()
    reopened = Library(tmp_path / "data", embedder=minilm_embedder, model_cache=models_cache)
    try:
        answer = reopened.collection().ask(question)
        model = reopened.collection().embedder()
    finally:
        reopened.close()
    assert model.name == MULTILINGUAL_E5_SMALL.id and model is not minilm_embedder
    assert model.calibration == MULTILINGUAL_E5_SMALL.calibration
    assert not answer.abstained and "18.000" in answer.answer
    assert answer.answer == before.answer
