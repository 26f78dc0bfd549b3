# lmspark: the two commands are `make test` and `make demo`; both set everything up first.
# Every target works on one Spark line: LINE=3.5|4.0|4.1|4.2|4.3 (project/spark-lines.txt), 4.3 by
# default. Each line has its own virtualenv (.cache/venv-spark<line>, with that line's pyspark,
# whose jars the build compiles against), its own sbt outputs and its own jar.
SHELL := /bin/bash
PYTHON ?= python3
LINE ?= 4.3
LINES := $(shell awk '!/^\#/ && NF {print $$1}' project/spark-lines.txt)
SPARK_VERSION := $(shell awk -v l=$(LINE) '!/^\#/ && $$1 == l {print $$2}' project/spark-lines.txt)
SCALA_BINARY := $(shell awk -v l=$(LINE) '!/^\#/ && $$1 == l {split($$3, v, "."); print v[1] "." v[2]}' project/spark-lines.txt)
ifeq ($(SPARK_VERSION),)
$(error unknown LINE=$(LINE); the lines are $(LINES))
endif
VENV := .cache/venv-spark$(LINE)
PY := $(VENV)/bin/python
VERSION := $(shell cat python/lmspark/VERSION)
JAR_NAME := lmspark-spark$(LINE)_$(SCALA_BINARY)-$(VERSION).jar
JAR := python/lmspark/jars/$(JAR_NAME)
SBT := ./sbtw -Dlmspark.line=$(LINE)

.PHONY: all venv venv-bench jar test test-jvm test-py demo bench docs clean

all: jar

$(VENV)/.installed: python/requirements-dev.txt python/pyproject.toml project/spark-lines.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q pyspark==$(SPARK_VERSION) -r python/requirements-dev.txt
	$(PY) -m pip install -q -e ./python
	touch $@

venv: $(VENV)/.installed

# Builds the line's jar and ships it inside the Python package (beside the other lines' jars).
jar: venv
	$(SBT) package < /dev/null
	mkdir -p python/lmspark/jars
	cp target/jars/$(JAR_NAME) $(JAR)

# Every line's jar (one target per line, jar-<line>, below).
.PHONY: jars wheel wheel-only test-wheel
jars: $(addprefix jar-,$(LINES))

# dist/lmspark-<version>-py3-none-any.whl with every line's jar (the build fails if one is missing).
wheel: jars wheel-only

