# lmspark: the two commands are `make test` and `make demo`; both set everything up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
VERSION := $(shell cat python/lmspark/VERSION)
JAR := python/lmspark/jars/lmspark-$(VERSION).jar
SBT := ./sbtw

.PHONY: all venv venv-bench jar test test-jvm test-py demo bench docs clean

all: jar

$(VENV)/.installed: python/requirements-dev.txt python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r python/requirements-dev.txt
	$(PY) -m pip install -q -e ./python
	touch $@

venv: $(VENV)/.installed

# Builds the jar and ships it inside the Python package.
jar:
	$(SBT) package < /dev/null
	mkdir -p python/lmspark/jars
	rm -f python/lmspark/jars/*.jar
	cp target/lmspark-$(VERSION).jar $(JAR)

# Every test: scalatest under sbt, then pytest against real PySpark sessions.
test: venv venv-bench
	$(SBT) test package < /dev/null
	mkdir -p python/lmspark/jars && rm -f python/lmspark/jars/*.jar && cp target/lmspark-$(VERSION).jar $(JAR)
	$(PY) -m pytest -q tests

test-jvm:
	$(SBT) test < /dev/null

# Long tests, kept out of `make test`: one target per test, all run by `make test-long`.
.PHONY: test-long test-memory test-soak
test-long: test-memory test-soak

# 8M-row row groups (over 1 GiB of chunk bytes each; the file is generated once into .cache/long)
# read by lmspark with spark.driver.memory=1g, answers against vanilla Spark; prints heap figures.
test-memory: venv jar
	LMSPARK_LONG=1 nice -n 10 $(PY) -m pytest -q -s tests/long/test_memory.py

test-py: venv venv-bench jar
	$(PY) -m pytest -q tests

# The soak: 1,000 benchmark queries in one session, lmspark on and off in turn; heap, off-heap and
# open data files checked every hundred; figures in target/soak.md. LMSPARK_SOAK_QUERIES and
# LMSPARK_SOAK_SCALE change its size.
test-soak: venv venv-bench jar
	$(PY) -m pytest -q -s tests/long/test_soak.py

# Generates TPC-H lineitem (SF1) once, then runs a handful of queries with lmspark on and off.
demo: venv jar
	$(PY) -m lmspark.demo

# The benchmark's extra Python packages (DuckDB, DataFusion, matplotlib, tqdm).
$(VENV)/.bench-installed: $(VENV)/.installed python/requirements-bench.txt
	$(PY) -m pip install -q -r python/requirements-bench.txt
	touch $@

venv-bench: $(VENV)/.bench-installed

# lmspark beside vanilla Spark, Comet, DuckDB and DataFusion (SF 10 by default); options via BENCH_ARGS,
# e.g. make bench BENCH_ARGS="--scale 1 --runs 3". Results go to benchmarks/results/.
bench: venv jar venv-bench
	$(PY) -m lmspark.bench $(BENCH_ARGS)

# Regenerates the README config table and python/lmspark/conf.py from LmConf.scala.
docs:
	$(SBT) "runMain lmspark.LmConfDocs ." < /dev/null

clean:
	rm -rf target project/target python/lmspark/jars .cache

# Row selections: run-length selectors vs mask over named shapes, driving our PLAIN and RLE_DICTIONARY
# decoders (see SelectionBench). Writes benchmarks/selection/results.{csv,md} and chart.png. Options via
# BENCH_SELECTION_ARGS, e.g. make bench-selection BENCH_SELECTION_ARGS="reps=5 rows=262144".
.PHONY: bench-selection
bench-selection: venv-bench
	$(SBT) "Test/runMain lmspark.selection.bench.SelectionBench benchmarks/selection $(BENCH_SELECTION_ARGS)" < /dev/null
	$(PY) benchmarks/selection/plot.py benchmarks/selection

# The fuzz tests alone, longer than in `make test` (300 byte-level and 150 row-group-table mutants):
# e.g. make fuzz FUZZ_MUTANTS=5000 FUZZ_FOOTER_MUTANTS=2000 FUZZ_SEED=7. Outcomes go to
# target/fuzz-outcomes.md and target/fuzz-footer-outcomes.md.
FUZZ_MUTANTS ?= 2000
FUZZ_FOOTER_MUTANTS ?= 1000
FUZZ_SEED ?= 20261122
.PHONY: fuzz
fuzz:
	LMSPARK_FUZZ_MUTANTS=$(FUZZ_MUTANTS) LMSPARK_FUZZ_FOOTER_MUTANTS=$(FUZZ_FOOTER_MUTANTS) LMSPARK_FUZZ_SEED=$(FUZZ_SEED) $(SBT) "testOnly lmspark.fuzz.*" < /dev/null
