"""Articles and questions in Arabic and Chinese, through SimCord: the answer quotes the article's
own sentences, right-to-left text sits in directional isolates so its source marker stays after
it, and long paragraphs in either script fit Discord's limits."""

from __future__ import annotations

import pytest
from bot_world import Server

from bot.render import EMBED_DESCRIPTION, EMBED_TITLE

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

ARABIC_TITLE = "افتتاح مكتبة الأدوات في محطة الإطفاء القديمة"
ARABIC = [
    "افتتحت البلدة مكتبة للأدوات في مبنى محطة الإطفاء القديمة يوم السبت، ويمكن لأي مقيم "
    "يحمل بطاقة المكتبة أن يستعير المثاقب والسلالم وآلات الخياطة مجانا لمدة أسبوع.",
    "وافق مجلس البلدة في شهر مارس على ثمانية عشر ألف دولار لتجديد الطابق الأرضي من المحطة، "
    "ودفعت الأموال ثمن رفوف جديدة وطاولة عمل وإضاءة ومنحدر عند المدخل.",
    "يصلح المتطوعون الأجهزة المعطلة في السبت الثاني من كل شهر، وقد أصلحوا حتى الآن أكثر من "
    "مئتي جهاز من المحامص والمكانس والمصابيح.",
    # A long paragraph: the answer must be cut to fit, not refused by Discord.
    " ".join(["تستقبل المكتبة الزوار من الثلاثاء إلى السبت، وتقدم دروسا في استعمال الأدوات."] * 40),
]
CHINESE_TITLE = "长江边的新图书馆"
CHINESE = [
    "新图书馆于去年九月在江边开放，共有三层，藏书约十二万册，每天开放到晚上九点。",
    "市政府为图书馆的建设拨款四千五百万元，其中一千万元用于儿童阅览区和无障碍设施。",
    "图书馆每个周末举办免费讲座，主题包括地方历史、摄影和编程，平均每场有八十人参加。",
    "".join(["图书馆还提供自习座位和会议室，读者可以在网上预约，每次最多使用三个小时。"] * 60),
]


def _arrange(server: Server) -> None:
    server.add_text("\n\n".join(ARABIC), title=ARABIC_TITLE)
    server.add_text("\n\n".join(CHINESE), title=CHINESE_TITLE)


async def test_an_arabic_question_gets_the_arabic_sentence_isolated_before_its_marker(
    server: Server,
) -> None:
    _arrange(server)
    result = await server.member.slash(
        server.channel, "ask", question="كم وافق مجلس البلدة لتجديد المحطة؟"
    )
    assert result.response is not None
    (embed,) = result.response.embeds
    text = embed.description or ""
    assert "ثمانية عشر ألف دولار" in text
    # The quoted sentence in isolates, its marker after it; the source's title isolated too.
    assert "\u2069 [1]" in text
    assert f"\u2068{ARABIC_TITLE}\u2069" in text
    assert len(text) <= EMBED_DESCRIPTION and len(embed.title or "") <= EMBED_TITLE


async def test_a_chinese_question_gets_the_chinese_sentence_within_discords_limits(
    server: Server,
) -> None:
    _arrange(server)
    result = await server.member.slash(server.channel, "ask", question="市政府为图书馆拨款多少钱？")
    assert result.response is not None
    (embed,) = result.response.embeds
    text = embed.description or ""
    assert "四千五百万元" in text and "[1]" in text
    assert CHINESE_TITLE in text
    assert "\u2068" not in text  # left-to-right text needs no isolates


async def test_long_paragraphs_in_either_script_are_cut_to_fit(server: Server) -> None:
    _arrange(server)
    for question in ["متى تستقبل المكتبة الزوار؟", "读者怎样预约自习座位和会议室？"]:
        result = await server.member.slash(server.channel, "ask", question=question)
        assert result.response is not None, question
        (embed,) = result.response.embeds
        assert len(embed.description or "") <= EMBED_DESCRIPTION, question
        assert "[1]" in (embed.description or ""), question
