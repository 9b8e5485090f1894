"""Static bash, zsh and fish completion scripts: the command tree is baked in, so TAB never
starts Python. Each shell gets the same facts (subcommands, options, which options take a value
and what completes it) in its own idiom.
"""

from __future__ import annotations

import re

from ... import __version__
from .command_tree import HEADER, PROG, Cmd, Values, walk


# --- bash ---------------------------------------------------------------------------------

def _sh(s: str) -> str:
    """Single-quote for bash and zsh."""
    return "'" + s.replace("'", "'\\''") + "'"


def _bash_action(v: Values) -> str:
    return {"file": "_pylogctl_files", "dir": "_pylogctl_dirs",
            "choice": f"_pylogctl_words {_sh(' '.join(v.choices))}"}.get(v.kind, "return 0")


def bash(root: Cmd) -> str:
    spec, value, arg = [], [], []
    for c in walk(root):
        key = _sh(" ".join(c.path))
        names = " ".join(n for o in c.options for n in o.names)
        vnames = " ".join(n for o in c.options if o.takes_value for n in o.names)
        subs = " ".join(s.path[-1] for s in c.subcommands)
        spec.append(f"        {key})\n            subs={_sh(subs)}\n            opts={_sh(names)}\n"
                    f"            vopts={_sh(vnames)} ;;")
        for o in c.options:
            if o.takes_value and o.values.kind != "none":
                pats = "|".join(_sh(" ".join(c.path) + "|" + n) for n in o.names)
                value.append(f"        {pats}) {_bash_action(o.values)} ;;")
        tests, start = [], 0
        for a in c.args:
            if a.values.kind != "none":
                end = "" if a.nargs < 0 else f" && $2 < {start + a.nargs}"
                tests.append(f"(( $2 >= {start}{end} )) && {_bash_action(a.values)}")
            start += max(a.nargs, 0)
            if a.nargs < 0:
                break
        if tests:
            arg.append(f"        {key})\n            " + "\n            ".join(tests) + " ;;")
    return f"""\
# bash completion for {PROG} {__version__}: source it, or copy it to
# /usr/share/bash-completion/completions/{PROG}. Static: TAB runs no Python.
# {HEADER}

# _pylogctl_spec PATH: the subcommands, options and value-taking options of PATH.
_pylogctl_spec() {{
    case $1 in
{chr(10).join(spec)}
    esac
}}

# _pylogctl_value PATH OPTION: complete OPTION's value.
_pylogctl_value() {{
    case "$1|$2" in
{chr(10).join(value)}
    esac
    return 0
}}

# _pylogctl_arg PATH N: complete PATH's Nth positional argument.
_pylogctl_arg() {{
    case $1 in
{chr(10).join(arg)}
    esac
    return 0
}}

_pylogctl_words() {{ local IFS=$' \\t\\n'; COMPREPLY=($(compgen -W "$1" -- "$cur")); }}
_pylogctl_files() {{ local IFS=$'\\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); }}
_pylogctl_dirs() {{ local IFS=$'\\n'; compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); }}

_pylogctl() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev='' path='' subs='' opts='' vopts='' ended='' w i n=0
    (( COMP_CWORD > 0 )) && prev=${{COMP_WORDS[COMP_CWORD-1]}}
    COMPREPLY=()
    # COMP_WORDBREAKS splits --opt=value into --opt, =, value
    if [[ $cur == = ]]; then
        cur=''
    elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then
        prev=${{COMP_WORDS[COMP_CWORD-2]}}
    fi
    _pylogctl_spec ''
    for (( i = 1; i < COMP_CWORD; i++ )); do
        w=${{COMP_WORDS[i]}}
        if [[ -n $ended ]]; then
            (( n++ ))
            continue
        fi
        case $w in
            --) ended=1 ;;
            -?*)
                if [[ ${{COMP_WORDS[i+1]-}} == = ]]; then
                    (( i += 2 ))
                elif [[ " $vopts " == *" $w "* ]]; then
                    (( i++ ))
                fi ;;
            *)
                if [[ " $subs " == *" $w "* ]]; then
                    path=${{path:+$path }}$w
                    n=0
                    _pylogctl_spec "$path"
                else
                    (( n++ ))
                fi ;;
        esac
    done
    if [[ -z $ended && $prev == -?* && " $vopts " == *" $prev "* ]]; then
        _pylogctl_value "$path" "$prev"
    elif [[ -z $ended && $cur == -* ]]; then
        _pylogctl_words "$opts"
    elif [[ -n $subs ]]; then
        _pylogctl_words "$subs"
    else
        _pylogctl_arg "$path" "$n"
    fi
    return 0
}}

complete -F _pylogctl {PROG}
"""


# --- zsh ----------------------------------------------------------------------------------

def _zfunc(c: Cmd) -> str:
    return "_pylogctl" + "".join("_" + re.sub(r"\W", "_", p) for p in c.path)


def _zesc(s: str) -> str:
    return re.sub(r"([\\\[\]:])", r"\\\1", s)


def _zaction(v: Values) -> str:
    if v.kind == "choice":
        return "(" + " ".join(re.sub(r"([\\\s()'\"$])", r"\\\1", c) for c in v.choices) + ")"
    return {"file": "_files", "dir": "_files -/"}.get(v.kind, " ")


