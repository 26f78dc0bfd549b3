package lmspark.fuzz

import java.io.{BufferedReader, File, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Path}
import java.util.concurrent.{LinkedBlockingQueue, TimeUnit}

import scala.collection.mutable
import scala.jdk.CollectionConverters._

/** What one reader made of one file: `ROWS` (detail `<digest> <rows> <wanted digest> <wanted rows>`,
  * or `<digest> <rows>` for `lm-wanted`; [[FuzzChild]]), `ERROR`, `FALLBACK`,
  * `NOSCHEMA` (as the child printed them), or what the parent saw: `HANG`, `CRASH`, `OOM`, and
  * `NOTRUN` for a reference never reached. */
final case class ReadResult(kind: String, detail: String) {
  override def toString: String = s"$kind $detail"
}

/**
 * Runs [[FuzzChild]] processes over a list of files and collects one [[ReadResult]] per reader
 * per file. Each child is `nice -n 10 java -Xmx256m -XX:+ExitOnOutOfMemoryError` on the test
 * JVM's own classpath; at most `workers` children run at once, each over its share of the files.
 * When no line comes for `stallSeconds`, the read in progress is a HANG: the child is killed and a
 * new one continues with what is left (the same file's remaining readers first). A child that ends
 * in the middle of a read gives OOM (exit code 3 or an OutOfMemoryError on stderr) or CRASH.
 */
object FuzzRunner {

  /** How long a new child may take to print its first line. */
  private val startupSeconds = 120

  /** The readers of every file, in the order the child runs them (lmspark's first). */
  val readers: Seq[String] = Seq("lm", "lm-wanted", "spark", "pq")

  private val addOpens = Seq("java.lang", "java.lang.invoke", "java.lang.reflect", "java.io", "java.net", "java.nio",
    "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "sun.nio.ch", "sun.nio.cs",
    "sun.security.action", "sun.util.calendar").map(p => s"--add-opens=java.base/$p=ALL-UNNAMED")

  private def command(args: Seq[String]): Seq[String] = {
    val java = new File(System.getProperty("java.home"), "bin/java").getAbsolutePath
    Seq("nice", "-n", "10", java, "-Xmx256m", "-XX:+ExitOnOutOfMemoryError", "-XX:+UseSerialGC",
      "-XX:TieredStopAtLevel=1", "-Xss1m", "-Dlog4j2.level=ERROR", "-XX:+IgnoreUnrecognizedVMOptions") ++ addOpens ++
      Seq("-Djdk.reflect.useDirectMethodHandle=false", "-cp", System.getProperty("java.class.path"),
        FuzzChild.getClass.getName.stripSuffix("$")) ++ args
  }

  /** The results per file and reader, and the errors of the runner itself (a child that could not
    * start, say). */
  def run(files: IndexedSeq[Path], workers: Int, stallSeconds: Int, logDir: Path,
      readers: Seq[String] = readers): (Map[Path, Map[String, ReadResult]], Seq[String]) = {
    val errors = new java.util.concurrent.ConcurrentLinkedQueue[String]()
    Files.createDirectories(logDir)
    val shares = (0 until workers).map(w => files.indices.filter(_ % workers == w).map(files))
    val threads = shares.zipWithIndex.map { case (share, w) =>
      val results = mutable.Map.empty[Path, Map[String, ReadResult]]
      val t = new Thread(() =>
        try runShare(share, readers, stallSeconds, logDir, w, results)
        catch { case e: Throwable => errors.add(s"worker $w: $e") }, s"fuzz-worker-$w")
      t.setDaemon(true)
      t.start()
      (t, results)
    }
    threads.foreach(_._1.join())
    (threads.flatMap(_._2).toMap, errors.asScala.toSeq)
  }

  private final class Failure(msg: String) extends RuntimeException(msg)

  private def runShare(share: IndexedSeq[Path], readers: Seq[String], stallSeconds: Int, logDir: Path, worker: Int,
      results: mutable.Map[Path, Map[String, ReadResult]]): Unit = {
    val byPath = share.map(p => p.toString -> p).toMap
    var children = 0
    def pending: IndexedSeq[(Path, Seq[String])] =
      share.map(p => p -> readers.filterNot(results.getOrElse(p, Map.empty).contains)).filter(_._2.nonEmpty)
    while (pending.nonEmpty) {
      val todo = pending
      children += 1
      val stderr = logDir.resolve(s"child-$worker-$children.stderr")
      val pb = new ProcessBuilder(command(todo.map { case (p, rs) => s"${rs.mkString(",")}=$p" }).asJava)
        .redirectError(stderr.toFile)
      val proc = pb.start()
      proc.getOutputStream.close()
      val lines = new LinkedBlockingQueue[Option[String]]()
      val pump = new Thread(() => {
        val in = new BufferedReader(new InputStreamReader(proc.getInputStream, StandardCharsets.UTF_8))
        try { var l = in.readLine(); while (l != null) { lines.put(Some(l)); l = in.readLine() } }
        catch { case _: java.io.IOException => () }
        finally lines.put(None)
      })
      pump.setDaemon(true)
      pump.start()
      var current: Option[(Path, String)] = None
      var progress = false
      var sawLine = false
      def record(p: Path, reader: String, r: ReadResult): Unit = {
        results(p) = results.getOrElse(p, Map.empty) + (reader -> r)
        progress = true
      }
      var done = false
      while (!done) {
        // A child's first line waits for the JVM to start and Spark's classes to load: more time.
        val limit = if (sawLine) stallSeconds else math.max(stallSeconds, startupSeconds)
        lines.poll(limit.toLong, TimeUnit.SECONDS) match {
          case null =>
            proc.descendants().forEach(_.destroyForcibly())
            proc.destroyForcibly()
            proc.waitFor()
            current.foreach { case (p, r) => record(p, r, ReadResult("HANG", s"no result within $limit s")) }
            done = true
          case None =>
            val code = proc.waitFor()
            current.foreach { case (p, r) =>
              val err = tail(stderr)
              val kind = if (code == 3 || err.contains("OutOfMemoryError")) "OOM" else "CRASH"
              record(p, r, ReadResult(kind, s"child exit code $code; stderr: $err"))
            }
            done = true
          case Some(line) =>
            sawLine = true
            val parts = line.split(" ", 4)
            if (parts.length >= 3 && parts(0) == "begin" && byPath.contains(parts(2))) {
              current = Some((byPath(parts(2)), parts(1)))
            } else if (parts.length >= 3 && readers.contains(parts(0)) && byPath.contains(parts(1))) {
              record(byPath(parts(1)), parts(0), ReadResult(parts(2), if (parts.length > 3) parts(3) else ""))
              current = None
            }
        }
      }
      if (!progress) throw new Failure(s"a fuzz child made no progress; its stderr: ${tail(stderr)}")
      // After a hang, crash or OOM, the file's later readers are not the culprit: run them again.
    }
  }

  private def tail(p: Path): String =
    if (!Files.exists(p)) ""
    else {
      val s = new String(Files.readAllBytes(p), StandardCharsets.UTF_8)
      s.takeRight(800).replaceAll("[\\r\\n\\t]+", " | ")
    }
}
