"""Sphinx configuration of the documentation site (``python -m sphinx -W docs docs/_build``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

project = "capacity"
author = "the capacity developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
html_theme = "pydata_sphinx_theme"
html_title = "capacity"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
myst_heading_anchors = 3
