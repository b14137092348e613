"""The report as one self-contained HTML file, ``report.html`` next to ``report.md``: the same
Markdown turned into HTML (the subset the report writes: headings, paragraphs, lists, tables,
images, ``code``, ``**bold**``, ``*italic*``), its charts inline as base64 PNG, its tables
sortable by a click on a column's header, a contents list of its sections. No external resource:
it opens from a mail attachment or a CI artifact as it is.

A small inline script also records, once the page has loaded, each chart's and table's box on
the page and each chart's decoded size in a hidden ``<pre id="layout-check">`` (JSON), which a
headless browser's dumped DOM shows: the test that renders the report in Chromium checks from it
that every chart has pixels and nothing overlaps.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Iterator
from pathlib import Path

__all__ = ["inline", "markdown_to_html", "page", "write_html"]

_IMAGE = re.compile(r"^!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)\)$")
_HEADING = re.compile(r"^(?P<level>#{1,6}) (?P<text>.*)$")
_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")

STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1b1b1b;
       max-width: 1180px; margin: 0 auto; padding: 16px 24px 64px; background: #fff; }
h1 { font-size: 1.7em; margin: 0.4em 0 0.2em; }
h2 { font-size: 1.3em; margin: 1.6em 0 0.4em; padding-top: 0.4em; border-top: 1px solid #ddd; }
h3 { font-size: 1.1em; margin: 1.2em 0 0.3em; }
p, li { max-width: 80ch; }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, monospace; background: #f3f3f3;
       padding: 0 3px; border-radius: 3px; }
.findings { background: #f5f8fc; border: 1px solid #cfdbe8; border-radius: 6px;
            padding: 4px 20px 8px; margin: 12px 0 20px; }
.findings p, .findings li { max-width: none; }
nav.contents { font-size: 0.92em; columns: 2; margin: 8px 0 16px; }
nav.contents ol { margin: 0; padding-left: 1.4em; }
figure { margin: 14px 0 22px; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
figcaption { font-size: 0.88em; color: #555; margin-top: 4px; }
.table-wrap { overflow-x: auto; margin: 10px 0 18px; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.86em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d8d8d8; padding: 3px 8px; text-align: right; white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
th { background: #eef2f6; cursor: pointer; user-select: none; position: sticky; top: 0; }
th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: 0.75em; }
th[aria-sort="descending"]::after { content: " \\25BC"; font-size: 0.75em; }
tr:nth-child(even) td { background: #fafafa; }
#layout-check { display: none; }
"""

# Sorting: a click on a header sorts its table's body by that column (numbers as numbers, "-" and
# blanks last), a second click reverses. Then the layout record (see the module docstring).
SCRIPT = """
(function () {
  function key(cell) {
    var text = cell.textContent.trim();
    var number = text.replace(/,/g, '').match(/^[-+]?(\\d+\\.?\\d*|\\.\\d+)(e[-+]?\\d+)?/i);
    if (text === '' || text === '-') return [2, 0];
    return number ? [0, parseFloat(number[0])] : [1, text.toLowerCase()];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    return a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0;
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('thead th').forEach(function (th, column) {
      th.title = 'sort by this column';
      th.addEventListener('click', function () {
        var descending = th.getAttribute('aria-sort') === 'ascending';
        table.querySelectorAll('thead th').forEach(function (other) {
          other.removeAttribute('aria-sort');
        });
        th.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var order = compare(key(a.cells[column]), key(b.cells[column]));
          return descending ? -order : order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
  window.addEventListener('load', function () {
    var boxes = [];
    document.querySelectorAll('figure, .table-wrap').forEach(function (element, index) {
      var box = element.getBoundingClientRect();
      var image = element.querySelector('img');
      boxes.push({index: index, kind: element.tagName.toLowerCase() === 'figure' ? 'figure' : 'table',
                  id: element.id, left: box.left + window.scrollX, top: box.top + window.scrollY,
                  width: box.width, height: box.height,
                  natural: image ? [image.naturalWidth, image.naturalHeight] : null,
                  complete: image ? image.complete : null});
    });
    document.getElementById('layout-check').textContent = JSON.stringify(
      {viewport: window.innerWidth, boxes: boxes});
  });
})();
"""


def inline(text: str) -> str:
    """``text`` escaped, with the report's inline Markdown: ``code``, bold, italic, links."""
    parts = _CODE.split(text)
    out = []
    for index, part in enumerate(parts):
        if index % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        part = html.escape(part, quote=False)
        part = _BOLD.sub(r"<strong>\1</strong>", part)
        part = _ITALIC.sub(r"<em>\1</em>", part)
        part = _LINK.sub(lambda m: f'<a href="{html.escape(m[2])}">{m[1]}</a>', part)
        out.append(part)
    return "".join(out)


