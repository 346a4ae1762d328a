"""Adding articles through SimCord: a file, a URL, the paste modal, refusals, roles, cooldowns."""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import simcord
from bot_world import Server, callback_types, edits
from news_site import Site

from bot.cogs.add import PASTE_LIMIT

PAGES = Path(__file__).parents[1] / "data" / "pages"

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

ARTICLE_HTML = b"""<!doctype html><html><head><title>Harbor gets a ferry terminal</title>
<meta property="og:site_name" content="Harbor Times"></head><body><article>
<h1>Harbor gets a ferry terminal</h1>
<p>The harbor authority approved a new ferry terminal on Tuesday after a long debate.</p>
<p>The terminal will cost 80 million dollars and is due to open in the spring of 2027.</p>
<p>Commuters from the islands have asked for a faster crossing for more than a decade.</p>
</article></body></html>"""


@pytest.fixture
def article_url() -> Iterator[str]:
    """A local web page: the fetcher runs for real against 127.0.0.1."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(ARTICLE_HTML)))
            self.end_headers()
            self.wfile.write(ARTICLE_HTML)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/ferry.html"
    httpd.shutdown()
    httpd.server_close()


async def test_add_file_replies_with_title_paragraphs_and_skipped_lines(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    result = await server.member.slash(server.channel, "add", file=sample_attachment)

    assert callback_types(server.env) == [5]  # deferred at once
    assert result.response is not None and not result.response.ephemeral
    assert re.fullmatch(
        r"Added \*\*Border czar Tom Homan meets with blue city leader for crackdown on criminal "
        r"aliens\*\* \(#1\): \d+ paragraphs indexed, \d+ lines skipped as not part of the "
        r"article\.",
        result.response.content,
    )
    assert server.collection.articles()[0].added_by == (
        f"{server.member.name} ({server.member.id})"
    )


async def test_adding_the_same_file_twice_adds_nothing(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await server.member.slash(server.channel, "add", file=sample_attachment)
    again = await server.member.slash(server.channel, "add", file=sample_attachment)
    assert again.response is not None
    assert "is already in this server's articles (#1), so nothing was added" in (
        again.response.content
    )
    assert len(server.collection.articles()) == 1


async def test_add_url_fetches_the_page(server: Server, article_url: str) -> None:
    result = await server.member.slash(server.channel, "add", url=article_url)
    assert result.response is not None
    text = result.response.content
    assert text.startswith("Added **Harbor gets a ferry terminal**")
    assert "3 paragraphs indexed" in text
    assert f"<{article_url}>" in text  # shown without a link preview


async def test_refused_url_says_why_privately(server: Server, simcord_env: simcord.Env) -> None:
    result = await server.member.slash(server.channel, "add", url="ftp://example.com/a.txt")
    (message,) = result.followups
    assert message.ephemeral and message.content.endswith(".")
    assert "Something went wrong" not in message.content
    assert simcord_env.errors


async def test_a_cookie_consent_page_is_refused_privately_saying_what_to_do(
    server: Server, simcord_env: simcord.Env
) -> None:
    with Site.serving() as site:
        site.pages["consent"] = (PAGES / "consent.html").read_bytes()
        result = await server.member.slash(server.channel, "add", url=f"{site.base}/consent")
    (message,) = result.followups
    assert message.ephemeral
    assert message.content == (
        "That page shows a cookie-consent notice instead of the article; open it in a browser, "
        "answer the notice, copy the article's text and paste it instead."
    )
    assert server.collection.articles() == []
    assert simcord_env.errors  # the refusal, as the bot's error handler saw it


async def test_unreadable_file_type_is_refused_before_any_work(
    server: Server, simcord_env: simcord.Env
) -> None:
    result = await server.member.slash(server.channel, "add", file=("photo.png", b"\x89PNG..."))
    assert callback_types(simcord_env) == [4]  # answered directly, nothing deferred
    assert result.response is not None and result.response.ephemeral
    assert result.response.content == (
        "I cannot read .png files; attach a .txt, .md, .html or .pdf file instead."
    )
    assert simcord_env.errors


async def test_url_and_file_together_are_refused(
    server: Server, sample_attachment: tuple[str, bytes], simcord_env: simcord.Env
) -> None:
    result = await server.member.slash(
        server.channel, "add", url="https://example.com/a", file=sample_attachment
    )
    assert result.response is not None and result.response.ephemeral
    assert result.response.content.startswith("Give a URL or a file, not both")
    assert simcord_env.errors


async def test_add_alone_opens_a_modal_whose_text_is_added(server: Server) -> None:
    shown = await server.member.slash(server.channel, "add")

    modal = shown.modal
    assert modal is not None and modal["title"] == "Add an article"
    inputs = {c["custom_id"]: c for row in modal["components"] for c in row["components"]}
    assert inputs["text"]["max_length"] == PASTE_LIMIT == 4000
    assert inputs["text"]["style"] == 2  # paragraph

    added = await server.member.submit_modal(
        shown,
        {
            "title": "Library extends hours",
            "text": "The city library will open until 9 pm on weekdays.\n\n"
            "The change starts in March and costs 40,000 dollars a year.",
        },
    )
    assert added.response is not None
    assert added.response.content.startswith("Added **Library extends hours** (#1): 2 paragraphs")

    asked = await server.member.slash(
        server.channel, "ask", question="When does the library close?"
    )
    assert asked.response is not None
    assert "9 pm" in (asked.response.embeds[0].description or "")


async def test_modal_with_no_article_text_says_what_to_do(
    server: Server, simcord_env: simcord.Env
) -> None:
    shown = await server.member.slash(server.channel, "add")
    result = await server.member.submit_modal(shown, {"text": "   \n  "})
    messages = [m for m in [result.response, *result.followups] if m is not None]
    assert any(m.ephemeral and "paste" in m.content.lower() for m in messages)
    assert simcord_env.errors


async def test_add_shows_progress_then_the_result_in_one_message(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await server.member.slash(server.channel, "add", file=sample_attachment)
    shown = edits(server.env)
    # How many reports are shown depends on speed (see the rebuild test for live edits).
    assert all(re.fullmatch(r"Embedding \d+ / \d+ passages \(\d+%\)", t) for t in shown[:-1])
    assert shown[-1].startswith("Added **")


async def test_add_runs_in_a_worker_thread(
    server: Server, sample_attachment: tuple[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    collection = server.collection
    original = collection.add

    def recording_add(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(collection, "add", recording_add)
    await server.member.slash(server.channel, "add", file=sample_attachment)
    assert threads and all(t is not threading.main_thread() for t in threads)
    # Threads of their own, apart from the default pool that answers questions: slow sites
    # and big files can keep other adds waiting, never a question.
    assert all(t.name.startswith("articlebot-add") for t in threads)


async def test_add_cooldown_per_member(server: Server, simcord_env: simcord.Env) -> None:
    for n in range(3):
        await server.member.slash(server.channel, "add", file=(f"{n}.txt", f"Note {n}.".encode()))
    refused = await server.member.slash(server.channel, "add", file=("4.txt", b"Note four."))
    assert refused.response is not None and refused.response.ephemeral
    assert re.fullmatch(r"Slow down a little: try again in \d+ s\.", refused.response.content)
    assert len(simcord_env.errors) == 1
    await simcord_env.advance_time(60)
    ok = await server.member.slash(server.channel, "add", file=("4.txt", b"Note four."))
    assert ok.response is not None and ok.response.content.startswith("Added")


@pytest.mark.bot_settings(editor_role="Editors")
async def test_editor_role_limits_who_may_add(
    server: Server, sample_attachment: tuple[str, bytes], simcord_env: simcord.Env
) -> None:
    refused = await server.member.slash(server.channel, "add", file=sample_attachment)
    assert refused.response is not None and refused.response.ephemeral
    assert refused.response.content == (
        "Only members with the Editors role can do that; ask an admin for it."
    )
    assert simcord_env.errors

    editors = server.guild.create_role("Editors")
    editor = server.guild.add_member(simcord_env.create_user("eve"), roles=[editors])
    added = await editor.slash(server.channel, "add", file=sample_attachment)
    assert added.response is not None and added.response.content.startswith("Added")

    admin = await server.admin.slash(server.channel, "add", file=("n.txt", b"An admin note."))
    assert admin.response is not None and admin.response.content.startswith("Added")


async def test_admins_seeding_a_server_are_not_slowed_down(server: Server) -> None:
    for n in range(5):
        done = await server.admin.slash(
            server.channel, "add", file=(f"{n}.txt", f"Seed note {n}.".encode())
        )
        assert done.response is not None and done.response.content.startswith("Added")
