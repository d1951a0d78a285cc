"""A report's views: one self-contained HTML page (inline CSS and SVG, no script, no network) and Markdown.

Both come from the same data (`memopt.report.build`) through Jinja2 templates: the page autoescapes every value,
the Markdown escapes table cells. Case links point at ``cases/<case id>.html`` beside the page (the graph views
`memopt.report.output` writes).
"""

from __future__ import annotations

from typing import Any

from memopt.report.charts import TYPE_COLORS, funnel_svg, groups_svg, matrix_svg, rounds_svg

__all__ = ["report_html", "report_markdown"]

_CSS = """
body{font:14px/1.5 system-ui,sans-serif;margin:0;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:24px;margin:0 0 4px} h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid #d0d7de}
h3{font-size:16px;margin:24px 0 4px} .meta{color:#59636e} .sim{color:#9a6700}
.stats{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.stat{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px} .stat b{font-size:20px;display:block}
table{border-collapse:collapse;margin:8px 0} td,th{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top}
th{background:#f6f8fa;text-align:left} td.n{text-align:right}
.group{border-left:4px solid var(--c);padding:2px 0 8px 14px;margin:18px 0}
.advice{background:#f6f8fa;border-radius:6px;padding:8px 12px} blockquote{margin:6px 0;color:#59636e;
border-left:3px solid #d0d7de;padding-left:10px} pre{white-space:pre-wrap;background:#f6f8fa;padding:8px 12px}
.err{color:#cf222e} details{margin:6px 0}
"""

_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>{{ r.title }}</title><style>{{ css }}</style></head>
<body><main>
<h1>{{ r.title }}</h1>
<p class="meta">{{ r.source }} · {{ r.kind }}{% if r.pipeline %} · pipeline {{ r.pipeline }}{% endif %} · written
{{ r.written }}{% if r.simulated %} · <span class="sim">simulated LM (SimLM)</span>{% endif %}</p>
<div class="stats">
<div class="stat" data-figure="n"><b>{{ r.n }}</b>failed cases</div>
<div class="stat"><b>{{ r.groups|length }}</b>mechanisms</div>
{% if r.behind %}<div class="stat"><b>{{ r.behind }}</b>answer-op faults behind them</div>{% endif %}
{% if r.flagged %}<div class="stat"><b>{{ r.flagged }}</b>flagged by reviewers, left out</div>{% endif %}
</div>
{% for name, message in r.damaged.items() %}<p class="err">Damaged graph {{ name }}: {{ message }}</p>{% endfor %}
{% if r.unplaced %}<p class="err">{{ r.unplaced|length }} attributed case(s) are on damaged graphs and are not shown
(e.g. {{ r.unplaced[0] }}).</p>{% endif %}
{% if r.summary %}<h2>Summary</h2><p>{{ r.summary }}</p>{% endif %}
{% if r.writer_error %}<p class="err">The writer LM stopped: {{ r.writer_error }}</p>{% endif %}
<h2>Failures by error type and operation</h2>
{{ charts.matrix|safe }}
<div class="stats"><table data-figure="by_error_type"><tr><th>error type</th><th>n</th></tr>
{% for t, n in r.counts.by_error_type.items() %}<tr><td>{{ t }}</td><td class="n" data-type="{{ t }}">{{ n }}</td></tr>
{% endfor %}</table>
<table data-figure="by_operation"><tr><th>operation</th><th>n</th></tr>
{% for op, n in r.counts.by_operation.items() %}<tr><td>{{ op }}</td><td class="n" data-op="{{ op }}">{{ n }}</td></tr>
{% endfor %}</table></div>
{% if r.rounds %}<h2>By round</h2>{{ charts.rounds|safe }}{% endif %}
<h2>Evidence</h2>
<p>{{ r.evidence.gold }} case(s) with gold evidence turns, {{ r.evidence.found_by_words }} with evidence found by words
(bm25){% if r.evidence.none %}, {{ r.evidence.none }} without{% endif %}.
{% if r.evidence.retrieval_recall is not none %}
Evidence retrieval recall: {{ r.evidence.retrieval_recall }}.{% endif %}</p>
{% if r.evidence.funnel_cases %}{{ charts.funnel|safe }}{% endif %}
<h2>Recurring mechanisms</h2>
{{ charts.groups|safe }}
{% for g in r.groups %}
<section class="group" id="group-{{ loop.index }}" data-key="{{ g.key }}"
 style="--c:{{ colors.get(g.error_type, '#888') }}">