def _zspecs(c: Cmd) -> list[str]:
    specs = []
    for o in c.options:
        excl = "(- *)" if o.exits else "" if o.multiple else f"({' '.join(o.names)})"
        for n in o.names:
            head = ("*" if o.multiple else "") + n
            tail = ""
            if o.takes_value:
                head += "=" if n.startswith("--") else "+"
                tail = f":{_zesc(o.metavar.lower())}:{_zaction(o.values)}"
            specs.append(_sh(f"{excl}{head}[{_zesc(o.help)}]{tail}"))
    for a in c.args:
        msg, act = _zesc(a.name), _zaction(a.values)
        if a.nargs < 0:
            specs.append(_sh(f"*:{msg}:{act}"))
        else:
            specs.extend([_sh(f"{'' if a.required else ':'}:{msg}:{act}")] * a.nargs)
    return specs


def zsh(root: Cmd) -> str:
    funcs = []
    for c in walk(root):
        fn, specs = _zfunc(c), _zspecs(c)
        if not c.subcommands:
            body = "    _arguments -s -S \\\n        " + " \\\n        ".join(specs or ["''"])
            funcs.append(f"{fn}() {{\n{body}\n}}")
            continue
        entries = "\n        ".join(_sh(f"{_zesc(s.path[-1])}:{s.short_help}")
                                    for s in c.subcommands)
        cases = "\n            ".join(f"({s.path[-1]}) {_zfunc(s)} && ret=0 ;;"
                                      for s in c.subcommands)
        args = " \\\n        ".join(specs + [f"':command:{fn}__commands'", "'*:: :->command'"])
        funcs.append(f"""\
{fn}__commands() {{
    local -a commands=(
        {entries}
    )
    _describe -t commands {_sh(c.words + ' command')} commands
}}

{fn}() {{
    local curcontext=$curcontext state state_descr line ret=1
    typeset -A opt_args
    _arguments -C -s -S \\
        {args} && ret=0
    if [[ $state == command ]]; then
        curcontext=${{curcontext%:*:*}}:{c.page}-$words[1]:
        case $words[1] in
            {cases}
        esac
    fi
    return ret
}}""")
    return f"""\
#compdef {PROG}
# zsh completion for {PROG} {__version__}: put this file, named _{PROG}, in a directory of
# $fpath (before compinit runs), or source it. Static: TAB runs no Python.
# {HEADER}

{chr(10).join(f + chr(10) for f in funcs)}
if [[ $funcstack[1] == _{PROG} ]]; then
    _{PROG} "$@"
else
    compdef _{PROG} {PROG}
fi
"""


# --- fish ---------------------------------------------------------------------------------

def _fq(s: str) -> str:
    """Single-quote for fish."""
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fvalues(v: Values) -> str:
    return {"file": "-F", "dir": "-f -a '(__fish_complete_directories (commandline -ct))'",
            "choice": f"-f -a {_fq(' '.join(v.choices))}"}.get(v.kind, "")


def fish(root: Cmd) -> str:
    cases, lines = [], []
    for c in walk(root):
        vals = " ".join(_fq(f"{c.words}|{n}") for o in c.options if o.takes_value
                        for n in o.names)
        if vals:
            cases.append(f"            case {vals}\n                set skip 1")
        for s in c.subcommands:
            cases.append(f"            case {_fq(c.words + '|' + s.path[-1])}\n"
                         f"                set path {_fq(s.words)}")
        cond = f"complete -c {PROG} -n {_fq('__pylogctl_at ' + c.words)}"
        for s in c.subcommands:
            lines.append(f"{cond} -f -a {_fq(s.path[-1])} -d {_fq(s.short_help)}")
        for o in c.options:
            names = " ".join(f"-l {n[2:]}" if n.startswith("--") else
                             f"-s {n[1:]}" if len(n) == 2 else f"-o {n[1:]}" for n in o.names)
            how = ("-r " + (_fvalues(o.values) if o.values.kind != "none" else "-f")
                   if o.takes_value else "-f")
            lines.append(f"{cond} {names} {how} -d {_fq(o.help)}")
        kinds = [a.values for a in c.args if a.values.kind != "none"]
        if kinds:
            choices = tuple(x for v in kinds for x in v.choices)
            best = next((v for v in kinds if v.kind == "file"), None) or next(
                (v for v in kinds if v.kind == "dir"), Values("choice", choices))
            lines.append(f"{cond} {_fvalues(best)}")
    return f"""\
# fish completion for {PROG} {__version__}: copy it to ~/.config/fish/completions/.
# Static: TAB runs no Python.
# {HEADER}

function __pylogctl_path --description 'The pylogctl subcommand typed so far'
    set -l path {PROG}
    set -l skip 0
    set -l tokens (commandline -opc)
    set -e tokens[1]
    for w in $tokens
        if test $skip -eq 1
            set skip 0
            continue
        end
        test "$w" = -- && break
        switch "$path|$w"
{chr(10).join(cases)}
        end
    end
    echo $path
end

function __pylogctl_at --description 'Is the subcommand typed so far the one given?'
    test (__pylogctl_path) = "$argv"
end

complete -c {PROG} -f
{chr(10).join(lines)}
"""
