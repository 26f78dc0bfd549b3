"""Time budgets: where each second of a profiled query went, and how far each line is from its bound.

``make profile`` (``profile.py``) records CPU samples of a Spark JVM with async-profiler (JFR format)
and converts them to collapsed stacks with async-profiler's own converter, one line per distinct
stack: ``[thread name tid=N];frame;frame;...;leaf count`` (Java frames end in ``_[j]``, ``_[i]`` and the like). This module turns those lines, the
query's wall times and Spark's task figures into a budget:

- every sample of an executor task (a stack under ``Executor$TaskRunner.run``) lands on one line of the task budget: the first frame,
  walking from the leaf towards the root, that one of ``TASK_LINES`` claims (so a decompressor
  called from a column reader counts as decompression, the reader's own loop as values); samples
  outside the file scan's iterator are Spark's operators above the scan, or task launch and
  teardown;
- every other thread's sample is driver planning, driver scheduling, the JIT compilers, the
  garbage collector or other JVM threads, by thread name and stack (``OTHER_LINES``);
- a sample stands for a share of one thread's CPU time (async-profiler's ``ctimer`` event counts
  per-thread CPU time, but the kernel fires such timers on its scheduler tick, so fewer samples
  arrive than the interval asks): a line's seconds are its samples times ``seconds_per_sample``
  (the process CPU measured over the runs divided by all samples), divided by the runs profiled.

The physical bounds (``bounds``) come from the scan's own counts: bytes decompressed at lzbench's
per-core figure for the codec, values decoded at the measured memory bandwidth (8 bytes a value),
levels and dictionary ids at 2 billion a second per core.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: Task-budget lines, each claimed by frames matching its pattern (checked from the leaf up; the
#: first frame any pattern matches decides, and the earlier pattern wins on one frame).
TASK_LINES: tuple[tuple[str, re.Pattern], ...] = tuple((name, re.compile(p)) for name, p in (
    ("decompression", r"[Dd]ecompress|[Ss]nappy|[Zz]std|ZSTD|[Ll]z4|LZ4|Inflater|inflate|[Bb]rotli"),
    ("footer and metadata", r"FooterReader|readFooter|ParquetMetadataConverter|MetadataCache|"
                            r"ColumnIndexReader|OffsetIndex|readColumnIndex|readOffsetIndex|BloomFilterReader"),
    ("I/O", r"FetchingStream|ChunkWindow|FSDataInputStream|RawLocalFileSystem|LocalFileSystem|FileChannelImpl|"
            r"__GI_read|__libc_pread|pread|ChecksumFileSystem|ConsecutivePartList|readFully|SeekableInputStream"),
    ("levels", r"NestedLeafReader\.(check|checkExactly|present|levelsFor|finishCheck|loadCurrentPage)|v1Levels|v2Levels|"
               r"LevelDecoder|NestedAssembler|NestedLevels|VectorizedRleValuesReader\.readBatch|"
               r"ParquetColumnVector|readDefinitionLevels|readRepetitionLevels"),
    ("predicates", r"lmspark/predicate/|VectorFilter|MaskFold\$\.ids"),
    ("selection bookkeeping", r"lmspark/selection/|SelectionCursor|FilterFirstPass\.(narrow|run)|MaskFold|"
                              r"LateMaterialization"),
    ("vector copies", r"PredicateCache|BatchRowWriter|copyTo|CachedColumn"),
    ("values", r"lmspark/decode/|lmspark/column/|VectorWriter|ParquetVectorUpdater|VectorizedPlainValuesReader|"
               r"VectorizedDelta|VectorizedRleValuesReader|VectorizedColumnReader|Dictionary"),
    ("scan setup and pruning", r"^lmspark/|VectorizedParquetRecordReader|SpecificParquetRecordReaderBase|"
                               r"ParquetFileFormat|ParquetFileReader|FilterCompat|RowGroupFilter|ParquetReadSupport"),
))

#: Frames that never decide a line (shared helpers): their callers do. A run-length decoder decodes
#: levels for a level reader and dictionary ids for a value reader.
NEUTRAL = re.compile(r"RleBitPackedDecoder|LittleEndian|^java/|^jdk/|^sun/|^scala/|_arraycopy|^__mem|memmove|memset|"
                     r"^Unsafe|^JNI|^itable|^vtable|^Interpreter|^C2I|^I2C")

#: Frames that mark a sample as inside the file scan's iterator (both engines read through it).
SCAN_FRAME = re.compile(r"FileScanRDD|lmspark/scan/|lmspark/plan/KeptSplits|VectorizedParquetRecordReader|"
                        r"RecordReaderIterator|ParquetFileFormat")
#: A task's own body (its iterator), as opposed to its launch, deserialization and teardown.
TASK_BODY = re.compile(r"ResultTask\.runTask|ShuffleMapTask\.runTask")
#: A sample of an executor task thread (by its stack: thread names are cut to 15 characters, and
#: Spark renames its task threads between tasks).
TASK_THREAD = re.compile(r"executor/Executor\$TaskRunner\.run")

#: Lines for the other threads: (line, thread-name pattern or None, stack pattern or None).
OTHER_LINES: tuple[tuple[str, re.Pattern | None, re.Pattern | None], ...] = (
    ("JIT compilers", re.compile(r"Compiler"), None),
    ("garbage collector", re.compile(r"GC Thread|G1 |VM Thread|Conc#|Refine#|CG\d|ZWorker|Shenandoah"), None),
    ("driver: planning", None, re.compile(
        r"QueryExecution|RuleExecutor|SparkPlanner|SparkStrategies|Analyzer|Optimizer|LmScanRule|SplitPruner|"
        r"AbstractSqlParser|AbstractParser|CodeGenerator|WholeStageCodegen")),
    ("driver: scheduling", None, re.compile(
        r"DAGScheduler|TaskSchedulerImpl|TaskSetManager|LocalEndpoint|CoarseGrainedScheduler|Dispatcher|"
        r"ClosureCleaner|JavaSerializer|SparkContext\.runJob|AsyncEventQueue|LiveListenerBus|AppStatusListener|"
        r"SQLAppStatusListener|netty")),
)

TASK_ORDER = ("footer and metadata", "I/O", "decompression", "levels", "values", "predicates",
              "selection bookkeeping", "vector copies", "scan setup and pruning",
              "Spark operators above the scan", "task launch and teardown")
OTHER_ORDER = ("driver: planning", "driver: scheduling", "JIT compilers", "garbage collector", "other JVM threads")


@dataclass
class Samples:
    """Samples per budget line, split into task threads' and the other threads'."""
    task: dict[str, int] = field(default_factory=lambda: {k: 0 for k in TASK_ORDER})
    other: dict[str, int] = field(default_factory=lambda: {k: 0 for k in OTHER_ORDER})

    @property
    def task_total(self) -> int:
        return sum(self.task.values())

    @property
    def total(self) -> int:
        return self.task_total + sum(self.other.values())


def task_line(frames: list[str]) -> str:
    """The task-budget line of one executor-thread stack (``frames`` root first, thread excluded)."""
    if not any(SCAN_FRAME.search(f) for f in frames):
        return "Spark operators above the scan" if any(TASK_BODY.search(f) for f in frames) \
            else "task launch and teardown"
    # Only frames inside the scan decide (the scan's caller chain is Spark's).
    first = next(i for i, f in enumerate(frames) if SCAN_FRAME.search(f))
    for f in reversed(frames[first:]):
        if NEUTRAL.search(f):
            continue
        for name, pattern in TASK_LINES:
            if pattern.search(f):
                return name
    return "scan setup and pruning"


def other_line(thread: str, frames: list[str]) -> str:
    """The line of a sample on a thread other than an executor task's."""
    for name, thread_pattern, stack_pattern in OTHER_LINES:
        if thread_pattern is not None and thread_pattern.search(thread):
            return name
        if stack_pattern is not None and any(stack_pattern.search(f) for f in frames):
            return name
    return "other JVM threads"


