"""The README is a front door, and neither it nor a page in doc/ points at something that is
not there: every relative link resolves, every file path written in code spans exists, and the
documentation has what rosdoc2 and a package need (conf.py, index, LICENSE, CHANGELOGs)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("planning_collision", "planning_collision_interfaces")
PAGES = [REPO / "README.md", *sorted((REPO / "doc").rglob("*.md"))]
# Where a path in a code span may start: the docs abbreviate the package's own folders.
ROOTS = (REPO, REPO / "planning_collision", REPO / "planning_collision" / "planning_collision",
         REPO / "planning_collision" / "test", REPO / "planning_collision_interfaces")
# Paths of an installed workspace or written at run time, not of the repository.
NOT_IN_THE_REPOSITORY = ("share/", "install/", "output/", "build/", "log/", "~/", "/")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE_PATH = re.compile(
    r"`([A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)+\.(?:py|yaml|md|xml|txt|rst|srv|msg|cfg|rviz|gif))`")


def page_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def prose(text: str) -> str:
    """The text outside fenced code blocks (commands there name the user's own files)."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a web address or an anchor on the page
        if not (page.parent / target.split("#")[0]).exists():
            broken.append(target)
    assert not broken, f"{page_id(page)} links to what does not exist: {broken}"


def exists(path: str) -> bool:
    """A path that starts with a package's folder is read from the repository's root (as
    written: planning_collision/ros/processes.py is not there); a shorter one may leave out
    the folders above it (ros/processes.py, config/orca.yaml, test/ros/...)."""
    if path.startswith(PACKAGES):
        return (REPO / path).exists()
    return any((root / path).exists() for root in ROOTS)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_file_path_in_code_spans_exists(page):
    """A path such as `planning_collision/planning_collision/ros/processes.py` names a file of
    the repository (the README once named planning_collision/ros/processes.py, which is not)."""
    missing = [path for path in CODE_PATH.findall(prose(page.read_text()))
               if not path.startswith(NOT_IN_THE_REPOSITORY) and not exists(path)]
    assert not missing, f"{page_id(page)} names files that do not exist: {missing}"


def test_the_readme_is_a_front_door():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    for needed in ("make demo", "make test", "## Install", "colcon build",
                   "error_code", "timeout_sec", "doc/images/demo_orca.gif",
                   # issue #21: the chain orca_node sits in beside Nav2
                   "--cmd_vel_smoothed--> orca_node", "--cmd_vel_orca--> collision_monitor",
                   "cmd_vel_out_topic:\ncmd_vel"):
        assert needed in text, f"README lacks {needed!r}"


def test_rosdoc2_finds_the_sphinx_project():
    """package.xml names rosdoc2.yaml, whose Sphinx source holds conf.py and the index."""
    manifest = ET.parse(REPO / "planning_collision" / "package.xml").getroot()
    (name,) = [e.text for e in manifest.find("export") if e.tag == "rosdoc2"]
    config = list(yaml.safe_load_all((REPO / "planning_collision" / name).read_text()))[-1]
    (sphinx,) = [b["sphinx"] for b in config["builders"] if "sphinx" in b]
    source = (REPO / "planning_collision" / sphinx["sphinx_sourcedir"]).resolve()
    assert source == REPO / "doc"
    assert (source / "conf.py").is_file() and (source / "index.rst").is_file()


def test_every_page_is_in_the_index():
    """Sphinx (and rosdoc2) show a page only through a toctree: a new page in doc/ must be
    listed in doc/index.rst."""
    index = (REPO / "doc" / "index.rst").read_text()
    listed = set(re.findall(r"^   ([\w/-]+)$", index, flags=re.M))
    pages = {str(page.relative_to(REPO / "doc").with_suffix(""))
             for page in (REPO / "doc").rglob("*.md")}
    assert not pages - listed, f"add to a toctree in doc/index.rst: {sorted(pages - listed)}"
    assert not listed - pages, f"doc/index.rst lists missing pages: {sorted(listed - pages)}"


def test_license_and_changelogs_exist():
    assert "Apache License" in (REPO / "LICENSE").read_text()
    for package in PACKAGES:
        manifest = ET.parse(REPO / package / "package.xml").getroot()
        assert manifest.findtext("license") == "Apache-2.0"
        changelog = (REPO / package / "CHANGELOG.rst").read_text()
        # ROS's changelog format (catkin_generate_changelog): a title of ^ under the name,
        # then one section per version, its line of -
        title = f"Changelog for package {package}"
        assert changelog.startswith(f"{'^' * len(title)}\n{title}\n{'^' * len(title)}\n")
        version = manifest.findtext("version")
        assert re.search(rf"^{re.escape(version)} \(\d{{4}}-\d{{2}}-\d{{2}}\)\n-+\n", changelog,
                         flags=re.M), f"{package}/CHANGELOG.rst has no section for {version}"
