"""Real-looking news pages served on 127.0.0.1 and added through the CLI: what a reader sees
of them (`show --json`), the pages refused as not articles, and the same story met twice."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from news_site import Site

from index import Library, Limits
from index.cli import main

PAGES = Path(__file__).resolve().parents[1] / "data" / "pages"
CHANGED_LINE = (
    "Insurers have raised premiums on Tanner Street by 40 percent since 2024, and two no "
    "longer offer flood cover there at all."
)
UPDATED_LINE = (
    "Insurers have raised premiums on Tanner Street by 45 percent since 2024, the county's "
    "figures show, and three no longer offer flood cover there."
)


@pytest.fixture
def site() -> Iterator[Site]:
    with Site.serving() as news:
        for page in PAGES.glob("*.html"):
            news.pages[page.stem] = page.read_bytes()
        yield news


@pytest.fixture
def web_library(make_stored_library: Callable[..., Library]) -> Library:
    """On each backend: what is kept of a page, and what counts as present, are the same."""
    return make_stored_library(limits=Limits(allow_private_networks=True))


def run(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main([*argv, "--json"], library=library)
    return code, json.loads(capsys.readouterr().out)


def added(library: Library, capsys: pytest.CaptureFixture[str], url: str) -> dict[str, Any]:
    code, result = run(library, capsys, "add", url)
    assert code == 0, result
    assert isinstance(result, dict)
    return result


def shown(
    library: Library, capsys: pytest.CaptureFixture[str], article_id: object
) -> dict[str, Any]:
    code, article = run(library, capsys, "show", str(article_id))
    assert code == 0 and isinstance(article, dict)
    return article


def test_subheadings_head_the_paragraphs_beneath_them_and_are_no_passages(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    result = added(web_library, capsys, f"{site.base}/river-floods")
    article = shown(web_library, capsys, result["article_id"])
    assert article["title"] == "Why the Elm river floods every spring"
    assert article["author"] == "Marta Ilić"  # not "By Marta Ilić Monday; March"
    passages = article["passages"]
    assert len(passages) == 10
    assert "heading" not in passages[0] and "heading" not in passages[1]
    assert [p.get("heading") for p in passages[2:]] == [
        "Snowmelt arrives all at once",
        "Snowmelt arrives all at once",
        "The wall moved the problem downstream",
        "The wall moved the problem downstream",
        "WHO PAYS FOR THE BYPASS?",  # a short head in capitals is a head, not a promotion
        "WHO PAYS FOR THE BYPASS?",
        "What residents can do now",
        "What residents can do now",
    ]
    assert passages[6]["text"].startswith("The bypass channel would cost 14 million euros")
    texts = " ".join(p["text"] for p in passages)
    assert "Snowmelt arrives" not in texts and "Related stories" not in texts
    assert "newsletter" not in texts and "Council approves new bus depot" not in texts

    code = main(["show", str(result["article_id"])], library=web_library)
    out = capsys.readouterr().out
    assert code == 0 and "\n## WHO PAYS FOR THE BYPASS?\n\n¶7  The bypass channel" in out


def test_a_data_table_reads_as_rows_and_a_list_keeps_its_items_apart(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    result = added(web_library, capsys, f"{site.base}/council-budget")
    article = shown(web_library, capsys, result["article_id"])
    assert article["author"] == "Tom Achterberg and Lena Park"
    texts = [p["text"] for p in article["passages"]]
    table = next(t for t in texts if "Schools" in t)
    assert "|" not in table and "---" not in table
    assert table.split("\n")[1:] == [
        "Department, This year, Next year",
        "Schools, 21.4, 21.9",
        "Buses, 4.2, 5.0",
        "Roads, 6.8, 6.5",
        "Libraries, 1.1, 1.1",
    ]
    items = next(t for t in texts if "night bus" in t)
    assert items.split("\n") == [
        "buses every ten minutes on the two main routes at rush hour",
        "a night bus from the station on Fridays and Saturdays",
        "free travel for pupils under sixteen",
        "twelve new shelters with timetables that show live departures",
    ]
    answer = web_library.collection().ask("How often will buses run at rush hour?")
    assert answer.citations and "every ten minutes" in answer.citations[0].quote


def test_an_old_page_laid_out_in_a_table_keeps_its_paragraphs(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    result = added(web_library, capsys, f"{site.base}/old-layout")
    assert result["paragraphs"] == 6
    article = shown(web_library, capsys, result["article_id"])
    assert article["author"] == "Pieter de Wit"
    passages = article["passages"]
    assert passages[0]["text"].startswith("Apple growers in the valley")
    assert all(len(p["text"].split()) < 60 for p in passages)
    assert passages[3]["heading"] == "Cider makers step in"
    texts = " ".join(p["text"] for p in passages)
    assert "Front page" not in texts and "By Pieter de Wit" not in texts


@pytest.mark.parametrize(
    ("page", "why"),
    [
        ("consent", "cookie-consent notice"),
        ("subscription", "login or subscription wall"),
        ("javascript", "“JavaScript required” or bot check"),
        ("not-found", "error page (“Sorry, we can't find that page”)"),
    ],
)
def test_a_page_that_is_not_an_article_is_refused_in_one_line_naming_why(
    page: str,
    why: str,
    site: Site,
    web_library: Library,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"{site.base}/{page}"
    assert main(["add", url], library=web_library) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {url}: That page ") and err.count("\n") == 1
    assert why in err
    assert "paste" in err or "check the link" in err  # and what to do instead

    code, result = run(web_library, capsys, "add", url)
    assert code == 1 and list(result) == ["input", "error"]
    assert web_library.collection().articles() == []


def test_short_real_articles_and_the_sample_article_as_a_page_are_not_refused(
    site: Site,
    web_library: Library,
    capsys: pytest.CaptureFixture[str],
    sample_text: str,
    tmp_path: Path,
) -> None:
    added(web_library, capsys, f"{site.base}/ferry")  # two short paragraphs, 31 words
    title, _, body = sample_text.partition("\n")
    paragraphs = "".join(f"<p>{p}</p>" for p in body.split("\n\n") if p.strip())
    page = tmp_path / "homan.html"
    page.write_text(
        f"<!doctype html><html><head><title>{title}</title></head><body><article>"
        f"<h1>{title}</h1>{paragraphs}</article></body></html>"
    )
    result = added(web_library, capsys, str(page))
    assert result["added"] is True and result["paragraphs"] == 14


def test_the_same_story_on_another_address_with_a_line_changed_is_already_present(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    first = added(web_library, capsys, f"{site.base}/river-floods")
    added(web_library, capsys, f"{site.base}/council-budget")  # another story is no duplicate
    original = site.pages["river-floods"].decode()
    assert CHANGED_LINE in original
    updated = original.replace(CHANGED_LINE, UPDATED_LINE)
    site.pages["wire/river-floods"] = updated.replace("Riverside Gazette", "Northern Wire").encode()

    again = added(web_library, capsys, f"{site.base}/wire/river-floods")
    assert again["already_present"] is True and again["near_duplicate"] is True
    assert again["article_id"] == first["article_id"]
    assert len(web_library.collection().articles()) == 2

    code = main(["add", f"{site.base}/wire/river-floods"], library=web_library)
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("Already there as nearly the same text:")
    assert f"id {first['article_id']}" in out

    # A refresh of the stored article's own link is how the new version replaces the old.
    site.pages["river-floods"] = updated.encode()
    code, refreshed = run(web_library, capsys, "refresh", str(first["article_id"]))
    assert code == 0 and refreshed["changed"] is True
    article = shown(web_library, capsys, refreshed["article_id"])
    assert article["passages"][-1]["text"] == UPDATED_LINE
    assert len(web_library.collection().articles()) == 2


def test_a_removed_article_no_longer_counts_as_present(
    site: Site, web_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    first = added(web_library, capsys, f"{site.base}/river-floods")
    site.pages["copy"] = site.pages["river-floods"].replace(b"forty houses", b"41 houses")
    run(web_library, capsys, "remove", str(first["article_id"]))
    second = added(web_library, capsys, f"{site.base}/copy")
    assert second["added"] is True


def test_a_data_folder_from_before_headings_and_signatures_is_upgraded(
    site: Site,
    make_library: Callable[..., Library],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    limits = Limits(allow_private_networks=True)
    library = make_library(tmp_path / "old", limits=limits)
    first = added(library, capsys, f"{site.base}/river-floods")
    library.close()
    # As the version before this schema left a data folder.
    db = sqlite3.connect(tmp_path / "old" / "articlebot.db")
    db.execute("DROP TABLE sentence_vectors")
    db.execute("DROP TABLE summaries")  # version 8
    db.execute("DROP TABLE signature_bands")
    db.execute("DROP TABLE article_signatures")
    db.execute("ALTER TABLE passages DROP COLUMN heading")
    db.execute("ALTER TABLE articles DROP COLUMN language")
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()

    reopened = make_library(tmp_path / "old", limits=limits)
    article = shown(reopened, capsys, first["article_id"])
    assert len(article["passages"]) == 10
    assert not any("heading" in p for p in article["passages"])  # unknown until a refresh
    site.pages["copy"] = site.pages["river-floods"].replace(b"forty houses", b"41 houses")
    again = added(reopened, capsys, f"{site.base}/copy")
    assert again["already_present"] is True and again["article_id"] == first["article_id"]
