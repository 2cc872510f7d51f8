"""Safe query-term highlighting: Chinese bigrams, Latin words, and inert rendering of hostile text."""

from __future__ import annotations

import pytest

from annotate_app.ui.components.highlight import query_terms, spans, to_markdown
from annotate_app.ui.escape import escape_markdown, escape_name


@pytest.mark.parametrize(
    "query, terms",
    [
        ("更换电池", ["更换", "换电", "电池"]),
        ("A 型设备", ["型设", "设备"]),
        ("退货", ["退货"]),
        ("票", ["票"]),
        ("Battery replacement for Model-A", ["battery", "replacement", "model"]),
        ("需要什么", []),
        ("", []),
    ],
)
def test_query_terms(query, terms):
    assert query_terms(query) == terms


def test_overlapping_bigrams_merge_into_one_span():
    assert spans("先更换电池再开机", query_terms("更换电池")) == [(1, 5)]


def test_case_insensitive_latin():
    assert spans("Replace the BATTERY now", ["battery"]) == [(12, 19)]


H = ":orange-background[{}]".format


@pytest.mark.parametrize(
    ("text", "query", "markdown"),
    [
        # Latin terms match whole words only, whatever their case
        ("This is my invoice", "where is my invoice", f"This {H('is')} {H('my')} {H('invoice')}"),
        ("Open the window and do it", "do", f"Open the window and {H('do')} it"),
        ("LONGDOC is a long document", "long", f"LONGDOC is a {H('long')} document"),
        ("Invoices, INVOICE; invoice.", "invoice", f"Invoices\\, {H('INVOICE')}\\; {H('invoice')}\\."),
        ("my_invoice and invoice-2", "invoice", f"my\\_{H('invoice')} and {H('invoice')}\\-2"),
        ("Model3 model3s model", "model3", f"{H('Model3')} model3s model"),
        # Unicode-aware: accented Latin, Cyrillic
        ("Ünïcode ÜNÏCODE ünïcodes", "ünïcode", f"{H('Ünïcode')} {H('ÜNÏCODE')} ünïcodes"),
        ("Москва МОСКВА Москвы", "москва", f"{H('Москва')} {H('МОСКВА')} Москвы"),
        # CJK by characters and bigrams, anywhere; touching matches are one highlight (no gap)
        ("先更换电池再开机", "更换电池", f"先{H('更换电池')}再开机"),
        ("A型设备和B型设备", "A 型设备", f"A{H('型设备')}和B{H('型设备')}"),
        ("发票在这里", "票", f"发{H('票')}在这里"),
        # mixed Chinese and English: a CJK character is a word boundary for a Latin term
        ("iPhone15的电池续航", "iphone15 电池", f"{H('iPhone15')}的{H('电池')}续航"),
        ("电池 battery更换Battery。", "更换 battery", f"电池 {H('battery更换Battery')}。"),
        ("Batterypack更换", "battery 更换", f"Batterypack{H('更换')}"),
        ("退货refund退款", "refund", f"退货{H('refund')}退款"),
        ("这is不是This", "where is", f"这{H('is')}不是This"),
        # hostile text stays escaped inside and outside the highlight
        ("退货<b>refund</b>", "退货 refund", f"{H('退货')}\\<b\\>{H('refund')}\\<\\/b\\>"),
        ("[refund](javascript:x)", "refund", f"\\[{H('refund')}\\]\\(javascript\\:x\\)"),
        ("no match here", "invoice", "no match here"),
    ],
)
def test_highlight_respects_words_and_marks_cjk_without_gaps(text, query, markdown):
    assert to_markdown(text, query) == markdown


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "<!-- hidden -->",
        ":red[fake] $x^2$ **bold** `code`",
    ],
)
def test_hostile_text_is_fully_escaped(text):
    rendered = escape_markdown(text)
    for ch in "<>[]():`*$!":
        assert ch not in rendered.replace("\\" + ch, "")


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("scheme_a", "scheme_a"),  # intraword _ and - are plain text in Markdown: kept readable
        ("bm25-k1_2", "bm25-k1_2"),
        ("_a_", "\\_a\\_"),
        ("a__b", "a\\_\\_b"),
        ("-x", "\\-x"),
        ("[run](javascript:x)", "\\[run\\]\\(javascript\\:x\\)"),
        ("<b>x</b>", "\\<b\\>x\\<\\/b\\>"),
        ('=HYPERLINK("u")', '\\=HYPERLINK\\(\\"u\\"\\)'),
        (7, "7"),
    ],
)
def test_escape_name_keeps_intraword_underscores_and_escapes_the_rest(name, escaped):
    assert escape_name(name) == escaped
    for ch in "<>[]():`*$!=":
        assert ch not in escape_name(name).replace("\\" + ch, "")


def test_highlight_keeps_text_and_marks_terms():
    md = to_markdown("退货需要订单号。<b>", "普通商品退货需要满足什么条件")
    assert md.startswith(":orange-background[退货]需要") and md.endswith("\\<b\\>")


def test_line_breaks_survive():
    assert escape_markdown("a\nb") == "a  \nb"
