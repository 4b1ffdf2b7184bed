"""Snippets that pin the jinja2/Python semantics heron's template engine must match.

Each entry is (template source, context). tools/gen_template_refs.py renders them with
jinja2 in the transformers environment into tests/fixtures/templates/features.json (the
expected text, or the error jinja2 raised).
"""

MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello", "tool_calls": [
            {"function": {"name": "f", "arguments": {"b": 2, "a": [1, "x", None, True, 1.5]}}}]}]
DATA = {"messages": MSGS, "d": {"b": 1, "a": 2, "C": 3}, "xs": [3, 1, 2], "s": "Hello World",
        "u": "Ünïcödé ß ﬁ 🌍", "n": None, "t": True, "f": 0.5, "i": -7, "empty": [],
        "users": [{"name": "bo", "age": 30, "city": "NY"}, {"name": "Al", "age": 25, "city": "ny"},
                  {"name": "cy", "age": 30}]}

ODD = {"odd": [{"role": "user", "content": "a"}, {"content": "no role"}, {"role": 3, "content": "int"},
               {"role": None, "content": "none"}, {"role": "tool", "content": "t"},
               {"role": "assistant", "content": "b"}, {"role": "assistant", "content": ""}]}

FEATURES = [
    # ---------------------------------------------------------------- whitespace control
    ("a\n{% if true %}\nb\n{% endif %}\nc\n", {}),
    ("a\n    {% if true %}\n    b\n    {% endif %}\nc", {}),
    ("a  {% if true %}b{% endif %}  c", {}),
    ("a\n  {%- if true -%}\n  b  \n  {%- endif -%}\n  c", {}),
    ("a\n  {%+ if true %}b{% endif +%}\nc", {}),
    ("x  {{- 'y' -}}  z\n  {{ 'w' }}\n", {}),
    ("a\n  {# comment #}\nb\n  {#- c -#}  \n c", {}),
    ("line1\r\nline2\rline3\n\n", {}),
    ("{% raw %}{{ not evaluated }}{% endraw %}\n  {%- raw -%}  x {% if %}  {%- endraw %}|", {}),
    ("  {% for i in [1,2] %}\n  [{{ i }}]\n  {% endfor %}\n", {}),
    ("{% for i in [1,2] %}{{ i }}{% endfor %}\n\n", {}),
    ("{{ '{{' }} {{ '}}' }} {{ {'a': {'b': 1}} }}", {}),
    ("a\t{% if true %}\t\nb", {}),
    ("\u3000{% if true %}x{% endif %}", {}),
    # ---------------------------------------------------------------- literals, repr, str()
    ("{{ 1.0 }} {{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-7 }} {{ 0.0001 }} {{ -0.0 }} {{ 3.14159 }}", {}),
    ("{{ 10 / 4 }} {{ 10 / 5 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }}", {}),
    ("{{ 2 ** 10 }} {{ 2 ** -1 }} {{ 2 ** 0.5 }} {{ 1_000 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1.5e3 }}", {}),
    ("{{ [1, 'a', None, True, 1.5, [2], {'k': 'v'}] }} {{ (1,) }} {{ (1, 2) }} {{ () }}", {}),
    ("{{ {'a': 1, 'b': [1, 2]} }} {{ {} }} {{ [] }} {{ none }} {{ True }} {{ false }}", {}),
    ("{{ \"it's\" }} {{ ['it\\'s', \"q\\\"d\", 'b\\\\s', 'n\\nl', 't\\tt', '\\x01', 'é', '\\u200b', '\\xa0'] }}", {}),
    ("{{ ['a\"b', \"a'b\", 'a\\'b\"c'] }}", {}),
    ("{{ 'a' 'b' }} {{ \"x\\x41\\u00e9\\U0001F600\" }} {{ '\\d' }}", {}),
    ("{{ messages }}", DATA),
    ("{{ d }} {{ d.items() | list }} {{ d.keys() | list }} {{ d.values() | list }}", DATA),
    ("{{ u }} {{ u | length }} {{ u[0] }} {{ u[-1] }} {{ u[1:4] }} {{ u[::-1] }} {{ u.upper() }} {{ u.lower() }}", DATA),
    ("{{ n }} {{ t }} {{ f }} {{ i }} {{ undefined_var }}|{{ undefined_var is defined }}", DATA),
    # ---------------------------------------------------------------- operators
    ("{{ 'a' ~ 1 ~ none ~ true ~ [1] ~ undefined_var }}", {}),
    ("{{ 'ab' * 3 }} {{ 3 * 'ab' }} {{ [1] * 3 }} {{ 'x' * 0 }} {{ [1, 2] + [3] }} {{ (1,) + (2,) }}", {}),
    ("{{ 1 + 1.5 }} {{ true + 1 }} {{ 1 == 1.0 }} {{ 1 == true }} {{ 'a' == 'a' }} {{ [1,2] == [1,2] }} {{ (1,) == [1] }}", {}),
    ("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }} {{ 'a' < 'b' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2.0 }} {{ 1 != 2 }}", {}),
    ("{{ 'a' in 'cat' }} {{ 'z' not in 'cat' }} {{ 1 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 2 in {'k': 1} }} {{ 1 in (1, 2) }}", {}),
    ("{{ 'x' in undefined_var }} {{ none == none }} {{ undefined_var == undefined_other }} {{ undefined_var == none }}", {}),
    ("{{ 1 and 2 }} {{ 0 and 2 }} {{ 0 or 'b' }} {{ '' or [] }} {{ not 0 }} {{ not [] }} {{ not 'a' }}", {}),
    ("{{ 'y' if true }} {{ 'y' if false }}|{{ 'a' if 0 else 'b' if 0 else 'c' }}", {}),
    ("{{ -2 ** 2 }} {{ (-2) ** 2 }} {{ -xs | length }} {{ - 3 | abs }}", DATA),
    ("{{ 1 + 2 * 3 - 4 / 2 }} {{ (1 + 2) * 3 }} {{ 2 * 3 ~ 4 }} {{ 1 ~ 2 + 3 }}", {}),
    ("{{ 1 / 0 }}", {}),
    ("{{ 'a' + 1 }}", {}),
    ("{{ 1 + 'a' }}", {}),
    ("{{ [] + 'a' }}", {}),
    ("{{ 'a' < 1 }}", {}),
    ("{{ 1 in 'abc' }}", {}),
    ("{{ 2 in none }}", {}),
    ("{{ undefined_var + 1 }}", {}),
    ("{{ -'a' }}", {}),
    # ---------------------------------------------------------------- subscripts, attributes
    ("{{ xs[0] }} {{ xs[-1] }} {{ xs[5] }}|{{ xs.0 }} {{ xs[1:] }} {{ xs[:-1] }} {{ xs[::2] }} {{ xs[::-1] }} {{ xs[5:1:-2] }}", DATA),
    ("{{ s[0:5] }} {{ s[-5:] }} {{ s[100:] }}|{{ s[:100] }} {{ s[::-2] }} {{ s[-100:-50] }}|", DATA),
    ("{{ messages[0].role }} {{ messages[0]['content'] }} {{ messages[2].tool_calls[0].function.arguments.a }}", DATA),
    ("{{ d.items is defined }} {{ d['items'] is defined }} {{ d.missing is defined }} {{ d.missing }}|{{ d.get('missing') }} {{ d.get('a') }} {{ d.get('x', 5) }}", DATA),
    ("{{ d.missing.x }}", DATA),
    ("{{ undefined_var.x }}", {}),
    ("{{ undefined_var['x'] }}", {}),
    ("{{ undefined_var() }}", {}),
    ("{{ none.x }}|{{ none.x is defined }}", {}),
    ("{{ s.nope }}|{{ s.nope is defined }} {{ s.upper is defined }} {{ xs.append is defined }}", DATA),
    ("{{ xs.append(1) }}", DATA),
    ("{{ d.update({'a': 1}) }}", DATA),
    ("{{ d.__class__ }}|{{ s.__len__ is defined }}", DATA),
    ("{{ xs['x'] }}|{{ xs[0:1:0] }}", DATA),
    # ---------------------------------------------------------------- tests
    ("{% for v in [none, true, 0, 1.5, 'a', [1], {'a': 1}, (1,), undefined_var] %}"
     "{{ v is none }}{{ v is boolean }}{{ v is integer }}{{ v is float }}{{ v is number }}"
     "{{ v is string }}{{ v is mapping }}{{ v is sequence }}{{ v is iterable }}{{ v is defined }}"
     "{{ v is true }}{{ v is false }}{{ v is callable }}\n{% endfor %}", {}),
    ("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 'ab' is lower }} {{ 'AB' is upper }} {{ 'aB' is lower }}", {}),
    ("{{ 1 is eq 1 }} {{ 1 is ne 2 }} {{ 1 is lt 2 }} {{ 2 is gt 1 }} {{ 1 is le 1 }} {{ 1 is ge 2 }} {{ 'a' is in 'abc' }} {{ 1 is equalto 1 }} {{ 1 is sameas 1 }} {{ none is sameas none }}", {}),
    ("{{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }} {{ xs|map('string') is iterable }} {{ xs|map('string') is sequence }}", DATA),
    ("{{ range is callable }} {{ xs is not string }} {{ not xs is string }} {{ s is not none and s is string }}", DATA),
    # ---------------------------------------------------------------- filters
    ("{{ '  a b  ' | trim }}|{{ 'xxaxx' | trim('x') }}|{{ s | upper }} {{ s | lower }} {{ 'hello WORLD-foo(bar' | title }} {{ 'hELLO wORLD' | capitalize }}", DATA),
    ("{{ s | length }} {{ xs | count }} {{ d | length }} {{ undefined_var | length }} {{ u | length }}", DATA),
    ("{{ undefined_var | default('dflt') }} {{ '' | default('e') }} {{ '' | default('e', true) }} {{ none | default('n') }} {{ false | d('x', boolean=true) }}", {}),
    ("{{ xs | join(', ') }} {{ xs | join }} {{ 'abc' | join('-') }} {{ users | join(', ', attribute='name') }} {{ d | join('|') }}", DATA),
    ("{{ xs | first }} {{ xs | last }} {{ 'abc' | first }} {{ empty | first }}|{{ d | first }} {{ d | last }}", DATA),
    ("{{ s | replace('o', '0') }} {{ s | replace('o', '0', 1) }} {{ s | replace('', '-') }}", DATA),
    ("{{ xs | list }} {{ 'ab' | list }} {{ d | list }} {{ d | items | list }} {{ undefined_var | list }}", DATA),
    ("{{ xs | sort }} {{ xs | sort(reverse=true) }} {{ ['b', 'A', 'c'] | sort }} {{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}", DATA),
    ("{{ users | sort(attribute='age') | map(attribute='name') | list }} {{ users | sort(attribute='age,name') | map(attribute='name') | join }} {{ users | sort(attribute='age', reverse=true) | map(attribute='name') | join }}", DATA),
    ("{{ d | dictsort }} {{ d | dictsort(true) }} {{ d | dictsort(reverse=true) }} {{ d | dictsort(false, 'value') }}", DATA),
    ("{{ [1, 2, 1, 'a', 'A'] | unique | list }} {{ ['a', 'A'] | unique(case_sensitive=true) | list }} {{ users | unique(attribute='age') | map(attribute='name') | list }}", DATA),
    ("{{ users | map(attribute='city') | list }} {{ users | map(attribute='city', default='?') | list }} {{ xs | map('string') | join('+') }} {{ ['a', 'b'] | map('upper') | list }}", DATA),
    ("{{ xs | select('odd') | list }} {{ xs | reject('odd') | list }} {{ [0, 1, '', 'a'] | select | list }} {{ xs | select('gt', 1) | list }}", DATA),
    ("{{ users | selectattr('city') | map(attribute='name') | list }} {{ users | rejectattr('city') | list }} {{ users | selectattr('age', 'equalto', 30) | map(attribute='name') | list }} {{ messages | selectattr('role', '==', 'user') | list | length }}", DATA),
    ("{{ xs | map('string') | length }}", DATA),
    ("{{ (xs | select('odd')) is defined }} {{ d.keys() }} {{ d.values() | length }} {{ d.items() | first }}", DATA),
    ("{{ d.keys() | tojson }}", DATA),
    ("{{ d.keys()[0] }}", DATA),
    ("{{ empty | select('odd') | list }} {{ (empty | select('odd')) is defined }}{% if empty | select %}T{% endif %}", DATA),
    ("{{ xs | max }} {{ xs | min }} {{ users | max(attribute='age') }} {{ ['b', 'A'] | max }} {{ empty | max }}|{{ xs | sum }} {{ users | sum(attribute='age') }} {{ [0.5, 1] | sum(start=1) }}", DATA),
    ("{{ xs | reverse | list }} {{ 'abc' | reverse }} {{ d | reverse | list }}", DATA),
    ("{{ '42' | int }} {{ ' 42 ' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(5) }} {{ '0x1A' | int(0, 16) }} {{ 3.9 | int }} {{ -3.9 | int }} {{ true | int }} {{ none | int }} {{ '1_000' | int }}", {}),
    ("{{ '4.5' | float }} {{ 'x' | float }} {{ 3 | float }} {{ '1e3' | float }} {{ ' -2.5 ' | float }} {{ 'nan' | float }} {{ 'inf' | float }}", {}),
    ("{{ 2.5 | round }} {{ 3.5 | round }} {{ 2.675 | round(2) }} {{ 42.55 | round(1, 'floor') }} {{ 42.51 | round(1, 'ceil') }} {{ 5 | round }} {{ -1.5 | round }} {{ 1234.5 | round(-2) }}", {}),
    ("{{ -3 | abs }} {{ -2.5 | abs }} {{ 'abc' | center(9) }}|{{ 'ab' | center(7) }}|{{ 'ab' | center(1) }}|", {}),
    ("{{ 'a\nb\n\nc' | indent }}|{{ 'a\nb\n\nc' | indent(2, true) }}|{{ 'a\nb\n\nc' | indent(first=true, blank=true) }}|{{ 'a\nb' | indent('> ') }}|", {}),
    ("{{ 'one two  three' | wordcount }} {{ 'Hello, wörld_x 42!' | wordcount }} {{ '' | wordcount }}", {}),
    ("{{ [1, 2, 3, 4, 5] | batch(2) | list }} {{ [1, 2, 3] | batch(2, 'x') | list }} {{ [1, 2, 3, 4, 5] | slice(2) | list }} {{ [1, 2, 3] | slice(2, 0) | list }}", {}),
    ("{{ '%s-%d-%.2f-%5s-%-5s|%05d %x %o %e %g %r %%' | format('a', 42, 3.14159, 'r', 'l', 42, 255, 8, 12345.678, 0.0001, 'q') }}", {}),
    ("{{ '%(a)s and %(b)d' | format(a='x', b=2) }} {{ '%s' % 5 }} {{ '%s, %s' % ('a', 'b') }} {{ '%s' % [1, 2] }} {{ '%s' % {'k': 1} }} {{ '%5.1f|%+d|% d' % (3.14159, 5, 5) }}", {}),
    ("{{ '%s %s' % ('a',) }}", {}),
    ("{{ '%d' % 'x' }}", {}),
    ("{{ 'abc' % () }}|{{ '%c%c' % (65, 'b') }} {{ '%.3s' % 'abcdef' }} {{ '%*d' % (5, 3) }}", {}),
    # Floats where Python converts to its unbounded int (never a cast out of int64's range),
    # and round() at extreme precisions; inf/nan come from arithmetic (JSON has neither).
    ("{{ '%d' % 1e300 }}|{{ '%i' % -1e19 }}|{{ '%u' % 9.3e18 }}|{{ '%+.25d' % 1e20 }}|{{ '%05d' % -0.5 }}|{{ '%d' % 2.9 }}", {}),
    ("{{ '%d' % (1e308 * 10) }}", {}),
    ("{{ '%d' % (1e308 * 10 - 1e308 * 10) }}", {}),
    ("{{ '%x' % 1e300 }}", {}),
    ("{{ '%c' % 65.7 }}", {}),
    ("{{ '%c' % 1114112 }}", {}),
    ("{{ '%c' % -1 }}", {}),
    ("{{ '{:c}'.format(1114112) }}", {}),
    ("{{ '%*d' % (1e300, 5) }}", {}),
    ("{{ '%.*d' % (4294967301, 5) }}", {}),
    ("{{ '%c' % 1114111 }}|{{ '%.*d' % (-3, 5) }}|{{ '%.*d' % (3, 5) }}|{{ '%*d|' % (-4, 5) }}", {}),
    ("{{ 1234.5|round(-2) }} {{ 1.5|round(400) }} {{ 1.5|round(-400) }} {{ -1.5|round(-309) }} {{ 1.5|round(-308) }} {{ 1.5|round(323) }} {{ 1e-320|round(324) }} {{ 1.23e-310|round(312) }}", {}),
    ("{{ 1234|round(-2) }} {{ 1250|round(-2) }} {{ 1350|round(-2) }} {{ -25|round(-1) }} {{ -35|round(-1) }} {{ 1234|round(-400) }} {{ 1234|round(400) }} {{ 9223372036854775807|round(-2) }} {{ 4000000000000000000|round(-19) }} {{ 5000000000000000000|round(-19) }} {{ 1|round(-20) }}", {}),
    ("{{ 2.5|round(-1) }} {{ 5.0|round(-1) }} {{ 15.0|round(-1) }} {{ 25.0|round(-1) }} {{ 25.000001|round(-1) }} {{ -1234.5|round(-5) }} {{ 123456789.987654321|round(-3) }} {{ 5e307|round(-308) }} {{ 4.9e307|round(-308) }} {{ 1e300|round(-300) }} {{ 1e300|round(300) }} {{ 0.000123|round(300) }}", {}),
    ("{{ 1.5e308|round(-308) }}", {}),
    ("{{ (1e308 * 10)|round }} {{ (1e308 * 10)|round(-2) }} {{ (1e308 * 10 - 1e308 * 10)|round(3) }} {{ (1e308 * 10)|round(-400) }}", {}),
    ("{{ 1234.5|round(-2, 'ceil') }} {{ 1234|round(-2, 'floor') }} {{ 1234|round(400, 'floor') }} {{ 1.5|round(308, 'floor') }} {{ 1.5|round(-323, 'floor') }} {{ 1e300|round(-300, 'floor') }} {{ 1e300|round(-320, 'ceil') }} {{ -1.23456|round(3, 'ceil') }}", {}),
    ("{{ 1.5|round(309, 'floor') }}", {}),
    ("{{ 1.5|round(-324, 'floor') }}", {}),
    ("{{ 1e300|round(100, 'ceil') }}", {}),
    ("{{ (1e308 * 10 - 1e308 * 10)|round(1, 'ceil') }}", {}),
    ("{{ 1.5|round(2.5) }}", {}),
    ("{{ -9223372036854775807|abs }} {{ -1e300|filesizeformat }} {{ -0.5|filesizeformat }} {{ (1e308 * 10 - 1e308 * 10)|filesizeformat }}", {}),
    ("{{ (-1e308 * 10)|filesizeformat }}", {}),
    ("{{ xs | string }} {{ 5 | string }} {{ none | string }} {{ undefined_var | string }}|{{ 1.0 | string }}", DATA),
    ("{{ '<b>' | safe }} {{ '<a href=\"x\">&</a>' | escape }} {{ '<b>x</b> <!-- c -->  y &amp; z' | striptags }}", {}),
    # Markup (what safe/escape return): `+` with a plain str escapes the str, both ways and
    # along a chain; `~` gives a plain str; forceescape escapes a Markup again.
    ("{{ \"'\"|safe + '<a \"b\">' + 'c&d' }}|{{ '<x>' + 'y'|safe + '<z>' }}|{{ ('<p>'|safe + '&') ~ '<' + '>' }}", {}),
    ("{{ '<a>'|e + '<b>' }}|{{ ('<a>'|e)|e }}|{{ '<a>'|e|forceescape }}|{% set m = 'q'|safe + \"'\" %}{{ m + m }}|{{ m ~ \"'\" }}", {}),
    ("{{ 'Use ' |safe + name + \"'\n\"|safe + d|tojson }}", {"name": "f<1>", "d": {"k": "v\"'"}}),
    ("{{ 'a'|safe + 1 }}", {}),
    ("{{ 'foo bar baz qux' | truncate(9) }} {{ 'foo bar baz qux' | truncate(9, true) }} {{ 'foo bar baz qux' | truncate(11) }} {{ 'foo bar baz qux' | truncate(11, false, '...', 0) }}", {}),
    ("{{ users | groupby('age') | list }}", DATA),
    ("{% for age, group in users | groupby('age') %}{{ age }}:{{ group | map(attribute='name') | join(',') }};{% endfor %}", DATA),
    ("{{ d | items | list }} {{ undefined_var | items | list }}", DATA),
    ("{{ xs | items | list }}", DATA),
    ("{{ s | attr('upper') is defined }} {{ d | attr('a') }}|{{ 'a b' | urlencode }} {{ {'a': 'b c', 'd': 1} | urlencode }}", DATA),
    ("{{ 1000 | filesizeformat }} {{ 1 | filesizeformat }} {{ 1500000 | filesizeformat }} {{ 2048 | filesizeformat(true) }}", {}),
    ("{{ [1, [2, 'x'], {'k': none, 'é': true}] | tojson }} {{ {'a': 1.0, 'b': 1e20, 'c': -0.0} | tojson }} {{ 'é\"\\\\\n\t\x01\x7f' | tojson }}", {}),
    ("{{ d | tojson(indent=2) }}|{{ [] | tojson(indent=2) }}|{{ [[], {}] | tojson(indent=2) }}|{{ d | tojson(indent='\t') }}|{{ d | tojson(indent=0) }}", DATA),
    ("{{ d | tojson(sort_keys=true) }} {{ d | tojson(separators=(',', ':')) }} {{ 'é🌍' | tojson(ensure_ascii=true) }} {{ 'é' | tojson(2) }} {{ {1: 'a', true: 'b', none: 'c', 1.5: 'd'} | tojson }}", DATA),
    ("{{ messages | tojson }}", DATA),
    ("{{ undefined_var | tojson }}", {}),
    ("{{ xs | map('string') | tojson }}", DATA),
    ("{% filter upper %}abc {{ s }}{% endfilter %} {% filter trim | replace('a', 'b') %}  aaa  {% endfilter %}", DATA),
    ("{{ s | nosuchfilter }}", DATA),
    ("{% if false %}{{ s | nosuchfilter }}{% endif %}ok {{ s if true else s | nosuchfilter }}", DATA),
    ("{% if true %}{{ s | nosuchfilter }}{% endif %}", DATA),
    ("{{ s is nosuchtest }}", DATA),
    ("{{ [3, 1] | split }}", {}),
    # ---------------------------------------------------------------- methods
    ("{{ '  x  '.strip() }}|{{ 'xxyxx'.strip('x') }}|{{ '  x  '.lstrip() }}|{{ '  x  '.rstrip() }}|{{ '\u00a0x\u2003'.strip() }}|", {}),
    ("{{ 'a,b,,c'.split(',') }} {{ '  a  b '.split() }} {{ 'a b c'.split(' ', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ 'a\nb\r\nc'.splitlines() }} {{ ''.split() }} {{ ''.split(',') }}", {}),
    ("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'abc'.startswith('b', 1) }} {{ 'Hello'.upper() }} {{ 'Hello'.lower() }} {{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ 'aBc'.swapcase() }}", {}),
    ("{{ 'abcabc'.find('c') }} {{ 'abcabc'.rfind('c') }} {{ 'abc'.find('z') }} {{ 'héllo'.find('l') }} {{ 'abcabc'.count('b') }} {{ 'abc'.index('b') }} {{ 'abc'.replace('b', 'X') }} {{ 'aaa'.replace('a', 'b', 2) }}", {}),
    ("{{ '-'.join(['a', 'b']) }} {{ ', '.join(xs | map('string')) }} {{ 'x'.center(5, '*') }} {{ 'x'.ljust(3, '.') }}|{{ 'x'.rjust(3) }} {{ '42'.zfill(5) }} {{ '-4'.zfill(4) }}", DATA),
    ("{{ 'a=b=c'.partition('=') }} {{ 'a=b=c'.rpartition('=') }} {{ 'prefix_x'.removeprefix('prefix_') }} {{ 'x.py'.removesuffix('.py') }} {{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'ab1'.isalnum() }} {{ '  '.isspace() }} {{ 'Ab'.istitle() }}", {}),
    ("{{ '{} and {}'.format('a', 1) }} {{ '{0}{1}{0}'.format('x', 'y') }} {{ '{name}!'.format(name='n') }} {{ '{:>5}|{:<5}|{:^5}|{:05d}|{:.2f}|{:,}|{!r}'.format('a', 'b', 'c', 42, 3.14159, 1234567, 'q') }} {{ '{{}}'.format() }}", {}),
    ("{{ '{0[a]} {0.b}'.format({'a': 1, 'b': 2}) }} {{ '{:x} {:b} {:e} {:%}'.format(255, 5, 1234.5, 0.25) }} {{ '{}'.format(1.0) }} {{ '{:g}'.format(1.5e-7) }}", {}),
    ("{{ xs.count(1) }} {{ xs.index(2) }} {{ (1, 2).count(2) }} {{ d.items() }} {{ d.copy() }}", DATA),
    ("{{ 'a\tb'.expandtabs(4) }}|{{ 'ß'.upper() }} {{ 'İ'.lower() | length }} {{ 'ǅ'.title() }} {{ 'ﬁx'.upper() }}", {}),
    ("{{ 'x'.nosuch() }}", {}),
    ("{{ 'abc'.split('') }}", {}),
    # ---------------------------------------------------------------- for loops
    ("{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.depth }};{% endfor %}", DATA),
    ("{% for x in xs %}{{ loop.previtem }}>{{ x }}>{{ loop.nextitem }}|{{ loop.cycle('a', 'b') }};{% endfor %}", DATA),
    ("{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}", {}),
    ("{% for x in xs if x > 1 %}{{ x }}:{{ loop.length }}{{ loop.last }};{% endfor %}", DATA),
    ("{% for x in empty %}no{% else %}empty{% endfor %} {% for x in xs if x > 5 %}no{% else %}none>5{% endfor %}", DATA),
    ("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %} {% for k in d %}{{ k }}{% endfor %} {% for c in 'abc' %}{{ c }}.{% endfor %}", DATA),
    ("{% for a, b in [(1, 2), [3, 4]] %}{{ a + b }}{% endfor %}", {}),
    ("{% for a, b in [(1, 2, 3)] %}{% endfor %}", {}),
    ("{% for x in none %}{% endfor %}", {}),
    ("{% for x in 5 %}{% endfor %}", {}),
    ("{% for x in undefined_var %}{{ x }}{% endfor %}ok", {}),
    ("{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("{{ range(3) | list }} {{ range(1, 10, 3) | list }} {{ range(5, 0, -2) | list }} {{ range(0) | list }}", {}),
    ("{% for a in [1, 2] %}{% for b in [3, 4] %}{{ loop.index }}{{ a }}{{ b }} {% endfor %}{% endfor %}", {}),
    ("{% for a in [1, 2] %}{% set outer = loop %}{% for b in [3] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}", {}),
    ("{% for item in [{'c': [{'c': []}, {'c': [{'c': []}]}]}] recursive %}[{{ loop.depth }}{{ loop(item.c) }}]{% endfor %}", {}),
    ("{{ loop }}|{% for x in [1] %}{{ loop.nope }}|{% endfor %}", {}),
    # ---------------------------------------------------------------- scoping, set
    ("{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }};{% endfor %}{{ x }}", {}),
    ("{% for i in [1, 2] %}{% if i == 2 %}{{ y }}{% endif %}{% set y = i %}{% endfor %}[{{ y }}]", {}),
    ("{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    ("{% set ns = namespace(n=0, items=[]) %}{% for i in xs %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }} {{ ns.items }} {{ ns.missing }}|{{ ns }}", DATA),
    ("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}", {}),
    ("{% set ns = namespace() %}{% set ns._x = 1 %}", {}),
    ("{% set x = 5 %}{% set x.y = 1 %}", {}),
    ("{% set a, b = 1, 2 %}{{ a }}{{ b }} {% set c = 1, 2 %}{{ c }}", {}),
    ("{% set messages = messages[1:] %}{{ messages | length }}", DATA),
    ("{% set body %}\n  x {{ s }}\n{% endset %}[{{ body }}] {% set up | upper %}abc{% endset %}{{ up }}", DATA),
    ("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", {}),
    ("{% set d2 = dict(a=1, b=2) %}{{ d2 }} {{ dict({'x': 1}, y=2) }} {{ dict([('k', 'v')]) }}", {}),
    ("{% set x = [1, 2] %}{% set y = x + [3] %}{{ x }} {{ y }}", {}),
    # ---------------------------------------------------------------- macros
    ("{% macro m(a, b=2, c='x') %}{{ a }}-{{ b }}-{{ c }}{% endmacro %}{{ m(1) }} {{ m(1, 3) }} {{ m(1, c='z') }} {{ m() }}|{{ m }}", {}),
    ("{% set x = 5 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 6 %}{{ m() }}", {}),
    ("{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}", {}),
    ("{% macro m(n) %}{% if n > 0 %}{{ n }}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(5) }}", {}),
    ("{% macro outer() %}[{{ caller() }}]{% endmacro %}{% call outer() %}inside {{ 1 + 1 }}{% endcall %}", {}),
    ("{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(v) each([1, 2]) %}<{{ v }}>{% endcall %}", {}),
    ("{% macro m(a, b=a) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}", {}),
    ("{% macro m() %}{% set inner = 1 %}{{ inner }}{% endmacro %}{{ m() }}[{{ inner }}]", {}),
    ("{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, a=2) }}", {}),
    ("{% macro render(d) %}{% for k, v in d | dictsort %}{% if v is mapping %}{{ k }}:{ {{- render(v) -}} }{% else %}{{ k }}={{ v }}{% endif %}{% if not loop.last %},{% endif %}{% endfor %}{% endmacro %}{{ render({'b': {'y': 1, 'x': {'z': 2}}, 'a': 3}) }}", {}),
    # ---------------------------------------------------------------- globals
    ("{{ raise_exception('custom failure: ' ~ 3) }}", {}),
    ("{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}", DATA),
    ("{{ strftime_now('%Y-%m-%d %H:%M:%S %A %B %j') }}", {}),
    ("{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }} {% set j = joiner('|') %}{{ j() }}x{{ j() }}y{{ j() }}", {}),
    ("{{ range(200000) | length }}", {}),
    ("{{ namespace is defined }} {{ dict is defined }} {{ lipsum is defined }}", {}),
    # ---------------------------------------------------------------- generation tag, misc statements
    ("{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% set z = 1 %}{% endgeneration %}{% endif %}{% endfor %}[{{ z }}]", DATA),
    ("{% print 'a', 1 %}", {}),
    ("{% if true %}a{% elif false %}b{% else %}c{% endif %}{% if false %}a{% elif true %}b{% endif %}{% if 0 %}{% endif %}", {}),
    ("{% include 'x.jinja' %}", {}),
    ("{% if true %}unclosed", {}),
    ("{% endif %}", {}),
    ("{% for %}{% endfor %}", {}),
    ("{{ }}", {}),
    ("{{ 1 + }}", {}),
    ("{{ 'unterminated }}", {}),
    ("{% set 1 = 2 %}", {}),
    ("{{ a b }}", {}),
    ("{% macro m(a=1, b) %}{% endmacro %}", {}),
    ("{{ x is defined is defined }}", {}),
    ("{% do x %}", {}),
    ("{{ f(**{'a': 1}) }}", {"f": None}),
    # ---------------------------------------------------------------- typical template idioms
    ("{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}"
     "{{- bos_token }}{%- for message in loop_messages %}{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{- raise_exception('roles must alternate') }}{%- endif %}"
     "{%- if message['role'] == 'user' %}{{- '[INST] ' + message['content'] + ' [/INST]' }}{%- else %}{{- ' ' + message['content'] + eos_token }}{%- endif %}{%- endfor %}",
     {"messages": MSGS[:2], "bos_token": "<s>", "eos_token": "</s>"}),
    ("{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}{%- for message in messages[::-1] %}{%- set index = (messages|length - 1) - loop.index0 %}"
     "{%- if ns.multi_step_tool and message.role == 'user' %}{%- set ns.multi_step_tool = false %}{%- set ns.last_query_index = index %}{%- endif %}{%- endfor %}{{ ns.last_query_index }}", DATA),
    ("{%- if content is string %}{{ content }}{%- elif content is iterable %}{%- for item in content %}{%- if item.type == 'text' %}{{ item.text }}{%- elif item.type == 'image' %}<img>{%- endif %}{%- endfor %}{%- endif %}",
     {"content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}),
    ("{%- set reasoning = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}[{{ reasoning }}]{{ content.split('</think>')[-1].lstrip('\\n') }}",
     {"content": "<think>\nthinking\n</think>\n\nanswer"}),
    ("{{ tools | map(attribute='function') | map(attribute='name') | join(', ') }} {{ (tools | first).function.parameters.properties | list }}",
     {"tools": [{"function": {"name": "a", "parameters": {"properties": {"z": {}, "b": {}}}}}, {"function": {"name": "b"}}]}),
    ("{{ messages[-1]['content'] | trim }}{% if messages | length > 2 and messages[2].tool_calls is defined %}{{ messages[2].tool_calls | length }}{% endif %}", DATA),
    # ------------------------------------- lowered reads and prints (fast path, then fallback)
    ("{% for m in messages %}{{ '<' + m['role'] + '>' + m.content ~ '|' }}{% endfor %}", DATA),
    ("{% set x = '<b>' | safe %}{{ '<i>' + x + s }}|{{ s + '<' + x }}|{{ x ~ '<' ~ s }}", DATA),
    ("{% for m in messages %}{{ 'c:' + m['tool_calls'] }}{% endfor %}", DATA),
    ("{{ 'c:' + messages[2]['tool_calls'] }}", DATA),
    ("{% for m in messages %}{{ m['content'] + m['nope'] }}{% endfor %}", DATA),
    ("{% set d2 = {'items': 'I', 'role': 'R', 'n': 1} %}{{ d2.items is callable }} {{ d2['items'] + d2.role }} {{ d2.role ~ d2.n }}", {}),
    ("{% set d2 = {'n': 1} %}{{ 'x' + d2.n }}", {}),
    ("{{ s ~ i ~ '!' }} {{ xs[0] ~ 'x' }} {{ xs + [4] }} {{ i + 1 }} {{ n ~ t }}", DATA),
    ("{% for m in messages %}{% if m['role'] == 'user' %}U{% elif m.role != 'system' %}N{% else %}S{% endif %}{% endfor %}"
     " {{ n == 'x' }} {{ s == 'Hello World' }} {{ s != 'Hello World' }} {{ i == 'x' }} {{ undefined_var == 'x' }}", DATA),
    ("{% for m in messages %}{% set m = 'x' %}{{ m }}{% endfor %}{% for a, b in [(1, 2), (3, 4)] %}{{ a ~ b }}{% endfor %}"
     "{% for x in [1, 2] %}{% set y = loop.index %}{{ y ~ loop.length }}{% endfor %}{{ y }}", DATA),
    ("{% set c = messages[1]['content'] %}{{ c + '!' }}{% for m in messages %}{% set c = m.content %}{{ c }}{% endfor %}{{ c }}", DATA),
    # if-chains on one read (lowered to a single read of the role) and their fallbacks
    ("{% for m in odd %}{% if m.role == 'user' or m['role'] == 'system' %}U{% elif m.role == 'assistant' and m.content %}A"
     "{% elif m.role == 'tool' and m.missing %}T{% elif m.content == 'int' %}I{% else %}[{{ m.role }}]{% endif %}{% endfor %}", ODD),
    ("{% for m in odd %}{% if m.role == 'user' %}u{% else %}{% if m.role == 'assistant' %}a{% elif m.role is none %}n"
     "{% else %}o{% endif %}{% endif %}{% if m.role == 'tool' %}t{% else %}-{% if m.role == 'user' %}U{% endif %}{% endif %}{% endfor %}", ODD),
    ("{% for m in odd %}{% set r = m.role | safe %}{% if r == 'user' %}U{% elif r == 'tool' or r == '3' %}T{% else %}.{% endif %}"
     "{% if m.role != 'user' %}!{% endif %}{% endfor %}", ODD),
    ("{% for m in messages %}{% if m.role == 'system' %}S{% elif m.role == 'user' and m.nope.x %}U{% endif %}{% endfor %}", DATA),
    # if-tests of a member and 'key' in dict, read in the JSON context, and their fallbacks
    ("{% for m in objs %}[{% if m['v'] %}v{% endif %}{% if not m.v %}!{% endif %}{% if m['nope'] %}n{% endif %}"
     "{% if m.nope %}N{% endif %}{% if m['items'] %}i{% endif %}{% if m['__class__'] %}c{% endif %}"
     "{% if 'v' in m %}h{% endif %}{% if 'v' not in m %}H{% endif %}{% if 'v' in m and m.v %}b{% endif %}]{% endfor %}",
     {"objs": [{"v": ""}, {"v": "x"}, {"v": 0}, {"v": 1}, {"v": 0.0}, {"v": -2.5}, {"v": None}, {"v": True},
               {"v": False}, {"v": []}, {"v": [0]}, {"v": {}}, {"v": {"a": 0}}, {}, {"w": 1},
               {"v": 18446744073709551615}, {"items": ""}]}),
    ("{% set d = {'v': '', 'w': 'x'} %}{% if d['v'] %}v{% endif %}{% if d.w %}w{% endif %}{% if 'v' in d %}h{% endif %}"
     "{% if 'e' in s %}e{% endif %}{% if 'x' in undefined_var %}u{% endif %}{% if 'x' not in xs %}x{% endif %}", DATA),
    ("{% if 'k' in n %}k{% endif %}", DATA),
    # {% set x = var['key'] %}: a context str borrowed, other members and dicts copied
    ("{% for m in messages %}{% set c = m['tool_calls'] %}{% set r = m.role %}{% set x = m['nope'] %}"
     "{{ r }}:{{ c is defined }}{{ c | length if c else '' }}{{ x is defined }}|{% endfor %}"
     "{% set d2 = {'k': 'v', 'items': 1} %}{% set e = d2['k'] %}{% set f = d2['items'] %}{{ e }}{{ f }}", DATA),
    # a loop's sets are gone at the next iteration, whatever order and number of sets each
    # iteration makes (the scope's storage is reused); sets of a nested loop stay inside it
    ("{% set b = 'B' %}{% for i in [1, 2, 3, 4] %}[{{ a }}{{ b }}{{ c }}]{% if i == 1 %}{% set a = 'a1' %}{% set b = 'b1' %}"
     "{% elif i == 2 %}{% set c = 'c2' %}{% set b = 'b2' %}{% set a = 'a2' %}{% endif %}({{ a }}{{ b }}{{ c }})"
     "{% for j in [1, 2] %}{% if j == 1 %}{% set d = a %}{% endif %}<{{ d }}{{ b }}>{% set b = j %}{% endfor %}{{ b }}{{ d }};"
     "{% endfor %}{{ a }}{{ b }}{{ c }}", {}),
    # {% set c = m['content'] %} on every kind of member, then printed and tested by an if-chain
    ("{% for m in objs %}{% set c = m['content'] %}{% if m['role'] == 'user' %}{{ 'U:' + c }}{% elif m['role'] == 'a' %}"
     "{{ c }}{% else %}{{ c is defined }}{% endif %}|{% endfor %}",
     {"objs": [{"role": "user", "content": "x"}, {"role": "a", "content": ["p", 1]}, {"role": "a", "content": None},
               {"role": "a", "content": 3}, {"role": "a", "content": {"k": "v"}}, {"role": "a"}, {"role": "b"},
               {"role": "user", "content": ""}, {"role": "a", "content": "y"}]}),
    # pieces of every length around the copy sizes (3/4, 7/8, 16/17, 32/33 bytes)
    ("{% for m in objs %}{% if m.role == 'u' %}{{ 'abc' + m.content + 'abcd' + m.content + 'abcdefg' }}"
     "{% else %}{{ 'abcdefgh' + m.content + 'abcdefghijklmnop' + m.content + 'abcdefghijklmnopq' + m.content"
     " + 'abcdefghijklmnopqrstuvwxyz012345' + m.content + 'abcdefghijklmnopqrstuvwxyz0123456' }}{% endif %}{% endfor %}",
     {"objs": [{"role": "u", "content": c} for c in ("", "é", "abcdefghijklmnopq", "x" * 31, "y" * 32, "z" * 33)]
      + [{"role": "a", "content": c} for c in ("", "ab", "abcdefgh", "x" * 16, "x" * 17, "w" * 40)]}),
    # a loop's leading member sets, bound with the item: every kind of item and member, the
    # item or a set name rebound in the body, `loop` beside them, nested, recursive and
    # filtered loops, loops over a dict, a str and a tuple target (no binding)
    ("{% for m in objs %}{% set c = m['content'] %}{% set r = m.role %}{% set i = m['items'] %}"
     "{{ loop.index }}{{ r }}:{{ c }}:{{ c is defined }}:{{ c is string }}:{{ i is callable }}{{ i if i is string }}|"
     "{% endfor %}",
     {"objs": [{"role": "user", "content": "x", "items": "I"}, {"role": "a", "content": ["p", 1]},
               {"role": "a", "content": None}, {"role": "a", "content": 3}, {"content": "no role"},
               {"role": "b"}, "str item", 7, ["role", "content"], None, {"items": [1]},
               {"role": "user", "content": ""}]}),
    ("{% for m in objs %}{% set c = m.content %}{% set m = 'M' %}{{ c }}{{ m }}{% if c == 'x' %}"
     "{% set c = 'z' %}{% endif %}{{ c }}|{% endfor %}{{ c is defined }}{{ m is defined }}",
     {"objs": [{"content": "x"}, {"content": "y"}, {}]}),
    ("{% for m in objs %}{% set m = m['content'] %}{% set c = m %}{{ m }}{{ c }}|{% endfor %}",
     {"objs": [{"content": "x"}, {"content": "y"}]}),
    ("{% for m in objs %}{% set c = m.content %}{% set d = m.role %}{% set c = m.role %}{{ c }}{{ d }}"
     "{% for m in m.kids or [] %}{% set c = m.content %}<{{ c }}>{% endfor %}{{ c }}|{% endfor %}",
     {"objs": [{"content": "x", "role": "r", "kids": [{"content": "k1"}, {"content": 2}]}, {"content": "y"}]}),
    ("{% for n in tree recursive %}{% set c = n['name'] %}{{ c }}{% if n.kids %}({{ loop(n.kids) }}){% endif %}"
     "{{ c }};{% endfor %}",
     {"tree": [{"name": "a", "kids": [{"name": "b", "kids": [{"name": "c"}]}, {"name": "d"}]}, {"name": "e"}]}),
    ("{% for m in objs if m.role %}{% set c = m.content %}{% if c == 'stop' %}{% break %}{% endif %}"
     "{% if c == 'skip' %}{% continue %}{% endif %}{{ c }}{% else %}none{% endfor %}"
     "{% for m in [] %}{% set c = m.content %}{{ c }}{% else %}empty{% endfor %}",
     {"objs": [{"role": "u", "content": "a"}, {"content": "b"}, {"role": "u", "content": "skip"},
               {"role": "u", "content": "c"}, {"role": "u", "content": "stop"}, {"role": "u", "content": "d"}]}),
    ("{% for k in d %}{% set c = k['x'] %}{{ k }}{{ c is defined }}{% endfor %}|{% for ch in 'ab' %}"
     "{% set c = ch.upper %}{{ c is defined }}{% endfor %}|{% for a, b in [({'x': '1'}, 2)] %}{% set c = a['x'] %}"
     "{{ c }}{{ b }}{% endfor %}|{% for m in objs %}{% set c = m.content %}{% macro show() %}[{{ c }}]{% endmacro %}"
     "{{ show() }}{% endfor %}", {"d": {"p": 1, "q": 2}, "objs": [{"content": "x"}, {"content": "y"}]}),
    # a chain's branch that prints its subject: the case's literal in its place, or the
    # branch itself when another piece does not read as a plain str
    ("{% for m in objs %}{% set x = m.content | safe if m.content == 'safe' else m.content %}"
     "{% if m.role == 'user' or m['role'] == 'system' %}{{ '<' + m.role + '|' + m['role'] + '>' + x }}"
     "{% elif m.role == 'tool' and m.content %}{{ m['role'] ~ m.content }}{% elif m.role == 'a' %}{{ m.role }}"
     "{% else %}[{{ m.role }}]{% endif %}{% set r = m.role %}{% if r == 'a' %}{{ r + '!' + r }}{% endif %};{% endfor %}",
     {"objs": [{"role": "user", "content": "u"}, {"role": "system", "content": "s"}, {"role": "user", "content": "safe"},
               {"role": "tool", "content": "t"}, {"role": "tool", "content": ""}, {"role": "a"}, {"role": 3},
               {"content": "none"}, {"role": "system", "content": "safe"}]}),
    # 'key' in var and var['key'] (its truth is the member's) and if x: print x (the print
    # when x is a plain str), and the shapes that only look alike
    ("{% for m in objs %}[{% if 'k' in m and m['k'] %}a{% endif %}{% if 'k' in m and m.k %}b{% endif %}"
     "{% if 'a' in m and m['b'] %}c{% endif %}{% if 'k' not in m and m.k %}d{% endif %}"
     "{% if 'items' in m and m['items'] %}e{% endif %}{% if 'items' in m and m.items %}f{% endif %}"
     "{% if 'k' in m and m['k'] and m['a'] %}g{% endif %}{{ 'k' in m and m['k'] }}]{% endfor %}",
     {"objs": [{"k": "v"}, {"k": ""}, {"k": 0}, {"k": [1]}, {"k": None}, {}, {"a": 1}, {"b": 1}, {"a": 1, "b": 2},
               {"a": 1, "b": 0, "k": "v"}, {"items": "x"}, {"items": ""}, "kk", ["k"], "", []]}),
    ("{% set d = {'k': '', 'j': 'J'} %}{% if 'k' in d and d['k'] %}1{% endif %}{% if 'j' in d and d.j %}2{% endif %}"
     "{% if 'x' in s and s['x'] %}3{% endif %}{% if 'x' in undefined_var and undefined_var.x %}4{% endif %}", DATA),
    ("{% for m in objs %}[{% if m.content %}{{ m.content }}{% endif %}{% if m['content'] %}{{ m['content'] }}{% endif %}"
     "{% set c = m.content %}{% if c %}{{ c }}{% endif %}{% if m.content %}{{ m.role }}{% endif %}"
     "{% if m['items'] is string %}{% if m['items'] %}{{ m['items'] }}{% endif %}{% endif %}]{% endfor %}"
     "{% set x = '<b>' | safe %}{% if x %}{{ x }}{% endif %}{% if undefined_var %}{{ undefined_var }}{% endif %}"
     "{% if s %}{{ s }}{% endif %}{% if n %}{{ n }}{% endif %}{% if i %}{{ i }}{% endif %}",
     {"objs": [{"content": "x", "role": "r"}, {"content": ""}, {"content": None}, {"content": 0}, {"content": 5},
               {"content": []}, {"content": ["p"]}, {"content": {"a": 1}}, {}, {"items": "I"}], **DATA}),
]


# ---------------------------------------------------------------- generated snippets
# Random expressions and random whitespace-control layouts (fixed seeds), to pin the
# semantics more widely than hand-written snippets can.

import random as _random

_FUZZ_CTX = {"s": "Hello, Wörld!", "e": "", "n": None, "i": 7, "j": -3, "f": 2.5, "g": 1e-7, "t": True,
             "fl": False, "xs": [3, 1, 2], "ss": ["b", "A", "c"], "d": {"b": 1, "a": "x", "C": [1, 2]},
             "ms": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": " yo "}],
             "u": "ß日本🌍", "sp": "  a  b  "}
_VARS = list(_FUZZ_CTX) + ["undef"]
_LITS = ["0", "1", "-1", "2", "3.0", "0.5", "1e3", "'a'", "'abc'", "''", "' x '", "'%s-%d'", "'{}:{}'",
         "none", "true", "false", "[1, 2]", "[]", "{'k': 1}", "(1, 'a')", "'é'"]
_FILTERS = ["length", "upper", "lower", "trim", "title", "capitalize", "string", "list", "first", "last",
            "reverse|list", "sort", "unique|list", "join(',')", "join", "default('D')", "default('D', true)",
            "int", "float", "abs", "round", "round(1)", "tojson", "tojson(indent=1)", "items|list", "dictsort",
            "center(9)", "indent(2)", "wordcount", "replace('a', 'Z')", "count", "sum", "max", "min",
            "batch(2)|list", "format(1, 2)", "map('string')|list", "select|list", "reject|list",
            "selectattr('role')|list", "map(attribute='role')|list", "truncate(5)", "striptags", "e", "safe",
            "urlencode"]
_TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping", "sequence",
          "iterable", "boolean", "true", "false", "odd", "even", "divisibleby 2", "eq 1", "in [1, 'a']",
          "lower", "upper", "callable", "sameas none"]
_METHODS = ["upper()", "lower()", "strip()", "strip('a')", "split()", "split(',')", "startswith('H')",
            "endswith('!')", "replace('l', 'L')", "title()", "find('o')", "count('l')", "get('a')",
            "get('zz', 0)", "items()", "keys()", "values()", "capitalize()", "lstrip()", "rstrip()",
            "isdigit()", "format(1, 2)", "join(['x', 'y'])", "splitlines()", "zfill(5)", "rsplit(' ', 1)",
            "index(1)", "partition(',')"]
# `**` is left out (complex results); slices apply to variables only: jinja2 folds constant
# expressions at compile time, where a failed slice becomes undefined instead of an error.
_OPS = ["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", ">", "<=", ">=", "in", "not in", "and", "or"]


def _expr(rnd, depth):
    r = rnd.random()
    if r < 0.3:
        return rnd.choice(_LITS)
    if r < 0.6 or depth <= 0:
        return rnd.choice(_VARS)
    r = rnd.random()
    if r < 0.2:
        return f"{_expr(rnd, depth - 1)}|{rnd.choice(_FILTERS)}"
    if r < 0.35:
        neg = "not " if rnd.random() < 0.3 else ""
        return f"({_expr(rnd, depth - 1)} is {neg}{rnd.choice(_TESTS)})"
    if r < 0.5:
        return f"{_expr(rnd, depth - 1)}.{rnd.choice(_METHODS)}"
    if r < 0.6:
        index = rnd.choice(["0", "-1", "1:", "::-1", ":2", "1:-1:1", "'a'", "5"])
        return f"{rnd.choice(_VARS)}[{index}]"
    if r < 0.85:
        return f"({_expr(rnd, depth - 1)} {rnd.choice(_OPS)} {_expr(rnd, depth - 1)})"
    if r < 0.92:
        return f"(not {_expr(rnd, depth - 1)})"
    return f"({_expr(rnd, depth - 1)} if {_expr(rnd, depth - 1)} else {_expr(rnd, depth - 1)})"


_TEXTS = ["", " ", "  ", "\t", "\n", "\n\n", " \n ", "a", "b\n", "\n  c", "  \n", "x ", "\r\n", " \t\n\t "]


def _layout(rnd, depth):
    def mod():
        return rnd.choice(["", "", "-", "+"])

    def text():
        return "".join(rnd.choice(_TEXTS) for _ in range(rnd.randint(0, 3)))

    parts = []
    for _ in range(rnd.randint(1, 4)):
        r = rnd.random()
        parts.append(text())
        if r < 0.25 and depth > 0:
            parts.append("{%" + mod() + " if t " + mod() + "%}" + _layout(rnd, depth - 1) + "{%" + mod() +
                         " else " + mod() + "%}" + _layout(rnd, depth - 1) + "{%" + mod() + " endif " + mod() + "%}")
        elif r < 0.45 and depth > 0:
            parts.append("{%" + mod() + " for x in xs " + mod() + "%}" + _layout(rnd, depth - 1) + "{%" + mod() +
                         " endfor " + mod() + "%}")
        elif r < 0.6:
            parts.append("{{" + rnd.choice(["", "-", "+"]) + " s " + rnd.choice(["", "-"]) + "}}")
        elif r < 0.7:
            parts.append("{#" + mod() + " c " + mod() + "#}")
        elif r < 0.8:
            parts.append("{%" + mod() + " set y = 1 " + mod() + "%}")
        elif r < 0.85:
            parts.append("{%" + mod() + " raw " + rnd.choice(["", "-"]) + "%}" + text() + "{{ z }}" + text() +
                         "{%" + mod() + " endraw " + mod() + "%}")
        elif r < 0.9 and depth > 0:
            parts.append("{%" + mod() + " macro m() " + mod() + "%}" + _layout(rnd, depth - 1) + "{%" + mod() +
                         " endmacro " + mod() + "%}{{ m() }}")
    parts.append(text())
    return "".join(parts)


def generated_features(expressions=400, layouts=300):
    rnd = _random.Random(20260115)
    out = [("{{ " + _expr(rnd, 3) + " }}", _FUZZ_CTX) for _ in range(expressions)]
    out += [(_layout(rnd, 3), {"xs": [1, 2], "s": "v", "t": True}) for _ in range(layouts)]
    return out
