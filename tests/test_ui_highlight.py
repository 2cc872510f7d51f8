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
