"""The Go text/template evaluator (promoter/gotemplate): Go's language, its printing, the sprig
subset and Kalypso's functions, errors with lines, and the sandbox's limits. Expected outputs are
what Go's text/template with sprig v2.22.0 (Kalypso's) prints for the same template and data;
the oracle's own cases are ``tests/kalypso/test_vectors.py``."""

from __future__ import annotations

from typing import Any

import pytest

from promoter.errors import TemplateError
from promoter.gotemplate import GoTemplate, Limits, StringMap, Struct

DATA = Struct(
    Name="web",
    Namespace="dev-team-web",
    Labels=StringMap({"tier": "gold", "edge": "true"}),
    Config={
        "REGION": "West US",
        "REPLICAS": 3,
        "RATIO": 0.5,
        "LIST": ["a", "b"],
        "NESTED": {"k": "v"},
        "NULL": None,
    },
    Items=["x", "y", "z"],
    Empty=[],
    Zero=0,
)


def run(source: str, data: Any = DATA, **kwargs: Any) -> str:
    return GoTemplate(source, "t.yaml", **kwargs).render(data)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("name: {{ .Name }}", "name: web"),
        # a missing key by field syntax is no value, for map[string]string too; index gives ""
        ('{{ .Labels.tier }}/{{ .Labels.missing }}/{{ index .Labels "missing" }}/', "gold/<no value>//"),
        ("{{ .Config.missing.deeper }}|{{ .Config.NULL }}", "<no value>|<no value>"),  # nil prints so
        ("{{ .Config.missing }}", "<no value>"),  # map[string]interface{}: no value
        (
            "{{ .Config.REPLICAS }} {{ .Config.RATIO }} {{ .Config.LIST }} {{ .Config.NESTED }}",
            "3 0.5 [a b] map[k:v]",
        ),
        ("a  {{- .Name -}}  b", "awebb"),
        ("a {{- /* a comment */ -}} b", "ab"),
        ("{{/* only a comment */}}", ""),
        ("{{ if .Empty }}yes{{ else if .Zero }}zero{{ else }}no{{ end }}", "no"),
        ("{{ with .Labels.tier }}[{{ . }}]{{ end }}{{ with .Empty }}x{{ else }}none{{ end }}", "[gold]none"),
        ("{{ range $i, $v := .Items }}{{ $i }}={{ $v }} {{ end }}", "0=x 1=y 2=z "),
        ("{{ range $k, $v := .Labels }}{{ $k }}:{{ $v }};{{ end }}", "edge:true;tier:gold;"),  # sorted keys
        ("{{ range .Empty }}x{{ else }}empty{{ end }}", "empty"),
        (
            '{{ range .Items }}{{ if eq . "y" }}{{ continue }}{{ end }}{{ if eq . "z" }}{{ break }}{{ end }}{{ . }}{{ end }}',
            "x",
        ),
        ("{{ range 3 }}{{ . }}{{ end }}", "012"),
        ("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}", "2"),
        ("{{ $.Name }}{{ with .Labels }}{{ $.Name }}{{ end }}", "webweb"),
        (
            '{{ define "row" }}<{{ . }}>{{ end }}{{ template "row" .Name }}{{ block "b" 1 }}[{{ . }}]{{ end }}',
            "<web>[1]",
        ),
        (
            '{{ (index .Items 1) }} {{ index .Labels "tier" }} {{ slice .Items 1 }} {{ slice .Name 1 2 }}',
            "y gold [y z] e",
        ),
        ('{{ len .Items }} {{ len "héllo" }} {{ len .Labels }}', "3 6 2"),  # len of a string counts bytes
        ('{{ and 1 0 2 }} {{ or 0 "" "x" }} {{ not .Empty }}', "0 x true"),
        ("{{ or .Name .Nope }}", "web"),  # or stops at the first true argument
        ('{{ eq .Name "a" "web" }} {{ ne 1 2 }} {{ lt 1 2 }} {{ ge "b" "a" }}', "true true true true"),
        (
            '{{ printf "%s-%d-%q-%v-%5.2f|%-4s|%03d" "a" 7 "q" .Items 3.14159 "ab" 5 }}',
            'a-7-"q"-[x y z]- 3.14|ab  |005',
        ),
        ('{{ print 1 2 "a" 3 }} {{ println "x" 1 }}', "1 2a3 x 1\n"),
        ("{{ 1.0 }} {{ 1e21 }} {{ 0.00001 }} {{ 0x1F }} {{ 'a' }} {{ -2 }}", "1 1e+21 1e-05 31 97 -2"),
        # %v of a float64 is %g, shortest: exponent form from 1e6 on (fmt.Println(1e6) is 1e+06)
        (
            '{{ 100000.0 }} {{ 123456.0 }} {{ 1000000.0 }} {{ printf "%v %g" 1e6 1234567.0 }}',
            "100000 123456 1e+06 1e+06 1.234567e+06",
        ),
        ('{{ .Name | printf "%s!" | printf "%s?" }}', "web!?"),
        ("{{ (.Labels).tier }}", "gold"),
        (
            '{{ html "<a href=\'x\'>&</a>" }} {{ urlquery "a b&c" }} {{ js "it\'s" }}',
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt; a+b%26c it\\'s",
        ),
    ],
)
def test_go_template_language(source: str, expected: str) -> None:
    assert run(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('{{ .Config.missing | default "d" }} {{ default "d" .Name }} {{ default 5 .Zero }}', "d web 5"),
        ('{{ empty .Empty }} {{ coalesce .Zero "" .Name }} {{ ternary "y" "n" true }}', "true web y"),
        (
            '{{ quote .Name "x\\"y" }} {{ squote .Name }} {{ .Config.REPLICAS | quote }}',
            '"web" "x\\"y" \'web\' "3"',
        ),
        (
            '{{ upper .Name }} {{ lower "AB" }} {{ title "hello world" }} {{ trim "  x " }}',
            "WEB ab Hello World x",
        ),
        (
            '{{ trimPrefix "dev-" .Namespace }} {{ trimSuffix "-web" .Namespace }} {{ replace "-" "_" .Namespace }}',
            "team-web dev-team dev_team_web",
        ),
        (
            '{{ contains "team" .Namespace }} {{ hasPrefix "dev" .Namespace }} {{ hasSuffix "x" .Namespace }}',
            "true true false",
        ),
        (
            '{{ trunc 3 .Namespace }} {{ substr 4 8 .Namespace }} {{ repeat 3 "ab" }} {{ nospace "a b c" }}',
            "dev team ababab abc",
        ),
        ('{{ "a\\nb" | indent 2 }}|{{ "a" | nindent 4 }}', "  a\n  b|\n    a"),
        (
            "{{ toYaml .Config }}",
            'LIST:\n    - a\n    - b\nNESTED:\n    k: v\n"NULL": null\nRATIO: 0.5\nREGION: West US\nREPLICAS: 3',
        ),
        ('{{ toYaml (dict "a" "true" "b" "1" "c" "*.yaml") }}', 'a: "true"\nb: "1"\nc: \'*.yaml\''),
        # yaml.v3 writes a string of several lines as a literal block, indented 4
        ('{{ toYaml (dict "a" "x\\ny" "b" "x\\n") }}', "a: |-\n    x\n    y\nb: |\n    x"),
        ('{{ toJson .Labels }} {{ toJson (list 1 "<") }}', '{"edge":"true","tier":"gold"} [1,"\\u003c"]'),
        # Kalypso's stringify: toYaml of anything but a map[string]interface{}, whose maps and
        # lists become YAML text first
        ("{{ stringify .Config.NESTED }}|{{ stringify .Config.LIST }}", "k: v|- a\n- b"),
        (
            "{{ stringify .Config.REGION }}|{{ stringify .Config.RATIO }}|{{ stringify .Config.NOPE }}",
            "West US|0.5|null",
        ),
        ('{{ stringify (dict "l" (list 1) "s" "yes") }}', 'l: |\n    - 1\ns: "yes"'),
        # Kalypso's unquote: spaces, then quotes, trimmed; "" for what is not a string
        (
            """{{ unquote " \\"a b\\" " }}|{{ unquote "'x'" }}|{{ unquote "plain" }}|{{ unquote 3 }}|""",
            "a b|x|plain||",
        ),
        (
            '{{ join "," (sortAlpha (keys .Labels)) }} {{ splitList "-" .Namespace }} {{ first .Items }} {{ last .Items }}',
            "edge,tier [dev team web] x z",
        ),
        (
            '{{ hasKey .Labels "tier" }} {{ index .Labels "nope" }}| {{ has "y" .Items }} {{ uniq (list 1 1 2) }}',
            "true | true [1 2]",
        ),
        (
            '{{ add 1 2 3 }} {{ sub 5 7 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod -7 2 }} {{ max 1 9 3 }} {{ int "42" }}',
            "6 -2 6 3 -1 9 42",
        ),
        ('{{ b64enc "hi" }} {{ b64dec "aGk=" }} {{ sha256sum "" | trunc 8 }}', "aGk= hi e3b0c442"),
    ],
)
def test_sprig_and_kalypso_functions(source: str, expected: str) -> None:
    assert run(source) == expected


