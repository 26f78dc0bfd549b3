package lmspark;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether this jar may act in the running JVM: the running Spark's line (major.minor) must be the
 * line the jar was built for ({@code lmspark-build.properties}, written by the build). On a
 * mismatch, or a line no jar exists for, it logs one warning naming the supported lines and every
 * lmspark entry point stays inert, so every query runs as vanilla Spark.
 *
 * <p>Written in Java against Spark's Java-visible surface only, so that it loads and decides under
 * any Spark and Scala version, including one whose Scala library the rest of the jar cannot use.
 */
public final class SparkLineGate {
  private static final Logger LOG = LoggerFactory.getLogger(SparkLineGate.class);
  private static final Properties BUILD = load();
  private static volatile Boolean open;

  private SparkLineGate() {}

  /** The Spark line this jar was built for, e.g. {@code 4.3}. */
  public static String builtLine() { return BUILD.getProperty("line", "unknown"); }

  /** lmspark's version, e.g. {@code 0.1.0}. */
  public static String version() { return BUILD.getProperty("version", "unknown"); }

  /** Every Spark line an lmspark jar is built for, e.g. {@code 3.5, 4.0, 4.1, 4.2, 4.3}. */
  public static String supportedLines() { return BUILD.getProperty("lines", builtLine()).replace(",", ", "); }

  /** The running Spark's version, e.g. {@code 4.3.0}. */
  public static String runningVersion() { return org.apache.spark.package$.MODULE$.SPARK_VERSION(); }

  /** The line of a Spark version: its major.minor. */
  public static String lineOf(String version) {
    String[] parts = version.split("[.-]");
    return parts.length >= 2 ? parts[0] + "." + parts[1] : version;
  }

  /** The warning for a running version this jar does not serve, or null when it serves it. */
  public static String mismatch(String running) {
    if (lineOf(running).equals(builtLine())) return null;
    return "lmspark " + BUILD.getProperty("version", "?") + " was built for Spark " + builtLine()
        + " but this is Spark " + running + "; lmspark steps aside and every query runs as vanilla "
        + "Spark. lmspark supports Spark " + supportedLines() + ": use the jar "
        + "lmspark-spark<line>_<scala>-<version>.jar of this line (pip's lmspark picks it itself).";
  }

  /** True when lmspark may act; decided once per JVM, warning once when it may not. */
  public static boolean open() {
    Boolean o = open;
    if (o == null) {
      synchronized (SparkLineGate.class) {
        if (open == null) {
          String why = mismatch(runningVersion());
          if (why != null) LOG.warn(why);
          open = why == null;
        }
        o = open;
      }
    }
    return o;
  }

  private static Properties load() {
    Properties p = new Properties();
    try (InputStream in = SparkLineGate.class.getResourceAsStream("/lmspark-build.properties")) {
      if (in != null) p.load(in);
    } catch (IOException e) {
      // an unreadable build record leaves the line unknown, so the gate stays shut
    }
    return p;
  }
}