def _slug(text: str, taken: set[str]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    found, number = slug, 2
    while found in taken:
        found, number = f"{slug}-{number}", number + 1
    taken.add(found)
    return found


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _table(lines: list[str], number: int) -> str:
    header, body = _cells(lines[0]), [_cells(line) for line in lines[1:]
                                      if not re.fullmatch(r"\|?(\s*:?-+:?\s*\|)+\s*", line)]
    head = "".join(f"<th scope=\"col\">{inline(cell)}</th>" for cell in header)
    rows = "\n".join("<tr>" + "".join(f"<td>{inline(cell)}</td>" for cell in row) + "</tr>"
                     for row in body)
    return (f'<div class="table-wrap" id="table-{number}"><table class="sortable">'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}\n</tbody></table></div>")


def _figure(alt: str, source: str, folder: Path, number: int) -> str:
    path = folder / source
    if "/" in source or not path.is_file():
        return f"<p>{inline(f'[{alt}]({source})')}</p>"  # not a chart of this report
    kind = "image/svg+xml" if path.suffix == ".svg" else "image/png"
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return (f'<figure id="figure-{number}"><img src="data:{kind};base64,{data}" '
            f'alt="{html.escape(alt)}"><figcaption>{html.escape(alt)}</figcaption></figure>')


def _blocks(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    """The Markdown's blocks: ("heading" | "table" | "image" | "list" | "para", lines)."""
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip():
            index += 1
            continue
        for kind, starts in (("table", "|"), ("list", "- ")):
            if line.startswith(starts):
                end = index
                while end < len(lines) and lines[end].startswith(starts):
                    end += 1
                yield kind, lines[index:end]
                index = end
                break
        else:
            if _HEADING.match(line) or _IMAGE.match(line.strip()):
                yield "heading" if _HEADING.match(line) else "image", [line.strip()]
                index += 1
                continue
            end = index
            while (end < len(lines) and lines[end].strip() and not _HEADING.match(lines[end])
                   and not lines[end].startswith(("|", "- "))
                   and not _IMAGE.match(lines[end].strip())):
                end += 1
            yield "para", lines[index:end]
            index = end


def markdown_to_html(text: str, folder: Path) -> tuple[str, list[tuple[str, str]]]:
    """``text`` (the report's Markdown) as HTML, its images read from ``folder`` and inlined;
    and its ``##`` headings as (id, title) for a contents list. What comes before the first
    ``##`` heading after the title is the findings, set apart."""
    out: list[str] = []
    contents: list[tuple[str, str]] = []
    taken: set[str] = {"findings"}
    figures = tables = 0
    opened = False
    for kind, block in _blocks(text.splitlines()):
        if kind == "heading":
            found = _HEADING.match(block[0])
            assert found is not None
            level, title = len(found["level"]), found["text"]
            if level <= 2 and opened:
                out.append("</section>")
                opened = False
            slug = _slug(title, taken)
            if level == 2:
                contents.append((slug, title))
            out.append(f'<h{level} id="{slug}">{inline(title)}</h{level}>')
            if level == 1:
                out.append('<section class="findings" id="findings">')
                opened = True
        elif kind == "table":
            tables += 1
            out.append(_table(block, tables))
        elif kind == "image":
            found = _IMAGE.match(block[0])
            assert found is not None
            figures += 1
            out.append(_figure(found["alt"], found["src"], folder, figures))
        elif kind == "list":
            out.append("<ul>" + "".join(f"<li>{inline(item[2:])}</li>" for item in block)
                       + "</ul>")
        else:
            out.append(f"<p>{inline(' '.join(line.strip() for line in block))}</p>")
    if opened:
        out.append("</section>")
    return "\n".join(out), contents


def page(title: str, body: str, contents: list[tuple[str, str]]) -> str:
    """A whole HTML document: ``body`` after a contents list, the style and the script inline."""
    items = "".join(f'<li><a href="#{slug}">{inline(text)}</a></li>' for slug, text in contents)
    nav = (f'<nav class="contents" aria-label="Contents"><ol><li><a href="#findings">What this '
           f"run found</a></li>{items}</ol></nav>") if contents else ""
    first, _, rest = body.partition("\n")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
            f"{first}\n{nav}\n{rest}\n"
            '<pre id="layout-check" hidden></pre>\n'
            f"<script>{SCRIPT}</script>\n</body>\n</html>\n")


def write_html(markdown: str, folder: Path, name: str = "report.html") -> Path:
    """Write ``folder/name`` from the report's Markdown and the charts in ``folder``."""
    body, contents = markdown_to_html(markdown, folder)
    title = next((line[2:] for line in markdown.splitlines() if line.startswith("# ")),
                 "mgmtbench report")
    path = folder / name
    path.write_text(page(title, body, contents), encoding="utf-8")
    return path
