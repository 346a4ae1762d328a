"""The command line's own words in the asker's language, with the real model: the demo article
asked about in 18 languages, each answer framed in the question's language (its headings, or
its decline), its quotes the article's English sentences, `--json` with the keys it has in
English."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from index import Library
from index.answers.compose import ABSTAIN_OTHER_LANGUAGE, ABSTAIN_TEXT
from index.cli import main
from index.messages import question_locale, translate

pytestmark = pytest.mark.slow  # the real model

DEMO = Path(__file__).resolve().parents[2] / "index" / "demo" / "tool-library.md"
# "How much did the council approve for the renovation?", in each language.
QUESTIONS = {
    "de": "Wie viel Geld hat der Gemeinderat für die Renovierung bewilligt?",
    "fr": "Combien le conseil municipal a-t-il approuvé pour la rénovation ?",
    "es-ES": "¿Cuánto aprobó el ayuntamiento para la renovación?",
    "pt-BR": "Quanto a câmara municipal aprovou para a reforma?",
    "it": "Quanto ha approvato il consiglio comunale per la ristrutturazione?",
    "nl": "Hoeveel heeft de gemeenteraad goedgekeurd voor de renovatie?",
    "pl": "Ile rada miasta zatwierdziła na remont?",
    "ru": "Сколько городской совет одобрил на ремонт?",
    "uk": "Скільки міська рада схвалила на ремонт?",
    "tr": "Belediye meclisi yenileme için ne kadar onayladı?",
    "vi": "Hội đồng thị trấn đã phê duyệt bao nhiêu tiền cho việc cải tạo?",
    "el": "Πόσα ενέκρινε το δημοτικό συμβούλιο για την ανακαίνιση;",
    "ja": "町議会は改修にいくら承認しましたか？",
    "ko": "시의회는 개조 공사에 얼마를 승인했습니까?",
    "zh-CN": "镇议会为翻修批准了多少钱？",
    "ar": "كم وافق مجلس البلدة على تخصيصه للتجديد؟",
    "hi": "नगर परिषद ने नवीनीकरण के लिए कितनी राशि स्वीकृत की?",
    "he": "כמה אישרה מועצת העיר לשיפוץ?",
}


@pytest.fixture
def demo_dir(make_library: Callable[..., Library]) -> Path:
    library = make_library()
    library.collection().add_text(DEMO.read_text(encoding="utf-8"))
    return Path(library.data_dir)


@pytest.mark.parametrize("locale", sorted(QUESTIONS))
def test_a_question_gets_the_bot_s_words_in_its_language(
    locale: str, demo_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = QUESTIONS[locale]
    assert question_locale(question) == locale
    assert main(["ask", question, "--data-dir", str(demo_dir)]) == 0
    text = capsys.readouterr().out
    headings = [translate(locale, h) for h in ("Sources:", "Closest passages:")]
    assert any(f"\n{h}\n" in text for h in headings), text
    assert "\nSources:\n" not in text and "\nClosest passages:\n" not in text
    assert main(["ask", question, "--data-dir", str(demo_dir), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    english = {
        "question": 0, "answer": 0, "abstained": 0, "citations": 0, "written_by": 0,
        "writer_fallback": 0,
    }  # fmt: skip
    assert answer.keys() == english.keys()
    if answer["abstained"]:
        assert answer["answer"] in {
            translate(locale, ABSTAIN_TEXT),
            translate(locale, ABSTAIN_OTHER_LANGUAGE),
        }
    else:  # the article's own sentences, as written, whatever the question's language
        demo = " ".join(DEMO.read_text(encoding="utf-8").split())
        for quoted in re.split(r"\s*\[\d+\]\s*|\s*…\s*", answer["answer"]):
            assert " ".join(quoted.split()) in demo, quoted