def classify(collapsed_lines) -> Samples:
    """Counts the samples of async-profiler's collapsed output (with threads) per budget line."""
    out = Samples()
    for line in collapsed_lines:
        line = line.rstrip("\n")
        if not line or " " not in line:
            continue
        stack, count = line.rsplit(" ", 1)
        try:
            n = int(count)
        except ValueError:
            continue
        frames = stack.split(";")
        thread = frames[0].strip("[]") if frames and frames[0].startswith("[") else ""
        body = frames[1:] if thread else frames
        if any(TASK_THREAD.search(f) for f in body):
            out.task[task_line(body)] += n
        else:
            out.other[other_line(thread, body)] += n
    return out


#: lzbench's single-core decompression figures (GB/s) that the issue's bounds use.
CODEC_GBPS = {"SNAPPY": 1.08, "ZSTD": 1.35, "LZ4": 3.7, "LZ4_RAW": 3.7, "GZIP": 0.4, "UNCOMPRESSED": None}
#: Bit-unpacking and level decoding: values a second per core.
UNPACK_PER_SEC = 2e9


def bounds(metrics: dict[str, int], codec: str, memory_gbps: float) -> dict[str, float]:
    """CPU seconds each task line would need at its physical bound, from the scan's counts
    (lmspark's metrics; empty for a scan without them)."""
    out: dict[str, float] = {}
    gbps = CODEC_GBPS.get(codec.upper())
    decompressed = metrics.get("lmBytesDecompressed")
    if decompressed is not None and gbps:
        out["decompression"] = decompressed / (gbps * 1e9)
    values = metrics.get("lmValuesDecoded")
    if values is not None and memory_gbps > 0:
        out["values"] = values * 8 / (memory_gbps * 1e9)
        out["levels"] = values / UNPACK_PER_SEC
    rows = metrics.get("lmRowsScanned")
    if rows is not None and memory_gbps > 0:
        out["predicates"] = rows * 8 / (memory_gbps * 1e9)
    return out


