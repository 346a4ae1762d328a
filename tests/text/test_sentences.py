"""Where sentences end, in every script: what ranking, the relevance rule and quotes read."""

from __future__ import annotations

import pytest

from index.text.profile import profile
from index.text.sentences import UNSPACED_SENTENCE, split_sentences


@pytest.mark.parametrize(
    ("language", "text", "sentences"),
    [
        (
            "en",
            'Elway said, "We won. We are back." Mr. Smith left at 5 p.m. on Friday. He sold '
            "No. 5 to J. R. R. Tolkien in the U.S. Army. It sold!",
            [
                'Elway said, "We won. We are back."',
                "Mr. Smith left at 5 p.m. on Friday.",
                "He sold No. 5 to J. R. R. Tolkien in the U.S. Army.",
                "It sold!",
            ],
        ),
        (
            "de",
            "Im Laufe des 18. und 19. Jahrhunderts zogen sie nach Westen. Er sagte „Nein. Nie.“ "
            "Dann ging er.",
            [
                "Im Laufe des 18. und 19. Jahrhunderts zogen sie nach Westen.",
                "Er sagte „Nein. Nie.“",
                "Dann ging er.",
            ],
        ),
        # „ closes with ” in Polish (and Hungarian, Dutch, Romanian).
        (
            "pl",
            "Powiedział: „Idę. Już.” Potem wyszedł z pokoju.",
            ["Powiedział: „Idę. Już.”", "Potem wyszedł z pokoju."],
        ),
        # No language's abbreviations but its own: "mar" (sea) and "man" (one) are words here.
        (
            "pt",
            "Eles foram ao mar. Ela ficou em casa.",
            ["Eles foram ao mar.", "Ela ficou em casa."],
        ),
        ("sv", "Så gör man. Han kom hem sent.", ["Så gör man.", "Han kom hem sent."]),
        # A comma of Arabic script is a comma: the clause goes on.
        (
            "ar",
            "لم يتخلى فريق بانثرز سوى عن 308 نقطة، ليحتل المركز السادس في الدوري. "
            "وقد أضاف زميله 6 استحواذات.",
            [
                "لم يتخلى فريق بانثرز سوى عن 308 نقطة، ليحتل المركز السادس في الدوري.",
                "وقد أضاف زميله 6 استحواذات.",
            ],
        ),
        # A letter alone before a full stop is an initial in a script without case too; one
        # with a vowel sign may be a word (Hindi's "है."), and so is a Hangul syllable.
        (
            "ar",
            "كتبها ميشيل إ. مان ومالكوم ك. هوجهس. ونشرها و. بيرنز.",
            ["كتبها ميشيل إ. مان ومالكوم ك. هوجهس.", "ونشرها و. بيرنز."],
        ),
        (
            "he",
            "נכתב על ידי ג. ר. טולקין. הוא מפורסם.",
            ["נכתב על ידי ג. ר. טולקין.", "הוא מפורסם."],
        ),
        ("hi", "वह घर गया है. वे कल आए.", ["वह घर गया है.", "वे कल आए."]),
        ("ko", "빨리 와. 그는 떠났다.", ["빨리 와.", "그는 떠났다."]),
        ("zh", "他来了。她走了！“好吗？”他问。", ["他来了。", "她走了！", "“好吗？”", "他问。"]),
        ("hi", "परिषद ने पैसे दिए। भवन मार्च तक खुलेगा।", ["परिषद ने पैसे दिए।", "भवन मार्च तक खुलेगा।"]),
        (
            "ru",
            "Т.е. это так. Например, Э. И. дю Пон основал завод.",
            ["Т.е. это так.", "Например, Э. И. дю Пон основал завод."],
        ),
    ],
    ids=[
        "en",
        "de",
        "pl",
        "pt",
        "sv",
        "ar",
        "ar-initials",
        "he",
        "hi-full-stop",
        "ko",
        "zh",
        "hi",
        "ru",
    ],
)
def test_sentences_end_where_the_language_ends_them(
    language: str, text: str, sentences: list[str]
) -> None:
    assert split_sentences(text, language) == sentences


def test_thai_phrases_join_into_sentences_of_a_readable_length() -> None:
    # Thai has no full stop: a space ends a phrase, and a few phrases make a sentence.
    text = (
        "สภาเมืองอนุมัติเงิน 12 ล้านบาท เพื่อปรับปรุงห้องสมุดเก่า ประธานสภากล่าวว่า "
        "อาคารใหม่จะเปิดในเดือนมีนาคมปีหน้า และจะมีห้องสำหรับเด็กแยกต่างหาก "
        "ผู้อยู่อาศัยหลายคนเข้าร่วมการประชุม"
    )
    sentences = split_sentences(text, "th")
    assert " ".join(sentences) == text
    assert all(len(s) >= UNSPACED_SENTENCE for s in sentences[:-1])
    assert len(sentences) < len(text.split())


def test_a_long_paragraph_is_cut_at_a_sentence_end() -> None:
    # Past 5,000 characters a paragraph is split in pieces: at a sentence's end, not mid-sentence.
    sentence = "The council met again to discuss the library and its new hours."
    sentences = split_sentences(" ".join([sentence] * 120), "en")
    assert sentences == [sentence] * 120


def test_the_profile_splits_as_the_splitter_does() -> None:
    text = "Line one has words. And more.\nA list item"
    assert profile("en").sentences(text) == ("Line one has words.", "And more.", "A list item")
    assert profile(None).language == "en" and profile("ar").right_to_left
    assert profile("th").pairs and not profile("de").pairs
