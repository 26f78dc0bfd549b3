"""Packaging hook: a wheel is built only when it carries every Spark line's jar.

The metadata lives in pyproject.toml; this file only makes ``bdist_wheel`` fail, naming the missing
jars, when ``lmspark/jars/`` lacks a line's jar (`make wheel` builds them all first).
"""

from pathlib import Path

from setuptools import setup

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent


def missing_jars() -> list[str]:
    table: dict = {}
    exec((HERE / "lmspark" / "lines.py").read_text(), table)
    version = (HERE / "lmspark" / "VERSION").read_text().strip()
    names = [table["jar_name"](line, version) for line in table["SCALA_OF_LINE"]]
    return [n for n in names if not (HERE / "lmspark" / "jars" / n).is_file()]


class CheckedWheel(bdist_wheel):
    def run(self):
        missing = missing_jars()
        if missing:
            raise SystemExit(
                "lmspark wheel not built: lmspark/jars/ lacks " + ", ".join(missing)
                + ". Build every line's jar first (`make jars`, or `make wheel`, which does it)."
            )
        super().run()


setup(cmdclass={"bdist_wheel": CheckedWheel})