def _fmt(x: float | None) -> str:
    return "" if x is None else f"{x:.3f}"


def render(engine: str, runs: int, seconds_per_sample: float, samples: Samples, timing: dict,
           bound: dict[str, float]) -> str:
    """One engine's budget as Markdown: wall-time lines, then CPU lines per run."""
    per_run = lambda n: n * seconds_per_sample / max(runs, 1)  # noqa: E731
    cores = timing["cores"]
    wall = timing["wall_s"]
    lines = [f"### {engine}", "",
             f"Per run, mean of {runs} profiled runs: wall {wall:.3f} s on {cores} cores "
             f"({cores * wall:.3f} core-seconds); one sample = {seconds_per_sample * 1e3:.2f} ms of CPU.", "",
             "| wall-time line | seconds |", "|---|---:|",
             f"| query (wall) | {wall:.3f} |",
             f"| driver: parsing, analysis, optimization, planning | {timing['planning_s']:.3f} |",
             f"| of which split pruning at planning (footers read: {timing.get('footers_read_at_planning', 0)}) "
             f"| {timing.get('split_pruning_s', 0.0):.3f} |",
             f"| driver: file listing (scan metadata time) | {timing.get('listing_s', 0.0):.3f} |",
             f"| jobs: submission to last task's end | {timing['jobs_s']:.3f} |",
             f"| tasks launched | {timing['tasks']:.0f} |",
             f"| tasks: scheduler delay (sum) | {timing['scheduler_delay_s']:.3f} |",
             f"| tasks: deserialization (sum) | {timing['deserialize_s']:.3f} |",
             f"| tasks: run time (sum) | {timing['run_s']:.3f} |",
             f"| tasks: CPU time (sum) | {timing['task_cpu_s']:.3f} |",
             f"| process CPU (all threads) | {timing['process_cpu_s']:.3f} |",
             f"| idle core-seconds ({cores} x wall - process CPU) | {max(0.0, cores * wall - timing['process_cpu_s']):.3f} |",
             "",
             "| CPU line (profile) | CPU s | share of task CPU | bound s | line / bound |",
             "|---|---:|---:|---:|---:|"]
    total = max(samples.task_total, 1)
    for k in TASK_ORDER:
        s = per_run(samples.task[k])
        b = bound.get(k)
        ratio = f"{s / b:.1f}x" if b else ""
        lines.append(f"| task: {k} | {s:.3f} | {100 * samples.task[k] / total:.1f}% | {_fmt(b)} | {ratio} |")
    lines.append(f"| **task threads, all** | **{per_run(samples.task_total):.3f}** | 100% | | |")
    for k in OTHER_ORDER:
        lines.append(f"| {k} | {per_run(samples.other[k]):.3f} | | | |")
    lines.append("")
    return "\n".join(lines)
