"""A smoke report as JUnit XML, the format GitHub Actions, GitLab and Jenkins display.

One ``<testsuite>`` per kind of check (servers, scripts); each check is a ``<testcase>``
whose ``classname`` is the server or ``script`` and whose ``name`` is the check. A failure
carries its one-line message as ``message`` and the details (diff, Go errors) as text; the
server's or program's stderr goes to ``<system-err>``. Text is stripped of the control
characters XML 1.0 cannot carry.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from gocode.smoke import Check, Report

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _suite_of(check: Check) -> str:
    return "scripts" if check.group == "script" else "servers"


def to_xml(report: Report, name: str = "gocode smoke") -> str:
    root = ET.Element("testsuites", name=name)
    for suite_name in ("servers", "scripts"):
        checks = [c for c in report.checks if _suite_of(c) == suite_name]
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"{name}: {suite_name}",
            tests=str(len(checks)),
            failures=str(sum(c.status == "failed" for c in checks)),
            errors="0",
            skipped=str(sum(c.status == "skipped" for c in checks)),
            time=f"{sum(c.duration_ms for c in checks) / 1000:.3f}",
        )
        for c in checks:
            classname = "script" if c.group == "script" else c.group.replace("server ", "server.", 1)
            case = ET.SubElement(
                suite, "testcase", classname=_clean(classname), name=_clean(c.name), time=f"{c.duration_ms / 1000:.3f}"
            )
            if c.status == "failed":
                el = ET.SubElement(case, "failure", message=_clean(c.message), type="failure")
                el.text = _clean(c.details or c.message)
            elif c.status == "skipped":
                ET.SubElement(case, "skipped", message=_clean(c.message))
            if c.stderr:
                ET.SubElement(case, "system-err").text = _clean(c.stderr)
    root.set("tests", str(len(report.checks)))
    root.set("failures", str(report.count("failed")))
    root.set("skipped", str(report.count("skipped")))
    root.set("time", f"{report.duration_ms / 1000:.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(report: Report, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_xml(report), encoding="utf-8")