wheel-only: venv
	rm -rf dist python/build python/*.egg-info
	$(PY) -m pip wheel -q --no-deps -w dist ./python
	ls dist/lmspark-$(VERSION)-py3-none-any.whl

# The wheel in a fresh virtualenv beside the line's pyspark: demo queries with lmspark on and off,
# equal answers, LmParquetScan in the plan; a jar of another line steps aside.
test-wheel:
	tests/wheel/run_wheel_test.sh $(LINE) $(SPARK_VERSION) dist/lmspark-$(VERSION)-py3-none-any.whl

# Every test of one line (4.3 unless LINE says otherwise): scalatest under sbt, then pytest against
# real PySpark sessions; on a line without a Delta release (project/delta-lines.txt), the Delta Lake
# suite on DELTA_LINE too.
DELTA_LINES := $(shell awk '!/^\#/ && NF {print $$1}' project/delta-lines.txt)
DELTA_LINE ?= 4.2
# Two streams run side by side once the jar is built: scalatest, and pytest followed by the Delta
# suites on DELTA_LINE; on the 2-core machine the two take about as long as each other (docs/testing.md
# has the figures). Each stream's output is printed whole when it finishes.
test: venv venv-bench
	$(SBT) package < /dev/null
	mkdir -p python/lmspark/jars && cp target/jars/$(JAR_NAME) $(JAR)
	$(MAKE) --no-print-directory -j2 --output-sync=target test-jvm test-pytest-delta

# `test-py` without building the jar: `make test` builds it once, before sbt and pytest run side by
# side (a second sbt on the same line would clash with the first; another line's sbt has its own
# outputs, target/spark<line>).
.PHONY: test-pytest test-pytest-delta
test-pytest:
	$(PY) -m pytest -q --durations=15 tests

# pytest, then, on a line without a Delta release, the Delta suites on DELTA_LINE.
test-pytest-delta: test-pytest
	$(if $(filter $(LINE),$(DELTA_LINES)),,$(MAKE) --no-print-directory test-delta)

# Delta Lake tables through lmspark on DELTA_LINE, a line with a Delta release: DeltaScanSuite (real
# Delta tables against Delta's reader), then tests/test_delta.py in a PySpark session with Delta.
.PHONY: test-delta delta-jars
test-delta:
	$(MAKE) --no-print-directory delta-jars LINE=$(DELTA_LINE)
	./sbtw -Dlmspark.line=$(DELTA_LINE) "testOnly lmspark.plan.DeltaScanSuite" package < /dev/null
	$(MAKE) --no-print-directory delta-pytest LINE=$(DELTA_LINE)

.PHONY: delta-pytest
delta-pytest:
	mkdir -p python/lmspark/jars && cp target/jars/$(JAR_NAME) $(JAR)
	LMSPARK_DELTA_JARS=$(DELTA_JARS_DIR) $(PY) -m pytest -q tests/test_delta.py

# The line's Delta release (project/delta-lines.txt) and the jars it needs beyond Spark's, as the
# build resolves them (from Maven Central, cached), into .cache/delta/<line>; and the delta-spark
# Python package (no dependencies: the line's pyspark stays) into the line's virtualenv.
DELTA_COORDS = $(shell awk -v l=$(LINE) '!/^\#/ && $$1 == l {print $$2}' project/delta-lines.txt)
DELTA_VERSION = $(lastword $(subst :, ,$(DELTA_COORDS)))
DELTA_JARS_DIR := .cache/delta/$(LINE)
delta-jars: venv
	test -n "$(DELTA_COORDS)" || { echo "no Delta release for Spark $(LINE) in project/delta-lines.txt"; exit 1; }
	$(SBT) deltaJars < /dev/null
	$(PY) -m pip install -q --no-deps delta-spark==$(DELTA_VERSION)


test-jvm: venv
	$(SBT) test < /dev/null

# The other lines (every line but LINE), each in its own virtualenv and with its own jar: the
# scalatest suites that run Spark (differential late materialization, pruning, type conversion,
# output modes, plan, files, corruption) and the pytest differential, corpus, plan, cluster and Spark
# Connect suites.
OTHER_LINES := $(filter-out $(LINE),$(LINES))
# One line's jar, and one line's wheel test, as targets of their own (jar-<line>, test-wheel-<line>):
# CI builds every other line's jar and runs two wheel tests two lines at a time (make -j2; each
# line's sbt has its own outputs, each wheel test its own virtualenv).
LINE_JARS := $(addprefix jar-,$(LINES))
WHEEL_TESTS := $(addprefix test-wheel-,$(LINES))
.PHONY: other-jars $(LINE_JARS) $(WHEEL_TESTS)
other-jars: $(addprefix jar-,$(OTHER_LINES))
$(LINE_JARS): jar-%:
	$(MAKE) --no-print-directory jar LINE=$*
$(WHEEL_TESTS): test-wheel-%:
	$(MAKE) --no-print-directory test-wheel LINE=$*
MATRIX_SCALATEST := lmspark.scan.* lmspark.plan.*
MATRIX_PYTEST := tests/test_matrix.py tests/test_late_materialization.py tests/test_output_mode.py \
	tests/test_int96_conversion.py tests/test_spark_written.py tests/test_corpus.py tests/test_plan.py tests/test_cluster.py tests/test_connect.py
# The test classes' jar (the simulated object store of `make bench-store`).
.PHONY: jar-tests bench-store
jar-tests: venv
	$(SBT) Test/package < /dev/null

# The benchmark against the simulated object store (20 ms a request, 100 MB/s): lmspark and vanilla
# Spark, with requests and bytes per query; options via BENCH_ARGS as for `make bench`.
bench-store: venv jar jar-tests venv-bench
	$(PY) -m lmspark.bench --store sim --engines vanilla lmspark $(BENCH_ARGS)

# lmspark through real S3A against a local S3 server (moto_server), on Spark 4.1 (Hadoop 3.4.2):
# hadoop-aws 3.4.2 and the AWS SDK bundle 2.29.52 (641 MB) from Maven Central into .cache/s3a once.
S3A_LINE ?= 4.1
S3A_JARS := .cache/s3a
.PHONY: test-s3a
test-s3a:
	$(MAKE) --no-print-directory venv jar LINE=$(S3A_LINE)
	mkdir -p $(S3A_JARS)
	test -f $(S3A_JARS)/hadoop-aws-3.4.2.jar || mvn -q -B dependency:copy -Dartifact=org.apache.hadoop:hadoop-aws:3.4.2 -DoutputDirectory=$(S3A_JARS)
	test -f $(S3A_JARS)/bundle-2.29.52.jar || mvn -q -B dependency:copy -Dartifact=software.amazon.awssdk:bundle:2.29.52 -DoutputDirectory=$(S3A_JARS)
	.cache/venv-spark$(S3A_LINE)/bin/pip install -q "moto[server]==5.2.5" boto3
	LMSPARK_S3A=1 .cache/venv-spark$(S3A_LINE)/bin/python -m pytest -q -s tests/long/test_s3a.py

.PHONY: test-matrix test-line smoke
test-matrix:
	for l in $(OTHER_LINES); do $(MAKE) --no-print-directory test-line LINE=$$l || exit 1; done

# The matrix's suites on one line.
test-line: venv
	$(SBT) "testOnly $(MATRIX_SCALATEST)" package < /dev/null
	mkdir -p python/lmspark/jars && cp target/jars/$(JAR_NAME) $(JAR)
	$(PY) -m pytest -q $(MATRIX_PYTEST)

# CI's quick check of one line: it builds, one differential suite passes, the jar is packaged.
smoke: venv
	$(SBT) "testOnly lmspark.plan.LmScanRuleSuite" package < /dev/null
	mkdir -p python/lmspark/jars && cp target/jars/$(JAR_NAME) $(JAR)

# Long tests, kept out of `make test`: one target per test, all run by `make test-long`.
.PHONY: test-long test-memory test-soak
test-long: test-memory test-soak test-s3a

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

# One benchmark query profiled on vanilla Spark and on lmspark (async-profiler, fetched from Maven
# Central once): time budgets and flame graphs into benchmarks/profiles/. QUERY and DATASET name the
# query (DATASET defaults to the first data set that has it); PROFILE_ARGS adds options, e.g.
# make profile QUERY=q6 PROFILE_ARGS="--scale 1 --runs 3".
QUERY ?= q6
DATASET ?=
.PHONY: profile
profile: venv jar venv-bench
	$(PY) -m lmspark.bench.profile --query $(QUERY) $(if $(DATASET),--dataset $(DATASET)) $(PROFILE_ARGS)

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

# The Delta Lake benchmark on DELTA_LINE: lineitem_default as a Delta table with 10 % of its rows
# deleted through deletion vectors (lineitem_delta), the lineitem queries on vanilla Spark with Delta
# and on lmspark with Delta; options via BENCH_ARGS.
.PHONY: bench-delta
bench-delta:
	$(MAKE) --no-print-directory venv jar venv-bench delta-jars LINE=$(DELTA_LINE)
	.cache/venv-spark$(DELTA_LINE)/bin/python -m lmspark.bench --datasets lineitem_delta --engines vanilla lmspark $(BENCH_ARGS)

# Regenerates the README config table and python/lmspark/conf.py from LmConf.scala.
docs: venv
	$(SBT) "runMain lmspark.LmConfDocs ." < /dev/null

clean:
	rm -rf target project/target python/lmspark/jars .cache

# Row selections: run-length selectors vs mask over named shapes, driving our PLAIN and RLE_DICTIONARY
# decoders (see SelectionBench). Writes benchmarks/selection/results.{csv,md} and chart.png. Options via
# BENCH_SELECTION_ARGS, e.g. make bench-selection BENCH_SELECTION_ARGS="reps=5 rows=262144".
.PHONY: bench-selection
bench-selection: venv venv-bench
	$(SBT) "Test/runMain lmspark.selection.bench.SelectionBench benchmarks/selection $(BENCH_SELECTION_ARGS)" < /dev/null
	$(PY) benchmarks/selection/plot.py benchmarks/selection

# The fuzz tests alone, longer than in `make test` (300 byte-level and 150 row-group-table mutants):
# e.g. make fuzz FUZZ_MUTANTS=5000 FUZZ_FOOTER_MUTANTS=2000 FUZZ_SEED=7. Outcomes go to
# target/fuzz-outcomes.md and target/fuzz-footer-outcomes.md.
FUZZ_MUTANTS ?= 2000
FUZZ_FOOTER_MUTANTS ?= 1000
FUZZ_SEED ?= 20261122
.PHONY: fuzz
fuzz: venv
	LMSPARK_FUZZ_MUTANTS=$(FUZZ_MUTANTS) LMSPARK_FUZZ_FOOTER_MUTANTS=$(FUZZ_FOOTER_MUTANTS) LMSPARK_FUZZ_SEED=$(FUZZ_SEED) $(SBT) "testOnly lmspark.fuzz.*" < /dev/null
