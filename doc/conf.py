"""Sphinx configuration of the documentation in doc/ (markdown through MyST).

rosdoc2 (docs.ros.org) builds it as planning_collision's documentation: the package's
rosdoc2.yaml names this folder as its Sphinx source. By hand, with sphinx and myst-parser
installed: ``sphinx-build doc build/doc-html``.
"""

project = "planning_collision"
author = "planning_collision maintainers"
copyright = "planning_collision maintainers, Apache-2.0"  # noqa: A001 (Sphinx's name)

extensions = ["myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
master_doc = "index"
myst_heading_anchors = 3  # links to a page's section, as GitHub renders them
exclude_patterns = ["_build", "conf.py"]
html_theme = "sphinx_rtd_theme"  # rosdoc2 sets its own theme
# Links out of doc/ (the README, the CHANGELOGs, source files) are fine on GitHub; Sphinx
# cannot resolve them inside its source folder.
suppress_warnings = ["myst.xref_missing"]