<h3>#{{ loop.index }} · {{ g.title }}</h3>
<p class="meta">{{ g.n }} case(s), {{ '%.0f'|format(g.share * 100) }}% of the failures, in {{ g.conversations }}
conversation(s)</p>
{% if g.paragraph %}<p>{{ g.paragraph }}</p>{% endif %}
<p class="advice"><b>What to change first:</b> {{ g.advice }}</p>
{% if g.sentences %}<p>The prompt of <code>{{ g.operation }}</code>{% if g.prompt_version %} (version
{{ g.prompt_version }}){% endif %} says:</p>{% for s in g.sentences %}<blockquote>{{ s }}</blockquote>{% endfor %}
{% elif g.has_prompt %}<p>No sentence of <code>{{ g.operation }}</code>'s prompt bears on it.</p>
{% else %}<p><code>{{ g.operation }}</code> has no prompt: knobs or the ops that steer it decide.</p>{% endif %}
<table><tr><th>case</th><th>question</th><th>expected</th><th>answered</th><th>date</th><th>why</th></tr>
{% for c in g.representatives %}<tr><td><a href="{{ c.link }}" data-case="{{ c.case_id }}">{{ c.case_id }}</a></td>
<td>{{ c.question }}</td><td>{{ c.expected }}</td><td>{{ c.prediction }}</td><td>{{ c.date }}</td>
<td>{{ c.reason }}</td></tr>
{% endfor %}</table>
<details><summary>all {{ g.n }} case ids</summary><p>{{ g.cases|join(', ') }}</p></details>
</section>
{% endfor %}
<h2>The system</h2><pre>{{ r.overview }}</pre>
<h2>What the diagnosis took</h2>
<table>{% for k, v in r.cost.items() %}<tr><td>{{ k }}</td><td>{{ v|plain }}</td></tr>{% endfor %}</table>
</main></body></html>
"""

_MARKDOWN = """# {{ r.title }}

{{ r.source }} · {{ r.kind }}{% if r.pipeline %} · pipeline `{{ r.pipeline }}`{% endif %} · written {{ r.written }}
{%- if r.simulated %} · simulated LM (SimLM){% endif %}

**{{ r.n }} failed cases**, {{ r.groups|length }} mechanisms
{%- if r.behind %}; {{ r.behind }} answer-op faults behind them{% endif %}
{%- if r.flagged %}; {{ r.flagged }} flagged by reviewers, left out{% endif %}.
{% for name, message in r.damaged.items() %}
- Damaged graph {{ name }}: {{ message|cell }}
{%- endfor %}
{% if r.summary %}
## Summary

{{ r.summary }}
{% endif %}
## Failures by error type and operation

| operation | {% for t in types %}{{ t }} | {% endfor %}all |
|---|{% for t in types %}---:|{% endfor %}---:|
{% for op, row in r.counts.matrix.items() -%}
| {{ op }} | {% for t in types %}{{ row.get(t, '') }} | {% endfor %}{{ r.counts.by_operation[op] }} |
{% endfor -%}
| all | {% for t in types %}{{ r.counts.by_error_type.get(t, '') }} | {% endfor %}{{ r.n }} |
{% if r.rounds %}
## By round

| round | {% for t in types %}{{ t }} | {% endfor %}
|---|{% for t in types %}---:|{% endfor %}
{% for x in r.rounds -%}
| {{ x.round }} | {% for t in types %}{{ x.failures.get(t, '') }} | {% endfor %}
{% endfor -%}
{% endif %}
## Evidence

{{ r.evidence.gold }} case(s) with gold evidence turns, {{ r.evidence.found_by_words }} with evidence found by words.
{%- if r.evidence.funnel_cases %} Of the {{ r.evidence.funnel_cases }} with gold evidence, its information entered
memory in {{ r.evidence.reached.memory }}, the store held it at question time in {{ r.evidence.reached.question_time }},
it reached the answer's context in {{ r.evidence.reached.context }} (unanswerable questions left out).{% endif %}

## Recurring mechanisms
{% for g in r.groups %}
### #{{ loop.index }} · {{ g.title }}

{{ g.n }} case(s), {{ '%.0f'|format(g.share * 100) }}% of the failures, in {{ g.conversations }} conversation(s).
{% if g.paragraph %}
{{ g.paragraph }}
{% endif %}
**What to change first:** {{ g.advice }}
{% if g.sentences %}
The prompt of `{{ g.operation }}` says:
{% for s in g.sentences %}
> {{ s }}
{% endfor %}{% elif g.has_prompt %}
No sentence of `{{ g.operation }}`'s prompt bears on it.
{% endif %}
| case | question | expected | answered | why |
|---|---|---|---|---|
{% for c in g.representatives -%}
| [{{ c.case_id }}]({{ c.link }}) | {{ c.question|cell }} | {{ c.expected|cell }} | {{ c.prediction|cell }} |
{{- ' ' }}{{ c.reason|cell }} |
{% endfor %}
{%- endfor %}

## What the diagnosis took

{% for k, v in r.cost.items() -%}
- {{ k }}: {{ v|plain }}
{% endfor %}"""


def _cell(value: Any) -> str:
    return " ".join(str(value).split()).replace("|", "\\|")


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "—"
    return "—" if value is None else str(value)


def _environment(autoescape: bool) -> Any:
    import jinja2

    env = jinja2.Environment(autoescape=autoescape, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    env.filters["cell"] = _cell
    env.filters["plain"] = _plain
    return env


def report_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page."""
    charts = {"matrix": matrix_svg(report["counts"]["matrix"]), "groups": groups_svg(report["groups"]),
              "rounds": rounds_svg(report["rounds"]) if report["rounds"] else "",
              "funnel": funnel_svg(report["evidence"])}
    data = {"writer_error": None, **report}
    return _environment(True).from_string(_HTML).render(r=data, css=_CSS, charts=charts, colors=TYPE_COLORS)


def report_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown (the same content as the page, charts as tables)."""
    types = list(report["counts"]["by_error_type"])
    return _environment(False).from_string(_MARKDOWN).render(r=report, types=types)
