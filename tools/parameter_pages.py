"""Write each node's parameter table into its page in doc/nodes/, from the node's PARAMETERS.

Run: ``.venv/bin/python tools/parameter_pages.py`` (``make docs``) after changing a ``Param``;
``--check`` writes nothing and exits 1, naming each page whose table differs from the code
(``test/test_parameter_pages.py`` does the same in the test suite).

Each page keeps its hand-written text; only the part between the markers

    <!-- BEGIN GENERATED: <table name> -->
    <!-- END GENERATED: <table name> -->

is rewritten. A page may hold several tables (orca_node has the node-wide and the per-agent
parameters). The tables come from the ``PARAMETERS`` tuples of ``planning_collision.ros``
(``Param``: name, default, description, choices, bounds, dynamic), so a page cannot drift from
what ``ros2 param describe`` shows.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "doc" / "nodes"


#: per-agent parameters whose default is the node-wide parameter of the same name
INHERITED = ("pose_source", "radius", "max_speed", "holonomic", "max_linear_accel",
             "max_angular_accel")


def _orca_agent_parameters():
    """orca_node's per-agent parameters, as declared for a controlled agent and an observed
    one (``<name>`` stands for the agent's namespace); a default taken from the node-wide
    parameter of the same name is shown as that parameter."""
    from planning_collision.ros import orca_parameters as op

    node = {name: op.BY_NAME[name].default for name in INHERITED}
    controlled = op.agent_parameters(SimpleNamespace(agents=["<name>"], observed=[], **node))
    observed = op.agent_parameters(SimpleNamespace(agents=[], observed=["<name>"], **node))
    names = {"controlled": {p.name for p in controlled}, "observed": {p.name for p in observed}}
    rows, seen = [], set()
    for p in controlled + observed:
        if p.name in seen:
            continue
        seen.add(p.name)
        who = [kind for kind, held in names.items() if p.name in held]
        suffix = p.name.split(".", 1)[1]
        rows.append((p, " and ".join(who), suffix if suffix in INHERITED else None))
    return rows


def _node_parameters(module: str):
    """A loader of the ``PARAMETERS`` of ``planning_collision.ros.<module>``."""
    def load():
        import importlib

        parameters = importlib.import_module(f"planning_collision.ros.{module}").PARAMETERS
        return [(p, None, None) for p in parameters]
    return load


#: page -> [(table name, rows loader)]; a loader returns (Param, applies to, inherited from).
TABLES = {
    "collision_server.md": [
        ("collision_server", _node_parameters("collision_server_parameters")),
    ],
    "orca_node.md": [
        ("orca_node", _node_parameters("orca_parameters")),
        ("orca_node per agent", _orca_agent_parameters),
    ],
    "fleet_sim.md": [
        ("fleet_sim", _node_parameters("fleet_sim_parameters")),
    ],
    "map_publisher.md": [
        ("map_publisher", _node_parameters("map_publisher")),
    ],
}


def show_default(value) -> str:
    """A default as a YAML parameter file would spell it."""
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f'`"{value}"`' if value == "" or value.startswith("[") else f"`{value}`"
    if isinstance(value, list):
        return "`[" + ", ".join(str(v) for v in value) + "]`"
    return f"`{value!r}`"


def type_name(param) -> str:
    return param.type.name.lower().replace("_", " ")


def cell(text: str) -> str:
    """Plain text as one table cell: no row break, no column break, no HTML tag (GitHub and
    MyST would hide '<name>')."""
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def render(rows, per_agent: bool) -> str:
    """A markdown table of parameters."""
    if per_agent:
        head = "| parameter | for | type | default | bounds | changes | meaning |"
    else:
        head = "| parameter | default | type | bounds | changes | meaning |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for param, who, inherited in rows:
        bounds = param.rule() if param.bounded else ""
        if param.choices:
            bounds = "one of " + ", ".join(f"`{c}`" for c in param.choices)
        changes = "at run time" if param.dynamic else "read-only"
        default = f"the node's `{inherited}`" if inherited else show_default(param.default)
        cells = [f"`{param.name}`"]
        cells += [who, type_name(param), default] if per_agent else [default, type_name(param)]
        cells += [bounds, changes, cell(param.description)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def markers(name: str) -> tuple[str, str]:
    return f"<!-- BEGIN GENERATED: {name} -->", f"<!-- END GENERATED: {name} -->"


def generated(text: str, name: str) -> str:
    """The text between a table's markers (ValueError when the page lacks them)."""
    begin, end = markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"the page needs one '{begin}' followed by one '{end}'")
    return text.split(begin, 1)[1].split(end, 1)[0]


def table(name: str, loader) -> str:
    rows = loader()
    return "\n" + render(rows, per_agent=rows[0][1] is not None) + "\n"


def page_text(page: str, text: str) -> str:
    """``text`` (the page ``page``) with every generated table rewritten from the code."""
    for name, loader in TABLES[page]:
        begin, end = markers(name)
        old = generated(text, name)
        text = text.replace(begin + old + end, begin + table(name, loader) + end)
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when a page differs from the code")
    args = parser.parse_args(argv)
    stale = []
    for page in TABLES:
        path = PAGES / page
        text = path.read_text()
        new = page_text(page, text)
        if new != text:
            stale.append(path.relative_to(REPO))
            if not args.check:
                path.write_text(new)
    if args.check and stale:
        print("parameter tables differ from the code (run: python tools/parameter_pages.py): "
              + ", ".join(map(str, stale)), file=sys.stderr)
        return 1
    for path in stale:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
