"""The guidelines render without remote images and without raw HTML (issue 16.10): a table of exact rewrites,
a CommonMark parse of hostile guidelines (no image, no HTML left), and AppTests of the annotator's panel and
the admin's preview (a remote image is shown as a link, never as an image)."""

from __future__ import annotations

import pytest
from app_helpers import app_as
from markdown_it import MarkdownIt

from annotate_app.services import projects
from annotate_app.services.auth import SYSTEM
from annotate_app.ui.components.guidelines import safe_guidelines

PIXEL = "https://tracker.example/p.gif?u=1"


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        # plain Markdown is left alone
        ("# Rules\n\n| grade | meaning |\n|---|---|\n| 3 | **fully** |", None),
        ("[the form](https://help.example/form) and <https://help.example>", None),
        ("write to <help@shop.example>; 1 < 2 and 3 > 2; a <- b", None),
        ("an escaped \\![image](x) and an escaped \\<b> stay as they are", None),
        # images become links (alt text, or "image"), whatever their form
        (f"![pixel]({PIXEL})", f"[pixel]({PIXEL})"),
        (f'![pixel]({PIXEL} "title")', f'[pixel]({PIXEL} "title")'),
        (f"![]({PIXEL})", f"[image]({PIXEL})"),
        (f"![pixel][p]\n\n[p]: {PIXEL}", f"[pixel][p]\n\n[p]: {PIXEL}"),
        (f"![p]\n\n[p]: {PIXEL}", f"[p]\n\n[p]: {PIXEL}"),
        (f"[![badge]({PIXEL})](https://x.example)", f"[[badge]({PIXEL})](https://x.example)"),
        (f"wow!![x]({PIXEL})", f"wow[x]({PIXEL})"),  # removing one `!` must not make another image
        (f"\\\\![x]({PIXEL})", f"\\\\[x]({PIXEL})"),  # an escaped backslash escapes nothing after it
        (f"`![x]({PIXEL})`", f"`[x]({PIXEL})`"),  # code too: no Markdown-aware exception
        # raw HTML is escaped, so it shows as typed
        (f'<img src="{PIXEL}">', f'\\<img src="{PIXEL}">'),
        ("<script>alert(1)</script>", "\\<script>alert(1)\\</script>"),
        ("<!-- hidden -->", "\\<!-- hidden -->"),
        ("<?php x ?> <!DOCTYPE html>", "\\<?php x ?> \\<!DOCTYPE html>"),
        ("\\\\<b>bold</b>", "\\\\\\<b>bold\\</b>"),
        (f"<img\nsrc={PIXEL}>", f"\\<img\nsrc={PIXEL}>"),
        # HTML and image syntax interleaved
        (f"!<b>[x]({PIXEL})", f"!\\<b>[x]({PIXEL})"),
        (f"<![x]({PIXEL})", f"\\<[x]({PIXEL})"),
    ],
)
def test_safe_guidelines(markdown, shown):
    assert safe_guidelines(markdown) == (markdown if shown is None else shown)


HOSTILE = [
    f"![a]({PIXEL})",
    f"![a][r]\n\n[r]: {PIXEL}",
    f"![r]\n\n[r]: {PIXEL}",
    f"![a]\n\n[a]: <{PIXEL}>",
    f"!!![a]({PIXEL})",
    f"\\\\\\\\![a]({PIXEL})",
    f"!<i>[a]({PIXEL})",
    f"!<!-- -->[a]({PIXEL})",
    f"- item ![a]({PIXEL})\n\n> quote ![a]({PIXEL})",
    f"| h |\n|---|\n| ![a]({PIXEL}) |",
    f'<img src="{PIXEL}">',
    f"<div>\n\n![a]({PIXEL})\n\n</div>",
    f"<<img>img src={PIXEL}>",
    "<script>x</script>\n<svg onload=x></svg>",
    f"<a href='{PIXEL}'>a</a> <br/> </p>",
]


def _kinds(markdown: str) -> set[str]:
    """The token types of ``markdown`` parsed as CommonMark with tables, inline ones included."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return {t.type for t in tokens} | {c.type for t in tokens for c in t.children or []}


@pytest.mark.parametrize("markdown", HOSTILE)
def test_no_image_and_no_html_survive_a_commonmark_parse(markdown):
    unsafe = {"image", "html_inline", "html_block"}
    assert _kinds(markdown) & unsafe  # the parse does see the threat before the rewrite
    assert not _kinds(safe_guidelines(markdown)) & unsafe


def _panel(at) -> str:
    return at.expander[0].markdown[0].value


def test_an_annotator_sees_a_remote_image_as_a_link(app_db):
    projects.set_guidelines(
        app_db, SYSTEM, "demo", f"# Rules\n\n![the return form]({PIXEL})\n\n<img src={PIXEL}>"
    )
    at = app_as(app_db, "alice")
    assert not at.exception
    assert at.expander[0].label == "Guidelines (version 2)"
    assert _panel(at) == f"# Rules\n\n[the return form]({PIXEL})\n\n\\<img src={PIXEL}>"
    rendered = MarkdownIt("commonmark").parse(_panel(at))
    assert [c.type for c in rendered[4].children] == ["link_open", "text", "link_close"]
    assert not {c.type for t in rendered for c in t.children or []} & {"image", "html_inline"}


def test_the_admins_preview_shows_it_as_the_annotators_see_it(app_db):
    projects.set_guidelines(app_db, SYSTEM, "demo", f"![]({PIXEL})")
    at = app_as(app_db, "admin", "views/admin/admin_project.py")
    assert not at.exception
    preview = next(e for e in at.expander if e.label == "Preview")
    assert [m.value for m in preview.markdown] == [f"[image]({PIXEL})"]
