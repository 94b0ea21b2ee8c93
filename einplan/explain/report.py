"""The Report object explain returns: the records, their plain data, and the
renderers behind str(), summary() and notebooks' markdown."""
from __future__ import annotations

import json
from dataclasses import replace

from .render import render_markdown, render_summary, render_text


class Report:
    """An explain report.  ``plan`` is the very Plan object einsum runs."""

    def __init__(self, record, plan=None, spec=None):
        self.record = record          # schema.ReportData
        self._data = record.to_dict()
        self.plan = plan
        self.spec = spec

    def with_measured(self, measured) -> Report:
        return Report(replace(self.record, measured=measured), self.plan, self.spec)

    def to_dict(self) -> dict:
        """The report as plain JSON-able data (a fresh copy; see SCHEMA)."""
        return self.record.to_dict()

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self._data, indent=indent)

    def __str__(self):
        return render_text(self.record)

    def __repr__(self):
        return f"<einplan.Report {self._data['call']['spec']} {self._data['plan']['kinds']}>"

    def summary(self) -> str:
        """A few lines: the decisions that matter and the predicted cost."""
        return render_summary(self.record)

    def _repr_markdown_(self):
        return render_markdown(self.record)

    def __getitem__(self, key):
        return self._data[key]