def test_hash_is_stable_and_tells_values_apart() -> None:
    first = run("{{ hash .Config }}")
    assert first == run("{{ hash .Config }}") and first.isdigit() and int(first) < 2**64
    assert first != run("{{ hash .Labels }}")


def test_html_escape_as_html_template_wrote_values() -> None:
    data = Struct(X="a&b'<c>\"+")
    assert run('v: "{{ .X }}"', data, escape_html=True) == 'v: "a&amp;b&#39;&lt;c&gt;&#34;&#43;"'
    assert run('v: "{{ .X }}"', data) == 'v: "a&b\'<c>"+"'


@pytest.mark.parametrize(
    ("source", "line", "says"),
    [
        ("{{ .Nope }}", 1, "can't evaluate field Nope in type struct"),
        ("a\n\n{{ nofunc 1 }}", 3, 'function "nofunc" not defined'),
        ("{{ if .Name }}\nx", 1, "unexpected EOF"),
        ("x\n{{ end }}", 2, "unexpected {{end}}"),
        ("{{ .Config.NULL.deeper }}", 1, "nil pointer evaluating interface {}.deeper"),
        ('{{ get .Labels "tier" }}', 1, 'function "get" not defined'),  # sprig v3 only
        ("{{ eq 1 1.0 }}", 1, "incompatible types for comparison"),
        ("{{ upper .Config.REPLICAS }}", 1, "wrong type for value; expected string; got int"),
        ('{{ replace "1" "2" 5432 }}', 1, "expected string; found 5432"),
        ("{{ upper 1 2 }}", 1, "wrong number of args for upper: want 1 got 2"),
        ("{{ .Name 1 }}", 1, "can't give argument to non-function"),
        ("{{ break }}", 1, "{{break}} outside {{range}}"),
        ("{{ .Name", 1, "unclosed action"),
        ("{{ index .Items 7 }}", 1, "index out of range: 7"),
        ("{{ eq .Items 1 }}", 1, "non-comparable type"),
        ('{{ required "REGION is needed" .Config.REGIONX }}', 1, "REGION is needed"),
        ('{{ template "nope" }}', 1, 'no such template "nope"'),
        ('{{ env "HOME" }}', 1, 'function "env" not defined'),  # no environment
        ('{{ expandenv "$HOME" }}', 1, 'function "expandenv" not defined'),
        ('{{ readFile "/etc/passwd" }}', 1, 'function "readFile" not defined'),  # no files
        ("{{ $x }}", 1, "undefined variable: $x"),
        ("{{ 3 | 4 }}", 1, "can't give argument to non-function 4"),
        ("{{ ( .Name }}", 1, "unclosed left paren"),
        ("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}", 1, "more than 100 nested parentheses"),
        ("{{ if 1 }}" * 500 + "{{ end }}" * 500, 1, "more than 100 nested actions"),
    ],
)
def test_errors_name_the_file_and_line(source: str, line: int, says: str) -> None:
    with pytest.raises(TemplateError) as err:
        run(source)
    assert err.value.file == "t.yaml"
    assert err.value.line == line
    assert says in err.value.message


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ('{{ repeat 100000000 "xx" }}', "over the limit"),
        ("{{ range 100000 }}{{ range 100000 }}{{ end }}{{ end }}", "steps"),
        ('{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}', "nested more than"),
        ('{{ $s := "xxxxxxxxxx" }}{{ range 20 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ $s }}', "limit"),
        ("{{ range 2000 }}xxxxxxxxxx{{ end }}", "output over the limit"),
        ('{{ printf "%999999999d" 1 }}', "limit"),
        ('{{ "x" | indent 99999999 }}', "limit"),
    ],
)
def test_the_sandbox_bounds_work_and_output(source: str, says: str) -> None:
    with pytest.raises(TemplateError) as err:
        run(source, limits=Limits(output=10_000, steps=100_000, seconds=5))
    assert says in err.value.message


def test_the_time_limit_stops_a_long_run() -> None:
    with pytest.raises(TemplateError, match="took longer than"):
        run("{{ range 1000000 }}{{ end }}", limits=Limits(steps=10_000_000, seconds=0.0))
